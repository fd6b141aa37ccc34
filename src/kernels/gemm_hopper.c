/* rocke — the GEMM kernel on Hopper (path = wgmma, sm_90a): one block per
 * tile_m x tile_n tile of C (grouped-M order), one consumer warpgroup per
 * 64 rows. K runs in 64-element steps through a ring of `stages` shared
 * buffers, each filled by TMA boxes under the 128-byte swizzle completing on
 * the stage's mbarrier: a K-major operand is one box of tile_m (tile_n) rows
 * of 64 K, an MN-major one (layouts rr, cr, cc) tile_m/64 (tile_n/64) boxes
 * of 64 K rows x 64 columns, read by wgmma with its transpose bit:
 *   prologue   thread 0 fills K tiles 0 .. stages-2;
 *   loop kt    wait for tile kt (parity (kt / stages) & 1), wgmma fence, four
 *              wgmma m64nNk16 from swizzled K-major descriptors, commit;
 *              wait until only this group is in flight (tile kt-1's reads
 *              are done), block barrier, then thread 0 refills that stage
 *              with tile kt + stages - 1;
 *   epilogue   wait for the last group, each accumulator through the fused
 *              chain, pairs of columns stored as one vector inside C.
 * That is schedule=plain; the pieces here (setup, fills, the k16 steps, the
 * epilogue) also serve the warp-specialized schedules (gemm_hopper_ws.c).
 * TMA boxes zero-fill past M, N and K, so tails need no other care. An
 * operand TMA cannot read (vec_a / vec_b below 8) is copied by every thread
 * into the same swizzled stage instead (gemm_hopper_copy.c), one cp.async
 * group per fill, waited for with a proxy fence and a barrier before wgmma.
 * Layer: kernels. */
#include "gemm_hopper.h"

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

/* Operand tile of stage `st` (elements from `base` of `dst`) at K column kx
 * and MN origin mn0: one K-major box, or ext/64 MN-major boxes side by side
 * (each 64 x 64, so box j starts 4096 elements on). */
static void load_operand(kn_hk *h, rk_value map, rk_value dst, rk_value base, rk_value st, rk_value kx, rk_value mn0,
                         uint32_t ext, bool kmaj) {
    rk_kernel *k = h->k;
    if (kmaj) {
        rk_tile_tma_box(k, &h->ring, map, dst, base, st, kx, mn0);
        return;
    }
    for (uint32_t j = 0; j < ext / KN_WG_BK; j++) {
        rk_value off = c32(k, j * KN_WG_BK * KN_WG_BK), dx = c32(k, j * KN_WG_BK);
        rk_value e = rk_build_add(k, base, off);
        rk_value x = rk_build_add(k, mn0, dx);
        rk_tile_tma_box(k, &h->ring, map, dst, e, st, x, kx);
    }
}

/* Whether the threads fill operand op (copied or the caller's own fill). */
static bool copied(const kn_hk *h, int op) { return h->fill[op].fn || kn_gemm_hopper_copied(h->s, op); }

/* cluster=2: B's tile of stage `st` in two halves (K-major: tile N / 2 rows; N-major: half the 64-column boxes).
 * Where the pair shares B, this block loads half `rank` into both blocks' stage (one multicast per box, each
 * completing on the stage's barrier in both); else it loads both halves itself. */
