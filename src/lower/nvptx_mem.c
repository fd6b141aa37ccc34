/* rocke — NVPTX memory families: buffer views as predicated global accesses,
 * tile.async_copy as cp.async with zero-fill, ldmatrix, and (Hopper) the
 * mbarrier and TMA ops. Layer: lower.
 *
 * BUFFER VIEWS. An rsrc is `{ ptr addrspace(1) base, i32 nrec }`: the view's
 * base and its size in bytes (the low 32 bits of num_bytes, as AMD's record
 * count). An access of nb bytes at off = zext(voff) + zext(soff) (64-bit, no
 * wrap) takes one compare for the whole access: off + nb <= nrec loads or
 * stores it whole (one ld/st.global.v4 for 16 bytes); otherwise each granule
 * (the element for 1- and 2-byte scalar ops and the f16/bf16 scalar forms, the
 * dword otherwise — the emulator's rule) is checked and moved alone, reading 0
 * or dropping the write beyond the view. The whole access is assumed
 * naturally aligned (its size up to 16 bytes; 4 for 12), like the builder's
 * vector global accesses; AMD buffer instructions have no such requirement.
 * The aux cache bits have no NVPTX meaning and are ignored. */
#include <stdio.h>

#include "nvptx_int.h"

static rk_type vt(const lw_ctx *cx, rk_value v) { return rk_value_type(cx->k, v); }

/* ---- buffer views ---------------------------------------------------------------------------------- */
void lw_nv_buffer_rsrc(lw_ctx *cx, const rk_op *op) {
    rk_value p = op->in[0], n = op->in[1];
    const char *ty = cx->vd->rsrc_type, *cnt = lw_val(cx, n), *half = lw_tmp(cx, "rsrc");
    if (rk_type_eq(vt(cx, n), RK_T_I64)) {
        cnt = lw_tmp(cx, "nrec");
        lw_ins(cx, "%s = trunc %V to i32", cnt, n);
    }
    lw_ins(cx, "%s = insertvalue %s poison, %V, 0", half, ty, p);
    lw_ins(cx, "%v = insertvalue %s %s, i32 %s, 1", op->out[0], ty, half, cnt);
}

/* Granule of an access of nb bytes (see the header). */
static uint32_t granule(const rk_op *op, uint32_t nb) {
    rk_opcode c = op->code;
    if (c == RK_OP_BUFFER_LOAD_F16 || c == RK_OP_BUFFER_LOAD_BF16 || c == RK_OP_BUFFER_STORE_F16 ||
        c == RK_OP_BUFFER_STORE_BF16)
        return 2;
    if ((c == RK_OP_BUFFER_LOAD || c == RK_OP_BUFFER_STORE) && nb < 4) return nb;
    return 4;
}

typedef struct view {
    const char *base, *nrec64, *off, *addr;   /* i64 texts; addr: ptr addrspace(1) to base + off */
    uint32_t nb, g, align;
    const char *ity;                          /* the granule's integer type */
} view;

/* Unpack the rsrc, form the offset and the address; returns the fast-path
 * condition (the whole access in range). */
