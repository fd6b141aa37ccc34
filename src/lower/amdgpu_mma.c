/* rocke — AMDGPU matrix atoms (tile.mma op_id -> MFMA intrinsic, operand
 * bitcasts per LLVM flavor) and the 8-bit float conversions. The cvt
 * intrinsics encode the target's native dialect — FNUZ on gfx942, OCP on
 * gfx950 — which the verifier has already matched to the IR types; encodes
 * are made saturating as the IR defines them (see "saturation" below);
 * gfx90a has no 8-bit float hardware and gets the exact software sequences.
 * Layer: lower. */
#include <stdio.h>

#include "amdgpu_int.h"
#include "../base/fp8.h"

/* ---- MFMA ------------------------------------------------------------------------------------------ */
/* The intrinsic (llvm.amdgcn.<instr>) and the operand packing are columns of
 * the atom catalog (include/rocke/atoms.def).
 * An A/B operand in the intrinsic's type; writes that type into *ty. */
static const char *ab_operand(lw_ctx *cx, rk_value v, rk_atom_pack ab, const char **ty) {
    *ty = lw_vty(cx, v);
    if (ab == RK_ATOM_PACK_AS_IS) return lw_val(cx, v);
    RK_ASSERT(ab == RK_ATOM_PACK_I16X4 || ab == RK_ATOM_PACK_B64 || ab == RK_ATOM_PACK_I32X8,
              "an MFMA atom packs A and B as carried, <4 x i16>, 64 bits or <8 x i32>");
    *ty = ab == RK_ATOM_PACK_I16X4 ? "<4 x i16>" : ab == RK_ATOM_PACK_I32X8 ? "<8 x i32>"
          : cx->flavor == RK_LLVM20 ? "<2 x i32>" : "i64";
    const char *t = lw_tmp(cx, "frag");
    lw_ins(cx, "%s = bitcast %V to %s", t, v, *ty);
    return t;
}

/* gfx950 f8f6f4 atoms: llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4 takes
 * (A, B, C, cbsz, blgp, opsel_a, scale_a, opsel_b, scale_b) in LLVM 22's
 * IntrinsicsAMDGPU.td, and every caller we found since LLVM 20 passes the
 * same nine: one form for every flavor (docs/lowering.md §7.3). cbsz/blgp
 * give A's/B's format (0 = fp8 e4m3, 1 = bf8 e5m2), read from the operand
 * types. The unscaled atom passes the literal 0 for every selector and
 * scale: instruction selection then picks v_mfma_f32_16x16x128_f8f6f4, which
 * applies no scale at all (byte 0 is not read as E8M0 2^-127; the ISA check
 * is in test_mfma_scaled). */
static rk_scalar f8_of(const lw_ctx *cx, rk_value v);   /* element type (saturation section) */

static void f8f6f4(lw_ctx *cx, const rk_op *op, const rk_mma_atom *atom) {
    const char *ta, *tb, *tc = lw_vty(cx, op->in[2]);
    const char *a = ab_operand(cx, op->in[0], atom->pack, &ta), *b = ab_operand(cx, op->in[1], atom->pack, &tb);
    const char *name = lw_printf(cx, "llvm.amdgcn.%s.v8i32.v8i32", atom->instr);
    lw_declare(cx, AMD_D_MFMA, lw_printf(cx, "declare %s @%s(%s, %s, %s, i32, i32, i32, i32, i32, i32)", tc, name, ta,
                                         tb, tc));
    const char *tail = "i32 0, i32 0, i32 0, i32 0, i32 0, i32 0";
    if (atom->scaled) {
        int cbsz = f8_of(cx, op->in[0]) == RK_S_BF8E5M2, blgp = f8_of(cx, op->in[1]) == RK_S_BF8E5M2;
        tail = lw_printf(cx, "i32 %d, i32 %d, i32 %d, i32 %s, i32 %d, i32 %s", cbsz, blgp,
                         (int)lw_attr_int(op, "opsel_a", 0), lw_val(cx, op->in[3]), (int)lw_attr_int(op, "opsel_b", 0),
                         lw_val(cx, op->in[4]));
    }
    lw_ins(cx, "%v = call %s @%s(%s %s, %s %s, %V, %s)", op->out[0], tc, name, ta, a, tb, b, op->in[2], tail);
}

