/* rocke — shared by the row families (reduce, softmax, layernorm, rmsnorm):
 * legal knob values, the shape heuristic (row geometry and the occupancy
 * hint), cross-field checks, shape limits, the grid and the launch-bound
 * attributes. Layer: kernels. */
#include <stdio.h>

#include "kern_int.h"

const uint32_t kn_legal_wave[] = {32, 64, 0};
const uint32_t kn_legal_block[] = {32, 64, 128, 256, 512, 1024, 0};
const uint32_t kn_legal_vec[] = {1, 2, 4, 8, 0};
const uint32_t kn_legal_rpb[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 0};
const uint32_t kn_legal_chunks[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                    17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 0};
const uint32_t kn_legal_unroll[] = {1, 2, 4, 8, 0};
const uint32_t kn_legal_minb[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 32, 0};
const uint32_t kn_legal_slices[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0};
const uint32_t kn_legal_tile[] = {16, 32, 64, 128, 0};
const uint32_t kn_legal_pad[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0};
const char *const kn_tail_names[] = {"masked", "buffer", NULL};

/* Elements per thread of a cached row (the validator's limit; the
 * heuristic keeps to half of it), and the packed registers the NVIDIA
 * heuristic allows a cached row (more go looped: no spills). */
#define KN_MAX_CACHED 128
#define KN_MAX_PACKED_REGS 32

void kn_row_defaults(rk_row_knobs *k) {
    *k = (rk_row_knobs){.wave = 64, .block_size = 256, .vec = 8, .rows_per_block = 1, .chunks = 0,
                        .unroll = 4, .tail = RK_TAIL_BUFFER, .min_blocks = 0, .split = true, .slices = 1};
}

