/* rocke — elementwise unary/binary ops over N elements: f32 math, one RNE
 * rounding to out_dtype. A grid-stride loop over block tiles of
 * block_size * unroll vectors: each thread issues `unroll` independent 16-byte
 * loads per operand before using them; only the last tile takes the tail path.
 * sigmoid and tanh are built from exp2 (no tanh intrinsic). Layer: kernels. */
#include <math.h>

#include "kern_int.h"


static const char *const op_names[] = {"add", "sub", "mul", "div", "max", "min", "copy", "neg", "abs",
                                       "relu", "silu", "gelu_tanh", "exp2", NULL};
const char *rk_ew_op_name(rk_ew_op op) { return (unsigned)op < RK_EW__COUNT ? op_names[op] : "?"; }
bool rk_ew_op_is_binary(rk_ew_op op) { return op <= RK_EW_MIN; }

static const rk_knob knobs[] = {
    KN_ENUM("op", "", u.ew.op, op_names, false, "operation"),
    KN_DTYPE("dtype", "", u.ew.dtype, "input element type"),
    KN_DTYPE("out_dtype", "o", u.ew.out_dtype, "output element type"),
    KN_U32("block_size", "b", u.ew.block_size, kn_legal_block, true, "threads per block"),
    KN_U32("vec", "v", u.ew.vec, kn_legal_vec, true, "elements per vector access (<= 16 bytes)"),
    KN_U32("unroll", "u", u.ew.unroll, kn_legal_unroll, true, "vectors per thread per tile (loads in flight)"),
    KN_ENUM("tail", "t", u.ew.tail, kn_tail_names, true, "tail handling: masked or buffer views"),
};
enum { K_OP, K_DT, K_OUT, K_BLOCK, K_VEC, K_UNROLL, K_TAIL };

static void defaults(rk_instance *in) {
    in->u.ew = (rk_elementwise_spec){.op = RK_EW_ADD, .dtype = RK_S_F16, .out_dtype = RK_S_F16, .block_size = 256,
                                     .vec = 8, .unroll = 4, .tail = RK_TAIL_BUFFER};
}

static uint32_t wide_bytes(const rk_elementwise_spec *s) {
    uint32_t a = rk_tile_elem_bytes(s->dtype), b = rk_tile_elem_bytes(s->out_dtype);
    return a > b ? a : b;
}

/* one dimension: the element count; N is the kernel's i32 parameter */
static const rk_dim_decl dims[] = {{"N", 4096u * 4096u, "elements"}};
static const rk_scalar_decl scalars[] = {{"N", RK_S_I32, RK_SC_DIM, "N", NULL, 0, "elements"}};

static void tune(rk_instance *in, const rk_target *t, const rk_shape *sh, uint64_t locked) {
    const uint64_t N = sh->dim[0];
    rk_elementwise_spec *s = &in->u.ew;
    if (!(locked >> K_VEC & 1)) s->vec = 16 / wide_bytes(s);
    if (!(locked >> K_BLOCK & 1)) s->block_size = 256;
    if (!(locked >> K_UNROLL & 1)) {
        s->unroll = 4;
        /* small N: fewer vectors per thread so more blocks share the work */
        while (s->unroll > 1 && (uint64_t)s->block_size * s->vec * s->unroll * 512 > N) s->unroll /= 2;
    }
    if (!(locked >> K_TAIL & 1)) s->tail = rk_tile_default_tail(t);
}

static rk_status validate(const rk_instance *in, const rk_target *t) {
    const rk_elementwise_spec *s = &in->u.ew;
    if (s->block_size > t->max_workgroup)
        return rk_fail(RK_ERR_INVALID, "knob 'block_size' must be at most %u on %s, got %u", t->max_workgroup,
                       t->name, s->block_size);
    if (s->vec * wide_bytes(s) > 16)
        return rk_fail(RK_ERR_INVALID, "knob 'vec' must be at most %u for %u-byte elements (16-byte accesses), got %u",
                       16 / wide_bytes(s), wide_bytes(s), s->vec);
    return RK_OK;
}

