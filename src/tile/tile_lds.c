/* rocke — LDS tile layouts with padding and XOR swizzles, and the bank
 * conflict analysis (see tile_lds.h). Layer: tile. */
#include <string.h>

#include "rocke/tile_lds.h"
#include "../base/base_int.h"

rk_status rk_lds_layout_make(uint32_t rows, uint32_t cols, uint32_t elem_bytes, uint32_t pad, uint32_t sw_bits,
                             uint32_t sw_base, uint32_t sw_shift, rk_lds_layout *out) {
    memset(out, 0, sizeof *out);
    if (!rows || !cols) return rk_fail(RK_ERR_INVALID, "LDS layout: %ux%u tile; rows and cols must be >= 1", rows, cols);
    if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8)
        return rk_fail(RK_ERR_INVALID, "LDS layout: element size %u bytes (legal: 1, 2, 4, 8)", elem_bytes);
    if ((uint64_t)rows * (cols + pad) * elem_bytes > (1u << 24))
        return rk_fail(RK_ERR_INVALID, "LDS layout: %ux%u (+%u pad) x %u bytes is larger than 16 MiB", rows, cols, pad,
                       elem_bytes);
    if (sw_bits) {
        if (sw_shift < sw_bits)
            return rk_fail(RK_ERR_INVALID, "LDS layout: Swizzle<%u, %u, %u> has overlapping bits (need S >= B)", sw_bits,
                           sw_base, sw_shift);
        if (sw_base + sw_shift + sw_bits > 24)
            return rk_fail(RK_ERR_INVALID, "LDS layout: Swizzle<%u, %u, %u> reaches past bit 24", sw_bits, sw_base,
                           sw_shift);
    }
    rk_lds_layout l = {rows, cols, elem_bytes, pad, sw_bits, sw_bits ? sw_base : 0, sw_bits ? sw_shift : 0};
    *out = l;
    return RK_OK;
}

rk_status rk_lds_layout_hw_swizzle(uint32_t rows, uint32_t cols, uint32_t elem_bytes, uint32_t mode,
                                   rk_lds_layout *out) {
    uint32_t bits = mode == 0 ? 0 : mode == 32 ? 1 : mode == 64 ? 2 : mode == 128 ? 3 : 99;
    if (bits == 99) return rk_fail(RK_ERR_INVALID, "LDS layout: swizzle mode %u (legal: 0, 32, 64, 128)", mode);
    return rk_lds_layout_make(rows, cols, elem_bytes, 0, bits, 4, 3, out);
}

uint32_t rk_lds_layout_bytes(const rk_lds_layout *l) { return l->rows * (l->cols + l->pad) * l->elem_bytes; }

static uint32_t swz(const rk_lds_layout *l, uint32_t b) {
    if (!l->sw_bits) return b;
    uint32_t mask = (1u << l->sw_bits) - 1;
    return b ^ (((b >> (l->sw_base + l->sw_shift)) & mask) << l->sw_base);
}

uint32_t rk_lds_offset(const rk_lds_layout *l, uint32_t row, uint32_t col) {
    return swz(l, (row * (l->cols + l->pad) + col) * l->elem_bytes);
}

rk_ix rk_tile_lds_offset(rk_kernel *k, const rk_lds_layout *l, rk_ix row, rk_ix col) {
    rk_ix stride = rk_ix_c((int64_t)(l->cols + l->pad) * l->elem_bytes);
    rk_ix eb = rk_ix_c(l->elem_bytes);
    rk_ix r = rk_ix_mul(k, row, stride);
    rk_ix c = rk_ix_mul(k, col, eb);
    rk_ix b = rk_ix_add(k, r, c);
    if (!l->sw_bits) return b;
    if (!b.dyn) return rk_ix_c(swz(l, (uint32_t)b.c));
    rk_value sh = rk_const_i32(k, (int32_t)(l->sw_base + l->sw_shift));
    rk_value hi = rk_build_lshr(k, b.v, sh);
    rk_value mask = rk_const_i32(k, (int32_t)(((1u << l->sw_bits) - 1)));
    rk_value bits = rk_build_and(k, hi, mask);
    rk_value base = rk_const_i32(k, (int32_t)l->sw_base);
    rk_value moved = rk_build_shl(k, bits, base);
    return rk_ix_v(rk_build_xor(k, b.v, moved));
}

bool rk_lds_layout_is_bijective(const rk_lds_layout *l) {
    uint32_t bytes = rk_lds_layout_bytes(l);
    uint8_t *used = rk_calloc(bytes ? bytes : 1, 1);
    if (!used) return false;
    bool ok = true;
    for (uint32_t r = 0; r < l->rows && ok; r++)
        for (uint32_t c = 0; c < l->cols && ok; c++) {
            uint32_t o = rk_lds_offset(l, r, c);
            if (o + l->elem_bytes > bytes) { ok = false; break; }
            for (uint32_t b = 0; b < l->elem_bytes; b++) {
                if (used[o + b]) ok = false;
                used[o + b] = 1;
            }
        }
    rk_free(used, bytes ? bytes : 1);
    return ok;
}

uint32_t rk_lds_conflict_ways(const uint32_t *byte_off, uint32_t lanes, uint32_t access_bytes, uint32_t banks,
                              uint32_t *cycles) {
    if (!banks) banks = 32;
    uint32_t per_phase = banks * 4 / (access_bytes ? access_bytes : 4);
    if (per_phase == 0) per_phase = 1;
    uint32_t words_per = access_bytes > 4 ? access_bytes / 4 : 1;
    uint32_t worst = 0, total = 0;
    for (uint32_t p0 = 0; p0 < lanes; p0 += per_phase) {
        /* distinct words per bank within the phase */
        uint32_t word[64 * 4], nword = 0;
        uint32_t end = p0 + per_phase < lanes ? p0 + per_phase : lanes;
        for (uint32_t i = p0; i < end; i++)
            for (uint32_t w = 0; w < words_per; w++) {
                uint32_t wd = byte_off[i] / 4 + w;
                bool seen = false;
                for (uint32_t j = 0; j < nword && !seen; j++) seen = word[j] == wd;
                if (!seen && nword < RK_COUNTOF(word)) word[nword++] = wd;
            }
        uint32_t ways = 0;
        for (uint32_t b = 0; b < banks; b++) {
            uint32_t n = 0;
            for (uint32_t j = 0; j < nword; j++) n += word[j] % banks == b;
            if (n > ways) ways = n;
        }
        if (ways > worst) worst = ways;
        total += ways;
    }
    if (cycles) *cycles = total;
    return worst;
}
