/* rocke — AMDGPU cross-lane ops: readfirstlane/readlane/writelane, the SGPR
 * pin, wave votes, LDS-port permutes (ds_bpermute, ds_swizzle), DPP moves,
 * permlanes, byte permutes, s_wqm, exec-mask assembly and the portable
 * tile.shuffle. Layer: lower. */
#include <stdio.h>

#include "amdgpu_int.h"

static rk_type vt(const lw_ctx *cx, rk_value v) { return rk_value_type(cx->k, v); }

const char *lw_amd_lane_id(lw_ctx *cx, const char *into) {
    lw_declare(cx, AMD_D_MBCNT_LO, "declare i32 @llvm.amdgcn.mbcnt.lo(i32, i32)");
    if (cx->t->wave_size == 32) {
        lw_ins(cx, "%s = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)", into);
        return into;
    }
    const char *lo = lw_tmp(cx, "mbcnt.lo");
    lw_declare(cx, AMD_D_MBCNT_HI, "declare i32 @llvm.amdgcn.mbcnt.hi(i32, i32)");
    lw_ins(cx, "%s = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)", lo);
    lw_ins(cx, "%s = call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 %s)", into, lo);
    return into;
}

/* `%r = call T @llvm.amdgcn.<name>.<m>(args)`, T = the result type; `variant`
 * tells apart names that share an opcode (wave.reduce.<op>). */
static void ovl_v(lw_ctx *cx, const rk_op *op, uint32_t order, uint32_t variant, const char *name, const char *params,
                  const char *args) {
    rk_type t = vt(cx, op->out[0]);
    const char *ty = lw_ty(cx, t), *m = lw_mangle(cx, t);
    if (!lw_seen(cx, order, variant, t.id))
        lw_declare(cx, order, lw_printf(cx, "declare %s @llvm.amdgcn.%s.%s(%s)", ty, name, m, params));
    lw_ins(cx, "%v = call %s @llvm.amdgcn.%s.%s(%s)", op->out[0], ty, name, m, args);
}

static void ovl(lw_ctx *cx, const rk_op *op, uint32_t order, const char *name, const char *params, const char *args) {
    ovl_v(cx, op, order, op->code, name, params, args);
}

/* The wave's first active lane's value (a no-op for values LLVM already
 * knows are uniform): SGPR operands of assembly must be uniform, and LLVM
 * cannot move a divergent value into an SGPR. */
static const char *uniform(lw_ctx *cx, rk_value v) {
    const char *ty = lw_vty(cx, v), *m = lw_mangle(cx, rk_value_type(cx->k, v)), *u = lw_tmp(cx, "uni");
    lw_declare(cx, AMD_D_READFIRSTLANE, lw_printf(cx, "declare %s @llvm.amdgcn.readfirstlane.%s(%s)", ty, m, ty));
    lw_ins(cx, "%s = call %s @llvm.amdgcn.readfirstlane.%s(%V)", u, ty, m, v);
    return u;
}

/* ---- votes --------------------------------------------------------------------------------- */
static const char *pred_i1(lw_ctx *cx, rk_value p) {
    if (rk_type_eq(vt(cx, p), RK_T_I1)) return lw_val(cx, p);
    const char *c = lw_tmp(cx, "pred");
    lw_ins(cx, "%s = icmp ne %V, 0", c, p);
    return c;
}

/* The wave-sized ballot of an i1 text into `into` (i32 on wave32, i64 on wave64). */
static const char *ballot(lw_ctx *cx, const char *into, const char *pred) {
    unsigned w = cx->t->wave_size;
    lw_declare(cx, AMD_D_BALLOT, lw_printf(cx, "declare i%u @llvm.amdgcn.ballot.i%u(i1)", w, w));
    lw_ins(cx, "%s = call i%u @llvm.amdgcn.ballot.i%u(i1 %s)", into, w, w, pred);
    return into;
}

