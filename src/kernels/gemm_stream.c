/* rocke — the GEMM weight-streaming path (path=stream, NVIDIA, layout rc,
 * M <= 64: decode). No shared memory and no barriers in the K loop: every
 * lane reads its own 16-byte pieces of A and B straight from global memory
 * into mma.sync m16n8k16 fragments, several K chunks per iteration, so a
 * warp keeps tile_k / 32 * (tile_n / warps_n / 8) loads of 512 bytes of B in
 * flight and each B row is read in runs of tile_k * 2 contiguous bytes.
 *
 * The K permutation that makes 16-byte pieces legal: in a 32-K chunk lane
 * (g = lane / 4, q = lane % 4) loads physical K [8q, 8q + 8) of its rows
 * (B row n0 + 8j + g; A rows g and g + 8 of each 16-row atom). For the two
 * k16 steps s the fragments take elements 4s .. 4s + 3 of that piece (B:
 * b0 b1 = 4s, 4s+1; b2 b3 = 4s+2, 4s+3; A likewise per row), i.e. logical
 * k 16s + 8p + 2q + e reads physical 8q + 4s + 2p + e. A and B use the same
 * bijection of the chunk, so the sum over K is unchanged.
 *
 * Split-K over grid y gives every SM its own slices of B; the partials meet
 * in the workspace reduction (split order: deterministic) or by atomics,
 * as on path=mma (gemm_splitk.c). Layer: kernels. */
#include "gemm_hopper.h"   /* kn_gemm_check_order_and_chain */

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }
static rk_value i64(rk_kernel *k, rk_value v) { return rk_build_sext(k, v, RK_T_I64); }

enum { STREAM_CHUNK = 32, STREAM_PIECE = 8, STREAM_MAX_REGS = 160 };

/* Registers of one lane's loads and accumulators: B pieces (4 words each),
 * A pieces (two rows of 4 words per atom row), accumulators (4 per atom). */
static uint32_t stream_regs(uint32_t mi, uint32_t ng, uint32_t chunks) {
    return chunks * ng * 4 + chunks * mi * 8 + mi * ng * 4;
}

rk_status kn_gemm_stream_plan(const rk_gemm_spec *s, const rk_target *t, bool batched, kn_gemm_plan *out) {
    memset(out, 0, sizeof *out);
    if (t->vendor != RK_VENDOR_NVIDIA)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'path' = stream runs mma.sync fragments loaded from global memory "
                       "(NVIDIA); %s takes path=mma", t->name);
    if (s->dtype != RK_S_F16 && s->dtype != RK_S_BF16)
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream takes dtype f16 or bf16, got %s (path=mma takes fp8)",
                       kn_dtype_name(s->dtype));
    if (s->layout != RK_GEMM_RC)
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream reads A [M, K] and B [N, K] along K (layout rc); the other "
                       "layouts take path=mma");
    if (s->vec_a != STREAM_PIECE || s->vec_b != STREAM_PIECE)
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream reads 16-byte pieces: vec_a and vec_b must be 8 (got %u, %u; "
                       "a K that 8 does not divide takes path=mma)", s->vec_a, s->vec_b);
    if (s->scale != RK_GEMM_SCALE_NONE)
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream has no fp8 scales (legal: scale=none)");
    if (s->stages != 1)
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream keeps its K chunks in registers, not LDS stages: stages must "
                       "be 1, got %u", s->stages);
    if (s->epilogue != RK_GEMM_EPI_DIRECT)
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream has no LDS to stage C in: epilogue must be direct");
    const rk_mma_atom *a = s->atom ? rk_mma_atom_get((rk_atom_id)s->atom) : kn_gemm_default_atom(t, s->dtype);
    rk_atom_id want = s->dtype == RK_S_BF16 ? RK_ATOM_MMA_M16N8K16_F32_BF16 : RK_ATOM_MMA_M16N8K16_F32_F16;
    if (!a || a->id != want || !rk_target_has_atom(t, a))
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream multiplies with %s (atom=auto)",
                       rk_mma_atom_get(want)->op_id);
    uint32_t bm = s->tile[0], bn = s->tile[1], bk = s->tile[2], wn = s->warps[1];
    if (s->warps[0] != 1 || !wn)
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream puts its warps along N: warps must be 1xW, got %ux%u",
                       s->warps[0], wn);
    if (bm % a->m || bm > 64)
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream takes tile M 16, 32, 48 or 64 (got %u)", bm);
    if (bn % (wn * a->n) || bn / (wn * a->n) > 8)
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream needs tile N = warps N x 8 x (1..8) (got %u over %u warps)",
                       bn, wn);
    if (bk % STREAM_CHUNK || bk / STREAM_CHUNK > 8)
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream takes tile K in 32-K chunks, 32..256 (got %u)", bk);
    uint32_t mi = bm / a->m, ng = bn / (wn * a->n), chunks = bk / STREAM_CHUNK;
    uint32_t regs = stream_regs(mi, ng, chunks);
    if (regs > STREAM_MAX_REGS)
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream with tile %ux%ux%u over %u warps holds %u registers of loads "
                       "and accumulators per lane (at most %u): use a smaller tile K or N", bm, bn, bk, wn, regs,
                       STREAM_MAX_REGS);
    kn_gemm_plan p = {.atom = a, .bm = bm, .bn = bn, .bk = bk, .wm = 1, .wn = wn, .wtm = bm, .wtn = bn / wn,
                      .mi = mi, .ni = ng, .ki = bk / a->k, .wave = a->lanes, .threads = wn * a->lanes, .stages = 1,
                      .a_row = true, .b_row = false, .batched = batched};
    if (p.wave != t->wave_size || p.threads > t->max_workgroup)
        return rk_fail(RK_ERR_INVALID, "gemm: path=stream with warps 1x%u is %u threads (%s: at most %u)", wn,
                       p.threads, t->name, t->max_workgroup);
    rk_status st = kn_gemm_check_epilogue(s, t, &p);
    if (!st) st = kn_gemm_check_order_and_chain(s, batched);
    if (st) return st;
    *out = p;
    return RK_OK;
}

