/* rocke — the GEMM's C-shuffle epilogue: the block's accumulators go to an
 * f32 LDS tile through the atom's C lane map (over the dead operand
 * buffers, after a barrier), then each thread reads whole 16-byte row chunks
 * of C, runs the fused chain on the vector and stores it with one wide
 * store; tails and odd ldc take the element path. Also the epilogue and xcd
 * rules of the plan and the heuristic. Layer: kernels. */
#include "gemm_hopper.h"

#define CS_BANKS 32

/* Elements of C per chunk: 16 bytes of out_dtype. */
static uint32_t chunk_vec(rk_scalar out) { return 16 / rk_tile_elem_bytes(out); }

/* Conflict ways of the accumulator writes (slot 0 of atom (0, 0), one wave)
 * plus those of the chunk reads (16 bytes each, one wave). */
static uint32_t staging_score(const kn_gemm_plan *pl, const rk_lds_layout *l, uint32_t vec) {
    uint32_t off[128], n = pl->wave > 128 ? 128 : pl->wave, cpr = pl->bn / vec;
    for (uint32_t i = 0; i < n; i++) {
        rk_lane_coord c = rk_lane_map_eval(pl->atom->c_map, i, 0);
        off[i] = rk_lds_offset(l, c.row % pl->bm, c.col % pl->bn);
    }
    uint32_t w = rk_lds_conflict_ways(off, n, 4, CS_BANKS, NULL);
    for (uint32_t i = 0; i < n; i++) off[i] = rk_lds_offset(l, (i / cpr) % pl->bm, i % cpr * vec);
    return w + rk_lds_conflict_ways(off, n, 16, CS_BANKS, NULL);
}

/* The staging tile's layout: plain, Swizzle<B, 4, 3> on 16-byte chunks
 * (which keeps each 4-float read whole), or 4 floats of row padding; the
 * fewest conflicts win, earlier candidates on ties (padding costs LDS). */
rk_lds_layout kn_gemm_cshuffle_layout(const kn_gemm_plan *pl, rk_scalar out) {
    uint32_t vec = chunk_vec(out), row_bytes = pl->bn * 4, best = UINT32_MAX;
    rk_lds_layout cand[5], pick = {0};
    uint32_t n = 0;
    if (rk_lds_layout_make(pl->bm, pl->bn, 4, 0, 0, 0, 0, &cand[n]) == RK_OK) n++;
    for (uint32_t b = 1; b <= 3; b++)
        if (row_bytes >= (16u << b) && rk_lds_layout_make(pl->bm, pl->bn, 4, 0, b, 4, 3, &cand[n]) == RK_OK) n++;
    if (rk_lds_layout_make(pl->bm, pl->bn, 4, 4, 0, 0, 0, &cand[n]) == RK_OK) n++;
    for (uint32_t i = 0; i < n; i++) {
        if (!rk_lds_layout_is_bijective(&cand[i])) continue;
        uint32_t sc = staging_score(pl, &cand[i], vec);
        if (sc < best) {
            best = sc;
            pick = cand[i];
        }
    }
    return pick;
}

/* The staging tile shares the operand buffer (A stages then B stages), so
 * the buffer is the larger of the two. */
rk_status kn_gemm_check_epilogue(const rk_gemm_spec *s, const rk_target *t, kn_gemm_plan *p) {
    if ((unsigned)s->epilogue >= RK_GEMM_EPI__COUNT)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'epilogue' out of range (legal: direct, cshuffle, tma)");
    if (s->epilogue == RK_GEMM_EPI_TMA && s->path != RK_GEMM_PATH_WGMMA)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'epilogue' = tma stores C with TMA boxes from path=wgmma "
                       "(sm_90a); path=mma takes direct or cshuffle");
    if (s->xcd > 0 && t->vendor != RK_VENDOR_AMD)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'xcd' = %u remaps blocks over AMD dies; %s has none: use xcd=0",
                       s->xcd, t->name);
    if (s->epilogue != RK_GEMM_EPI_CSHUFFLE) return RK_OK;
    if (s->path == RK_GEMM_PATH_WGMMA)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'epilogue' = cshuffle is for path=mma; path=wgmma takes "
                       "epilogue=direct or tma");
    rk_lds_layout l = kn_gemm_cshuffle_layout(p, s->out_dtype);
    uint32_t bytes = rk_lds_layout_bytes(&l);
    if (bytes > t->lds_bytes)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'epilogue' = cshuffle stages the %ux%u tile as f32 in %u bytes of "
                       "LDS, %s has %u: use a smaller tile or epilogue=direct", p->bm, p->bn, bytes, t->name,
                       t->lds_bytes);
    if (bytes > p->lds_bytes) p->lds_bytes = bytes;
    return RK_OK;
}