static const char *open_view(lw_ctx *cx, const rk_op *op, rk_type t, view *v) {
    v->nb = lw_bytes(cx, t);
    v->g = granule(op, v->nb);
    v->align = (v->nb & (v->nb - 1)) ? 4 : v->nb;
    v->ity = lw_printf(cx, "i%u", 8 * v->g);
    const char *rs = lw_val(cx, op->in[0]), *ty = cx->vd->rsrc_type, *nrec = lw_tmp(cx, "nrec");
    v->base = lw_tmp(cx, "base");
    v->nrec64 = lw_tmp(cx, "nrec");
    lw_ins(cx, "%s = extractvalue %s %s, 0", v->base, ty, rs);
    lw_ins(cx, "%s = extractvalue %s %s, 1", nrec, ty, rs);
    lw_ins(cx, "%s = zext i32 %s to i64", v->nrec64, nrec);
    int64_t so = -1;
    v->off = lw_tmp(cx, "off");
    lw_ins(cx, "%s = zext %V to i64", v->off, op->in[1]);
    if (!lw_const_int(cx, op->in[2], &so) || so != 0) {
        const char *s = lw_tmp(cx, "soff"), *o = lw_tmp(cx, "off");
        lw_ins(cx, "%s = zext %V to i64", s, op->in[2]);
        lw_ins(cx, "%s = add nuw nsw i64 %s, %s", o, v->off, s);
        v->off = o;
    }
    const char *end = lw_tmp(cx, "end"), *in = lw_tmp(cx, "inb");
    v->addr = lw_tmp(cx, "addr");
    lw_ins(cx, "%s = getelementptr inbounds i8, ptr addrspace(1) %s, i64 %s", v->addr, v->base, v->off);
    lw_ins(cx, "%s = add nuw nsw i64 %s, %u", end, v->off, v->nb);
    lw_ins(cx, "%s = icmp ule i64 %s, %s", in, end, v->nrec64);
    return in;
}

/* Granule k's condition and address. */
static const char *granule_ok(lw_ctx *cx, const view *v, uint32_t k, const char **addr) {
    const char *e = lw_tmp(cx, "end"), *ok = lw_tmp(cx, "gok");
    lw_ins(cx, "%s = add nuw nsw i64 %s, %u", e, v->off, (k + 1) * v->g);
    lw_ins(cx, "%s = icmp ule i64 %s, %s", ok, e, v->nrec64);
    *addr = v->addr;
    if (k) {
        *addr = lw_tmp(cx, "gaddr");
        lw_ins(cx, "%s = getelementptr inbounds i8, ptr addrspace(1) %s, i64 %u", *addr, v->addr, k * v->g);
    }
    return ok;
}

static const char *zero_of(lw_ctx *cx, rk_type t) {
    if (rk_type_kind_of(cx->k, t) == RK_TK_VEC) return "zeroinitializer";
    return lw_is_float(cx, t) ? lw_float_lit(cx, t, 0.0) : "0";
}

void lw_nv_buffer_load(lw_ctx *cx, const rk_op *op) {
    rk_value r = op->out[0];
    rk_type t = vt(cx, r);
    view v;
    const char *in = open_view(cx, op, t, &v), *ty = lw_ty(cx, t);
    const char *F = lw_label(cx, "buf.fast"), *S = lw_label(cx, "buf.slow"), *J = lw_label(cx, "buf.join");
    const char *pred = lw_cur_block(cx), *fast = lw_tmp(cx, "buf");
    uint32_t n = v.nb / v.g;
    lw_condbr(cx, in, F, n == 1 ? J : S);
    lw_block(cx, F);
    lw_ins(cx, "%s = load %s, ptr addrspace(1) %s, align %u", fast, ty, v.addr, v.align);
    lw_br(cx, J);
    if (n == 1) {
        lw_block(cx, J);
        lw_ins(cx, "%v = phi %s [ %s, %%%s ], [ %s, %%%s ]", r, ty, fast, F, zero_of(cx, t), pred);
        return;
    }
    /* the tail: granule by granule into an <n x iG> */
    lw_block(cx, S);
    const char *vty = lw_printf(cx, "<%u x %s>", n, v.ity), *acc = "zeroinitializer";
    for (uint32_t k = 0; k < n; k++) {
        const char *a, *ok = granule_ok(cx, &v, k, &a), *from = lw_cur_block(cx);
        const char *L = lw_label(cx, "buf.elt"), *N = lw_label(cx, "buf.next");
        const char *x = lw_tmp(cx, "elt"), *ins = lw_tmp(cx, "ins"), *m = lw_tmp(cx, "acc");
        lw_condbr(cx, ok, L, N);
        lw_block(cx, L);
        lw_ins(cx, "%s = load %s, ptr addrspace(1) %s, align %u", x, v.ity, a, v.g);
        lw_ins(cx, "%s = insertelement %s %s, %s %s, i32 %u", ins, vty, acc, v.ity, x, k);
        lw_br(cx, N);
        lw_block(cx, N);
        lw_ins(cx, "%s = phi %s [ %s, %%%s ], [ %s, %%%s ]", m, vty, ins, L, acc, from);
        acc = m;
    }
    const char *slow = lw_tmp(cx, "buf"), *end = lw_cur_block(cx);
    lw_ins(cx, "%s = bitcast %s %s to %s", slow, vty, acc, ty);
    lw_br(cx, J);
    lw_block(cx, J);
    lw_ins(cx, "%v = phi %s [ %s, %%%s ], [ %s, %%%s ]", r, ty, fast, F, slow, end);
}

