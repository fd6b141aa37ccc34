/* rocke — the attention decode kernel's atom path (kv_path = atom): the
 * rows of a KV head as the M side of the target's attention atom (padded
 * and masked), a bn-key piece as N of S = Q K^T and K of O += P V; the
 * warps split into row and key groups, each key group's pieces through its
 * own LDS stage (stages >= 2: a cp.async ring of them), Q in vector loads
 * through LDS, the online softmax shared with prefill, then the lanes
 * path's merge and output (docs/attention.md, "Atom path"). Layer: kernels. */
#include <math.h>

#include "attention_decode_int.h"

/* ---- the atom path: rows as the atom's M, a piece's keys as N, D as K ---- */
typedef struct ad {
    dk *g;
    const kn_decode_atom *da;
    const rk_mma_atom *a;
    rk_value lane, rg, kg, smem;
    rk_value qbase;                                                            /* i32: this row group's Q tile */
    rk_value rok[4][RK_TILE_ACC_MAX_SLOTS], rdiag[4][RK_TILE_ACC_MAX_SLOTS];   /* per (atom row, C slot) */
    rk_value ccol[RK_TILE_ACC_MAX_SLOTS];                                      /* C slot's column */
} ad;

#define AMAXV 128   /* fragments / accumulators of one kind per lane */

/* Block row (i32) of atom row i, fragment f slot t for this lane. */
static rk_value atom_row(ad *x, uint32_t i, rk_frag f, uint32_t t, rk_value *col) {
    rk_kernel *k = x->g->k;
    rk_tile_frag_coord fc = rk_tile_atom_coord(k, x->a->id, f, x->lane, t);
    rk_value wt = c32(k, x->da->wtm);
    rk_value r0 = rk_build_mul(k, x->rg, wt);
    rk_value io = c32(k, i * x->a->m);
    rk_value r1 = rk_build_add(k, r0, io);
    if (col) *col = fc.col;
    return rk_build_add(k, r1, fc.row);
}

/* Q into LDS: each row group's wtm x D tile at q_base + rg * q_elems, in
 * 16-byte vector loads by the group's first warp (the rows of one KV head
 * are not one stride apart when Sq > 1: each chunk finds its row's query
 * head and token; rows past the group read row 0's and are masked). */
static void stage_q(ad *x, rk_value Q) {
    dk *g = x->g;
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = &x->da->pl;
    const rk_tile_copy *c = &pl->cpq;
    rk_tile_copy_lanes lq;
    rk_tile_copy_lanes_init(k, c, x->lane, &lq);
    rk_tile_copy_regs v;
    rk_value zero = c32(k, 0), wt = c32(k, x->da->wtm);
    rk_value r0 = rk_build_mul(k, x->rg, wt);
    rk_value first = rk_build_cmp(k, "eq", x->kg, zero);
    rk_if_begin(k, first);
    for (uint32_t p = 0; p < c->passes; p++) {
        rk_value row = rk_build_add(k, r0, lq.row[p]);
        rk_value hq, qi, ok;
        kn_dec_row_of(g, row, &hq, &qi, &ok);
        rk_value base = kn_dec_qo_at(g, hq, qi, zero);
        rk_value c64 = i64(k, lq.col[p]);
        rk_value at = rk_build_add(k, base, c64);
        v.v[p] = rk_load_global(k, Q, at, c->vec);
    }
    rk_tile_copy_put(k, c, &lq, &v, x->smem, x->qbase);
    rk_if_end(k, NULL, 0);
}

/* Q's A fragments qf[i * dk + kk] of this warp's rows from its LDS tile:
 * every K step (kk < 0) or K step kk alone. */
