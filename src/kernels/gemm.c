/* rocke — the GEMM families' tables: gemm (M, N, K) and batched_gemm
 * (batch, M, N, K with strided batches): knobs, dimensions, scalars, the
 * heuristic, shape checks, the signature, grid and cost. The plan
 * (gemm_plan.c) does the validation, gemm_build.c the kernel, and
 * gemm_reference.c the double reference. Layer: kernels. */
#include <stdio.h>

#include "gemm_hopper.h"

static const char *const layout_names[] = {"rr", "rc", "cr", "cc", NULL};
/* the atom knob: "auto" then every catalog atom by id */
static const char *const atom_names[] = {
    "auto",
#define RK_ATOM(id, name, ...) name,
#include "rocke/atoms.def"
    NULL,
};
static const uint32_t legal_tile[] = {8, 16, 32, 48, 64, 96, 128, 192, 256, 0};
static const uint32_t legal_warps[] = {1, 2, 4, 8, 0};
static const uint32_t legal_stages[] = {1, 2, 3, 4, 5, 6, 0};
static const uint32_t legal_vec[] = {1, 2, 4, 8, 16, 0};   /* 16: one-byte (fp8) elements */
static const uint32_t legal_group[] = {1, 2, 4, 8, 16, 32, 64, 0};
static const uint32_t legal_wave[] = {32, 64, 0};
static const uint32_t legal_split[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0};
static const char *const split_reduce_names[] = {"workspace", "atomic", NULL};
static const char *const epilogue_names[] = {"direct", "cshuffle", "tma", NULL};
static const uint32_t legal_xcd[] = {0, 1, 2, 4, 8, 16, 0};
static const char *const path_names[] = {"mma", "wgmma", "stream", NULL};
static const char *const schedule_names[] = {"plain", "ws", "persistent", "pingpong", NULL};
static const char *const scale_names[] = {"none", "tensor", "block", NULL};
static const char *const promote_names[] = {"overlap", "serial", NULL};
static const char *const pad_names[] = {"none", "a", "b", "ab", NULL};
static const uint32_t legal_blocks[] = {0, 1, 2, 3, 4, 6, 8, 16, 32, 64, 66, 108, 114, 128, 132, 256, 264, 0};
static const uint32_t legal_cluster[] = {0, 2, 0};