void lw_nv_buffer_store(lw_ctx *cx, const rk_op *op) {
    rk_value x = op->in[3];
    rk_type t = vt(cx, x);
    view v;
    const char *in = open_view(cx, op, t, &v);
    const char *F = lw_label(cx, "buf.fast"), *S = lw_label(cx, "buf.slow"), *J = lw_label(cx, "buf.join");
    uint32_t n = v.nb / v.g;
    lw_condbr(cx, in, F, n == 1 ? J : S);
    lw_block(cx, F);
    lw_ins(cx, "store %V, ptr addrspace(1) %s, align %u", x, v.addr, v.align);
    lw_br(cx, J);
    if (n > 1) {
        lw_block(cx, S);
        const char *vty = lw_printf(cx, "<%u x %s>", n, v.ity), *bits = lw_tmp(cx, "bits");
        lw_ins(cx, "%s = bitcast %V to %s", bits, x, vty);
        for (uint32_t k = 0; k < n; k++) {
            const char *a, *ok = granule_ok(cx, &v, k, &a), *e = lw_tmp(cx, "elt");
            const char *L = lw_label(cx, "buf.elt"), *N = lw_label(cx, "buf.next");
            lw_condbr(cx, ok, L, N);
            lw_block(cx, L);
            lw_ins(cx, "%s = extractelement %s %s, i32 %u", e, vty, bits, k);
            lw_ins(cx, "store %s %s, ptr addrspace(1) %s, align %u", v.ity, e, a, v.g);
            lw_br(cx, N);
            lw_block(cx, N);
        }
        lw_br(cx, J);
    }
    lw_block(cx, J);
}

/* ---- cp.async ---------------------------------------------------------------------------------------------- */
/* A global pointer operand as ptr addrspace(1) (flat pointers are cast). */
static const char *global_ptr(lw_ctx *cx, rk_value p) {
    if (rk_type_space(cx->k, vt(cx, p)) != RK_AS_FLAT) return lw_val(cx, p);
    const char *g = lw_tmp(cx, "gptr");
    lw_ins(cx, "%s = addrspacecast %V to ptr addrspace(1)", g, p);
    return g;
}

const char *lw_nv_smem_elem(lw_ctx *cx, rk_value smem, rk_value idx) { return lw_smem_flat(cx, smem, lw_val(cx, idx)); }

/* tile.async_copy: cp.async.{ca,cg}.shared.global [dst], [src], bytes,
 * src-size; src-size 0 (valid false) reads nothing and zero-fills. 16-byte
 * copies take .cg (L2 only: the data is staged in shared memory anyway). */
