/* rocke — the GEMM Hopper path's rules and heuristic: which specs and
 * problems TMA + wgmma can take, the tile it picks, its signature entries
 * (two tensor maps) and their boxes. Layer: kernels. */
#include "gemm_hopper.h"

enum { WG_SWIZZLE = 128 };

bool kn_gemm_hopper_k_major(const rk_gemm_spec *s, int operand) {
    bool row = s->layout == RK_GEMM_RR || (operand ? s->layout == RK_GEMM_CR : s->layout == RK_GEMM_RC);
    return operand ? !row : row;   /* A row-major [M, K], B column-major [N, K] */
}

bool kn_gemm_hopper_f8(const rk_gemm_spec *s) {
    return s->dtype == RK_S_FP8E4M3 || s->dtype == RK_S_BF8E5M2 || s->dtype == RK_S_FP8E4M3FNUZ ||
           s->dtype == RK_S_BF8E5M2FNUZ;
}

uint32_t kn_gemm_hopper_bk(const rk_gemm_spec *s) { return RK_TILE_WGMMA_ROW_BYTES / rk_tile_elem_bytes(s->dtype); }

static const char *layout_name(rk_gemm_layout l) {
    static const char *const names[RK_GEMM__COUNT] = {"rr", "rc", "cr", "cc"};
    return names[l];
}

/* Elements of one global row of operand 0 (A) / 1 (B): TMA's row stride. */
static uint64_t row_extent(const rk_gemm_spec *s, int operand, uint64_t M, uint64_t N, uint64_t K) {
    return kn_gemm_hopper_k_major(s, operand) ? K : operand ? N : M;
}


