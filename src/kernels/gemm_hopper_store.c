/* rocke — the GEMM Hopper path's TMA-store epilogue (epilogue=tma): each
 * consumer warpgroup runs the chain on its m64nN accumulators, writes the
 * results in out_dtype into its own 64 x tile N staging tile in shared
 * memory, makes them visible to the async proxy, and its thread 0 stores
 * the tile with TMA boxes (C_map; a box skips what lies outside C, so M
 * and N tails need no masks) and commits a bulk group. Where tile N spans
 * whole 128-byte rows (kn_gemm_hopper_cstage_swizzled) the staging tile is
 * 128-byte rows swizzled as the map's 128-byte mode, one box per 128
 * bytes of columns: the accumulator layout writes 8 rows x 4 lanes' pairs
 * per instruction, which in plain row-major rows of tile N elements all
 * land on 8 banks (8-way conflicts); swizzled, on 32. Before a consumer
 * rewrites its tile (the next tile of a persistent walk), thread 0 waits
 * until that group has read it; the warpgroup meets on its own named
 * barrier. Layer: kernels. */
#include "gemm_hopper.h"
#include "rocke/tile_lds.h"

/* Named barriers 1, 2: one per consumer warpgroup (0 is the block's). */
enum { STAGE_BARRIER0 = 1 };

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

/* The 128 threads of consumer cw meet (cw is uniform inside a warpgroup). */
static void warpgroup_sync(kn_hk *h, rk_value cw) {
    rk_kernel *k = h->k;
    uint32_t n = kn_gemm_hopper_consumers(h->s);
    for (uint32_t c = 0; c < n; c++) {
        rk_value cc = c32(k, c);
        rk_value mine = rk_build_cmp(k, "eq", cw, cc);
        rk_if_begin(k, mine);
        rk_build_named_barrier(k, STAGE_BARRIER0 + c, 128);
        rk_if_end(k, NULL, 0);
    }
}

static void wait_read(kn_hk *h, rk_value twg, bool read) {
    rk_kernel *k = h->k;
    rk_value zero = c32(k, 0);
    rk_value t0 = rk_build_cmp(k, "eq", twg, zero);
    rk_if_begin(k, t0);
    rk_bulk_wait_group_opts o = {.read = {read, true}};
    rk_build_bulk_wait_group_ex(k, 0, read ? &o : NULL);
    rk_if_end(k, NULL, 0);
}

/* Element index of (row, col) of a warpgroup's staging tile, from `base`: plain rows of tile N
 * elements, or chunks of 64 rows x 128 bytes (cc columns) in the 128-byte swizzle. */
static rk_value stage_index(kn_hk *h, rk_value base, rk_value row, rk_value col, bool swz) {
    rk_kernel *k = h->k;
    uint32_t ob = rk_tile_elem_bytes(h->s->out_dtype);
    if (!swz) {
        rk_value r = rk_build_mul(k, row, c32(k, h->pl.bn));
        rk_value rc = rk_build_add(k, r, col);
        return rk_build_add(k, base, rc);
    }
    uint32_t cc = 128 / ob;
    rk_lds_layout l;
    (void)rk_lds_layout_hw_swizzle(64, cc, ob, 128, &l);   /* legal by construction */
    uint32_t lcc = ob == 4 ? 5 : 6, lob = ob == 4 ? 2 : 1;   /* cc = 2^lcc, ob = 2^lob (out: 16- or 32-bit) */
    rk_value chunk = rk_build_lshr(k, col, c32(k, lcc));
    rk_value cin = rk_build_and(k, col, c32(k, cc - 1));
    rk_ix off = rk_tile_lds_offset(k, &l, rk_ix_v(row), rk_ix_v(cin));
    rk_value sl = c32(k, lob);
    rk_value ov = rk_ix_value(k, off);
    rk_value e = rk_build_lshr(k, ov, sl);
    rk_value cb = rk_build_mul(k, chunk, c32(k, 64 * cc));
    rk_value at = rk_build_add(k, cb, e);
    return rk_build_add(k, base, at);
}

void kn_gemm_hopper_epilogue_tma(kn_hk *h, rk_value rbase, rk_value twg, rk_value cw, rk_value d) {
    rk_kernel *k = h->k;
    uint32_t bn = h->pl.bn;
    bool swz = kn_gemm_hopper_cstage_swizzled(h->s);
    rk_value M = h->p[3], N = h->p[4];
    wait_read(h, twg, true);   /* the previous store from this tile has read it */
    warpgroup_sync(h, cw);
    rk_value tile_elems = c32(k, 64 * bn);
    rk_value base = rk_build_mul(k, cw, tile_elems);
    rk_value one = c32(k, 1);
    for (uint32_t i = 0; i < bn / 2; i += 2) {
        rk_tile_frag_coord fc = rk_tile_wgmma_acc_coord(k, twg, i);
        rk_value row = rk_build_add(k, rbase, fc.row);
        rk_value col = rk_build_add(k, h->n0, fc.col);
        rk_value col1 = rk_build_add(k, col, one);
        rk_value rin = rk_build_cmp(k, "lt", row, M);
        rk_value cin = rk_build_cmp(k, "lt", col1, N);
        rk_value ok = rk_build_and(k, rin, cin);   /* the chain's operands are read only inside C */
        int32_t mask[2] = {(int32_t)i, (int32_t)i + 1};
        rk_value x = rk_build_vshuffle(k, d, d, mask, 2);
        rk_value o = kn_gemm_hopper_finish_value(h, x, row, col, ok);
        rk_value at = stage_index(h, base, fc.row, fc.col, swz);
        rk_store_smem(k, h->cstage, &at, o);
    }
    rk_build_fence_proxy_async(k);   /* the writes become visible to the TMA store */
    warpgroup_sync(h, cw);
    rk_value zero = c32(k, 0);
    rk_value t0 = rk_build_cmp(k, "eq", twg, zero);
    rk_if_begin(k, t0);
    uint32_t cc = swz ? 128 / rk_tile_elem_bytes(h->s->out_dtype) : bn;
    for (uint32_t q = 0; q < bn / cc; q++) {   /* one box per chunk of cc columns */
        rk_value so = c32(k, 64 * cc * q);
        rk_value sat = rk_build_add(k, base, so);
        rk_value nq = c32(k, cc * q);
        rk_value col = rk_build_add(k, h->n0, nq);
        rk_build_tma_store_2d(k, h->cmap, h->cstage, sat, col, rbase);
    }
    rk_build_bulk_commit_group(k);
    rk_if_end(k, NULL, 0);
}

void kn_gemm_hopper_store_drain(kn_hk *h, rk_value twg) { wait_read(h, twg, false); }