static void async_copy(lw_ctx *cx, const rk_op *op) {
    rk_value src = op->in[0], valid = op->in[4];
    int64_t bytes = lw_attr_int(op, "bytes", 4), always = 0;
    const char *g = lw_tmp(cx, "src"), *size = lw_printf(cx, "%lld", (long long)bytes);
    lw_ins(cx, "%s = getelementptr inbounds %T, ptr addrspace(1) %s, %V", g, rk_type_elem(cx->k, vt(cx, src)),
           global_ptr(cx, src), op->in[1]);
    const char *d = lw_nv_smem_elem(cx, op->in[2], op->in[3]);
    if (!lw_const_int(cx, valid, &always) || !always) {
        size = lw_tmp(cx, "srcsize");
        lw_ins(cx, "%s = select %V, i32 %l, i32 0", size, valid, bytes);
    }
    const char *name = bytes == 16 ? "cg.shared.global.16" : lw_printf(cx, "ca.shared.global.%lld", (long long)bytes);
    lw_declare(cx, NV_D_CP_ASYNC, lw_printf(cx, "declare void @llvm.nvvm.cp.async.%s.s(ptr addrspace(3), ptr addrspace(1), i32)", name));
    lw_ins(cx, "call void @llvm.nvvm.cp.async.%s.s(ptr addrspace(3) %s, ptr addrspace(1) %s, i32 %s)", name, d, g, size);
}

void lw_nv_async_copy(lw_ctx *cx, const rk_op *op) {
    if (op->code == RK_OP_ASYNC_COPY) {
        async_copy(cx, op);
    } else if (op->code == RK_OP_ASYNC_COMMIT_GROUP) {
        lw_declare(cx, NV_D_CP_ASYNC, "declare void @llvm.nvvm.cp.async.commit.group()");
        lw_ins(cx, "call void @llvm.nvvm.cp.async.commit.group()");
    } else {
        RK_ASSERT(op->code == RK_OP_ASYNC_WAIT_GROUP, "lw_nv_async_copy called for an op outside the cp.async family");
        lw_declare(cx, NV_D_CP_ASYNC, "declare void @llvm.nvvm.cp.async.wait.group(i32)");
        lw_ins(cx, "call void @llvm.nvvm.cp.async.wait.group(i32 %l)", lw_attr_int(op, "n", 0));
    }
}

/* ---- ldmatrix ------------------------------------------------------------------------------------------------ */
/* Each lane's row address; num 8x8 b16 matrices land one i32 per matrix. */
void lw_nv_ldmatrix(lw_ctx *cx, const rk_op *op) {
    int64_t num = lw_attr_int(op, "num", 1);
    const char *a = lw_smem_addr(cx, op->in[0], op->in + 1, op->nin - 1u);
    const char *name = lw_printf(cx, "m8n8.x%lld%s.b16", (long long)num, lw_attr_bool(op, "trans", false) ? ".trans" : "");
    if (num == 1) {
        const char *x = lw_tmp(cx, "ldm");
        lw_declare(cx, NV_D_LDMATRIX, lw_printf(cx, "declare i32 @llvm.nvvm.ldmatrix.sync.aligned.%s.p3(ptr addrspace(3))", name));
        lw_ins(cx, "%s = call i32 @llvm.nvvm.ldmatrix.sync.aligned.%s.p3(ptr addrspace(3) %s)", x, name, a);
        lw_ins(cx, "%v = insertelement <1 x i32> poison, i32 %s, i32 0", op->out[0], x);
        return;
    }
    const char *st = num == 2 ? "{ i32, i32 }" : "{ i32, i32, i32, i32 }", *s = lw_tmp(cx, "ldm"), *acc = "poison";
    lw_declare(cx, NV_D_LDMATRIX,
               lw_printf(cx, "declare %s @llvm.nvvm.ldmatrix.sync.aligned.%s.p3(ptr addrspace(3))", st, name));
    lw_ins(cx, "%s = call %s @llvm.nvvm.ldmatrix.sync.aligned.%s.p3(ptr addrspace(3) %s)", s, st, name, a);
    for (int64_t i = 0; i < num; i++) {
        const char *e = lw_tmp(cx, "ldm");
        lw_ins(cx, "%s = extractvalue %s %s, %l", e, st, s, i);
        if (i + 1 == num) {
            lw_ins(cx, "%v = insertelement %t %s, i32 %s, i32 %l", op->out[0], op->out[0], acc, e, i);
        } else {
            const char *n = lw_tmp(cx, "ins");
            lw_ins(cx, "%s = insertelement %t %s, i32 %s, i32 %l", n, op->out[0], acc, e, i);
            acc = n;
        }
    }
}

