/* rocke — the emulator's code emission: one switch over every opcode (no
 * default: a new op must be handled here) picks each op's handler and
 * operands; scf.for/if/if_else become mask-stack pushes and pops with
 * explicit jumps, yields become masked parallel copies. Layer: emu. */
#include <math.h>
#include <stdio.h>

#include "emu_int.h"

typedef emu_cc cc;

static emu_ins *add(emu_cc *c, const rk_op *op, emu_fn fn) {
    if (c->failed) return NULL;
    if (c->ncode == c->capc) {
        uint32_t nc = c->capc ? c->capc * 2 : 256;
        emu_ins *np = rk_realloc(c->code, c->capc * sizeof *np, nc * sizeof *np);
        if (!np) return emu_cc_fail(c, RK_ERR_NOMEM, "out of memory compiling for the emulator"), NULL;
        c->code = np;
        c->capc = nc;
    }
    emu_ins *I = &c->code[c->ncode++];
    *I = (emu_ins){.fn = fn, .op = op, .opidx = c->cur, .c = UINT32_MAX};
    return I;
}

emu_ins *emu_cc_add(emu_cc *c, const rk_op *op, emu_fn fn) { return add(c, op, fn); }

static uint32_t R(const emu_cc *c, rk_value v) { return c->ref[v.id]; }

uint32_t *emu_cc_refs(emu_cc *c, uint32_t n) {
    uint32_t *a = rk_arena_alloc(&c->P->arena, sizeof(uint32_t) * (n ? n : 1));
    if (!a) emu_cc_fail(c, RK_ERR_NOMEM, "out of memory compiling for the emulator");
    return a;
}

static bool no_handler(emu_cc *c, const rk_op *op) {
    char nb[RK_NAME_MAX];
    return emu_cc_fail(c, RK_ERR_UNSUPPORTED, "emulator: op #%u '%s' (result %%%s) on %s has no emulation for these types",
                 c->cur, rk_opcode_name(op->code), op->nout ? rk_value_name(c->k, op->out[0], nb) : "-",
                 op->nin ? rk_type_name(c->k, emu_cc_vt(c, op->in[0])) : "-");
}

/* Elementwise op: result = fn(operands) over W * m elements. */
static bool ew(emu_cc *c, const rk_op *op, emu_fn fn, int64_t imm) {
    if (!fn) return no_handler(c, op);
    rk_type rt = emu_cc_vt(c, op->out[0]), at = emu_cc_vt(c, op->in[0]);
    emu_ins *I = add(c, op, fn);
    if (!I) return false;
    I->d = R(c, op->out[0]);
    I->a = R(c, op->in[0]);
    if (op->nin > 1) I->b = R(c, op->in[1]);
    if (op->nin > 2) I->c = R(c, op->in[2]);
    I->m = emu_cc_cnt(c, rt);
    I->n = c->W * I->m;
    I->sa = emu_cc_esc(c, at);
    I->sd = emu_cc_esc(c, rt);
    I->es = emu_sbytes(I->sd);
    I->es2 = emu_sbytes(I->sa);
    I->imm = imm;
    return true;
}

/* How NaN encodes to fp8 on this target (see base/fp8.h). */
static int64_t nan_style(const cc *c) {
    return c->t->vendor == RK_VENDOR_NVIDIA ? RK_FP8_NAN_CANONICAL : RK_FP8_NAN_SIGNED;
}

static int64_t sub_mask(rk_scalar s) {
    uint32_t b = rk_scalar_bits(s);
    return b >= 8 ? 0xff : (1 << b) - 1;
}

static bool int_op(emu_cc *c, const rk_op *op) {
    rk_scalar s = emu_cc_esc(c, emu_cc_vt(c, op->out[0]));
    emu_fn fn = c->emu->opt.check_overflow && rk_scalar_bits(s) >= 8 ? emu_int_nsw_fn(op->code, emu_sbytes(s)) : NULL;
    if (!ew(c, op, fn ? fn : emu_int_fn(op->code, emu_sbytes(s)), sub_mask(s))) return false;
    c->code[c->ncode - 1].imm2 = rk_scalar_bits(s);
    return true;
}

static bool conv(emu_cc *c, const rk_op *op, int mode) {
    rk_scalar sa = emu_cc_esc(c, emu_cc_vt(c, op->in[0])), sd = emu_cc_esc(c, emu_cc_vt(c, op->out[0]));
    return ew(c, op, emu_conv_fn(mode, sa, sd), mode);
}

/* Pointers compare by address (their registers also hold the provenance). */
static bool cmp_ptr(emu_cc *c, const rk_op *op, const char *pred) {
    static const char *const preds[] = {"lt", "le", "gt", "ge", "eq", "ne", "ult", "ule", "ugt", "uge"};
    int64_t p = -1;
    for (int i = 0; pred && i < (int)RK_COUNTOF(preds); i++)
        if (!strcmp(pred, preds[i])) p = i;
    if (p < 0) return no_handler(c, op);
    emu_ins *I = add(c, op, emu_h_cmp_ptr);
    if (!I) return false;
    I->d = R(c, op->out[0]);
    I->a = R(c, op->in[0]);
    I->b = R(c, op->in[1]);
    I->imm = p;
    return true;
}

static bool cmp_op(emu_cc *c, const rk_op *op) {
    const char *pred = rk_attrs_str(&op->attrs, "pred");
    if (rk_type_kind_of(c->k, emu_cc_vt(c, op->in[0])) == RK_TK_PTR) return cmp_ptr(c, op, pred);
    rk_scalar s = emu_cc_esc(c, emu_cc_vt(c, op->in[0]));
    uint32_t bits = rk_scalar_bits(s);
    emu_fn fn = emu_cmp_fn(pred, emu_sbytes(s), bits < 8);
    static const char *const sp[] = {"lt", "le", "gt", "ge"};
    int64_t p = 0;
    for (int i = 0; pred && i < 4; i++)
        if (!strcmp(pred, sp[i])) p = i;
    if (!ew(c, op, fn, p)) return false;
    c->code[c->ncode - 1].imm2 = bits;
    return true;
}

static bool id_op(emu_cc *c, const rk_op *op, int which) {
    const char *ax = rk_attrs_str(&op->attrs, "axis");
    emu_ins *I = add(c, op, emu_h_ids);
    if (!I) return false;
    I->d = R(c, op->out[0]);
    I->imm = which;
    I->imm2 = ax ? (ax[0] == 'y' ? 1 : ax[0] == 'z' ? 2 : 0) : 0;
    return true;
}

static bool copy_op(emu_cc *c, const rk_op *op) {
    emu_ins *I = add(c, op, emu_h_copy);
    if (!I) return false;
    I->d = R(c, op->out[0]);
    I->a = R(c, op->in[0]);
    I->es = emu_cc_lane_bytes(c, emu_cc_vt(c, op->out[0]));
    return true;
}

static bool unsupported(emu_cc *c, const rk_op *op, const char *why) {
    emu_ins *I = add(c, op, emu_h_unsupported);
    if (!I) return false;
    I->aux = rk_arena_printf(&c->P->arena, "%s is not supported by the emulator: %s", rk_opcode_name(op->code), why);
    return I->aux != NULL || emu_cc_fail(c, RK_ERR_NOMEM, "out of memory");
}