static void load_b_pair(kn_hk *h, rk_value base, rk_value st, rk_value kx) {
    rk_kernel *k = h->k;
    uint32_t bn = h->pl.bn, nb = h->kb ? 2 : bn / KN_WG_BK, per = nb / 2;
    /* a piece: K-major, bn/2 rows of one 128-byte K row; N-major, one 64 x 64 box */
    uint32_t piece = h->kb ? bn / 2 * (RK_TILE_WGMMA_ROW_BYTES / h->eb) : KN_WG_BK * KN_WG_BK;
    uint32_t span = h->kb ? bn / 2 : KN_WG_BK;   /* N columns a piece covers */
    rk_value both = c32(k, 3);
    rk_if_begin(k, h->share_b);
    for (uint32_t j = 0; j < per; j++) {
        rk_value rp = rk_build_mul(k, h->rank, c32(k, per));
        rk_value pj = rk_build_add(k, rp, c32(k, j));   /* this block's piece */
        rk_value off = rk_build_mul(k, pj, c32(k, piece));
        rk_value e = rk_build_add(k, base, off);
        rk_value dn = rk_build_mul(k, pj, c32(k, span));
        rk_value n = rk_build_add(k, h->n0, dn);
        if (h->kb) rk_build_tma_load_2d_multicast(k, h->bmap, h->sB, e, h->ring.bars, st, kx, n, both);
        else rk_build_tma_load_2d_multicast(k, h->bmap, h->sB, e, h->ring.bars, st, n, kx, both);
    }
    rk_else(k, NULL, 0);
    for (uint32_t j = 0; j < nb; j++) {
        rk_value off = c32(k, j * piece), dn = c32(k, j * span);
        rk_value e = rk_build_add(k, base, off);
        rk_value n = rk_build_add(k, h->n0, dn);
        if (h->kb) rk_tile_tma_box(k, &h->ring, h->bmap, h->sB, e, st, kx, n);
        else rk_tile_tma_box(k, &h->ring, h->bmap, h->sB, e, st, n, kx);
    }
    rk_if_end(k, NULL, 0);
}

void kn_gemm_hopper_issue(kn_hk *h, rk_value kt, rk_value fill) {
    rk_kernel *k = h->k;
    const kn_gemm_plan *pl = &h->pl;
    rk_value S = c32(k, pl->stages);
    rk_value st = rk_build_umod(k, fill, S);
    rk_value bk = c32(k, pl->bk);
    rk_value ktg = h->kt0.id ? rk_build_add(k, kt, h->kt0) : kt;
    rk_value x = rk_build_mul(k, ktg, bk);
    rk_value sza = c32(k, pl->stage_a), szb = c32(k, pl->stage_b);
    rk_value ea = rk_build_mul(k, st, sza);
    rk_value eb = rk_build_mul(k, st, szb);
    rk_tile_tma_ring_expect(k, &h->ring, st);
    if (h->hooks.box) {
        if (!copied(h, 0)) h->hooks.box(h, h->hooks.ud, 0, ea, st, ktg, h->m0);
        if (!copied(h, 1)) h->hooks.box(h, h->hooks.ud, 1, eb, st, ktg, h->n0);
        return;
    }
    if (!copied(h, 0)) load_operand(h, h->amap, h->sA, ea, st, x, h->m0, pl->bm, h->ka);
    if (h->s->cluster == 2) load_b_pair(h, eb, st, x);
    else if (!copied(h, 1)) load_operand(h, h->bmap, h->sB, eb, st, x, h->n0, pl->bn, h->kb);
}

void kn_gemm_hopper_fill_copies(kn_hk *h, rk_value tid, rk_value kt, rk_value fill) {
    rk_kernel *k = h->k;
    const kn_gemm_plan *pl = &h->pl;
    rk_value live = rk_build_cmp(k, "lt", kt, h->ktiles);
    rk_if_begin(k, live);
    for (int op = 0; op < 2; op++) {
        if (!copied(h, op)) continue;
        rk_value S = c32(k, pl->stages);
        rk_value st = rk_build_umod(k, fill, S);
        rk_value sz = c32(k, op ? pl->stage_b : pl->stage_a);
        rk_value base = rk_build_mul(k, st, sz);
        rk_value bk = c32(k, pl->bk);
        rk_value x = rk_build_mul(k, kt, bk);
        rk_value mn0 = op ? h->n0 : h->m0;
        if (h->fill[op].fn) h->fill[op].fn(h, h->fill[op].ud, op, tid, base, x, mn0);
        else kn_gemm_hopper_copy(h, op, tid, base, x, mn0);
    }
    rk_if_end(k, NULL, 0);
    rk_build_async_commit_group(k);
}