/* ---- memref.global_wait ---------------------------------------------------------------------------------- */
/* Inline PTX rather than an LLVM atomic load: LLVM 22 turns a load from a
 * readonly noalias parameter into ld.global.nc and then crashes selecting
 * the atomic one. The probe is a strong acquire load at the op's scope. */
void lw_nv_global_wait(lw_ctx *cx, const rk_op *op) {
    rk_value v = op->in[2];
    bool wide = lw_bytes(cx, vt(cx, v)) == 8, uge = strcmp(lw_attr_str(op, "until", "ne"), "uge") == 0;
    const char *scope = lw_attr_str(op, "scope", "device");
    const char *ps = !strcmp(scope, "block") ? "cta" : !strcmp(scope, "system") ? "sys" : "gpu";
    const char *p = lw_tmp(cx, "gwait.p"), *L = lw_label(cx, "gwait.loop"), *D = lw_label(cx, "gwait.done");
    const char *cur = lw_tmp(cx, "gwait"), *ok = lw_tmp(cx, "gwait.ok");
    lw_ins(cx, "%s = getelementptr inbounds %T, %V, %V", p, rk_type_elem(cx->k, vt(cx, op->in[0])), op->in[0], op->in[1]);
    lw_br(cx, L);
    lw_block(cx, L);
    lw_ins(cx, "%s = call %t asm sideeffect \"ld.acquire.%s.global.b%u $0, [$1];\", \"=%s,l,~{memory}\"(%t %s)", cur, v, ps,
           wide ? 64u : 32u, wide ? "l" : "r", op->in[0], p);
    lw_ins(cx, "%s = icmp %s %t %s, %v", ok, uge ? "uge" : "ne", v, cur, v);
    lw_condbr(cx, ok, D, L);
    lw_block(cx, D);
}

/* ---- Hopper: mbarriers, TMA, the async-proxy fence ------------------------------------------------------- */
/* The mbarrier ops, the TMA copy and the proxy fence are inline PTX: their
 * LLVM intrinsics changed shape between LLVM 20 and 22, the PTX did not.
 * Shared addresses travel as 64-bit shared-window addresses ("l"). */
static const char *mbar(lw_ctx *cx, const rk_op *op, uint32_t at) { return lw_nv_smem_elem(cx, op->in[at], op->in[at + 1]); }

static void mbarrier_wait(lw_ctx *cx, const rk_op *op) {
    const char *b = mbar(cx, op, 0), *W = lw_label(cx, "mbar.wait"), *D = lw_label(cx, "mbar.done");
    const char *r = lw_tmp(cx, "mbar.ok"), *c = lw_tmp(cx, "mbar.ok");
    lw_br(cx, W);
    lw_block(cx, W);
    lw_ins(cx, "%s = call i32 asm sideeffect \"{\\0A.reg .pred p;\\0Ambarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;"
               "\\0Aselp.b32 $0, 1, 0, p;\\0A}\", \"=r,l,r,~{memory}\"(ptr addrspace(3) %s, %V)", r, b, op->in[2]);
    lw_ins(cx, "%s = icmp ne i32 %s, 0", c, r);
    lw_condbr(cx, c, D, W);
    lw_block(cx, D);
}

/* the destination must be 128-byte aligned: the pool must be (some
 * allocation asks align >= 128) and the offset, where it is known, too */
static bool tma_dst_aligned(lw_ctx *cx, const rk_op *op) {
    rk_value dst = op->in[1];
    int64_t idx = 0;
    uint64_t at = cx->smem_off[dst.id];
    if (lw_const_int(cx, op->in[2], &idx)) at += (uint64_t)idx * lw_bytes(cx, rk_type_elem(cx->k, vt(cx, dst)));
    if (at % 128 || cx->pool_align < 128) {
        lw_error(cx, op, RK_ERR_INVALID, "the TMA destination is at shared offset %llu, not 128-byte aligned (give the "
                 "allocation align = 128 and a multiple-of-128-byte index)", (unsigned long long)at);
        return false;
    }
    return true;
}

