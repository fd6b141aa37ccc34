/* rocke tests — a sample kernel for every op of the table (see op_samples.h).
 * Generic shapes come from the op's rule and sig; ops with structure (memory,
 * LDS, buffers, async copies, atoms, control flow) get a hand-made sample.
 * Layer: tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir_int.h"
#include "support/op_samples.h"

typedef struct smp {
    rk_kernel *k;
    rk_opcode code;
    bool nv;                 /* NVIDIA target */
    rk_type fp8, bf8;        /* the target's 8-bit float dialect */
    rk_value idx;            /* gpu.thread_id x */
    uint32_t nin, nout;      /* parameter counters */
    bool failed;             /* no sample shape for this op */
} smp;

/* ---- small helpers ---------------------------------------------------------------- */
static rk_type vec(smp *s, rk_type e, uint32_t n) { return rk_type_vec(s->k, e, n); }
static rk_value ci32(smp *s, int32_t v) { return rk_const_i32(s->k, v); }

static rk_value param_ptr(smp *s, rk_type elem, bool in) {
    char name[16];
    snprintf(name, sizeof name, "%s%u", in ? "in" : "out", in ? s->nin++ : s->nout++);
    rk_param_abi abi = {.noalias = true, .readonly = in, .writeonly = !in};
    return rk_add_param(s->k, name, rk_type_ptr(s->k, elem, RK_AS_GLOBAL), &abi);
}

/* idx * m, (idx & mask) * m */
static rk_value scaled(smp *s, rk_value i, int32_t m) {
    if (m == 1) return i;
    rk_value c = ci32(s, m);
    return rk_build_mul(s->k, i, c);
}
static rk_value masked(smp *s, int32_t mask, int32_t m) {
    rk_value c = ci32(s, mask);
    rk_value a = rk_build_and(s->k, s->idx, c);
    return scaled(s, a, m);
}

/* A value of type t that differs per thread. */
static rk_value input(smp *s, rk_type t) {
    rk_kernel *k = s->k;
    switch (rk_type_kind_of(k, t)) {
    case RK_TK_SCALAR: {
        if (rk_type_eq(t, RK_T_I1)) {
            rk_value w = input(s, RK_T_I32);
            return rk_build_trunc(k, w, RK_T_I1);
        }
        rk_value p = param_ptr(s, t, true);
        return rk_load_global(k, p, s->idx, 1);
    }
    case RK_TK_VEC: {
        rk_type e = rk_type_elem(k, t);
        uint32_t n = rk_type_count(k, t);
        if (rk_type_eq(e, RK_T_I1)) {
            rk_type wt = vec(s, RK_T_I32, n);
            rk_value a = input(s, wt);
            rk_value b = input(s, wt);
            return rk_build_vcmp(k, "lt", a, b);
        }
        rk_value p = param_ptr(s, e, true);
        rk_value i = scaled(s, s->idx, (int32_t)n);
        return rk_load_global(k, p, i, n);
    }
    case RK_TK_RSRC: {
        rk_value p = param_ptr(s, RK_T_F32, true);
        rk_value n = ci32(s, 4096);
        return rk_build_buffer_rsrc(k, p, n);
    }
    case RK_TK_SMEM:
        return rk_build_smem_alloc(k, rk_type_elem(k, t), rk_type_dims(k, t), rk_type_rank(k, t));
    case RK_TK_PTR: {
        char name[16];
        snprintf(name, sizeof name, "in%u", s->nin++);
        return rk_add_param(k, name, t, NULL);
    }
    case RK_TK_NONE:
        break;
    }
    s->failed = true;
    return (rk_value){0};
}

/* Store v through a fresh out pointer at the thread's index. */
static void output(smp *s, rk_value v) {
    rk_kernel *k = s->k;
    if (!ir_live(k)) return;
    rk_type t = rk_value_type(k, v);
    if (rk_type_eq(t, RK_T_I1)) {
        output(s, rk_build_zext(k, v, RK_T_I32));
        return;
    }
    if (rk_type_kind_of(k, t) == RK_TK_VEC) {
        rk_type e = rk_type_elem(k, t);
        uint32_t n = rk_type_count(k, t);
        if (rk_type_eq(e, RK_T_I1)) {
            output(s, rk_build_vzext(k, v, vec(s, RK_T_I32, n)));
            return;
        }
        rk_value p = param_ptr(s, e, false);
        rk_value i = scaled(s, s->idx, (int32_t)n);
        rk_store_global(k, p, i, v);
        return;
    }
    rk_value p = param_ptr(s, t, false);
    rk_store_global(k, p, s->idx, v);
}

/* Required attributes get a legal default from the spec (first enum value,
 * range minimum); samples override where the default is not meaningful. */
static void fill_attrs(smp *s, rk_op *op) {
    const ir_op_spec *sp = ir_op_spec_of(op->code);
    for (uint32_t i = 0; i < sp->nattrs; i++) {
        const ir_attr_spec *a = &sp->attrs[i];
        if (a->optional) continue;
        switch (a->type) {
        case IR_AT_INT:
            rk_op_set_int(s->k, op, a->key, a->nenum ? strtoll(a->enums[0], NULL, 10) : a->has_range ? a->lo : 0);
            break;
        case IR_AT_NUM: rk_op_set_float(s->k, op, a->key, 0.0); break;
        case IR_AT_STR: rk_op_set_str(s->k, op, a->key, a->nenum ? a->enums[0] : ""); break;
        case IR_AT_BOOL: rk_op_set_bool(s->k, op, a->key, false); break;
        case IR_AT_LIST: rk_op_set_int_list(s->k, op, a->key, NULL, 0); break;
        case IR_AT_TYPE: break;     /* set by the sample */
        }
    }
}

static rk_op *gen(smp *s, rk_opcode code, const rk_value *in, uint32_t nin, const rk_type *out, uint32_t nout) {
    rk_op *op = rk_emit(s->k, code, in, nin, out, nout);
    if (op) fill_attrs(s, op);
    return op;
}

/* Check, then store every result. */
static void finish(smp *s, rk_op *op) {
    if (!rk_op_check(s->k, op)) return;
    for (uint32_t i = 0; i < op->nout; i++) output(s, op->out[i]);
}