void kn_gemm_hopper_copies_land(kn_hk *h, uint32_t ahead) {
    rk_build_async_wait_group(h->k, ahead);
    rk_build_fence_proxy_async(h->k);
    rk_build_sync(h->k);
}

static bool any_copied(const kn_hk *h) { return copied(h, 0) || copied(h, 1); }

/* Thread 0: fill stage kt % stages with K tile kt when kt < ktiles. */
static void fill(kn_hk *h, rk_value tid, rk_value kt) {
    rk_kernel *k = h->k;
    rk_value zero = c32(k, 0);
    rk_value t0 = rk_build_cmp(k, "eq", tid, zero);
    rk_value live = rk_build_cmp(k, "lt", kt, h->ktiles);
    rk_value go = rk_build_and(k, t0, live);
    rk_if_begin(k, go);
    kn_gemm_hopper_issue(h, kt, kt);
    rk_if_end(k, NULL, 0);
    if (any_copied(h)) kn_gemm_hopper_fill_copies(h, tid, kt, kt);   /* the copies take every thread */
}

/* The descriptor of the k16 (fp8: k32) slice kk of an operand tile from
 * element e0 (eb-byte elements): K-major slices are 32 bytes apart inside
 * the swizzled rows, MN-major ones 16 rows (2048 bytes) apart; MN-major
 * atoms are a box (8192 bytes) apart. */
static rk_value slice_desc(rk_kernel *k, rk_value smem, rk_value e0, uint32_t kk, bool kmaj, uint32_t eb) {
    rk_value off = c32(k, kmaj ? 32 / eb * kk : 16 * KN_WG_BK * kk);
    rk_value e = rk_build_add(k, e0, off);
    return kmaj ? rk_tile_wgmma_desc_k128(k, smem, e)
                : rk_tile_wgmma_desc_mn128(k, smem, e, KN_WG_BK * RK_TILE_WGMMA_ROW_BYTES);
}

/* The four k16 (fp8: k32) steps of stage `st` for the warpgroup whose A
 * rows start at element `arow` of a stage (64 rows of one 128-byte K row, or
 * the warpgroup's 64 x 64 box: the same 8 KiB either way); fresh: the first
 * step ignores acc's values. */
static rk_value mma_steps(kn_hk *h, rk_value st, rk_value arow, rk_value acc, bool fresh) {
    rk_kernel *k = h->k;
    const kn_gemm_plan *pl = &h->pl;
    rk_value sza = c32(k, pl->stage_a), szb = c32(k, pl->stage_b);
    rk_value sa = rk_build_mul(k, st, sza);
    rk_value a0 = rk_build_add(k, sa, arow);
    rk_value b0 = rk_build_mul(k, st, szb);
    rk_build_wgmma_fence(k);
    rk_wgmma_opts o = {.trans_a = {!h->ka, true}, .trans_b = {!h->kb, true}};   /* set only where MN-major */
    for (uint32_t kk = 0; kk < RK_TILE_WGMMA_ROW_BYTES / 32; kk++) {
        rk_value da = slice_desc(k, h->sA, a0, kk, h->ka, h->eb);
        rk_value db = slice_desc(k, h->sB, b0, kk, h->kb, h->eb);
        o.scale_d = (rk_opt_bool){fresh && kk == 0, false};   /* set (to false) only on a fresh start */
        acc = rk_build_wgmma_ex(k, h->dt, acc, da, db, pl->bn, &o);
    }
    rk_build_wgmma_commit_group(k);
    return acc;
}

rk_value kn_gemm_hopper_mma(kn_hk *h, rk_value st, rk_value arow, rk_value acc) {
    return mma_steps(h, st, arow, acc, false);
}

rk_value kn_gemm_hopper_mma_fresh(kn_hk *h, rk_value st, rk_value arow, rk_value acc) {
    return mma_steps(h, st, arow, acc, true);
}