static void q_frags(ad *x, int kk_only, rk_value *qf) {
    rk_kernel *k = x->g->k;
    const kn_attn_plan *pl = &x->da->pl;
    for (uint32_t i = 0; i < pl->mi; i++)
        for (uint32_t kk = 0; kk < pl->dk; kk++) {
            if (kk_only >= 0 && kk != (uint32_t)kk_only) continue;
            rk_value ro = c32(k, i * x->a->m), k0 = c32(k, kk * x->a->k);
            qf[i * pl->dk + kk] = rk_tile_frag_load(k, x->a, &pl->opq, x->smem, x->qbase, x->lane, ro, k0);
        }
}

/* acc[i * nn + jn] += af[i * nk + kk] * B (op's fragments from the stage at
 * `base`), over kk < nk steps of the atom's K and jn < nn atoms along N;
 * af NULL: Q's A fragments read from its LDS tile as each K step needs them. */
static void atom_gemm(ad *x, const rk_tile_operand *op, rk_value base, uint32_t nk, uint32_t nn, const rk_value *af,
                      rk_value *acc) {
    rk_kernel *k = x->g->k;
    const rk_mma_atom *a = x->a;
    rk_value qs[AMAXV];
    bool from_lds = !af;
    for (uint32_t kk = 0; kk < nk; kk++) {
        if (from_lds) {
            q_frags(x, (int)kk, qs);
            af = qs;
        }
        rk_value k0 = c32(k, kk * a->k);
        for (uint32_t jn = 0; jn < nn; jn++) {
            rk_value n0 = c32(k, jn * a->n);
            rk_value bf = rk_tile_frag_load(k, a, op, x->smem, base, x->lane, n0, k0);
            for (uint32_t i = 0; i < x->da->pl.mi; i++)
                acc[i * nn + jn] = rk_build_mma(k, a->op_id, af[i * nk + kk], bf, acc[i * nn + jn]);
        }
    }
}

/* An fp8 piece into a dtype stage along the copy's chunks: each an fp8
 * vector (keys past the view read the piece's first key and become zeros),
 * converted exactly (e4m3 fits f16 and bf16) and stored; the scales stay
 * folded into Q and 1 / l. */
static void fp8_copy(ad *x, const rk_tile_copy *c, const rk_tile_copy_lanes *l, const rk_tile_gview *gv,
                     rk_value stage) {
    rk_kernel *k = x->g->k;
    rk_value zero = c32(k, 0);
    rk_value ld64 = i64(k, gv->ld);
    rk_value fz = rk_tile_f32s(k, 0.0f, c->vec);
    for (uint32_t p = 0; p < c->passes; p++) {
        bool partial = rk_tile_copy_pass_begin(k, c, p);
        rk_value in = rk_build_cmp(k, "lt", l->row[p], gv->rows);
        rk_value row = rk_build_select(k, in, l->row[p], zero);
        rk_value r64 = i64(k, row);
        rk_value ro = rk_build_mul(k, r64, ld64);
        rk_value c64 = i64(k, l->col[p]);
        rk_value at = rk_build_add(k, ro, c64);
        rk_value v = rk_load_global(k, gv->ptr, at, c->vec);
        rk_value f = kn_dec_fp8_to_f32(k, v, c->vec);
        rk_value fs = rk_build_select(k, in, f, fz);
        rk_value h = rk_tile_from_f32(k, fs, x->g->s->dtype);
        rk_value dst = rk_build_add(k, stage, l->dst[p]);
        rk_store_smem(k, x->smem, &dst, h);
        if (partial) rk_if_end(k, NULL, 0);
    }
}

/* One piece of bn keys from key `first` (i32) of the key group's stage:
 * S = Q K^T, the mask, online softmax, P to A fragments, O += P V. */
