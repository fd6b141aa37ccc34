/* rocke — NVPTX matrix atoms and 8-bit float conversions. Layer: lower.
 *
 * mma.sync: tile.mma's warp atoms (src/target/atoms.c) map to
 * llvm.nvvm.mma.<shape>.row.col.*; the IR fragments (vec<f16x8>, vec<bf16x4>,
 * vec<f32x4> ...) become the intrinsic's registers: <2 x half> pairs for f16,
 * i32 words for bf16 and tf32 (tf32 passes the f32 bits; the unit drops the
 * low 13 mantissa bits), C/D as four floats. Register r holds fragment slots
 * 2r and 2r+1, which is the PTX fragment order the catalog's lane maps use.
 *
 * fp8 (OCP e4m3 / e5m2): sm_89+ converts in hardware — decode through
 * cvt.rn.f16x2.{e4m3x2,e5m2x2} (exact) then to f32; encode with
 * cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 (round to nearest even, overflow and
 * inf saturate to the largest finite value), then a NaN input is given the
 * reference's NaN code with its sign (S.1111.111 / S.11111.10; the hardware
 * writes an unsigned canonical NaN). sm_80 has no 8-bit float conversions:
 * the exact integer sequences of fp8.c run instead. */
#include <stdio.h>

#include "nvptx_int.h"

static rk_type vt(const lw_ctx *cx, rk_value v) { return rk_value_type(cx->k, v); }

/* ---- mma.sync ---------------------------------------------------------------------------------------- */
typedef struct mma_row {
    const char *op_id, *intrinsic;
    bool half_pairs;        /* A/B registers are <2 x half>; else i32 words */
    uint8_t a_regs, b_regs;
} mma_row;

/* Every NVIDIA warp atom of src/target/atoms.c; test_nvptx checks none is missing. */
static const mma_row mma_rows[] = {
    {"mma_m16n8k16_f32_f16", "m16n8k16.row.col.f32.f32", true, 4, 2},
    {"mma_m16n8k16_f32_bf16", "m16n8k16.row.col.bf16", false, 4, 2},
    {"mma_m16n8k8_f32_f16", "m16n8k8.row.col.f32.f32", true, 2, 1},
    {"mma_m16n8k8_f32_bf16", "m16n8k8.row.col.bf16", false, 2, 1},
    {"mma_m16n8k8_f32_tf32", "m16n8k8.row.col.tf32", false, 4, 2},
};

/* The fragment's registers, as "ty text" argument texts appended to args. */
static void regs_of(lw_ctx *cx, rk_value v, bool half_pairs, uint32_t n, rk_buf *args, rk_buf *params) {
    const char *w = NULL;
    if (!half_pairs) {
        w = lw_tmp(cx, "frag");
        lw_ins(cx, "%s = bitcast %V to <%u x i32>", w, v, n);
    }
    for (uint32_t r = 0; r < n; r++) {
        const char *x = lw_tmp(cx, "frag");
        if (half_pairs)
            lw_ins(cx, "%s = shufflevector %V, %t poison, <2 x i32> <i32 %u, i32 %u>", x, v, v, 2 * r, 2 * r + 1);
        else
            lw_ins(cx, "%s = extractelement <%u x i32> %s, i32 %u", x, n, w, r);
        const char *ty = half_pairs ? "<2 x half>" : "i32";
        lw_fmt(cx, args, "%s%s %s", args->len ? ", " : "", ty, x);
        lw_fmt(cx, params, "%s%s", params->len ? ", " : "", ty);
    }
}

