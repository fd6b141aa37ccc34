/* rocke — the forward convolution on sm_90a with X read by TMA as boxes of
 * output pixels (load = tma, algo igemm, 2-D, groups 1): the implicit GEMM's
 * M tile is a box of bn images x bp output rows x bq output columns (bn bp bq
 * = tile M), its K tile one tap (r, s) x 64 channels. For that K tile the
 * X rows the box needs form one 4-D TMA box of the map over X [N, H, W, C]:
 * origin (c0, q0 * stride_w - pad_w + s * dil_w, p0 * stride_h - pad_h +
 * r * dil_h, n0), traversal strides = the convolution's stride, so it loads
 * bq x bp x bn pixels of 64 channels, zeros where the pixel lies in the
 * padding, past the image or past C, in rows of 128 bytes under the
 * 128-byte swizzle: wgmma's K-major A. W comes as the 4-D box (c0, s, r, k0)
 * of the map over W [K, R, S, C] (tile N rows of 64 channels: B, K-major;
 * channels past C are zeros there too, so A's zeros never meet another tap's
 * weights). Both operands are then TMA boxes of one thread, and the GEMM
 * family's Hopper kernel runs unchanged on every schedule (plain, ws,
 * persistent, pingpong) through two hooks: the boxes (kn_hk.hooks.box) and
 * the accumulator rows mapped back to (n, p, q) of the box, those outside
 * N x P x Q masked (kn_hk.hooks.row_of). Rules, heuristic, maps, grid and the
 * builder. Layer: kernels. */
#include "conv_int.h"
#include "gemm_hopper.h"

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

static uint32_t log2u(uint32_t v) {
    uint32_t l = 0;
    while ((1u << l) < v) l++;
    return l;
}

bool kn_conv_box(const rk_instance *in) {
    const rk_conv_spec *c = &in->u.conv;
    return c->load == RK_CONV_LOAD_TMA && c->g.path == RK_GEMM_PATH_WGMMA && c->algo == RK_CONV_IGEMM &&
           c->direction == RK_CONV_FWD && !kn_conv_is_3d(in);
}

uint32_t kn_conv_box_n(const rk_conv_spec *c) {
    uint32_t pq = c->box_p * c->box_q;
    return pq && c->g.tile[0] % pq == 0 ? c->g.tile[0] / pq : 0;
}

rk_status kn_conv_box_check(const rk_instance *in, const rk_target *t, const char *fam) {
    const rk_conv_spec *c = &in->u.conv;
    if (kn_conv_is_3d(in))
        return rk_fail(RK_ERR_INVALID, "%s: load=tma with algo igemm is the 2-D forward's pixel-box kernel (4-D maps); "
                       "conv3d takes load=copy", fam);
    if (c->direction != RK_CONV_FWD)
        return rk_fail(RK_ERR_INVALID, "%s: load=tma with algo igemm is the forward's pixel-box kernel; direction %s "
                       "takes load=copy (or algo gemm1x1 for a 1x1 filter)", fam,
                       c->direction == RK_CONV_DGRAD ? "dgrad" : "wgrad");
    if (c->g.vec_a != KN_WG_TMA_VEC || c->g.vec_b != KN_WG_TMA_VEC)
        return rk_fail(RK_ERR_INVALID, "%s: the pixel-box kernel (load=tma, algo igemm) reads X and W in TMA's 16-byte "
                       "rows: vec_a and vec_b must be 8 (got %u and %u; lower vecs take load=copy)", fam, c->g.vec_a,
                       c->g.vec_b);
    if (c->g.epilogue != RK_GEMM_EPI_DIRECT)
        return rk_fail(RK_ERR_INVALID, "%s: the pixel-box kernel (load=tma, algo igemm) stores Y direct: a box's pixels "
                       "are not one TMA box of Y (knob 'epilogue' must be direct)", fam);
    if (!c->box_p || !c->box_q || !kn_conv_box_n(c))
        return rk_fail(RK_ERR_INVALID, "%s: the pixel-box kernel (load=tma, algo igemm) needs knobs 'box_p' and 'box_q' "
                       "(powers of two) whose product divides tile M = %u (the box holds tile M pixels: tile M / "
                       "(box_p x box_q) images); got box_p %u, box_q %u (build with --shape for the heuristic's)", fam,
                       c->g.tile[0], c->box_p, c->box_q);
    rk_gemm_spec s;
    kn_gemm_plan pl;
    return kn_conv_hopper_plan_check(in, t, fam, &s, &pl);
}