static void wave_ballot(lw_ctx *cx, const rk_op *op) {
    const char *p = pred_i1(cx, op->in[0]);
    if (cx->t->wave_size == 64) { ballot(cx, lw_val(cx, op->out[0]), p); return; }
    const char *b = ballot(cx, lw_tmp(cx, "ballot"), p);
    lw_ins(cx, "%v = zext i32 %s to i64", op->out[0], b);
}

/* all: the lanes voting true are exactly the active lanes — the ballot of
 * `true` — so partial waves (tails, divergent regions) and wave32 answer
 * right; comparing with -1 (all 64 bits) would not. any: some bit set. */
static void wave_vote(lw_ctx *cx, const rk_op *op, bool all) {
    unsigned w = cx->t->wave_size;
    const char *b = ballot(cx, lw_tmp(cx, "ballot"), pred_i1(cx, op->in[0])), *c = lw_tmp(cx, "vote");
    if (all) {
        const char *act = ballot(cx, lw_tmp(cx, "active"), "true");
        lw_ins(cx, "%s = icmp eq i%u %s, %s", c, w, b, act);
    } else {
        lw_ins(cx, "%s = icmp ne i%u %s, 0", c, w, b);
    }
    lw_ins(cx, "%v = zext i1 %s to i32", op->out[0], c);
}

/* ---- permutes -------------------------------------------------------------------------------- */
static const char *bpermute(lw_ctx *cx, const char *into, const char *addr, const char *data) {
    lw_declare(cx, AMD_D_DS_BPERMUTE, "declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)");
    lw_ins(cx, "%s = call i32 @llvm.amdgcn.ds.bpermute(i32 %s, i32 %s)", into, addr, data);
    return into;
}

static void bpermute_b64(lw_ctx *cx, const rk_op *op) {
    const char *lo = lw_tmp(cx, "lo"), *sh = lw_tmp(cx, "sh"), *hi = lw_tmp(cx, "hi");
    const char *a = lw_val(cx, op->in[0]);
    lw_ins(cx, "%s = trunc %V to i32", lo, op->in[1]);
    lw_ins(cx, "%s = lshr %V, 32", sh, op->in[1]);
    lw_ins(cx, "%s = trunc i64 %s to i32", hi, sh);
    const char *rlo = bpermute(cx, lw_tmp(cx, "bperm"), a, lo), *rhi = bpermute(cx, lw_tmp(cx, "bperm"), a, hi);
    const char *zl = lw_tmp(cx, "zlo"), *zh = lw_tmp(cx, "zhi"), *up = lw_tmp(cx, "up");
    lw_ins(cx, "%s = zext i32 %s to i64", zl, rlo);
    lw_ins(cx, "%s = zext i32 %s to i64", zh, rhi);
    lw_ins(cx, "%s = shl i64 %s, 32", up, zh);
    lw_ins(cx, "%v = or i64 %s, %s", op->out[0], up, zl);
}

static void swizzle(lw_ctx *cx, const char *into, const char *v, int64_t offset) {
    lw_declare(cx, AMD_D_DS_SWIZZLE, "declare i32 @llvm.amdgcn.ds.swizzle(i32, i32)");
    lw_ins(cx, "%s = call i32 @llvm.amdgcn.ds.swizzle(i32 %s, i32 %l)", into, v, offset);
}

/* ds_swizzle bit-mask mode: and_mask 0x1F, or_mask 0, xor_mask in [14:10] —
 * lane l reads l ^ m inside its 32-lane half. */
static int64_t swizzle_xor(int64_t m) { return (m << 10) | 0x1F; }

static void update_dpp(lw_ctx *cx, const rk_op *op, int64_t ctrl, bool bound) {
    lw_declare(cx, AMD_D_UPDATE_DPP, "declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)");
    lw_ins(cx, "%v = call i32 @llvm.amdgcn.update.dpp.i32(%V, %V, i32 %l, i32 15, i32 15, i1 %s)", op->out[0],
           op->in[0], op->in[0], ctrl, bound ? "true" : "false");
}