void lw_amd_mma(lw_ctx *cx, const rk_op *op) {
    const char *id = lw_attr_str(op, "op_id", "");
    const rk_mma_atom *atom = rk_mma_atom_find(id);
    if (!atom || atom->unit != RK_ATOM_UNIT_MFMA) {
        /* the verifier admits only this target's atoms: reaching here is a
         * rocke bug; refuse it rather than abort the hosting process */
        lw_error(cx, op, RK_ERR_UNSUPPORTED, "matrix atom '%s' has no AMDGPU lowering", id);
        return;
    }
    if (atom->pack == RK_ATOM_PACK_I32X8) {
        f8f6f4(cx, op, atom);
        return;
    }
    const char *ta, *tb;
    const char *a = ab_operand(cx, op->in[0], atom->pack, &ta), *b = ab_operand(cx, op->in[1], atom->pack, &tb);
    const char *tc = lw_vty(cx, op->in[2]);
    if (!lw_seen(cx, AMD_D_MFMA, (uint32_t)atom->id, 0))
        lw_declare(cx, AMD_D_MFMA, lw_printf(cx, "declare %s @llvm.amdgcn.%s(%s, %s, %s, i32, i32, i32)", tc,
                                             atom->instr, ta, tb, tc));
    /* cbsz, abid, blgp: no broadcast */
    lw_ins(cx, "%v = call %s @llvm.amdgcn.%s(%s %s, %s %s, %V, i32 0, i32 0, i32 0)", op->out[0], tc, atom->instr, ta, a,
           tb, b, op->in[2]);
}

/* ---- 8-bit float conversions ------------------------------------------------------------------------ */
/* "bf8" or "fp8": the format of the op's 8-bit side, which the op table
 * types as fp8 (e4m3) or bf8 (e5m2), OCP or FNUZ */
static const char *fmt8(const lw_ctx *cx, const rk_op *op) {
    rk_scalar s = f8_of(cx, op->out[0]);
    if (s == RK_S_F32) s = f8_of(cx, op->in[0]);
    return s == RK_S_BF8E5M2 || s == RK_S_BF8E5M2FNUZ ? "bf8" : "fp8";
}

/* byte -> f32: the byte in the low lane of an i32, byte_sel 0 */
static void to_f32(lw_ctx *cx, const rk_op *op) {
    const char *f = fmt8(cx, op), *z = lw_tmp(cx, "byte");
    lw_declare(cx, AMD_D_CVT_FP8, lw_printf(cx, "declare float @llvm.amdgcn.cvt.f32.%s(i32, i32)", f));
    lw_ins(cx, "%s = zext %V to i32", z, op->in[0]);
    lw_ins(cx, "%v = call float @llvm.amdgcn.cvt.f32.%s(i32 %s, i32 0)", op->out[0], f, z);
}

/* ---- saturation ----------------------------------------------------------------------------------------- */
/* The IR's encodes round to nearest even and saturate: a result beyond the
 * largest finite value is +-max finite, +-inf too (ops.def, src/base/fp8.h).
 * v_cvt_[scalef32_]pk_{fp8,bf8}_f32 saturate only with the clamp bit, which
 * the intrinsics cannot set; without it an overflow becomes NaN (inf in OCP
 * e5m2). Unscaled forms clamp the input to +-max of the dialect (240, 448 or
 * 57344) first: fcmp ogt/olt are false for NaN, so NaN stays NaN. */
static rk_scalar f8_of(const lw_ctx *cx, rk_value v) {
    rk_type t = rk_value_type(cx->k, v);
    if (rk_type_kind_of(cx->k, t) == RK_TK_VEC) t = rk_type_elem(cx->k, t);
    return rk_type_scalar(t);
}