/* The box's legality for a geometry: strides 1..8 (TMA's traversal strides) and box sides of at most 256
 * input elements along W and H. */
static bool box_fits_geo(uint32_t bp, uint32_t bq, const kn_conv_geo *g) {
    return g->stride[1] <= 8 && g->stride[2] <= 8 && bq * g->stride[2] <= 256 && bp * g->stride[1] <= 256;
}

rk_status kn_conv_box_check_shape(const rk_instance *in, const kn_conv_geo *g, const char *fam) {
    if (!kn_conv_box(in)) return RK_OK;
    const rk_conv_spec *c = &in->u.conv;
    if (g->groups != 1)
        return rk_fail(RK_ERR_INVALID, "%s: the pixel-box kernel (load=tma, algo igemm) maps whole tensors: groups must "
                       "be 1, got %llu; grouped convolutions take load=copy", fam, (unsigned long long)g->groups);
    if (g->c % KN_WG_TMA_VEC)
        return rk_fail(RK_ERR_INVALID, "%s: the pixel-box kernel (load=tma, algo igemm): C = %llu must be a multiple of "
                       "8 (a pixel of X and a tap of W are TMA strides, multiples of 16 bytes); load=copy takes it",
                       fam, (unsigned long long)g->c);
    if (!box_fits_geo(c->box_p, c->box_q, g))
        return rk_fail(RK_ERR_INVALID, "%s: the pixel-box kernel (load=tma, algo igemm) reads X at the convolution's "
                       "stride as TMA traversal strides: stride 1..8 with box_q x stride_w and box_p x stride_h at most "
                       "256 (here stride %llux%llu, box_p %u, box_q %u); load=copy takes it", fam,
                       (unsigned long long)g->stride[1], (unsigned long long)g->stride[2], c->box_p, c->box_q);
    return RK_OK;
}

bool kn_conv_box_fits(const rk_instance *in, const kn_conv_geo *g) {
    const rk_conv_spec *c = &in->u.conv;
    if (c->algo != RK_CONV_IGEMM || c->direction != RK_CONV_FWD || kn_conv_is_3d(in) || g->groups != 1) return false;
    if (c->g.vec_a != KN_WG_TMA_VEC || c->g.vec_b != KN_WG_TMA_VEC) return false;
    return g->c % KN_WG_TMA_VEC == 0 && box_fits_geo(1, 1, g);
}

/* Boxes of the grid for (bn, bp, bq). */
static uint64_t boxes(const kn_conv_geo *g, uint32_t bn, uint32_t bp, uint32_t bq) {
    return (g->n + bn - 1) / bn * ((g->out[1] + bp - 1) / bp) * ((g->out[2] + bq - 1) / bq);
}

/* The box of tile M bm with the fewest boxes (the least padding of N, P and Q to whole boxes); among equals
 * the widest along q (contiguous rows of X), then along p. */
static void pick_box(const kn_conv_geo *g, uint32_t bm, uint32_t *bp_out, uint32_t *bq_out) {
    uint64_t best = UINT64_MAX;
    *bp_out = 1, *bq_out = 1;
    for (uint32_t bq = bm; bq >= 1; bq /= 2)
        for (uint32_t bp = bm / bq; bp >= 1; bp /= 2) {
            if (!box_fits_geo(bp, bq, g)) continue;
            uint64_t n = boxes(g, bm / (bp * bq), bp, bq);
            if (n < best) best = n, *bp_out = bp, *bq_out = bq;
        }
}

