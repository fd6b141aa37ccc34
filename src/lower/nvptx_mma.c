/* rocke — NVPTX matrix atoms and 8-bit float conversions. Layer: lower.
 *
 * mma.sync: tile.mma's warp atoms (include/rocke/atoms.def) map to
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
 * the exact integer sequences of lower_fp8.c run instead. */
#include <stdio.h>

#include "nvptx_int.h"

static rk_type vt(const lw_ctx *cx, rk_value v) { return rk_value_type(cx->k, v); }

/* ---- mma.sync ---------------------------------------------------------------------------------------- */
/* The intrinsic (llvm.nvvm.mma.<instr>) and the register packing (<2 x half>
 * pairs or i32 words) are columns of the atom catalog (include/rocke/atoms.def);
 * a fragment of len elements of b bytes fills len * b / 4 registers. */
static uint32_t regs_for(const rk_mma_atom *a, rk_frag f) {
    rk_scalar e = f == RK_FRAG_A ? a->a_elem : a->b_elem;
    return rk_mma_atom_len(a, f) * (rk_scalar_bits(e) / 8) / 4;
}

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

static void warpgroup_atom(lw_ctx *cx, const rk_op *op, const rk_mma_atom *a);

void lw_nv_mma(lw_ctx *cx, const rk_op *op) {
    const char *id = lw_attr_str(op, "op_id", "");
    const rk_mma_atom *atom = rk_mma_atom_find(id);
    if (atom && atom->unit == RK_ATOM_UNIT_WGMMA) {
        warpgroup_atom(cx, op, atom);
        return;
    }
    if (!atom || atom->unit != RK_ATOM_UNIT_MMA_SYNC) {
        /* the verifier admits only this target's atoms: reaching here is a
         * rocke bug; refuse it rather than abort the hosting process */
        lw_error(cx, op, RK_ERR_UNSUPPORTED, "matrix atom '%s' has no NVPTX lowering", id);
        return;
    }
    bool half_pairs = atom->pack == RK_ATOM_PACK_HALF2;
    rk_buf args, params;
    rk_buf_init(&args);
    rk_buf_init(&params);
    regs_of(cx, op->in[0], half_pairs, regs_for(atom, RK_FRAG_A), &args, &params);
    regs_of(cx, op->in[1], half_pairs, regs_for(atom, RK_FRAG_B), &args, &params);
    for (uint32_t i = 0; i < 4; i++) {
        const char *c = lw_tmp(cx, "acc");
        lw_ins(cx, "%s = extractelement %V, i32 %u", c, op->in[2], i);
        lw_fmt(cx, &args, ", float %s", c);
        rk_buf_puts(&params, ", float");
    }
    const char *st = "{ float, float, float, float }", *d = lw_tmp(cx, "mma"), *acc = "poison";
    if (!lw_seen(cx, NV_D_MMA, (uint32_t)atom->id, 0))
        lw_declare(cx, NV_D_MMA, lw_printf(cx, "declare %s @llvm.nvvm.mma.%s(%s)", st, atom->instr, rk_buf_cstr(&params)));
    lw_ins(cx, "%s = call %s @llvm.nvvm.mma.%s(%s)", d, st, atom->instr, rk_buf_cstr(&args));
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

static void cvt_pk_to_f32(lw_ctx *cx, const rk_op *op) {
    if (!has_hw(cx)) { lw_f8_pk_sw(cx, op, true); return; }
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
    if (!has_hw(cx)) { lw_f8_pk_sw(cx, op, false); return; }
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
/* One inline-asm statement (LLVM 22 has no wgmma.mma_async intrinsic):
 * outputs $0..$(n-1) are the accumulators, tied to the matching inputs;
 * `ins` are the other inputs (texts "ty value") whose constraints are `cons`;
 * the template's body uses $n.. for them. */
static void wgmma_asm(lw_ctx *cx, const char *into, uint32_t nacc, const char *const *acc, const char *body,
                      const char *cons, const char *ins) {
    rk_buf c, a, st;
    rk_buf_init(&c);
    rk_buf_init(&a);
    rk_buf_init(&st);
    for (uint32_t i = 0; i < nacc; i++) {
        rk_buf_printf(&st, "%sfloat", i ? ", " : "{ ");
        rk_buf_printf(&c, "%s=f", i ? "," : "");
    }
    rk_buf_puts(&st, " }");
    rk_buf_printf(&c, ",%s", cons);
    for (uint32_t i = 0; i < nacc; i++) rk_buf_printf(&c, ",%u", i);
    rk_buf_printf(&a, "%s", ins);
    for (uint32_t i = 0; i < nacc; i++) rk_buf_printf(&a, ", float %s", acc[i]);
    lw_ins(cx, "%s = call %s asm sideeffect \"%s\", \"%s\"(%s)", into, rk_buf_cstr(&st), body, rk_buf_cstr(&c),
           rk_buf_cstr(&a));
    rk_buf_free(&c);
    rk_buf_free(&a);
    rk_buf_free(&st);
}

/* "{$0, $1, ...}" over n operands from `first` */
static const char *reg_list(lw_ctx *cx, uint32_t first, uint32_t n) {
    rk_buf b;
    rk_buf_init(&b);
    rk_buf_putc(&b, '{');
    for (uint32_t i = 0; i < n; i++) rk_buf_printf(&b, "%s$%u", i ? ", " : "", first + i);
    rk_buf_putc(&b, '}');
    const char *s = lw_printf(cx, "%s", rk_buf_cstr(&b));
    rk_buf_free(&b);
    return s;
}

/* The elements of a vector value as texts. */
static const char **elements(lw_ctx *cx, rk_value v, uint32_t n) {
    const char **e = rk_arena_alloc(&cx->arena, n * sizeof *e);
    if (!e) { lw_error(cx, NULL, RK_ERR_NOMEM, "out of memory"); return NULL; }
    for (uint32_t i = 0; i < n; i++) e[i] = elt(cx, v, i);
    return e;
}

/* res (a float vector) from the n floats of an asm result struct */
static void from_struct(lw_ctx *cx, rk_value res, const char *sv, uint32_t n) {
    const char *acc = "poison";
    rk_buf b;
    rk_buf_init(&b);
    for (uint32_t i = 0; i < n; i++) rk_buf_printf(&b, "%sfloat", i ? ", " : "{ ");
    rk_buf_puts(&b, " }");
    const char *sty = lw_printf(cx, "%s", rk_buf_cstr(&b));
    rk_buf_free(&b);
    for (uint32_t i = 0; i < n; i++) {
        const char *e = lw_tmp(cx, "d");
        lw_ins(cx, "%s = extractvalue %s %s, %u", e, sty, sv, i);
        if (i + 1 == n) {
            lw_ins(cx, "%v = insertelement %t %s, float %s, i32 %u", res, res, acc, e, i);
        } else {
            const char *x = lw_tmp(cx, "ins");
            lw_ins(cx, "%s = insertelement %t %s, float %s, i32 %u", x, res, acc, e, i);
            acc = x;
        }
    }
}

/* A register fragment v (8 16-bit values) as the four "i32 %x" operands of the asm, into ins */
static void a_words(lw_ctx *cx, rk_value v, rk_buf *ins) {
    const char *w = lw_tmp(cx, "wa");
    lw_ins(cx, "%s = bitcast %V to <4 x i32>", w, v);
    for (uint32_t i = 0; i < 4; i++) {
        const char *x = lw_tmp(cx, "wa");
        lw_ins(cx, "%s = extractelement <4 x i32> %s, i32 %u", x, w, i);
        rk_buf_printf(ins, "%si32 %s", i ? ", " : "", x);
    }
}

/* tile.wgmma_rs: wgmma.mma_async with A from registers (the fragment's 8
 * 16-bit values as 4 b32) and B through its descriptor; with register A the
 * instruction has no trans-a immediate */
static void wgmma_rs_op(lw_ctx *cx, const rk_op *op) {
    int64_t nn = lw_attr_int(op, "n", 8);
    uint32_t k = (uint32_t)nn / 2;
    const char *ty = lw_attr_str(op, "dtype", "f16");
    const char *body = lw_printf(cx, "{\\0A.reg .pred p;\\0Asetp.ne.b32 p, $%u, 0;\\0A"
                                     "wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s %s, %s, $%u, p, 1, 1, %d;\\0A}",
                                 k + 5, (long long)nn, ty, ty, reg_list(cx, 0, k), reg_list(cx, k, 4), k + 4,
                                 lw_attr_bool(op, "trans_b", false));
    rk_buf ins;
    rk_buf_init(&ins);
    a_words(cx, op->in[1], &ins);
    rk_buf_printf(&ins, ", i64 %s, i32 %d", lw_val(cx, op->in[2]), lw_attr_bool(op, "scale_d", true) ? 1 : 0);
    const char **acc = elements(cx, op->in[0], k), *sv = lw_tmp(cx, "wgmma");
    if (acc) {
        wgmma_asm(cx, sv, k, acc, body, "r,r,r,r,l,r", rk_buf_cstr(&ins));
        from_struct(cx, op->out[0], sv, k);
    }
    rk_buf_free(&ins);
}

/* The warpgroup atoms (tile.mma, 128 lanes): the A fragment stays in
 * registers (the catalog's A map is wgmma's register-A layout, mma.sync's
 * m16n8k16 A per warp); each thread stores its B element (k = l & 15,
 * n = l >> 4) into its warpgroup's 256-byte K-major staging tile (core
 * matrices of 8 n-rows x 16 bytes: LBO 128 to the next 8 k, SBO 256), fences
 * it into the async proxy and meets its warpgroup on named barrier
 * 8 + warpgroup; one wgmma then runs synchronously (fence, issue, commit,
 * wait 0 in one statement) with D tied to C. */
static void warpgroup_atom(lw_ctx *cx, const rk_op *op, const rk_mma_atom *a) {
    uint32_t groups = (uint32_t)((rk_kernel_max_workgroup_size(cx->k) + 127) / 128), bytes = 256 * groups;
    if ((uint64_t)cx->pool_bytes + bytes > cx->t->lds_bytes) {
        lw_error(cx, op, RK_ERR_UNSUPPORTED, "warpgroup atom '%s' stages %u bytes of shared memory beside the kernel's %u; "
                 "%s has %u", a->op_id, bytes, cx->pool_bytes, cx->t->name, cx->t->lds_bytes);
        return;
    }
    const char *stage = lw_printf(cx, "@wgmma_stage.%s", rk_kernel_name(cx->k));
    lw_declare(cx, NV_D_STAGE, lw_printf(cx, "%s = internal unnamed_addr addrspace(3) global [%u x i8] poison, align 128",
                                         stage, bytes));
    const char *lin = lw_nv_linear_tid(cx), *wg = lw_tmp(cx, "wg"), *l = lw_tmp(cx, "wl"), *k = lw_tmp(cx, "wk"),
               *n = lw_tmp(cx, "wn"), *kh = lw_tmp(cx, "wkh"), *kl = lw_tmp(cx, "wkl"), *o1 = lw_tmp(cx, "wo"),
               *o2 = lw_tmp(cx, "wo"), *o3 = lw_tmp(cx, "wo"), *o4 = lw_tmp(cx, "wo"), *s1 = lw_tmp(cx, "wo"),
               *s2 = lw_tmp(cx, "wo"), *off = lw_tmp(cx, "wo"), *tile = lw_tmp(cx, "wtile"), *p = lw_tmp(cx, "wp");
    lw_ins(cx, "%s = lshr i32 %s, 7", wg, lin);
    lw_ins(cx, "%s = and i32 %s, 127", l, lin);
    lw_ins(cx, "%s = and i32 %s, 15", k, l);
    lw_ins(cx, "%s = lshr i32 %s, 4", n, l);
    lw_ins(cx, "%s = lshr i32 %s, 3", kh, k);
    lw_ins(cx, "%s = and i32 %s, 7", kl, k);
    lw_ins(cx, "%s = shl i32 %s, 8", o1, wg);
    lw_ins(cx, "%s = shl i32 %s, 7", o2, kh);
    lw_ins(cx, "%s = shl i32 %s, 4", o3, n);
    lw_ins(cx, "%s = shl i32 %s, 1", o4, kl);
    lw_ins(cx, "%s = or i32 %s, %s", s1, o2, o3);
    lw_ins(cx, "%s = or i32 %s, %s", s2, s1, o4);
    lw_ins(cx, "%s = add i32 %s, %s", off, o1, s2);
    lw_ins(cx, "%s = getelementptr inbounds i8, ptr addrspace(3) %s, i32 %s", tile, stage, o1);
    lw_ins(cx, "%s = getelementptr inbounds i8, ptr addrspace(3) %s, i32 %s", p, stage, off);
    lw_ins(cx, "store %V, ptr addrspace(3) %s, align 2", op->in[1], p);
    lw_ins(cx, "call void asm sideeffect \"fence.proxy.async.shared::cta;\", \"~{memory}\"()");
    const char *bar = lw_tmp(cx, "wbar");
    lw_ins(cx, "%s = add i32 %s, %d", bar, wg, NV_ATOM_BARRIER0);
    lw_nv_barrier(cx, bar, "128");
    const char *addr = lw_tmp(cx, "waddr"), *sh = lw_tmp(cx, "wsh"), *lo = lw_tmp(cx, "wlo"), *desc = lw_tmp(cx, "wdesc");
    lw_ins(cx, "%s = ptrtoint ptr addrspace(3) %s to i64", addr, tile);
    lw_ins(cx, "%s = lshr i64 %s, 4", sh, addr);
    lw_ins(cx, "%s = and i64 %s, 16383", lo, sh);
    lw_ins(cx, "%s = or i64 %s, %l", desc, lo, (int64_t)((128 >> 4) << 16 | (int64_t)(256 >> 4) << 32));
    rk_buf ins;
    rk_buf_init(&ins);
    a_words(cx, op->in[0], &ins);
    rk_buf_printf(&ins, ", i64 %s, i32 1", desc);
    const char *body = lw_printf(cx, "{\\0A.reg .pred p;\\0Asetp.ne.b32 p, $9, 0;\\0Awgmma.fence.sync.aligned;\\0A"
                                     "wgmma.mma_async.sync.aligned.%s %s, %s, $8, p, 1, 1, 0;\\0A"
                                     "wgmma.commit_group.sync.aligned;\\0Awgmma.wait_group.sync.aligned 0;\\0A}",
                                 a->instr, reg_list(cx, 0, 4), reg_list(cx, 4, 4));
    const char **acc = elements(cx, op->in[2], 4), *sv = lw_tmp(cx, "wgmma");
    if (acc) wgmma_asm(cx, sv, 4, acc, body, "r,r,r,r,l,r", rk_buf_cstr(&ins));
    rk_buf_free(&ins);
    if (acc) from_struct(cx, op->out[0], sv, 4);
}

/* tile.wgmma_desc: the descriptor's constant fields are folded here */
static void wgmma_desc(lw_ctx *cx, const rk_op *op) {
    int64_t lbo = lw_attr_int(op, "lbo", 0), sbo = lw_attr_int(op, "sbo", 0), sw = lw_attr_int(op, "swizzle", 0);
    int64_t mode = sw == 128 ? 1 : sw == 64 ? 2 : sw == 32 ? 3 : 0;
    int64_t k = ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | mode << 62;
    const char *p = lw_nv_smem_elem(cx, op->in[0], op->in[1]), *a = lw_tmp(cx, "daddr"), *s = lw_tmp(cx, "dsh"),
               *m = lw_tmp(cx, "dlo");
    lw_ins(cx, "%s = ptrtoint ptr addrspace(3) %s to i64", a, p);
    lw_ins(cx, "%s = lshr i64 %s, 4", s, a);
    lw_ins(cx, "%s = and i64 %s, 16383", m, s);
    lw_ins(cx, "%v = or i64 %s, %l", op->out[0], m, k);
}

/* tile.wgmma: wgmma.mma_async on two descriptors; the result stays in
 * flight until tile.wgmma_wait_group hands it on. The 8-bit types run
 * m64nNk32 and take no transpose immediates (K-major only). */
static void wgmma_op(lw_ctx *cx, const rk_op *op) {
    int64_t nn = lw_attr_int(op, "n", 8);
    uint32_t k = (uint32_t)nn / 2;
    const char *ty = lw_attr_str(op, "dtype", "f16");
    bool f8 = !strcmp(ty, "e4m3") || !strcmp(ty, "e5m2");
    const char *trans = f8 ? "" : lw_printf(cx, ", %d, %d", lw_attr_bool(op, "trans_a", false),
                                             lw_attr_bool(op, "trans_b", false));
    const char *body = lw_printf(cx, "{\\0A.reg .pred p;\\0Asetp.ne.b32 p, $%u, 0;\\0A"
                                     "wgmma.mma_async.sync.aligned.m64n%lldk%d.f32.%s.%s %s, $%u, $%u, p, 1, 1%s;\\0A}",
                                 k + 2, (long long)nn, f8 ? 32 : 16, ty, ty, reg_list(cx, 0, k), k, k + 1, trans);
    const char *ins = lw_printf(cx, "i64 %s, i64 %s, i32 %d", lw_val(cx, op->in[1]), lw_val(cx, op->in[2]),
                                lw_attr_bool(op, "scale_d", true) ? 1 : 0);
    const char **acc = elements(cx, op->in[0], k), *sv = lw_tmp(cx, "wgmma");
    if (!acc) return;
    wgmma_asm(cx, sv, k, acc, body, "l,l,r", ins);
    from_struct(cx, op->out[0], sv, k);
}

/* tile.wgmma_wait_group: the wait, with every accumulator passed through it
 * ("+f") so no read of a result can be scheduled before it */
static void wgmma_wait(lw_ctx *cx, const rk_op *op) {
    int64_t n = lw_attr_int(op, "n", 0);
    if (!op->nin) {
        lw_declare(cx, NV_D_WGMMA, "declare void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64)");
        lw_ins(cx, "call void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64 %l)", n);
        return;
    }
    uint32_t total = 0;
    for (uint32_t i = 0; i < op->nin; i++) total += rk_type_count(cx->k, vt(cx, op->in[i]));
    const char **acc = rk_arena_alloc(&cx->arena, total * sizeof *acc);
    if (!acc) { lw_error(cx, op, RK_ERR_NOMEM, "out of memory"); return; }
    uint32_t at = 0;
    for (uint32_t i = 0; i < op->nin; i++) {
        rk_value v = op->in[i];
        if (rk_type_kind_of(cx->k, vt(cx, v)) != RK_TK_VEC) { acc[at++] = lw_val(cx, v); continue; }
        for (uint32_t j = 0; j < rk_type_count(cx->k, vt(cx, v)); j++) acc[at++] = elt(cx, v, j);
    }
    const char *sv = lw_tmp(cx, "wait"), *body = lw_printf(cx, "wgmma.wait_group.sync.aligned %lld;", (long long)n);
    /* no other inputs: the constraint list is the outputs and the ties */
    rk_buf st, c, a;
    rk_buf_init(&st);
    rk_buf_init(&c);
    rk_buf_init(&a);
    for (uint32_t i = 0; i < total; i++) {
        rk_buf_printf(&st, "%sfloat", i ? ", " : "{ ");
        rk_buf_printf(&c, "%s=f", i ? "," : "");
        rk_buf_printf(&a, "%sfloat %s", i ? ", " : "", acc[i]);
    }
    rk_buf_puts(&st, " }");
    for (uint32_t i = 0; i < total; i++) rk_buf_printf(&c, ",%u", i);
    lw_ins(cx, "%s = call %s asm sideeffect \"%s\", \"%s,~{memory}\"(%s)", sv, rk_buf_cstr(&st), body, rk_buf_cstr(&c),
           rk_buf_cstr(&a));
    at = 0;
    for (uint32_t i = 0; i < op->nout; i++) {
        rk_value r = op->out[i];
        if (rk_type_kind_of(cx->k, vt(cx, r)) != RK_TK_VEC) {
            lw_ins(cx, "%v = extractvalue %s %s, %u", r, rk_buf_cstr(&st), sv, at++);
            continue;
        }
        uint32_t m = rk_type_count(cx->k, vt(cx, r));
        const char *accv = "poison";
        for (uint32_t j = 0; j < m; j++) {
            const char *e = lw_tmp(cx, "d");
            lw_ins(cx, "%s = extractvalue %s %s, %u", e, rk_buf_cstr(&st), sv, at++);
            if (j + 1 == m) {
                lw_ins(cx, "%v = insertelement %t %s, float %s, i32 %u", r, r, accv, e, j);
            } else {
                const char *x = lw_tmp(cx, "ins");
                lw_ins(cx, "%s = insertelement %t %s, float %s, i32 %u", x, r, accv, e, j);
                accv = x;
            }
        }
    }
    rk_buf_free(&st);
    rk_buf_free(&c);
    rk_buf_free(&a);
}

static void nvvm0(lw_ctx *cx, const char *name) {
    lw_declare(cx, NV_D_WGMMA, lw_printf(cx, "declare void @llvm.nvvm.%s()", name));
    lw_ins(cx, "call void @llvm.nvvm.%s()", name);
}

void lw_nv_wgmma(lw_ctx *cx, const rk_op *op) {
    if (op->code == RK_OP_WGMMA_DESC) {
        wgmma_desc(cx, op);
    } else if (op->code == RK_OP_WGMMA) {
        wgmma_op(cx, op);
    } else if (op->code == RK_OP_WGMMA_RS) {
        wgmma_rs_op(cx, op);
    } else if (op->code == RK_OP_WGMMA_FENCE) {
        nvvm0(cx, "wgmma.fence.sync.aligned");
    } else if (op->code == RK_OP_WGMMA_COMMIT_GROUP) {
        nvvm0(cx, "wgmma.commit_group.sync.aligned");
    } else if (op->code == RK_OP_SETMAXNREG) {
        const char *act = lw_attr_str(op, "action", "dec");
        lw_declare(cx, NV_D_WGMMA, lw_printf(cx, "declare void @llvm.nvvm.setmaxnreg.%s.sync.aligned.u32(i32 immarg)", act));
        lw_ins(cx, "call void @llvm.nvvm.setmaxnreg.%s.sync.aligned.u32(i32 %l)", act, lw_attr_int(op, "regs", 24));
    } else {
        RK_ASSERT(op->code == RK_OP_WGMMA_WAIT_GROUP, "lw_nv_wgmma called for an op outside the wgmma family");
        wgmma_wait(cx, op);
    }
}
