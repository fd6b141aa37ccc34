/* rocke — AMDGPU memory families: buffer resources and raw buffer
 * loads/stores (integer forms + bitcasts, so a 2-byte element clamps alone
 * at a tail), DMA copies into LDS (buffer and global forms), the portable
 * tile.async_copy as a synchronous copy, and the gfx950 transposing LDS
 * reads. Layer: lower. */
#include <stdio.h>

#include "amdgpu_int.h"

static rk_type vt(const lw_ctx *cx, rk_value v) { return rk_value_type(cx->k, v); }

/* ---- buffer resources --------------------------------------------------------------------------- */
void lw_amd_buffer_rsrc(lw_ctx *cx, const rk_op *op) {
    rk_value p = op->in[0], n = op->in[1];
    unsigned as = cx->vd->as_num[rk_type_space(cx->k, vt(cx, p))];
    uint32_t w3 = cx->t->buffer_word3;
    bool n64 = rk_type_eq(vt(cx, n), RK_T_I64);
    const char *cnt = lw_val(cx, n);
    if (cx->flavor == RK_LLVM20) {
        /* LLVM <= 20: i32 record count, only the base pointer is mangled */
        if (n64) {
            cnt = lw_tmp(cx, "nrec");
            lw_ins(cx, "%s = trunc %V to i32", cnt, n);
        }
        lw_declare(cx, AMD_D_MAKE_RSRC,
                   lw_printf(cx, "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p%u(ptr addrspace(%u), i16, i32, "
                                 "i32)", as, as));
        lw_ins(cx, "%v = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p%u(%V, i16 0, i32 %s, i32 %u)", op->out[0],
               as, p, cnt, w3);
        return;
    }
    if (!n64) {
        cnt = lw_tmp(cx, "nrec");
        lw_ins(cx, "%s = zext %V to i64", cnt, n);
    }
    lw_declare(cx, AMD_D_MAKE_RSRC,
               lw_printf(cx, "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p%u(ptr addrspace(%u), i16, i64, "
                             "i32)", as, as));
    lw_ins(cx, "%v = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p%u(%V, i16 0, i64 %s, i32 %u)", op->out[0], as,
           p, cnt, w3);
}

/* The integer form moving `bits`: i8 i16 i32 v2i32 v3i32 v4i32. */
static void int_form(uint32_t bits, const char **ty, const char **m) {
    switch (bits) {
    case 8: *ty = "i8"; *m = "i8"; return;
    case 16: *ty = "i16"; *m = "i16"; return;
    case 32: *ty = "i32"; *m = "i32"; return;
    case 64: *ty = "<2 x i32>"; *m = "v2i32"; return;
    case 96: *ty = "<3 x i32>"; *m = "v3i32"; return;
    case 128: *ty = "<4 x i32>"; *m = "v4i32"; return;
    default: rk_bug("buffer access width outside 1/2/4/8/12/16 bytes (verified)");
    }
}

void lw_amd_buffer_load(lw_ctx *cx, const rk_op *op) {
    rk_value r = op->out[0];
    const char *ty, *m, *rt = lw_vty(cx, r);
    int_form(rk_type_bits(cx->k, vt(cx, r)), &ty, &m);
    if (!lw_seen(cx, AMD_D_BUFFER_LOAD, 0, rk_type_bits(cx->k, vt(cx, r))))
        lw_declare(cx, AMD_D_BUFFER_LOAD,
                   lw_printf(cx, "declare %s @llvm.amdgcn.raw.ptr.buffer.load.%s(ptr addrspace(8), i32, i32, i32)", ty, m));
    bool direct = strcmp(ty, rt) == 0;
    const char *dst = direct ? lw_val(cx, r) : lw_tmp(cx, "buf");
    lw_ins(cx, "%s = call %s @llvm.amdgcn.raw.ptr.buffer.load.%s(%V, %V, %V, i32 %l)", dst, ty, m, op->in[0], op->in[1],
           op->in[2], lw_attr_int(op, "aux", 0));
    if (!direct) lw_ins(cx, "%v = bitcast %s %s to %s", r, ty, dst, rt);
}