void kn_conv_box_tune(rk_conv_spec *c, const rk_target *t, const kn_conv_geo *g, uint64_t N, const kn_conv_box_free *fr) {
    rk_gemm_spec *s = &c->g;
    if (fr->vec_a) s->vec_a = KN_WG_TMA_VEC;
    if (fr->vec_b) s->vec_b = KN_WG_TMA_VEC;
    if (fr->epilogue) s->epilogue = RK_GEMM_EPI_DIRECT;
    if (fr->tile) {
        /* The cost model (not measured yet; docs/conv.md, "The pixel-box forward"): waves of tiles over the SMs
         * (the schedule is persistent where they outnumber them), each tile's time its area over the rate its
         * wgmma shape sustains with both operands in shared memory — m64nNk16 reads A and B from shared
         * memory, 4 KiB per 64 x 64 x 16 (the SM's whole bandwidth at N = 64), 6 KiB per 64 x 128 x 16, 10
         * KiB per 64 x 256 x 16 — so N 64 runs at about 0.6 of N 256, N 128 at 0.9; one consumer warpgroup
         * (tile M 64) keeps less in flight, 0.8 of two. The box padding is in the tile count. */
        static const uint32_t cand[][2] = {{128, 256}, {128, 128}, {128, 64}, {64, 256}, {64, 128}, {64, 64}};
        uint64_t nmax = (N + 63) / 64 * 64;
        double best = 0;
        size_t pick = RK_COUNTOF(cand) - 1;
        for (size_t i = 0; i < RK_COUNTOF(cand); i++) {
            if (cand[i][1] > nmax && cand[i][1] > 64) continue;
            uint32_t bp, bq;
            pick_box(g, cand[i][0], &bp, &bq);
            uint64_t tiles = boxes(g, cand[i][0] / (bp * bq), bp, bq) * ((N + cand[i][1] - 1) / cand[i][1]);
            uint64_t waves = (tiles + t->compute_units - 1) / t->compute_units;
            double rate = (cand[i][1] >= 256 ? 1.0 : cand[i][1] >= 128 ? 0.9 : 0.6) * (cand[i][0] == 64 ? 0.8 : 1.0);
            double cost = (double)waves * cand[i][0] * cand[i][1] / rate;
            if (i == 0 || cost < best) best = cost, pick = i;
        }
        s->tile[0] = cand[pick][0], s->tile[1] = cand[pick][1], s->tile[2] = KN_WG_BK;
    }
    s->warps[0] = s->tile[0] / 16, s->warps[1] = 1;
    if (fr->box) pick_box(g, s->tile[0], &c->box_p, &c->box_q);
    uint32_t bn = kn_conv_box_n(c);
    uint64_t tiles = bn ? boxes(g, bn, c->box_p, c->box_q) * ((N + s->tile[1] - 1) / s->tile[1]) : 0;
    /* persistent where the tiles outnumber the SMs (the producer loads the next tile during this one's
     * stores), ws otherwise: the producer warp issues both boxes, the consumers never wait on a barrier
     * of the whole block */
    if (fr->schedule) s->schedule = tiles > t->compute_units ? RK_GEMM_SCHED_PERSISTENT : RK_GEMM_SCHED_WS;
    if (fr->blocks) s->blocks = kn_gemm_hopper_walks(s) ? t->compute_units : 0;
    if (fr->stages) {
        uint32_t st = 4;
        while (st > 2 && (uint64_t)st * ((s->tile[0] + s->tile[1]) * RK_TILE_WGMMA_ROW_BYTES + 16) > t->lds_bytes) st--;
        s->stages = st;
    }
}

/* The fraction of the box kernel's MACs that are the problem's: its reduction runs per tap over C padded to
 * whole 64-channel blocks, its M over boxes padded to whole images, rows and columns, its N over whole tiles. */
double kn_conv_box_useful(const rk_conv_spec *c, const kn_conv_geo *g, uint64_t N) {
    uint32_t bn = kn_conv_box_n(c);
    if (!bn) return 0;
    uint64_t pix = g->n * g->out[1] * g->out[2], cpad = (g->c + KN_WG_BK - 1) / KN_WG_BK * KN_WG_BK;
    uint64_t npad = (N + c->g.tile[1] - 1) / c->g.tile[1] * c->g.tile[1];
    double m = (double)pix / ((double)boxes(g, bn, c->box_p, c->box_q) * c->g.tile[0]);
    return m * ((double)g->c / (double)cpad) * ((double)N / (double)npad);
}

void kn_conv_box_signature(const rk_instance *in, rk_ksig *sg) {
    const rk_conv_spec *c = &in->u.conv;
    kn_sig_add(sg, "X_map", false, c->g.dtype, RK_KP_TENSORMAP, "X");
    kn_sig_add(sg, "Wt_map", false, c->g.dtype, RK_KP_TENSORMAP, "Wt");
}