static void atom_step(ad *x, rk_value kbase, rk_value first, rk_value t1, rk_value scale_l2, const rk_value *qf,
                      rk_value *m, rk_value *l, rk_value *o) {
    dk *g = x->g;
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = &x->da->pl;
    const rk_mma_atom *a = x->a;
    rk_value vb = c32(k, pl->v_base);
    rk_value vbase = rk_build_add(k, kbase, vb);
    uint32_t ns = pl->mi * pl->sn;
    rk_value s[AMAXV];
    for (uint32_t y = 0; y < ns; y++) s[y] = rk_tile_acc_zero(k, a);
    atom_gemm(x, &pl->opk, kbase, pl->dk, pl->sn, qf, s);
    rk_value ninf = rk_const_f32(k, -INFINITY);
    for (uint32_t i = 0; i < pl->mi; i++)
        for (uint32_t jn = 0; jn < pl->sn; jn++) {
            rk_value v = s[i * pl->sn + jn];
            rk_value sc = rk_tile_bcast(k, scale_l2, v);
            v = rk_tile_mul(k, v, sc);
            rk_value e[RK_TILE_ACC_MAX_SLOTS];
            for (uint32_t t = 0; t < a->c_len; t++) {
                rk_value co = c32(k, jn * a->n);
                rk_value c0 = rk_build_add(k, first, co);
                rk_value key = rk_build_add(k, c0, x->ccol[t]);
                rk_value in = rk_build_cmp(k, "lt", key, t1);
                rk_value vis = kn_dec_visible(g, x->rok[i][t], x->rdiag[i][t], key, in);
                rk_value el = rk_build_vextract(k, v, t);
                e[t] = rk_build_select(k, vis, el, ninf);
            }
            s[i * pl->sn + jn] = rk_build_vpack(k, e, a->c_len);
        }
    rk_value pv[AMAXV];
    kn_attn_softmax_step(k, pl, s, m, l, o, pv);
    rk_value pf[AMAXV];
    rk_tile_acc_scratch sc = {0};
    if (!pl->p_in_regs) {
        rk_value wave = c32(k, a->lanes);
        rk_value tid = rk_build_thread_id(k, 0);
        rk_value warp = rk_build_udiv(k, tid, wave);
        rk_value pw = c32(k, pl->p_warp), pb = c32(k, x->da->p_base);
        rk_value wo = rk_build_mul(k, warp, pw);
        sc = (rk_tile_acc_scratch){x->smem, rk_build_add(k, pb, wo), pl->lp};
    }
    rk_tile_acc_to_a(k, a, a, pl->wtm, pl->bn, pv, g->s->dtype, x->lane, pl->p_in_regs ? NULL : &sc, pf);
    atom_gemm(x, &pl->opv, vbase, pl->pk, pl->on, pf, o);
}

/* The split's pieces as the key groups walk them: step n gives key group
 * kg piece ufirst + n * nkg + kg, live while it is before uend. */
typedef struct pieces {
    rk_value ufirst, uend, t1;
    rk_tile_copy_lanes lk, lv;
} pieces;

static void piece_of(ad *x, const pieces *pc, rk_value n, rk_value *um, rk_value *live) {
    rk_kernel *k = x->g->k;
    rk_value nkg = c32(k, x->da->nkg);
    rk_value no = rk_build_mul(k, n, nkg);
    rk_value u = rk_build_add(k, pc->ufirst, no);
    *um = rk_build_add(k, u, x->kg);
    *live = rk_build_cmp(k, "lt", *um, pc->uend);
}

/* Element (i32) of this key group's stage in ring buffer buf: [buf][kg]. */
static rk_value stage_at(ad *x, rk_value buf) {
    rk_kernel *k = x->g->k;
    rk_value nkg = c32(k, x->da->nkg), kv = c32(k, x->da->kv_elems);
    rk_value bk = rk_build_mul(k, buf, nkg);
    rk_value slot = rk_build_add(k, bk, x->kg);
    return rk_build_mul(k, slot, kv);
}

/* Step n's piece of K and V into ring buffer buf, by the key group's first warp
 * (a piece past the split: zeros, its address that of page entry 0, which
 * every block-table row has); async copies are committed (all threads). */
