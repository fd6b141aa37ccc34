/* rocke — the GEMM kernel: one block per tile_m x tile_n tile of C (in
 * grouped-M order), warp_m x warp_n warps each owning a contiguous warp tile
 * of atoms, K in tile_k steps through `stages` LDS buffers:
 *   prologue   copy K tiles 0 .. stages-2, one async group each;
 *   loop kt    wait until tile kt has landed, barrier (every warp is done
 *              with the buffer about to be refilled), start the copy of tile
 *              kt + stages - 1, then run the atoms on tile kt's buffer;
 *   drain      wait for the trailing (zero-filled) copies;
 *   epilogue   each accumulator through the fused chain, stored as pairs of
 *              columns where the atom's slots hold them (mma.sync) and the
 *              tile is inside C, element by element at the edges.
 * With one stage the copy is synchronous between two barriers. Copies past
 * M, N or K read zeros, so tails need no other care. Layer: kernels. */
#include "gemm_hopper.h"

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

/* i64 byte offset of `count` elements of `elem` for a pointer move. */
static rk_value byte_off(rk_kernel *k, rk_value elems64, rk_scalar elem) {
    rk_value eb = rk_const_i64(k, rk_tile_elem_bytes(elem));
    return rk_build_mul(k, elems64, eb);
}

typedef struct gk {
    rk_kernel *k;
    const kn_gemm_plan *pl;
    const rk_gemm_spec *s;
    rk_tile_gview ga, gb;
    rk_tile_copy_lanes la, lb;
    rk_value sA, sB;           /* LDS */
    rk_value m0, n0;           /* the block's tile origin */
    rk_value kbase;            /* the split's first K tile */
    uint32_t b_base;           /* B's first element in sB (sA == sB when the epilogue shares one buffer) */
    rk_tile_warps w;
    kn_gemm_gather gather_a, gather_b;
} gk;

/* A K tile's synchronous copies held in registers between their loads and
 * their LDS stores (the loads of tile kt + stages - 1 overlap the math on
 * tile kt). Async copies are never held. */
typedef struct held {
    rk_tile_copy_regs a, b;
    rk_value sta, stb;
    bool a_held, b_held;
} held;

/* One operand's copy of K tile k0 — the caller's gather, else the plain
 * copy: its view's origin is (mn0, k0) when the tile's rows run along M or
 * N, else (k0, mn0). Gathers are never held. */
static void copy_operand(rk_kernel *k, const kn_gemm_gather *ga, const rk_tile_copy *c, const rk_tile_copy_lanes *l,
                         const rk_tile_gview *v, bool rows_mn, rk_value mn0, rk_value k0, rk_value smem, rk_value stage,
                         rk_tile_copy_regs *hold, bool *was_held) {
    rk_value r0 = rows_mn ? mn0 : k0, c0 = rows_mn ? k0 : mn0;
    *was_held = hold && !c->async && !ga->fn;
    if (ga->fn) ga->fn(k, ga->ud, l, r0, c0, smem, stage);
    else if (*was_held) rk_tile_copy_fetch(k, c, l, v, r0, c0, hold);
    else rk_tile_copy_issue(k, c, l, v, r0, c0, smem, stage);
}

/* Copy K tile `kt` (i32) into stage `st` (i32); with h, synchronous copies
 * only load (finish_copies stores them). */
static void issue(gk *g, rk_value kt, rk_value st, held *h) {
    rk_kernel *k = g->k;
    const kn_gemm_plan *pl = g->pl;
    rk_value bk = c32(k, pl->bk);
    rk_value kabs = g->s->split_k > 1 ? rk_build_add(k, g->kbase, kt) : kt;
    rk_value k0 = rk_build_mul(k, kabs, bk);
    rk_value sza = c32(k, pl->stage_a);
    rk_value sta = rk_build_mul(k, st, sza);
    rk_value szb = c32(k, pl->stage_b);
    rk_value stb = rk_build_mul(k, st, szb);
    if (g->b_base) {
        rk_value bb = c32(k, g->b_base);
        stb = rk_build_add(k, stb, bb);
    }
    bool ah = false, bh = false;
    copy_operand(k, &g->gather_a, &pl->cpa, &g->la, &g->ga, pl->a_row, g->m0, k0, g->sA, sta, h ? &h->a : NULL, &ah);
    copy_operand(k, &g->gather_b, &pl->cpb, &g->lb, &g->gb, !pl->b_row, g->n0, k0, g->sB, stb, h ? &h->b : NULL, &bh);
    rk_build_async_commit_group(k);
    if (h) h->sta = sta, h->stb = stb, h->a_held = ah, h->b_held = bh;
}