/* The first type of a fixed list that matches a class pattern of the table. */
static rk_type pick(smp *s, const char *pat, size_t n) {
    uint32_t d256[] = {256};
    const rk_type cands[] = {
        RK_T_I32, RK_T_F32, RK_T_I64, RK_T_I16, RK_T_I8, RK_T_F16, RK_T_BF16, RK_T_F64, RK_T_I1,
        s->fp8, s->bf8, RK_T_RSRC,
        vec(s, RK_T_F32, 4), vec(s, RK_T_F16, 4), vec(s, RK_T_BF16, 4), vec(s, RK_T_I32, 4),
        vec(s, s->fp8, 4), vec(s, s->bf8, 4), vec(s, RK_T_I8, 4), vec(s, RK_T_I16, 4),
        vec(s, RK_T_F32, 16), vec(s, RK_T_F16, 8), vec(s, RK_T_BF16, 8),
        rk_type_smem(s->k, RK_T_F32, d256, 1), rk_type_ptr(s->k, RK_T_F32, RK_AS_GLOBAL),
    };
    for (size_t i = 0; i < RK_COUNTOF(cands); i++)
        if (rk_type_ok(cands[i]) && ir_type_matches(s->k, cands[i], pat, n)) return cands[i];
    s->failed = true;
    return RK_T_NONE;
}

uint32_t op_sig_split(const char *b, const char *e, const char **p, size_t *l, uint32_t max) {
    uint32_t n = 0;
    int depth = 0;
    const char *p0 = b;
    if (b == e) return 0;
    for (const char *q = b; q <= e; q++) {
        if (q < e && *q == '<') depth++;
        else if (q < e && *q == '>') depth--;
        else if (q == e || (*q == ',' && depth == 0)) {
            if (n < max) { p[n] = p0; l[n] = (size_t)(q - p0); }
            n++;
            p0 = q + 1;
        }
    }
    return n;
}

/* ---- generic shapes ------------------------------------------------------------------ */
/* R_SAME: operands and result share one type of the sig's class. */
static void same(smp *s) {
    const rk_op_info *info = rk_op_info_of(s->code);
    rk_type t = pick(s, info->sig, strlen(info->sig));
    if (info->rule == RK_R_VREDUCE) t = vec(s, t, 4);
    uint32_t n = RK_COUNT_N(info->nin);
    rk_value in[4];
    for (uint32_t i = 0; i < n; i++) in[i] = input(s, t);
    rk_kernel *k = s->k;
    switch (s->code) {
    case RK_OP_DIV: case RK_OP_MOD: case RK_OP_UDIV: case RK_OP_UMOD: {
        /* divisor in [1, 8]: no division by zero, no INT_MIN / -1 */
        rk_value seven = ci32(s, 7), one = ci32(s, 1);
        rk_value m = rk_build_and(k, in[1], seven);
        in[1] = rk_build_add(k, m, one);
        break;
    }
    case RK_OP_SHL: case RK_OP_LSHR: case RK_OP_ASHR: {
        rk_value c = ci32(s, 31);
        in[1] = rk_build_and(k, in[1], c);
        break;
    }
    case RK_OP_VSHL: case RK_OP_VLSHR: {
        rk_value c = rk_build_constant_vec(k, t, 31);
        in[1] = rk_build_vand(k, in[1], c);
        break;
    }
    default:
        break;
    }
    rk_type rt = info->rule == RK_R_VREDUCE ? rk_type_elem(k, t) : t;
    rk_op *op = gen(s, s->code, in, n, &rt, 1);
    if (s->code == RK_OP_MOV_DPP) {
        rk_op_set_int(k, op, "row_shr", 1);
        rk_op_set_bool(k, op, "bound_ctrl", true);
    }
    if (s->code == RK_OP_WAVE_REDUCE) rk_op_set_str(k, op, "reduce_op", "add");
    if (s->code == RK_OP_QUAD_PERM) rk_op_set_int(k, op, "ctrl", 0x1b);      /* reverse each quad */
    if (s->code == RK_OP_BYTE_PERM) rk_op_set_int(k, op, "sel", 0x05040100); /* low halves */
    finish(s, op);
}

/* R_SIG: one type per position of "a,b->r"; a result spelled like operand 0
 * with alternatives takes operand 0's type. */
static void sig(smp *s) {
    const rk_op_info *info = rk_op_info_of(s->code);
    const char *sg = info->sig, *arrow = strstr(sg, "->");
    const char *ip[8], *op_[8];
    size_t il[8], ol[8];
    uint32_t ni = op_sig_split(sg, arrow, ip, il, 8), no = op_sig_split(arrow + 2, sg + strlen(sg), op_, ol, 8);
    rk_value in[8];
    rk_type out[8];
    rk_kernel *k = s->k;
    bool lane_op = s->code == RK_OP_READLANE || s->code == RK_OP_WRITELANE || s->code == RK_OP_SHUFFLE;
    for (uint32_t i = 0; i < ni; i++) {
        rk_type t = pick(s, ip[i], il[i]);
        /* readlane/writelane need a uniform lane; the shuffle uses xor 1 */
        in[i] = lane_op && i == 1 ? ci32(s, s->code == RK_OP_SHUFFLE ? 1 : 0) : input(s, t);
    }
    for (uint32_t i = 0; i < no; i++) {
        bool bind = ni && il[0] == ol[i] && memcmp(ip[0], op_[i], il[0]) == 0 && memchr(ip[0], '|', il[0]);
        out[i] = bind ? rk_value_type(k, in[0]) : pick(s, op_[i], ol[i]);
    }
    if (s->failed) return;
    rk_op *op = gen(s, s->code, in, ni, out, no);
    switch (s->code) {
    case RK_OP_SHUFFLE: rk_op_set_str(k, op, "mode", "xor"); break;
    case RK_OP_NAMED_BARRIER: case RK_OP_NAMED_BARRIER_ARRIVE:
        rk_op_set_int(k, op, "id", 1);          /* 0 is the block barrier */
        rk_op_set_int(k, op, "count", 256);
        break;
    case RK_OP_S_WAITCNT:
        rk_op_set_int(k, op, "vmcnt", 0);
        rk_op_set_int(k, op, "lgkmcnt", 0);
        break;
    case RK_OP_SCHED_GROUP_BARRIER:
        rk_op_set_int(k, op, "mask", 8);        /* MFMA */
        rk_op_set_int(k, op, "count", 1);
        break;
    default: break;
    }
    finish(s, op);
}

/* R_CMP: two operands of the class, an i1 result. */
static void cmp(smp *s) {
    const rk_op_info *info = rk_op_info_of(s->code);
    rk_type t = pick(s, info->sig, strlen(info->sig));
    rk_value in[2];
    in[0] = input(s, t);
    in[1] = input(s, t);
    rk_type r = RK_T_I1;
    finish(s, gen(s, s->code, in, 2, &r, 1));
}

static void convert(smp *s, rk_type from, rk_type to) {
    rk_value a = input(s, from);
    output(s, rk_emit_convert(s->k, s->code, a, to));
}