static void copy_piece(ad *x, const pieces *pc, rk_value n, rk_value buf) {
    dk *g = x->g;
    rk_kernel *k = g->k;
    const rk_attention_spec *s = g->s;
    const kn_attn_plan *pl = &x->da->pl;
    rk_value um, live;
    piece_of(x, pc, n, &um, &live);
    rk_value zero = c32(k, 0), bnv = c32(k, x->da->bn), pcv = c32(k, g->piece);
    rk_value uc = rk_build_select(k, live, um, zero);
    rk_value first = rk_build_mul(k, uc, bnv);
    rk_value pg = rk_build_udiv(k, first, pcv);
    rk_value inner = rk_build_umod(k, first, pcv);
    rk_value base = kn_dec_piece_first(g, pg);
    rk_value in64 = i64(k, inner);
    rk_value io = rk_build_mul(k, in64, g->kstride);
    rk_value at = rk_build_add(k, base, io);
    rk_value left = rk_build_sub(k, pc->t1, first);
    rk_value lcap = rk_build_smin(k, left, bnv);
    rk_value nvalid = rk_build_select(k, live, lcap, zero);
    rk_value eb = rk_const_i64(k, rk_tile_elem_bytes(kn_attn_decode_kv_type(s)));
    rk_value bytes = rk_build_mul(k, at, eb);
    rk_value kp = rk_build_global_ptr_add(k, g->K, bytes);
    rk_value vp = rk_build_global_ptr_add(k, g->V, bytes);
    rk_value ld = rk_build_trunc(k, g->kstride, RK_T_I32);
    rk_value Dv = c32(k, s->head_dim);
    rk_tile_gview gk = {kp, ld, nvalid, Dv}, gv = {vp, ld, nvalid, Dv};
    rk_value kb = stage_at(x, buf);
    rk_value vbo = c32(k, pl->v_base);
    rk_value vb = rk_build_add(k, kb, vbo);
    rk_value copier = rk_build_cmp(k, "eq", x->rg, zero);
    rk_if_begin(k, copier);
    if (s->kv_dtype == RK_ATTN_KV_SAME) {
        rk_tile_copy_issue(k, &pl->cpk, &pc->lk, &gk, zero, zero, x->smem, kb);
        rk_tile_copy_issue(k, &pl->cpv, &pc->lv, &gv, zero, zero, x->smem, vb);
    } else {
        fp8_copy(x, &pl->cpk, &pc->lk, &gk, kb);
        fp8_copy(x, &pl->cpv, &pc->lv, &gv, vb);
    }
    rk_if_end(k, NULL, 0);
    if (x->da->stages > 1) rk_build_async_commit_group(k);
}