static void finish_copies(gk *g, const held *h) {
    if (h->a_held) rk_tile_copy_put(g->k, &g->pl->cpa, &g->la, &h->a, g->sA, h->sta);
    if (h->b_held) rk_tile_copy_put(g->k, &g->pl->cpb, &g->lb, &h->b, g->sB, h->stb);
}

/* The atoms of one K tile: acc[mi * ni + j] += A(mi) * B(j) over ki steps. */
static void compute(gk *g, rk_value stage, rk_value *acc) {
    rk_kernel *k = g->k;
    const kn_gemm_plan *pl = g->pl;
    const rk_mma_atom *a = pl->atom;
    rk_value sza = c32(k, pl->stage_a);
    rk_value sta = rk_build_mul(k, stage, sza);
    rk_value szb = c32(k, pl->stage_b);
    rk_value stb = rk_build_mul(k, stage, szb);
    if (g->b_base) {
        rk_value bb = c32(k, g->b_base);
        stb = rk_build_add(k, stb, bb);
    }
    rk_value wtm = c32(k, pl->wtm), wtn = c32(k, pl->wtn);
    rk_value wm0 = rk_build_mul(k, g->w.wm, wtm);
    rk_value wn0 = rk_build_mul(k, g->w.wn, wtn);
    for (uint32_t kk = 0; kk < pl->ki; kk++) {
        rk_value k0 = c32(k, kk * a->k);
        rk_value fa[16], fb[32];
        for (uint32_t i = 0; i < pl->mi; i++) {
            rk_value off = c32(k, i * a->m);
            rk_value mn = rk_build_add(k, wm0, off);
            fa[i] = rk_tile_frag_load(k, a, &pl->opa, g->sA, sta, g->w.lane, mn, k0);
        }
        /* B two atoms at a time (one ldmatrix.x4) where it can be, else one */
        for (uint32_t j = 0; j < pl->ni;) {
            rk_value off = c32(k, j * a->n);
            rk_value mn = rk_build_add(k, wn0, off);
            if (j + 1 < pl->ni && rk_tile_frag_load_b_pair(k, a, &pl->opb, g->sB, stb, g->w.lane, mn, k0, &fb[j])) {
                j += 2;
                continue;
            }
            fb[j++] = rk_tile_frag_load(k, a, &pl->opb, g->sB, stb, g->w.lane, mn, k0);
        }
        for (uint32_t i = 0; i < pl->mi; i++)
            for (uint32_t j = 0; j < pl->ni; j++) acc[i * pl->ni + j] = rk_build_mma(k, a->op_id, fa[i], fb[j], acc[i * pl->ni + j]);
    }
}

/* One K tile's atoms into acc, or (fp8 scale=block) into fresh f32
 * accumulators promoted into acc with the tile's 128-K block scales. */
static void compute_tile(gk *g, const kn_gemm_io *io, rk_value stage, rk_value kt, rk_value kblocks, bool block,
                         rk_value *acc) {
    if (!block) {
        compute(g, stage, acc);
        return;
    }
    rk_kernel *k = g->k;
    rk_value blk[192];
    for (uint32_t i = 0; i < g->pl->mi * g->pl->ni; i++) blk[i] = rk_tile_acc_zero(k, g->pl->atom);
    compute(g, stage, blk);
    rk_value kb = g->s->split_k > 1 ? rk_build_add(k, g->kbase, kt) : kt;
    kn_gemm_fp8_promote(k, g->pl, io, kb, kblocks, blk, acc);
}

rk_value kn_gemm_c_index(rk_kernel *k, rk_value row, rk_value col, rk_value ldc) {
    rk_value r64 = rk_build_sext(k, row, RK_T_I64);
    rk_value l64 = rk_build_sext(k, ldc, RK_T_I64);
    rk_value c64 = rk_build_sext(k, col, RK_T_I64);
    rk_value ro = rk_build_mul(k, r64, l64);
    return rk_build_add(k, ro, c64);
}

