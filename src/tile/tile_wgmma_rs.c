/* rocke — a wgmma accumulator as the register A operand of the next wgmma
 * (tile.wgmma_rs): FlashAttention-3's P -> A without a shared-memory round
 * trip. The slot mapping is derived on the host from the catalog's lane maps
 * of the m64n8k16 atom (its D map repeated every 8 columns is the m64nNk16
 * accumulator; its A map is the register fragment). Layer: tile. */
#include "rocke/tile_hopper.h"
#include "../base/base_int.h"

static const rk_mma_atom *atom_of(rk_scalar elem) {
    return rk_mma_atom_get(elem == RK_S_BF16 ? RK_ATOM_WGMMA_M64N8K16_F32_BF16 : RK_ATOM_WGMMA_M64N8K16_F32_F16);
}

/* (row, column) of accumulator element i of warpgroup thread l (m64nN: slot i % c_len of n8 block i / c_len) */
static rk_lane_coord acc_at(const rk_mma_atom *a, uint32_t l, uint32_t i) {
    rk_lane_coord p = rk_lane_map_eval(a->c_map, l, i % a->c_len);
    p.col += a->n * (i / a->c_len);
    return p;
}

rk_status rk_tile_wgmma_acc_to_a_map(rk_scalar elem, uint32_t map[8]) {
    const rk_mma_atom *a = atom_of(elem);
    if (!a || (elem != RK_S_F16 && elem != RK_S_BF16))
        return rk_fail(RK_ERR_INVALID, "wgmma accumulator to A: the register fragment holds f16 or bf16, not %s",
                       rk_scalar_name(elem));
    RK_ASSERT(a->a_len == 8 && a->k == 16, "wgmma register A: 8 slots of a k16 fragment");
    uint32_t per = 16 / a->n * a->c_len;   /* accumulator elements of one k16 column block */
    for (uint32_t s = 0; s < a->a_len; s++) {
        map[s] = UINT32_MAX;
        for (uint32_t l = 0; l < a->lanes; l++) {
            rk_lane_coord want = rk_lane_map_eval(a->a_map, l, s);
            uint32_t found = UINT32_MAX;
            for (uint32_t i = 0; i < per && found == UINT32_MAX; i++) {
                rk_lane_coord p = acc_at(a, l, i);
                if (p.row == want.row && p.col == want.col) found = i;
            }
            if (found == UINT32_MAX || (map[s] != UINT32_MAX && map[s] != found))
                return rk_fail(RK_ERR_INVALID, "wgmma accumulator to A: A slot %u of thread %u (row %u, k %u) is not "
                               "the same accumulator slot of the same thread in every lane (%s)", s, l, want.row,
                               want.col, a->op_id);
            map[s] = found;
        }
    }
    return RK_OK;
}

void rk_tile_wgmma_acc_to_a(rk_kernel *k, rk_value acc, uint32_t n, rk_scalar elem, rk_value *out) {
    uint32_t map[8];
    rk_status st = rk_tile_wgmma_acc_to_a_map(elem, map);
    RK_ASSERT(st == RK_OK && n % 16 == 0 && n >= 16 && n <= 256,
              "rk_tile_wgmma_acc_to_a: n a multiple of 16 up to 256, 16-bit elements");
    rk_value h = rk_tile_from_f32(k, acc, elem);   /* one rounding of the whole accumulator */
    for (uint32_t q = 0; q < n / 16; q++) {
        int32_t mask[8];
        for (uint32_t s = 0; s < 8; s++) mask[s] = (int32_t)(8 * q + map[s]);
        out[q] = rk_build_vshuffle(k, h, h, mask, 8);
    }
}