void kn_dec_atom_build(dk *g, const rk_target *t, const rk_value *p, const kn_attn_dsig *ix, rk_value scale_l2) {
    rk_kernel *k = g->k;
    const rk_attention_spec *s = g->s;
    kn_decode_atom da;
    rk_status st = kn_attn_decode_atom_plan(s, t, &da);
    RK_ASSERT(st == RK_OK, "attention decode: the atom plan of a validated instance");
    const kn_attn_plan *pl = &da.pl;
    const rk_mma_atom *a = pl->atom;
    ad x = {.g = g, .da = &da, .a = a};
    rk_value wave = c32(k, a->lanes), nrg = c32(k, da.nrg), zero = c32(k, 0), one = c32(k, 1);
    x.lane = rk_build_umod(k, g->tid, wave);
    rk_value warp = rk_build_udiv(k, g->tid, wave);
    x.rg = rk_build_umod(k, warp, nrg);
    x.kg = rk_build_udiv(k, warp, nrg);
    rk_smem_alloc_opts al = {.align = RK_SOME(128)};
    uint32_t lds = da.lds_elems;
    x.smem = rk_build_smem_alloc_ex(k, (rk_type){s->dtype}, &lds, 1, &al);
    /* per (atom row, C slot): the row's mask inputs; per C slot: its column */
    rk_value off = rk_build_sub(k, g->len, g->Sq);
    for (uint32_t i = 0; i < pl->mi; i++)
        for (uint32_t c = 0; c < a->c_len; c++) {
            rk_value col, hq, qi;
            rk_value row = atom_row(&x, i, RK_FRAG_C, c, &col);
            kn_dec_row_of(g, row, &hq, &qi, &x.rok[i][c]);
            x.rdiag[i][c] = rk_build_add(k, off, qi);
            x.ccol[c] = col;
        }
    /* Q: vector loads into LDS, then (held) its fragments into registers */
    rk_value qe = c32(k, pl->q_elems), qb0 = c32(k, da.q_base);
    rk_value qo = rk_build_mul(k, x.rg, qe);
    x.qbase = rk_build_add(k, qb0, qo);
    stage_q(&x, p[ix->q]);
    rk_build_sync(k);
    rk_value qf[AMAXV];
    if (pl->q_in_regs) {
        q_frags(&x, -1, qf);
        rk_build_sync(k);   /* the K/V stages overwrite Q */
    }

    rk_value t0, t1;
    kn_dec_split_range(g, &t0, &t1);
    rk_value bnv = c32(k, da.bn), bn1 = c32(k, da.bn - 1);
    pieces pc = {.ufirst = rk_build_udiv(k, t0, bnv), .t1 = t1};
    rk_value tu = rk_build_add(k, t1, bn1);
    pc.uend = rk_build_udiv(k, tu, bnv);
    rk_value nkg = c32(k, da.nkg), nkg1 = c32(k, da.nkg - 1);
    rk_value span = rk_build_sub(k, pc.uend, pc.ufirst);
    rk_value su = rk_build_add(k, span, nkg1);
    rk_value nit = rk_build_udiv(k, su, nkg);
    uint32_t nm = pl->mi * pl->rows.nrows, no = pl->mi * pl->on, nc = 2 * nm + no;
    rk_value init[3 * AMAXV + 1], cur[3 * AMAXV + 1], res[3 * AMAXV + 1];
    rk_value ninf = rk_const_f32(k, -INFINITY), fz = rk_const_f32(k, 0.0f);
    for (uint32_t y = 0; y < nm; y++) {
        init[y] = ninf;
        init[nm + y] = fz;
    }
    for (uint32_t y = 0; y < no; y++) init[2 * nm + y] = rk_tile_acc_zero(k, a);
    rk_tile_copy_lanes_init(k, &pl->cpk, x.lane, &pc.lk);
    rk_tile_copy_lanes_init(k, &pl->cpv, x.lane, &pc.lv);
    uint32_t S = da.stages;
    /* ring: pieces 0 .. S-2 ahead; step n waits for its piece, synchronizes
     * (every warp is past step n - 1), then issues piece n + S - 1 into the
     * stage step n - 1 read */
    for (uint32_t n = 0; S > 1 && n + 1 < S; n++) {
        rk_value nv = c32(k, n);
        copy_piece(&x, &pc, nv, nv);
    }
    /* the buffer step n reads (n % S) is carried, so no division by S */
    init[nc] = zero;
    rk_value ahead = c32(k, S - 1);
    rk_value n = rk_for_begin(k, zero, nit, one, "piece", nc + 1, init, NULL, cur);
    {
        rk_value buf = cur[nc];
        if (S > 1) {
            rk_build_async_wait_group(k, S - 2);
            rk_build_sync(k);
            rk_value nx = rk_build_add(k, n, ahead);
            rk_value first = rk_build_cmp(k, "eq", buf, zero);
            rk_value prev = rk_build_sub(k, buf, one);
            rk_value wbuf = rk_build_select(k, first, ahead, prev);   /* (n + S - 1) % S */
            copy_piece(&x, &pc, nx, wbuf);
        } else {
            copy_piece(&x, &pc, n, zero);
            rk_build_sync(k);
        }
        rk_value m[AMAXV], l[AMAXV], o[AMAXV];
        for (uint32_t y = 0; y < nm; y++) {
            m[y] = cur[y];
            l[y] = cur[nm + y];
        }
        for (uint32_t y = 0; y < no; y++) o[y] = cur[2 * nm + y];
        rk_value um, live;
        piece_of(&x, &pc, n, &um, &live);
        rk_value kfirst = rk_build_mul(k, um, bnv);
        rk_value kb = stage_at(&x, buf);
        /* Q too large to hold beside O: its fragments re-read at each K step */
        atom_step(&x, kb, kfirst, t1, scale_l2, pl->q_in_regs ? qf : NULL, m, l, o);
        if (S == 1) rk_build_sync(k);
        rk_value yv[3 * AMAXV + 1];
        for (uint32_t y = 0; y < nm; y++) {
            yv[y] = m[y];
            yv[nm + y] = l[y];
        }
        for (uint32_t y = 0; y < no; y++) yv[2 * nm + y] = o[y];
        rk_value last = rk_build_cmp(k, "eq", buf, ahead);
        rk_value nb = rk_build_add(k, buf, one);
        yv[nc] = rk_build_select(k, last, zero, nb);
        rk_for_end(k, yv, nc + 1, res);
    }
    if (S > 1) {
        /* the trailing (zero-filled) copies land before the LDS is reused */
        rk_build_async_wait_group(k, 0);
        rk_build_sync(k);
    }

    /* each key group's state into the merge area: [kg][row][D], then [kg][row][2] */
    uint32_t D = s->head_dim, R = g->R, melems = da.merge_bytes / 4;
    rk_value ms = rk_build_smem_alloc(k, RK_T_F32, &melems, 1);
    rk_value Rv = c32(k, R), Dv = c32(k, D), two = c32(k, 2);
    rk_value krow = rk_build_mul(k, x.kg, Rv);
    uint32_t bits = 0;
    for (uint32_t b = 0; b < pl->rows.nmasks; b++) bits |= pl->rows.xor_mask[b];
    rk_value bv = c32(k, bits);
    rk_value lb = rk_build_and(k, x.lane, bv);
    rk_value leader = rk_build_cmp(k, "eq", lb, zero);
    for (uint32_t i = 0; i < pl->mi; i++) {
        for (uint32_t dn = 0; dn < pl->on; dn++)
            for (uint32_t c = 0; c < a->c_len; c++) {
                rk_value col;
                rk_value row = atom_row(&x, i, RK_FRAG_C, c, &col);
                rk_value in = rk_build_cmp(k, "lt", row, Rv);
                rk_if_begin(k, in);
                rk_value sr = rk_build_add(k, krow, row);
                rk_value a0 = rk_build_mul(k, sr, Dv);
                rk_value d0 = c32(k, dn * a->n);
                rk_value dc = rk_build_add(k, d0, col);
                rk_value ai = rk_build_add(k, a0, dc);
                rk_value el = rk_build_vextract(k, res[2 * nm + i * pl->on + dn], c);
                rk_store_smem(k, ms, &ai, el);
                rk_if_end(k, NULL, 0);
            }
        for (uint32_t r = 0; r < pl->rows.nrows; r++) {
            uint32_t y = i * pl->rows.nrows + r;
            rk_value lsum = rk_tile_acc_row_reduce(k, &pl->rows, RK_RED_SUM, res[nm + y]);
            rk_value row = atom_row(&x, i, RK_FRAG_C, pl->rows.row_slot0[r], NULL);
            rk_value in = rk_build_cmp(k, "lt", row, Rv);
            rk_value w = rk_build_and(k, in, leader);
            rk_if_begin(k, w);
            rk_value sb = c32(k, da.nkg * R * D);
            rk_value sr = rk_build_add(k, krow, row);
            rk_value s2 = rk_build_mul(k, sr, two);
            rk_value mi = rk_build_add(k, sb, s2);
            rk_value li = rk_build_add(k, mi, one);
            rk_store_smem(k, ms, &mi, res[y]);
            rk_store_smem(k, ms, &li, lsum);
            rk_if_end(k, NULL, 0);
        }
    }
    rk_build_sync(k);
    kn_dec_finish(g, p, ix, ms, da.nkg);
}