static bool nop(emu_cc *c, const rk_op *op) { (void)c; (void)op; return true; }

/* smem operand 0 and its index operands [1, 1+nidx). */
static bool smem_access(emu_cc *c, const rk_op *op, emu_fn fn, uint32_t nidx, uint32_t lane_bytes_) {
    int32_t si = c->smem[op->in[0].id];
    if (si < 0) return emu_cc_fail(c, RK_ERR_UNSUPPORTED, "emulator: op #%u '%s' takes an LDS allocation that is not a "
                                                    "tile.smem_alloc result", c->cur, rk_opcode_name(op->code));
    emu_ins *I = add(c, op, fn);
    if (!I) return false;
    I->aux = &c->P->smem[si];
    uint32_t *a = emu_cc_refs(c, nidx);
    if (!a) return false;
    for (uint32_t i = 0; i < nidx; i++) a[i] = R(c, op->in[1 + i]);
    I->args = a;
    I->nargs = nidx;
    I->es = lane_bytes_;
    return true;
}

static bool gmem_elem_ok(emu_cc *c, const rk_op *op, rk_type t) {
    rk_scalar s = emu_cc_esc(c, t);
    if (rk_scalar_bits(s) < 8)
        return emu_cc_fail(c, RK_ERR_UNSUPPORTED, "emulator: op #%u '%s' moves %s, whose elements are narrower than a byte",
                     c->cur, rk_opcode_name(op->code), rk_type_name(c->k, t));
    return true;
}

/* The alignment a global access promises (as lowered: the align attribute's
 * largest power-of-two divisor, else the access's size, at most 16 bytes). */
static uint32_t gmem_align(const rk_op *op, uint32_t bytes) {
    int64_t a = 0;
    rk_attrs_int(&op->attrs, "align", &a);
    uint64_t v = a > 0 ? (uint64_t)a : bytes ? bytes : 1;
    v &= ~v + 1;
    if (a <= 0 && v > 16) v = 16;
    return (uint32_t)v;
}

static bool gload(emu_cc *c, const rk_op *op) {
    rk_type rt = emu_cc_vt(c, op->out[0]), pt = emu_cc_vt(c, op->in[0]);
    if (!gmem_elem_ok(c, op, rt)) return false;
    emu_ins *I = add(c, op, emu_h_gload);
    if (!I) return false;
    I->d = R(c, op->out[0]);
    I->a = R(c, op->in[0]);
    I->b = R(c, op->in[1]);
    I->es = emu_cc_lane_bytes(c, rt);
    I->imm = emu_cc_vt(c, op->in[1]).id == RK_S_I64;
    I->imm2 = emu_sbytes(rk_type_scalar(rk_type_elem(c->k, pt)));
    I->m2 = gmem_align(op, I->es);
    return true;
}

static bool gstore(emu_cc *c, const rk_op *op) {
    rk_type v = emu_cc_vt(c, op->in[2]), pt = emu_cc_vt(c, op->in[0]);
    if (!gmem_elem_ok(c, op, v)) return false;
    emu_ins *I = add(c, op, emu_h_gstore);
    if (!I) return false;
    I->a = R(c, op->in[0]);
    I->b = R(c, op->in[1]);
    I->c = R(c, op->in[2]);
    I->es = emu_cc_lane_bytes(c, v);
    I->imm = emu_cc_vt(c, op->in[1]).id == RK_S_I64;
    I->imm2 = emu_sbytes(rk_type_scalar(rk_type_elem(c->k, pt)));
    I->m2 = gmem_align(op, I->es);
    return true;
}

/* Buffer access granule: per byte/short for 1- and 2-byte elements of a
 * scalar access and of the 16-bit element ops, per dword otherwise. */
static uint32_t granule(emu_cc *c, const rk_op *op, rk_type v) {
    uint32_t bytes = emu_cc_lane_bytes(c, v);
    if (op->code == RK_OP_BUFFER_LOAD_F16 || op->code == RK_OP_BUFFER_LOAD_BF16 ||
        op->code == RK_OP_BUFFER_STORE_F16 || op->code == RK_OP_BUFFER_STORE_BF16)
        return 2;
    if ((op->code == RK_OP_BUFFER_LOAD || op->code == RK_OP_BUFFER_STORE) && bytes < 4) return bytes;
    return 4;
}

static bool bload(emu_cc *c, const rk_op *op) {
    rk_type rt = emu_cc_vt(c, op->out[0]);
    if (!gmem_elem_ok(c, op, rt)) return false;
    emu_ins *I = add(c, op, emu_h_bload);
    if (!I) return false;
    I->d = R(c, op->out[0]);
    I->a = R(c, op->in[0]);
    I->b = R(c, op->in[1]);
    I->c = R(c, op->in[2]);
    I->es = emu_cc_lane_bytes(c, rt);
    I->imm2 = granule(c, op, rt);
    return true;
}

static bool bstore(emu_cc *c, const rk_op *op) {
    rk_type v = emu_cc_vt(c, op->in[3]);
    if (!gmem_elem_ok(c, op, v)) return false;
    uint32_t *a = emu_cc_refs(c, 1);
    emu_ins *I = add(c, op, emu_h_bstore);
    if (!I || !a) return false;
    I->a = R(c, op->in[0]);
    I->b = R(c, op->in[1]);
    I->c = R(c, op->in[2]);
    a[0] = R(c, op->in[3]);
    I->args = a;
    I->nargs = 1;
    I->es = emu_cc_lane_bytes(c, v);
    I->imm2 = granule(c, op, v);
    return true;
}

static bool gatomic(emu_cc *c, const rk_op *op, int kind) {
    rk_type v = emu_cc_vt(c, op->in[2]), pt = emu_cc_vt(c, op->in[0]);
    if (kind < 0) return emu_cc_fail(c, RK_ERR_INVALID, "emulator: op #%u has an unknown atomic kind", c->cur);
    uint32_t *a = op->nin > 3 ? emu_cc_refs(c, 1) : NULL;
    emu_ins *I = add(c, op, emu_h_gatomic);
    if (!I || (op->nin > 3 && !a)) return false;
    I->d = R(c, op->out[0]);
    I->a = R(c, op->in[0]);
    I->b = R(c, op->in[1]);
    I->c = R(c, op->in[2]);
    if (a) {
        a[0] = R(c, op->in[3]);
        I->args = a;
        I->nargs = 1;
    }
    I->es = emu_cc_lane_bytes(c, v);
    I->imm = kind;
    I->imm2 = (int64_t)(emu_sbytes(rk_type_scalar(rk_type_elem(c->k, pt))) << 1) | (emu_cc_vt(c, op->in[1]).id == RK_S_I64);
    return true;
}

static bool barrier(emu_cc *c, const rk_op *op, int kind) {
    emu_ins *I = add(c, op, emu_h_barrier);
    if (!I) return false;
    I->imm = kind;
    if (kind == 3) I->a = R(c, op->in[0]);
    if (kind >= 4) {
        int64_t id = 0, count = 0;
        rk_attrs_int(&op->attrs, "id", &id);
        rk_attrs_int(&op->attrs, "count", &count);
        I->imm2 = id;
        I->m = (uint32_t)((count + c->W - 1) / c->W);
    }
    return true;
}

