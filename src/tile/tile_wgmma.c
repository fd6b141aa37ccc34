/* rocke — wgmma helpers: the shared-memory descriptors of 128-byte-swizzled
 * K-major and MN-major tiles and the m64nNk16 accumulator's (row, col) map.
 * Layer: tile. */
#include "rocke/tile_hopper.h"

rk_value rk_tile_wgmma_desc_k128(rk_kernel *k, rk_value smem, rk_value elem) {
    /* K-major swizzled: element (mn, k) at (mn%8)*128 + (mn/8)*SBO + 2k, so dense 128-byte rows give SBO = 8 rows */
    rk_wgmma_desc_opts o = {.swizzle = RK_SOME(128)};
    return rk_build_wgmma_desc_ex(k, smem, elem, 16, 8 * RK_TILE_WGMMA_ROW_BYTES, &o);
}

rk_value rk_tile_wgmma_desc_mn128(rk_kernel *k, rk_value smem, rk_value elem, uint32_t atom_stride) {
    /* MN-major swizzled: element (mn, k) at (mn%64)*2 + (mn/64)*LBO + (k%8)*128 + (k/8)*SBO */
    rk_wgmma_desc_opts o = {.swizzle = RK_SOME(128)};
    return rk_build_wgmma_desc_ex(k, smem, elem, atom_stride, 8 * RK_TILE_WGMMA_ROW_BYTES, &o);
}

rk_tile_frag_coord rk_tile_wgmma_acc_coord(rk_kernel *k, rk_value tid, uint32_t i) {
    rk_value c5 = rk_const_i32(k, 5), c31 = rk_const_i32(k, 31), c2 = rk_const_i32(k, 2), c3 = rk_const_i32(k, 3);
    rk_value c4 = rk_const_i32(k, 4), c1 = rk_const_i32(k, 1);
    rk_value warp = rk_build_lshr(k, tid, c5);
    rk_value lane = rk_build_and(k, tid, c31);
    rk_value w16 = rk_build_shl(k, warp, c4);
    rk_value l4 = rk_build_lshr(k, lane, c2);
    rk_value r0 = rk_build_add(k, w16, l4);
    rk_value roff = rk_const_i32(k, (int32_t)(8 * ((i / 2) % 2)));
    rk_value lq = rk_build_and(k, lane, c3);
    rk_value c0 = rk_build_shl(k, lq, c1);
    rk_value coff = rk_const_i32(k, (int32_t)(8 * (i / 4) + i % 2));
    rk_tile_frag_coord fc;
    fc.row = rk_build_add(k, r0, roff);
    fc.col = rk_build_add(k, c0, coff);
    fc.batch = rk_const_i32(k, 0);
    return fc;
}