rk_status kn_gemm_hopper_plan(const rk_gemm_spec *s, const rk_target *t, bool batched, kn_gemm_plan *out) {
    memset(out, 0, sizeof *out);
    if (!(t->features & RK_FEAT_SM90A))
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'path' = wgmma needs sm_90a (TMA and wgmma); %s takes path=mma",
                       t->name);
    if (batched)
        return rk_fail(RK_ERR_INVALID, "batched_gemm: knob 'path' = wgmma is offered for single problems only; "
                       "legal here: path=mma");
    bool f8 = kn_gemm_hopper_f8(s);
    char legal[128];
    if (s->dtype != RK_S_F16 && s->dtype != RK_S_BF16 && !f8)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'dtype' must be one of %s, got %s",
                       kn_knob_legal(kn_gemm_knobs, KN_GEMM_NKNOBS, "dtype", legal, sizeof legal),
                       kn_dtype_name(s->dtype));
    if (!kn_dtype_ok(s->out_dtype))
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'out_dtype' must be one of %s, got %s",
                       kn_knob_legal(kn_gemm_knobs, KN_GEMM_NKNOBS, "out_dtype", legal, sizeof legal),
                       kn_dtype_name(s->out_dtype));
    if (f8 && s->layout != RK_GEMM_RC)
        return rk_fail(RK_ERR_INVALID, "gemm: dtype %s with layout %s: wgmma reads 8-bit operands K-major only (it "
                       "has no transpose for them), so path=wgmma takes layout rc (A [M, K], B [N, K])",
                       kn_dtype_name(s->dtype), layout_name(s->layout));
    if ((unsigned)s->scale >= RK_GEMM_SCALE__COUNT)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'scale' out of range (legal: none, tensor, block)");
    if (s->scale != RK_GEMM_SCALE_NONE && !f8)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'scale' = %s is for fp8 inputs (dtype e4m3 or e5m2); %s takes "
                       "scale=none", s->scale == RK_GEMM_SCALE_TENSOR ? "tensor" : "block", kn_dtype_name(s->dtype));
    if ((unsigned)s->promote >= RK_GEMM_PROMOTE__COUNT)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'promote' out of range (legal: overlap, serial)");
    if (s->promote != RK_GEMM_PROMOTE_OVERLAP && s->scale != RK_GEMM_SCALE_BLOCK)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'promote' = serial schedules the promotion of per-128-block "
                       "scales: it needs scale=block (leave promote=overlap)");
    if (s->split_k > 1) {
        /* split-K on wgmma: the plain schedule over each split's K tiles, f32 slices summed in split order
         * (gemm_hopper_split.c), TMA reading both operands, the direct epilogue after the sum */
        const char *why = s->split_reduce != RK_GEMM_SPLIT_WORKSPACE ? "split_reduce=workspace"
                          : s->schedule != RK_GEMM_SCHED_PLAIN       ? "schedule=plain"
                          : s->cluster > 1                           ? "cluster=0"
                          : s->epilogue != RK_GEMM_EPI_DIRECT        ? "epilogue=direct"
                          : s->scale != RK_GEMM_SCALE_NONE           ? "scale=none (bf16 or f16 inputs)"
                          : s->pad != RK_GEMM_PAD_NONE || kn_gemm_hopper_copied(s, 0) || kn_gemm_hopper_copied(s, 1)
                              ? "both operands read by TMA (vec_a and vec_b 8: row strides of whole 16 bytes)"
                              : NULL;
        if (why)
            return rk_fail(RK_ERR_INVALID, "gemm: knob 'split_k' = %u on path=wgmma needs %s (or split_k=1, or "
                           "path=mma)", s->split_k, why);
    }
    if (s->atom)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'atom' is for path=mma; path=wgmma runs wgmma m64nNk16 (leave "
                       "atom=auto)");
    uint32_t bm = s->tile[0], bn = s->tile[1], bk = s->tile[2], wbk = kn_gemm_hopper_bk(s);
    if ((bm != 64 && bm != 128) || bn % 8 || bn > 256 || bk != wbk)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'tile' = %ux%ux%u: path=wgmma takes tile M 64 (one consumer "
                       "warpgroup) or 128 (two), tile N a multiple of 8 up to 256, tile K %u (one 128-byte row of "
                       "%s)", bm, bn, bk, wbk, kn_dtype_name(s->dtype));
    if (s->scale == RK_GEMM_SCALE_BLOCK && bn > 128)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'tile' = %ux%ux%u with scale=block: each thread holds the "
                       "running sum and %s (%s x N/2 f32 of a 255-register budget), so tile N must be at most 128",
                       bm, bn, bk, s->promote == RK_GEMM_PROMOTE_SERIAL ? "one block's accumulators" :
                       "two blocks' accumulators (promote=overlap)", s->promote == RK_GEMM_PROMOTE_SERIAL ? "2" : "3");
    if (!kn_gemm_hopper_k_major(s, 1) && bn % KN_WG_BK)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'tile' = %ux%ux%u: with layout %s B is N-major, read in TMA boxes "
                       "of 64 columns, so path=wgmma takes tile N 64, 128, 192 or 256", bm, bn, bk,
                       layout_name(s->layout));
    if (s->warps[0] != bm / 16 || s->warps[1] != 1)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'warps' = %ux%u: path=wgmma with tile M %u runs %ux1 warps (one "
                       "warpgroup of 4 per 64 rows)", s->warps[0], s->warps[1], bm, bm / 16);
    if (s->stages < 2 || s->stages > 6)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'stages' = %u: path=wgmma runs a ring of 2..6 TMA stages",
                       s->stages);
    /* every stage: its A and B tiles, a full and (ws, persistent) an empty mbarrier; epilogue=tma: the C staging
     * (inside the B stages where kn_gemm_hopper_cstage_aliased) */
    uint64_t lds = (uint64_t)s->stages * ((bm + bn) * RK_TILE_WGMMA_ROW_BYTES + 16) + kn_gemm_hopper_cstage_extra(s);
    if (lds > t->lds_bytes)
        return rk_fail(RK_ERR_INVALID, "gemm: %u stages of a %ux%ux%u tile need %llu bytes of shared memory, %s has "
                       "%u: use fewer stages or a smaller tile%s", s->stages, bm, bn, bk, (unsigned long long)lds,
                       t->name, t->lds_bytes, s->epilogue == RK_GEMM_EPI_TMA ? " (epilogue=tma stages C there too)" : "");
    for (int op = 0; op < 2; op++) {
        uint32_t v = op ? s->vec_b : s->vec_a;
        if (v != 1 && v != 2 && v != 4 && v != 8)
            return rk_fail(RK_ERR_INVALID, "gemm: knob '%s' = %u must be 1, 2, 4 or 8 (8: TMA reads %s; less: the "
                           "threads copy it)", op ? "vec_b" : "vec_a", v, op ? "B" : "A");
        if (v < KN_WG_TMA_VEC && f8)
            return rk_fail(RK_ERR_INVALID, "gemm: knob '%s' = %u: fp8 operands arrive by TMA only (vec 8; K a "
                           "multiple of 16, TMA's 16-byte rows)", op ? "vec_b" : "vec_a", v);
        if (v < KN_WG_TMA_VEC && (unsigned)s->pad < RK_GEMM_PAD__COUNT && kn_gemm_hopper_padded(s, op))
            return rk_fail(RK_ERR_INVALID, "gemm: knob 'pad' stages %s and TMA reads the copy: knob '%s' must be %u, "
                           "got %u", op ? "B" : "A", op ? "vec_b" : "vec_a", KN_WG_TMA_VEC, v);
        if (v < KN_WG_TMA_VEC && s->schedule != RK_GEMM_SCHED_PLAIN)
            return rk_fail(RK_ERR_INVALID, "gemm: knob '%s' = %u (%s copied by the threads, not TMA) is offered "
                           "with schedule=plain only", op ? "vec_b" : "vec_a", v, op ? "B" : "A");
    }
    if ((unsigned)s->schedule >= RK_GEMM_SCHED__COUNT)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'schedule' out of range (legal: plain, ws, persistent, pingpong)");
    if ((unsigned)s->pad >= RK_GEMM_PAD__COUNT)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'pad' out of range (legal: none, a, b, ab)");
    if (s->pad != RK_GEMM_PAD_NONE) {
        /* the copy, then a grid barrier: the persistent grid (at most the SMs) is what is co-resident */
        if (s->schedule != RK_GEMM_SCHED_PERSISTENT)
            return rk_fail(RK_ERR_INVALID, "gemm: knob 'pad' = %s stages operands before a grid barrier, which needs "
                           "every block resident: it runs on schedule=persistent only (legal: pad=none with %s)",
                           s->pad == RK_GEMM_PAD_A ? "a" : s->pad == RK_GEMM_PAD_B ? "b" : "ab",
                           s->schedule == RK_GEMM_SCHED_PLAIN ? "plain" : s->schedule == RK_GEMM_SCHED_WS ? "ws" : "pingpong");
        if (f8)
            return rk_fail(RK_ERR_INVALID, "gemm: knob 'pad' stages 16-bit operands (f16, bf16); fp8 rows are read by "
                           "TMA as they are (K a multiple of 16): leave pad=none");
    }
    if (s->cluster) {
        /* pairs of blocks: each loads half of a shared B and multicasts it; plain meets at a cluster barrier before
         * a stage is refilled, the warp-specialized schedules release each stage to both blocks */
        if (s->cluster != 2)
            return rk_fail(RK_ERR_INVALID, "gemm: knob 'cluster' = %u (legal: 0, none; 2, pairs of blocks)", s->cluster);
        if (kn_gemm_hopper_walks(s) && s->blocks % 2)
            return rk_fail(RK_ERR_INVALID, "gemm: knob 'cluster' = 2 launches whole pairs of blocks: knob 'blocks' "
                           "must be even, got %u", s->blocks);
        if (s->pad != RK_GEMM_PAD_NONE)
            return rk_fail(RK_ERR_INVALID, "gemm: knob 'cluster' = 2 is not offered with pad (the padded copy's grid "
                           "barrier is a cooperative launch): legal there cluster=0");
        if (kn_gemm_hopper_copied(s, 0) || kn_gemm_hopper_copied(s, 1))
            return rk_fail(RK_ERR_INVALID, "gemm: knob 'cluster' = 2 multicasts TMA boxes: both operands must arrive "
                           "by TMA (vec_a = vec_b = 8), got vec_a %u vec_b %u", s->vec_a, s->vec_b);
        if (s->scale == RK_GEMM_SCALE_BLOCK)
            return rk_fail(RK_ERR_INVALID, "gemm: knob 'cluster' = 2 is not offered with scale=block (its loop "
                           "refills stages per scale block): legal there cluster=0");
        if (!kn_gemm_hopper_k_major(s, 1) && bn % (2 * KN_WG_BK))
            return rk_fail(RK_ERR_INVALID, "gemm: knob 'cluster' = 2 splits B's %u columns into two halves of whole "
                           "64-column boxes (layout %s: B is N-major): tile N must be 128 or 256", bn,
                           layout_name(s->layout));
    }
    bool walks = kn_gemm_hopper_walks(s);
    if (walks && !s->blocks)
        return rk_fail(RK_ERR_INVALID, "gemm: schedule=%s needs knob 'blocks' (the grid; %s has %u SMs), or leave it "
                       "to the heuristic", s->schedule == RK_GEMM_SCHED_PINGPONG ? "pingpong" : "persistent", t->name,
                       t->compute_units);
    if (!walks && s->blocks)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'blocks' = %u is for schedule=persistent or pingpong (leave it 0)",
                       s->blocks);
    if (s->schedule == RK_GEMM_SCHED_PINGPONG && bm != 64)
        return rk_fail(RK_ERR_INVALID, "gemm: schedule=pingpong gives each of its two consumer warpgroups whole "
                       "tiles of 64 rows: tile M must be 64, got %u", bm);
    rk_status st = kn_gemm_check_order_and_chain(s, batched);
    if (st) return st;
    kn_gemm_plan p = {0};
    p.bm = bm, p.bn = bn, p.bk = bk;
    p.wm = s->warps[0], p.wn = 1, p.wtm = 16, p.wtn = bn;
    /* ws / persistent: a producer warpgroup ahead of the consumers */
    p.wave = 32, p.threads = bm * 2 + (s->schedule != RK_GEMM_SCHED_PLAIN ? 128 : 0), p.stages = s->stages;
    if (s->schedule == RK_GEMM_SCHED_PINGPONG) p.threads = 3 * 128;
    p.a_row = kn_gemm_hopper_k_major(s, 0), p.b_row = !kn_gemm_hopper_k_major(s, 1);
    p.stage_a = bm * bk, p.stage_b = bn * bk;
    p.lds_bytes = (uint32_t)lds;
    *out = p;
    return RK_OK;
}