void lw_nv_mma(lw_ctx *cx, const rk_op *op) {
    const char *id = lw_attr_str(op, "op_id", "");
    const mma_row *row = NULL;
    for (size_t i = 0; i < RK_COUNTOF(mma_rows); i++)
        if (strcmp(mma_rows[i].op_id, id) == 0) row = &mma_rows[i];
    if (!row) {
        const rk_mma_atom *a = rk_mma_atom_find(id);
        if (a && a->lanes == 128) {
            lw_nv_wgmma(cx, op);
            return;
        }
        /* a catalog atom without a row here is a rocke bug; refuse it rather
         * than abort the hosting process (test_nvptx catches it) */
        lw_error(cx, op, RK_ERR_UNSUPPORTED, "matrix atom '%s' has no NVPTX lowering", id);
        return;
    }
    rk_buf args, params;
    rk_buf_init(&args);
    rk_buf_init(&params);
    regs_of(cx, op->in[0], row->half_pairs, row->a_regs, &args, &params);
    regs_of(cx, op->in[1], row->half_pairs, row->b_regs, &args, &params);
    for (uint32_t i = 0; i < 4; i++) {
        const char *c = lw_tmp(cx, "acc");
        lw_ins(cx, "%s = extractelement %V, i32 %u", c, op->in[2], i);
        lw_fmt(cx, &args, ", float %s", c);
        rk_buf_puts(&params, ", float");
    }
    const char *st = "{ float, float, float, float }", *d = lw_tmp(cx, "mma"), *acc = "poison";
    if (!lw_seen(cx, NV_D_MMA, (uint32_t)(row - mma_rows), 0))
        lw_declare(cx, NV_D_MMA, lw_printf(cx, "declare %s @llvm.nvvm.mma.%s(%s)", st, row->intrinsic, rk_buf_cstr(&params)));
    lw_ins(cx, "%s = call %s @llvm.nvvm.mma.%s(%s)", d, st, row->intrinsic, rk_buf_cstr(&args));
    rk_buf_free(&args);
    rk_buf_free(&params);
    for (uint32_t i = 0; i < 4; i++) {
        const char *e = lw_tmp(cx, "d");
        lw_ins(cx, "%s = extractvalue %s %s, %u", e, st, d, i);
        if (i == 3) {
            lw_ins(cx, "%v = insertelement <4 x float> %s, float %s, i32 3", op->out[0], acc, e);
        } else {
            const char *n = lw_tmp(cx, "ins");
            lw_ins(cx, "%s = insertelement <4 x float> %s, float %s, i32 %u", n, acc, e, i);
            acc = n;
        }
    }
}

/* ---- 8-bit floats ----------------------------------------------------------------------------------------- */
static bool has_hw(const lw_ctx *cx) { return cx->t->sm_version >= 89; }

static rk_scalar f8_of(const lw_ctx *cx, rk_value v) {
    rk_type t = vt(cx, v);
    if (rk_type_kind_of(cx->k, t) == RK_TK_VEC) t = rk_type_elem(cx->k, t);
    return rk_type_scalar(t);
}

static const char *pair_name(rk_scalar s) { return s == RK_S_BF8E5M2 ? "e5m2x2" : "e4m3x2"; }

/* two bytes (low: the first value) -> <2 x half>, exact */
static const char *unpack2(lw_ctx *cx, rk_scalar s, const char *i16) {
    const char *h = lw_tmp(cx, "f8.h"), *n = pair_name(s);
    lw_declare(cx, NV_D_CVT_F8, lw_printf(cx, "declare <2 x half> @llvm.nvvm.%s.to.f16x2.rn(i16)", n));
    lw_ins(cx, "%s = call <2 x half> @llvm.nvvm.%s.to.f16x2.rn(i16 %s)", h, n, i16);
    return h;
}

/* lo goes to the low byte, hi to the high one */
static const char *pack2(lw_ctx *cx, rk_scalar s, const char *hi, const char *lo) {
    const char *p = lw_tmp(cx, "f8.p"), *n = pair_name(s);
    lw_declare(cx, NV_D_CVT_F8, lw_printf(cx, "declare i16 @llvm.nvvm.ff.to.%s.rn(float, float)", n));
    lw_ins(cx, "%s = call i16 @llvm.nvvm.ff.to.%s.rn(float %s, float %s)", p, n, hi, lo);
    return p;
}

