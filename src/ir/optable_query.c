/* rocke — the op table by field name, for language bindings that cannot read
 * rk_op_info's C layout (the Python package builds its op list from this).
 * Layer: ir. */
#include <string.h>

#include "ir_int.h"

static const char *const rule_names[RK_RULE__COUNT] = {
#define X(r) #r,
    RK_RULES(X)
#undef X
};

uint32_t rk_op_table_size(void) { return RK_OP__COUNT; }

/* A code outside 1..RK_OP__COUNT-1 fails naming the legal range. */
static const rk_op_info *row_of(uint32_t code) {
    if (code == RK_OP_INVALID || code >= RK_OP__COUNT) {
        rk_fail(RK_ERR_INVALID, "op code %u is not in the op table (legal: 1..%u)", code, RK_OP__COUNT - 1u);
        return NULL;
    }
    return rk_op_info_of((rk_opcode)code);
}

const char *rk_op_query_str(uint32_t code, const char *field) {
    const rk_op_info *r = row_of(code);
    if (!r) return NULL;
    if (!field) field = "";
    if (!strcmp(field, "name")) return r->name;
    if (!strcmp(field, "fn")) return r->fn;
    if (!strcmp(field, "sig")) return r->sig;
    if (!strcmp(field, "hint")) return r->hint;
    if (!strcmp(field, "attrs")) return r->attrs;
    if (!strcmp(field, "rule")) return rule_names[r->rule];
    rk_fail(RK_ERR_INVALID, "op-table text field '%s' is unknown (legal: name, fn, sig, hint, attrs, rule)", field);
    return NULL;
}

bool rk_op_query_int(uint32_t code, const char *field, int64_t *out) {
    const rk_op_info *r = row_of(code);
    if (!r) return false;
    if (!field) field = "";
    if (!strcmp(field, "nin")) *out = RK_COUNT_N(r->nin);
    else if (!strcmp(field, "nin_min")) *out = RK_COUNT_IS_MIN(r->nin);
    else if (!strcmp(field, "nout")) *out = RK_COUNT_N(r->nout);
    else if (!strcmp(field, "nout_min")) *out = RK_COUNT_IS_MIN(r->nout);
    else if (!strcmp(field, "nreg")) *out = r->nreg;
    else if (!strcmp(field, "flags")) *out = r->flags;
    else if (!strcmp(field, "feat")) *out = r->feat;
    else {
        rk_fail(RK_ERR_INVALID, "op-table number field '%s' is unknown (legal: nin, nin_min, nout, nout_min, "
                "nreg, flags, feat)", field);
        return false;
    }
    return true;
}
