/* rocke — shared by the row families (reduce, softmax, layernorm, rmsnorm):
 * legal knob values, the shape heuristic, cross-field checks, shape limits
 * and the grid. Layer: kernels. */
#include <stdio.h>

#include "kern_int.h"

const uint32_t kn_legal_wave[] = {32, 64, 0};
const uint32_t kn_legal_block[] = {32, 64, 128, 256, 512, 1024, 0};
const uint32_t kn_legal_vec[] = {1, 2, 4, 8, 0};
const uint32_t kn_legal_rpb[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 0};
const uint32_t kn_legal_chunks[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                    17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 0};
const uint32_t kn_legal_unroll[] = {1, 2, 4, 8, 0};
const uint32_t kn_legal_tile[] = {16, 32, 64, 128, 0};
const uint32_t kn_legal_pad[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0};
const char *const kn_tail_names[] = {"masked", "buffer", NULL};

/* Registers per thread for a cached row: chunks * vec f32 values. */
#define KN_MAX_CACHED 128

void kn_row_defaults(rk_row_knobs *k) {
    *k = (rk_row_knobs){.wave = 64, .block_size = 256, .vec = 8, .rows_per_block = 1, .chunks = 0,
                        .unroll = 4, .tail = RK_TAIL_BUFFER};
}

static uint32_t np2(uint64_t x) {
    uint32_t p = 1;
    while (p < x && p < (1u << 30)) p <<= 1;
    return p;
}
static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Knob order inside KN_ROW_KNOBS. */
enum { RK_W, RK_B, RK_V, RK_R, RK_K, RK_U, RK_T };

void kn_row_tune(rk_row_knobs *k, const rk_target *t, rk_scalar widest, uint64_t M, uint64_t N, uint64_t locked,
                 uint32_t first, uint32_t kmax) {
#define LOCKED(i) ((locked >> (first + (i))) & 1u)
    if (!LOCKED(RK_W)) k->wave = t->wave_size;
    if (!LOCKED(RK_V)) k->vec = 16 / rk_tile_elem_bytes(widest);
    if (!LOCKED(RK_U)) k->unroll = 4;
    uint64_t nvec = cdiv(N ? N : 1, k->vec);
    uint32_t tpr;
    if (LOCKED(RK_B) && LOCKED(RK_R)) tpr = k->block_size / (k->rows_per_block ? k->rows_per_block : 1);
    else if (LOCKED(RK_K) && k->chunks) tpr = np2(cdiv(nvec, k->chunks));
    else tpr = np2(cdiv(nvec, kmax));
    if (tpr > 1024) tpr = 1024;
    if (tpr < 1) tpr = 1;
    if (!LOCKED(RK_K)) {
        uint64_t c = cdiv(nvec, tpr);
        k->chunks = c * k->vec <= KN_MAX_CACHED / 2 ? (uint32_t)c : 0;
    }
    if (!k->chunks && !LOCKED(RK_B) && !LOCKED(RK_R)) tpr = (uint32_t)(nvec >= 1024 ? 1024 : np2(nvec));
    if (!LOCKED(RK_B)) {
        uint32_t b = LOCKED(RK_R) ? tpr * k->rows_per_block : (tpr > 256 ? tpr : 256);
        if (b > 1024) b = 1024;
        /* keep enough blocks to fill the machine when there are few rows */
        while (!LOCKED(RK_R) && b > tpr && b > k->wave && cdiv(M ? M : 1, b / tpr) < 256) b /= 2;
        k->block_size = b;
    }
    if (!LOCKED(RK_R)) k->rows_per_block = k->block_size >= tpr ? k->block_size / tpr : 1;
    /* buffer views need a wave-uniform row: rows narrower than a wave use masked tails */
    if (!LOCKED(RK_T)) {
        k->tail = rk_tile_default_tail(t);
        if (kn_row_tpr(k) < k->wave) k->tail = RK_TAIL_MASKED;
    }
#undef LOCKED
}

rk_status kn_row_validate(const rk_row_knobs *k, const rk_target *t, rk_scalar a, rk_scalar b) {
    if (k->wave != t->wave_size)
        return rk_fail(RK_ERR_INVALID, "knob 'wave' must be %u for target %s (its wave size), got %u", t->wave_size,
                       t->name, k->wave);
    if (k->block_size > t->max_workgroup)
        return rk_fail(RK_ERR_INVALID, "knob 'block_size' must be at most %u on %s, got %u", t->max_workgroup,
                       t->name, k->block_size);
    uint32_t wide = rk_tile_elem_bytes(a) > rk_tile_elem_bytes(b) ? rk_tile_elem_bytes(a) : rk_tile_elem_bytes(b);
    if (k->vec * wide > 16)
        return rk_fail(RK_ERR_INVALID, "knob 'vec' must be at most %u for %u-byte elements (16-byte accesses), got %u",
                       16 / wide, wide, k->vec);
    if (k->rows_per_block > k->block_size)
        return rk_fail(RK_ERR_INVALID, "knob 'rows_per_block' must be at most block_size (%u), got %u",
                       k->block_size, k->rows_per_block);
    if (k->chunks * k->vec > KN_MAX_CACHED)
        return rk_fail(RK_ERR_INVALID,
                       "knobs 'chunks' x 'vec' must be at most %u registers per thread, got %u x %u (use chunks=0 "
                       "for the looped path)", KN_MAX_CACHED, k->chunks, k->vec);
    return RK_OK;
}

rk_status kn_row_check_shape(const rk_row_knobs *k, uint64_t M, uint64_t N) {
    if (M > INT32_MAX || N * 4 > INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "shape %llu,%llu: rows must be < 2^31 and a row < 2 GiB",
                       (unsigned long long)M, (unsigned long long)N);
    uint64_t cap = (uint64_t)kn_row_tpr(k) * k->vec * k->chunks;
    if (k->chunks && N > cap)
        return rk_fail(RK_ERR_INVALID,
                       "shape N=%llu exceeds this kernel's row capacity %llu (block_size/rows_per_block x vec x "
                       "chunks = %u x %u x %u); build with chunks=0 (looped) or for this shape",
                       (unsigned long long)N, (unsigned long long)cap, kn_row_tpr(k), k->vec, k->chunks);
    return RK_OK;
}

void kn_row_grid(const rk_row_knobs *k, uint64_t M, uint32_t grid[3], uint32_t block[3]) {
    uint64_t g = cdiv(M ? M : 1, k->rows_per_block ? k->rows_per_block : 1);
    grid[0] = (uint32_t)(g > INT32_MAX ? INT32_MAX : g);
    block[0] = k->block_size;
}