/* Direct unless the analysis favours the shuffle: the atom's C slots run
 * down a column (each lane's direct stores are single elements, a wave's
 * store touches several rows), C is 16-bit (so a chunk is 8 elements), and
 * the staging tile fits in the LDS the operands already take (no occupancy
 * cost). xcd: 8 on gfx942 / gfx950 (eight XCDs), else off. */
void kn_gemm_tune_epilogue(rk_gemm_spec *s, const rk_target *t, uint64_t locked) {
    if (!(locked >> KN_GK_XCD & 1))
        s->xcd = t->vendor == RK_VENDOR_AMD && (!strcmp(t->name, "gfx942") || !strcmp(t->name, "gfx950")) ? 8 : 0;
    if (locked >> KN_GK_EPI & 1) return;
    if (s->path == RK_GEMM_PATH_WGMMA && s->epilogue == RK_GEMM_EPI_TMA) return;   /* kn_gemm_hopper_tune's pick */
    s->epilogue = RK_GEMM_EPI_DIRECT;
    kn_gemm_plan p;
    if (s->path != RK_GEMM_PATH_MMA || rk_tile_elem_bytes(s->out_dtype) != 2 || kn_gemm_hopper_f8(s) ||
        kn_gemm_plan_make(s, t, false, &p))
        return;
    rk_lane_coord c0 = rk_lane_map_eval(p.atom->c_map, 0, 0), c1 = rk_lane_map_eval(p.atom->c_map, 0, 1);
    bool down_columns = p.atom->c_len > 1 && c0.col == c1.col && c1.row != c0.row;
    rk_lds_layout l = kn_gemm_cshuffle_layout(&p, s->out_dtype);
    if (down_columns && rk_lds_layout_bytes(&l) <= p.lds_bytes) s->epilogue = RK_GEMM_EPI_CSHUFFLE;
}

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

/* 16-bit element index of (row, col) of the f32 staging tile (i32). */
static rk_value stage_index(rk_kernel *k, const rk_lds_layout *l, rk_value row, rk_value col) {
    rk_ix off = rk_tile_lds_offset(k, l, rk_ix_v(row), rk_ix_v(col));
    rk_ix el = rk_ix_udiv(k, off, rk_ix_c(2));
    return rk_ix_value(k, el);
}

/* Accumulators -> staging tile, through the atom's C lane map; each f32 is
 * kept exact as a pair of 16-bit elements of the operand buffer. */
static void stage_acc(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s, const kn_gemm_io *io,
                      const rk_lds_layout *l, const rk_value *acc) {
    rk_value wtm = c32(k, pl->wtm), wtn = c32(k, pl->wtn);
    rk_value wm0 = rk_build_mul(k, io->w.wm, wtm);
    rk_value wn0 = rk_build_mul(k, io->w.wn, wtn);
    rk_type pair = rk_type_vec(k, (rk_type){s->dtype}, 2);
    for (uint32_t i = 0; i < pl->mi; i++)
        for (uint32_t j = 0; j < pl->ni; j++)
            for (uint32_t sl = 0; sl < pl->atom->c_len; sl++) {
                rk_value row, col;
                kn_gemm_acc_coord(k, pl, io->w.lane, wm0, wn0, i, j, sl, &row, &col);
                rk_value idx = stage_index(k, l, row, col);
                rk_value x = rk_build_vextract(k, acc[i * pl->ni + j], sl);
                rk_value bits = rk_build_bitcast(k, x, pair);
                rk_build_smem_store_vn(k, io->lds, &idx, bits);
            }
}