void kn_gemm_acc_coord(rk_kernel *k, const kn_gemm_plan *pl, rk_value lane, rk_value r0, rk_value c0, uint32_t i,
                       uint32_t j, uint32_t sl, rk_value *row, rk_value *col) {
    const rk_mma_atom *a = pl->atom;
    rk_value ro = c32(k, i * a->m), co = c32(k, j * a->n);
    rk_value ri = rk_build_add(k, r0, ro);
    rk_value ci = rk_build_add(k, c0, co);
    rk_tile_frag_coord fc = rk_tile_atom_coord(k, a->id, RK_FRAG_C, lane, sl);
    *row = rk_build_add(k, ri, fc.row);
    *col = rk_build_add(k, ci, fc.col);
}

void kn_gemm_store_one(rk_kernel *k, const rk_gemm_spec *s, const rk_epi_args *ea, const kn_gemm_io *io, rk_value x,
                       rk_value row, rk_value col) {
    rk_value rin = rk_build_cmp(k, "lt", row, io->M);
    rk_value cin = rk_build_cmp(k, "lt", col, io->N);
    rk_value ok = rk_build_and(k, rin, cin);
    rk_value y = rk_tile_epi_apply(k, ea, x, row, col, ok);
    rk_value out = rk_tile_from_f32(k, y, s->out_dtype);
    rk_if_begin(k, ok);
    rk_value at = kn_gemm_c_index(k, row, col, io->ldc);
    rk_store_global(k, io->C, at, out);
    rk_if_end(k, NULL, 0);
}

static void epilogue(gk *g, const rk_epi_args *ea, const kn_gemm_io *io, const rk_value *acc) {
    rk_kernel *k = g->k;
    rk_value C = io->C, M = io->M, N = io->N, ldc = io->ldc;
    const kn_gemm_plan *pl = g->pl;
    const rk_mma_atom *a = pl->atom;
    uint32_t run = rk_tile_acc_col_run(a);
    rk_value wtm = c32(k, pl->wtm), wtn = c32(k, pl->wtn);
    rk_value wm0 = rk_build_mul(k, g->w.wm, wtm);
    rk_value wn0 = rk_build_mul(k, g->w.wn, wtn);
    rk_value rb = rk_build_add(k, g->m0, wm0);
    rk_value cb = rk_build_add(k, g->n0, wn0);
    /* pairs need an even row pitch (C's base is 16-byte aligned by the ABI) */
    rk_value one = c32(k, 1), zero = c32(k, 0);
    rk_value pitch = ldc;
    if (io->c_shift.set) pitch = rk_build_or(k, ldc, io->c_shift.v);   /* C moved by c_shift elements */
    rk_value odd = rk_build_and(k, pitch, one);
    rk_value even = rk_build_cmp(k, "eq", odd, zero);
    for (uint32_t i = 0; i < pl->mi; i++)
        for (uint32_t j = 0; j < pl->ni; j++) {
            rk_value d = acc[i * pl->ni + j];
            for (uint32_t sl = 0; sl < a->c_len; sl += run) {
                rk_value row, col;
                kn_gemm_acc_coord(k, pl, g->w.lane, rb, cb, i, j, sl, &row, &col);
                if (run == 1) {
                    rk_value x = rk_build_vextract(k, d, sl);
                    kn_gemm_store_one(k, g->s, ea, io, x, row, col);
                    continue;
                }
                /* a pair of columns: one vector store when it is inside C */
                rk_value rin = rk_build_cmp(k, "lt", row, M);
                rk_value c1 = rk_build_add(k, col, one);
                rk_value cin = rk_build_cmp(k, "lt", c1, N);
                rk_value in2 = rk_build_and(k, rin, cin);
                rk_value whole = rk_build_and(k, in2, even);
                rk_if_begin(k, whole);
                {
                    int32_t mask[2] = {(int32_t)sl, (int32_t)sl + 1};
                    rk_value x = rk_build_vshuffle(k, d, d, mask, 2);
                    rk_value y = rk_tile_epi_apply(k, ea, x, row, col, whole);
                    rk_value out = rk_tile_from_f32(k, y, g->s->out_dtype);
                    rk_value at = kn_gemm_c_index(k, row, col, ldc);
                    rk_store_global(k, C, at, out);
                }
                rk_else(k, NULL, 0);
                for (uint32_t e = 0; e < 2; e++) {
                    rk_value x = rk_build_vextract(k, d, sl + e);
                    rk_value ce = e ? c1 : col;
                    kn_gemm_store_one(k, g->s, ea, io, x, row, ce);
                }
                rk_if_end(k, NULL, 0);
            }
        }
}