void lw_amd_buffer_store(lw_ctx *cx, const rk_op *op) {
    rk_value v = op->in[3];
    const char *ty, *m, *x = lw_val(cx, v);
    int_form(rk_type_bits(cx->k, vt(cx, v)), &ty, &m);
    if (strcmp(ty, lw_vty(cx, v)) != 0) {
        x = lw_tmp(cx, "bits");
        lw_ins(cx, "%s = bitcast %V to %s", x, v, ty);
    }
    if (!lw_seen(cx, AMD_D_BUFFER_STORE, 0, rk_type_bits(cx->k, vt(cx, v))))
        lw_declare(cx, AMD_D_BUFFER_STORE,
                   lw_printf(cx, "declare void @llvm.amdgcn.raw.ptr.buffer.store.%s(%s, ptr addrspace(8), i32, i32, i32)",
                             m, ty));
    lw_ins(cx, "call void @llvm.amdgcn.raw.ptr.buffer.store.%s(%s %s, %V, %V, %V, i32 %l)", m, ty, x, op->in[0],
           op->in[1], op->in[2], lw_attr_int(op, "aux", 0));
}

/* ---- DMA into LDS ----------------------------------------------------------------------------------- */
/* An LDS destination operand: an allocation, or an i64 LDS address. */
static const char *lds_ptr(lw_ctx *cx, rk_value v) {
    if (rk_type_kind_of(cx->k, vt(cx, v)) == RK_TK_SMEM) return lw_val(cx, v);
    const char *p = lw_tmp(cx, "ldsp");
    lw_ins(cx, "%s = inttoptr %V to ptr addrspace(3)", p, v);
    return p;
}

/* 12- and 16-byte lanes exist only on gfx950 (LLVM's selector aborts on
 * them elsewhere), so they are refused here with the sizes that work. */
static bool wide_ok(lw_ctx *cx, const rk_op *op, int64_t bytes) {
    if (bytes <= 4 || (cx->t->features & RK_FEAT_GFX950)) return true;
    return lw_error(cx, op, RK_ERR_UNSUPPORTED,
                    "%lld bytes per lane needs gfx950; %s loads 1, 2 or 4 bytes per lane into LDS (dwords = 1)",
                    (long long)bytes, cx->t->name);
}

void lw_amd_async_buffer_lds(lw_ctx *cx, const rk_op *op) {
    int64_t bytes = 4 * lw_attr_int(op, "dwords", 1);
    if (!wide_ok(cx, op, bytes)) return;
    const char *l = lds_ptr(cx, op->in[1]);
    lw_declare(cx, AMD_D_BUFFER_LOAD_LDS,
               "declare void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32, i32, i32, "
               "i32, i32)");
    lw_ins(cx, "call void @llvm.amdgcn.raw.ptr.buffer.load.lds(%V, ptr addrspace(3) %s, i32 %l, %V, %V, i32 0, i32 %l)",
           op->in[0], l, bytes, op->in[2], op->in[3], lw_attr_int(op, "aux", 0));
}

void lw_amd_global_load_lds(lw_ctx *cx, const rk_op *op) {
    int64_t bytes = lw_attr_int(op, "size_bytes", 4);
    if (!wide_ok(cx, op, bytes)) return;
    rk_value p = op->in[0];
    const char *base = lw_val(cx, p);
    if (rk_type_space(cx->k, vt(cx, p)) != RK_AS_GLOBAL) {
        base = lw_tmp(cx, "gptr");
        lw_ins(cx, "%s = addrspacecast %V to ptr addrspace(1)", base, p);
    }
    const char *src = lw_tmp(cx, "gep");
    lw_ins(cx, "%s = getelementptr inbounds i8, ptr addrspace(1) %s, %V", src, base, op->in[1]);
    const char *l = lds_ptr(cx, op->in[2]);
    lw_declare(cx, AMD_D_GLOBAL_LOAD_LDS,
               "declare void @llvm.amdgcn.global.load.lds(ptr addrspace(1), ptr addrspace(3), i32, i32, i32)");
    lw_ins(cx, "call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %s, ptr addrspace(3) %s, i32 %l, i32 0, i32 %l)",
           src, l, bytes, lw_attr_int(op, "aux", 0));
}