/* ---- memory samples ------------------------------------------------------------------------ */
static rk_value alloc1(smp *s, rk_type e, uint32_t n) { return rk_build_smem_alloc(s->k, e, &n, 1); }

/* Each thread writes one element of a 256-element tile, then the block syncs. */
static void fill1(smp *s, rk_value a, rk_type e) {
    rk_value v = input(s, e);
    rk_store_smem(s->k, a, &s->idx, v);
    rk_build_sync(s->k);
}

/* alloc, fill, read a neighbour's element */
static void lds_scalar(smp *s) {
    rk_value a = alloc1(s, RK_T_F32, 256);
    fill1(s, a, RK_T_F32);
    rk_value one = ci32(s, 1);
    rk_value j = rk_build_xor(s->k, s->idx, one);
    output(s, rk_load_smem(s->k, a, &j, 1));
}

/* one vec4 slot per thread (1024 floats): threads of different waves never
 * store the same element, so the race checker has nothing to report */
static void lds_vec(smp *s) {
    rk_value a = alloc1(s, RK_T_F32, 1024);
    rk_value i = scaled(s, s->idx, 4);
    rk_value v = input(s, vec(s, RK_T_F32, 4));
    rk_store_smem(s->k, a, &i, v);
    rk_build_sync(s->k);
    output(s, rk_load_smem(s->k, a, &i, 4));
}

static void lds_load_op(smp *s, rk_type e, const uint32_t *dims, uint32_t rank, rk_value *ix, rk_type rt) {
    rk_kernel *k = s->k;
    rk_value a = rk_build_smem_alloc(k, e, dims, rank);
    if (rank == 1) fill1(s, a, e);
    else {
        /* [rows x cols] with rows*cols = 256 */
        rk_value shift = ci32(s, (int32_t)__builtin_ctz(dims[1]));
        rk_value cm = ci32(s, (int32_t)dims[1] - 1);
        rk_value fi[2];
        fi[0] = rk_build_lshr(k, s->idx, shift);
        fi[1] = rk_build_and(k, s->idx, cm);
        rk_value v = input(s, e);
        rk_store_smem(k, a, fi, v);
        rk_build_sync(k);
    }
    rk_value in[3];
    in[0] = a;
    for (uint32_t i = 0; i < rank; i++) in[1 + i] = ix[i];
    rk_op *op = gen(s, s->code, in, 1 + rank, &rt, 1);
    if (s->code == RK_OP_SMEM_LOAD_VN_F32) rk_op_set_int(k, op, "vec", (int64_t)rk_type_count(k, rt));
    if (s->code == RK_OP_LDMATRIX) rk_op_set_int(k, op, "num", 4);
    finish(s, op);
}

/* Race-free: vN_f32 gives each thread its own vec4 slot; the distributed
 * store (every lane writes elements 0..3) is issued by threads 0..31 only,
 * which share one wave on every target (lanes of one wave never race). */
static void smem_store_op(smp *s) {
    rk_kernel *k = s->k;
    rk_value a = alloc1(s, RK_T_F32, 1024);
    rk_value in[3];
    in[0] = a;
    if (s->code == RK_OP_SMEM_STORE_DISTRIBUTED) {
        in[1] = input(s, vec(s, RK_T_F32, 4));
        rk_value lim = ci32(s, 32);
        rk_value one_wave = rk_build_cmp(k, "lt", s->idx, lim);
        rk_if_begin(k, one_wave);
        finish(s, gen(s, s->code, in, 2, NULL, 0));
        rk_if_end(k, NULL, 0);
    } else {
        in[1] = scaled(s, s->idx, 4);
        in[2] = input(s, vec(s, RK_T_F32, 4));
        rk_op *op = gen(s, s->code, in, 3, NULL, 0);
        rk_op_set_int(k, op, "vec", 4);
        finish(s, op);
    }
    rk_build_sync(k);
    rk_value j = masked(s, 3, 1);
    output(s, rk_load_smem(k, a, &j, 1));
}

static void lds_atomic(smp *s) {
    rk_kernel *k = s->k;
    rk_value a = alloc1(s, RK_T_I32, 256);
    fill1(s, a, RK_T_I32);
    rk_value in[3];
    in[0] = a;
    in[1] = masked(s, 15, 1);
    in[2] = input(s, RK_T_I32);
    rk_type r = RK_T_I32;
    rk_op *op = gen(s, s->code, in, 3, &r, 1);
    rk_op_set_type(k, op, "elem_type", RK_T_I32);
    finish(s, op);
}

/* Buffer views: rsrc over in/out pointer of elem, byte offset idx * bytes. */
static rk_value rsrc_over(smp *s, rk_type elem, bool in) {
    rk_value p = param_ptr(s, elem, in);
    rk_value n = ci32(s, 4096);
    return rk_build_buffer_rsrc(s->k, p, n);
}

static void buffer_load(smp *s, rk_type rt, int dwords) {
    rk_kernel *k = s->k;
    rk_type e = rk_type_kind_of(k, rt) == RK_TK_VEC ? rk_type_elem(k, rt) : rt;
    rk_value in[3];
    in[0] = rsrc_over(s, e, true);
    in[1] = scaled(s, s->idx, (int32_t)(rk_type_bits(k, rt) / 8));
    in[2] = ci32(s, 0);
    rk_op *op = gen(s, s->code, in, 3, &rt, 1);
    if (dwords) rk_op_set_int(k, op, "dwords", dwords);
    if (s->code == RK_OP_BUFFER_LOAD || s->code == RK_OP_BUFFER_LOAD_VN) rk_op_set_type(k, op, "elem_type", e);
    finish(s, op);
}

static void buffer_store(smp *s, rk_type vt, int dwords) {
    rk_kernel *k = s->k;
    rk_type e = rk_type_kind_of(k, vt) == RK_TK_VEC ? rk_type_elem(k, vt) : vt;
    rk_value in[4];
    in[3] = input(s, vt);
    in[0] = rsrc_over(s, e, false);
    in[1] = scaled(s, s->idx, (int32_t)(rk_type_bits(k, vt) / 8));
    in[2] = ci32(s, 0);
    rk_op *op = gen(s, s->code, in, 4, NULL, 0);
    if (dwords) rk_op_set_int(k, op, "dwords", dwords);
    if (s->code == RK_OP_BUFFER_STORE || s->code == RK_OP_BUFFER_STORE_VN) rk_op_set_type(k, op, "elem_type", e);
    finish(s, op);
}

/* AMD DMA into LDS: one wave (threads 0..63) copies 64 floats; the lanes
 * write lane-contiguously from the wave-uniform base. */
