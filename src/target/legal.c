/* rocke — target-aware verification: the IR verifier plus what this chip
 * offers (op features, matrix atoms and their fragment types, the native
 * fp8 encoding). Layer: target. */
#include <stdio.h>

#include "rocke/target.h"
#include "../ir/ir_int.h"

/* The fragment type an atom operand must have on target t. */
static bool frag_ok(const rk_kernel *k, const rk_target *t, rk_type have, rk_scalar elem, uint32_t len,
                    char *want, size_t n) {
    if (elem == RK_S_FP8E4M3) elem = t->fp8;
    else if (elem == RK_S_BF8E5M2) elem = t->bf8;
    if (len == 1) snprintf(want, n, "%s", rk_scalar_name(elem));
    else snprintf(want, n, "vec<%sx%u>", rk_scalar_name(elem), len);
    if (len == 1) return rk_type_eq(have, (rk_type){elem});
    return rk_type_kind_of(k, have) == RK_TK_VEC && rk_type_count(k, have) == len &&
           rk_type_eq(rk_type_elem(k, have), (rk_type){elem});
}

static bool check_mma(void *ud, const rk_kernel *k, const rk_op *op, char *msg, size_t n) {
    const rk_target *t = ud;
    const char *id = rk_attrs_str(&op->attrs, "op_id");
    const rk_mma_atom *a = rk_mma_atom_find(id);
    if (!a || !rk_target_has_atom(t, a)) {
        char legal[1024];
        size_t off = 0;
        for (const rk_mma_atom *const *p = rk_mma_atoms(); *p; p++)
            if (rk_target_has_atom(t, *p))
                off += (size_t)snprintf(legal + off, off < sizeof legal ? sizeof legal - off : 0, "%s%s",
                                        off ? ", " : "", (*p)->op_id);
        if (!a) snprintf(msg, n, "unknown matrix atom '%s'; %s offers: %s", id ? id : "", t->name, legal);
        else snprintf(msg, n, "matrix atom '%s' needs %s, which %s lacks; %s offers: %s", id,
                      rk_feature_name(a->feat & ~t->features), t->name, t->name, legal);
        return false;
    }
    if (op->nin != 3) {
        snprintf(msg, n, "atom '%s' takes exactly 3 operands (a, b, c), got %u", id, op->nin);
        return false;
    }
    char want[64];
    static const char *const names[] = {"A", "B", "C"};
    const rk_scalar elems[] = {a->a_elem, a->b_elem, a->c_elem};
    const uint32_t lens[] = {a->a_len, a->b_len, a->c_len};
    for (int i = 0; i < 3; i++) {
        rk_type have = rk_value_type(k, op->in[i]);
        if (!frag_ok(k, t, have, elems[i], lens[i], want, sizeof want)) {
            snprintf(msg, n, "atom '%s' on %s takes %s fragments of type %s, got %s", id, t->name, names[i],
                     want, rk_type_name(k, have));
            return false;
        }
    }
    return true;
}

void rk_target_verify_info(const rk_target *t, rk_verify_target *out) {
    *out = (rk_verify_target){
        .name = t->name, .features = t->features, .wave_size = t->wave_size,
        .fp8 = t->fp8, .bf8 = t->bf8, .check_mma = check_mma, .ud = (void *)t,
    };
}

rk_status rk_target_verify(const rk_kernel *k, const rk_target *t, rk_diags *out) {
    rk_verify_target vt;
    rk_target_verify_info(t, &vt);
    return rk_verify(k, &vt, out);
}