static rk_fp8_format base_fmt(rk_scalar s) {
    switch (s) {
    case RK_S_FP8E4M3: return RK_FP8_E4M3;
    case RK_S_BF8E5M2: return RK_FP8_E5M2;
    case RK_S_FP8E4M3FNUZ: return RK_FP8_E4M3_FNUZ;
    case RK_S_BF8E5M2FNUZ: return RK_FP8_E5M2_FNUZ;
    default: rk_bug("8-bit float conversion of a type that is not an 8-bit float (verified)");
    }
}

static const char *clamp_f8(lw_ctx *cx, rk_scalar fs, const char *x) {
    double max = rk_fp8_max(base_fmt(fs));
    const char *hi = lw_float_lit(cx, RK_T_F32, max), *lo = lw_float_lit(cx, RK_T_F32, -max);
    const char *gt = lw_tmp(cx, "sat.gt"), *a = lw_tmp(cx, "sat"), *lt = lw_tmp(cx, "sat.lt"), *b = lw_tmp(cx, "sat");
    lw_ins(cx, "%s = fcmp ogt float %s, %s", gt, x, hi);
    lw_ins(cx, "%s = select i1 %s, float %s, float %s", a, gt, hi, x);
    lw_ins(cx, "%s = fcmp olt float %s, %s", lt, a, lo);
    lw_ins(cx, "%s = select i1 %s, float %s, float %s", b, lt, lo, a);
    return b;
}

/* Scaled forms (gfx950, OCP): the bound max * 2^(e-127) depends on the
 * scale, and past 2^128 no f32 input reaches it although +-inf must still
 * give +-max; so the packed result is fixed instead: a byte past the max
 * finite code, from an ordered input under an ordered scale (exponent field
 * e != 255), becomes sign(x) | max code. Returns the <4 x i8> to bitcast. */
static const char *saturate_scaled(lw_ctx *cx, const rk_op *op, const char *packed) {
    unsigned maxcode = f8_of(cx, op->out[0]) == RK_S_BF8E5M2 ? 0x7Bu : 0x7Eu;
    const char *b = lw_tmp(cx, "sat.b"), *xb = lw_tmp(cx, "sat.xb"), *sh = lw_tmp(cx, "sat.sh"),
               *s8 = lw_tmp(cx, "sat.s8"), *sg = lw_tmp(cx, "sat.sg"), *mx = lw_tmp(cx, "sat.max"),
               *mag = lw_tmp(cx, "sat.mag"), *ov = lw_tmp(cx, "sat.ov"), *ord = lw_tmp(cx, "sat.ord"),
               *hit = lw_tmp(cx, "sat.hit"), *fix = lw_tmp(cx, "sat.fix"), *scb = lw_tmp(cx, "sat.scb"),
               *sce = lw_tmp(cx, "sat.sce"), *sok = lw_tmp(cx, "sat.sok"), *res = lw_tmp(cx, "sat.res");
    lw_ins(cx, "%s = bitcast <2 x i16> %s to <4 x i8>", b, packed);
    lw_ins(cx, "%s = bitcast %V to <4 x i32>", xb, op->in[0]);
    lw_ins(cx, "%s = lshr <4 x i32> %s, splat (i32 24)", sh, xb);
    lw_ins(cx, "%s = trunc <4 x i32> %s to <4 x i8>", s8, sh);
    lw_ins(cx, "%s = and <4 x i8> %s, splat (i8 -128)", sg, s8);
    lw_ins(cx, "%s = or <4 x i8> %s, splat (i8 %u)", mx, sg, maxcode);
    lw_ins(cx, "%s = and <4 x i8> %s, splat (i8 127)", mag, b);
    lw_ins(cx, "%s = icmp ugt <4 x i8> %s, splat (i8 %u)", ov, mag, maxcode);
    lw_ins(cx, "%s = fcmp ord %V, %s", ord, op->in[0], lw_val(cx, op->in[0]));
    lw_ins(cx, "%s = and <4 x i1> %s, %s", hit, ov, ord);
    lw_ins(cx, "%s = select <4 x i1> %s, <4 x i8> %s, <4 x i8> %s", fix, hit, mx, b);
    lw_ins(cx, "%s = bitcast %V to i32", scb, op->in[1]);
    lw_ins(cx, "%s = and i32 %s, 2139095040", sce, scb);
    lw_ins(cx, "%s = icmp ne i32 %s, 2139095040", sok, sce);
    lw_ins(cx, "%s = select i1 %s, <4 x i8> %s, <4 x i8> %s", res, sok, fix, b);
    return res;
}