static void dma_lds(smp *s) {
    rk_kernel *k = s->k;
    rk_value a = alloc1(s, RK_T_F32, 64);
    rk_value src = s->code == RK_OP_GLOBAL_LOAD_LDS ? param_ptr(s, RK_T_F32, true) : rsrc_over(s, RK_T_F32, true);
    rk_value lim = ci32(s, 64);
    rk_value cond = rk_build_cmp(k, "lt", s->idx, lim);
    rk_if_begin(k, cond);
    rk_value off = scaled(s, s->idx, 4);
    rk_value in[4];
    rk_op *op;
    if (s->code == RK_OP_GLOBAL_LOAD_LDS) {
        in[0] = src;
        in[1] = off;
        in[2] = rk_build_smem_addr_of(k, a);
        op = gen(s, s->code, in, 3, NULL, 0);
        rk_op_set_int(k, op, "size_bytes", 4);
    } else {
        in[0] = src;
        in[1] = s->code == RK_OP_ASYNC_BUFFER_LOAD_LDS_ADDR ? rk_build_smem_addr_of(k, a) : a;
        in[2] = off;
        in[3] = ci32(s, 0);
        op = gen(s, s->code, in, 4, NULL, 0);
        rk_op_set_int(k, op, "dwords", 1);
    }
    rk_op_check(k, op);
    rk_if_end(k, NULL, 0);
    rk_build_s_waitcnt(k, 0, -1, -1);
    rk_build_sync(k);
    rk_value j = masked(s, 63, 1);
    output(s, rk_load_smem(k, a, &j, 1));
}

/* Portable cp.async: 16 bytes per thread into a 1024-float tile. */
static void async_copy(smp *s) {
    rk_kernel *k = s->k;
    rk_value a = alloc1(s, RK_T_F32, 1024);
    rk_value src = param_ptr(s, RK_T_F32, true);
    rk_value i4 = scaled(s, s->idx, 4);
    rk_value valid = rk_const_bool(k, true);
    rk_build_async_copy(k, src, i4, a, i4, valid, 16);
    rk_build_async_commit_group(k);
    rk_build_async_wait_group(k, 0);
    rk_build_sync(k);
    rk_value one = ci32(s, 1);
    rk_value j = rk_build_xor(k, i4, one);
    output(s, rk_load_smem(k, a, &j, 1));
}

static void atomic(smp *s, rk_type pointee, rk_type vt) {
    rk_kernel *k = s->k;
    rk_value v = input(s, vt);
    rk_value in[4];
    in[0] = param_ptr(s, pointee, false);
    in[1] = scaled(s, s->idx, (int32_t)rk_type_count(k, vt));
    in[2] = v;
    uint32_t n = 3;
    if (s->code == RK_OP_GLOBAL_ATOMIC_CAS) in[n++] = input(s, vt);
    rk_op *op = gen(s, s->code, in, n, &vt, 1);
    if (s->code == RK_OP_GLOBAL_ATOMIC) rk_op_set_str(k, op, "kind", "add");
    finish(s, op);
}

/* A wait that holds at once: the word differs from itself with bit 0 flipped. */
static void global_wait(smp *s) {
    rk_kernel *k = s->k;
    rk_value p = param_ptr(s, RK_T_I32, true);
    rk_value x = rk_load_global(k, p, s->idx, 1);
    rk_value one = ci32(s, 1);
    rk_value y = rk_build_xor(k, x, one);
    rk_value in[3] = {p, s->idx, y};
    rk_op *op = gen(s, RK_OP_GLOBAL_WAIT, in, 3, NULL, 0);
    if (op) rk_op_set_str(k, op, "until", "ne");
    if (!op || !rk_op_check(k, op)) return;
    output(s, x);
}

/* ---- control flow ---------------------------------------------------------------------------- */
static void loop(smp *s) {
    rk_kernel *k = s->k;
    rk_value init = input(s, RK_T_F32);
    rk_value lo = ci32(s, 0), hi = ci32(s, 4), step = ci32(s, 1);
    const char *names[] = {"acc"};
    rk_value acc, res;
    rk_value iv = rk_for_begin(k, lo, hi, step, "k0", 1, &init, names, &acc);
    rk_value f = rk_build_sitofp(k, iv, RK_T_F32);
    rk_value next = rk_build_fadd(k, acc, f);
    rk_for_end(k, &next, 1, &res);
    output(s, res);
}

static rk_value half_block(smp *s) {
    rk_value lim = ci32(s, 128);
    return rk_build_cmp(s->k, "lt", s->idx, lim);
}

static void if_then(smp *s) {
    rk_value cond = half_block(s);
    rk_if_begin(s->k, cond);
    output(s, input(s, RK_T_F32));
    rk_if_end(s->k, NULL, 0);
}

static void if_else(smp *s) {
    rk_kernel *k = s->k;
    rk_value cond = half_block(s), res;
    rk_type t = RK_T_F32;
    rk_if_else_begin(k, cond, 1, &t, &res);
    rk_value a = input(s, RK_T_F32);
    rk_else(k, &a, 1);
    rk_value b = input(s, RK_T_F32);
    rk_if_end(k, &b, 1);
    output(s, res);
}

static void mma(smp *s) {
    rk_type f16 = RK_T_F16;
    rk_value a = input(s, vec(s, f16, s->nv ? 8 : 4));
    rk_value b = input(s, vec(s, f16, 4));
    rk_value c = input(s, vec(s, RK_T_F32, 4));
    output(s, rk_build_mma(s->k, s->nv ? "mma_m16n8k16_f32_f16" : "mfma_f32_16x16x16_f16", a, b, c));
}

static void inline_asm(smp *s) {
    rk_value x = input(s, RK_T_I32);
    rk_type t = RK_T_I32;
    rk_op *op = s->nv ? rk_build_inline_asm(s->k, "mov.b32 $0, $1;", "=r,r", &x, 1, &t, 1, false)
                      : rk_build_inline_asm(s->k, "v_mov_b32 $0, $1", "=v,v", &x, 1, &t, 1, false);
    if (op) output(s, op->out[0]);
}

/* ---- Hopper (sm_90 / sm_90a) ------------------------------------------------------------------ */
static rk_value aligned_alloc1(smp *s, rk_type e, uint32_t n, int64_t align) {
    const rk_smem_alloc_opts o = {.align = RK_SOME(align)};
    return rk_build_smem_alloc_ex(s->k, e, &n, 1, &o);
}