void kn_gemm_hopper_tune_schedule(rk_gemm_spec *s, const rk_target *t, uint64_t M, uint64_t N, uint64_t locked) {
    /* The plain schedule stays the default until the warp-specialized ones
     * have run on an H200 (bench/gemm_h200.sh times all four side by side):
     * plain is the one measured there (88-93% of cuBLAS at the anchors).
     * Where they are asked for, persistent suits grids with more tiles than
     * SMs and ws the others. */
    (void)M, (void)N;
    /* fp8 with per-128-block scales: persistent measured ahead (session 6, H200: 4096^3 989 TFLOP/s
     * against plain's 906 and ws's 946; 2048x3008x4096 902 / 836 / 877) */
    bool block_scales = kn_gemm_hopper_f8(s) && s->scale == RK_GEMM_SCALE_BLOCK;
    if (!(locked >> KN_GK_SCHED & 1))   /* (cluster=2 refuses scale=block) */
        s->schedule = block_scales && !s->cluster ? RK_GEMM_SCHED_PERSISTENT : RK_GEMM_SCHED_PLAIN;
    if (!(locked >> KN_GK_BLOCKS & 1)) s->blocks = kn_gemm_hopper_walks(s) ? t->compute_units : 0;
}

/* The tile (an index of the candidates 128x256, 128x128, 64x256, 64x128, 64x64) of least modelled
 * time: waves (ceil(tiles / SMs)) times the tile's area over its rate per busy SM, relative to
 * 128 x 256, fitted to the H200 (bench/RESULTS.md, session 16, bf16, same runs): 128x128 0.83
 * (2048x2048x8192: 2 waves 641.8 TFLOP/s against 1 wave of 128 x 256 762.2; 3072^3: 5 waves 530.9
 * against 3 of 128 x 256 544.2), 64x128 0.59, 64x64 0.49 (1024x1024x4096: 1 wave of 64 x 128 421.4
 * against 2 of 64 x 64 351.1). Two 64 x 128 blocks share an SM (their stages take under half of
 * its shared memory), so up to 2 x SMs of them count as one wave (768x1536x12288: 144 tiles 444.9
 * against 72 of 128 x 128 394.9). So a partial wave of big tiles (1536^3: 72 of 128 x 256, 344.5)
 * beats two of smaller ones (144 of 128 x 128, 278.6). 64 x 256 is not a candidate (0.70: 1536^3
 * 287.1, never ahead of 128 x 256). */
