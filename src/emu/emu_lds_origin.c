/* rocke — which LDS allocation an address value was computed from, found at
 * compile time by walking its definitions back to a tile.smem_addr_of or
 * tile.wgmma_desc (through integer adds, ors, masks, width changes and
 * selects that agree), so ops that take LDS addresses instead of an
 * allocation and indices can be held to that allocation's bytes. Layer: emu. */
#include "emu_int.h"

enum { ORIGIN_DEPTH = 32, NONE = -1, MIXED = -2 };

static int32_t origin(const emu_cc *c, rk_value v, int depth);

/* The common origin of two operands: one that has none defers to the other. */
static int32_t either(const emu_cc *c, rk_value a, rk_value b, int depth) {
    int32_t x = origin(c, a, depth), y = origin(c, b, depth);
    if (x == MIXED || y == MIXED) return MIXED;
    if (x == NONE) return y;
    if (y == NONE || x == y) return x;
    return MIXED;
}

static int32_t origin(const emu_cc *c, rk_value v, int depth) {
    const rk_op *op = rk_value_def(c->k, v);
    if (!op || depth > ORIGIN_DEPTH) return NONE;
    rk_opcode k = op->code;
    if (k == RK_OP_SMEM_ADDR_OF || k == RK_OP_WGMMA_DESC) return c->smem[op->in[0].id] >= 0 ? c->smem[op->in[0].id] : NONE;
    if (k == RK_OP_SMEM_PTR_ADD || k == RK_OP_ADD || k == RK_OP_OR || k == RK_OP_AND || k == RK_OP_XOR)
        return either(c, op->in[0], op->in[1], depth + 1);
    if (k == RK_OP_SELECT) return either(c, op->in[1], op->in[2], depth + 1);
    if (k == RK_OP_SUB || k == RK_OP_ZEXT || k == RK_OP_SEXT || k == RK_OP_TRUNC || k == RK_OP_READFIRSTLANE ||
        k == RK_OP_PIN_SGPR)
        return origin(c, op->in[0], depth + 1);
    return NONE;     /* loads, block arguments, other arithmetic: not an address we can follow */
}

const emu_smem *emu_cc_lds_origin(const emu_cc *c, rk_value v) {
    int32_t s = origin(c, v, 0);
    return s >= 0 ? &c->P->smem[s] : NULL;
}
