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

/* An A or B operand of an atom that takes one of several formats per
 * operand (ab_formats): a vector of the fragment length in one of them. */
static bool format_ok(const rk_kernel *k, const rk_target *t, const rk_mma_atom *a, rk_type have, uint32_t len,
                      const char *which, char *msg, size_t n) {
    char legal[160] = "";
    size_t off = 0;
    for (int s = 1; s < RK_S__COUNT; s++) {
        if (!(a->ab_formats & (1u << s))) continue;
        char want[64];
        if (frag_ok(k, t, have, (rk_scalar)s, len, want, sizeof want)) return true;
        off += (size_t)snprintf(legal + off, off < sizeof legal ? sizeof legal - off : 0, "%s%s", off ? " or " : "",
                                want);
    }
    snprintf(msg, n, "atom '%s' on %s takes %s fragments of type %s (the format is chosen per operand; the fp6 and "
             "fp4 formats of the instruction are not offered: rocke has no fp6/fp4 types), got %s", a->op_id,
             t->name, which, legal, rk_type_name(k, have));
    return false;
}

static bool const_zero(const rk_kernel *k, rk_value v) {
    const rk_op *d = rk_value_def(k, v);
    const rk_attr_val *c = d && d->code == RK_OP_CONSTANT ? rk_attrs_get(&d->attrs, "value") : NULL;
    return c && ((c->kind == RK_AK_INT && c->u.i == 0) || (c->kind == RK_AK_FLOAT && c->u.f == 0.0));
}

/* The scale operands of a scaled atom: i32 words. Two constant zeros are
 * refused: LLVM selects the unscaled instruction when both scales are the
 * literal 0 (a product times 1), while E8M0 byte 0 means 2^-127 (target.h). */
static bool scales_ok(const rk_kernel *k, const rk_target *t, const rk_mma_atom *a, const rk_op *op, char *msg,
                      size_t n) {
    static const char *const names[] = {"a_scale", "b_scale"};
    for (int i = 0; i < 2; i++) {
        rk_type have = rk_value_type(k, op->in[3 + i]);
        if (!rk_type_eq(have, RK_T_I32)) {
            snprintf(msg, n, "atom '%s' on %s takes %s as i32 (one word per lane whose byte opsel_%c, 0..3, is the "
                     "E8M0 scale), got %s", a->op_id, t->name, names[i], "ab"[i], rk_type_name(k, have));
            return false;
        }
    }
    if (const_zero(k, op->in[3]) && const_zero(k, op->in[4])) {
        snprintf(msg, n, "atom '%s' on %s: a_scale and b_scale are both the constant 0, which LLVM compiles to the "
                 "unscaled instruction (scale 1) although E8M0 byte 0 means 2^-127; use mfma_f32_16x16x128_fp8 for "
                 "an unscaled product, or 127 (0x7F) for a scale of 1", a->op_id, t->name);
        return false;
    }
    return true;
}

/* Names of the catalog atoms that `pick` accepts, ", "-separated. */
static void atom_list(char *out, size_t n, bool (*pick)(const rk_mma_atom *, const void *), const void *ud) {
    size_t off = 0;
    out[0] = '\0';
    for (const rk_mma_atom *const *p = rk_mma_atoms(); *p; p++)
        if (pick(*p, ud))
            off += (size_t)snprintf(out + off, off < n ? n - off : 0, "%s%s", off ? ", " : "", (*p)->op_id);
}

static bool pick_scaled(const rk_mma_atom *a, const void *ud) { (void)ud; return a->scaled; }
static bool pick_offered(const rk_mma_atom *a, const void *ud) { return rk_target_has_atom(ud, a); }

/* opsel_a/opsel_b select scale bytes: only scaled atoms take them. */
static bool no_opsel(const rk_mma_atom *a, const rk_op *op, char *msg, size_t n) {
    static const char *const keys[] = {"opsel_a", "opsel_b"};
    for (int i = 0; i < 2; i++)
        if (rk_attrs_get(&op->attrs, keys[i])) {
            char scaled[256];
            atom_list(scaled, sizeof scaled, pick_scaled, NULL);
            snprintf(msg, n, "attribute '%s' selects a scale byte and applies only to scaled atoms (%s); '%s' takes "
                     "none", keys[i], scaled, a->op_id);
            return false;
        }
    return true;
}

static bool check_mma(void *ud, const rk_kernel *k, const rk_op *op, char *msg, size_t n) {
    const rk_target *t = ud;
    const char *id = rk_attrs_str(&op->attrs, "op_id");
    const rk_mma_atom *a = rk_mma_atom_find(id);
    if (!a || !rk_target_has_atom(t, a)) {
        char legal[1024];
        atom_list(legal, sizeof legal, pick_offered, t);
        if (!a) snprintf(msg, n, "unknown matrix atom '%s'; %s offers: %s", id ? id : "", t->name, legal);
        else snprintf(msg, n, "matrix atom '%s' needs %s, which %s lacks; %s offers: %s", id,
                      rk_feature_name(a->feat & ~t->features), t->name, t->name, legal);
        return false;
    }
    if (a->scaled ? op->nin != 5 : op->nin != 3) {
        snprintf(msg, n, "atom '%s' takes exactly %s, got %u", id,
                 a->scaled ? "5 operands (a, b, c, a_scale, b_scale)" : "3 operands (a, b, c)", op->nin);
        return false;
    }
    char want[64];
    static const char *const names[] = {"A", "B", "C"};
    const rk_scalar elems[] = {a->a_elem, a->b_elem, a->c_elem};
    const uint32_t lens[] = {a->a_len, a->b_len, a->c_len};
    for (int i = 0; i < 3; i++) {
        rk_type have = rk_value_type(k, op->in[i]);
        if (i < 2 && a->ab_formats) {
            if (!format_ok(k, t, a, have, lens[i], names[i], msg, n)) return false;
        } else if (!frag_ok(k, t, have, elems[i], lens[i], want, sizeof want)) {
            snprintf(msg, n, "atom '%s' on %s takes %s fragments of type %s, got %s", id, t->name, names[i],
                     want, rk_type_name(k, have));
            return false;
        }
    }
    return a->scaled ? scales_ok(k, t, a, op, msg, n) : no_opsel(a, op, msg, n);
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