static rk_status check_shape(const rk_instance *in, const rk_shape *sh) {
    const rk_elementwise_spec *s = &in->u.ew;
    const uint64_t N = sh->dim[0];
    uint64_t tile = (uint64_t)s->block_size * s->vec * s->unroll;
    if (N + tile > INT32_MAX || N * 4 > INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "shape N=%llu: elementwise kernels take fewer than 2^29 elements",
                       (unsigned long long)N);
    return RK_OK;
}

static void signature(const rk_instance *in, rk_ksig *s) {
    const rk_elementwise_spec *e = &in->u.ew;
    kn_sig_add(s, "A", true, e->dtype, RK_KP_IN, "N");
    if (rk_ew_op_is_binary(e->op)) kn_sig_add(s, "B", true, e->dtype, RK_KP_IN, "N");
    kn_sig_add(s, "C", true, e->out_dtype, RK_KP_OUT, "N");
    kn_sig_add(s, "N", false, RK_S_I32, RK_KP_SCALAR, NULL);
}

/* grid x = ceil(N / (block_size * vec * unroll)) */
static void geometry(const rk_instance *in, rk_launch_geom *g) {
    const rk_elementwise_spec *s = &in->u.ew;
    kn_geom_cdiv_dim(g, 0, (uint64_t)s->block_size * s->vec * s->unroll);
    kn_geom_axis(g);
    g->block[0] = s->block_size;
}

static void cost(const rk_instance *in, const rk_shape *sh, double *bytes, double *flops) {
    const double N = (double)sh->dim[0];
    const rk_elementwise_spec *s = &in->u.ew;
    double ops = rk_ew_op_is_binary(s->op) ? 2 : 1;
    *bytes = N * (ops * rk_tile_elem_bytes(s->dtype) + rk_tile_elem_bytes(s->out_dtype));
    *flops = N;
}

static void input_range(const rk_instance *in, const rk_kparam *kp, double *lo, double *hi, double *away) {
    rk_ew_op op = in->u.ew.op;
    if (op == RK_EW_EXP2) { *lo = -8; *hi = 8; }
    if (op == RK_EW_SILU || op == RK_EW_GELU_TANH) { *lo = -6; *hi = 6; }
    if (op == RK_EW_DIV && !strcmp(kp->name, "B")) *away = 0.5;
}

/* ---- f32 math ------------------------------------------------------------------------ */
static rk_value unary(rk_kernel *k, rk_value x, void *ud) {
    rk_ew_op op = *(const rk_ew_op *)ud;
    switch (op) {
    case RK_EW_NEG: return rk_build_fneg(k, x);
    case RK_EW_ABS: return rk_build_fabs(k, x);
    /* the activations every family shares (tile_epilogue.c) */
    case RK_EW_RELU: return rk_tile_act(k, RK_ACT_RELU, x);
    case RK_EW_SILU: return rk_tile_act(k, RK_ACT_SILU, x);
    case RK_EW_GELU_TANH: return rk_tile_act(k, RK_ACT_GELU_TANH, x);
    case RK_EW_EXP2: return rk_build_exp2(k, x);
    case RK_EW_COPY: return x;
    case RK_EW_ADD: case RK_EW_SUB: case RK_EW_MUL: case RK_EW_DIV: case RK_EW_MAX: case RK_EW_MIN:
    case RK_EW__COUNT: break;
    }
    rk_bug("elementwise: binary op in unary()");
}

static rk_value binary(rk_kernel *k, rk_value a, rk_value b, void *ud) {
    rk_ew_op op = *(const rk_ew_op *)ud;
    switch (op) {
    case RK_EW_ADD: return rk_build_fadd(k, a, b);
    case RK_EW_SUB: return rk_build_fsub(k, a, b);
    case RK_EW_MUL: return rk_build_fmul(k, a, b);
    case RK_EW_DIV: return rk_build_fdiv(k, a, b);
    case RK_EW_MAX: return rk_build_fmax(k, a, b);
    case RK_EW_MIN: return rk_build_fmin(k, a, b);
    case RK_EW_COPY: case RK_EW_NEG: case RK_EW_ABS: case RK_EW_RELU: case RK_EW_SILU: case RK_EW_GELU_TANH:
    case RK_EW_EXP2: case RK_EW__COUNT: break;
    }
    rk_bug("elementwise: unary op in binary()");
}