rk_value kn_gemm_block_id(rk_kernel *k, const rk_gemm_spec *s) {
    rk_value pid = rk_build_block_id(k, 0);
    if (s->xcd <= 1) return pid;
    /* a chunk of grouped-M neighbours (one group column, or 8 tiles of a row) per die */
    uint32_t chunk = s->group_m > 1 ? s->group_m : 8;
    rk_value total = rk_build_grid_dim(k, 0);
    rk_ix w = rk_tile_xcd_remap(k, rk_ix_v(pid), rk_ix_v(total), s->xcd, chunk);
    return rk_ix_value(k, w);
}

void kn_gemm_tile_origin(rk_kernel *k, uint32_t bm, uint32_t bn, uint32_t group_m, rk_value id, rk_value M,
                         rk_value N, rk_ix *tm, rk_ix *tn, rk_value *m0, rk_value *n0) {
    *tm = rk_ix_udiv(k, rk_ix_add(k, rk_ix_v(M), rk_ix_c(bm - 1)), rk_ix_c(bm));
    *tn = rk_ix_udiv(k, rk_ix_add(k, rk_ix_v(N), rk_ix_c(bn - 1)), rk_ix_c(bn));
    rk_ix pm, pn;
    rk_tile_group_m(k, rk_ix_v(id), *tm, *tn, group_m, &pm, &pn);
    rk_ix im0 = rk_ix_mul(k, pm, rk_ix_c(bm)), in0 = rk_ix_mul(k, pn, rk_ix_c(bn));
    *m0 = rk_ix_value(k, im0);
    *n0 = rk_ix_value(k, in0);
}

/* The plan's threads and warp grid; the caller then fills a kn_gemm_io. */
void kn_gemm_begin(rk_kernel *k, const rk_gemm_spec *s, const rk_target *t, bool batched, kn_gemm_plan *pl,
                   rk_tile_warps *w) {
    rk_status st = kn_gemm_plan_make(s, t, batched, pl);
    RK_ASSERT(st == RK_OK, "gemm: building an instance that does not validate");
    st = rk_tile_warps_begin(k, pl->wave, pl->wm, pl->wn, 1, w);
    RK_ASSERT(st == RK_OK, "gemm: warp grid of a validated plan");
}

static gk gk_of(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s, const kn_gemm_io *io) {
    return (gk){.k = k, .pl = pl, .s = s, .m0 = io->m0, .n0 = io->n0, .w = io->w, .gather_a = io->gather_a,
                .gather_b = io->gather_b};
}

