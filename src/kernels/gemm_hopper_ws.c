/* rocke — the GEMM Hopper path's warp-specialized schedules. Warpgroup 0
 * is the producer: it gives registers back (setmaxnreg.dec) and its thread
 * 0 streams the TMA boxes of every K tile into the ring, waiting on a
 * stage's "empty" mbarrier before refilling it. Warpgroups 1.. are the
 * consumers (setmaxnreg.inc): each waits on a stage's "full" mbarrier,
 * issues its wgmmas, and once the group that read a stage has retired
 * (wgmma.wait_group) lane 0 of each of its warps arrives on that stage's
 * empty barrier. No block barrier after the set-up.
 *   ws          one C tile per block (the grid covers C);
 *   persistent  a grid of min(blocks, tiles) blocks; block b takes tiles
 *               b, b + grid, ... (grouped-M order), the fill counter runs on
 *               across tiles, so the producer loads tile i+1 while the
 *               consumers run the epilogue of tile i;
 *   pingpong    the persistent walk with two consumer warpgroups of 64
 *               rows on alternate tiles of the block (j even: consumer 0,
 *               odd: 1). They take turns at the main loop through two
 *               "turn" mbarriers: consumer c starts tile j once the other
 *               has issued all of tile j-1's wgmmas. That keeps the ring's
 *               fills in order (a stage's parity is never two rounds
 *               behind) and lets one's epilogue run during the other's MMA.
 * cluster=2 on any of them: blocks pid and pid ^ 1 form a cluster and walk
 * their tiles in step (round j: tiles first + j * grid of each). In a round
 * whose two tiles share B, each producer loads half of B into both blocks'
 * stage by multicast; so that neither overwrites a stage the other still
 * reads, every consumer warp hands a stage back to both blocks (its own
 * empty barrier and, at cluster scope, the partner's): a stage is free only
 * once both blocks have read it, whatever the round shared. In a round where
 * the partner has no tile (the last of an uneven persistent walk) a warp
 * arrives twice on its own barrier instead.
 * Layer: kernels. */
#include "gemm_hopper.h"

/* 4 producer warps x 40 + 8 consumer warps x 232 = 2016 registers a lane:
 * the 65536-register file of an SM at 384 threads (the entry limit is 168). */
enum { PRODUCER_REGS = 40, CONSUMER_REGS = 232 };

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

/* The tiles this block walks: tile j is first + j * stride, j < count (ntiles: every tile of C; invalid when
 * the block takes one tile). */
typedef struct walk { rk_value first, count, stride, ntiles; } walk;

static walk tiles_of(kn_hk *h) {
    rk_kernel *k = h->k;
    walk w = {.first = rk_build_block_id(k, 0)};
    if (!kn_gemm_hopper_walks(h->s)) {
        w.count = c32(k, 1);
        w.stride = c32(k, 1);
        return w;
    }
    rk_ix tm = rk_ix_udiv(k, rk_ix_add(k, rk_ix_v(h->p[3]), rk_ix_c(h->pl.bm - 1)), rk_ix_c(h->pl.bm));
    rk_ix tn = rk_ix_udiv(k, rk_ix_add(k, rk_ix_v(h->p[4]), rk_ix_c(h->pl.bn - 1)), rk_ix_c(h->pl.bn));
    rk_value ntiles = rk_ix_value(k, rk_ix_mul(k, tm, tn));
    w.ntiles = ntiles;
    w.stride = rk_build_grid_dim(k, 0);
    /* ceil((ntiles - first) / grid), 0 for a block past the last tile */
    rk_value left = rk_build_sub(k, ntiles, w.first);
    rk_value one = c32(k, 1), zero = c32(k, 0);
    rk_value gm1 = rk_build_sub(k, w.stride, one);
    rk_value num = rk_build_add(k, left, gm1);
    rk_value pos = rk_build_smax(k, num, zero);
    w.count = rk_build_udiv(k, pos, w.stride);
    return w;
}

/* cluster=2, round j (its tile's origin set): whether the partner block pid ^ 1 has a tile in this round (i1;
 * always, one tile a block), and into h->share_b whether the two tiles share B. Both blocks compute the same. */
static rk_value pair_round(kn_hk *h, const walk *w, rk_value j) {
    rk_kernel *k = h->k;
    rk_value one = c32(k, 1);
    rk_value pfirst = rk_build_xor(k, w->first, one);
    rk_value has, ptile;
    if (w->ntiles.id) {
        rk_value js = rk_build_mul(k, j, w->stride);
        ptile = rk_build_add(k, pfirst, js);
        has = rk_build_cmp(k, "lt", ptile, w->ntiles);
    } else {
        ptile = pfirst;
        has = rk_build_cmp(k, "eq", one, one);
    }
    rk_ix tm, tn;
    rk_value pm0, pn0;
    kn_gemm_tile_origin(k, h->pl.bm, h->pl.bn, h->s->group_m, ptile, h->p[3], h->p[4], &tm, &tn, &pm0, &pn0);
    rk_value same = rk_build_cmp(k, "eq", pn0, h->n0);
    h->share_b = rk_build_and(k, has, same);
    return has;
}