static rk_value apply(rk_kernel *k, const rk_elementwise_spec *s, rk_value a, rk_value b) {
    rk_ew_op op = s->op;
    if (!rk_ew_op_is_binary(op)) return rk_tile_map(k, a, unary, &op);
    bool vec = s->vec > 1;
    switch (op) {
    case RK_EW_ADD: if (vec) return rk_build_vadd(k, a, b); break;
    case RK_EW_SUB: if (vec) return rk_build_vsub(k, a, b); break;
    case RK_EW_MUL: if (vec) return rk_build_vmul(k, a, b); break;
    case RK_EW_DIV: case RK_EW_MAX: case RK_EW_MIN:     /* per element: IEEE div, maxNum/minNum */
    case RK_EW_COPY: case RK_EW_NEG: case RK_EW_ABS: case RK_EW_RELU: case RK_EW_SILU: case RK_EW_GELU_TANH:
    case RK_EW_EXP2: case RK_EW__COUNT: break;
    }
    return rk_tile_map2(k, a, b, binary, &op);
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    (void)t;
    const rk_elementwise_spec *s = &in->u.ew;
    bool bin = rk_ew_op_is_binary(s->op);
    rk_value A = p[0], B = bin ? p[1] : (rk_value){0}, C = p[bin ? 2 : 1], N = p[bin ? 3 : 2];
    uint32_t u = s->unroll, vec = s->vec, tile = s->block_size * vec * u;
    rk_value zero = kn_i32(k, 0), yes = rk_const_bool(k, true);
    rk_tile_row ar = rk_tile_row_view(k, A, s->dtype, zero, zero, N, yes, vec, s->tail);
    rk_tile_row br = {0};
    if (bin) br = rk_tile_row_view(k, B, s->dtype, zero, zero, N, yes, vec, s->tail);
    rk_tile_row cr = rk_tile_row_view(k, C, s->out_dtype, zero, zero, N, yes, vec, s->tail);
    /* tiles = (N - 1) / tile + 1 without overflow near 2^31 */
    rk_value nm1 = rk_build_sub(k, N, kn_i32(k, 1));
    rk_value one = kn_i32(k, 1);
    rk_value ntiles = rk_build_add(k, rk_build_udiv(k, nm1, kn_i32(k, (int32_t)tile)), one);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value lane_off = rk_build_mul(k, tid, kn_i32(k, (int32_t)vec));
    rk_value ti = rk_tile_grid_loop_begin(k, ntiles);
    rk_value base = rk_build_add(k, rk_build_mul(k, ti, kn_i32(k, (int32_t)tile)), lane_off);
    rk_value offs[8], a[8], b[8], c[8];
    for (uint32_t i = 0; i < u; i++)
        offs[i] = i ? rk_build_add(k, base, kn_i32(k, (int32_t)(i * s->block_size * vec))) : base;
    bool raw_copy = s->op == RK_EW_COPY && s->dtype == s->out_dtype;
    if (raw_copy) {
        rk_tile_row_load(k, &ar, offs, u, 0.0, a);
        rk_tile_row_store(k, &cr, offs, u, a);
    } else {
        rk_tile_row_load_f32(k, &ar, offs, u, 0.0, a);
        if (bin) rk_tile_row_load_f32(k, &br, offs, u, 1.0, b);   /* 1: no 0/0 in padding lanes */
        for (uint32_t i = 0; i < u; i++) c[i] = apply(k, s, a[i], bin ? b[i] : (rk_value){0});
        rk_tile_row_store_f32(k, &cr, offs, u, c);
    }
    rk_tile_loop_end(k);
}

const kn_family kn_elementwise = {
    .name = "elementwise", .knobs = knobs, .nknobs = RK_COUNTOF(knobs), .dims = dims, .ndims = 1,
    .scalars = scalars, .nscalars = 1, .defaults = defaults, .tune = tune, .validate = validate,
    .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build, .cost = cost,
    .reference = kn_elementwise_reference, .input_range = input_range,
    .shared_problem = true,
};