const rk_knob kn_gemm_knobs[] = {
    KN_ENUM("layout", "l", u.gemm.layout, layout_names, false,
            "A row/column-major, then B (rr: A [M,K], B [K,N]; rc: B stored [N,K]; cr: A stored [K,M]; cc)"),
    KN_DTYPE_F8("dtype", "", u.gemm.dtype, "A and B element type (8-bit floats: layout rc, the target's encoding)"),
    KN_DTYPE("out_dtype", "o", u.gemm.out_dtype, "C element type"),
    KN_TUPLE("tile", "t", u.gemm.tile, 3, legal_tile, true, "block tile MxNxK"),
    KN_TUPLE("warps", "w", u.gemm.warps, 2, legal_warps, true, "warps per block MxN"),
    KN_ENUM("atom", "a", u.gemm.atom, atom_names, true, "matrix atom (auto: the target's default for dtype)"),
    KN_U32("stages", "s", u.gemm.stages, legal_stages, true, "LDS buffers in flight (2+: async copies)"),
    KN_U32("vec_a", "va", u.gemm.vec_a, legal_vec, true, "elements per global access of A"),
    KN_U32("vec_b", "vb", u.gemm.vec_b, legal_vec, true, "elements per global access of B"),
    KN_U32("group_m", "g", u.gemm.group_m, legal_group, true, "grouped-M block order for L2 reuse (1: none)"),
    KN_U32("wave", "wv", u.gemm.wave, legal_wave, true, "target wave/warp size (64 CDNA, 32 NVIDIA)"),
    KN_U32("split_k", "sk", u.gemm.split_k, legal_split, true, "K ranges reduced across blocks (grid y)"),
    KN_ENUM("split_reduce", "sr", u.gemm.split_reduce, split_reduce_names, false,
            "split-K: workspace (deterministic, any epilogue) or atomic (f32 adds into a zeroed C)"),
    KN_ENUM("epilogue", "ep", u.gemm.epilogue, epilogue_names, true,
            "C stores: direct (from the accumulators), cshuffle (path=mma: staged in LDS, 16-byte row chunks) or "
            "tma (path=wgmma: staged in shared memory, one TMA box per warpgroup)"),
    KN_U32("xcd", "x", u.gemm.xcd, legal_xcd, true,
           "AMD dies the block ids are remapped over (0: off; 8 on gfx942/gfx950)"),
    KN_EPI("fuse", u.gemm.fuse, "epilogue chain, e.g. bias,gelu (operands in out_dtype)"),
    KN_ENUM("path", "p", u.gemm.path, path_names, true,
            "main loop: mma (mma.sync/MFMA, cp.async), wgmma (sm_90a: TMA + mbarriers + wgmma) or stream "
            "(NVIDIA, layout rc: mma.sync fragments read from global memory in 16-byte pieces, no LDS)"),
    KN_ENUM("schedule", "sc", u.gemm.schedule, schedule_names, true,
            "path=wgmma: plain (all warpgroups consume), ws (a TMA producer warpgroup, setmaxnreg), persistent "
            "(ws over `blocks` blocks walking the tiles) or pingpong (persistent, two consumers on alternate tiles)"),
    KN_U32("blocks", "pb", u.gemm.blocks, legal_blocks, true,
           "schedule=persistent|pingpong: blocks in the grid (0: the heuristic sets the target's SM count)"),
    KN_ENUM_QUIET("scale", "fs", u.gemm.scale, scale_names, false,
            "fp8 inputs: none, tensor (one f32 per operand, Sa and Sb) or block (f32 per row and 128-K block of A, "
            "per 128 x 128 block of B)"),
    KN_ENUM_QUIET("promote", "pr", u.gemm.promote, promote_names, true,
            "scale=block, path=wgmma: overlap (two block accumulator sets: the next block's wgmmas run while one is "
            "promoted) or serial (each block retired and promoted before the next is issued)"),
    KN_ENUM_QUIET("pad", "pd", u.gemm.pad, pad_names, true,
            "path=wgmma, schedule=persistent: operands the kernel first stages into a padded copy (row stride "
            "rounded up to 8, TMA's 16-byte rule) in a workspace: none, a, b or ab (odd leading dimensions)"),
    KN_U32_QUIET("cluster", "cl", u.gemm.cluster, legal_cluster, true,
                 "path=wgmma, schedule=plain: 0 (none) or 2 (blocks in pairs; a pair whose tiles share B reads it "
                 "once, each block loading half and multicasting it to both)"),
};
_Static_assert(RK_COUNTOF(kn_gemm_knobs) == KN_GEMM_NKNOBS, "KN_GEMM_NKNOBS counts kn_gemm_knobs");

static const rk_dim_decl gemm_dims[] = {
    {"M", 4096, "rows of A and C"}, {"N", 4096, "columns of B and C"}, {"K", 4096, "the reduction"},
};
static const rk_dim_decl batched_dims[] = {
    {"batch", 8, "independent products"}, {"M", 1024, "rows of A and C"}, {"N", 1024, "columns of B and C"},
    {"K", 1024, "the reduction"},
};

static bool a_row(const rk_instance *in) { return in->u.gemm.layout == RK_GEMM_RR || in->u.gemm.layout == RK_GEMM_RC; }
static bool b_row(const rk_instance *in) { return in->u.gemm.layout == RK_GEMM_RR || in->u.gemm.layout == RK_GEMM_CR; }

/* the shape's dimension by name, for gemm or batched_gemm (offset 1) */
static double dimv(const rk_shape *s, int i) { return (double)s->dim[s->rank == 4 ? i + 1 : i]; }
enum { DM = 0, DN = 1, DK = 2 };

static double lda(const rk_instance *in, const rk_shape *s) { return a_row(in) ? dimv(s, DK) : dimv(s, DM); }
static double ldb(const rk_instance *in, const rk_shape *s) { return b_row(in) ? dimv(s, DN) : dimv(s, DK); }
static double ldc(const rk_instance *in, const rk_shape *s) { (void)in; return dimv(s, DN); }
static double stride_a(const rk_instance *in, const rk_shape *s) { (void)in; return dimv(s, DM) * dimv(s, DK); }
static double stride_b(const rk_instance *in, const rk_shape *s) { (void)in; return dimv(s, DK) * dimv(s, DN); }
static double stride_c(const rk_instance *in, const rk_shape *s) { (void)in; return dimv(s, DM) * dimv(s, DN); }

