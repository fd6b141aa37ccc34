/* rocke — NVPTX cross-lane ops over warp32: tile.shuffle as shfl.sync with
 * the sub-group width in the c operand (segment mask (32-w)<<8, clamp 31, or
 * 0 for up), readlane as shfl.sync.idx, readfirstlane through the active
 * mask's lowest lane, ballot/all/any as vote.sync over the active mask (so
 * partial and divergent warps answer for their active lanes, and a ballot
 * has bits only for active lanes, zero-extended to the IR's i64).
 * Shuffles and readlane use the full member mask, like CUDA's
 * __shfl_*_sync(0xffffffff, ...): every thread of the warp that has not
 * exited must reach them together. Layer: lower. */
#include <stdio.h>

#include "nvptx_int.h"

static rk_type vt(const lw_ctx *cx, rk_value v) { return rk_value_type(cx->k, v); }

static const char *activemask(lw_ctx *cx) {
    const char *m = lw_tmp(cx, "active");
    lw_declare(cx, NV_D_ACTIVEMASK, "declare i32 @llvm.nvvm.activemask()");
    lw_ins(cx, "%s = call i32 @llvm.nvvm.activemask()", m);
    return m;
}

/* `into = shfl.sync.<mode>.<ty>(mask, x, b, c)`; ty is i32 or f32 */
static void shfl(lw_ctx *cx, const char *into, const char *mode, const char *ty, const char *mask, const char *x,
                 const char *b, int64_t c) {
    const char *lty = strcmp(ty, "f32") ? "i32" : "float";
    lw_declare(cx, NV_D_SHFL, lw_printf(cx, "declare %s @llvm.nvvm.shfl.sync.%s.%s(i32, %s, i32, i32)", lty, mode, ty, lty));
    lw_ins(cx, "%s = call %s @llvm.nvvm.shfl.sync.%s.%s(i32 %s, %s %s, i32 %s, i32 %l)", into, lty, mode, ty, mask, lty,
           x, b, c);
}

static const char *ty_of(const lw_ctx *cx, rk_value v) { return rk_type_eq(vt(cx, v), RK_T_F32) ? "f32" : "i32"; }

static void shuffle(lw_ctx *cx, const rk_op *op) {
    static const char *const modes[][2] = {{"idx", "idx"}, {"xor", "bfly"}, {"up", "up"}, {"down", "down"}};
    const char *mode = lw_attr_str(op, "mode", "idx"), *pm = "idx";
    int64_t w = lw_attr_int(op, "width", cx->t->wave_size);
    if (w > (int64_t)cx->t->wave_size) {
        lw_error(cx, op, RK_ERR_UNSUPPORTED, "width %lld exceeds the warp size %u of %s", (long long)w,
                 cx->t->wave_size, cx->t->name);
        return;
    }
    for (size_t i = 0; i < RK_COUNTOF(modes); i++)
        if (strcmp(mode, modes[i][0]) == 0) pm = modes[i][1];
    /* segment mask in c[12:8]; clamp c[4:0]: the segment's last lane, or
     * its first for up */
    int64_t c = ((32 - w) << 8) | (strcmp(pm, "up") ? 31 : 0);
    shfl(cx, lw_val(cx, op->out[0]), pm, ty_of(cx, op->in[0]), "-1", lw_val(cx, op->in[0]), lw_val(cx, op->in[1]), c);
}

static void readlane(lw_ctx *cx, const rk_op *op) {
    shfl(cx, lw_val(cx, op->out[0]), "idx", ty_of(cx, op->in[0]), "-1", lw_val(cx, op->in[0]), lw_val(cx, op->in[1]), 31);
}