static void producer(kn_hk *h, const walk *w, rk_value tid) {
    rk_kernel *k = h->k;
    rk_build_setmaxnreg(k, "dec", PRODUCER_REGS);
    rk_value zero = c32(k, 0), one = c32(k, 1);
    rk_value t0 = rk_build_cmp(k, "eq", tid, zero);
    rk_if_begin(k, t0);
    rk_value j = rk_for_begin(k, zero, w->count, one, "pj", 0, NULL, NULL, NULL);
    {
        rk_value js = rk_build_mul(k, j, w->stride);
        rk_value tile = rk_build_add(k, w->first, js);
        kn_gemm_hopper_origin(h, tile);
        if (h->s->cluster == 2) pair_round(h, w, j);
        rk_value base = rk_build_mul(k, j, h->ktiles);
        rk_value kt = rk_for_begin(k, zero, h->ktiles, one, "pkt", 0, NULL, NULL, NULL);
        {
            rk_value fill = rk_build_add(k, base, kt);
            rk_tile_tma_ring_wait_free(k, &h->ring, fill);
            kn_gemm_hopper_issue(h, kt, fill);
        }
        rk_for_end(k, NULL, 0, NULL);
    }
    rk_for_end(k, NULL, 0, NULL);
    rk_if_end(k, NULL, 0);
}

/* Lane 0 of each consumer warp hands stage fill % stages back (cluster=2: to both blocks of the pair where
 * the partner has a tile in this round, `has`; else twice to its own). */
static void release(kn_hk *h, rk_value lane0, rk_value fill, rk_value has) {
    rk_kernel *k = h->k;
    rk_if_begin(k, lane0);
    rk_tile_tma_ring_release(k, &h->ring, fill);
    if (h->s->cluster == 2) {
        rk_if_begin(k, has);
        rk_value one = c32(k, 1);
        rk_value peer = rk_build_xor(k, h->rank, one);
        rk_tile_tma_ring_release_peer(k, &h->ring, fill, peer);
        rk_else(k, NULL, 0);
        rk_tile_tma_ring_release(k, &h->ring, fill);
        rk_if_end(k, NULL, 0);
    }
    rk_if_end(k, NULL, 0);
}

/* pingpong's turn barriers: turn[c] completes a phase when the other
 * consumer's 4 warps have issued a tile's main loop. */
static rk_value turns_init(rk_kernel *k) {
    rk_smem_alloc_opts al = {.align = RK_SOME(16)};
    uint32_t n = 2;
    rk_value turn = rk_build_smem_alloc_ex(k, RK_T_I64, &n, 1, &al);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value zero = c32(k, 0), one = c32(k, 1), four = c32(k, 4);
    rk_value t0 = rk_build_cmp(k, "eq", tid, zero);
    rk_if_begin(k, t0);
    rk_build_mbarrier_init(k, turn, zero, four);
    rk_build_mbarrier_init(k, turn, one, four);
    rk_if_end(k, NULL, 0);   /* kn_gemm_hopper_begin's block barrier publishes them */
    return turn;
}

/* Consumer c's n-th tile waits for phase n - 1 + c of turn[c] (none before
 * consumer 0's first: parity 1 on a fresh barrier passes). */
static void wait_turn(rk_kernel *k, rk_value turn, rk_value c, rk_value j) {
    rk_value one = c32(k, 1);
    rk_value n = rk_build_lshr(k, j, one);
    rk_value n1 = rk_build_add(k, n, one);
    rk_value t = rk_build_sub(k, n1, c);
    rk_value parity = rk_build_and(k, t, one);
    rk_build_mbarrier_wait(k, turn, c, parity);
}

/* The consumers' hooks for the block-scale loop (the current tile's first
 * fill, lane 0 of each warp), and pingpong's turn (its barriers, the
 * consumer index, the constant 1). */
typedef struct ws_ud { rk_value base, lane0, turn, cw, one, has; } ws_ud;

static rk_value ws_full(kn_hk *h, void *ud, rk_value kt) {
    const ws_ud *u = ud;
    rk_value fill = rk_build_add(h->k, u->base, kt);
    rk_tile_tma_ring_wait(h->k, &h->ring, fill);
    rk_value S = c32(h->k, h->pl.stages);
    return rk_build_umod(h->k, fill, S);
}

static void ws_retired(kn_hk *h, void *ud, rk_value kt) {
    const ws_ud *u = ud;
    rk_value fill = rk_build_add(h->k, u->base, kt);
    release(h, u->lane0, fill, u->has);
}