rk_value kn_gemm_hopper_finish_value(kn_hk *h, rk_value x, rk_value row, rk_value col, rk_value ok) {
    rk_kernel *k = h->k;
    if (h->s->scale == RK_GEMM_SCALE_TENSOR) {   /* the per-tensor scales, before the chain */
        uint32_t lanes = rk_type_count(k, rk_value_type(k, x));
        if (lanes == 1) {
            x = rk_build_fmul(k, x, h->tscale);
        } else {   /* x * s + 0: one rounding, as the scalar product */
            rk_value sc = rk_build_vsplat(k, h->tscale, lanes);
            rk_value z = rk_build_constant_vec(k, rk_value_type(k, x), 0.0);
            x = rk_build_vfma(k, x, sc, z);
        }
    }
    rk_value y = rk_tile_epi_apply(k, &h->ea, x, row, col, ok);
    return rk_tile_from_f32(k, y, h->s->out_dtype);
}

/* C[row, col] for an element known to be inside C: the fused chain, then the
 * store of x (f32 or a pair of f32). */
static void put(kn_hk *h, rk_value C, rk_value ldc, rk_value x, rk_value row, rk_value col, rk_value ok) {
    rk_kernel *k = h->k;
    rk_value o = kn_gemm_hopper_finish_value(h, x, row, col, ok);
    rk_value at = kn_gemm_c_index(k, row, col, ldc);
    rk_if_begin(k, ok);
    rk_store_global(k, C, at, o);
    rk_if_end(k, NULL, 0);
}

void kn_gemm_hopper_epilogue(kn_hk *h, rk_value rbase, rk_value twg, rk_value d) {
    rk_kernel *k = h->k;
    rk_value C = h->p[2], M = h->p[3], N = h->p[4], ldc = h->p[8];
    rk_value one = c32(k, 1), zero = c32(k, 0);
    rk_value odd = rk_build_and(k, ldc, one);
    rk_value even = rk_build_cmp(k, "eq", odd, zero);
    for (uint32_t i = 0; i < h->pl.bn / 2; i += 2) {
        rk_tile_frag_coord fc = rk_tile_wgmma_acc_coord(k, twg, i);
        rk_value row = rk_build_add(k, rbase, fc.row);
        rk_value col = rk_build_add(k, h->n0, fc.col);
        rk_value col1 = rk_build_add(k, col, one);
        rk_value rin;
        if (h->hooks.row_of) row = h->hooks.row_of(h, h->hooks.ud, row, &rin);
        else rin = rk_build_cmp(k, "lt", row, M);
        rk_value cin0 = rk_build_cmp(k, "lt", col, N);
        rk_value cin1 = rk_build_cmp(k, "lt", col1, N);
        rk_value in0 = rk_build_and(k, rin, cin0);
        rk_value in1 = rk_build_and(k, rin, cin1);
        rk_value whole = rk_build_and(k, in1, even);
        rk_if_begin(k, whole);
        {
            int32_t mask[2] = {(int32_t)i, (int32_t)i + 1};
            rk_value x = rk_build_vshuffle(k, d, d, mask, 2);
            put(h, C, ldc, x, row, col, whole);
        }
        rk_else(k, NULL, 0);
        {
            rk_value x0 = rk_build_vextract(k, d, i);
            put(h, C, ldc, x0, row, col, in0);
            rk_value x1 = rk_build_vextract(k, d, i + 1);
            put(h, C, ldc, x1, row, col1, in1);
        }
        rk_if_end(k, NULL, 0);
    }
}

void kn_gemm_hopper_begin(kn_hk *h, const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p,
                          uint32_t releases) {
    kn_gemm_hopper_begin_ex(h, &in->u.gemm, t, k, p, NULL, releases);
}