static void mov_dpp(lw_ctx *cx, const rk_op *op) {
    int64_t shr = lw_attr_int(op, "row_shr", 0), shl = lw_attr_int(op, "row_shl", 0);
    update_dpp(cx, op, shr ? 0x110 | shr : 0x100 | shl, lw_attr_bool(op, "bound_ctrl", false));
}

/* tile.shuffle with PTX shfl semantics over sub-groups of `width` lanes:
 * min = lane & ~(w-1), max = min | (w-1) (up: max = min);
 * idx: j = min | (b & (w-1)); xor: j = lane ^ b; up: j = lane - b; down:
 * j = lane + b; out-of-range j (xor/down: j > max, up: j < min) reads the
 * lane's own value. A constant xor mask below min(w, 32) uses ds_swizzle;
 * everything else is one ds_bpermute. */
static void shuffle(lw_ctx *cx, const rk_op *op) {
    const char *mode = lw_attr_str(op, "mode", "idx");
    int64_t w = lw_attr_int(op, "width", cx->t->wave_size), mconst = 0;
    if (w > (int64_t)cx->t->wave_size) {
        lw_error(cx, op, RK_ERR_UNSUPPORTED, "width %lld exceeds the wave size %u of %s", (long long)w,
                 cx->t->wave_size, cx->t->name);
        return;
    }
    rk_value v = op->in[0], b = op->in[1], r = op->out[0];
    bool is_f = rk_type_eq(vt(cx, v), RK_T_F32);
    const char *x = lw_val(cx, v);
    if (is_f) {
        x = lw_tmp(cx, "shfl.bits");
        lw_ins(cx, "%s = bitcast %V to i32", x, v);
    }
    const char *res = is_f ? lw_tmp(cx, "shfl") : lw_val(cx, r);
    if (strcmp(mode, "xor") == 0 && lw_const_int(cx, b, &mconst) && mconst > 0 && mconst < w && mconst < 32) {
        swizzle(cx, res, x, swizzle_xor(mconst));
    } else {
        const char *lane = lw_amd_lane_id(cx, lw_tmp(cx, "lane")), *mn = lw_tmp(cx, "shfl.min"),
                   *j = lw_tmp(cx, "shfl.j"), *src = j;
        lw_ins(cx, "%s = and i32 %s, %l", mn, lane, (int64_t)~(w - 1));
        if (strcmp(mode, "idx") == 0) {
            const char *lo = lw_tmp(cx, "shfl.lo");
            lw_ins(cx, "%s = and %V, %l", lo, b, (int64_t)(w - 1));
            lw_ins(cx, "%s = or i32 %s, %s", j, mn, lo);
        } else {
            bool up = strcmp(mode, "up") == 0;
            const char *ok = lw_tmp(cx, "shfl.ok");
            src = lw_tmp(cx, "shfl.src");
            if (up) {
                lw_ins(cx, "%s = sub i32 %s, %v", j, lane, b);
                lw_ins(cx, "%s = icmp sge i32 %s, %s", ok, j, mn);
            } else {
                const char *mx = lw_tmp(cx, "shfl.max");
                lw_ins(cx, "%s = %s i32 %s, %v", j, strcmp(mode, "xor") == 0 ? "xor" : "add", lane, b);
                lw_ins(cx, "%s = or i32 %s, %l", mx, mn, (int64_t)(w - 1));
                lw_ins(cx, "%s = icmp ule i32 %s, %s", ok, j, mx);
            }
            lw_ins(cx, "%s = select i1 %s, i32 %s, i32 %s", src, ok, j, lane);
        }
        const char *addr = lw_tmp(cx, "shfl.addr");
        lw_ins(cx, "%s = shl i32 %s, 2", addr, src);
        bpermute(cx, res, addr, x);
    }
    if (is_f) lw_ins(cx, "%v = bitcast i32 %s to float", r, res);
}