void kn_gemm_mainloop(rk_kernel *k, const kn_gemm_plan *plp, const rk_gemm_spec *s, kn_gemm_io *io,
                      rk_value *res) {
    if (s->path == RK_GEMM_PATH_STREAM) {
        kn_gemm_stream_mainloop(k, plp, s, io, res);
        return;
    }
    const kn_gemm_plan pl = *plp;
    gk g = gk_of(k, plp, s, io);
    g.ga = pl.a_row ? (rk_tile_gview){io->A, io->lda, io->M, io->K} : (rk_tile_gview){io->A, io->lda, io->K, io->M};
    g.gb = pl.b_row ? (rk_tile_gview){io->B, io->ldb, io->K, io->N} : (rk_tile_gview){io->B, io->ldb, io->N, io->K};
    /* LDS: every stage of A, then of B */
    rk_smem_alloc_opts al = {.align = RK_SOME(128)};
    uint32_t na = pl.stages * pl.stage_a, nb = pl.stages * pl.stage_b;
    if (s->epilogue == RK_GEMM_EPI_CSHUFFLE) {
        /* one buffer, A then B, that the C-shuffle staging tile reuses */
        uint32_t both = pl.lds_bytes / rk_tile_elem_bytes(s->dtype);
        g.sA = g.sB = rk_build_smem_alloc_ex(k, (rk_type){s->dtype}, &both, 1, &al);
        g.b_base = na;
    } else {
        g.sA = rk_build_smem_alloc_ex(k, (rk_type){s->dtype}, &na, 1, &al);
        g.sB = rk_build_smem_alloc_ex(k, (rk_type){s->dtype}, &nb, 1, &al);
    }
    io->lds = g.sA;
    rk_tile_copy_lanes_init(k, &pl.cpa, g.w.tid, &g.la);
    rk_tile_copy_lanes_init(k, &pl.cpb, g.w.tid, &g.lb);

    rk_ix kt_n = rk_ix_udiv(k, rk_ix_add(k, rk_ix_v(io->K), rk_ix_c(pl.bk - 1)), rk_ix_c(pl.bk));
    rk_value ktiles = rk_ix_value(k, kt_n);
    rk_value kblocks = ktiles;   /* scale=block: tile K is 128, so K tiles are the scales' K blocks */
    if (s->split_k > 1) kn_gemm_split_range(k, s, ktiles, &g.kbase, &ktiles);
    bool block = s->scale == RK_GEMM_SCALE_BLOCK;
    uint32_t S = pl.stages;
    for (uint32_t i = 0; i + 1 < S; i++) {
        rk_value ci = c32(k, i);
        issue(&g, ci, ci, NULL);
    }
    uint32_t nacc = pl.mi * pl.ni;
    rk_value init[192], acc[192];
    for (uint32_t i = 0; i < nacc; i++) init[i] = rk_tile_acc_zero(k, pl.atom);
    rk_value lo = c32(k, 0), step = c32(k, 1);
    rk_value kt = rk_for_begin(k, lo, ktiles, step, "kt", nacc, init, NULL, acc);
    {
        rk_value Sv = c32(k, S);
        if (S > 1) {
            rk_build_async_wait_group(k, S - 2);
            rk_build_sync(k);
            rk_value ahead = c32(k, S - 1);
            rk_value nxt = rk_build_add(k, kt, ahead);
            rk_value nst = rk_build_umod(k, nxt, Sv);
            held h;
            issue(&g, nxt, nst, &h);
            rk_value cur = rk_build_umod(k, kt, Sv);
            compute_tile(&g, io, cur, kt, kblocks, block, acc);
            finish_copies(&g, &h);
        } else {
            rk_build_sync(k);
            rk_value z = c32(k, 0);
            issue(&g, kt, z, NULL);
            rk_build_async_wait_group(k, 0);
            rk_build_sync(k);
            compute_tile(&g, io, z, kt, kblocks, block, acc);
        }
    }
    rk_for_end(k, acc, nacc, res);
    rk_build_async_wait_group(k, 0);
}

void kn_gemm_epilogue(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s, const kn_gemm_io *io,
                      const rk_epi_args *ea, const rk_value *acc_in) {
    rk_value scaled[192];
    const rk_value *acc = acc_in;
    if (s->scale == RK_GEMM_SCALE_TENSOR) {   /* fp8: Sa[0] * Sb[0] before the chain */
        kn_gemm_fp8_tensor(k, pl, io, acc_in, scaled);
        acc = scaled;
    }
    if (s->epilogue == RK_GEMM_EPI_CSHUFFLE) {
        kn_gemm_cshuffle(k, pl, s, io, ea, acc);
        return;
    }
    gk g = gk_of(k, pl, s, io);
    epilogue(&g, ea, io, acc);
}