static size_t kn_gemm_hopper_pick_tile(uint64_t M, uint64_t N, uint32_t sms) {
    static const struct { uint32_t m, n, rate; } c[] = {
        {128, 256, 1000}, {128, 128, 830}, {64, 256, 700}, {64, 128, 590}, {64, 64, 490},
    };
    size_t pick = 0;
    uint64_t best = UINT64_MAX;
    for (size_t i = 0; i < RK_COUNTOF(c); i++) {
        if (i == 2) continue;
        uint64_t tiles = (M + c[i].m - 1) / c[i].m * ((N + c[i].n - 1) / c[i].n);
        uint64_t waves = (tiles + sms - 1) / sms;
        if (i == 3 && tiles <= 2 * (uint64_t)sms) waves = 1;
        uint64_t cost = waves * c[i].m * c[i].n * 1000 / c[i].rate;
        if (cost < best) best = cost, pick = i;
    }
    return pick;
}

/* K-heavy problems whose 64 x 128 tiles leave SMs idle: split K over the tiles so that about two
 * blocks run per SM, each split at least 4096 deep (64 K tiles), at most 16 splits. Measured on the
 * H200 (bench/RESULTS.md, session 16, bf16 rc, TFLOP/s against the pick before): 256x256x65536 164.2
 * at 16 splits against 52.3, 512x512x32768 295.3 at 8 (306.3 at 4) against 123.2, 1024x1024x16384
 * 518.6 at 2 against 420.2 unsplit, 128x4096x32768 369.4 at 4 against 223.7, 384x768x24576 274.5 at
 * 7 against 134.1; 64 x 128 ran ahead of 128 x 128 at every split. Splits 2048 deep lost
 * (1024x1024x4096: 292.7 at 2 against 426.4 unsplit). Only where the split kernel applies (bf16 / f16 through TMA, schedule plain, the
 * direct epilogue, workspace, no cluster) and nothing it needs is locked otherwise. */
static bool kn_gemm_hopper_tune_split(rk_gemm_spec *w, const rk_target *t, uint64_t M, uint64_t N, uint64_t K,
                                      uint64_t locked) {
    if (locked >> KN_GK_SPLIT & 1 || kn_gemm_hopper_f8(w) || w->cluster > 1 || w->vec_a < KN_WG_TMA_VEC ||
        w->vec_b < KN_WG_TMA_VEC || w->pad != RK_GEMM_PAD_NONE || w->split_reduce != RK_GEMM_SPLIT_WORKSPACE ||
        (w->dtype != RK_S_BF16 && w->dtype != RK_S_F16))
        return false;
    if ((locked >> KN_GK_SCHED & 1 && w->schedule != RK_GEMM_SCHED_PLAIN) ||
        (locked >> KN_GK_EPI & 1 && w->epilogue != RK_GEMM_EPI_DIRECT) || locked >> KN_GK_BLOCKS & 1)
        return false;
    /* M <= 64 keeps its measured picks (gemm.c: the skinny mma split, or wgmma over all of K) */
    uint64_t tiles = (M + 63) / 64 * ((N + 127) / 128);
    if (M <= 64 || tiles >= t->compute_units) return false;
    /* over half a wave already: only splits 8192 deep pay (128x8192x8192, 2 splits: 309.3 against
     * 327.1 unsplit; 1024x1024x16384: 515.0 against 420.2) */
    uint64_t depth = 2 * tiles > t->compute_units ? 8192 : 4096;
    uint64_t splits = 2 * (uint64_t)t->compute_units / tiles;
    if (splits > K / depth) splits = K / depth;
    if (splits > 16) splits = 16;
    if (splits < 2) return false;
    w->tile[0] = 64, w->tile[1] = 128;
    w->split_k = (uint32_t)splits;
    w->epilogue = RK_GEMM_EPI_DIRECT;
    return true;
}

