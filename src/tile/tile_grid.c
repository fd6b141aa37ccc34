/* rocke — warp grids and block-id remaps (see tile_grid.h). The remaps are
 * written in index terms, so constant grids fold on the host. Layer: tile. */
#include "rocke/tile_grid.h"

rk_status rk_tile_warps_begin(rk_kernel *k, uint32_t wave, uint32_t warp_m, uint32_t warp_n, uint32_t warp_k,
                              rk_tile_warps *out) {
    if (wave != 32 && wave != 64) return rk_fail(RK_ERR_INVALID, "warp grid: wave size %u (legal: 32, 64)", wave);
    if (!warp_m || !warp_n || !warp_k || (uint64_t)warp_m * warp_n * warp_k * wave > 1024)
        return rk_fail(RK_ERR_INVALID, "warp grid %ux%ux%u of %u lanes: every count >= 1 and at most 1024 threads",
                       warp_m, warp_n, warp_k, wave);
    rk_tile_warps g = {wave, warp_m, warp_n, warp_k, warp_m * warp_n * warp_k, {0}, {0}, {0}, {0}, {0}, {0}};
    g.tid = rk_build_thread_id(k, 0);
    rk_value w = rk_const_i32(k, (int32_t)wave);
    g.lane = rk_build_umod(k, g.tid, w);
    rk_value warp = rk_build_udiv(k, g.tid, w);
    g.warp = rk_build_readfirstlane(k, warp);
    rk_value wn = rk_const_i32(k, (int32_t)warp_n);
    g.wn = rk_build_umod(k, g.warp, wn);
    rk_value rest = rk_build_udiv(k, g.warp, wn);
    rk_value wm = rk_const_i32(k, (int32_t)warp_m);
    g.wm = warp_k > 1 ? rk_build_umod(k, rest, wm) : rest;
    g.wk = warp_k > 1 ? rk_build_udiv(k, rest, wm) : rk_const_i32(k, 0);
    *out = g;
    return RK_OK;
}

void rk_tile_group_m(rk_kernel *k, rk_ix pid, rk_ix tiles_m, rk_ix tiles_n, uint32_t group_m, rk_ix *pid_m,
                     rk_ix *pid_n) {
    rk_ix g = rk_ix_c(group_m ? group_m : 1);
    rk_ix per_group = rk_ix_mul(k, g, tiles_n);            /* blocks in a full group */
    rk_ix group = rk_ix_udiv(k, pid, per_group);
    rk_ix first_m = rk_ix_mul(k, group, g);
    rk_ix left = rk_ix_sub(k, tiles_m, first_m);            /* tile rows from this group on */
    /* rows in this group: min(left, g), at least 1 so that a pid past the
     * grid still divides by a positive number */
    rk_ix size;
    if (!left.dyn) {
        size = rk_ix_c(left.c < g.c ? (left.c < 1 ? 1 : left.c) : g.c);
    } else {
        rk_value gv = rk_ix_value(k, g);
        rk_value m = rk_build_smin(k, left.v, gv);
        rk_value one = rk_const_i32(k, 1);
        size = rk_ix_v(rk_build_smax(k, m, one));
    }
    rk_ix in_group = rk_ix_umod(k, pid, per_group);
    rk_ix dm = rk_ix_umod(k, in_group, size);
    *pid_m = rk_ix_add(k, first_m, dm);
    *pid_n = rk_ix_udiv(k, in_group, size);
}

rk_ix rk_tile_xcd_remap(rk_kernel *k, rk_ix w, rk_ix total, uint32_t xcds, uint32_t chunk) {
    if (xcds <= 1 || chunk == 0) return w;
    rk_ix X = rk_ix_c(xcds), C = rk_ix_c(chunk), XC = rk_ix_c((int64_t)xcds * chunk);
    rk_ix full = rk_ix_udiv(k, total, XC);
    rk_ix limit = rk_ix_mul(k, full, XC);                   /* ids below it are remapped */
    rk_ix xcd = rk_ix_umod(k, w, X);
    rk_ix local = rk_ix_udiv(k, w, X);
    rk_ix blk = rk_ix_udiv(k, local, C);
    rk_ix a = rk_ix_mul(k, blk, XC);
    rk_ix b = rk_ix_mul(k, xcd, C);
    rk_ix c = rk_ix_umod(k, local, C);
    rk_ix ab = rk_ix_add(k, a, b);
    rk_ix remapped = rk_ix_add(k, ab, c);
    rk_ix inside = rk_ix_lt(k, w, limit);
    if (!inside.dyn) return inside.c ? remapped : w;
    rk_value cv = inside.v;
    rk_value rv = rk_ix_value(k, remapped);
    rk_value wv = rk_ix_value(k, w);
    return rk_ix_v(rk_build_select(k, cv, rv, wv));
}
