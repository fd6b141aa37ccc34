/* rocke — tile helpers: f32 reductions. In registers: balanced pairwise
 * trees. Across a wave/warp: a tile.shuffle xor butterfly sized by the
 * target's wave size. Across waves: one LDS round (lane 0 of each wave
 * writes, one barrier, every thread folds its group's partials in a fixed
 * order, so all threads hold identical bits). Layer: tile. */
#include <math.h>

#include "rocke/tile.h"
#include "../base/base_int.h"

static rk_value ci(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

double rk_tile_red_identity(rk_tile_red op) {
    switch (op) {
    case RK_RED_SUM: return 0.0;
    case RK_RED_MAX: return -INFINITY;
    case RK_RED_MIN: return INFINITY;
    }
    return 0.0;
}

rk_value rk_tile_combine(rk_kernel *k, rk_tile_red op, rk_value a, rk_value b) {
    switch (op) {
    case RK_RED_SUM: return rk_build_fadd(k, a, b);
    case RK_RED_MAX: return rk_build_fmax(k, a, b);
    case RK_RED_MIN: return rk_build_fmin(k, a, b);
    }
    return a;
}

static void combine_n(rk_kernel *k, const rk_tile_reducer *r, const rk_value *a, const rk_value *b, rk_value *out) {
    if (r->fn) {
        r->fn(k, a, b, out, r->ud);
        return;
    }
    for (uint32_t c = 0; c < r->n; c++) out[c] = rk_tile_combine(k, r->op, a[c], b[c]);
}

/* Pairwise fold of cnt tuples stored as t[i*n + c]; result in t[0..n). */
static void tree_n(rk_kernel *k, const rk_tile_reducer *r, rk_value *t, uint32_t cnt) {
    uint32_t n = r->n;
    while (cnt > 1) {
        uint32_t half = cnt / 2;
        for (uint32_t i = 0; i < half; i++) {
            rk_value out[RK_TILE_MAX_TUPLE];
            combine_n(k, r, &t[(2 * i) * n], &t[(2 * i + 1) * n], out);
            for (uint32_t c = 0; c < n; c++) t[i * n + c] = out[c];
        }
        if (cnt % 2)
            for (uint32_t c = 0; c < n; c++) t[half * n + c] = t[(cnt - 1) * n + c];
        cnt = half + cnt % 2;
    }
}

rk_value rk_tile_tree_reduce(rk_kernel *k, rk_tile_red op, const rk_value *vals, uint32_t n) {
    RK_ASSERT(n >= 1 && n <= 64, "rk_tile_tree_reduce: 1..64 values");
    rk_value t[64];
    memcpy(t, vals, n * sizeof *t);
    rk_tile_reducer r = {.n = 1, .op = op};
    tree_n(k, &r, t, n);
    return t[0];
}

rk_value rk_tile_vec_reduce(rk_kernel *k, rk_tile_red op, rk_value v) {
    rk_type t = rk_value_type(k, v);
    if (rk_type_kind_of(k, t) != RK_TK_VEC) return v;
    uint32_t n = rk_type_count(k, t);
    rk_value e[64];
    RK_ASSERT(n <= 64, "rk_tile_vec_reduce: vector wider than 64 lanes");
    for (uint32_t i = 0; i < n; i++) e[i] = rk_build_vextract(k, v, i);
    return rk_tile_tree_reduce(k, op, e, n);
}

/* Keys by `op`, each lane's value rescaled once, then the values summed:
 * every lane ends with the same bits (both butterflies are symmetric). */
static void rescaled_butterfly(rk_kernel *k, const rk_tile_reducer *r, rk_value *vals, uint32_t width) {
    rk_value own = vals[0];
    vals[0] = rk_tile_wave_reduce(k, r->op, own, width);
    vals[1] = r->rescale(k, vals[1], own, vals[0], r->ud);
    vals[1] = rk_tile_wave_reduce(k, RK_RED_SUM, vals[1], width);
}

void rk_tile_wave_reduce_n(rk_kernel *k, const rk_tile_reducer *r, rk_value *vals, uint32_t width) {
    RK_ASSERT(r->n >= 1 && r->n <= RK_TILE_MAX_TUPLE, "rk_tile_wave_reduce_n: tuple size");
    RK_ASSERT(width && (width & (width - 1)) == 0, "rk_tile_wave_reduce_n: width must be a power of two");
    if (r->rescale) {
        RK_ASSERT(r->n == 2 && !r->fn, "rk_tile_wave_reduce_n: a rescaled reduction is (key, value) pairs");
        if (width > 1) rescaled_butterfly(k, r, vals, width);
        return;
    }
    for (uint32_t mask = width / 2; mask >= 1; mask /= 2) {
        rk_value other[RK_TILE_MAX_TUPLE], out[RK_TILE_MAX_TUPLE];
        rk_value m = ci(k, (int32_t)mask);
        for (uint32_t c = 0; c < r->n; c++) other[c] = rk_build_shuffle(k, "xor", vals[c], m);
        combine_n(k, r, vals, other, out);
        for (uint32_t c = 0; c < r->n; c++) vals[c] = out[c];
    }
}

rk_value rk_tile_wave_reduce(rk_kernel *k, rk_tile_red op, rk_value v, uint32_t width) {
    rk_tile_reducer r = {.n = 1, .op = op};
    rk_tile_wave_reduce_n(k, &r, &v, width);
    return v;
}

void rk_tile_block_reduce_n(rk_kernel *k, const rk_tile_reducer *r, const rk_tile_block_cfg *cfg, rk_value tid,
                            rk_value *vals) {
    uint32_t wave = cfg->wave, group = cfg->group, n = r->n;
    RK_ASSERT(wave && (wave & (wave - 1)) == 0, "rk_tile_block_reduce_n: wave size must be a power of two");
    if (group <= wave) {
        rk_tile_wave_reduce_n(k, r, vals, group);
        return;
    }
    RK_ASSERT(group % wave == 0, "rk_tile_block_reduce_n: a group larger than a wave is whole waves");
    rk_tile_wave_reduce_n(k, r, vals, wave);
    uint32_t wpg = group / wave, slots = wpg * cfg->groups;
    uint32_t dims[2] = {n, slots};
    rk_value lds = rk_build_smem_alloc(k, RK_T_F32, dims, 2);
    uint32_t wshift = 0;
    while ((1u << wshift) < wave) wshift++;
    rk_value w = rk_build_lshr(k, tid, ci(k, (int32_t)wshift));
    rk_value lane = rk_build_and(k, tid, ci(k, (int32_t)wave - 1));
    rk_if_begin(k, rk_build_cmp(k, "eq", lane, ci(k, 0)));
    for (uint32_t c = 0; c < n; c++) {
        rk_value idx[2] = {ci(k, (int32_t)c), w};
        rk_store_smem(k, lds, idx, vals[c]);
    }
    rk_if_end(k, NULL, 0);
    rk_build_sync_lds_only(k);
    uint32_t gshift = 0;
    while ((1u << gshift) < group) gshift++;
    rk_value g = rk_build_lshr(k, tid, ci(k, (int32_t)gshift));
    rk_value first = rk_build_mul(k, g, ci(k, (int32_t)wpg));
    RK_ASSERT(cfg->shuffle_fold || !r->rescale, "rk_tile_block_reduce_n: a rescaled reduction folds by shuffles");
    if (!cfg->shuffle_fold) {
        /* every thread reads all of its group's partials (vector LDS loads,
         * broadcast, no conflicts) and folds them in a fixed order */
        uint32_t vl = wpg % 4 == 0 ? 4 : wpg % 2 == 0 ? 2 : 1;
        rk_value t[32 * RK_TILE_MAX_TUPLE];
        RK_ASSERT(wpg <= 32, "rk_tile_block_reduce_n: at most 32 waves per group");
        for (uint32_t c = 0; c < n; c++) {
            for (uint32_t i = 0; i < wpg; i += vl) {
                rk_value col = i ? rk_build_add(k, first, ci(k, (int32_t)i)) : first;
                rk_value idx[2] = {ci(k, (int32_t)c), col};
                rk_value v = rk_load_smem(k, lds, idx, vl);
                for (uint32_t j = 0; j < vl; j++) t[(i + j) * n + c] = vl > 1 ? rk_build_vextract(k, v, j) : v;
            }
        }
        tree_n(k, r, t, wpg);
        for (uint32_t c = 0; c < n; c++) vals[c] = t[c];
    } else {
        /* lane l of every wave reads partial l % wpg of its group (wpg <=
         * wave) and a butterfly over wpg lanes folds them: one LDS value per
         * component per thread instead of wpg (a 1024-thread block would
         * hold 32 partials per component in registers), identical bits in
         * every lane of every wave */
        RK_ASSERT(wpg <= wave, "rk_tile_block_reduce_n: at most a wave of waves per group");
        rk_value col = rk_build_add(k, first, rk_build_and(k, lane, ci(k, (int32_t)wpg - 1)));
        for (uint32_t c = 0; c < n; c++) {
            rk_value idx[2] = {ci(k, (int32_t)c), col};
            vals[c] = rk_load_smem(k, lds, idx, 1);
        }
        rk_tile_wave_reduce_n(k, r, vals, wpg);
    }
    if (cfg->trailing_barrier) rk_build_sync_lds_only(k);
}

rk_value rk_tile_block_reduce(rk_kernel *k, rk_tile_red op, const rk_tile_block_cfg *cfg, rk_value tid, rk_value v) {
    rk_tile_reducer r = {.n = 1, .op = op};
    rk_tile_block_reduce_n(k, &r, cfg, tid, &v);
    return v;
}