bool kn_gemm_tune_stream(rk_gemm_spec *s, const rk_target *t, uint64_t M, uint64_t N, uint64_t K, uint64_t batch,
                         uint64_t locked) {
    rk_gemm_spec was = *s;
    s->path = RK_GEMM_PATH_STREAM;
    s->schedule = RK_GEMM_SCHED_PLAIN;
    s->blocks = 0;
    uint32_t mi = M <= 16 ? 1 : M <= 32 ? 2 : M <= 48 ? 3 : 4;
    if (!(locked >> KN_GK_TILE & 1)) {
        /* up to two atom rows: 4 x 8 columns a warp and four 32-K chunks; from three, half of
         * each, so loads, accumulators and the split reduction's slots fit without spills */
        s->tile[0] = 16 * mi;
        s->tile[1] = mi <= 2 ? 128 : 64;
        s->tile[2] = mi <= 2 ? 128 : 64;
    }
    if (!(locked >> KN_GK_WARPS & 1)) s->warps[0] = 1, s->warps[1] = 4;
    if (!(locked >> KN_GK_STAGES & 1)) s->stages = 1;
    if (!(locked >> KN_GK_EPI & 1)) s->epilogue = RK_GEMM_EPI_DIRECT;
    if (!(locked >> KN_GK_SPLIT & 1)) s->split_k = kn_gemm_tune_split(s, t, M, N, K, batch);
    kn_gemm_plan p;
    if (kn_gemm_stream_plan(s, t, false, &p) == RK_OK) return true;
    *s = was;
    return false;
}

/* One lane's 16-byte piece of row `row` (i32) at K column kk (i32) of a
 * K-contiguous matrix with pitch ld, zeros where the row or the piece lies
 * outside (K is a multiple of 8, so a piece is wholly in or out). */
static rk_value piece(rk_kernel *k, rk_value ptr, rk_value rowat, rk_value row_ok, rk_value kk, rk_value kin,
                      rk_value zero) {
    rk_value ok = rk_build_and(k, row_ok, kin);
    rk_value k64 = i64(k, kk);
    rk_value at = rk_build_add(k, rowat, k64);
    rk_value z64 = rk_const_i64(k, 0);
    rk_value safe = rk_build_select(k, ok, at, z64);
    rk_value v = rk_load_global(k, ptr, safe, STREAM_PIECE);
    return rk_build_select(k, ok, v, zero);
}

/* Row `row` times the pitch (i64) and whether the row is inside `lim`. */
static rk_value row_start(rk_kernel *k, rk_value row, rk_value ld, rk_value lim, rk_value *ok) {
    *ok = rk_build_cmp(k, "lt", row, lim);
    rk_value r64 = i64(k, row);
    rk_value l64 = i64(k, ld);
    return rk_build_mul(k, r64, l64);
}