/* The problem's value of scalar entry `name` (a geometry knob). */
static uint64_t scalar_of(const rk_problem *p, const char *name) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!p->sig.p[i].ptr && !strcmp(p->sig.p[i].name, name)) return (uint64_t)p->scalar[i];
    RK_ASSERT(false, "conv: a geometry scalar its signature does not have");
    return 0;
}

bool kn_conv_box_tensormap(const rk_problem *p, const rk_kparam *kp, rk_problem_tmap_nd *out) {
    if (!kn_conv_box(&p->inst)) return false;
    const rk_conv_spec *c = &p->inst.u.conv;
    bool x = !strcmp(kp->dims ? kp->dims : "", "X");
    int b = -1;
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (p->sig.p[i].ptr && !strcmp(p->sig.p[i].name, x ? "X" : "Wt")) b = (int)i;
    RK_ASSERT(b >= 0, "conv: a box map over a buffer the forward does not have");
    const uint64_t *d = p->shape.dim;   /* N, C, H, W, K, R, S */
    uint64_t eb = rk_tile_elem_bytes(c->g.dtype);
    memset(out, 0, sizeof *out);
    out->buf = (uint32_t)b;
    out->elem = c->g.dtype;
    out->rank = 4;
    out->swizzle_bytes = 128;
    uint64_t inner = x ? d[3] : d[6], mid = x ? d[2] : d[5], outer = x ? d[0] : d[4];
    out->dims[0] = d[1], out->dims[1] = inner, out->dims[2] = mid, out->dims[3] = outer;
    out->strides_bytes[0] = d[1] * eb;
    out->strides_bytes[1] = inner * d[1] * eb;
    out->strides_bytes[2] = mid * inner * d[1] * eb;
    out->box[0] = KN_WG_BK;
    for (int i = 0; i < 4; i++) out->elem_strides[i] = 1;
    if (x) {   /* box_q pixels stride_w apart along W, box_p rows stride_h apart along H, the box's images */
        uint32_t sh = (uint32_t)scalar_of(p, "stride_h"), sw = (uint32_t)scalar_of(p, "stride_w");
        out->box[1] = c->box_q * sw, out->box[2] = c->box_p * sh, out->box[3] = kn_conv_box_n(c);
        out->elem_strides[1] = sw, out->elem_strides[2] = sh;
    } else {   /* one tap of tile N filters */
        out->box[1] = 1, out->box[2] = 1, out->box[3] = c->g.tile[1];
    }
    return true;
}

void kn_conv_box_geometry(const rk_instance *in, rk_launch_geom *g, const kn_conv_geo *geo) {
    /* the boxes (N, P, Q each in whole boxes) x the N tiles; persistent: at most `blocks` */
    const rk_conv_spec *c = &in->u.conv;
    kn_geom_dim(g, 0);
    kn_geom_const(g, kn_conv_box_n(c) ? kn_conv_box_n(c) : 1);
    kn_geom_op(g, RK_GEOM_CDIV);
    for (int i = 1; i < 3; i++) {
        kn_conv_geom_out(g, geo, false, i);   /* the output extent (2-D) */
        kn_geom_const(g, i == 1 ? (c->box_p ? c->box_p : 1) : (c->box_q ? c->box_q : 1));
        kn_geom_op(g, RK_GEOM_CDIV);
        kn_geom_op(g, RK_GEOM_MUL);
    }
    kn_geom_dim(g, 4);
    kn_geom_const(g, c->g.tile[1]);
    kn_geom_op(g, RK_GEOM_CDIV);
    kn_geom_op(g, RK_GEOM_MUL);
    if (kn_gemm_hopper_walks(&c->g)) {
        kn_geom_const(g, c->g.blocks);
        kn_geom_op(g, RK_GEOM_MIN);
    }
    kn_geom_axis(g);
    kn_geom_const(g, 1);
    kn_geom_axis(g);
    kn_geom_const(g, 1);
    kn_geom_axis(g);
}

/* What the hooks need: the geometry (i32) and the box. */
typedef struct box_ud {
    const rk_conv_spec *c;
    rk_value n, p, q, s, cb, qb, pb;          /* N, P, Q, S, channel blocks of 64, boxes along Q and P */
    rk_value sh, sw, ph, pw, dh, dw;          /* stride, leading pad, dilation */
    uint32_t bn, bp, bq;
} box_ud;