void kn_gemm_hopper_tune(rk_gemm_spec *s, const rk_target *t, uint64_t M, uint64_t N, uint64_t K, bool batched,
                         uint64_t locked) {
    bool tile_locked = locked >> KN_GK_TILE & 1, warps_locked = locked >> KN_GK_WARPS & 1;
    bool stages_locked = locked >> KN_GK_STAGES & 1;
    s->path = RK_GEMM_PATH_MMA;
    if (!(t->features & RK_FEAT_SM90A) || batched || s->atom) return;
    /* 2-byte reads (an odd leading dimension) that pad may not stage: measured on the H200 at
     * 2047x3001x4093 bf16, the gathered mma.sync kernel (76.0 TFLOP/s) beats wgmma with copied
     * operands (66.6): keep mma unless the path is asked for */
    uint32_t eb = rk_tile_elem_bytes(s->dtype);
    bool f8 = kn_gemm_hopper_f8(s);
    bool narrow = !f8 && !(locked >> KN_GK_PATH & 1) && (s->vec_a * eb < 4 || s->vec_b * eb < 4);
    /* pad can stage an operand TMA cannot read unless pad, the schedule or that operand's vec is locked */
    bool can_pad = !f8 && !(locked >> KN_GK_PAD & 1) && !(locked >> KN_GK_SCHED & 1) &&
                   (s->vec_a >= KN_WG_TMA_VEC || !(locked >> KN_GK_VA & 1)) &&
                   (s->vec_b >= KN_WG_TMA_VEC || !(locked >> KN_GK_VB & 1)) &&
                   (s->vec_a < KN_WG_TMA_VEC || s->vec_b < KN_WG_TMA_VEC);
    if (narrow && !can_pad) return;
    /* 2-byte reads stage into padded copies at every size: measured on the H200 (bench/RESULTS.md,
     * session 16 call 5, TFLOP/s, the copies against the gathered mma.sync kernel) 333x777x999 f16 34.8
     * against 10.1, 500x600x777 bf16 36.0 / 14.1, 100x4096x4095 35.1 / 24.5, 777x333x4001 rr 65.7 / 9.9,
     * 1000x1000x999 94.7 / 54.4; session 17 call 1: 129x1000x1001 16.6 / 4.0. The copies are read by
     * TMA, so the tile is the model's. Decode-like M <= 64 keeps the rule below: the skinny split-K
     * mma kernel ran 17x4096x4095 at 11.7 against the copies' 3.7 (cuBLAS 14.5). */
    bool pad_narrow = narrow && can_pad && M > 64;
    rk_gemm_spec w = *s;
    w.path = RK_GEMM_PATH_WGMMA;
    if (!(locked >> KN_GK_PAD & 1)) w.pad = RK_GEMM_PAD_NONE;   /* decided below from this shape */
    /* fp8 has no other path: TMA reads both operands, and the shape check names K's 16-byte rule */
    if (f8 && !(locked >> KN_GK_VA & 1)) w.vec_a = KN_WG_TMA_VEC;
    if (f8 && !(locked >> KN_GK_VB & 1)) w.vec_b = KN_WG_TMA_VEC;
    if (!(locked >> KN_GK_SPLIT & 1)) w.split_k = 1;   /* the mma tuning's split is not wgmma's */
    if (!tile_locked) {
        /* pingpong's consumers each take whole tiles of 64 rows; fp8 and operands TMA cannot read (odd
         * leading dimensions: the pad rule below) keep the largest tile that still gives every SM a block
         * (or the smallest); the others the tile of least modelled time */
        static const uint32_t cand[][2] = {{128, 256}, {128, 128}, {64, 256}, {64, 128}, {64, 64}};
        bool rows64 = (locked >> KN_GK_SCHED & 1) && s->schedule == RK_GEMM_SCHED_PINGPONG;
        size_t pick = 4;
        if (!f8 && !rows64 && ((s->vec_a >= KN_WG_TMA_VEC && s->vec_b >= KN_WG_TMA_VEC) || pad_narrow)) {
            pick = kn_gemm_hopper_pick_tile(M, N, t->compute_units);
        } else {
            for (size_t i = rows64 ? 2 : 0; i < 5; i++) {
                if (i == 2 && !rows64) continue;
                if ((M + cand[i][0] - 1) / cand[i][0] * ((N + cand[i][1] - 1) / cand[i][1]) >= t->compute_units) {
                    pick = i;
                    break;
                }
            }
        }
        w.tile[0] = cand[pick][0], w.tile[1] = cand[pick][1], w.tile[2] = kn_gemm_hopper_bk(s);
        /* block scales keep a second set of accumulators: at most 128 columns */
        if (s->scale == RK_GEMM_SCALE_BLOCK && w.tile[1] > 128) w.tile[1] = 128;
    }
    if (!tile_locked && kn_gemm_hopper_tune_split(&w, t, M, N, K, locked)) w.tile[2] = kn_gemm_hopper_bk(s);
    /* Odd leading dimensions: stage the operands TMA cannot read into padded copies and run the
     * persistent TMA/wgmma kernel on them (pad): 2-byte reads always (above); 4- and 8-byte reads where
     * the tiles give every SM a block, a smaller problem keeping the threads' copies */
    uint64_t tiles = (M + w.tile[0] - 1) / w.tile[0] * ((N + w.tile[1] - 1) / w.tile[1]);
    bool pad = pad_narrow || (can_pad && tiles >= t->compute_units);
    if (narrow && !pad) {
        s->path = RK_GEMM_PATH_MMA;
        return;
    }
    if (pad) {
        bool pa = w.vec_a < KN_WG_TMA_VEC, pb = w.vec_b < KN_WG_TMA_VEC;
        w.pad = pa && pb ? RK_GEMM_PAD_AB : pa ? RK_GEMM_PAD_A : RK_GEMM_PAD_B;
        w.vec_a = w.vec_b = KN_WG_TMA_VEC;
    }
    if (!warps_locked) w.warps[0] = w.tile[0] / 16, w.warps[1] = 1;
    if (!stages_locked) w.stages = K > 2 * w.tile[2] ? 4 : 2;
    /* C through shared memory and TMA stores where its rows keep TMA's 16-byte rule: measured on the
     * H200 (bench/RESULTS.md, session 5) at 4096^3 bf16, 727.6 TFLOP/s against 688 with direct stores;
     * only the measured 128x256 tile for now */
    if (!(locked >> KN_GK_EPI & 1) && w.tile[0] == 128 && w.tile[1] == 256 && w.split_k == 1 &&
        N * rk_tile_elem_bytes(s->out_dtype) % 16 == 0)
        w.epilogue = RK_GEMM_EPI_TMA;
    /* 16 M tiles a group at 128 x 256: measured on the H200 (bench/RESULTS.md, session 11) +0.4..1.7% over 8
     * at 4096^3, 6144x5120x3072 and 8192^3 (bf16, in the same run) */
    if (!(locked >> KN_GK_GROUP & 1) && w.tile[0] == 128 && w.tile[1] == 256) w.group_m = 16;
    kn_gemm_hopper_tune_schedule(&w, t, M, N, locked);
    /* short K over many waves of tiles: the persistent walk hides each tile's epilogue under the next
     * one's loads. H200, session 16 (bench/RESULTS.md, bf16 rc, against plain): 16384x16384x256
     * 475.2 / 355.9 TFLOP/s, 8192x8192x512 585.2 / 494.8, x1024 670.3 / 643.2, x2048 705.0 / 718.6 */
    uint64_t wtiles = (M + w.tile[0] - 1) / w.tile[0] * ((N + w.tile[1] - 1) / w.tile[1]);
    if (!(locked >> KN_GK_SCHED & 1) && !f8 && w.split_k == 1 && K <= 1024 && wtiles >= 4 * (uint64_t)t->compute_units) {
        w.schedule = RK_GEMM_SCHED_PERSISTENT;
        if (!(locked >> KN_GK_BLOCKS & 1)) w.blocks = t->compute_units;
    }
    /* A deeper ring where one 64 x 128 block runs per SM and the problem streams its operands (2MNK flops
     * over 2(MK + NK + MN) bytes below 256): measured on the H200 (bench/RESULTS.md, session 17 call 2,
     * TFLOP/s, 6 stages against 4, cuBLAS) 128x8192x8192 398.4 / 318.6 / 367.4, 8192x128x8192 397.7 /
     * 304.6 / 367.1, 256x4096x4096 419.4 / 404.0 / 366.2; not where the tiles leave a quarter of the SMs
     * idle (200x3000x5000, 96 tiles: 157.8 / 162.8) or the problem reuses its operands (1024x1024x4096:
     * 421.4 / 428.1). Above a wave two blocks share an SM and 6 stages would keep out the second
     * (768x1536x12288: 305.9 / 433.0). */
    if (!stages_locked && !f8 && !pad && w.stages == 4 && w.split_k == 1 && w.schedule == RK_GEMM_SCHED_PLAIN &&
        w.tile[0] == 64 && w.tile[1] == 128 && wtiles <= t->compute_units &&
        4 * wtiles >= 3 * (uint64_t)t->compute_units &&
        (double)M * N * K < 256.0 * ((double)M * K + (double)N * K + (double)M * N))
        w.stages = 6;
    /* epilogue=tma stages C beside the ring (schedule=plain: in the B stages, once the loop is done): fewer
     * stages where both would not fit */
    while (!stages_locked && w.stages > 2 &&
           (uint64_t)w.stages * ((w.tile[0] + w.tile[1]) * RK_TILE_WGMMA_ROW_BYTES + 16) +
                   kn_gemm_hopper_cstage_extra(&w) > t->lds_bytes)
        w.stages--;
    if (pad) {   /* the copy before a grid barrier: the persistent grid, one block per SM */
        w.schedule = RK_GEMM_SCHED_PERSISTENT;
        if (!(locked >> KN_GK_BLOCKS & 1)) w.blocks = t->compute_units;
    }
    /* an operand TMA cannot read (vec_a / vec_b below 8, from its row stride) is copied by the threads */
    bool copies = w.vec_a < KN_WG_TMA_VEC || w.vec_b < KN_WG_TMA_VEC;
    if (copies && !(locked >> KN_GK_SCHED & 1)) w.schedule = RK_GEMM_SCHED_PLAIN, w.blocks = locked >> KN_GK_BLOCKS & 1 ? w.blocks : 0;
    kn_gemm_plan p;
    *s = w;   /* with the tuned knobs even where the plan refuses them: an explicit path=wgmma reports why */
    if (kn_gemm_hopper_plan(&w, t, batched, &p) != RK_OK) s->path = RK_GEMM_PATH_MMA;
}