static bool lane_map_op(emu_cc *c, const rk_op *op, emu_fn fn, const int *map, int64_t imm, int64_t imm2) {
    int *m = rk_arena_alloc(&c->P->arena, sizeof(int) * c->W);
    emu_ins *I = add(c, op, fn);
    if (!I || !m) return emu_cc_fail(c, RK_ERR_NOMEM, "out of memory");
    memcpy(m, map, sizeof(int) * c->W);
    I->d = R(c, op->out[0]);
    I->a = R(c, op->in[0]);
    I->aux = m;
    I->imm = imm;
    I->imm2 = imm2;
    return true;
}

static bool swizzle(emu_cc *c, const rk_op *op, uint32_t off) {
    int map[EMU_MAXW];
    emu_swizzle_map(off, c->W, map);
    return lane_map_op(c, op, emu_h_swizzle, map, 0, 0);
}

static bool dpp(emu_cc *c, const rk_op *op) {
    int map[EMU_MAXW];
    int64_t shr = 0, shl = 0, ctrl = 0;
    bool bound = rk_attrs_bool(&op->attrs, "bound_ctrl", false);
    /* RDNA only (no emulated target allows them yet): row_xmask reads
     * l ^ mask inside the 16-lane row with bound_ctrl on, as lowered; dpp8
     * reads lane sel[3i+2:3i] of each group of 8, an inactive source giving 0 */
    if (op->code == RK_OP_DPP_XOR || op->code == RK_OP_MOV_DPP8) {
        int64_t v = 0;
        rk_attrs_int(&op->attrs, op->code == RK_OP_DPP_XOR ? "xor_mask" : "sel", &v);
        for (uint32_t l = 0; l < c->W; l++)
            map[l] = op->code == RK_OP_DPP_XOR ? (int)((l & ~15u) | ((l & 15u) ^ ((uint32_t)v & 15u)))
                                               : (int)((l & ~7u) | (((uint32_t)v >> (3 * (l & 7u))) & 7u));
        return lane_map_op(c, op, emu_h_dpp, map, 1, 1);
    }
    if (op->code == RK_OP_QUAD_PERM) {
        rk_attrs_int(&op->attrs, "ctrl", &ctrl);
        for (uint32_t l = 0; l < c->W; l++) map[l] = (int)((l & ~3u) | (((uint32_t)ctrl >> (2 * (l & 3u))) & 3u));
        return lane_map_op(c, op, emu_h_dpp, map, 1, bound);
    }
    rk_attrs_int(&op->attrs, "row_shr", &shr);
    rk_attrs_int(&op->attrs, "row_shl", &shl);
    for (uint32_t l = 0; l < c->W; l++) {
        uint32_t r = l & 15u;
        if (shl) map[l] = r + (uint32_t)shl < 16 ? (int)(l + (uint32_t)shl) : -1;
        else map[l] = r >= (uint32_t)shr ? (int)(l - (uint32_t)shr) : -1;
    }
    return lane_map_op(c, op, emu_h_dpp, map, 1, bound);
}

static bool mma(emu_cc *c, const rk_op *op) {
    const char *id = rk_attrs_str(&op->attrs, "op_id");
    const rk_mma_atom *a = rk_mma_atom_find(id);
    if (!a || a->lanes != c->W)
        return emu_cc_fail(c, RK_ERR_UNSUPPORTED, "emulator: matrix atom '%s' is not emulated on %s", id ? id : "",
                     c->t->name);
    const void *t = emu_mma_prepare(&c->P->arena, a, emu_cc_esc(c, emu_cc_vt(c, op->in[0])), emu_cc_esc(c, emu_cc_vt(c, op->in[1])));
    uint32_t *sc = a->scaled ? emu_cc_refs(c, 2) : NULL;
    emu_ins *I = add(c, op, emu_h_mma);
    if (!I || !t || (a->scaled && !sc)) return emu_cc_fail(c, RK_ERR_NOMEM, "out of memory");
    I->d = R(c, op->out[0]);
    I->a = R(c, op->in[0]);
    I->b = R(c, op->in[1]);
    I->c = R(c, op->in[2]);
    I->aux = t;
    if (sc) {                    /* the verifier checked 5 operands, i32 scales */
        sc[0] = R(c, op->in[3]);
        sc[1] = R(c, op->in[4]);
        I->args = sc;
        I->nargs = 2;
        rk_attrs_int(&op->attrs, "opsel_a", &I->imm);
        rk_attrs_int(&op->attrs, "opsel_b", &I->imm2);
    }
    return true;
}

static bool lanes_op(emu_cc *c, const rk_op *op, emu_fn fn, int64_t imm) {
    emu_ins *I = add(c, op, fn);
    if (!I) return false;
    I->d = op->nout ? R(c, op->out[0]) : 0;
    I->a = R(c, op->in[0]);
    if (op->nin > 1) I->b = R(c, op->in[1]);
    if (op->nin > 2) I->c = R(c, op->in[2]);
    I->es = op->nout ? emu_cc_lane_bytes(c, emu_cc_vt(c, op->out[0])) : 0;
    I->es2 = emu_cc_lane_bytes(c, emu_cc_vt(c, op->in[0]));
    I->imm = imm;
    return true;
}

static bool dma(emu_cc *c, const rk_op *op, int kind) {
    uint32_t *a = emu_cc_refs(c, 1);
    emu_ins *I = add(c, op, emu_h_dma);
    if (!I || !a) return false;
    I->imm = kind;
    I->a = R(c, op->in[0]);
    if (kind == 0) {
        int64_t dw = 1;
        rk_attrs_int(&op->attrs, "dwords", &dw);
        I->es = (uint32_t)dw * 4;
        int32_t si = c->smem[op->in[1].id];
        if (rk_type_kind_of(c->k, emu_cc_vt(c, op->in[1])) == RK_TK_SMEM) {
            if (si < 0) return emu_cc_fail(c, RK_ERR_UNSUPPORTED, "emulator: op #%u: LDS operand is not an allocation", c->cur);
            I->b = UINT32_MAX;
            I->aux = &c->P->smem[si];
        } else {
            I->b = R(c, op->in[1]);
            I->aux = emu_cc_lds_origin(c, op->in[1]);
        }
        I->c = R(c, op->in[2]);
        a[0] = R(c, op->in[3]);
        I->args = a;
        I->nargs = 1;
    } else {
        int64_t sz = 4;
        rk_attrs_int(&op->attrs, "size_bytes", &sz);
        I->es = (uint32_t)sz;
        I->c = R(c, op->in[1]);
        I->b = R(c, op->in[2]);
        I->aux = emu_cc_lds_origin(c, op->in[2]);
    }
    return true;
}

static bool emit_region(emu_cc *c, const rk_region *r);