/* Box number b's first image, output row and output column. */
static void box_origin(rk_kernel *k, const box_ud *u, rk_value b, rk_value *n0, rk_value *p0, rk_value *q0) {
    rk_value qi = rk_build_umod(k, b, u->qb);
    rk_value rest = rk_build_udiv(k, b, u->qb);
    rk_value pi = rk_build_umod(k, rest, u->pb);
    rk_value ni = rk_build_udiv(k, rest, u->pb);
    rk_value cq = c32(k, u->bq), cp = c32(k, u->bp), cn = c32(k, u->bn);
    *q0 = rk_build_mul(k, qi, cq);
    *p0 = rk_build_mul(k, pi, cp);
    *n0 = rk_build_mul(k, ni, cn);
}

static void box_issue(kn_hk *h, void *ud, int operand, rk_value base, rk_value st, rk_value kt, rk_value mn0) {
    const box_ud *u = ud;
    rk_kernel *k = h->k;
    /* K tile kt: tap kt / cb (r, s), channels 64 (kt % cb) .. */
    rk_value cblk = rk_build_umod(k, kt, u->cb);
    rk_value tap = rk_build_udiv(k, kt, u->cb);
    rk_value r = rk_build_udiv(k, tap, u->s);
    rk_value s = rk_build_umod(k, tap, u->s);
    rk_value c64 = c32(k, KN_WG_BK);
    rk_value c0 = rk_build_mul(k, cblk, c64);
    if (operand == 1) {   /* W: tile N filters at tap (r, s) */
        rk_build_tma_load_4d(k, h->bmap, h->sB, base, h->ring.bars, st, c0, s, r, mn0);
        return;
    }
    rk_value sh = c32(k, log2u(h->pl.bm));
    rk_value b = rk_build_lshr(k, mn0, sh);
    rk_value n0, p0, q0;
    box_origin(k, u, b, &n0, &p0, &q0);
    /* the input position of the box's first pixel for this tap: o * stride - pad + tap * dilation */
    rk_value qs = rk_build_mul(k, q0, u->sw);
    rk_value sd = rk_build_mul(k, s, u->dw);
    rk_value w0 = rk_build_sub(k, qs, u->pw);
    rk_value w = rk_build_add(k, w0, sd);
    rk_value ps = rk_build_mul(k, p0, u->sh);
    rk_value rd = rk_build_mul(k, r, u->dh);
    rk_value h0 = rk_build_sub(k, ps, u->ph);
    rk_value hh = rk_build_add(k, h0, rd);
    rk_build_tma_load_4d(k, h->amap, h->sA, base, h->ring.bars, st, c0, w, hh, n0);
}

/* Row `row` of the tile walk (box row * tile M + i): pixel i of the box, (i / (bp bq), i / bq % bp, i % bq)
 * from its origin, as Y's row (n P + p) Q + q. */
static rk_value box_row(kn_hk *h, void *ud, rk_value row, rk_value *ok) {
    const box_ud *u = ud;
    rk_kernel *k = h->k;
    rk_value lm = c32(k, log2u(h->pl.bm)), mm = c32(k, h->pl.bm - 1);
    rk_value b = rk_build_lshr(k, row, lm);
    rk_value i = rk_build_and(k, row, mm);
    rk_value n0, p0, q0;
    box_origin(k, u, b, &n0, &p0, &q0);
    rk_value lq = c32(k, log2u(u->bq)), lpq = c32(k, log2u(u->bq * u->bp));
    rk_value mq = c32(k, u->bq - 1), mp = c32(k, u->bp - 1);
    rk_value iq = rk_build_and(k, i, mq);
    rk_value ip0 = rk_build_lshr(k, i, lq);
    rk_value ip = rk_build_and(k, ip0, mp);
    rk_value in = rk_build_lshr(k, i, lpq);
    rk_value q = rk_build_add(k, q0, iq);
    rk_value p = rk_build_add(k, p0, ip);
    rk_value n = rk_build_add(k, n0, in);
    rk_value qin = rk_build_cmp(k, "lt", q, u->q);
    rk_value pin = rk_build_cmp(k, "lt", p, u->p);
    rk_value nin = rk_build_cmp(k, "lt", n, u->n);
    rk_value pq = rk_build_and(k, qin, pin);
    *ok = rk_build_and(k, pq, nin);
    rk_value np = rk_build_mul(k, n, u->p);
    rk_value npp = rk_build_add(k, np, p);
    rk_value npq = rk_build_mul(k, npp, u->q);
    return rk_build_add(k, npq, q);
}