void kn_gemm_hopper_begin_ex(kn_hk *h, const rk_gemm_spec *s, const rk_target *t, rk_kernel *k, const rk_value *p,
                             const struct kn_hk_fill fill[2], uint32_t releases) {
    memset(h, 0, sizeof *h);
    if (fill) h->fill[0] = fill[0], h->fill[1] = fill[1];
    rk_status st = kn_gemm_hopper_plan(s, t, false, &h->pl);
    RK_ASSERT(st == RK_OK, "gemm: building a wgmma instance that does not validate");
    h->k = k, h->s = s, h->p = p;
    h->ea.chain = &s->fuse;
    rk_epi_param eps[RK_EPI_MAX_PARAMS];
    uint32_t ne = rk_epi_params(&s->fuse, s->out_dtype, eps);
    for (uint32_t i = 0; i < ne; i++) h->ea.p[i] = p[9 + i];
    /* split-K's Work follows the chain's operands (kn_gemm_split_signature) */
    uint32_t w = kn_gemm_hopper_split_work(s);
    if (w) h->work = p[9 + ne];
    bool ca = copied(h, 0), cb = copied(h, 1);
    if (!ca) h->amap = p[9 + ne + w];
    if (!cb) h->bmap = p[9 + ne + w + !ca];
    h->ka = kn_gemm_hopper_k_major(s, 0), h->kb = kn_gemm_hopper_k_major(s, 1);
    h->dt = kn_gemm_hopper_f8(s) ? kn_dtype_name(s->dtype) : s->dtype == RK_S_BF16 ? "bf16" : "f16";
    h->eb = rk_tile_elem_bytes(s->dtype);
    uint32_t at = 9 + ne + w + !ca + !cb;   /* after the operands' tensor maps */
    if (s->scale != RK_GEMM_SCALE_NONE) {
        h->sa = p[at], h->sb = p[at + 1];
        at += 2;
    }
    if (s->epilogue == RK_GEMM_EPI_TMA) h->cmap = p[at];
    /* shared memory: every stage of A, then of B, each stage 1024-byte aligned for the swizzle */
    rk_smem_alloc_opts al = {.align = RK_SOME(1024)};
    uint32_t na = h->pl.stages * h->pl.stage_a, nb = h->pl.stages * h->pl.stage_b;
    h->sA = rk_build_smem_alloc_ex(k, (rk_type){s->dtype}, &na, 1, &al);
    h->sB = rk_build_smem_alloc_ex(k, (rk_type){s->dtype}, &nb, 1, &al);
    if (kn_gemm_hopper_cstage_aliased(s)) {
        h->cstage = h->sB;   /* the B stages, free once the loop is done (kn_gemm_hopper_build's barrier) */
    } else if (s->epilogue == RK_GEMM_EPI_TMA) {   /* each consumer's 64 x tile N of C */
        uint32_t nc = kn_gemm_hopper_cstage_bytes(s) / rk_tile_elem_bytes(s->out_dtype);
        h->cstage = rk_build_smem_alloc_ex(k, (rk_type){s->out_dtype}, &nc, 1, &al);
    }
    uint32_t tx = ((ca ? 0 : h->pl.stage_a) + (cb ? 0 : h->pl.stage_b)) * h->eb;   /* TMA's bytes of a fill */
    rk_tile_tma_ring_init_pair(k, &h->ring, h->pl.stages, tx, releases);
    rk_value K = p[5];
    rk_ix ktn = rk_ix_udiv(k, rk_ix_add(k, rk_ix_v(K), rk_ix_c(h->pl.bk - 1)), rk_ix_c(h->pl.bk));
    h->ktiles = rk_ix_value(k, ktn);
    if (s->scale == RK_GEMM_SCALE_TENSOR) {
        rk_value z = c32(k, 0);
        rk_value xa = rk_load_global(k, h->sa, z, 1);
        rk_value xb = rk_load_global(k, h->sb, z, 1);
        h->tscale = rk_build_fmul(k, xa, xb);
    }
}

void kn_gemm_hopper_origin(kn_hk *h, rk_value tile) {
    rk_ix tm, tn;
    kn_gemm_tile_origin(h->k, h->pl.bm, h->pl.bn, h->s->group_m, tile, h->p[3], h->p[4], &tm, &tn, &h->m0, &h->n0);
}