static void permlane32_swap(lw_ctx *cx, const rk_op *op) {
    const char *t = lw_tmp(cx, "swap");
    lw_declare(cx, AMD_D_PERMLANE, "declare { i32, i32 } @llvm.amdgcn.permlane32.swap(i32, i32, i1, i1)");
    lw_ins(cx, "%s = call { i32, i32 } @llvm.amdgcn.permlane32.swap(%V, %V, i1 false, i1 false)", t, op->in[0], op->in[1]);
    lw_ins(cx, "%v = extractvalue { i32, i32 } %s, 0", op->out[0], t);
    lw_ins(cx, "%v = extractvalue { i32, i32 } %s, 1", op->out[1], t);
}

static void perm(lw_ctx *cx, const rk_op *op, const char *sel) {
    lw_declare(cx, AMD_D_PERM, "declare i32 @llvm.amdgcn.perm(i32, i32, i32)");
    lw_ins(cx, "%v = call i32 @llvm.amdgcn.perm(%V, %V, i32 %s)", op->out[0], op->in[0], op->in[1], sel);
}

/* Exec-mask manipulation is assembly: LLVM has no intrinsic that writes EXEC.
 * Always sideeffect; SCC is clobbered by the scalar ALU op; the mask is a
 * wave-uniform SGPR pair. */
static void exec_asm(lw_ctx *cx, const rk_op *op, const char *text) {
    const char *m = uniform(cx, op->in[0]);
    if (op->nout) lw_ins(cx, "%v = call i64 asm sideeffect \"%s\", \"=s,s,~{scc}\"(i64 %s)", op->out[0], text, m);
    else lw_ins(cx, "call void asm sideeffect \"%s\", \"s,~{scc}\"(i64 %s)", text, m);
}

static void readfirstlane(lw_ctx *cx, const rk_op *op) {
    const char *args = lw_printf(cx, "%s %s", lw_vty(cx, op->in[0]), lw_val(cx, op->in[0]));
    ovl(cx, op, AMD_D_READFIRSTLANE, "readfirstlane", lw_vty(cx, op->out[0]), args);
}

static void readlane(lw_ctx *cx, const rk_op *op) {
    const char *args = lw_printf(cx, "%s %s, i32 %s", lw_vty(cx, op->in[0]), lw_val(cx, op->in[0]), lw_val(cx, op->in[1]));
    ovl(cx, op, AMD_D_READLANE, "readlane", lw_printf(cx, "%s, i32", lw_vty(cx, op->out[0])), args);
}

static void writelane(lw_ctx *cx, const rk_op *op) {
    const char *ty = lw_vty(cx, op->out[0]);
    const char *args = lw_printf(cx, "%s %s, i32 %s, %s %s", ty, lw_val(cx, op->in[0]), lw_val(cx, op->in[1]), ty,
                                 lw_val(cx, op->in[2]));
    ovl(cx, op, AMD_D_WRITELANE, "writelane", lw_printf(cx, "%s, i32, %s", ty, ty), args);
}

/* Never sideeffect: that would make the pinned value divergent. The operand
 * goes through readfirstlane, so the op is to_sgpr_u32 for any input. */
static void pin_sgpr(lw_ctx *cx, const rk_op *op) {
    const char *u = uniform(cx, op->in[0]);
    lw_ins(cx, "%v = call %t asm \"\", \"=s,0\"(%t %s)", op->out[0], op->out[0], op->in[0], u);
}

static void wave_all(lw_ctx *cx, const rk_op *op) { wave_vote(cx, op, true); }
static void wave_any(lw_ctx *cx, const rk_op *op) { wave_vote(cx, op, false); }

static void ds_bpermute(lw_ctx *cx, const rk_op *op) {
    bpermute(cx, lw_val(cx, op->out[0]), lw_val(cx, op->in[0]), lw_val(cx, op->in[1]));
}

static void ds_swizzle_xor(lw_ctx *cx, const rk_op *op) {
    swizzle(cx, lw_val(cx, op->out[0]), lw_val(cx, op->in[0]), swizzle_xor(lw_attr_int(op, "xor_mask", 1)));
}

