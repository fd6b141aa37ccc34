/* rocke — LDS / shared-memory tile layouts as data: a row-major tile with
 * optional row padding and an XOR swizzle of byte-offset bits (CuTe's
 * Swizzle<B, M, S>: bits [M, M+B) ^= bits [M+S, M+S+B), which also spells
 * the hardware's 32/64/128-byte TMA and wgmma modes), the offsets on the
 * host and as IR, and bank conflicts as an analysis rather than folklore.
 * Layer: tile. */
#ifndef ROCKE_TILE_LDS_H
#define ROCKE_TILE_LDS_H

#include "rocke/tile_xform.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_lds_layout {
    uint32_t rows, cols;        /* logical tile, elements */
    uint32_t elem_bytes;        /* 1, 2, 4, 8 */
    uint32_t pad;               /* elements of padding after each row */
    uint32_t sw_bits, sw_base, sw_shift;   /* Swizzle<B, M, S> on byte offsets; B == 0: none */
} rk_lds_layout;

/* Checked constructor: RK_ERR_INVALID naming the field (zero sizes, an
 * element size not in {1,2,4,8}, a swizzle whose bits pass 2^24 or whose
 * source and destination bits overlap (S < B)). */
rk_status rk_lds_layout_make(uint32_t rows, uint32_t cols, uint32_t elem_bytes, uint32_t pad, uint32_t sw_bits,
                             uint32_t sw_base, uint32_t sw_shift, rk_lds_layout *out);
/* The hardware swizzle modes for rows of `row_bytes`: 0 (none), 32, 64 or
 * 128 -> Swizzle<0|1|2|3, 4, 3>. */
rk_status rk_lds_layout_hw_swizzle(uint32_t rows, uint32_t cols, uint32_t elem_bytes, uint32_t mode,
                                   rk_lds_layout *out);
/* Bytes the tile takes (rows * (cols + pad) * elem_bytes). */
uint32_t rk_lds_layout_bytes(const rk_lds_layout *l);
/* Byte offset of element (row, col) on the host. */
uint32_t rk_lds_offset(const rk_lds_layout *l, uint32_t row, uint32_t col);
/* The same as IR (i32 byte offset; folds for constant coordinates). */
rk_ix rk_tile_lds_offset(rk_kernel *k, const rk_lds_layout *l, rk_ix row, rk_ix col);
/* Swizzling is a bijection on a whole tile when the rows are a multiple of
 * the swizzle period: true iff every element has its own byte range. */
bool rk_lds_layout_is_bijective(const rk_lds_layout *l);

/* Bank conflicts of one wave-wide access: lane i touches access_bytes
 * (4, 8 or 16) at byte_off[i]. The hardware serves a wide access in phases
 * of banks*4/access_bytes lanes (all lanes for 4-byte accesses); within a
 * phase, lanes reading the same 4-byte word share it, and lanes on one bank
 * at different words serialize. Returns the worst phase's ways (1 =
 * conflict-free) and, in *cycles (may be NULL), the sum over phases. */
uint32_t rk_lds_conflict_ways(const uint32_t *byte_off, uint32_t lanes, uint32_t access_bytes, uint32_t banks,
                              uint32_t *cycles);

#ifdef __cplusplus
}
#endif
#endif