rk_value kn_gemm_hopper_arow(kn_hk *h, rk_value wg) {
    rk_value wg_rows = c32(h->k, 64);
    rk_value wrow = rk_build_mul(h->k, wg, wg_rows);
    rk_value row_elems = c32(h->k, h->pl.bk);
    return rk_build_mul(h->k, wrow, row_elems);
}

/* The first C row of warpgroup wg's 64. */
static rk_value row_base(kn_hk *h, rk_value wg) {
    rk_value wg_rows = c32(h->k, 64);
    rk_value wrow = rk_build_mul(h->k, wg, wg_rows);
    return rk_build_add(h->k, h->m0, wrow);
}

void kn_gemm_hopper_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    if (in->u.gemm.schedule != RK_GEMM_SCHED_PLAIN) {
        kn_gemm_hopper_build_ws(in, t, k, p);
        return;
    }
    if (in->u.gemm.cluster == 2) rk_kernel_set_cluster_dims(k, 2, 1, 1);
    kn_hk h;
    kn_gemm_hopper_begin(&h, in, t, k, p, 0);
    uint32_t splits = in->u.gemm.split_k;
    if (splits > 1) {   /* this split's K tiles (grid y): the loop runs over them, the boxes add the first */
        rk_value kbase, count;
        kn_gemm_split_range(k, h.s, h.ktiles, &kbase, &count);
        h.kt0 = kbase;
        h.ktiles = count;
    }
    rk_value rbase, twg;
    rk_value d = kn_gemm_hopper_run_plain(&h, &rbase, &twg);
    if (splits > 1) {   /* one problem: group 0 of 1 */
        kn_gemm_hopper_split_finish(&h, splits, h.work, c32(k, 1), rbase, twg, d);
    } else if (h.s->epilogue == RK_GEMM_EPI_TMA) {
        rk_value tid = rk_build_thread_id(k, 0);
        rk_value c7 = c32(k, 7);
        rk_value wg = rk_build_lshr(k, tid, c7);   /* consumer warpgroup */
        if (kn_gemm_hopper_cstage_aliased(h.s)) rk_build_sync(k);   /* every warpgroup's reads of B are done */
        kn_gemm_hopper_epilogue_tma(&h, rbase, twg, wg, d);
        kn_gemm_hopper_store_drain(&h, twg);
    } else {
        kn_gemm_hopper_epilogue(&h, rbase, twg, d);
    }
    if (h.s->cluster == 2) {   /* neither block of the pair leaves while the other may still address it */
        rk_build_cluster_arrive(k);
        rk_build_cluster_wait(k);
    }
}

/* cluster=2, before the first fill: the pair's ranks, whether its tiles share B (the partner is block pid ^ 1;
 * both blocks compute the same answer), and a cluster barrier so that neither multicasts into a barrier the
 * other has not initialised. */
static void pair_begin(kn_hk *h, rk_value pid) {
    rk_kernel *k = h->k;
    h->rank = rk_build_cluster_rank(k);
    rk_value one = c32(k, 1);
    rk_value other = rk_build_xor(k, pid, one);
    rk_ix tm, tn;
    rk_value pm0, pn0;
    kn_gemm_tile_origin(k, h->pl.bm, h->pl.bn, h->s->group_m, other, h->p[3], h->p[4], &tm, &tn, &pm0, &pn0);
    h->share_b = rk_build_cmp(k, "eq", pn0, h->n0);
    rk_value tid = rk_build_thread_id(k, 0);
    kn_gemm_hopper_pair_meet(k, tid);
}

void kn_gemm_hopper_pair_meet(rk_kernel *k, rk_value tid) {
    rk_value zero = c32(k, 0);
    rk_value t0 = rk_build_cmp(k, "eq", tid, zero);
    rk_if_begin(k, t0);
    rk_build_fence_mbarrier_init(k);
    rk_if_end(k, NULL, 0);
    rk_build_cluster_arrive(k);
    rk_build_cluster_wait(k);
}

/* schedule=plain's hooks for the block-scale loop: thread `tid` of the block. */
typedef struct plain_ud { rk_value tid; } plain_ud;