uint32_t kn_gemm_hopper_split_work(const rk_gemm_spec *s) {
    return s->split_k > 1 && s->split_reduce == RK_GEMM_SPLIT_WORKSPACE;
}

bool kn_gemm_hopper_padded(const rk_gemm_spec *s, int operand) {
    return s->pad == RK_GEMM_PAD_AB || s->pad == (operand ? RK_GEMM_PAD_B : RK_GEMM_PAD_A);
}

uint64_t kn_gemm_pad_extent(const rk_instance *in, const rk_shape *sh, const char *name, size_t len) {
    (void)in;
    if (len != 2 || name[1] != '8') return 0;
    uint32_t at = strchr("MNK", name[0]) ? (uint32_t)(strchr("MNK", name[0]) - "MNK") : 3u;
    if (at > 2 || sh->rank != 3) return 0;
    return (sh->dim[at] + 7) / 8 * 8;
}

/* A map over a staged copy: the logical extent (the pad columns read as TMA's zero fill, never from
 * memory), the padded row stride. */
rk_status kn_gemm_hopper_tensormap_view(const rk_problem *p, const rk_kparam *kp, rk_problem_tmap *out) {
    const char *buf = kp->dims ? kp->dims : "";
    if (strcmp(buf, "Apad") && strcmp(buf, "Bpad")) return RK_OK;
    const char *lay = p->sig.p[out->buf].dims;   /* "M,K8" */
    char inner = lay[strlen(lay) - 2];
    uint64_t cols = rk_problem_dim(p, inner == 'M' ? "M" : inner == 'N' ? "N" : "K");
    uint64_t padded = (cols + 7) / 8 * 8;
    out->rows = padded ? p->buf[out->buf].count / padded : 0;
    out->cols = cols;
    out->row_stride_bytes = padded * rk_tile_elem_bytes(out->elem);
    return RK_OK;
}