/* bytes (i8 or <4 x i8>) of encoded floats f: a NaN input gets sign | NaN code */
static void nan_fix(lw_ctx *cx, rk_scalar s, const char *into, const char *f, const char *bytes, uint32_t n) {
    const char *fty = n == 1 ? "float" : "<4 x float>", *ity = n == 1 ? "i32" : "<4 x i32>",
               *bty = n == 1 ? "i8" : "<4 x i8>", *cty = n == 1 ? "i1" : "<4 x i1>";
    const char *nan = lw_tmp(cx, "f8.nan"), *b = lw_tmp(cx, "f8.bits"), *sh = lw_tmp(cx, "f8.sh"),
               *tb = lw_tmp(cx, "f8.sb"), *sg = lw_tmp(cx, "f8.sg"), *nb = lw_tmp(cx, "f8.nb");
    const char *code = s == RK_S_BF8E5M2 ? "126" : "127";
    const char *splat = n == 1 ? "" : "splat (", *end = n == 1 ? "" : ")";
    lw_ins(cx, "%s = fcmp uno %s %s, %s", nan, fty, f, n == 1 ? lw_float_lit(cx, RK_T_F32, 0.0) : "zeroinitializer");
    lw_ins(cx, "%s = bitcast %s %s to %s", b, fty, f, ity);
    lw_ins(cx, "%s = lshr %s %s, %s%s24%s", sh, ity, b, splat, n == 1 ? "" : "i32 ", end);
    lw_ins(cx, "%s = trunc %s %s to %s", tb, ity, sh, bty);
    lw_ins(cx, "%s = and %s %s, %s%s-128%s", sg, bty, tb, splat, n == 1 ? "" : "i8 ", end);
    lw_ins(cx, "%s = or %s %s, %s%s%s%s", nb, bty, sg, splat, n == 1 ? "" : "i8 ", code, end);
    lw_ins(cx, "%s = select %s %s, %s %s, %s %s", into, cty, nan, bty, nb, bty, bytes);
}

static void cvt_to_f32(lw_ctx *cx, const rk_op *op) {
    rk_scalar s = f8_of(cx, op->in[0]);
    if (!has_hw(cx)) {
        lw_f8_decode(cx, s, lw_val(cx, op->out[0]), lw_val(cx, op->in[0]));
        return;
    }
    const char *z = lw_tmp(cx, "f8.z"), *h = lw_tmp(cx, "f8.h0");
    lw_ins(cx, "%s = zext %V to i16", z, op->in[0]);
    lw_ins(cx, "%s = extractelement <2 x half> %s, i32 0", h, unpack2(cx, s, z));
    lw_ins(cx, "%v = fpext half %s to float", op->out[0], h);
}

static void cvt_from_f32(lw_ctx *cx, const rk_op *op) {
    rk_scalar s = f8_of(cx, op->out[0]);
    const char *x = lw_val(cx, op->in[0]);
    if (!has_hw(cx)) {
        lw_f8_encode(cx, s, lw_val(cx, op->out[0]), x);
        return;
    }
    const char *b = lw_tmp(cx, "f8.b");
    lw_ins(cx, "%s = trunc i16 %s to i8", b, pack2(cx, s, lw_float_lit(cx, RK_T_F32, 0.0), x));
    nan_fix(cx, s, lw_val(cx, op->out[0]), x, b, 1);
}

static const char *elt(lw_ctx *cx, rk_value v, unsigned i) {
    const char *t = lw_tmp(cx, "elt");
    lw_ins(cx, "%s = extractelement %V, i32 %u", t, v, i);
    return t;
}

/* four lanes through the scalar software sequences */
static void sw_pk(lw_ctx *cx, const rk_op *op, bool decode) {
    rk_scalar fs = f8_of(cx, decode ? op->in[0] : op->out[0]);
    const char *acc = "poison", *ety = decode ? "float" : "i8";
    for (unsigned i = 0; i < 4; i++) {
        const char *x = elt(cx, op->in[0], i), *y = lw_tmp(cx, decode ? "f8.f" : "f8.b");
        if (decode) lw_f8_decode(cx, fs, y, x);
        else lw_f8_encode(cx, fs, y, x);
        if (i == 3) {
            lw_ins(cx, "%v = insertelement %t %s, %s %s, i32 3", op->out[0], op->out[0], acc, ety, y);
        } else {
            const char *n = lw_tmp(cx, "ins");
            lw_ins(cx, "%s = insertelement %t %s, %s %s, i32 %u", n, op->out[0], acc, ety, y, i);
            acc = n;
        }
    }
}