static void tma_load_2d(lw_ctx *cx, const rk_op *op) {
    if (!tma_dst_aligned(cx, op)) return;
    const char *d = lw_nv_smem_elem(cx, op->in[1], op->in[2]), *b = mbar(cx, op, 3);
    lw_ins(cx, "call void asm sideeffect \"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
               "[$0], [$1, {$2, $3}], [$4];\", \"l,l,r,r,l,~{memory}\"(ptr addrspace(3) %s, ptr %v, %V, %V, ptr addrspace(3) %s)",
           d, op->in[0], op->in[5], op->in[6], b);
}

/* A 4-D box: coordinates innermost first (signed; outside the tensor reads zeros). */
static void tma_load_4d(lw_ctx *cx, const rk_op *op) {
    if (!tma_dst_aligned(cx, op)) return;
    const char *d = lw_nv_smem_elem(cx, op->in[1], op->in[2]), *b = mbar(cx, op, 3);
    lw_ins(cx, "call void asm sideeffect \"cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
               "[$0], [$1, {$2, $3, $4, $5}], [$6];\", \"l,l,r,r,r,r,l,~{memory}\"(ptr addrspace(3) %s, ptr %v, %V, %V, %V, %V, "
               "ptr addrspace(3) %s)", d, op->in[0], op->in[5], op->in[6], op->in[7], op->in[8], b);
}

/* the source must be 128-byte aligned, like a TMA destination */
static void tma_store_2d(lw_ctx *cx, const rk_op *op) {
    rk_value src = op->in[1];
    int64_t idx = 0;
    uint64_t at = cx->smem_off[src.id];
    if (lw_const_int(cx, op->in[2], &idx)) at += (uint64_t)idx * lw_bytes(cx, rk_type_elem(cx->k, vt(cx, src)));
    if (at % 128 || cx->pool_align < 128) {
        lw_error(cx, op, RK_ERR_INVALID, "the TMA store source is at shared offset %llu, not 128-byte aligned (give "
                 "the allocation align = 128 and a multiple-of-128-byte index)", (unsigned long long)at);
        return;
    }
    const char *s = lw_nv_smem_elem(cx, src, op->in[2]);
    lw_ins(cx, "call void asm sideeffect \"cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$2, $3}], [$1];\", "
               "\"l,l,r,r,~{memory}\"(ptr %v, ptr addrspace(3) %s, %V, %V)", op->in[0], s, op->in[3], op->in[4]);
}

static void bulk_wait(lw_ctx *cx, const rk_op *op) {
    const char *rd = lw_attr_bool(op, "read", false) ? ".read" : "";
    lw_declare(cx, NV_D_CP_ASYNC, lw_printf(cx, "declare void @llvm.nvvm.cp.async.bulk.wait.group%s(i32 immarg)", rd));
    lw_ins(cx, "call void @llvm.nvvm.cp.async.bulk.wait.group%s(i32 %l)", rd, lw_attr_int(op, "n", 0));
}

/* The CTA mask is the low 16 bits of the i32 operand (.b16: "h"). Every
 * destination block gets the box at dst's offset and the complete_tx at the
 * mbarrier's offset in its own shared memory. */
static void tma_load_2d_multicast(lw_ctx *cx, const rk_op *op) {
    if (!tma_dst_aligned(cx, op)) return;
    const char *d = lw_nv_smem_elem(cx, op->in[1], op->in[2]), *b = mbar(cx, op, 3), *m = lw_tmp(cx, "ctamask");
    lw_ins(cx, "%s = trunc %V to i16", m, op->in[7]);
    lw_ins(cx, "call void asm sideeffect \"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               ".multicast::cluster [$0], [$1, {$2, $3}], [$4], $5;\", \"l,l,r,r,l,h,~{memory}\"(ptr addrspace(3) %s, ptr %v, "
               "%V, %V, ptr addrspace(3) %s, i16 %s)", d, op->in[0], op->in[5], op->in[6], b, m);
}