bool kn_gemm_hopper_walks(const rk_gemm_spec *s) {
    return s->schedule == RK_GEMM_SCHED_PERSISTENT || s->schedule == RK_GEMM_SCHED_PINGPONG;
}

uint32_t kn_gemm_hopper_extra_threads(const rk_gemm_spec *s) {
    if (s->schedule == RK_GEMM_SCHED_PLAIN) return 0;
    return s->schedule == RK_GEMM_SCHED_PINGPONG ? 256 : 128;
}

rk_status kn_gemm_hopper_check_shape(const rk_gemm_spec *s, uint64_t M, uint64_t N, uint64_t K) {
    uint32_t ob = rk_tile_elem_bytes(s->out_dtype);
    if (s->epilogue == RK_GEMM_EPI_TMA && N * ob % 16)
        return rk_fail(RK_ERR_INVALID, "gemm: epilogue=tma stores C with TMA, whose rows (N = %llu %s elements, %llu "
                       "bytes) must be a multiple of 16 bytes: N a multiple of %u, or build with epilogue=direct",
                       (unsigned long long)N, kn_dtype_name(s->out_dtype), (unsigned long long)(N * ob), 16 / ob);
    if (kn_gemm_hopper_f8(s) && K % 16)
        return rk_fail(RK_ERR_INVALID, "gemm: dtype %s: TMA reads A and B in rows of K bytes, and a row stride must "
                       "be a multiple of 16 bytes, so K must be a multiple of 16 (got K = %llu; pad K with zeros to "
                       "%llu)", kn_dtype_name(s->dtype), (unsigned long long)K, (unsigned long long)((K + 15) / 16 * 16));
    for (int op = 0; op < 2; op++) {
        uint64_t ext = row_extent(s, op, M, N, K);
        uint32_t v = op ? s->vec_b : s->vec_a;
        const char *dim = kn_gemm_hopper_k_major(s, op) ? "K" : op ? "N" : "M";
        if (kn_gemm_hopper_padded(s, op)) continue;   /* TMA reads the staged copy, whose rows are padded */
        if (ext % v)
            return rk_fail(RK_ERR_INVALID, "gemm: path=wgmma reads %s %u elements at a time (knob '%s'%s), but with "
                           "layout %s its rows run along %s = %llu, not a multiple of %u; lower '%s' (1, 2 or 4 copy "
                           "it without TMA), or build with --shape so the heuristic picks",
                           op ? "B" : "A", v, op ? "vec_b" : "vec_a", v == KN_WG_TMA_VEC ? ": TMA's 16-byte rows" : "",
                           layout_name(s->layout), dim, (unsigned long long)ext, v, op ? "vec_b" : "vec_a");
    }
    return RK_OK;
}