static void ds_swizzle(lw_ctx *cx, const rk_op *op) {
    swizzle(cx, lw_val(cx, op->out[0]), lw_val(cx, op->in[0]), lw_attr_int(op, "offset", 0));
}

static void dpp_xor(lw_ctx *cx, const rk_op *op) { update_dpp(cx, op, 0x160 | lw_attr_int(op, "xor_mask", 1), true); }
static void quad_perm(lw_ctx *cx, const rk_op *op) { update_dpp(cx, op, lw_attr_int(op, "ctrl", 0), false); }

static void mov_dpp8(lw_ctx *cx, const rk_op *op) {
    const char *ty = lw_vty(cx, op->out[0]);
    const char *args = lw_printf(cx, "%s %s, i32 %lld", ty, lw_val(cx, op->in[0]),
                                 (long long)(lw_attr_int(op, "sel", 0) & 0xFFFFFF));
    ovl(cx, op, AMD_D_MOV_DPP8, "mov.dpp8", lw_printf(cx, "%s, i32", ty), args);
}

static void wave_reduce(lw_ctx *cx, const rk_op *op) {
    static const char *const kinds[] = {"umin", "umax", "min", "max", "add", "sub", "and", "or", "xor"};
    const char *kind = lw_attr_str(op, "reduce_op", "add");
    uint32_t variant = 0;
    while (variant < RK_COUNTOF(kinds) && strcmp(kinds[variant], kind)) variant++;
    const char *args = lw_printf(cx, "i32 %s, i32 %lld", lw_val(cx, op->in[0]), (long long)lw_attr_int(op, "strategy", 0));
    ovl_v(cx, op, AMD_D_WAVE_REDUCE, variant, lw_printf(cx, "wave.reduce.%s", kind),
          "i32, i32", args);
}

static void permlane16(lw_ctx *cx, const rk_op *op) {
    const char *args = lw_printf(cx, "i32 %s, i32 %s, i32 %s, i32 %s, i1 %s, i1 %s", lw_val(cx, op->in[0]),
                                 lw_val(cx, op->in[1]), lw_val(cx, op->in[2]), lw_val(cx, op->in[3]),
                                 lw_attr_bool(op, "fi", false) ? "true" : "false",
                                 lw_attr_bool(op, "bound_ctrl", false) ? "true" : "false");
    ovl(cx, op, AMD_D_PERMLANE, "permlane16", "i32, i32, i32, i32, i1, i1", args);
}

/* lane l reads lane l ^ 16 within its 32: selects 0x76543210, 0xfedcba98 */
static void permlanex16(lw_ctx *cx, const rk_op *op) {
    const char *v = lw_val(cx, op->in[0]);
    const char *args = lw_printf(cx, "i32 %s, i32 %s, i32 1985229328, i32 -19088744, i1 false, i1 true", v, v);
    ovl(cx, op, AMD_D_PERMLANE, "permlanex16", "i32, i32, i32, i32, i1, i1", args);
}

static void permlane64(lw_ctx *cx, const rk_op *op) {
    ovl(cx, op, AMD_D_PERMLANE, "permlane64", "i32", lw_printf(cx, "i32 %s", lw_val(cx, op->in[0])));
}

static void perm_b32(lw_ctx *cx, const rk_op *op) {
    lw_declare(cx, AMD_D_PERM, "declare i32 @llvm.amdgcn.perm(i32, i32, i32)");
    lw_ins(cx, "%v = call i32 @llvm.amdgcn.perm(%V, %V, %V)", op->out[0], op->in[0], op->in[1], op->in[2]);
}

static void byte_perm(lw_ctx *cx, const rk_op *op) { perm(cx, op, lw_int_lit(cx, RK_T_I32, lw_attr_int(op, "sel", 0))); }

