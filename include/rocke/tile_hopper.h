/* rocke — Hopper (sm_90a) tile helpers: wgmma shared-memory descriptors and
 * the accumulator map (tile_wgmma.c), and a ring of TMA stages completing on
 * mbarriers with expect-tx and phase parity (tile_tma.c). Layer: tile. */
#ifndef ROCKE_TILE_HOPPER_H
#define ROCKE_TILE_HOPPER_H

#include "rocke/tile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- wgmma (tile_wgmma.c) --------------------------------------------------------- */
/* Bytes of one row of a 128-byte-swizzled K-major tile: 64 f16/bf16 elements. */
#define RK_TILE_WGMMA_ROW_BYTES 128u
/* The descriptor of a K-major operand tile stored as dense 128-byte rows
 * under the 128-byte swizzle (what a TMA box of 64 16-bit columns writes),
 * starting at flat element `elem` (i32) of the 2-byte allocation `smem`:
 * rows 8 apart are SBO = 1024 bytes apart, LBO is unused. The tile's rows
 * must start 1024-byte aligned; `elem` may step by 16 (32 bytes) inside a
 * row to reach the next k16 slice. */
rk_value rk_tile_wgmma_desc_k128(rk_kernel *k, rk_value smem, rk_value elem);
/* The descriptor of an MN-major operand tile (M or N contiguous, wgmma's
 * transpose bit set; 16-bit types only) under the 128-byte swizzle: atoms of
 * 64 MN elements x 8 K rows (1024 bytes, what a TMA box of 64 16-bit columns
 * writes for every 8 of its rows), 8-row groups SBO = 1024 bytes apart along
 * K, atoms `atom_stride` bytes apart along MN (LBO: the bytes of one box
 * when each box holds 64 MN columns). `elem` must be 1024-byte aligned; the
 * next k16 slice is 2048 bytes on. */
rk_value rk_tile_wgmma_desc_mn128(rk_kernel *k, rk_value smem, rk_value elem, uint32_t atom_stride);
/* Where element `i` of an m64nNk16 accumulator (n/2 f32 per thread) lives:
 * thread `tid` (i32, 0..127 inside its warpgroup) holds row
 * 16*(tid/32) + (tid%32)/4 + 8*((i/2)%2) and column 8*(i/4) + 2*(tid%4) + i%2.
 * Even i and i + 1 are adjacent columns of one row. batch is 0. */
rk_tile_frag_coord rk_tile_wgmma_acc_coord(rk_kernel *k, rk_value tid, uint32_t i);

/* ---- accumulator -> register A (tile_wgmma_rs.c) ------------------------------------ */
/* Which accumulator element feeds each of the 8 slots of the register A
 * fragment when an m64nNk16 accumulator becomes the A operand of
 * tile.wgmma_rs (columns become K): slot s of fragment q is element
 * 8*q + map[s] of the same thread. Derived from the catalog's lane maps;
 * RK_ERR_INVALID when elem is not f16/bf16 or the maps do not line up. */
rk_status rk_tile_wgmma_acc_to_a_map(rk_scalar elem, uint32_t map[8]);
/* The accumulator acc (vec<f32 x n/2>, n a multiple of 16) rounded to elem
 * (f16, bf16) as n/16 A fragments out[q] (vec<elem x 8>, K = columns
 * 16q..16q+15): a register re-layout, no shared memory. */
void rk_tile_wgmma_acc_to_a(rk_kernel *k, rk_value acc, uint32_t n, rk_scalar elem, rk_value *out);

/* ---- TMA stages on mbarriers (tile_tma.c) -------------------------------------------- */
/* `stages` mbarriers ("full" barriers), one per stage of a ring of TMA
 * destinations: the issuing thread arrives with the stage's byte count
 * (expect-tx), the boxes complete the phase, and a consumer waits for the
 * phase of parity (fill / stages) & 1, fill being the running count of
 * fills (K tile index) the stage is on. */
typedef struct rk_tile_tma_ring {
    rk_value bars;      /* smem<i64, [stages]> */
    uint32_t stages;
    uint32_t tx_bytes;  /* bytes every fill brings (all its boxes, zero fill included) */
    rk_value empty;     /* smem<i64, [stages]> "empty" barriers, when releases > 0 */
    uint32_t releases;  /* arrivals that free a stage (0: no empty barriers) */
} rk_tile_tma_ring;
/* Allocate and initialise the barriers (thread 0, arrival count 1), make
 * them visible to the async proxy, then a block barrier. */
void rk_tile_tma_ring_init(rk_kernel *k, rk_tile_tma_ring *r, uint32_t stages, uint32_t tx_bytes);
/* The same with one "empty" barrier per stage as well, completing after
 * `releases` arrivals (the consumers' rk_tile_tma_ring_release): a producer
 * refills a stage only once its previous contents are no longer read. */
void rk_tile_tma_ring_init_pair(rk_kernel *k, rk_tile_tma_ring *r, uint32_t stages, uint32_t tx_bytes,
                                uint32_t releases);
/* Consumer side: one arrival on the empty barrier of stage fill % stages
 * (the caller arrives only after its reads of fill are complete). */
void rk_tile_tma_ring_release(rk_kernel *k, const rk_tile_tma_ring *r, rk_value fill);
/* The same arrival on the empty barrier of stage fill % stages in the block
 * of cluster rank `rank` (i32; a release at cluster scope): a consumer hands
 * the stage back to a peer whose producer multicasts into it. */
void rk_tile_tma_ring_release_peer(rk_kernel *k, const rk_tile_tma_ring *r, rk_value fill, rk_value rank);
/* Producer side: wait until stage fill % stages may take fill number `fill`
 * (i32): the releases of fill - stages have all arrived. For the first
 * round this is the phase before the barrier's first, which counts as
 * complete, so it returns at once. */
void rk_tile_tma_ring_wait_free(rk_kernel *k, const rk_tile_tma_ring *r, rk_value fill);
/* Thread-0 side of a fill of stage `stage` (i32): arrive with expect-tx; the
 * caller then issues the boxes with rk_tile_tma_box on the same stage. */
void rk_tile_tma_ring_expect(rk_kernel *k, const rk_tile_tma_ring *r, rk_value stage);
/* One box at (column x, row y) of tensor map `map` into `dst` from flat
 * element `dst_elem` (i32, 1024-byte aligned for swizzled boxes), completing
 * on the ring's barrier of `stage`. */
void rk_tile_tma_box(rk_kernel *k, const rk_tile_tma_ring *r, rk_value map, rk_value dst, rk_value dst_elem,
                     rk_value stage, rk_value x, rk_value y);
/* Wait until fill number `fill` (i32) of stage fill % stages has landed. */
void rk_tile_tma_ring_wait(rk_kernel *k, const rk_tile_tma_ring *r, rk_value fill);

#ifdef __cplusplus
}
#endif
#endif