/* pingpong: the other consumer's turn, once this one has issued the tile's wgmmas */
static void pass_turn(kn_hk *h, const ws_ud *u) {
    rk_kernel *k = h->k;
    rk_value other = rk_build_sub(k, u->one, u->cw);
    rk_if_begin(k, u->lane0);
    rk_build_mbarrier_arrive(k, u->turn, other);
    rk_if_end(k, NULL, 0);
}

static void consumer(kn_hk *h, const walk *w, rk_value tid, rk_value wg, rk_value turn) {
    rk_kernel *k = h->k;
    const kn_gemm_plan *pl = &h->pl;
    bool pp = h->s->schedule == RK_GEMM_SCHED_PINGPONG, blocks = h->s->scale == RK_GEMM_SCALE_BLOCK;
    rk_build_setmaxnreg(k, "inc", CONSUMER_REGS);
    rk_value zero = c32(k, 0), one = c32(k, 1), c31 = c32(k, 31), c127 = c32(k, 127), c64 = c32(k, 64);
    rk_value cw = rk_build_sub(k, wg, one);   /* consumer index */
    rk_value rows = pp ? zero : cw;           /* its 64-row slice of the tile (pingpong: the whole tile) */
    rk_value twg = rk_build_and(k, tid, c127);
    rk_value lane = rk_build_and(k, tid, c31);
    rk_value lane0 = rk_build_cmp(k, "eq", lane, zero);
    rk_value arow = kn_gemm_hopper_arow(h, rows);
    rk_value wrow = rk_build_mul(k, rows, c64);
    rk_type acc_t = rk_type_vec(k, RK_T_F32, pl->bn / 2);
    rk_value jlo = pp ? cw : zero, jstep = pp ? c32(k, 2) : one;
    rk_value j = rk_for_begin(k, jlo, w->count, jstep, "cj", 0, NULL, NULL, NULL);
    {
        if (pp) wait_turn(k, turn, cw, j);
        rk_value js = rk_build_mul(k, j, w->stride);
        rk_value tile = rk_build_add(k, w->first, js);
        kn_gemm_hopper_origin(h, tile);
        rk_value has = h->s->cluster == 2 ? pair_round(h, w, j) : (rk_value){0};
        rk_value base = rk_build_mul(k, j, h->ktiles);
        rk_value rbase, d;
        ws_ud u = {.base = base, .lane0 = lane0, .turn = turn, .cw = cw, .one = one, .has = has};
        if (blocks) {   /* the 128-K blocks, each promoted with its scales (gemm_hopper_blocks.c) */
            rbase = rk_build_add(k, h->m0, wrow);
            kn_hk_blocks b = {.full = ws_full, .retired = ws_retired, .ud = &u, .arow = arow, .rbase = rbase,
                              .twg = twg};
            d = kn_gemm_hopper_run_blocks(h, &b);
            /* the other consumer's turn after the last promotion: an arrive beside the two sets in flight (right
             * after the last issue) made ptxas spill 3 registers (64x128 tiles) */
            if (pp) pass_turn(h, &u);
        } else {
            rk_value acc0 = rk_build_constant_vec(k, acc_t, 0.0), acc;
            rk_value kt = rk_for_begin(k, zero, h->ktiles, one, "ckt", 1, &acc0, NULL, &acc);
            {
                rk_value fill = rk_build_add(k, base, kt);
                rk_tile_tma_ring_wait(k, &h->ring, fill);
                rk_value S = c32(k, pl->stages);
                rk_value st = rk_build_umod(k, fill, S);
                acc = kn_gemm_hopper_mma(h, st, arow, acc);
                /* at most this group in flight: the previous fill's stage is read */
                rk_build_wgmma_wait_group(k, 1, NULL, 0, NULL);
                rk_value later = rk_build_cmp(k, "gt", kt, zero);
                rk_value go = rk_build_and(k, later, lane0);
                rk_value prev = rk_build_sub(k, fill, one);
                release(h, go, prev, has);
            }
            rk_value res;
            rk_for_end(k, &acc, 1, &res);
            if (pp) pass_turn(h, &u);
            /* the last group, and the last stage it read */
            rk_build_wgmma_wait_group(k, 0, &res, 1, &d);
            rk_value last0 = rk_build_add(k, base, h->ktiles);
            rk_value last = rk_build_sub(k, last0, one);
            release(h, lane0, last, has);
            rbase = rk_build_add(k, h->m0, wrow);
        }
        if (h->s->epilogue == RK_GEMM_EPI_TMA) kn_gemm_hopper_epilogue_tma(h, rbase, twg, cw, d);
        else kn_gemm_hopper_epilogue(h, rbase, twg, d);
    }
    rk_for_end(k, NULL, 0, NULL);
    if (h->s->epilogue == RK_GEMM_EPI_TMA) kn_gemm_hopper_store_drain(h, twg);
}