static void alignbyte(lw_ctx *cx, const rk_op *op) {
    lw_declare(cx, AMD_D_ALIGNBYTE, "declare i32 @llvm.amdgcn.alignbyte(i32, i32, i32)");
    lw_ins(cx, "%v = call i32 @llvm.amdgcn.alignbyte(%V, %V, %V)", op->out[0], op->in[0], op->in[1], op->in[2]);
}

/* both the result and the operand type are overloaded: s.wqm.i64.i64 */
static void s_wqm(lw_ctx *cx, const rk_op *op) {
    rk_value r = op->out[0];
    const char *ty = lw_vty(cx, r), *m = lw_mangle(cx, vt(cx, r));
    lw_declare(cx, AMD_D_S_WQM, lw_printf(cx, "declare %s @llvm.amdgcn.s.wqm.%s.%s(%s)", ty, m, m, ty));
    lw_ins(cx, "%v = call %s @llvm.amdgcn.s.wqm.%s.%s(%V)", r, ty, m, m, op->in[0]);
}

static void exec_and_saveexec(lw_ctx *cx, const rk_op *op) { exec_asm(cx, op, "s_and_saveexec_b64 $0, $1"); }
static void exec_or_saveexec(lw_ctx *cx, const rk_op *op) { exec_asm(cx, op, "s_or_saveexec_b64 $0, $1"); }
static void exec_xor(lw_ctx *cx, const rk_op *op) { exec_asm(cx, op, "s_xor_b64 $0, exec, $1"); }
static void exec_or(lw_ctx *cx, const rk_op *op) { exec_asm(cx, op, "s_or_b64 exec, exec, $0"); }

/* The family's handlers by opcode (amdgpu.c's switch routes exactly these here). */
typedef void (*lane_fn)(lw_ctx *cx, const rk_op *op);
static const lane_fn lane_fns[RK_OP__COUNT] = {
    [RK_OP_READFIRSTLANE] = readfirstlane, [RK_OP_READLANE] = readlane, [RK_OP_WRITELANE] = writelane,
    [RK_OP_PIN_SGPR] = pin_sgpr, [RK_OP_WAVE_BALLOT] = wave_ballot, [RK_OP_WAVE_ALL] = wave_all,
    [RK_OP_WAVE_ANY] = wave_any, [RK_OP_SHUFFLE] = shuffle, [RK_OP_DS_BPERMUTE] = ds_bpermute,
    [RK_OP_DS_BPERMUTE_B64] = bpermute_b64, [RK_OP_DS_SWIZZLE_XOR] = ds_swizzle_xor, [RK_OP_DS_SWIZZLE] = ds_swizzle,
    [RK_OP_MOV_DPP] = mov_dpp, [RK_OP_DPP_XOR] = dpp_xor, [RK_OP_QUAD_PERM] = quad_perm, [RK_OP_MOV_DPP8] = mov_dpp8,
    [RK_OP_WAVE_REDUCE] = wave_reduce, [RK_OP_PERMLANE16] = permlane16, [RK_OP_PERMLANEX16] = permlanex16,
    [RK_OP_PERMLANE64] = permlane64, [RK_OP_PERMLANE32_SWAP] = permlane32_swap, [RK_OP_PERM_B32] = perm_b32,
    [RK_OP_BYTE_PERM] = byte_perm, [RK_OP_ALIGNBYTE] = alignbyte, [RK_OP_S_WQM] = s_wqm,
    [RK_OP_EXEC_AND_SAVEEXEC] = exec_and_saveexec, [RK_OP_EXEC_OR_SAVEEXEC] = exec_or_saveexec,
    [RK_OP_EXEC_XOR] = exec_xor, [RK_OP_EXEC_OR] = exec_or,
};

void lw_amd_lane(lw_ctx *cx, const rk_op *op) {
    RK_ASSERT(op->code > RK_OP_INVALID && op->code < RK_OP__COUNT && lane_fns[op->code],
              "lw_amd_lane called for an op outside the cross-lane family");
    lane_fns[op->code](cx, op);
}