#define GEMM_SCALARS                                                                                    \
    {"M", RK_S_I32, RK_SC_DIM, "M", NULL, 0, "rows"}, {"N", RK_S_I32, RK_SC_DIM, "N", NULL, 0, "columns"},  \
    {"K", RK_S_I32, RK_SC_DIM, "K", NULL, 0, "reduction"},                                             \
    {"lda", RK_S_I32, RK_SC_DERIVED, NULL, lda, 0, "A's leading dimension (packed)"},                  \
    {"ldb", RK_S_I32, RK_SC_DERIVED, NULL, ldb, 0, "B's leading dimension (packed)"},                  \
    {"ldc", RK_S_I32, RK_SC_DERIVED, NULL, ldc, 0, "C's leading dimension (packed)"},                  \
    {"alpha", RK_S_F32, RK_SC_GIVEN, NULL, NULL, 1.0, "--fuse scale factor"},                          \
    {"alpha1", RK_S_F32, RK_SC_GIVEN, NULL, NULL, 1.0, "second scale factor"},                         \
    {"ldd0", RK_S_I32, RK_SC_DERIVED, NULL, ldc, 0, "D0's leading dimension"},                         \
    {"ldd1", RK_S_I32, RK_SC_DERIVED, NULL, ldc, 0, "D1's leading dimension"},                         \
    {"ldd2", RK_S_I32, RK_SC_DERIVED, NULL, ldc, 0, "D2's leading dimension"},                         \
    {"ldd3", RK_S_I32, RK_SC_DERIVED, NULL, ldc, 0, "D3's leading dimension"}
static const rk_scalar_decl gemm_scalars[] = {GEMM_SCALARS};
static const rk_scalar_decl batched_scalars[] = {
    GEMM_SCALARS,
    {"stride_a", RK_S_I64, RK_SC_DERIVED, NULL, stride_a, 0, "elements between A matrices"},
    {"stride_b", RK_S_I64, RK_SC_DERIVED, NULL, stride_b, 0, "elements between B matrices"},
    {"stride_c", RK_S_I64, RK_SC_DERIVED, NULL, stride_c, 0, "elements between C matrices"},
};

void kn_gemm_defaults(rk_instance *in) {
    in->u.gemm = (rk_gemm_spec){.layout = RK_GEMM_RC, .dtype = RK_S_F16, .out_dtype = RK_S_F16,
                                .tile = {128, 128, 32}, .warps = {2, 2}, .atom = RK_ATOM_NONE, .stages = 4,
                                .vec_a = 8, .vec_b = 8, .group_m = 8, .wave = 32, .split_k = 1,
                                .split_reduce = RK_GEMM_SPLIT_WORKSPACE};
}

/* Largest vector width (<= 8) dividing an extent. */
uint32_t kn_gemm_vec_for(uint64_t extent) {
    uint32_t v = 8;
    while (v > 1 && extent % v) v /= 2;
    return v;
}