/* thread 0 alone initialises bars[0] for `count` arrivals */
static void init_bar0(smp *s, rk_value bars, rk_value zero, int32_t count) {
    rk_kernel *k = s->k;
    rk_value first = rk_build_cmp(k, "eq", s->idx, zero), n = ci32(s, count);
    rk_if_begin(k, first);
    rk_build_mbarrier_init(k, bars, zero, n);
    rk_if_end(k, NULL, 0);
}

/* A 64x16 and B 16x8 f16 tiles in core-matrix order (8 rows of 16 bytes
 * per core matrix; the next 8 k at +128 bytes, the next 8 rows at +256) in
 * one allocation, B after A's 2 KiB, filled by the block; then one wgmma
 * m64n8k16 and its wait. B's descriptor is A's plus 2048 >> 4: the start
 * field counts 16-byte units from bit 0. */
static void wgmma_tile(smp *s) {
    rk_kernel *k = s->k;
    rk_value AB = aligned_alloc1(s, RK_T_F16, 1024 + 128, 128);
    rk_value four = ci32(s, 4), t4 = rk_build_mul(k, s->idx, four);
    for (int i = 0; i < 4; i++) {
        rk_value ci = ci32(s, i);
        rk_value j = rk_build_add(k, t4, ci);
        rk_value v = input(s, RK_T_F16);
        rk_store_smem(k, AB, &j, v);
    }
    /* B's 128 elements by the first 128 threads (one writer per element: race-free) */
    rk_value c128 = ci32(s, 128), b0 = ci32(s, 1024);
    rk_value lo = rk_build_cmp(k, "lt", s->idx, c128);
    rk_value bj = rk_build_add(k, s->idx, b0), bv = input(s, RK_T_F16);
    rk_if_begin(k, lo);
    rk_store_smem(k, AB, &bj, bv);
    rk_if_end(k, NULL, 0);
    rk_build_fence_proxy_async(k);
    rk_build_sync(k);
    rk_build_wgmma_fence(k);
    rk_value zero = ci32(s, 0);
    rk_value da = rk_build_wgmma_desc(k, AB, zero, 128, 256), step = rk_const_i64(k, 2048 >> 4);
    rk_value acc0 = rk_build_constant_vec(k, vec(s, RK_T_F32, 4), 0.0);
    rk_value db = rk_build_add(k, da, step);
    rk_value acc = rk_build_wgmma(k, "f16", acc0, da, db, 8), done;
    rk_build_wgmma_commit_group(k);
    rk_build_wgmma_wait_group(k, 0, &acc, 1, &done);
    output(s, done);
}

/* B as in wgmma_tile (16x8 f16 in core-matrix order, by the first 128
 * threads); A from registers: each thread packs 8 inputs into its fragment;
 * a fence, one wgmma_rs m64n8k16 and its wait */
static void wgmma_rs_tile(smp *s) {
    rk_kernel *k = s->k;
    rk_value B = aligned_alloc1(s, RK_T_F16, 128, 128);
    rk_value c128 = ci32(s, 128);
    rk_value lo = rk_build_cmp(k, "lt", s->idx, c128), bv = input(s, RK_T_F16);
    rk_if_begin(k, lo);
    rk_store_smem(k, B, &s->idx, bv);
    rk_if_end(k, NULL, 0);
    rk_build_fence_proxy_async(k);
    rk_build_sync(k);
    rk_value e[8];
    for (int i = 0; i < 8; i++) e[i] = input(s, RK_T_F16);
    rk_value a = rk_build_vpack(k, e, 8);
    rk_value zero = ci32(s, 0);
    rk_value db = rk_build_wgmma_desc(k, B, zero, 128, 256);
    rk_value acc0 = rk_build_constant_vec(k, vec(s, RK_T_F32, 4), 0.0);
    rk_build_wgmma_fence(k);
    rk_value acc = rk_build_wgmma_rs(k, "f16", acc0, a, db, 8), done;
    rk_build_wgmma_commit_group(k);
    rk_build_wgmma_wait_group(k, 0, &acc, 1, &done);
    output(s, done);
}

/* the two warpgroups of the 256-thread block lower their register limit
 * (8 warps x 32 lanes x 240 fit the 65536-register file); values pass through */
static void regs_hint(smp *s) {
    rk_build_setmaxnreg(s->k, "dec", 240);
    output(s, input(s, RK_T_F32));
}

/* an LDS write made visible to the async proxy, then read back */
static void proxy_fence(smp *s) {
    rk_value a = alloc1(s, RK_T_F32, 256);
    rk_value v = input(s, RK_T_F32);
    rk_store_smem(s->k, a, &s->idx, v);
    rk_build_fence_proxy_async(s->k);
    rk_build_sync(s->k);
    rk_value j = masked(s, 255, 1);
    output(s, rk_load_smem(s->k, a, &j, 1));
}

/* one mbarrier for the block: thread 0 initializes it for 256 arrivals,
 * everyone arrives and waits for phase 0 */
static void mbarrier(smp *s) {
    rk_kernel *k = s->k;
    rk_value bars = alloc1(s, RK_T_I64, 2), zero = ci32(s, 0);
    init_bar0(s, bars, zero, 256);
    rk_build_sync(k);
    rk_build_mbarrier_arrive(k, bars, zero);
    rk_build_mbarrier_wait(k, bars, zero, zero);
    output(s, input(s, RK_T_F32));
}

/* the remote form aimed at this block's own rank: init, the cluster-scope
 * init fence and a cluster barrier (what makes a peer's barrier usable),
 * then everyone arrives through mapa and waits */
static void mbarrier_cluster(smp *s) {
    rk_kernel *k = s->k;
    rk_value bars = alloc1(s, RK_T_I64, 2), zero = ci32(s, 0);
    init_bar0(s, bars, zero, 256);
    rk_build_fence_mbarrier_init(k);
    rk_build_cluster_arrive(k);
    rk_build_cluster_wait(k);
    rk_value rank = rk_build_cluster_rank(k);
    rk_build_mbarrier_arrive_cluster(k, bars, zero, rank);
    rk_build_mbarrier_wait(k, bars, zero, zero);
    output(s, input(s, RK_T_F32));
}

/* TMA: thread 0 expects 8 KiB on the mbarrier and loads the 32 x 64 f32 box
 * at (0, 0) of the tensor map; everyone waits, then reads the tile */