static rk_value plain_full(kn_hk *h, void *ud, rk_value kt) {
    (void)ud;
    rk_tile_tma_ring_wait(h->k, &h->ring, kt);
    rk_value S = c32(h->k, h->pl.stages);
    return rk_build_umod(h->k, kt, S);
}

/* Tile kt's reads are done: after a block barrier, thread 0 refills its stage with tile kt + stages (the
 * prologue filled every stage). */
static void plain_retired(kn_hk *h, void *ud, rk_value kt) {
    const plain_ud *u = ud;
    rk_build_sync(h->k);
    rk_value S = c32(h->k, h->pl.stages);
    rk_value nxt = rk_build_add(h->k, kt, S);
    fill(h, u->tid, nxt);
}

rk_value kn_gemm_hopper_run_plain(kn_hk *h, rk_value *rbase, rk_value *twg_out) {
    rk_kernel *k = h->k;
    const kn_gemm_plan *pl = &h->pl;
    rk_value pid = rk_build_block_id(k, 0);
    kn_gemm_hopper_origin(h, pid);   /* the block's tile, in grouped-M order */
    bool pair = h->s->cluster == 2;
    if (pair) pair_begin(h, pid);

    rk_value tid = rk_build_thread_id(k, 0);
    rk_value c7 = c32(k, 7), c127 = c32(k, 127);
    rk_value wg = rk_build_lshr(k, tid, c7);     /* consumer warpgroup */
    rk_value twg = rk_build_and(k, tid, c127);   /* thread inside it */
    rk_value arow = kn_gemm_hopper_arow(h, wg);
    for (uint32_t i = 0; i + 1 < pl->stages; i++) {
        rk_value ci = c32(k, i);
        fill(h, tid, ci);
    }
    *twg_out = twg;
    if (h->s->scale == RK_GEMM_SCALE_BLOCK) {   /* fp8: TMA fills every stage, no copies to wait for */
        RK_ASSERT(!any_copied(h), "gemm: scale=block with operands the threads copy");
        /* the ring's last stage too: a block's stage is refilled once its own wgmmas retire (plain_retired) */
        rk_value last = c32(k, pl->stages - 1);
        fill(h, tid, last);
        plain_ud u = {tid};
        kn_hk_blocks b = {.full = plain_full, .retired = plain_retired, .ud = &u, .arow = arow, .twg = twg};
        b.rbase = *rbase = row_base(h, wg);
        return kn_gemm_hopper_run_blocks(h, &b);
    }
    rk_type acc_t = rk_type_vec(k, RK_T_F32, pl->bn / 2);
    rk_value acc0 = rk_build_constant_vec(k, acc_t, 0.0), acc;
    rk_value lo = c32(k, 0), step = c32(k, 1);
    rk_value kt = rk_for_begin(k, lo, h->ktiles, step, "kt", 1, &acc0, NULL, &acc);
    {
        rk_tile_tma_ring_wait(k, &h->ring, kt);
        /* the threads' copies of tile kt: fills kt+1 .. kt+stages-2 may stay in flight */
        if (any_copied(h)) kn_gemm_hopper_copies_land(h, pl->stages - 2);
        rk_value S = c32(k, pl->stages);
        rk_value cur = rk_build_umod(k, kt, S);
        acc = kn_gemm_hopper_mma(h, cur, arow, acc);
        /* tile kt-1's group has read its stage once at most this one is in flight (cluster=2: in both blocks,
         * since either may refill it in both) */
        rk_build_wgmma_wait_group(k, 1, NULL, 0, NULL);
        if (pair) {
            rk_build_cluster_arrive(k);
            rk_build_cluster_wait(k);
        } else {
            rk_build_sync(k);
        }
        rk_value ahead = c32(k, pl->stages - 1);
        rk_value nxt = rk_build_add(k, kt, ahead);
        fill(h, tid, nxt);
    }
    rk_value res;
    rk_for_end(k, &acc, 1, &res);
    rk_value d;
    rk_build_wgmma_wait_group(k, 0, &res, 1, &d);
    *rbase = row_base(h, wg);
    return d;
}