static uint32_t np2(uint64_t x) {
    uint32_t p = 1;
    while (p < x && p < (1u << 30)) p <<= 1;
    return p;
}
static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Threads a row for nvec vectors, from the power of two tpr that keeps to
 * kmax chunks: a power of two just past nvec / kmax leaves the last chunk
 * nearly empty (4097 bf16 = 513 vectors: 512 threads x 2, and 511 of the
 * second chunks past the row's end, so every warp runs its masked path and
 * the block is twice the threads the row needs). Halve tpr while fewer than
 * 3/4 of the chunk slots hold vectors and the chunks stay within
 * KN_FILL_CHUNKS (512 x 2 -> 256 x 3 -> 128 x 5 at 4097; the H200 sweep's
 * best of 25 configurations for softmax, LayerNorm and RMSNorm there,
 * 1.21-1.37x the 512 x 2 pick). tpr stays at two waves or more (the
 * reduction stays a block's); a span's chunks count elements, which
 * already fill them. */
#define KN_FILL_CHUNKS 5u
#define KN_FILL_BLOCK 128u
/* A halving of the threads a row is taken only while the rows keep at
 * least this many threads (M x tpr/2): half the device's resident ones. 1000 x 3001 bf16 at 128 x 3 is 128 000
 * threads, under half of the H200's 132 x 2048; it measured 1610 GB/s
 * against 1808 for 256 x 2 (256 000 threads, one full wave). 0: no limit
 * (targets without a resident-thread count: AMD, unmeasured). */
static uint64_t fill_keep_threads(const rk_target *t) {
    return t->max_threads_per_sm ? (uint64_t)t->compute_units * t->max_threads_per_sm / 2 : 0;
}
static uint32_t fill_tpr(uint64_t nvec, uint32_t tpr, uint32_t kmax, uint32_t wave, bool span, uint64_t M,
                         uint64_t keep) {
    uint32_t cmax = kmax > KN_FILL_CHUNKS ? kmax : KN_FILL_CHUNKS;
    if (span) return tpr;
    /* below 3/4 full, or fuller at half the threads (5000 bf16 = 625
     * vectors: 256 x 3 is 81 % full, 128 x 5 98 %), within cmax chunks.
     * Taking every fuller halving keeps each pick on one interval of row
     * lengths (the shape variants' classes rely on it); a power of two
     * row is full already, so its pick stays. */
    while (tpr > 2 * wave && tpr <= 1024) {
        uint64_t c = cdiv(nvec, tpr), half = cdiv(nvec, tpr / 2);
        if (half > cmax || (4 * nvec >= 3 * c * tpr && half >= 2 * c)) break;
        /* few rows: fewer threads a row would leave the device half empty */
        if (keep && M * (tpr / 2) < keep) break;
        tpr /= 2;
    }
    return tpr;
}

/* Direct rows that start unaligned (split) and fill two chunks a thread
 * (over 3/4 of the slots) take half the threads and four chunks, where the
 * family allows them (split_elems): the row's reduction then spans half the
 * warps. Measured on the H200 (bench/RESULTS.md, session 18 call 1, bf16,
 * GB/s, 4 chunks against 2): LayerNorm 65536 x 1001 2410 / 2235, 65536 x
 * 1537 2308 / 2090, 32768 x 1999 2504 / 2381; RMSNorm 3377 / 3221, 3392 /
 * 3234, 3308 / 3242; call 7, longer rows: LayerNorm 8192 x 7001 2548 / 2352,
 * 4096 x 14001 2487 / 2121, RMSNorm 3438 / 3134, 3328 / 2900 (but 16384 x
 * 4001 3359 / 3434). Rows the fill rule leaves at 3 to 5 chunks (2047, 3001,
 * 4097, 5001) keep them: 4 chunks there lost 5-18 %. Not below a wave a row.
 * Only where the split follows from an odd N, not where it is locked: a
 * shape-less build's classes lock it at every length, and at aligned ones
 * four chunks lost (session 18 call 6, LayerNorm 65536 x 1000 2989 against
 * 3175, x 1536 3210 / 3291). */
static bool split_wide(const rk_row_knobs *k, uint64_t nvec, uint32_t tpr, uint32_t kwide) {
    if (!k->split || k->stage != RK_STAGE_DIRECT || tpr / 2 < k->wave || kwide < 4) return false;
    return cdiv(nvec, tpr) == 2 && cdiv(nvec, tpr / 2) == 4;
}

/* Knob order inside KN_ROW_KNOBS. */
enum { RK_W, RK_B, RK_V, RK_R, RK_K, RK_U, RK_T, RK_M, RK_S };

void kn_row_tune(rk_row_knobs *k, const rk_target *t, rk_scalar widest, const rk_shape *s, uint64_t locked,
                 uint32_t first, uint32_t kmax, uint32_t max_elems, uint32_t split_elems) {
    const uint64_t M = s->dim[0], N = s->dim[1];     /* kn_row_dims */
#define LOCKED(i) ((locked >> (first + (i))) & 1u)
    if (!LOCKED(RK_W)) k->wave = t->wave_size;
    if (!LOCKED(RK_V)) k->vec = 16 / rk_tile_elem_bytes(widest);
    if (!LOCKED(RK_U)) k->unroll = 4;
    if (!LOCKED(RK_M)) k->min_blocks = 0;
    /* rows of a multiple of vec start aligned: no split (the code of those
     * shapes stays as it was); others peel a head of up to vec-1 elements,
     * so a cached row must hold N + vec - 1 */
    if (!LOCKED(RK_S)) k->split = N % k->vec != 0;
    /* a span stage reads rows from LDS: no head to make room for */
    uint64_t span = N + (k->split && k->stage != RK_STAGE_SPAN ? k->vec - 1 : 0);
    /* more threads per row rather than more elements per thread: fewer
     * registers, more blocks resident, more bytes in flight per SM */
    uint32_t kwide = split_elems / k->vec < kmax ? split_elems / k->vec : kmax;
    if (max_elems && max_elems / k->vec < kmax) kmax = max_elems / k->vec ? max_elems / k->vec : 1;
    uint64_t nvec = cdiv(span ? span : 1, k->vec);
    uint32_t tpr;
    bool filled = false;
    if (LOCKED(RK_B) && LOCKED(RK_R)) tpr = k->block_size / (k->rows_per_block ? k->rows_per_block : 1);
    /* a locked chunk count: vectors a thread, elements for a span */
    else if (LOCKED(RK_K) && k->chunks) tpr = np2(cdiv(k->stage == RK_STAGE_SPAN ? N : nvec, k->chunks));
    /* short rows (a wave or less of vectors): one vector per lane, so
     * consecutive lanes read consecutive 16 bytes, several rows per wave
     * reduced by butterflies of width tpr */
    else if (nvec <= k->wave) tpr = np2(nvec);
    else {
        uint32_t wide = np2(cdiv(nvec, kmax));
        tpr = fill_tpr(nvec, wide, kmax, k->wave, k->stage == RK_STAGE_SPAN, M ? M : 1, fill_keep_threads(t));
        filled = tpr < wide;
        if (!filled && kwide > kmax && !LOCKED(RK_S) && split_wide(k, nvec, tpr, kwide)) tpr /= 2;
    }
    if (tpr > 1024) tpr = 1024;
    if (tpr < 1) tpr = 1;
    /* a locked rows_per_block caps the threads a row gets (the block is at
     * most 1024): size the chunks for that, or the row would not fit */
    if (LOCKED(RK_R) && !LOCKED(RK_B) && k->rows_per_block && tpr * k->rows_per_block > 1024)
        tpr = 1024 / k->rows_per_block ? 1024 / k->rows_per_block : 1;
    if (!LOCKED(RK_K)) {
        uint64_t c = cdiv(nvec, tpr);
        k->chunks = c * k->vec <= KN_MAX_CACHED / 2 ? (uint32_t)c : 0;
        /* packed row over 32 registers: loop instead (f32 rows over 32K) */
        if (max_elems && c * k->vec * rk_tile_elem_bytes(widest) / 4 > KN_MAX_PACKED_REGS) k->chunks = 0;
    }
    if (!k->chunks && !LOCKED(RK_B) && !LOCKED(RK_R)) tpr = (uint32_t)(nvec >= 1024 ? 1024 : np2(nvec));
    if (!LOCKED(RK_B)) {
        /* a filled row takes a block of its own (from 128 threads): two
         * rows a block wait on each other's reduction (H200, 4096 x 4097,
         * 128 x 5: one row a block 4-5% faster than two in all three families) */
        uint32_t least = filled ? KN_FILL_BLOCK : 256;
        uint32_t b = LOCKED(RK_R) ? tpr * k->rows_per_block : (tpr > least ? tpr : least);
        if (b > 1024) b = 1024;
        /* a legal block (a locked row count of short rows) */
        if (b < kn_legal_block[0]) b = kn_legal_block[0];
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
}

/* Registers a thread needs: the cached row in its storage type (packed) plus
 * what every row kernel keeps besides it (pointers, offsets, accumulators,
 * the reduction), measured with ptxas -v on sm_90a (docs/kernels.md). */
static uint32_t est_regs(const rk_row_knobs *k, rk_scalar elem, uint32_t base) {
    /* auto: its span's chunks x vec elements (the caller passes f32) */
    uint32_t elems = k->stage == RK_STAGE_SPAN ? k->chunks : k->chunks * k->vec;
    return elems * rk_tile_elem_bytes(elem) / 4 + base;
}

void kn_row_tune_occupancy(rk_row_knobs *k, const rk_target *t, rk_scalar elem, uint64_t locked, uint32_t first,
                           uint32_t base_regs) {
    if (LOCKED(RK_M) || t->vendor != RK_VENDOR_NVIDIA || !k->chunks || !t->max_threads_per_sm) return;
    /* several rows per block: per-thread row index and a wider reduction */
    uint32_t regs = (est_regs(k, elem, base_regs + (k->rows_per_block > 1 ? 4 : 0)) + 7) / 8 * 8;
    uint32_t by_threads = t->max_threads_per_sm / k->block_size;
    uint32_t by_regs = t->regs_per_sm / (regs * k->block_size);
    uint32_t b = by_threads < by_regs ? by_threads : by_regs;
    if (b > t->max_blocks_per_sm) b = t->max_blocks_per_sm;
    /* a legal knob value at or below b */
    uint32_t best = 1;
    for (uint32_t i = 1; kn_legal_minb[i]; i++)
        if (kn_legal_minb[i] <= b) best = kn_legal_minb[i];
    k->min_blocks = b ? best : 1;
}

/* Fewer rows than compute units and rows of at least two slices of
 * KN_SLICE_MIN elements: enough slices for two blocks of KN_SLICE_BLOCK
 * per unit, the unroll cut until the slices of whole steps number that.
 * Up to KN_SLICE_FEW_ROWS rows (kern_int.h): about one block of KN_SLICE_FEW_BLOCK per
 * unit, the unroll kept (fewer slices instead). H200, bench/RESULTS.md
 * session 15 call 6 (bf16, GB/s, few-rows rule / the other): 1 x 262144
 * LayerNorm 130 / 107, softmax 62 / 51, RMSNorm 92 / 79; 4 x 150001 175 /
 * 153, 145 / 120, 150 / 144; 8 x 1000003 1113 / 869, 1307 / 1217, 1325 /
 * 1124. From 16 rows on it lost (softmax and RMSNorm 10-30 % at 64-128
 * rows), so the other rule keeps those. */
#define KN_SLICE_MIN 8192u
#define KN_SLICE_BLOCK 256u
#define KN_SLICE_FEW_BLOCK 512u

void kn_row_tune_slices(rk_row_knobs *k, const rk_target *t, const rk_shape *s, uint64_t locked, uint32_t first,
                        uint32_t slices_knob) {
    const uint64_t M = s->dim[0], N = s->dim[1];     /* kn_row_dims */
    if (!((locked >> slices_knob) & 1u)) {
        uint64_t units = t->compute_units ? t->compute_units : 1, want = 1;
        /* a cached row or several rows a block asked for: no split */
        bool free_shape = !(LOCKED(RK_K) && k->chunks) && !(LOCKED(RK_R) && k->rows_per_block > 1);
        if (free_shape && M < units && N >= 2 * KN_SLICE_MIN) {
            want = cdiv(M <= KN_SLICE_FEW_ROWS ? units : 2 * units, M);
            if (want > N / KN_SLICE_MIN) want = N / KN_SLICE_MIN;
            if (want > 16) want = 16;
        }
        k->slices = want < 2 ? 1 : (uint32_t)want;
    }
    if (k->slices < 2) return;
    /* the split path: looped rows, one per block */
    if (!LOCKED(RK_K)) k->chunks = 0;
    if (!LOCKED(RK_R)) k->rows_per_block = 1;
    bool few = M <= KN_SLICE_FEW_ROWS;
    uint32_t block = few ? KN_SLICE_FEW_BLOCK : KN_SLICE_BLOCK;
    if (!LOCKED(RK_B)) k->block_size = block < t->max_workgroup ? block : t->max_workgroup;
    if (!LOCKED(RK_M)) k->min_blocks = 0;
    if (!LOCKED(RK_T)) {
        k->tail = rk_tile_default_tail(t);
        if (kn_row_tpr(k) < k->wave) k->tail = RK_TAIL_MASKED;
    }
    /* slices cover whole loop steps (kn_slices_begin): fewer loads in
     * flight rather than fewer slices (few rows: the reverse), then drop
     * the slices that would start past the row's end */
    if (!((locked >> slices_knob) & 1u)) {
        uint64_t span = N + k->vec - 1, per = 0;
        for (;;) {
            uint64_t stride = (uint64_t)kn_row_tpr(k) * k->vec * k->unroll;
            per = cdiv(cdiv(span, k->slices), stride) * stride;
            if (few || LOCKED(RK_U) || k->unroll == 1 || cdiv(span, per) == k->slices) break;
            k->unroll /= 2;
        }
        k->slices = (uint32_t)cdiv(span, per);
    }
}

#undef LOCKED

void kn_row_attrs(rk_kernel *kern, const rk_row_knobs *k, const rk_target *t) {
    if (!k->min_blocks) return;
    if (t->vendor == RK_VENDOR_NVIDIA) {
        rk_kernel_set_attr_int(kern, "min_blocks_per_sm", k->min_blocks);
        return;
    }
    /* AMD: the same occupancy as waves per SIMD */
    uint32_t waves = k->min_blocks * ((k->block_size + k->wave - 1) / k->wave);
    uint32_t simds = t->simds_per_cu ? t->simds_per_cu : 4;
    rk_kernel_set_attr_int(kern, "waves_per_eu", (waves + simds - 1) / simds);
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
    if (k->min_blocks && t->vendor == RK_VENDOR_NVIDIA &&
        (k->min_blocks * k->block_size > t->max_threads_per_sm || k->min_blocks > t->max_blocks_per_sm))
        return rk_fail(RK_ERR_INVALID,
                       "knob 'min_blocks_per_sm' x block_size must be at most %u threads per SM on %s, got %u x %u",
                       t->max_threads_per_sm, t->name, k->min_blocks, k->block_size);
    if (k->min_blocks && t->vendor == RK_VENDOR_AMD) {
        uint32_t waves = k->min_blocks * ((k->block_size + k->wave - 1) / k->wave);
        uint32_t simds = t->simds_per_cu ? t->simds_per_cu : 4;
        if ((waves + simds - 1) / simds > t->waves_per_simd)
            return rk_fail(RK_ERR_INVALID,
                           "knob 'min_blocks_per_sm' x waves per block must be at most %u waves per CU on %s, got "
                           "%u x %u", t->waves_per_simd * simds, t->name, k->min_blocks,
                           (k->block_size + k->wave - 1) / k->wave);
    }
    if (k->slices > 1 && (k->chunks || k->rows_per_block != 1))
        return rk_fail(RK_ERR_INVALID,
                       "knob 'slices' > 1 splits a looped row over blocks: it needs chunks=0 and rows_per_block=1, "
                       "got chunks=%u rows_per_block=%u", k->chunks, k->rows_per_block);
    if (k->chunks * k->vec > KN_MAX_CACHED)
        return rk_fail(RK_ERR_INVALID,
                       "knobs 'chunks' x 'vec' must be at most %u registers per thread, got %u x %u (use chunks=0 "
                       "for the looped path)", KN_MAX_CACHED, k->chunks, k->vec);
    return RK_OK;
}

rk_status kn_row_validate_cached_slices(const rk_row_knobs *k, const rk_target *t, rk_scalar a, rk_scalar b) {
    if (k->slices < 2 || !k->chunks) return kn_row_validate(k, t, a, b);
    if (k->rows_per_block != 1 || k->tail != RK_TAIL_MASKED)
        return rk_fail(RK_ERR_INVALID,
                       "knob 'slices' > 1 splits a row over blocks: a looped row (chunks=0) or a cached slice per "
                       "block (chunks > 0, tail=masked), both with rows_per_block=1; got chunks=%u rows_per_block=%u "
                       "tail=%s", k->chunks, k->rows_per_block, kn_tail_names[k->tail]);
    /* the other checks as for any row kernel */
    rk_row_knobs one = *k;
    one.slices = 1;
    return kn_row_validate(&one, t, a, b);
}

rk_status kn_row_check_shape(const rk_row_knobs *k, const rk_shape *s) {
    const uint64_t M = s->dim[0], N = s->dim[1];     /* kn_row_dims */
    if (M > INT32_MAX || N * 4 > INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "shape %llu,%llu: rows must be < 2^31 and a row < 2 GiB",
                       (unsigned long long)M, (unsigned long long)N);
    uint64_t cap = kn_row_cap(k);
    if (k->chunks && N > cap && k->stage == RK_STAGE_SPAN)
        return rk_fail(RK_ERR_INVALID,
                       "shape N=%llu exceeds this kernel's row capacity %llu (stage=span: block_size/rows_per_block "
                       "x chunks elements = %u x %u); build with chunks=0 (looped) or for this shape",
                       (unsigned long long)N, (unsigned long long)cap, kn_row_tpr(k), k->chunks);
    if (k->chunks && N > cap)
        return rk_fail(RK_ERR_INVALID,
                       "shape N=%llu exceeds this kernel's row capacity %llu (block_size/rows_per_block x vec x "
                       "chunks x slices = %u x %u x %u x %u); build with chunks=0 (looped) or for this shape",
                       (unsigned long long)N, (unsigned long long)cap, kn_row_tpr(k), k->vec, k->chunks,
                       k->slices);
    return RK_OK;
}

rk_tile_row kn_row_view(rk_kernel *k, const rk_row_knobs *kn, rk_value ptr, rk_scalar elem, rk_value row,
                        rk_value N, rk_value active, const rk_tile_row *like) {
    if (!kn->split) return rk_tile_row_view(k, ptr, elem, row, N, N, active, kn->vec, kn->tail);
    return rk_tile_row_view_split(k, ptr, elem, row, N, N, active, kn->vec, kn->tail, like, kn_row_cap(kn));
}

uint32_t kn_row_param_align(const rk_row_knobs *k, const rk_kparam *kp) {
    bool any = (k->split && k->vec > 1) || k->stage != RK_STAGE_DIRECT;
    return any && kp->role != RK_KP_WORK ? rk_tile_elem_bytes(kp->type) : 16;
}

void kn_row_tune_stage(rk_row_knobs *k, const rk_target *t, rk_scalar widest, const rk_shape *s, uint64_t locked,
                       uint32_t first, uint32_t kmax, uint32_t max_elems, uint32_t split_elems, uint32_t slices_knob,
                       uint32_t stage_knob, const rk_scalar *elems, uint32_t n, uint64_t span_max_n) {
    const uint64_t N = s->dim[1];     /* kn_row_dims */
    bool pinned = (locked >> stage_knob) & 1u;
    if (!pinned) {
        /* a locked chunk count is in vectors: it asks for direct rows */
        uint32_t vec = ((locked >> (first + RK_V)) & 1u) ? k->vec : 16 / rk_tile_elem_bytes(widest);
        bool free_chunks = !((locked >> (first + RK_K)) & 1u);
        bool short_enough = !span_max_n || N <= span_max_n;
        k->stage = free_chunks && vec > 1 && N % vec != 0 && short_enough ? RK_STAGE_SPAN : RK_STAGE_DIRECT;
    }
    /* a span holds f32 elements, not packed vectors: at most 16 a thread
     * on every target (AMD's 32 took 130 VGPRs in LayerNorm, gfx950) */
    kn_row_tune(k, t, widest, s, locked, first, kmax, k->stage == RK_STAGE_SPAN && !max_elems ? 16 : max_elems,
                split_elems);
    kn_row_tune_slices(k, t, s, locked, first, slices_knob);
    /* auto (only when locked) is tuned as direct rows: chunks in vectors */
    if (k->stage != RK_STAGE_SPAN) return;
    /* a span thread holds elements, not vectors: as many as its row needs */
    if (k->chunks && !((locked >> (first + RK_K)) & 1u)) {
        uint64_t c = (N + kn_row_tpr(k) - 1) / kn_row_tpr(k);
        k->chunks = c <= KN_SPAN_MAX_CHUNKS ? (uint32_t)c : 0;
    }
    if (pinned) return;
    if (k->chunks && k->slices == 1 && kn_span_bytes(k, elems, n) <= kn_span_budget(t)) return;
    /* the span does not fit (or the row is looped or split): direct, tuned as before */
    k->stage = RK_STAGE_DIRECT;
    kn_row_tune(k, t, widest, s, locked, first, kmax, max_elems, split_elems);
    kn_row_tune_slices(k, t, s, locked, first, slices_knob);
}

rk_status kn_row_validate_stage(const rk_row_knobs *k, const rk_target *t, const rk_scalar *elems, uint32_t n) {
    if (k->stage == RK_STAGE_AUTO) return kn_row_validate_auto(k, t, elems, n);
    if (k->stage != RK_STAGE_SPAN) return kn_row_validate_cached_slices(k, t, elems[0], elems[n - 1]);
    if (!k->chunks || k->slices > 1)
        return rk_fail(RK_ERR_INVALID,
                       "knob 'stage' span stages a cached row held by one block: it needs chunks > 0 and slices=1, "
                       "got chunks=%u slices=%u (use stage=direct)", k->chunks, k->slices);
    uint64_t b = kn_span_bytes(k, elems, n);
    if (b > kn_span_limit(t))
        return rk_fail(RK_ERR_INVALID,
                       "knob 'stage' span: rows_per_block x row capacity (%u x %u elements) needs %llu bytes of LDS, "
                       "at most %u on %s; use fewer rows_per_block or chunks, or stage=direct",
                       k->rows_per_block, kn_row_cap(k), (unsigned long long)b,
                       kn_span_limit(t), t->name);
    /* the other checks as for a cached row of as many vectors */
    rk_row_knobs v = *k;
    v.stage = RK_STAGE_DIRECT;
    v.chunks = (k->chunks + k->vec - 1) / k->vec;
    return kn_row_validate(&v, t, elems[0], elems[n - 1]);
}

/* x: ceil(M / rows_per_block) (M is dimension 0); y: the slices of a row */
void kn_row_geometry(const rk_row_knobs *k, rk_launch_geom *g) {
    kn_geom_cdiv_dim(g, 0, k->rows_per_block ? k->rows_per_block : 1);
    kn_geom_axis(g);
    kn_geom_const(g, k->slices > 1 ? k->slices : 1);
    kn_geom_axis(g);
    g->block[0] = k->block_size;
}