static void tma(smp *s) {
    rk_kernel *k = s->k;
    rk_param_abi tm = {.tensormap = true};
    /* the 4-D op reads "tmap4": the launcher encodes the same 32 x 64 box as a 4-D map */
    bool d4 = s->code == RK_OP_TMA_LOAD_4D;
    rk_value map = rk_add_param(k, d4 ? "tmap4" : "tmap", rk_type_ptr(k, RK_T_I8, RK_AS_CONSTANT), &tm);
    rk_value dst = aligned_alloc1(s, RK_T_F32, 2048, 128), bars = alloc1(s, RK_T_I64, 1), zero = ci32(s, 0);
    init_bar0(s, bars, zero, 1);
    rk_build_sync(k);
    rk_value first = rk_build_cmp(k, "eq", s->idx, zero);
    rk_if_begin(k, first);
    rk_value tx = ci32(s, 8192);
    rk_build_mbarrier_arrive_expect_tx(k, bars, zero, tx);
    if (s->code == RK_OP_TMA_LOAD_2D_MULTICAST) {
        /* to this block alone (its rank's bit): a cluster of one */
        rk_value rank = rk_build_cluster_rank(k), one = ci32(s, 1);
        rk_value mask = rk_build_shl(k, one, rank);
        rk_build_tma_load_2d_multicast(k, map, dst, zero, bars, zero, zero, zero, mask);
    } else if (d4) {
        rk_build_tma_load_4d(k, map, dst, zero, bars, zero, zero, zero, zero, zero);
    } else {
        rk_build_tma_load_2d(k, map, dst, zero, bars, zero, zero, zero);
    }
    rk_if_end(k, NULL, 0);
    rk_build_mbarrier_wait(k, bars, zero, zero);
    rk_value j = masked(s, 255, 8);
    output(s, rk_load_smem(k, dst, &j, 1));
}

/* the block fills a 32 x 64 f32 tile, makes it visible to the async proxy,
 * and thread 0 stores it through the tensor map; its bulk group is waited on */
static void tma_store(smp *s) {
    rk_kernel *k = s->k;
    rk_param_abi tm = {.tensormap = true};
    rk_value map = rk_add_param(k, "tmap", rk_type_ptr(k, RK_T_I8, RK_AS_CONSTANT), &tm);
    rk_value src = aligned_alloc1(s, RK_T_F32, 2048, 128), zero = ci32(s, 0);
    rk_value v = input(s, RK_T_F32);
    for (int32_t j = 0; j < 8; j++) {
        rk_value off = ci32(s, 256 * j);
        rk_value i = rk_build_add(k, s->idx, off);
        rk_store_smem(k, src, &i, v);
    }
    rk_build_fence_proxy_async(k);
    rk_build_sync(k);
    rk_value first = rk_build_cmp(k, "eq", s->idx, zero);
    rk_if_begin(k, first);
    rk_build_tma_store_2d(k, map, src, zero, zero, zero);
    rk_build_bulk_commit_group(k);
    const rk_bulk_wait_group_opts rd = {.read = RK_SOME(true)};
    rk_build_bulk_wait_group_ex(k, 0, &rd);
    rk_if_end(k, NULL, 0);
    output(s, rk_load_smem(k, src, &s->idx, 1));
}

