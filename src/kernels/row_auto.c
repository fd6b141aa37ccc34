/* rocke — stage=auto of the row families: one kernel with both ways a
 * block's rows reach its threads, chosen at run time. Rows of a multiple of
 * vec whose tensors all start on 16 bytes take the direct rows (every
 * access a whole vector, the code a per-shape build of such a row has);
 * any other row length or base takes the span through LDS (aligned
 * vectors but for a span's two ends). The test is on kernel arguments
 * only, so it is uniform over the grid. This is what a kernel built
 * without a shape needs: its variants are chosen by ranges of N, and the
 * better stage alternates with N mod vec (docs/kernels.md, "Shape
 * variants"). Layer: kernels. */
#include "kern_int.h"

/* LDS a block takes besides its spans: the reductions' slots and, on
 * NVIDIA, the 1 KiB the driver reserves per block. */
#define KN_AUTO_LDS_EXTRA 1024u

rk_row_knobs kn_auto_direct_knobs(const rk_row_knobs *k) {
    rk_row_knobs d = *k;
    d.stage = RK_STAGE_DIRECT;
    /* taken only when every row starts aligned: plain views, as a build
     * for that shape (split off) */
    d.split = false;
    return d;
}

rk_row_knobs kn_auto_span_knobs(const rk_row_knobs *k) {
    rk_row_knobs s = *k;
    s.stage = RK_STAGE_SPAN;
    /* the same threads a row, each holding its vectors' elements */
    s.chunks = k->chunks * k->vec;
    return s;
}

rk_value kn_auto_direct_cond(rk_kernel *k, const rk_row_knobs *kn, rk_value N, const rk_value *ptrs, uint32_t n) {
    rk_value low = rk_build_and(k, N, kn_i32(k, (int32_t)kn->vec - 1));
    rk_value ok = rk_build_cmp(k, "eq", low, kn_i32(k, 0));
    rk_value m16 = rk_const_i64(k, 15), z64 = rk_const_i64(k, 0);
    for (uint32_t i = 0; i < n; i++) {
        rk_value a = rk_build_ptrtoint(k, ptrs[i]);
        rk_value lo = rk_build_and(k, a, m16);
        rk_value al = rk_build_cmp(k, "eq", lo, z64);
        ok = rk_build_and(k, ok, al);
    }
    return ok;
}

rk_status kn_row_validate_auto(const rk_row_knobs *k, const rk_target *t, const rk_scalar *elems, uint32_t n) {
    if (!k->chunks || k->slices > 1)
        return rk_fail(RK_ERR_INVALID,
                       "knob 'stage' auto holds a cached row in one block: it needs chunks > 0 and slices=1, got "
                       "chunks=%u slices=%u (use stage=direct)", k->chunks, k->slices);
    if (k->chunks * k->vec > KN_SPAN_MAX_CHUNKS)
        return rk_fail(RK_ERR_INVALID,
                       "knob 'stage' auto: its span holds chunks x vec elements a thread, at most %u; got %u x %u "
                       "(use fewer chunks or stage=direct)", KN_SPAN_MAX_CHUNKS, k->chunks, k->vec);
    rk_row_knobs d = kn_auto_direct_knobs(k), s = kn_auto_span_knobs(k);
    uint64_t b = kn_span_bytes(&s, elems, n);
    if (b > kn_span_limit(t))
        return rk_fail(RK_ERR_INVALID,
                       "knob 'stage' auto: its span of rows_per_block x row capacity (%u x %u elements) needs %llu "
                       "bytes of LDS, at most %u on %s; use fewer rows_per_block or chunks, or stage=direct",
                       k->rows_per_block, kn_row_cap(k), (unsigned long long)b, kn_span_limit(t), t->name);
    rk_status st = kn_row_validate_stage(&s, t, elems, n);
    return st ? st : kn_row_validate_cached_slices(&d, t, elems[0], elems[n - 1]);
}

/* Blocks of k's direct rows resident on a CU / SM: by threads, at most
 * the occupancy hint and the target's block limit. */
static uint32_t direct_blocks(const rk_row_knobs *k, const rk_target *t) {
    uint32_t threads = t->max_threads_per_sm ? t->max_threads_per_sm : t->waves_per_simd * t->simds_per_cu * k->wave;
    uint32_t b = threads / k->block_size;
    if (k->min_blocks && k->min_blocks < b) b = k->min_blocks;
    if (t->max_blocks_per_sm && t->max_blocks_per_sm < b) b = t->max_blocks_per_sm;
    return b;
}

bool kn_row_auto_fits(const rk_row_knobs *k, const rk_target *t, const rk_scalar *elems, uint32_t n) {
    if (!k->chunks || k->slices > 1 || k->vec < 2 || k->chunks * k->vec > KN_AUTO_MAX_ELEMS) return false;
    rk_row_knobs s = kn_auto_span_knobs(k);
    uint64_t bytes = kn_span_bytes(&s, elems, n);
    if (bytes > kn_span_budget(t)) return false;
    /* the span's LDS is the kernel's whichever path runs: the aligned rows
     * must keep their resident blocks (with the reductions' slots and the
     * driver's share: KN_AUTO_LDS_EXTRA a block) */
    uint32_t cu = t->lds_per_cu ? t->lds_per_cu : t->lds_bytes;
    return cu / (bytes + KN_AUTO_LDS_EXTRA) >= direct_blocks(k, t);
}