/* f32 -> byte: pack (clamped x, 0) into the low word, keep the low byte */
static void from_f32(lw_ctx *cx, const rk_op *op) {
    const char *f = fmt8(cx, op), *w = lw_tmp(cx, "pk");
    const char *x = clamp_f8(cx, f8_of(cx, op->out[0]), lw_val(cx, op->in[0]));
    lw_declare(cx, AMD_D_CVT_FP8, lw_printf(cx, "declare i32 @llvm.amdgcn.cvt.pk.%s.f32(float, float, i32, i1)", f));
    lw_ins(cx, "%s = call i32 @llvm.amdgcn.cvt.pk.%s.f32(float %s, float 0.000000e+00, i32 0, i1 false)", w, f, x);
    lw_ins(cx, "%v = trunc i32 %s to i8", op->out[0], w);
}

/* 4 bytes -> 4 floats: low word then high word, concatenated */
static void pk_to_f32(lw_ctx *cx, const rk_op *op, bool scaled) {
    const char *f = fmt8(cx, op), *w = lw_tmp(cx, "word"), *lo = lw_tmp(cx, "lo"), *hi = lw_tmp(cx, "hi");
    const char *name = scaled ? lw_printf(cx, "cvt.scalef32.pk.f32.%s", f) : lw_printf(cx, "cvt.pk.f32.%s", f);
    const char *scale = scaled ? lw_printf(cx, ", float %s", lw_val(cx, op->in[1])) : "";
    lw_declare(cx, scaled ? AMD_D_CVT_SCALE : AMD_D_CVT_FP8,
         lw_printf(cx, "declare <2 x float> @llvm.amdgcn.%s(i32%s, i1)", name, scaled ? ", float" : ""));
    lw_ins(cx, "%s = bitcast %V to i32", w, op->in[0]);
    lw_ins(cx, "%s = call <2 x float> @llvm.amdgcn.%s(i32 %s%s, i1 false)", lo, name, w, scale);
    lw_ins(cx, "%s = call <2 x float> @llvm.amdgcn.%s(i32 %s%s, i1 true)", hi, name, w, scale);
    lw_ins(cx, "%v = shufflevector <2 x float> %s, <2 x float> %s, <4 x i32> <i32 0, i32 1, i32 2, i32 3>", op->out[0],
           lo, hi);
}

static const char *elt(lw_ctx *cx, rk_value v, unsigned i) {
    const char *t = lw_tmp(cx, "elt");
    lw_ins(cx, "%s = extractelement %V, i32 %u", t, v, i);
    return t;
}

/* 4 floats -> 4 bytes: (e0, e1) into the low word, (e2, e3) into the high */
static void pk_from_f32(lw_ctx *cx, const rk_op *op, bool scaled) {
    const char *f = fmt8(cx, op), *e[4], *lo = lw_tmp(cx, "pk"), *hi = lw_tmp(cx, "pk");
    for (unsigned i = 0; i < 4; i++) e[i] = elt(cx, op->in[0], i);
    if (scaled) {
        const char *s = lw_val(cx, op->in[1]);
        lw_declare(cx, AMD_D_CVT_SCALE,
                   lw_printf(cx, "declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.%s.f32(<2 x i16>, float, float, float, "
                                 "i1)", f));
        lw_ins(cx, "%s = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.%s.f32(<2 x i16> zeroinitializer, float %s, "
                   "float %s, float %s, i1 false)",
               lo, f, e[0], e[1], s);
        lw_ins(cx, "%s = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.%s.f32(<2 x i16> %s, float %s, float %s, "
                   "float %s, i1 true)",
               hi, f, lo, e[2], e[3], s);
        lw_ins(cx, "%v = bitcast <4 x i8> %s to %t", op->out[0], saturate_scaled(cx, op, hi), op->out[0]);
        return;
    }
    for (unsigned i = 0; i < 4; i++) e[i] = clamp_f8(cx, f8_of(cx, op->out[0]), e[i]);
    lw_declare(cx, AMD_D_CVT_FP8, lw_printf(cx, "declare i32 @llvm.amdgcn.cvt.pk.%s.f32(float, float, i32, i1)", f));
    lw_ins(cx, "%s = call i32 @llvm.amdgcn.cvt.pk.%s.f32(float %s, float %s, i32 0, i1 false)", lo, f, e[0], e[1]);
    lw_ins(cx, "%s = call i32 @llvm.amdgcn.cvt.pk.%s.f32(float %s, float %s, i32 %s, i1 true)", hi, f, e[2], e[3], lo);
    lw_ins(cx, "%v = bitcast i32 %s to %t", op->out[0], hi, op->out[0]);
}