static void tune(rk_instance *in, const rk_target *t, const rk_shape *sh, uint64_t locked) {
    rk_gemm_spec *s = &in->u.gemm;
    bool amd = t->vendor == RK_VENDOR_AMD;
    if (!(locked >> KN_GK_WAVE & 1)) s->wave = t->wave_size;
    uint64_t M = sh->dim[sh->rank == 4 ? 1 : 0], N = sh->dim[sh->rank == 4 ? 2 : 1], K = sh->dim[sh->rank == 4 ? 3 : 2];
    uint64_t batch = sh->rank == 4 ? sh->dim[0] : 1;
    if (!(locked >> KN_GK_VA & 1)) s->vec_a = kn_gemm_vec_for(a_row(in) ? K : M);
    if (!(locked >> KN_GK_VB & 1)) s->vec_b = kn_gemm_vec_for(b_row(in) ? N : K);
    /* the largest tile that still gives every unit a block (or the smallest) */
    static const uint32_t cand[][5] = {
        {128, 128, 32, 2, 2}, {128, 64, 32, 2, 2}, {64, 64, 32, 2, 2}, {64, 32, 32, 2, 1}, {32, 32, 32, 1, 1},
    };
    static const uint32_t cand_amd[][5] = {{128, 128, 32, 2, 2}, {64, 64, 32, 2, 2}, {32, 32, 32, 1, 1}};
    const uint32_t (*c)[5] = amd ? cand_amd : cand;
    size_t nc = amd ? 3 : 5, pick = nc - 1;
    for (size_t i = 0; i < nc; i++) {
        uint64_t blocks = (M + c[i][0] - 1) / c[i][0] * ((N + c[i][1] - 1) / c[i][1]) * batch;
        if (blocks >= t->compute_units) { pick = i; break; }
    }
    if (!(locked >> KN_GK_TILE & 1)) {
        s->tile[0] = c[pick][0];
        s->tile[1] = c[pick][1];
        s->tile[2] = c[pick][2];
    }
    if (!(locked >> KN_GK_WARPS & 1)) {
        s->warps[0] = c[pick][3];
        s->warps[1] = c[pick][4];
    }
    /* Narrow global reads (an odd leading dimension) hold a K tile in
     * registers between its loads and its LDS stores: a 128 x 128 tile on
     * 32-lane warps then wants 8 warps, or accumulators and held copies spill. */
    uint32_t eb = rk_tile_elem_bytes(s->dtype);
    bool held = s->vec_a * eb < 4 || s->vec_b * eb < 4;
    if (held && !amd && !(locked >> KN_GK_WARPS & 1) && s->tile[0] == 128 && s->tile[1] == 128 && s->warps[0] == 2 &&
        s->warps[1] == 2)
        s->warps[1] = 4;
    if (!(locked >> KN_GK_STAGES & 1)) s->stages = amd ? 2 : (K > 2 * s->tile[2] ? 4 : 2);
    if (!(locked >> KN_GK_GROUP & 1)) s->group_m = 8;
    if (kn_gemm_hopper_f8(s)) kn_gemm_fp8_tune(s, t, M, N, K, locked);
    if (M <= 64)
        kn_gemm_tune_skinny(s, t, M, (kn_gemm_locks){.tile = locked >> KN_GK_TILE & 1,
                                                     .warps = locked >> KN_GK_WARPS & 1,
                                                     .atom = locked >> KN_GK_ATOM & 1,
                                                     .stages = locked >> KN_GK_STAGES & 1});
    if (!(locked >> KN_GK_SPLIT & 1)) s->split_k = kn_gemm_tune_split(s, t, M, N, K, batch);
    /* The Hopper path reduces the whole K in one block. Decode shapes (M <= 64)
     * keep the skinny split-K mma choice (more blocks streaming the weights);
     * elsewhere wgmma wins where it applies, and then nothing is split. */
    bool split_locked = locked >> KN_GK_SPLIT & 1;
    bool path_locked = locked >> KN_GK_PATH & 1;
    /* path=stream (gemm_stream.c: the weights straight into mma.sync fragments, no LDS) only when
     * asked for: on the H200 (session 6) it streamed 1991 GB/s at 16x8192x8192 where the skinny
     * split-K mma kernel streamed 2963 (M 1: 2081 / 3383; M 64: 56.6 / 105.3 TFLOP/s) */
    if (path_locked && s->path == RK_GEMM_PATH_STREAM) {
        if (kn_gemm_tune_stream(s, t, M, N, K, batch, locked)) {
            kn_gemm_tune_epilogue(s, t, locked);
            return;
        }
        if (path_locked) return;   /* validation names the rule */
    }
    if (!path_locked) {
        /* H200, session 8 (bench/RESULTS.md): wgmma's 64-row tiles beat the split-K mma kernel from
         * M = 32 on (64x8192x8192: 168.5 against 104.9 TFLOP/s, cuBLAS 184.2; 32x4096x4096: 58.6
         * against 36.3, cuBLAS 55.7) while M <= 16 keeps it (46.0 at 16x8192x8192, 0.92x cuBLAS); a
         * problem of too few 64-row tiles for a quarter of the SMs (wgmma does not split K) stays on it */
        uint64_t wg_tiles = (M + 63) / 64 * ((N + 63) / 64) * batch;
        bool few = wg_tiles * 4 < t->compute_units;
        bool skinny = (M <= 16 || (M <= 64 && few)) && !split_locked;
        bool shuffle = (locked >> KN_GK_EPI & 1) && s->epilogue == RK_GEMM_EPI_CSHUFFLE;   /* an mma epilogue */
        bool f8 = kn_gemm_hopper_f8(s);   /* fp8 has only the wgmma path */
        if (!f8 && ((split_locked && s->split_k > 1) || skinny || shuffle)) {
            s->path = RK_GEMM_PATH_MMA;
        } else {
            rk_gemm_spec before = *s;
            /* M 17..64 with tiles enough: the skinny tuning's split is mma's; wgmma reduces all of K.
             * Elsewhere a split the mma tuning chose keeps the mma kernel, unless wgmma splits K itself
             * (kn_gemm_hopper_tune: K-heavy problems of few tiles) */
            if (!split_locked && M <= 64) s->split_k = 1;
            bool mma_split = !f8 && s->split_k > 1;
            kn_gemm_hopper_tune(s, t, M, N, K, sh->rank == 4, locked);
            bool wgmma_split = s->path == RK_GEMM_PATH_WGMMA && s->split_k > 1;
            if (s->path != RK_GEMM_PATH_WGMMA || (mma_split && !wgmma_split)) *s = before;
        }
    } else if (s->path == RK_GEMM_PATH_WGMMA) {
        /* an explicit path=wgmma still gets its tile, stages and schedule; where the
         * path does not apply the spec stays as given and validation names the rule */
        kn_gemm_hopper_tune(s, t, M, N, K, sh->rank == 4, locked);
        bool tuned = s->path == RK_GEMM_PATH_WGMMA;   /* else the mma tuning's split is still there */
        s->path = RK_GEMM_PATH_WGMMA;
        kn_gemm_hopper_tune_schedule(s, t, M, N, locked);
        if (!split_locked && !tuned) s->split_k = 1;
    }
    kn_gemm_tune_epilogue(s, t, locked);
}