/* ---- dispatch -------------------------------------------------------------------------------- */
static void build(smp *s) {
    rk_kernel *k = s->k;
    rk_type f32 = RK_T_F32, f16 = RK_T_F16, bf16 = RK_T_BF16;
    switch (s->code) {
    case RK_OP_CONSTANT: output(s, ci32(s, 7)); return;
    case RK_OP_CONSTANT_VEC: output(s, rk_build_constant_vec(k, vec(s, f32, 4), 0.0)); return;
    case RK_OP_THREAD_ID: output(s, s->idx); return;
    case RK_OP_SELECT: {
        rk_value c = input(s, RK_T_I1), a = input(s, f32), b = input(s, f32);
        output(s, rk_build_select(k, c, a, b));
        return;
    }
    case RK_OP_ZEXT: case RK_OP_SEXT: convert(s, RK_T_I32, RK_T_I64); return;
    case RK_OP_TRUNC: convert(s, RK_T_I64, RK_T_I32); return;
    case RK_OP_FPEXT: convert(s, f32, RK_T_F64); return;
    case RK_OP_FPTRUNC: convert(s, RK_T_F64, f32); return;
    case RK_OP_BITCAST: convert(s, f32, RK_T_I32); return;
    case RK_OP_VBITCAST: convert(s, vec(s, f16, 4), vec(s, RK_T_I32, 2)); return;
    case RK_OP_VSEXT: case RK_OP_VZEXT: convert(s, vec(s, RK_T_I8, 4), vec(s, RK_T_I32, 4)); return;
    case RK_OP_VTRUNC: convert(s, vec(s, RK_T_I32, 4), vec(s, RK_T_I16, 4)); return;
    case RK_OP_VCMP: case RK_OP_VFCMP: {
        rk_type t = vec(s, s->code == RK_OP_VCMP ? RK_T_I32 : f32, 4);
        rk_value in[2];
        in[0] = input(s, t);
        in[1] = input(s, t);
        rk_type r = vec(s, RK_T_I1, 4);
        finish(s, gen(s, s->code, in, 2, &r, 1));
        return;
    }
    case RK_OP_VSELECT: {
        rk_type t = vec(s, f32, 4);
        rk_value m = input(s, vec(s, RK_T_I1, 4)), a = input(s, t), b = input(s, t);
        output(s, rk_build_vselect(k, m, a, b));
        return;
    }
    case RK_OP_VEXTRACT: output(s, rk_build_vextract(k, input(s, vec(s, f32, 4)), 2)); return;
    case RK_OP_VINSERT: {
        rk_value v = input(s, vec(s, f32, 4)), e = input(s, f32);
        output(s, rk_build_vinsert(k, v, e, 1));
        return;
    }
    case RK_OP_VSPLAT: output(s, rk_build_vsplat(k, input(s, f32), 4)); return;
    case RK_OP_VPACK: {
        rk_value e[4];
        for (int i = 0; i < 4; i++) e[i] = input(s, f32);
        output(s, rk_build_vpack(k, e, 4));
        return;
    }
    case RK_OP_VCONCAT: {
        rk_value a = input(s, vec(s, f32, 2)), b = input(s, vec(s, f32, 2));
        output(s, rk_build_vconcat(k, a, b));
        return;
    }
    case RK_OP_VSHUFFLE: {
        static const int32_t m[] = {0, 5, 2, 7};
        rk_value a = input(s, vec(s, f32, 4)), b = input(s, vec(s, f32, 4));
        output(s, rk_build_vshuffle(k, a, b, m, 4));
        return;
    }
    /* global memory */
    case RK_OP_GLOBAL_LOAD: {
        rk_value in[2];
        in[0] = param_ptr(s, f16, true);
        in[1] = s->idx;
        finish(s, gen(s, s->code, in, 2, &f16, 1));
        return;
    }
    case RK_OP_GLOBAL_LOAD_TYPED: output(s, rk_load_global(k, param_ptr(s, f32, true), s->idx, 1)); return;
    case RK_OP_GLOBAL_LOAD_VN: {
        rk_value p = param_ptr(s, f32, true);
        rk_value i = scaled(s, s->idx, 4);
        output(s, rk_load_global(k, p, i, 4));
        return;
    }
    case RK_OP_GLOBAL_STORE: {
        rk_value in[3];
        in[2] = input(s, f16);
        in[0] = param_ptr(s, f16, false);
        in[1] = s->idx;
        finish(s, gen(s, s->code, in, 3, NULL, 0));
        return;
    }
    case RK_OP_GLOBAL_STORE_TYPED: {
        rk_value v = input(s, f32);
        rk_store_global(k, param_ptr(s, f32, false), s->idx, v);
        return;
    }
    case RK_OP_GLOBAL_STORE_VN: {
        rk_value v = input(s, vec(s, f32, 4));
        rk_value p = param_ptr(s, f32, false);
        rk_value i = scaled(s, s->idx, 4);
        rk_store_global(k, p, i, v);
        return;
    }
    case RK_OP_GLOBAL_PTR_ADD: {
        rk_value p = param_ptr(s, f32, true);
        rk_value off = rk_const_i64(k, 16);
        rk_value q = rk_build_global_ptr_add(k, p, off);
        output(s, rk_load_global(k, q, s->idx, 1));
        return;
    }
    case RK_OP_PTR_TO_INT: {
        /* the address mod 16 of a 12-byte step: every allocation is 16-byte aligned */
        rk_value p = param_ptr(s, f32, true);
        rk_value b = scaled(s, s->idx, 12);
        rk_value off = rk_build_zext(k, b, RK_T_I64);
        rk_value q = rk_build_global_ptr_add(k, p, off);
        rk_value a = rk_build_ptrtoint(k, q);
        rk_value m = rk_const_i64(k, 15);
        output(s, rk_build_and(k, a, m));
        return;
    }
    case RK_OP_COOP_GLOBAL_STORE: {
        rk_kernel *kk = k;
        rk_value base = scaled(s, s->idx, 4), e[4];
        for (int i = 0; i < 4; i++) {
            rk_value c = ci32(s, i);
            e[i] = i ? rk_build_add(kk, base, c) : base;
        }
        rk_value in[3];
        in[2] = input(s, vec(s, f32, 4));
        in[1] = rk_build_vpack(kk, e, 4);
        in[0] = param_ptr(s, f32, false);
        rk_op *op = gen(s, s->code, in, 3, NULL, 0);
        rk_op_set_int(kk, op, "vec", 4);
        finish(s, op);
        return;
    }
    /* LDS */
    case RK_OP_SMEM_ALLOC: case RK_OP_SMEM_LOAD: case RK_OP_SMEM_STORE: lds_scalar(s); return;
    case RK_OP_SMEM_LOAD_VN: case RK_OP_SMEM_STORE_VN: lds_vec(s); return;
    case RK_OP_SMEM_LOAD_V4: {
        uint32_t d[] = {64, 4};
        rk_value ix[2];
        ix[0] = masked(s, 63, 1);
        ix[1] = ci32(s, 0);
        lds_load_op(s, f16, d, 2, ix, vec(s, f16, 4));
        return;
    }
    case RK_OP_SMEM_LOAD_VN_F32: {
        uint32_t d[] = {256};
        rk_value ix = masked(s, 63, 4);
        lds_load_op(s, f32, d, 1, &ix, vec(s, f32, 4));
        return;
    }
    case RK_OP_DS_READ_TR16_B64: {
        uint32_t d[] = {256};
        rk_value ix = masked(s, 63, 4);
        lds_load_op(s, f16, d, 1, &ix, vec(s, f16, 4));
        return;
    }
    case RK_OP_DS_READ_TR16_B128: {
        uint32_t d[] = {256};
        rk_value ix = masked(s, 31, 8);
        lds_load_op(s, f16, d, 1, &ix, vec(s, f16, 8));
        return;
    }
    case RK_OP_DS_READ_TR_B8: {
        uint32_t d[] = {256};
        rk_value ix = masked(s, 31, 8);
        lds_load_op(s, RK_T_I8, d, 1, &ix, vec(s, RK_T_I8, 8));
        return;
    }
    case RK_OP_LDMATRIX: {
        uint32_t d[] = {32, 8};
        rk_value ix[2];
        ix[0] = masked(s, 31, 1);
        ix[1] = ci32(s, 0);
        lds_load_op(s, f16, d, 2, ix, vec(s, RK_T_I32, 4));
        return;
    }
    case RK_OP_SMEM_STORE_VN_F32: case RK_OP_SMEM_STORE_DISTRIBUTED: smem_store_op(s); return;
    case RK_OP_SYNC_HALF_BLOCK: {
        /* the selector must be uniform over the workgroup (a per-thread one
         * is a divergent barrier): block 0 takes the barrier */
        rk_value b = rk_build_block_id(k, 0), zero = ci32(s, 0);
        rk_value first = rk_build_cmp(k, "eq", b, zero);
        rk_value sel = rk_build_zext(k, first, RK_T_I32);
        finish(s, gen(s, s->code, &sel, 1, NULL, 0));
        return;
    }
    case RK_OP_LDS_ATOMIC_ADD: lds_atomic(s); return;
    /* buffers */
    case RK_OP_BUFFER_RSRC: {
        rk_value r = rsrc_over(s, f32, true);
        rk_value off = scaled(s, s->idx, 4), zero = ci32(s, 0);
        output(s, rk_load_buffer(k, r, off, zero, f32, 1));
        return;
    }
    case RK_OP_BUFFER_LOAD: buffer_load(s, f32, 0); return;
    case RK_OP_BUFFER_LOAD_F16: buffer_load(s, f16, 0); return;
    case RK_OP_BUFFER_LOAD_BF16: buffer_load(s, bf16, 0); return;
    case RK_OP_BUFFER_LOAD_VN: buffer_load(s, vec(s, f32, 4), 4); return;
    case RK_OP_BUFFER_LOAD_VN_F16: buffer_load(s, vec(s, f16, 4), 2); return;
    case RK_OP_BUFFER_LOAD_VN_BF16: buffer_load(s, vec(s, bf16, 4), 2); return;
    case RK_OP_BUFFER_STORE: case RK_OP_BUFFER_STORE_F32: buffer_store(s, f32, 0); return;
    case RK_OP_BUFFER_STORE_F16: buffer_store(s, f16, 0); return;
    case RK_OP_BUFFER_STORE_BF16: buffer_store(s, bf16, 0); return;
    case RK_OP_BUFFER_STORE_VN: case RK_OP_BUFFER_STORE_VN_F32: buffer_store(s, vec(s, f32, 4), 4); return;
    case RK_OP_BUFFER_STORE_VN_F16: buffer_store(s, vec(s, f16, 4), 2); return;
    case RK_OP_BUFFER_STORE_VN_BF16: buffer_store(s, vec(s, bf16, 4), 2); return;
    /* async copies */
    case RK_OP_ASYNC_BUFFER_LOAD_LDS: case RK_OP_ASYNC_BUFFER_LOAD_LDS_ADDR: case RK_OP_GLOBAL_LOAD_LDS:
        dma_lds(s);
        return;
    case RK_OP_ASYNC_COPY: case RK_OP_ASYNC_COMMIT_GROUP: case RK_OP_ASYNC_WAIT_GROUP: async_copy(s); return;
    /* atomics */
    case RK_OP_GLOBAL_ATOMIC_ADD: case RK_OP_GLOBAL_ATOMIC: case RK_OP_GLOBAL_ATOMIC_CAS:
        atomic(s, RK_T_I32, RK_T_I32);
        return;
    case RK_OP_GLOBAL_ATOMIC_ADD_F32: atomic(s, f32, f32); return;
    case RK_OP_GLOBAL_ATOMIC_ADD_PK_BF16: atomic(s, bf16, vec(s, bf16, 2)); return;
    case RK_OP_GLOBAL_ATOMIC_ADD_PK_F16: atomic(s, f16, vec(s, f16, 2)); return;
    case RK_OP_GLOBAL_WAIT: global_wait(s); return;
    /* Hopper */
    case RK_OP_WGMMA_DESC: case RK_OP_WGMMA: case RK_OP_WGMMA_FENCE: case RK_OP_WGMMA_COMMIT_GROUP:
    case RK_OP_WGMMA_WAIT_GROUP:
        wgmma_tile(s);
        return;
    case RK_OP_WGMMA_RS: wgmma_rs_tile(s); return;
    case RK_OP_FENCE_PROXY_ASYNC: proxy_fence(s); return;
    case RK_OP_MBARRIER_INIT: case RK_OP_MBARRIER_ARRIVE: case RK_OP_MBARRIER_WAIT: mbarrier(s); return;
    case RK_OP_MBARRIER_ARRIVE_EXPECT_TX: case RK_OP_TMA_LOAD_2D: tma(s); return;
    case RK_OP_SETMAXNREG: regs_hint(s); return;
    case RK_OP_TMA_LOAD_2D_MULTICAST: case RK_OP_TMA_LOAD_4D: tma(s); return;
    case RK_OP_CLUSTER_ARRIVE: case RK_OP_CLUSTER_WAIT: case RK_OP_FENCE_MBARRIER_INIT:
    case RK_OP_MBARRIER_ARRIVE_CLUSTER:
        mbarrier_cluster(s);
        return;
    case RK_OP_TMA_STORE_2D: case RK_OP_BULK_COMMIT_GROUP: case RK_OP_BULK_WAIT_GROUP: tma_store(s); return;
    /* atoms, asm, control flow */
    case RK_OP_MMA: mma(s); return;
    case RK_OP_INLINE_ASM: inline_asm(s); return;
    case RK_OP_FOR: case RK_OP_YIELD: loop(s); return;
    case RK_OP_IF: if_then(s); return;
    case RK_OP_IF_ELSE: if_else(s); return;
    case RK_OP_RETURN:
        output(s, input(s, f32));
        rk_build_return(k);
        return;
    default:
        break;
    }
    switch (rk_op_info_of(s->code)->rule) {
    case RK_R_SAME: case RK_R_VREDUCE: same(s); return;
    case RK_R_SIG: sig(s); return;
    case RK_R_CMP: cmp(s); return;
    default: s->failed = true; return;
    }
}