/* mapa turns this block's shared address into the same offset in the block
 * of rank r; the arrival there releases at cluster scope (no state comes
 * back from a remote barrier: the sink '_'). */
static void mbarrier_arrive_cluster(lw_ctx *cx, const rk_op *op) {
    const char *b = mbar(cx, op, 0);
    lw_ins(cx, "call void asm sideeffect \"{\\0A.reg .b64 ra;\\0Amapa.shared::cluster.u64 ra, $0, $1;\\0A"
               "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\\0A}\", \"l,r,~{memory}\"(ptr addrspace(3) %s, %V)",
           b, op->in[2]);
}

void lw_nv_hopper_mem(lw_ctx *cx, const rk_op *op) {
    if (op->code == RK_OP_FENCE_PROXY_ASYNC) {
        /* global: generic-proxy stores to global memory that TMA reads later (a staged copy) */
        bool global = !strcmp(lw_attr_str(op, "space", "shared"), "global");
        lw_ins(cx, "call void asm sideeffect \"fence.proxy.async.%s;\", \"~{memory}\"()", global ? "global" : "shared::cta");
    } else if (op->code == RK_OP_MBARRIER_INIT) {
        const char *b = mbar(cx, op, 0);
        lw_declare(cx, NV_D_MBAR, "declare void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3), i32)");
        lw_ins(cx, "call void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3) %s, %V)", b, op->in[2]);
    } else if (op->code == RK_OP_MBARRIER_ARRIVE) {
        const char *b = mbar(cx, op, 0), *st = lw_tmp(cx, "mbar.state");
        lw_declare(cx, NV_D_MBAR, "declare i64 @llvm.nvvm.mbarrier.arrive.shared(ptr addrspace(3))");
        lw_ins(cx, "%s = call i64 @llvm.nvvm.mbarrier.arrive.shared(ptr addrspace(3) %s)", st, b);
    } else if (op->code == RK_OP_MBARRIER_ARRIVE_EXPECT_TX) {
        const char *b = mbar(cx, op, 0);
        lw_ins(cx, "call void asm sideeffect \"mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;\", "
                   "\"l,r,~{memory}\"(ptr addrspace(3) %s, %V)", b, op->in[2]);
    } else if (op->code == RK_OP_MBARRIER_WAIT) {
        mbarrier_wait(cx, op);
    } else if (op->code == RK_OP_TMA_STORE_2D) {
        tma_store_2d(cx, op);
    } else if (op->code == RK_OP_BULK_COMMIT_GROUP) {
        lw_declare(cx, NV_D_CP_ASYNC, "declare void @llvm.nvvm.cp.async.bulk.commit.group()");
        lw_ins(cx, "call void @llvm.nvvm.cp.async.bulk.commit.group()");
    } else if (op->code == RK_OP_BULK_WAIT_GROUP) {
        bulk_wait(cx, op);
    } else if (op->code == RK_OP_FENCE_MBARRIER_INIT) {
        lw_declare(cx, NV_D_MBAR, "declare void @llvm.nvvm.fence.mbarrier_init.release.cluster()");
        lw_ins(cx, "call void @llvm.nvvm.fence.mbarrier_init.release.cluster()");
    } else if (op->code == RK_OP_MBARRIER_ARRIVE_CLUSTER) {
        mbarrier_arrive_cluster(cx, op);
    } else if (op->code == RK_OP_TMA_LOAD_2D_MULTICAST) {
        tma_load_2d_multicast(cx, op);
    } else if (op->code == RK_OP_TMA_LOAD_4D) {
        tma_load_4d(cx, op);
    } else {
        RK_ASSERT(op->code == RK_OP_TMA_LOAD_2D, "lw_nv_hopper_mem called for an op outside the Hopper memory family");
        tma_load_2d(cx, op);
    }
}