static rk_status validate_any(const rk_instance *in, const rk_target *t, bool batched) {
    const rk_gemm_spec *s = &in->u.gemm;
    if (s->wave != t->wave_size)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'wave' = %u, but %s runs %u-lane waves", s->wave, t->name,
                       t->wave_size);
    if (s->path != RK_GEMM_PATH_WGMMA && (s->schedule != RK_GEMM_SCHED_PLAIN || s->blocks))
        return rk_fail(RK_ERR_INVALID, "gemm: knobs 'schedule' and 'blocks' are for path=wgmma (path=mma takes "
                       "schedule=plain blocks=0)");
    if (s->path != RK_GEMM_PATH_WGMMA && s->cluster)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'cluster' = %u multicasts TMA loads (path=wgmma, sm_90a); "
                       "path=%s: legal here cluster=0", s->cluster, s->path == RK_GEMM_PATH_STREAM ? "stream" : "mma");
    if (s->path != RK_GEMM_PATH_WGMMA && s->pad != RK_GEMM_PAD_NONE)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'pad' stages operands for the TMA of path=wgmma (schedule="
                       "persistent); path=%s reads any leading dimension as it is: legal here pad=none",
                       s->path == RK_GEMM_PATH_STREAM ? "stream" : "mma");
    kn_gemm_plan p;
    return kn_gemm_plan_make(s, t, batched, &p);
}
static rk_status validate(const rk_instance *in, const rk_target *t) { return validate_any(in, t, false); }
static rk_status validate_b(const rk_instance *in, const rk_target *t) { return validate_any(in, t, true); }