static void cvt_pk_to_f32(lw_ctx *cx, const rk_op *op) {
    if (!has_hw(cx)) { sw_pk(cx, op, true); return; }
    rk_scalar s = f8_of(cx, op->in[0]);
    const char *w = lw_tmp(cx, "f8.w"), *lo = lw_tmp(cx, "f8.lo"), *sh = lw_tmp(cx, "f8.sh"), *hi = lw_tmp(cx, "f8.hi"),
               *h4 = lw_tmp(cx, "f8.h4");
    lw_ins(cx, "%s = bitcast %V to i32", w, op->in[0]);
    lw_ins(cx, "%s = trunc i32 %s to i16", lo, w);
    lw_ins(cx, "%s = lshr i32 %s, 16", sh, w);
    lw_ins(cx, "%s = trunc i32 %s to i16", hi, sh);
    const char *a = unpack2(cx, s, lo), *b = unpack2(cx, s, hi);
    lw_ins(cx, "%s = shufflevector <2 x half> %s, <2 x half> %s, <4 x i32> <i32 0, i32 1, i32 2, i32 3>", h4, a, b);
    lw_ins(cx, "%v = fpext <4 x half> %s to <4 x float>", op->out[0], h4);
}

static void cvt_pk_from_f32(lw_ctx *cx, const rk_op *op) {
    if (!has_hw(cx)) { sw_pk(cx, op, false); return; }
    rk_scalar s = f8_of(cx, op->out[0]);
    const char *e[4];
    for (unsigned i = 0; i < 4; i++) e[i] = elt(cx, op->in[0], i);
    const char *p01 = pack2(cx, s, e[1], e[0]), *p23 = pack2(cx, s, e[3], e[2]);
    const char *z0 = lw_tmp(cx, "f8.z"), *z1 = lw_tmp(cx, "f8.z"), *up = lw_tmp(cx, "f8.up"), *w = lw_tmp(cx, "f8.w"),
               *b = lw_tmp(cx, "f8.b4");
    lw_ins(cx, "%s = zext i16 %s to i32", z0, p01);
    lw_ins(cx, "%s = zext i16 %s to i32", z1, p23);
    lw_ins(cx, "%s = shl i32 %s, 16", up, z1);
    lw_ins(cx, "%s = or i32 %s, %s", w, up, z0);
    lw_ins(cx, "%s = bitcast i32 %s to <4 x i8>", b, w);
    nan_fix(cx, s, lw_val(cx, op->out[0]), lw_val(cx, op->in[0]), b, 4);
}

typedef void (*cvt_fn)(lw_ctx *cx, const rk_op *op);
static const cvt_fn cvt_fns[RK_OP__COUNT] = {
    [RK_OP_CVT_FP8_TO_F32] = cvt_to_f32, [RK_OP_CVT_BF8_TO_F32] = cvt_to_f32,
    [RK_OP_CVT_F32_TO_FP8] = cvt_from_f32, [RK_OP_CVT_F32_TO_BF8] = cvt_from_f32,
    [RK_OP_CVT_PK_F32_FP8X4] = cvt_pk_to_f32, [RK_OP_CVT_PK_F32_BF8X4] = cvt_pk_to_f32,
    [RK_OP_CVT_PK_FP8_F32X4] = cvt_pk_from_f32, [RK_OP_CVT_PK_BF8_F32X4] = cvt_pk_from_f32,
};

void lw_nv_cvt(lw_ctx *cx, const rk_op *op) {
    RK_ASSERT(op->code > RK_OP_INVALID && op->code < RK_OP__COUNT && cvt_fns[op->code],
              "lw_nv_cvt called for an op outside the fp8 conversion family");
    cvt_fns[op->code](cx, op);
}

/* ---- warpgroup MMA ------------------------------------------------------------------------------------------ */
void lw_nv_wgmma(lw_ctx *cx, const rk_op *op) {
    lw_error(cx, op, RK_ERR_UNSUPPORTED, "warpgroup MMA is not lowered yet");
}