/* the first active lane's value; i64 moves as two halves */
static void readfirstlane(lw_ctx *cx, const rk_op *op) {
    const char *m = activemask(cx), *first = lw_tmp(cx, "first");
    lw_declare(cx, NV_D_CTTZ, "declare i32 @llvm.cttz.i32(i32, i1)");
    lw_ins(cx, "%s = call i32 @llvm.cttz.i32(i32 %s, i1 true)", first, m);
    if (!rk_type_eq(vt(cx, op->in[0]), RK_T_I64)) {
        shfl(cx, lw_val(cx, op->out[0]), "idx", "i32", m, lw_val(cx, op->in[0]), first, 31);
        return;
    }
    const char *lo = lw_tmp(cx, "lo"), *sh = lw_tmp(cx, "sh"), *hi = lw_tmp(cx, "hi");
    const char *rl = lw_tmp(cx, "rfl"), *rh = lw_tmp(cx, "rfl"), *zl = lw_tmp(cx, "zlo"), *zh = lw_tmp(cx, "zhi"),
               *up = lw_tmp(cx, "up");
    lw_ins(cx, "%s = trunc %V to i32", lo, op->in[0]);
    lw_ins(cx, "%s = lshr %V, 32", sh, op->in[0]);
    lw_ins(cx, "%s = trunc i64 %s to i32", hi, sh);
    shfl(cx, rl, "idx", "i32", m, lo, first, 31);
    shfl(cx, rh, "idx", "i32", m, hi, first, 31);
    lw_ins(cx, "%s = zext i32 %s to i64", zl, rl);
    lw_ins(cx, "%s = zext i32 %s to i64", zh, rh);
    lw_ins(cx, "%s = shl i64 %s, 32", up, zh);
    lw_ins(cx, "%v = or i64 %s, %s", op->out[0], up, zl);
}

static const char *pred_i1(lw_ctx *cx, rk_value p) {
    if (rk_type_eq(vt(cx, p), RK_T_I1)) return lw_val(cx, p);
    const char *c = lw_tmp(cx, "pred");
    lw_ins(cx, "%s = icmp ne %V, 0", c, p);
    return c;
}

static void vote(lw_ctx *cx, const rk_op *op, const char *kind) {
    const char *p = pred_i1(cx, op->in[0]), *m = activemask(cx), *r = lw_tmp(cx, "vote");
    bool ballot = strcmp(kind, "ballot") == 0;
    const char *rty = ballot ? "i32" : "i1";
    lw_declare(cx, NV_D_VOTE, lw_printf(cx, "declare %s @llvm.nvvm.vote.%s.sync(i32, i1)", rty, kind));
    lw_ins(cx, "%s = call %s @llvm.nvvm.vote.%s.sync(i32 %s, i1 %s)", r, rty, kind, m, p);
    lw_ins(cx, "%v = zext %s %s to %t", op->out[0], rty, r, op->out[0]);
}

static void wave_ballot(lw_ctx *cx, const rk_op *op) { vote(cx, op, "ballot"); }
static void wave_all(lw_ctx *cx, const rk_op *op) { vote(cx, op, "all"); }
static void wave_any(lw_ctx *cx, const rk_op *op) { vote(cx, op, "any"); }

/* The family's handlers by opcode (nvptx.c's switch routes exactly these here). */
typedef void (*lane_fn)(lw_ctx *cx, const rk_op *op);
static const lane_fn lane_fns[RK_OP__COUNT] = {
    [RK_OP_SHUFFLE] = shuffle, [RK_OP_READLANE] = readlane, [RK_OP_READFIRSTLANE] = readfirstlane,
    [RK_OP_WAVE_BALLOT] = wave_ballot, [RK_OP_WAVE_ALL] = wave_all, [RK_OP_WAVE_ANY] = wave_any,
};

void lw_nv_lane(lw_ctx *cx, const rk_op *op) {
    RK_ASSERT(op->code > RK_OP_INVALID && op->code < RK_OP__COUNT && lane_fns[op->code],
              "lw_nv_lane called for an op outside the cross-lane family");
    lane_fns[op->code](cx, op);
}