void kn_gemm_stream_mainloop(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s, kn_gemm_io *io,
                             rk_value *res) {
    const rk_mma_atom *a = pl->atom;
    uint32_t mi = pl->mi, ng = pl->ni, chunks = pl->bk / STREAM_CHUNK;
    rk_value c2 = c32(k, 2), c3 = c32(k, 3), c8 = c32(k, 8);
    rk_value g = rk_build_lshr(k, io->w.lane, c2);
    rk_value q = rk_build_and(k, io->w.lane, c3);
    rk_value q8 = rk_build_mul(k, q, c8);
    /* this lane's rows: A rows m0 + 16i + g (+ 8), B rows n0 + warp's columns + 8j + g */
    rk_value arow[4][2], aok[4][2], brow[8], bok[8];
    rk_value ag = rk_build_add(k, io->m0, g);
    for (uint32_t i = 0; i < mi; i++)
        for (uint32_t h = 0; h < 2; h++) {
            rk_value off = c32(k, 16 * i + 8 * h);
            rk_value r = rk_build_add(k, ag, off);
            arow[i][h] = row_start(k, r, io->lda, io->M, &aok[i][h]);
        }
    rk_value wtn = c32(k, pl->wtn);
    rk_value wn0 = rk_build_mul(k, io->w.wn, wtn);
    rk_value nb = rk_build_add(k, io->n0, wn0);
    rk_value bg = rk_build_add(k, nb, g);
    for (uint32_t j = 0; j < ng; j++) {
        rk_value off = c32(k, 8 * j);
        rk_value n = rk_build_add(k, bg, off);
        brow[j] = row_start(k, n, io->ldb, io->N, &bok[j]);
    }
    rk_ix kt_n = rk_ix_udiv(k, rk_ix_add(k, rk_ix_v(io->K), rk_ix_c(pl->bk - 1)), rk_ix_c(pl->bk));
    rk_value ktiles = rk_ix_value(k, kt_n), kbase = c32(k, 0);
    if (s->split_k > 1) kn_gemm_split_range(k, s, ktiles, &kbase, &ktiles);
    rk_value bkv = c32(k, pl->bk);
    rk_value kfirst = rk_build_mul(k, kbase, bkv);
    rk_value klane = rk_build_add(k, kfirst, q8);
    rk_type pt = rk_type_vec(k, (rk_type){s->dtype}, STREAM_PIECE);
    rk_value zero = rk_build_constant_vec(k, pt, 0.0);

    uint32_t nacc = mi * ng;
    rk_value init[32], acc[32];
    for (uint32_t i = 0; i < nacc; i++) init[i] = rk_tile_acc_zero(k, a);
    rk_value lo = c32(k, 0), step = c32(k, 1);
    rk_value kt = rk_for_begin(k, lo, ktiles, step, "kt", nacc, init, NULL, acc);
    {
        rk_value ko = rk_build_mul(k, kt, bkv);
        rk_value kc = rk_build_add(k, klane, ko);
        /* every load of the iteration first (they are independent), then the atoms */
        rk_value ap[8][4][2], bp[8][8];
        for (uint32_t u = 0; u < chunks; u++) {
            rk_value cu = c32(k, u * STREAM_CHUNK);
            rk_value kk = rk_build_add(k, kc, cu);
            rk_value kin = rk_build_cmp(k, "lt", kk, io->K);
            for (uint32_t j = 0; j < ng; j++) bp[u][j] = piece(k, io->B, brow[j], bok[j], kk, kin, zero);
            for (uint32_t i = 0; i < mi; i++)
                for (uint32_t h = 0; h < 2; h++) ap[u][i][h] = piece(k, io->A, arow[i][h], aok[i][h], kk, kin, zero);
        }
        for (uint32_t u = 0; u < chunks; u++)
            for (int32_t st = 0; st < 2; st++) {
                /* A: rows g, g + 8 of elements 4s, 4s+1, then 4s+2, 4s+3; B: elements 4s .. 4s+3 */
                const int32_t am[8] = {4 * st, 4 * st + 1, 8 + 4 * st, 9 + 4 * st,
                                       4 * st + 2, 4 * st + 3, 10 + 4 * st, 11 + 4 * st};
                const int32_t bmk[4] = {4 * st, 4 * st + 1, 4 * st + 2, 4 * st + 3};
                rk_value fa[4], fb[8];
                for (uint32_t i = 0; i < mi; i++) fa[i] = rk_build_vshuffle(k, ap[u][i][0], ap[u][i][1], am, 8);
                for (uint32_t j = 0; j < ng; j++) fb[j] = rk_build_vshuffle(k, bp[u][j], bp[u][j], bmk, 4);
                for (uint32_t i = 0; i < mi; i++)
                    for (uint32_t j = 0; j < ng; j++)
                        acc[i * ng + j] = rk_build_mma(k, a->op_id, fa[i], fb[j], acc[i * ng + j]);
            }
    }
    rk_for_end(k, acc, nacc, res);
}