static rk_status check_shape(const rk_instance *in, const rk_shape *sh) {
    const rk_gemm_spec *s = &in->u.gemm;
    bool b4 = sh->rank == 4;
    uint64_t M = sh->dim[b4], N = sh->dim[b4 + 1], K = sh->dim[b4 + 2];
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "gemm: M, N and K must each be < 2^31");
    if (b4 && sh->dim[0] > 65535) return rk_fail(RK_ERR_INVALID, "batched_gemm: batch must be at most 65535");
    uint64_t tiles = (M + s->tile[0] - 1) / s->tile[0] * ((N + s->tile[1] - 1) / s->tile[1]);
    if (tiles > INT32_MAX) return rk_fail(RK_ERR_INVALID, "gemm: %llu output tiles is more than a grid holds",
                                          (unsigned long long)tiles);
    if (s->path == RK_GEMM_PATH_WGMMA) return kn_gemm_hopper_check_shape(s, M, N, K);   /* TMA reads A and B */
    /* the contiguous extents (and packed leading dimensions) must hold whole vectors */
    uint64_t ea = a_row(in) ? K : M, ebx = b_row(in) ? N : K;
    if (ea % s->vec_a)
        return rk_fail(RK_ERR_INVALID, "gemm: %s = %llu is not a multiple of vec_a = %u (A is read in vectors along "
                       "it): build with --vec-a %u, or with --shape so the heuristic picks it", a_row(in) ? "K" : "M",
                       (unsigned long long)ea, s->vec_a, kn_gemm_vec_for(ea));
    if (ebx % s->vec_b)
        return rk_fail(RK_ERR_INVALID, "gemm: %s = %llu is not a multiple of vec_b = %u (B is read in vectors along "
                       "it): build with --vec-b %u, or with --shape so the heuristic picks it", b_row(in) ? "N" : "K",
                       (unsigned long long)ebx, s->vec_b, kn_gemm_vec_for(ebx));
    return RK_OK;
}

const char *kn_gemm_epi_name(const char *name) {
    static const char *const stat[] = {"Bias", "Bias1", "Bias2", "Bias3", "BiasRow", "BiasRow1", "BiasRow2",
                                       "BiasRow3", "alpha", "alpha1", "D0", "D1", "D2", "D3", "ldd0", "ldd1",
                                       "ldd2", "ldd3"};
    for (size_t j = 0; j < RK_COUNTOF(stat); j++)
        if (!strcmp(stat[j], name)) return stat[j];
    rk_bug("gemm: an epilogue parameter without a static name (more than 4 steps of one kind)");
}

static void signature_any(const rk_instance *in, rk_ksig *sg, bool batched) {
    const rk_gemm_spec *s = &in->u.gemm;
    kn_sig_add(sg, "A", true, s->dtype, RK_KP_IN, batched ? (a_row(in) ? "batch,M,K" : "batch,K,M")
                                                          : (a_row(in) ? "M,K" : "K,M"));
    kn_sig_add(sg, "B", true, s->dtype, RK_KP_IN, batched ? (b_row(in) ? "batch,K,N" : "batch,N,K")
                                                          : (b_row(in) ? "K,N" : "N,K"));
    bool accum = s->split_k > 1 && s->split_reduce == RK_GEMM_SPLIT_ATOMIC;
    kn_sig_add(sg, "C", true, s->out_dtype, accum ? RK_KP_ACCUM : RK_KP_OUT, batched ? "batch,M,N" : "M,N");
    static const char *const sc[] = {"M", "N", "K", "lda", "ldb", "ldc"};
    for (int i = 0; i < 6; i++) kn_sig_add(sg, sc[i], false, RK_S_I32, RK_KP_SCALAR, NULL);
    if (batched) {
        kn_sig_add(sg, "stride_a", false, RK_S_I64, RK_KP_SCALAR, NULL);
        kn_sig_add(sg, "stride_b", false, RK_S_I64, RK_KP_SCALAR, NULL);
        kn_sig_add(sg, "stride_c", false, RK_S_I64, RK_KP_SCALAR, NULL);
    }
    rk_epi_param ps[RK_EPI_MAX_PARAMS];
    uint32_t n = rk_epi_params(&s->fuse, s->out_dtype, ps);
    for (uint32_t i = 0; i < n; i++) {
        const char *nm = kn_gemm_epi_name(ps[i].name);
        const rk_epi_step *st = &s->fuse.s[ps[i].step];
        const char *dims = !ps[i].ptr ? NULL : st->kind == RK_EPI_BIAS ? "N" : st->kind == RK_EPI_BIAS_ROW ? "M" : "M,N";
        kn_sig_add(sg, nm, ps[i].ptr, ps[i].type, ps[i].ptr ? RK_KP_IN : RK_KP_SCALAR, dims);
    }
    kn_gemm_split_signature(s, sg, batched);
    if (s->path == RK_GEMM_PATH_WGMMA) kn_gemm_hopper_signature(s, sg);
    else kn_gemm_fp8_signature(s, sg);
}
static void signature(const rk_instance *in, rk_ksig *sg) { signature_any(in, sg, false); }
static void signature_b(const rk_instance *in, rk_ksig *sg) { signature_any(in, sg, true); }