/* One chunk: vec floats of staging row rl from column cl, as 16-byte reads. */
static rk_value read_chunk(rk_kernel *k, const rk_lds_layout *l, const kn_gemm_io *io, rk_value rl, rk_value cl,
                           uint32_t vec) {
    rk_type f4 = rk_type_vec(k, (rk_type){RK_S_F32}, 4);
    rk_value part[2];
    for (uint32_t g = 0; g < vec / 4; g++) {
        rk_value off = c32(k, g * 4);
        rk_value cg = rk_build_add(k, cl, off);
        rk_value idx = stage_index(k, l, rl, cg);
        rk_value raw = rk_build_smem_load_vn(k, io->lds, &idx, 8);
        part[g] = rk_build_vbitcast(k, raw, f4);
    }
    if (vec == 4) return part[0];
    int32_t mask[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    return rk_build_vshuffle(k, part[0], part[1], mask, 8);
}

/* Store chunk x (vec floats) at C[row, col ..]: one vector store when it is
 * inside C and ldc keeps it aligned, else element by element. */
static void store_chunk(rk_kernel *k, const rk_gemm_spec *s, const kn_gemm_io *io, const rk_epi_args *ea, rk_value x,
                        rk_value row, rk_value col, uint32_t vec) {
    rk_value zero = c32(k, 0), vm1 = c32(k, vec - 1);
    rk_value lmod = rk_build_and(k, io->ldc, vm1);
    rk_value aligned = rk_build_cmp(k, "eq", lmod, zero);
    rk_value rin = rk_build_cmp(k, "lt", row, io->M);
    rk_value last = rk_build_add(k, col, vm1);
    rk_value cin = rk_build_cmp(k, "lt", last, io->N);
    rk_value in = rk_build_and(k, rin, cin);
    rk_value whole = rk_build_and(k, in, aligned);
    rk_if_begin(k, whole);
    {
        rk_value y = rk_tile_epi_apply(k, ea, x, row, col, whole);
        rk_value out = rk_tile_from_f32(k, y, s->out_dtype);
        rk_value at = kn_gemm_c_index(k, row, col, io->ldc);
        rk_store_global(k, io->C, at, out);
    }
    rk_else(k, NULL, 0);
    for (uint32_t e = 0; e < vec; e++) {
        rk_value xe = rk_build_vextract(k, x, e);
        rk_value off = c32(k, e);
        rk_value ce = rk_build_add(k, col, off);
        kn_gemm_store_one(k, s, ea, io, xe, row, ce);
    }
    rk_if_end(k, NULL, 0);
}

void kn_gemm_cshuffle(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s, const kn_gemm_io *io,
                      const rk_epi_args *ea, const rk_value *acc) {
    rk_lds_layout l = kn_gemm_cshuffle_layout(pl, s->out_dtype);
    uint32_t vec = chunk_vec(s->out_dtype);
    /* every warp is done reading the operand buffer the staging tile overlays */
    rk_build_sync(k);
    stage_acc(k, pl, s, io, &l, acc);
    rk_build_sync(k);
    uint32_t cpr = pl->bn / vec, total = pl->bm * cpr, passes = (total + pl->threads - 1) / pl->threads;
    for (uint32_t p = 0; p < passes; p++) {
        rk_value base = c32(k, p * pl->threads);
        rk_value ch = rk_build_add(k, base, io->w.tid);
        bool partial = (p + 1) * pl->threads > total;
        if (partial) {
            rk_value tot = c32(k, total);
            rk_value live = rk_build_cmp(k, "lt", ch, tot);
            rk_if_begin(k, live);
        }
        rk_ix rl = rk_ix_udiv(k, rk_ix_v(ch), rk_ix_c(cpr));
        rk_ix cc = rk_ix_umod(k, rk_ix_v(ch), rk_ix_c(cpr));
        rk_ix cl = rk_ix_mul(k, cc, rk_ix_c(vec));
        rk_value rlv = rk_ix_value(k, rl);
        rk_value clv = rk_ix_value(k, cl);
        rk_value x = read_chunk(k, &l, io, rlv, clv, vec);
        rk_value row = rk_build_add(k, io->m0, rlv);
        rk_value col = rk_build_add(k, io->n0, clv);
        store_chunk(k, s, io, ea, x, row, col, vec);
        if (partial) rk_if_end(k, NULL, 0);
    }
}