/* (dst, src) pairs for a masked copy; aliasing sources are staged. */
static bool copy_pairs(emu_cc *c, emu_ins *I, const rk_value *dst, const rk_value *src, uint32_t n) {
    uint32_t *a = emu_cc_refs(c, 2 * n);
    uint32_t *sz = rk_arena_alloc(&c->P->arena, sizeof(uint32_t) * (n ? n : 1));
    if (!a || !sz) return emu_cc_fail(c, RK_ERR_NOMEM, "out of memory");
    bool alias = false;
    for (uint32_t i = 0; i < n; i++) {
        a[2 * i] = R(c, dst[i]);
        a[2 * i + 1] = R(c, src[i]);
        sz[i] = emu_cc_lane_bytes(c, emu_cc_vt(c, dst[i]));
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            if (a[2 * i + 1] == a[2 * j]) alias = true;
    I->args = a;
    I->nargs = 2 * n;
    I->aux = sz;
    I->imm = alias;
    return true;
}

static void patch_rets(emu_cc *c, uint32_t from, uint32_t target) {
    for (uint32_t i = from; i < c->nrets; i++) c->code[c->rets[i]].jump = target;
    c->nrets = from;
}

bool emu_cc_region(emu_cc *c, const rk_region *r) {
    uint32_t mark = c->nrets;
    if (!emit_region(c, r)) return false;
    patch_rets(c, mark, c->ncode);
    return true;
}

static bool emit_for(emu_cc *c, const rk_op *op) {
    const rk_region *body = &op->regions[0];
    uint32_t n = op->nout;
    if (body->nargs != 1 + n)
        return emu_cc_fail(c, RK_ERR_INVALID, "emulator: scf.for op #%u has %u block arguments, expected %u", c->cur,
                     body->nargs, 1 + n);
    uint32_t es = emu_cc_lane_bytes(c, emu_cc_vt(c, op->in[0])), self = c->cur;
    emu_ins *I = add(c, op, emu_h_for_init);
    if (!I) return false;
    I->d = R(c, body->args[0]);
    I->a = R(c, op->in[0]);
    I->b = R(c, op->in[1]);
    I->c = R(c, op->in[2]);
    I->es = es;
    if (!copy_pairs(c, &c->code[c->ncode - 1], body->args + 1, op->in + 3, n)) return false;
    if (++c->depth > c->P->depth) c->P->depth = c->depth;
    uint32_t head = c->ncode;
    I = add(c, op, emu_h_for_head);
    if (!I) return false;
    I->a = R(c, body->args[0]);
    I->b = R(c, op->in[1]);
    I->es = es;
    if (!emu_cc_region(c, body)) return false;
    c->cur = self;
    I = add(c, op, emu_h_for_latch);
    if (!I) return false;
    I->d = R(c, body->args[0]);
    I->c = R(c, op->in[2]);
    I->es = es;
    I->jump = head;
    uint32_t exit_pc = c->ncode;
    I = add(c, op, emu_h_for_exit);
    if (!I) return false;
    if (!copy_pairs(c, I, op->out, body->args + 1, n)) return false;
    c->code[head].jump = exit_pc;
    c->depth--;
    c->cur = c->last[self];
    return true;
}

static bool emit_if(emu_cc *c, const rk_op *op) {
    uint32_t self = c->cur;
    bool two = op->code == RK_OP_IF_ELSE;
    emu_ins *I = add(c, op, two ? emu_h_ife : emu_h_if);
    if (!I) return false;
    I->a = R(c, op->in[0]);
    uint32_t at = c->ncode - 1;
    c->depth += two ? 2 : 1;
    if (c->depth > c->P->depth) c->P->depth = c->depth;
    if (!emu_cc_region(c, &op->regions[0])) return false;
    if (two) {
        uint32_t then_end = c->cur;     /* the else ops are numbered after the then ops */
        c->cur = self;
        uint32_t else_pc = c->ncode;
        if (!add(c, op, emu_h_else)) return false;
        c->code[at].jump = else_pc;
        c->cur = then_end;
        if (!emu_cc_region(c, &op->regions[1])) return false;
        c->cur = self;
        uint32_t end_pc = c->ncode;
        if (!add(c, op, emu_h_ife_end)) return false;
        c->code[else_pc].jump = end_pc;
    } else {
        c->cur = self;
        uint32_t end_pc = c->ncode;
        if (!add(c, op, emu_h_if_end)) return false;
        c->code[at].jump = end_pc;
    }
    c->depth -= two ? 2 : 1;
    c->cur = c->last[self];
    return true;
}

static bool emit_yield(emu_cc *c, const rk_op *op) {
    const rk_op *owner = op->parent ? op->parent->owner : NULL;
    if (!owner || !op->nin) return true;
    emu_ins *I = add(c, op, emu_h_yield);
    if (!I) return false;
    const rk_value *dst = owner->code == RK_OP_FOR ? owner->regions[0].args + 1 : owner->out;
    return copy_pairs(c, I, dst, op->in, op->nin);
}

static bool emit_return(emu_cc *c, const rk_op *op) {
    if (!add(c, op, emu_h_return)) return false;
    if (c->nrets == c->caprets) {
        uint32_t nc = c->caprets ? c->caprets * 2 : 16;
        uint32_t *np = rk_realloc(c->rets, c->caprets * sizeof *np, nc * sizeof *np);
        if (!np) return emu_cc_fail(c, RK_ERR_NOMEM, "out of memory");
        c->rets = np;
        c->caprets = nc;
    }
    c->rets[c->nrets++] = c->ncode - 1;
    return true;
}

static bool pool_value(emu_cc *c, rk_value v, const void *lane0) {
    c->ref[v.id] = emu_cc_pool(c, lane0, c->lbytes[v.id]);
    return !c->failed;
}

/* One element of scalar s holding the literal (ints truncated to their bits,
 * floats rounded once to the type). */
static void literal(rk_scalar s, const rk_attr_val *v, uint8_t *out) {
    bool is_int = v && v->kind == RK_AK_INT;
    double f = !v ? 0.0 : is_int ? (double)v->u.i : v->kind == RK_AK_FLOAT ? v->u.f : v->kind == RK_AK_BOOL ? v->u.b : 0.0;
    int64_t i = !v ? 0 : is_int ? v->u.i : v->kind == RK_AK_BOOL ? v->u.b : (int64_t)f;
    uint16_t h;
    uint32_t u32;
    uint64_t u64;
    float f32;
    switch (s) {
    case RK_S_I1: out[0] = (uint8_t)(i & 1); break;
    case RK_S_I4: out[0] = (uint8_t)(i & 15); break;
    case RK_S_I8: out[0] = (uint8_t)i; break;
    case RK_S_I16: h = (uint16_t)i; memcpy(out, &h, 2); break;
    case RK_S_I32: u32 = (uint32_t)i; memcpy(out, &u32, 4); break;
    case RK_S_I64: u64 = (uint64_t)i; memcpy(out, &u64, 8); break;
    case RK_S_F16: h = rk_f64_to_f16(f); memcpy(out, &h, 2); break;
    case RK_S_BF16: h = rk_f64_to_bf16(f); memcpy(out, &h, 2); break;
    case RK_S_F32: f32 = (float)f; memcpy(out, &f32, 4); break;
    case RK_S_F64: memcpy(out, &f, 8); break;
    default: out[0] = rk_f64_to_fp8(f, emu_fp8_format(s)); break;
    }
}

static bool emit_const(emu_cc *c, const rk_op *op) {
    rk_type t = emu_cc_vt(c, op->out[0]);
    rk_scalar s = emu_cc_esc(c, t);
    uint32_t n = emu_cc_cnt(c, t), es = emu_sbytes(s);
    uint8_t *lane = rk_malloc((size_t)n * es);
    if (!lane) return emu_cc_fail(c, RK_ERR_NOMEM, "out of memory");
    const rk_attr_val *v = rk_attrs_get(&op->attrs, op->code == RK_OP_CONSTANT ? "value" : "fill");
    for (uint32_t j = 0; j < n; j++) literal(s, v, lane + (size_t)j * es);
    bool ok = pool_value(c, op->out[0], lane);
    rk_free(lane, (size_t)n * es);
    return ok;
}

static bool vec_move(emu_cc *c, const rk_op *op, emu_fn fn) {
    emu_ins *I = add(c, op, fn);
    if (!I) return false;
    rk_type rt = emu_cc_vt(c, op->out[0]), at = emu_cc_vt(c, op->in[0]);
    I->d = R(c, op->out[0]);
    I->a = R(c, op->in[0]);
    if (op->nin > 1) I->b = R(c, op->in[1]);
    I->es = emu_sbytes(emu_cc_esc(c, rt));
    I->m = emu_cc_cnt(c, rt);
    I->m2 = emu_cc_cnt(c, at);
    int64_t idx = 0;
    rk_attrs_int(&op->attrs, "index", &idx);
    I->imm = idx;
    return true;
}

/* Every opcode: what the emulator runs for it. */
static bool emit_op(emu_cc *c, const rk_op *op) {
    rk_opcode code = op->code;
    switch (code) {
    case RK_OP_INVALID: return emu_cc_fail(c, RK_ERR_INVALID, "emulator: op #%u is invalid", c->cur);
    case RK_OP_CONSTANT: case RK_OP_CONSTANT_VEC: return emit_const(c, op);
    case RK_OP_ADD: case RK_OP_SUB: case RK_OP_MUL: case RK_OP_AND: case RK_OP_OR: case RK_OP_XOR:
    case RK_OP_NOT: case RK_OP_SMAX: case RK_OP_SMIN: case RK_OP_UMAX: case RK_OP_UMIN:
    case RK_OP_DIV: case RK_OP_MOD: case RK_OP_UDIV: case RK_OP_UMOD: case RK_OP_SHL: case RK_OP_LSHR:
    case RK_OP_ASHR: case RK_OP_VAND: case RK_OP_VOR: case RK_OP_VXOR: case RK_OP_VSHL: case RK_OP_VLSHR:
    case RK_OP_VSMAX: case RK_OP_VSMIN:
        return int_op(c, op);
    case RK_OP_UMUL_HI_I32: return ew(c, op, emu_h_umulhi, 0);
    case RK_OP_CMP: case RK_OP_VCMP: return cmp_op(c, op);
    case RK_OP_SELECT: {
        if (!ew(c, op, emu_h_select, 0)) return false;
        c->code[c->ncode - 1].es = emu_cc_lane_bytes(c, emu_cc_vt(c, op->out[0]));
        return true;
    }
    case RK_OP_VSELECT: return ew(c, op, emu_h_vselect, 0);
    case RK_OP_ZEXT: case RK_OP_VZEXT: case RK_OP_TRUNC: case RK_OP_VTRUNC: return conv(c, op, EMU_CV_ZEXT);
    case RK_OP_SEXT: case RK_OP_VSEXT: return conv(c, op, EMU_CV_SEXT);
    case RK_OP_BITCAST: case RK_OP_VBITCAST: {
        if (!vec_move(c, op, emu_h_bitcast)) return false;
        emu_ins *I = &c->code[c->ncode - 1];
        I->es = emu_cc_lane_bytes(c, emu_cc_vt(c, op->out[0]));
        I->es2 = emu_cc_lane_bytes(c, emu_cc_vt(c, op->in[0]));
        I->imm = rk_scalar_bits(emu_cc_esc(c, emu_cc_vt(c, op->out[0])));
        I->imm2 = rk_scalar_bits(emu_cc_esc(c, emu_cc_vt(c, op->in[0])));
        if (rk_scalar_bits(emu_cc_esc(c, emu_cc_vt(c, op->out[0]))) == 0) return no_handler(c, op);
        if ((I->imm < 8 || I->imm2 < 8) && (uint64_t)I->m * (uint64_t)I->imm > 4096)
            return emu_cc_fail(c, RK_ERR_UNSUPPORTED, "emulator: op #%u bitcasts %s: sub-byte vectors wider than "
                               "4096 bits are not emulated", c->cur, rk_type_name(c->k, emu_cc_vt(c, op->in[0])));
        return true;
    }
    case RK_OP_FADD: case RK_OP_FSUB: case RK_OP_FMUL: case RK_OP_FDIV: case RK_OP_FNEG: case RK_OP_FABS:
    case RK_OP_FMA: case RK_OP_FMAX: case RK_OP_FMIN: case RK_OP_FMAX3: case RK_OP_FMIN3: case RK_OP_VFMA:
    case RK_OP_VFNEG:
    case RK_OP_EXP2: case RK_OP_EXP2_FAST: case RK_OP_EXP: case RK_OP_LOG2: case RK_OP_LOG: case RK_OP_SQRT:
    case RK_OP_RSQRT: case RK_OP_RCP: case RK_OP_RCP_FAST: case RK_OP_TANH: case RK_OP_SIN: case RK_OP_COS:
        return ew(c, op, emu_float_fn(code, emu_cc_esc(c, emu_cc_vt(c, op->out[0]))), 0);
    case RK_OP_VADD: case RK_OP_VSUB: case RK_OP_VMUL: case RK_OP_VDIV: {
        rk_scalar s = emu_cc_esc(c, emu_cc_vt(c, op->out[0]));
        if (rk_scalar_is_float(s)) return ew(c, op, emu_float_fn(code, s), 0);
        return int_op(c, op);
    }
    case RK_OP_FCMP: case RK_OP_VFCMP: return ew(c, op, emu_fcmp_fn(rk_attrs_str(&op->attrs, "pred")), 0);
    case RK_OP_SITOFP: case RK_OP_SITOFP_F32: return conv(c, op, EMU_CV_SITOFP);
    case RK_OP_UITOFP: return conv(c, op, EMU_CV_UITOFP);
    case RK_OP_FPTOSI: return conv(c, op, EMU_CV_FPTOSI);
    case RK_OP_FPTOUI: return conv(c, op, EMU_CV_FPTOUI);
    case RK_OP_FPEXT: case RK_OP_FPTRUNC: case RK_OP_CAST_TO_F32: case RK_OP_CAST_F32_TO:
    case RK_OP_TRUNC_F32_TO_F16: case RK_OP_TRUNC_F32_TO_BF16: case RK_OP_VCAST_TO_F32:
    case RK_OP_VTRUNC_F32_TO: case RK_OP_VTRUNC_F32_TO_F16:
        return conv(c, op, EMU_CV_FTOF);
    case RK_OP_RINT_F32: return conv(c, op, EMU_CV_RINT);
    case RK_OP_CVT_FP8_TO_F32: case RK_OP_CVT_BF8_TO_F32: case RK_OP_CVT_PK_F32_FP8X4: case RK_OP_CVT_PK_F32_BF8X4:
        return conv(c, op, EMU_CV_F8DEC);
    case RK_OP_CVT_F32_TO_FP8: case RK_OP_CVT_F32_TO_BF8: case RK_OP_CVT_PK_FP8_F32X4: case RK_OP_CVT_PK_BF8_F32X4:
        if (!conv(c, op, EMU_CV_F8ENC)) return false;
        c->code[c->ncode - 1].imm2 = nan_style(c);
        return true;
    case RK_OP_CVT_PK_I8_F32X4: case RK_OP_CVT_F32_TO_I8_SAT: return conv(c, op, EMU_CV_I8SAT);
    case RK_OP_CVT_SCALEF32_PK_F32_FP8: case RK_OP_CVT_SCALEF32_PK_F32_BF8: return ew(c, op, emu_h_scale_decode, 0);
    case RK_OP_CVT_SCALEF32_PK_FP8_F32: case RK_OP_CVT_SCALEF32_PK_BF8_F32:
        if (!ew(c, op, emu_h_scale_encode, 0)) return false;
        c->code[c->ncode - 1].imm2 = nan_style(c);
        return true;
    case RK_OP_VMAX: return ew(c, op, emu_h_vmaxmin, 1);
    case RK_OP_VMIN: return ew(c, op, emu_h_vmaxmin, 0);
    case RK_OP_VSUM: case RK_OP_VREDUCE_MAX: case RK_OP_VREDUCE_MIN: {
        if (!ew(c, op, emu_h_vreduce, code == RK_OP_VSUM ? 0 : code == RK_OP_VREDUCE_MAX ? 1 : 2)) return false;
        c->code[c->ncode - 1].m = emu_cc_cnt(c, emu_cc_vt(c, op->in[0]));
        return true;
    }
    case RK_OP_VEXTRACT: {
        if (!vec_move(c, op, emu_h_vextract)) return false;
        c->code[c->ncode - 1].m = emu_cc_cnt(c, emu_cc_vt(c, op->in[0]));
        return true;
    }
    case RK_OP_VINSERT: return vec_move(c, op, emu_h_vinsert);
    case RK_OP_VSPLAT: return vec_move(c, op, emu_h_vsplat);
    case RK_OP_VPACK: {
        uint32_t *a = emu_cc_refs(c, op->nin);
        if (!a || !vec_move(c, op, emu_h_vpack)) return false;
        for (uint32_t i = 0; i < op->nin; i++) a[i] = R(c, op->in[i]);
        c->code[c->ncode - 1].args = a;
        c->code[c->ncode - 1].nargs = op->nin;
        return true;
    }
    case RK_OP_VCONCAT: {
        if (!vec_move(c, op, emu_h_vconcat)) return false;
        c->code[c->ncode - 1].imm = emu_cc_cnt(c, emu_cc_vt(c, op->in[0]));
        c->code[c->ncode - 1].imm2 = emu_cc_cnt(c, emu_cc_vt(c, op->in[1]));
        return true;
    }
    case RK_OP_VSHUFFLE: {
        const rk_attr_val *mv = rk_attrs_get(&op->attrs, "mask");
        uint32_t n = mv ? mv->n : 0;
        int32_t *mask = rk_arena_alloc(&c->P->arena, sizeof(int32_t) * (n ? n : 1));
        if (!mask || !vec_move(c, op, emu_h_vshuffle)) return emu_cc_fail(c, RK_ERR_NOMEM, "out of memory");
        for (uint32_t i = 0; i < n; i++) mask[i] = (int32_t)mv->u.list[i].u.i;
        c->code[c->ncode - 1].aux = mask;
        c->code[c->ncode - 1].imm = emu_cc_cnt(c, emu_cc_vt(c, op->in[0]));
        return true;
    }
    case RK_OP_THREAD_ID: return id_op(c, op, 0);
    case RK_OP_BLOCK_ID: return id_op(c, op, 1);
    case RK_OP_BLOCK_DIM: return id_op(c, op, 2);
    case RK_OP_GRID_DIM: return id_op(c, op, 3);
    case RK_OP_LANE_ID: return id_op(c, op, 4);
    case RK_OP_CLUSTER_ID: return id_op(c, op, 5);
    case RK_OP_CLUSTER_DIM: return id_op(c, op, 6);
    case RK_OP_CLUSTER_RANK: return id_op(c, op, 7);
    case RK_OP_GLOBAL_LOAD: case RK_OP_GLOBAL_LOAD_TYPED: case RK_OP_GLOBAL_LOAD_VN: return gload(c, op);
    case RK_OP_GLOBAL_STORE: case RK_OP_GLOBAL_STORE_TYPED: case RK_OP_GLOBAL_STORE_VN: return gstore(c, op);
    case RK_OP_GLOBAL_PTR_ADD: {
        if (!ew(c, op, emu_h_ptr_add, emu_cc_vt(c, op->in[1]).id == RK_S_I64)) return false;
        return true;
    }
    case RK_OP_PTR_TO_INT: return ew(c, op, emu_h_ptr_to_int, 0);
    case RK_OP_COOP_GLOBAL_STORE: {
        rk_type v = emu_cc_vt(c, op->in[2]);
        if (!gmem_elem_ok(c, op, v)) return false;
        emu_ins *I = add(c, op, emu_h_coop_store);
        if (!I) return false;
        I->a = R(c, op->in[0]);
        I->b = R(c, op->in[1]);
        I->c = R(c, op->in[2]);
        I->m = emu_cc_cnt(c, v);
        I->es = emu_sbytes(emu_cc_esc(c, v));
        I->imm = emu_cc_esc(c, emu_cc_vt(c, op->in[1])) == RK_S_I64;
        I->imm2 = emu_sbytes(rk_type_scalar(rk_type_elem(c->k, emu_cc_vt(c, op->in[0]))));
        return true;
    }
    case RK_OP_SMEM_ALLOC: return true;
    case RK_OP_SMEM_LOAD: case RK_OP_SMEM_LOAD_VN: case RK_OP_SMEM_LOAD_V4: case RK_OP_SMEM_LOAD_VN_F32: {
        rk_type rt = emu_cc_vt(c, op->out[0]);
        if (!gmem_elem_ok(c, op, rt) || !smem_access(c, op, emu_h_sload, op->nin - 1u, emu_cc_lane_bytes(c, rt))) return false;
        c->code[c->ncode - 1].d = R(c, op->out[0]);
        c->code[c->ncode - 1].m = emu_cc_cnt(c, rt);
        return true;
    }
    case RK_OP_SMEM_STORE: case RK_OP_SMEM_STORE_VN: case RK_OP_SMEM_STORE_VN_F32: {
        rk_type v = emu_cc_vt(c, op->in[op->nin - 1u]);
        if (!gmem_elem_ok(c, op, v) || !smem_access(c, op, emu_h_sstore, op->nin - 2u, emu_cc_lane_bytes(c, v))) return false;
        c->code[c->ncode - 1].c = R(c, op->in[op->nin - 1u]);
        c->code[c->ncode - 1].m = emu_cc_cnt(c, v);
        return true;
    }
    case RK_OP_SMEM_STORE_DISTRIBUTED: {
        rk_type v = emu_cc_vt(c, op->in[1]);
        if (!gmem_elem_ok(c, op, v) || !smem_access(c, op, emu_h_sstore_dist, 0, emu_sbytes(emu_cc_esc(c, v)))) return false;
        c->code[c->ncode - 1].a = R(c, op->in[1]);
        c->code[c->ncode - 1].m = emu_cc_cnt(c, v);
        return true;
    }
    case RK_OP_SMEM_ADDR_OF: {
        int32_t si = c->smem[op->in[0].id];
        if (si < 0) return emu_cc_fail(c, RK_ERR_UNSUPPORTED, "emulator: op #%u: not an LDS allocation", c->cur);
        uint64_t a = c->P->smem[si].offset;
        return pool_value(c, op->out[0], &a);
    }
    case RK_OP_SMEM_PTR_ADD: return ew(c, op, emu_int_fn(RK_OP_ADD, 8), 0xff);
    case RK_OP_LDS_ATOMIC_ADD: {
        if (!smem_access(c, op, emu_h_lds_atomic, op->nin - 2u, 4)) return false;
        c->code[c->ncode - 1].d = R(c, op->out[0]);
        c->code[c->ncode - 1].c = R(c, op->in[op->nin - 1u]);
        c->code[c->ncode - 1].sd = emu_cc_esc(c, emu_cc_vt(c, op->out[0]));
        return true;
    }
    case RK_OP_BUFFER_RSRC: {
        if (!ew(c, op, emu_h_rsrc, emu_cc_vt(c, op->in[1]).id == RK_S_I64)) return false;
        c->code[c->ncode - 1].imm2 = c->t->buffer_word3;
        return true;
    }
    case RK_OP_BUFFER_LOAD: case RK_OP_BUFFER_LOAD_F16: case RK_OP_BUFFER_LOAD_BF16: case RK_OP_BUFFER_LOAD_VN:
    case RK_OP_BUFFER_LOAD_VN_F16: case RK_OP_BUFFER_LOAD_VN_BF16:
        return bload(c, op);
    case RK_OP_BUFFER_STORE: case RK_OP_BUFFER_STORE_F16: case RK_OP_BUFFER_STORE_BF16: case RK_OP_BUFFER_STORE_F32:
    case RK_OP_BUFFER_STORE_VN: case RK_OP_BUFFER_STORE_VN_F16: case RK_OP_BUFFER_STORE_VN_BF16:
    case RK_OP_BUFFER_STORE_VN_F32:
        return bstore(c, op);
    case RK_OP_ASYNC_BUFFER_LOAD_LDS: case RK_OP_ASYNC_BUFFER_LOAD_LDS_ADDR: return dma(c, op, 0);
    case RK_OP_GLOBAL_LOAD_LDS: return dma(c, op, 1);
    case RK_OP_ASYNC_COPY: {
        int32_t si = c->smem[op->in[2].id];
        uint32_t *a = emu_cc_refs(c, 2);
        if (si < 0) return emu_cc_fail(c, RK_ERR_UNSUPPORTED, "emulator: op #%u: not an LDS allocation", c->cur);
        emu_ins *I = add(c, op, emu_h_async_copy);
        if (!I || !a) return false;
        int64_t bytes = 4;
        rk_attrs_int(&op->attrs, "bytes", &bytes);
        I->a = R(c, op->in[0]);
        I->b = R(c, op->in[1]);
        I->aux = &c->P->smem[si];
        a[0] = R(c, op->in[3]);
        a[1] = R(c, op->in[4]);
        I->args = a;
        I->nargs = 2;
        I->es = (uint32_t)bytes;
        I->imm = emu_cc_vt(c, op->in[1]).id == RK_S_I64;
        I->imm2 = c->P->smem[si].es;
        return true;
    }
    case RK_OP_ASYNC_COMMIT_GROUP: return add(c, op, emu_h_async_commit) != NULL;
    case RK_OP_ASYNC_WAIT_GROUP: {
        emu_ins *I = add(c, op, emu_h_async_wait);
        if (!I) return false;
        rk_attrs_int(&op->attrs, "n", &I->imm);
        return true;
    }
    case RK_OP_DS_READ_TR16_B64: case RK_OP_DS_READ_TR16_B128: case RK_OP_DS_READ_TR_B8: {
        rk_type rt = emu_cc_vt(c, op->out[0]);
        if (!smem_access(c, op, emu_h_ds_read_tr, op->nin - 1u, emu_sbytes(emu_cc_esc(c, rt)))) return false;
        c->code[c->ncode - 1].d = R(c, op->out[0]);
        c->code[c->ncode - 1].m = emu_cc_cnt(c, rt);
        return true;
    }
    case RK_OP_LDMATRIX: {
        if (!smem_access(c, op, emu_h_ldmatrix, op->nin - 1u, 2)) return false;
        emu_ins *I = &c->code[c->ncode - 1];
        I->d = R(c, op->out[0]);
        rk_attrs_int(&op->attrs, "num", &I->imm);
        I->imm2 = rk_attrs_bool(&op->attrs, "trans", false);
        return true;
    }
    case RK_OP_READFIRSTLANE: return lanes_op(c, op, emu_h_readfirstlane, 0);
    case RK_OP_READLANE: return lanes_op(c, op, emu_h_readlane, 0);
    case RK_OP_WRITELANE: return lanes_op(c, op, emu_h_writelane, 0);
    case RK_OP_PIN_SGPR: return copy_op(c, op);
    case RK_OP_WAVE_BALLOT: return lanes_op(c, op, emu_h_ballot, 0);
    case RK_OP_WAVE_ALL: return lanes_op(c, op, emu_h_vote, 0);
    case RK_OP_WAVE_ANY: return lanes_op(c, op, emu_h_vote, 1);
    case RK_OP_SHUFFLE: {
        static const char *const modes[] = {"idx", "xor", "up", "down"};
        const char *m = rk_attrs_str(&op->attrs, "mode");
        int64_t mode = 0, width = c->W;
        for (int i = 0; m && i < 4; i++)
            if (!strcmp(m, modes[i])) mode = i;
        rk_attrs_int(&op->attrs, "width", &width);
        if (width > (int64_t)c->W)
            return emu_cc_fail(c, RK_ERR_INVALID, "emulator: op #%u: shuffle width %lld exceeds the %u-lane wave of %s",
                         c->cur, (long long)width, c->W, c->t->name);
        if (!lanes_op(c, op, emu_h_shuffle, mode)) return false;
        c->code[c->ncode - 1].imm2 = width;
        return true;
    }
    case RK_OP_DS_BPERMUTE: case RK_OP_DS_BPERMUTE_B64: {
        if (!lanes_op(c, op, emu_h_bpermute, 0)) return false;
        c->code[c->ncode - 1].es = emu_cc_lane_bytes(c, emu_cc_vt(c, op->out[0]));
        return true;
    }
    case RK_OP_DS_SWIZZLE_XOR: {
        int64_t k = 1;
        rk_attrs_int(&op->attrs, "xor_mask", &k);
        return swizzle(c, op, ((uint32_t)k << 10) | 0x1fu);
    }
    case RK_OP_DS_SWIZZLE: {
        int64_t off = 0;
        rk_attrs_int(&op->attrs, "offset", &off);
        return swizzle(c, op, (uint32_t)off);
    }
    case RK_OP_MOV_DPP: case RK_OP_QUAD_PERM: return dpp(c, op);
    case RK_OP_DPP_XOR: case RK_OP_MOV_DPP8: return dpp(c, op);
    case RK_OP_PERMLANE16: case RK_OP_PERMLANEX16: case RK_OP_PERMLANE64:
        return unsupported(c, op, "it needs an RDNA (gfx10+) target, and no emulated target is one");
    case RK_OP_WAVE_REDUCE: {
        static const char *const ops[] = {"umin", "umax", "min", "max", "add", "sub", "and", "or", "xor"};
        const char *r = rk_attrs_str(&op->attrs, "reduce_op");
        int64_t k = -1;
        for (int i = 0; r && i < 9; i++)
            if (!strcmp(r, ops[i])) k = i;
        if (k < 0) return no_handler(c, op);
        return lanes_op(c, op, emu_h_wave_reduce, k);
    }
    case RK_OP_PERMLANE32_SWAP: {
        uint32_t *a = emu_cc_refs(c, 1);
        if (!a || !lanes_op(c, op, emu_h_permlane32_swap, 0)) return false;
        a[0] = R(c, op->out[1]);
        c->code[c->ncode - 1].args = a;
        c->code[c->ncode - 1].nargs = 1;
        return true;
    }
    case RK_OP_PERM_B32: return lanes_op(c, op, emu_h_perm_b32, 0);
    case RK_OP_BYTE_PERM: {
        int64_t sel = 0;
        rk_attrs_int(&op->attrs, "sel", &sel);
        if (!lanes_op(c, op, emu_h_perm_b32, sel)) return false;
        c->code[c->ncode - 1].c = UINT32_MAX;
        return true;
    }
    case RK_OP_ALIGNBYTE: return lanes_op(c, op, emu_h_alignbyte, 0);
    case RK_OP_S_WQM: return lanes_op(c, op, emu_h_wqm, 0);
    case RK_OP_EXEC_AND_SAVEEXEC: return lanes_op(c, op, emu_h_exec, 0);
    case RK_OP_EXEC_OR_SAVEEXEC: return lanes_op(c, op, emu_h_exec, 1);
    case RK_OP_EXEC_XOR: return lanes_op(c, op, emu_h_exec, 2);
    case RK_OP_EXEC_OR: return lanes_op(c, op, emu_h_exec, 3);
    case RK_OP_SYNC: return barrier(c, op, 0);
    case RK_OP_SYNC_LDS_ONLY: return barrier(c, op, 1);
    case RK_OP_S_BARRIER_BARE: return barrier(c, op, 2);
    case RK_OP_SYNC_HALF_BLOCK: return barrier(c, op, 3);
    case RK_OP_NAMED_BARRIER: return barrier(c, op, 4);
    case RK_OP_NAMED_BARRIER_ARRIVE: return barrier(c, op, 5);
    case RK_OP_FENCE: return add(c, op, emu_h_fence) != NULL;
    case RK_OP_S_WAITCNT: {
        emu_ins *I = add(c, op, emu_h_waitcnt);
        if (!I) return false;
        I->imm = -1;
        rk_attrs_int(&op->attrs, "vmcnt", &I->imm);
        return true;
    }
    /* scheduling hints and gfx1250's async counter: nothing to emulate */
    case RK_OP_S_WAIT_ASYNCCNT: case RK_OP_SCHED_BARRIER: case RK_OP_SCHED_GROUP_BARRIER: case RK_OP_IGLP_OPT:
    case RK_OP_S_SETPRIO:
        return nop(c, op);
    case RK_OP_GLOBAL_ATOMIC_ADD: {
        bool f = emu_cc_esc(c, emu_cc_vt(c, op->in[2])) == RK_S_F32;
        return gatomic(c, op, f ? EMU_AT_FADD : EMU_AT_ADD);
    }
    case RK_OP_GLOBAL_ATOMIC_ADD_F32: return gatomic(c, op, EMU_AT_FADD);
    case RK_OP_GLOBAL_ATOMIC_ADD_PK_BF16: return gatomic(c, op, EMU_AT_PK_BF16);
    case RK_OP_GLOBAL_ATOMIC_ADD_PK_F16: return gatomic(c, op, EMU_AT_PK_F16);
    case RK_OP_GLOBAL_ATOMIC: return gatomic(c, op, emu_atomic_kind(rk_attrs_str(&op->attrs, "kind")));
    case RK_OP_GLOBAL_ATOMIC_CAS: return gatomic(c, op, EMU_AT_CAS);
    case RK_OP_GLOBAL_WAIT: {
        emu_ins *I = add(c, op, emu_h_gwait);
        if (!I) return false;
        rk_type pt = emu_cc_vt(c, op->in[0]);
        I->a = R(c, op->in[0]);
        I->b = R(c, op->in[1]);
        I->c = R(c, op->in[2]);
        I->es = emu_cc_lane_bytes(c, emu_cc_vt(c, op->in[2]));
        I->imm = strcmp(rk_attrs_str(&op->attrs, "until"), "uge") == 0;
        I->imm2 = (int64_t)(emu_sbytes(rk_type_scalar(rk_type_elem(c->k, pt))) << 1) | (emu_cc_vt(c, op->in[1]).id == RK_S_I64);
        return true;
    }
    case RK_OP_MMA: return mma(c, op);
    case RK_OP_REGISTER_P_FROM_QK_C: return ew(c, op, emu_h_p_from_qk, 0);
    case RK_OP_INLINE_ASM:
        return unsupported(c, op, "inline assembly cannot run on the host (the kernel needs a GPU for this op)");
    case RK_OP_WGMMA_DESC: case RK_OP_WGMMA: case RK_OP_WGMMA_FENCE: case RK_OP_WGMMA_COMMIT_GROUP:
    case RK_OP_WGMMA_WAIT_GROUP: case RK_OP_FENCE_PROXY_ASYNC: case RK_OP_MBARRIER_INIT: case RK_OP_MBARRIER_ARRIVE:
    case RK_OP_MBARRIER_ARRIVE_EXPECT_TX: case RK_OP_MBARRIER_WAIT: case RK_OP_TMA_LOAD_2D: case RK_OP_SETMAXNREG:
    case RK_OP_TMA_STORE_2D: case RK_OP_BULK_COMMIT_GROUP: case RK_OP_BULK_WAIT_GROUP: case RK_OP_WGMMA_RS:
    case RK_OP_CLUSTER_ARRIVE: case RK_OP_CLUSTER_WAIT: case RK_OP_FENCE_MBARRIER_INIT:
    case RK_OP_MBARRIER_ARRIVE_CLUSTER: case RK_OP_TMA_LOAD_2D_MULTICAST: case RK_OP_TMA_LOAD_4D:
        return emu_cc_hopper(c, op);
    case RK_OP_FOR: return emit_for(c, op);
    case RK_OP_IF: case RK_OP_IF_ELSE: return emit_if(c, op);
    case RK_OP_YIELD: return emit_yield(c, op);
    case RK_OP_RETURN: return emit_return(c, op);
    case RK_OP__COUNT: break;
    }
    return emu_cc_fail(c, RK_ERR_INVALID, "emulator: op #%u has an unknown opcode", c->cur);
}

static bool emit_region(emu_cc *c, const rk_region *r) {
    for (uint32_t i = 0; i < r->nops && !c->failed; i++) {
        const rk_op *op = r->ops[i];
        c->cur++;
        if (!emit_op(c, op)) return false;
    }
    return !c->failed;
}

bool emu_cc_kernel(emu_cc *c) {
    c->cur = UINT32_MAX;            /* pre-incremented to 0 by the first op */
    if (!emu_cc_region(c, rk_kernel_body(c->k))) return false;
    c->cur = c->nops;
    return add(c, NULL, emu_h_end) != NULL;
}