static bool fnuz_target(const char *t) {
    return t && (!strcmp(t, "gfx940") || !strcmp(t, "gfx941") || !strcmp(t, "gfx942"));
}

rk_kernel *op_sample_kernel(rk_opcode code, const char *target) {
    if (code <= RK_OP_INVALID || code >= RK_OP__COUNT) {
        rk_fail(RK_ERR_INVALID, "op_sample_kernel: bad opcode %d", (int)code);
        return NULL;
    }
    char name[96];
    snprintf(name, sizeof name, "sample_%s", rk_opcode_name(code));
    for (char *p = name; *p; p++)
        if (*p == '.') *p = '_';
    rk_kernel *k = rk_kernel_new(name);
    if (!k) return NULL;
    smp s = {.k = k, .code = code, .nv = target && !strncmp(target, "sm_", 3)};
    s.fp8 = fnuz_target(target) ? RK_T_FP8E4M3FNUZ : RK_T_FP8E4M3;
    s.bf8 = fnuz_target(target) ? RK_T_BF8E5M2FNUZ : RK_T_BF8E5M2;
    if (target) rk_kernel_set_attr_str(k, "target", target);
    s.idx = rk_build_thread_id(k, 0);
    build(&s);
    if (s.failed && ir_live(k)) {
        rk_fail(RK_ERR_INVALID, "op_sample_kernel: no sample shape for %s", rk_opcode_name(code));
        rk_kernel_free(k);
        return NULL;
    }
    if (rk_kernel_finish(k) != RK_OK) {
        rk_kernel_free(k);
        return NULL;
    }
    return k;
}

bool op_sample_legal(rk_opcode code, uint32_t feats) {
    const rk_op_info *info = rk_op_info_of(code);
    if (info->feat & ~feats) return false;
    if (code == RK_OP_MMA)
        return (feats & (RK_FEAT_AMD | RK_FEAT_GFX9)) == (RK_FEAT_AMD | RK_FEAT_GFX9) ||
               (feats & (RK_FEAT_NV | RK_FEAT_SM80)) == (RK_FEAT_NV | RK_FEAT_SM80);
    /* the DMA samples wait with s_waitcnt, an AMD op like themselves */
    return true;
}

typedef struct counter { rk_opcode code; uint32_t n; } counter;
static bool count_one(void *ud, rk_op *op, uint32_t depth) {
    (void)depth;
    counter *c = ud;
    if (op->code == c->code) c->n++;
    return true;
}

uint32_t op_sample_count(const rk_kernel *k, rk_opcode code) {
    counter c = {code, 0};
    ir_walk(rk_kernel_body(k), count_one, &c, 0);
    return c.n;
}