/* tile.async_copy on AMD: a plain copy that completes before the next op, so
 * commit/wait groups need no code. The load sits behind a branch on `valid`
 * (an invalid source index may point anywhere); invalid lanes store zeros.
 * Source and destination are aligned to `bytes`, as cp.async requires. */
void lw_amd_async_copy(lw_ctx *cx, const rk_op *op) {
    rk_value src = op->in[0], dst = op->in[2];
    rk_type e = rk_type_elem(cx->k, vt(cx, src));
    int64_t bytes = lw_attr_int(op, "bytes", 4);
    uint32_t n = (uint32_t)(bytes / lw_bytes(cx, e));
    const char *et = lw_ty(cx, e);
    const char *ty = n == 1 ? et : lw_printf(cx, "<%u x %s>", n, et);
    const char *L = lw_label(cx, "copy.load"), *J = lw_label(cx, "copy.join");
    const char *g = lw_tmp(cx, "gep"), *x = lw_tmp(cx, "copy"), *val = lw_tmp(cx, "copy.val");
    const char *pred = lw_cur_block(cx);
    lw_condbr(cx, lw_val(cx, op->in[4]), L, J);
    lw_block(cx, L);
    lw_ins(cx, "%s = getelementptr inbounds %s, %V, %V", g, et, src, op->in[1]);
    lw_ins(cx, "%s = load %s, %t %s, align %l", x, ty, src, g, bytes);
    lw_br(cx, J);
    lw_block(cx, J);
    lw_ins(cx, "%s = phi %s [ zeroinitializer, %%%s ], [ %s, %%%s ]", val, ty, pred, x, L);
    const char *d = lw_smem_flat(cx, dst, lw_val(cx, op->in[3]));
    lw_ins(cx, "store %s %s, %t %s, align %l", ty, val, dst, d, bytes);
}

/* ---- transposing LDS reads (gfx950) ----------------------------------------------------------------- */
static const char *tr_call(lw_ctx *cx, const char *addr, const char *what, const char *ty, const char *m) {
    const char *t = lw_tmp(cx, "tr");
    lw_declare(cx, AMD_D_DS_READ_TR, lw_printf(cx, "declare %s @llvm.amdgcn.ds.read.%s.%s(ptr addrspace(3))", ty, what, m));
    lw_ins(cx, "%s = call %s @llvm.amdgcn.ds.read.%s.%s(ptr addrspace(3) %s)", t, ty, what, m, addr);
    return t;
}

/* tr16_b64: ds_read_b64_tr_b16; tr_b8: ds_read_b64_tr_b8. gfx950 has no
 * 128-bit transposing read, so tr16_b128 is two b64 reads, at the lane's
 * address and 8 bytes after it, concatenated. */
void lw_amd_ds_read_tr(lw_ctx *cx, const rk_op *op) {
    rk_value r = op->out[0];
    const char *a = lw_smem_addr(cx, op->in[0], op->in + 1, op->nin - 1u), *bits;
    const char *ity = "<4 x i16>";
    if (op->code == RK_OP_DS_READ_TR_B8) {
        ity = "<2 x i32>";
        bits = tr_call(cx, a, "tr8.b64", ity, "v2i32");
    } else if (op->code == RK_OP_DS_READ_TR16_B64) {
        bits = tr_call(cx, a, "tr16.b64", ity, "v4i16");
    } else {
        const char *a2 = lw_tmp(cx, "lds");
        lw_ins(cx, "%s = getelementptr inbounds i8, ptr addrspace(3) %s, i32 8", a2, a);
        const char *lo = tr_call(cx, a, "tr16.b64", ity, "v4i16"), *hi = tr_call(cx, a2, "tr16.b64", ity, "v4i16");
        bits = lw_tmp(cx, "tr");
        ity = "<8 x i16>";
        lw_ins(cx, "%s = shufflevector <4 x i16> %s, <4 x i16> %s, "
                   "<8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>",
               bits, lo, hi);
    }
    lw_ins(cx, "%v = bitcast %s %s to %t", r, ity, bits, r);
}