/* pad: every thread of the grid stages the padded operands (A row-major
 * [M, K] into Apad [M, K8], column-major [K, M] into [K, M8]; B alike), makes
 * its stores visible to the async proxy (TMA reads them) and meets the whole
 * grid at the barrier on Sync before any block starts its tiles. */
static void stage_padded(const rk_instance *in, rk_kernel *k, const rk_value *p) {
    const rk_gemm_spec *s = &in->u.gemm;
    rk_ksig sg;
    rk_instance_signature(in, &sg);
    int apad = -1, bpad = -1, sync = -1;
    for (uint32_t i = 0; i < sg.n; i++) {
        if (!strcmp(sg.p[i].name, "Apad")) apad = (int)i;
        if (!strcmp(sg.p[i].name, "Bpad")) bpad = (int)i;
        if (!strcmp(sg.p[i].name, "Sync")) sync = (int)i;
    }
    RK_ASSERT(sync >= 0, "gemm: pad's signature holds Sync");
    rk_kernel_set_cooperative(k, true);
    rk_value tid = rk_build_thread_id(k, 0), bid = rk_build_block_id(k, 0), grid = rk_build_grid_dim(k, 0);
    rk_value bdim = rk_build_block_dim(k, 0);
    rk_value base = rk_build_mul(k, bid, bdim);
    rk_value gtid = rk_build_add(k, base, tid);
    rk_value nthreads = rk_build_mul(k, grid, bdim);
    rk_value M = p[3], N = p[4], K = p[5], seven = c32(k, 7), mask = c32(k, ~7);
    for (int op = 0; op < 2; op++) {
        int at = op ? bpad : apad;
        if (at < 0) continue;
        bool row = op ? !kn_gemm_hopper_k_major(s, 1) : kn_gemm_hopper_k_major(s, 0);   /* row-major in memory */
        rk_value rows = row ? (op ? K : M) : (op ? N : K);
        rk_value cols = row ? (op ? N : K) : (op ? K : M);
        rk_value c7 = rk_build_add(k, cols, seven);
        rk_value ldp = rk_build_and(k, c7, mask);
        rk_tile_pad_copy(k, p[op], p[at], rows, cols, p[6 + op], ldp, gtid, nthreads);
    }
    const rk_fence_proxy_async_opts glob = {.space = "global"};
    rk_build_fence_proxy_async_ex(k, &glob);
    rk_value zero = c32(k, 0);
    rk_tile_grid_barrier(k, tid, p[sync], zero, grid);
    /* and on the reading side, before this block's TMA loads (one instruction; the PTX rule asks for a
     * proxy fence between the generic write and the async-proxy read, the writer's alone may do) */
    rk_build_fence_proxy_async_ex(k, &glob);
}

void kn_gemm_hopper_build_ws(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    if (in->u.gemm.pad != RK_GEMM_PAD_NONE) stage_padded(in, k, p);
    kn_gemm_hopper_build_ws_ex(&in->u.gemm, t, k, p, NULL);
}

void kn_gemm_hopper_build_ws_ex(const rk_gemm_spec *s, const rk_target *t, rk_kernel *k, const rk_value *p,
                                const struct kn_hk_hooks *hooks) {
    kn_hk h;
    bool pp = s->schedule == RK_GEMM_SCHED_PINGPONG;
    rk_value turn = pp ? turns_init(k) : (rk_value){0};
    /* a stage is released by lane 0 of every warp that read it: every consumer's, or (pingpong) one's; with
     * cluster=2 the partner's as well */
    uint32_t readers = pp ? 1 : s->tile[0] / 64, pair = s->cluster == 2 ? 2 : 1;
    if (pair == 2) rk_kernel_set_cluster_dims(k, 2, 1, 1);
    kn_gemm_hopper_begin_ex(&h, s, t, k, p, NULL, 4 * readers * pair);
    if (hooks) h.hooks = *hooks;
    walk w = tiles_of(&h);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value c7 = c32(k, 7), zero = c32(k, 0);
    if (pair == 2) {   /* neither block arrives on or multicasts into barriers the other has not initialised */
        h.rank = rk_build_cluster_rank(k);
        kn_gemm_hopper_pair_meet(k, tid);
    }
    rk_value wg = rk_build_lshr(k, tid, c7);
    rk_value is_producer = rk_build_cmp(k, "eq", wg, zero);
    rk_if_begin(k, is_producer);
    producer(&h, &w, tid);
    rk_else(k, NULL, 0);
    consumer(&h, &w, tid, wg, turn);
    rk_if_end(k, NULL, 0);
    if (pair == 2) {   /* neither block leaves while the other may still address its barriers */
        rk_build_cluster_arrive(k);
        rk_build_cluster_wait(k);
    }
}