uint32_t kn_gemm_hopper_consumers(const rk_gemm_spec *s) {
    return s->schedule == RK_GEMM_SCHED_PINGPONG ? 2 : s->tile[0] / 64;
}

bool kn_gemm_hopper_cstage_swizzled(const rk_gemm_spec *s) {
    return s->epilogue == RK_GEMM_EPI_TMA && s->tile[1] * rk_tile_elem_bytes(s->out_dtype) % 128 == 0;
}

bool kn_gemm_hopper_cstage_aliased(const rk_gemm_spec *s) {
    return s->epilogue == RK_GEMM_EPI_TMA && s->schedule == RK_GEMM_SCHED_PLAIN && s->dtype == s->out_dtype &&
           s->pad == RK_GEMM_PAD_NONE && !kn_gemm_hopper_copied(s, 0) && !kn_gemm_hopper_copied(s, 1) &&
           s->stages * KN_WG_BK >= s->tile[0];
}

uint32_t kn_gemm_hopper_cstage_extra(const rk_gemm_spec *s) {
    return kn_gemm_hopper_cstage_aliased(s) ? 0 : kn_gemm_hopper_cstage_bytes(s);
}

uint32_t kn_gemm_hopper_cstage_bytes(const rk_gemm_spec *s) {
    if (s->epilogue != RK_GEMM_EPI_TMA) return 0;
    return kn_gemm_hopper_consumers(s) * 64 * s->tile[1] * rk_tile_elem_bytes(s->out_dtype);
}

void kn_gemm_hopper_signature(const rk_gemm_spec *s, rk_ksig *sg) {
    bool pa = kn_gemm_hopper_padded(s, 0), pb = kn_gemm_hopper_padded(s, 1);
    if (!kn_gemm_hopper_copied(s, 0)) kn_sig_add(sg, "A_map", false, s->dtype, RK_KP_TENSORMAP, pa ? "Apad" : "A");
    if (!kn_gemm_hopper_copied(s, 1)) kn_sig_add(sg, "B_map", false, s->dtype, RK_KP_TENSORMAP, pb ? "Bpad" : "B");
    kn_gemm_fp8_signature(s, sg);
    if (s->epilogue == RK_GEMM_EPI_TMA) kn_sig_add(sg, "C_map", false, s->out_dtype, RK_KP_TENSORMAP, "C");
    /* pad: the staged copies (A's or B's layout with its row extent rounded up to 8: "M,K8" ...) and the
     * grid barrier's two words, workspaces the caller zeroes once (the barrier leaves its words ready) */
    bool ar = kn_gemm_hopper_k_major(s, 0), br = !kn_gemm_hopper_k_major(s, 1);
    if (pa) kn_sig_add(sg, "Apad", true, s->dtype, RK_KP_WORK, ar ? "M,K8" : "K,M8");
    if (pb) kn_sig_add(sg, "Bpad", true, s->dtype, RK_KP_WORK, br ? "K,N8" : "N,K8");
    if (pa || pb) kn_sig_add(sg, "Sync", true, RK_S_I64, RK_KP_WORK, "2");
}

void kn_gemm_hopper_tensormap_box(const rk_instance *in, const rk_kparam *kp, uint32_t *box_rows, uint32_t *box_cols,
                                  uint32_t *swizzle_bytes) {
    const rk_gemm_spec *s = &in->u.gemm;
    if (!strcmp(kp->name, "C_map")) {   /* a warpgroup's 64 rows of the C tile: 128-byte swizzled chunks, or whole */
        bool swz = kn_gemm_hopper_cstage_swizzled(s);
        *box_rows = 64;
        *box_cols = swz ? 128 / rk_tile_elem_bytes(s->out_dtype) : s->tile[1];
        *swizzle_bytes = swz ? 128 : 0;
        return;
    }
    int op = strcmp(kp->name, "A_map") != 0;
    /* K-major: tile-M (or N) rows of 64 K (cluster=2: B in halves, one per block of the pair); MN-major: 64 K rows
     * of 64 M (or N), several boxes a stage */
    uint32_t halves = op == 1 && s->cluster == 2 ? 2 : 1;
    *box_rows = kn_gemm_hopper_k_major(s, op) ? s->tile[op] / halves : KN_WG_BK;
    *box_cols = kn_gemm_hopper_bk(s);
    *swizzle_bytes = WG_SWIZZLE;
}