/* x: the output tiles, ceil(M / tile_m) * ceil(N / tile_n); y: split_k;
 * z: the batch (batched_gemm's dimension 0) */
static void geometry(const rk_instance *in, rk_launch_geom *g) {
    const rk_gemm_spec *s = &in->u.gemm;
    uint32_t b4 = in->family == RK_FAMILY_BATCHED_GEMM;
    bool wgmma = s->path == RK_GEMM_PATH_WGMMA;
    g->block[0] = s->warps[0] * s->warps[1] * s->wave + (wgmma ? kn_gemm_hopper_extra_threads(s) : 0);
    kn_geom_cdiv_dim(g, b4, s->tile[0]);
    kn_geom_cdiv_dim(g, b4 + 1, s->tile[1]);
    kn_geom_op(g, RK_GEOM_MUL);
    if (s->cluster > 1) {   /* whole clusters: the tiles rounded up (a block past the last tile loads zeros) */
        kn_geom_const(g, s->cluster);
        kn_geom_op(g, RK_GEOM_CDIV);
        kn_geom_const(g, s->cluster);
        kn_geom_op(g, RK_GEOM_MUL);
    }
    if (wgmma && kn_gemm_hopper_walks(s)) {
        /* a persistent grid: at most `blocks`, each walking tiles */
        kn_geom_const(g, s->blocks);
        kn_geom_op(g, RK_GEOM_MIN);
    }
    kn_geom_axis(g);
    kn_geom_const(g, s->split_k);
    kn_geom_axis(g);
    if (b4) kn_geom_dim(g, 0);
    else kn_geom_const(g, 1);
    kn_geom_axis(g);
}

static void cost(const rk_instance *in, const rk_shape *sh, double *bytes, double *flops) {
    const rk_gemm_spec *s = &in->u.gemm;
    bool b4 = sh->rank == 4;
    double batch = b4 ? (double)sh->dim[0] : 1, M = (double)sh->dim[b4], N = (double)sh->dim[b4 + 1],
           K = (double)sh->dim[b4 + 2];
    *flops = 2.0 * batch * M * N * K;
    *bytes = batch * ((M * K + K * N) * rk_tile_elem_bytes(s->dtype) + M * N * rk_tile_elem_bytes(s->out_dtype));
}

static void input_range(const rk_instance *in, const rk_kparam *kp, double *lo, double *hi, double *away) {
    bool scale = in->u.gemm.scale != RK_GEMM_SCALE_NONE && (!strcmp(kp->name, "Sa") || !strcmp(kp->name, "Sb"));
    /* fp8 scales: positive, spread over 3 binades so a misplaced one shows */
    *lo = scale ? 0.25 : -1.0;
    *hi = scale ? 2.0 : 1.0;
    *away = 0;
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    kn_gemm_build(in, t, k, p, false);
}
static void build_b(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    kn_gemm_build(in, t, k, p, true);
}

const kn_family kn_gemm = {
    .name = "gemm", .knobs = kn_gemm_knobs, .nknobs = RK_COUNTOF(kn_gemm_knobs), .dims = gemm_dims, .ndims = 3,
    .scalars = gemm_scalars, .nscalars = RK_COUNTOF(gemm_scalars), .defaults = kn_gemm_defaults, .tune = tune,
    .validate = validate, .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build,
    .cost = cost, .reference = kn_gemm_reference, .input_range = input_range,
    .tensormap_box = kn_gemm_hopper_tensormap_box, .tensormap_view = kn_gemm_hopper_tensormap_view,
    .extent = kn_gemm_pad_extent,
};

const kn_family kn_batched_gemm = {
    .name = "batched_gemm", .knobs = kn_gemm_knobs, .nknobs = RK_COUNTOF(kn_gemm_knobs), .dims = batched_dims,
    .ndims = 4,
    .scalars = batched_scalars, .nscalars = RK_COUNTOF(batched_scalars), .defaults = kn_gemm_defaults, .tune = tune,
    .validate = validate_b, .check_shape = check_shape, .signature = signature_b, .geometry = geometry,
    .build = build_b,
    .cost = cost, .reference = kn_gemm_reference, .input_range = input_range,
};
