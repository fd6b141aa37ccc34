/* rocke — block and warp geometry for tiled kernels: the warp grid of a
 * block (lane, warp, its (m, n) position), and block-id remaps for L2 and
 * chiplet locality (grouped-M super-tiles, the XCD round-robin remap of
 * MI300-class parts). Layer: tile. */
#ifndef ROCKE_TILE_GRID_H
#define ROCKE_TILE_GRID_H

#include "rocke/tile_xform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A block of warp_m x warp_n (x warp_k) warps of `wave` lanes. Warps are
 * numbered n fastest: warp = (wk * warp_m + wm) * warp_n + wn. The warp
 * indices are made wave-uniform (tile.readfirstlane), so per-warp
 * addresses stay scalar on AMD. */
typedef struct rk_tile_warps {
    uint32_t wave, warp_m, warp_n, warp_k, threads;
    rk_value tid, lane, warp, wm, wn, wk;   /* i32; wk is 0 when warp_k == 1 */
} rk_tile_warps;
rk_status rk_tile_warps_begin(rk_kernel *k, uint32_t wave, uint32_t warp_m, uint32_t warp_n, uint32_t warp_k,
                              rk_tile_warps *out);

/* Grouped-M ordering of a tiles_m x tiles_n grid of output tiles (Triton's
 * GROUP_M): linear block id `pid` walks `group_m` tile rows at a time,
 * column by column, so consecutive blocks share A rows and B columns in L2.
 * A bijection on [0, tiles_m * tiles_n) for any group_m >= 1 (the last group
 * may be shorter). Ids past the grid give some tile, without faults. */
void rk_tile_group_m(rk_kernel *k, rk_ix pid, rk_ix tiles_m, rk_ix tiles_n, uint32_t group_m, rk_ix *pid_m,
                     rk_ix *pid_n);
/* Chiplet remap for `xcds` dies that receive workgroups round robin: the
 * first floor(W / (xcds * chunk)) * xcds * chunk ids are renumbered so that
 * `chunk` consecutive new ids run on one die; the rest stay. W = total
 * blocks. A bijection on [0, W). */
rk_ix rk_tile_xcd_remap(rk_kernel *k, rk_ix w, rk_ix total, uint32_t xcds, uint32_t chunk);

#ifdef __cplusplus
}
#endif
#endif