void kn_conv_box_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    const rk_conv_spec *cs = &in->u.conv;
    uint32_t next;
    kn_conv_args a = kn_conv_args_of(in, p, &next);
    box_ud u = {.c = cs, .bn = kn_conv_box_n(cs), .bp = cs->box_p, .bq = cs->box_q};
    u.n = rk_ix_value(k, a.n), u.p = rk_ix_value(k, a.out[1]), u.q = rk_ix_value(k, a.out[2]);
    u.s = rk_ix_value(k, a.filt[2]);
    u.sh = rk_ix_value(k, a.stride[1]), u.sw = rk_ix_value(k, a.stride[2]);
    u.ph = rk_ix_value(k, a.pad[1]), u.pw = rk_ix_value(k, a.pad[2]);
    u.dh = rk_ix_value(k, a.dil[1]), u.dw = rk_ix_value(k, a.dil[2]);
    rk_ix cb = rk_ix_udiv(k, rk_ix_add(k, a.c, rk_ix_c(KN_WG_BK - 1)), rk_ix_c(KN_WG_BK));
    u.cb = rk_ix_value(k, cb);
    rk_ix qb = rk_ix_udiv(k, rk_ix_add(k, a.out[2], rk_ix_c(u.bq - 1)), rk_ix_c(u.bq));
    rk_ix pb = rk_ix_udiv(k, rk_ix_add(k, a.out[1], rk_ix_c(u.bp - 1)), rk_ix_c(u.bp));
    rk_ix nb = rk_ix_udiv(k, rk_ix_add(k, a.n, rk_ix_c(u.bn - 1)), rk_ix_c(u.bn));
    u.qb = rk_ix_value(k, qb), u.pb = rk_ix_value(k, pb);
    /* the GEMM view: M = the boxes' rows (tile M each), N = K, K = taps x channel blocks x 64 (a K tile
     * per tap and block: ktiles = R S cb) */
    rk_ix boxes_ix = rk_ix_mul(k, rk_ix_mul(k, nb, pb), qb);
    rk_value M = rk_ix_value(k, rk_ix_mul(k, boxes_ix, rk_ix_c(cs->g.tile[0])));
    rk_ix taps = rk_ix_mul(k, a.filt[1], a.filt[2]);
    rk_value Kred = rk_ix_value(k, rk_ix_mul(k, rk_ix_mul(k, taps, cb), rk_ix_c(KN_WG_BK)));
    rk_value C = rk_ix_value(k, a.c), Kout = rk_ix_value(k, a.k);
    rk_value ldb = rk_ix_value(k, rk_ix_mul(k, taps, a.c));
    rk_gemm_spec s = kn_conv_gemm_spec(in);
    rk_epi_param eps[RK_EPI_MAX_PARAMS];
    uint32_t ne = rk_epi_params(&s.fuse, s.out_dtype, eps);
    rk_value gp[9 + RK_EPI_MAX_PARAMS + 2];
    rk_value head[9] = {p[0], p[1], p[2], M, Kout, Kred, C, ldb, Kout};
    memcpy(gp, head, sizeof head);
    for (uint32_t i = 0; i < ne + 2; i++) gp[9 + i] = p[next + i];
    struct kn_hk_hooks hooks = {.box = box_issue, .row_of = box_row, .ud = &u};
    if (s.schedule != RK_GEMM_SCHED_PLAIN) {
        kn_gemm_hopper_build_ws_ex(&s, t, k, gp, &hooks);
        return;
    }
    kn_hk h;
    kn_gemm_hopper_begin_ex(&h, &s, t, k, gp, NULL, 0);
    h.hooks = hooks;
    rk_value rbase, twg;
    rk_value d = kn_gemm_hopper_run_plain(&h, &rbase, &twg);
    kn_gemm_hopper_epilogue(&h, rbase, twg, d);
}