void kn_gemm_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p, bool batched) {
    if (in->u.gemm.path == RK_GEMM_PATH_WGMMA) {
        kn_gemm_hopper_build(in, t, k, p);
        return;
    }
    const rk_gemm_spec *s = &in->u.gemm;
    kn_gemm_plan pl;
    rk_value A = p[0], B = p[1], C = p[2], M = p[3], N = p[4], K = p[5], lda = p[6], ldb = p[7], ldc = p[8];
    uint32_t next = batched ? 12 : 9;
    rk_epi_args ea = {.chain = &s->fuse};
    rk_epi_param eps[RK_EPI_MAX_PARAMS];
    uint32_t ne = rk_epi_params(&s->fuse, s->out_dtype, eps);
    for (uint32_t i = 0; i < ne; i++) ea.p[i] = p[next + i];

    kn_gemm_io io = {.M = M, .N = N, .K = K, .lda = lda, .ldb = ldb, .ldc = ldc};
    kn_gemm_begin(k, s, t, batched, &pl, &io.w);
    /* the block's tile, in grouped-M order */
    rk_value pid = kn_gemm_block_id(k, s);
    rk_ix tm, tn;
    kn_gemm_tile_origin(k, pl.bm, pl.bn, s->group_m, pid, M, N, &tm, &tn, &io.m0, &io.n0);
    if (batched) {
        /* strided batches: move the three pointers by batch * stride elements */
        rk_value z = rk_build_block_id(k, 2);
        rk_value z64 = rk_build_sext(k, z, RK_T_I64);
        rk_value ea_ = rk_build_mul(k, z64, p[9]);
        rk_value ob = byte_off(k, ea_, s->dtype);
        A = rk_build_global_ptr_add(k, A, ob);
        rk_value eb_ = rk_build_mul(k, z64, p[10]);
        rk_value obb = byte_off(k, eb_, s->dtype);
        B = rk_build_global_ptr_add(k, B, obb);
        rk_value ec_ = rk_build_mul(k, z64, p[11]);
        rk_value oc = byte_off(k, ec_, s->out_dtype);
        C = rk_build_global_ptr_add(k, C, oc);
    }
    io.A = A;
    io.B = B;
    io.C = C;
    bool ws = s->split_k > 1 && s->split_reduce == RK_GEMM_SPLIT_WORKSPACE;
    if (s->scale != RK_GEMM_SCALE_NONE) {   /* fp8 scales, after Work */
        io.sa = p[next + ne + ws];
        io.sb = p[next + ne + ws + 1];
    }
    rk_value res[192];
    kn_gemm_mainloop(k, &pl, s, &io, res);
    rk_value work = ws ? p[next + ne] : (rk_value){0};
    kn_gemm_finish(k, &pl, s, &io, &ea, res, pid, tm, tn, batched, work);
}

void kn_gemm_finish(rk_kernel *k, const kn_gemm_plan *plp, const rk_gemm_spec *s, const kn_gemm_io *iop,
                    const rk_epi_args *eap, const rk_value *res, rk_value pid, rk_ix tm, rk_ix tn, bool batched,
                    rk_value work) {
    const kn_gemm_plan pl = *plp;
    const kn_gemm_io io = *iop;
    const rk_epi_args ea = *eap;
    if (s->split_k == 1) {
        kn_gemm_epilogue(k, &pl, s, &io, &ea, res);
        return;
    }
    rk_value wtm = c32(k, pl.wtm), wtn = c32(k, pl.wtn);
    rk_value wm0 = rk_build_mul(k, io.w.wm, wtm);
    rk_value wn0 = rk_build_mul(k, io.w.wn, wtn);
    rk_value tiles = rk_ix_value(k, rk_ix_mul(k, tm, tn));
    kn_gemm_split_io sio = {.dst = io.C, .M = io.M, .N = io.N, .ldc = io.ldc, .tile = pid, .tiles = tiles,
                            .lane = io.w.lane, .tid = io.w.tid};
    sio.z = batched ? rk_build_block_id(k, 2) : c32(k, 0);
    sio.batch = batched ? rk_build_grid_dim(k, 2) : c32(k, 1);
    sio.r0 = rk_build_add(k, io.m0, wm0);
    sio.c0 = rk_build_add(k, io.n0, wn0);
    if (s->split_reduce == RK_GEMM_SPLIT_ATOMIC) {
        kn_gemm_split_atomic(k, &pl, &sio, res);
        return;
    }
    sio.dst = work;
    rk_value last = kn_gemm_split_publish(k, &pl, s, &sio, res);
    rk_if_begin(k, last);
    rk_value sum[192];
    kn_gemm_split_gather(k, &pl, s, &sio, res, sum);
    kn_gemm_epilogue(k, &pl, s, &io, &ea, sum);
    rk_if_end(k, NULL, 0);
}