/* ---- no conversion hardware (gfx90a): the software sequences of lower_fp8.c ---- */
static bool has_hw(const lw_ctx *cx) { return (cx->t->features & RK_FEAT_GFX940) != 0; }

static void cvt_to_f32(lw_ctx *cx, const rk_op *op) {
    if (has_hw(cx)) to_f32(cx, op);
    else lw_f8_decode(cx, f8_of(cx, op->in[0]), lw_val(cx, op->out[0]), lw_val(cx, op->in[0]));
}
static void cvt_from_f32(lw_ctx *cx, const rk_op *op) {
    if (has_hw(cx)) from_f32(cx, op);
    else lw_f8_encode(cx, f8_of(cx, op->out[0]), lw_val(cx, op->out[0]), lw_val(cx, op->in[0]));
}
static void cvt_pk_to(lw_ctx *cx, const rk_op *op) {
    if (has_hw(cx)) pk_to_f32(cx, op, false);
    else lw_f8_pk_sw(cx, op, true);
}
static void cvt_pk_from(lw_ctx *cx, const rk_op *op) {
    if (has_hw(cx)) pk_from_f32(cx, op, false);
    else lw_f8_pk_sw(cx, op, false);
}
static void cvt_scaled_to(lw_ctx *cx, const rk_op *op) { pk_to_f32(cx, op, true); }
static void cvt_scaled_from(lw_ctx *cx, const rk_op *op) { pk_from_f32(cx, op, true); }

typedef void (*cvt_fn)(lw_ctx *cx, const rk_op *op);
static const cvt_fn cvt_fns[RK_OP__COUNT] = {
    [RK_OP_CVT_FP8_TO_F32] = cvt_to_f32, [RK_OP_CVT_BF8_TO_F32] = cvt_to_f32,
    [RK_OP_CVT_F32_TO_FP8] = cvt_from_f32, [RK_OP_CVT_F32_TO_BF8] = cvt_from_f32,
    [RK_OP_CVT_PK_F32_FP8X4] = cvt_pk_to, [RK_OP_CVT_PK_F32_BF8X4] = cvt_pk_to,
    [RK_OP_CVT_PK_FP8_F32X4] = cvt_pk_from, [RK_OP_CVT_PK_BF8_F32X4] = cvt_pk_from,
    [RK_OP_CVT_SCALEF32_PK_F32_FP8] = cvt_scaled_to, [RK_OP_CVT_SCALEF32_PK_F32_BF8] = cvt_scaled_to,
    [RK_OP_CVT_SCALEF32_PK_FP8_F32] = cvt_scaled_from, [RK_OP_CVT_SCALEF32_PK_BF8_F32] = cvt_scaled_from,
};

void lw_amd_cvt(lw_ctx *cx, const rk_op *op) {
    RK_ASSERT(op->code > RK_OP_INVALID && op->code < RK_OP__COUNT && cvt_fns[op->code],
              "lw_amd_cvt called for an op outside the fp8 conversion family");
    cvt_fns[op->code](cx, op);
}
