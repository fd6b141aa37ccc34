/* rocke — the attention decode kernel's atom path (kv_path = atom): the
 * rows of a KV head as the M side of the target's attention atom (padded
 * and masked), a bn-key piece as N of S = Q K^T and K of O += P V; the
 * warps split into row and key groups, each key group's pieces through its
 * own LDS stage, the online softmax shared with prefill, then the lanes
 * path's merge and output (docs/attention.md, "Atom path"). Layer: kernels. */
#include <math.h>

#include "attention_decode_int.h"

/* ---- the atom path: rows as the atom's M, a piece's keys as N, D as K ---- */
typedef struct ad {
    dk *g;
    const kn_decode_atom *da;
    const rk_mma_atom *a;
    rk_value lane, rg, kg, smem;
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

/* Q as A fragments [i * dk + kk], read from global once (rows past the
 * group read row 0's and are masked), scaled by scale * log2(e) later. */
static void atom_q(ad *x, rk_value Q, rk_value *qf) {
    dk *g = x->g;
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = &x->da->pl;
    rk_value zero = c32(k, 0);
    for (uint32_t i = 0; i < pl->mi; i++)
        for (uint32_t kk = 0; kk < pl->dk; kk++) {
            rk_value e[RK_TILE_ACC_MAX_SLOTS];
            for (uint32_t t = 0; t < x->a->a_len; t++) {
                rk_value col, hq, qi, ok;
                rk_value row = atom_row(x, i, RK_FRAG_A, t, &col);
                kn_dec_row_of(g, row, &hq, &qi, &ok);
                rk_value k0 = c32(k, kk * x->a->k);
                rk_value d = rk_build_add(k, k0, col);
                rk_value base = kn_dec_qo_at(g, hq, qi, zero);
                rk_value d64 = i64(k, d);
                rk_value at = rk_build_add(k, base, d64);
                e[t] = rk_load_global(k, Q, at, 1);
            }
            qf[i * pl->dk + kk] = rk_build_vpack(k, e, x->a->a_len);
        }
}

/* acc[i * nn + jn] += af[i * nk + kk] * B (op's fragments from the stage at
 * `base`), over kk < nk steps of the atom's K and jn < nn atoms along N. */
static void atom_gemm(ad *x, const rk_tile_operand *op, rk_value base, uint32_t nk, uint32_t nn, const rk_value *af,
                      rk_value *acc) {
    rk_kernel *k = x->g->k;
    const rk_mma_atom *a = x->a;
    for (uint32_t kk = 0; kk < nk; kk++) {
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
static void atom_step(ad *x, rk_value first, rk_value t1, rk_value scale_l2, const rk_value *qf, rk_value *m,
                      rk_value *l, rk_value *o) {
    dk *g = x->g;
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = &x->da->pl;
    const rk_mma_atom *a = x->a;
    rk_value kv = c32(k, x->da->kv_elems);
    rk_value kbase = rk_build_mul(k, x->kg, kv);
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
    rk_value qf[AMAXV];
    atom_q(&x, p[ix->q], qf);

    rk_value t0, t1;
    kn_dec_split_range(g, &t0, &t1);
    rk_value bnv = c32(k, da.bn), bn1 = c32(k, da.bn - 1), nkg = c32(k, da.nkg);
    rk_value ufirst = rk_build_udiv(k, t0, bnv);
    rk_value tu = rk_build_add(k, t1, bn1);
    rk_value uend = rk_build_udiv(k, tu, bnv);
    uint32_t nm = pl->mi * pl->rows.nrows, no = pl->mi * pl->on, nc = 2 * nm + no;
    rk_value init[3 * AMAXV], cur[3 * AMAXV], res[3 * AMAXV];
    rk_value ninf = rk_const_f32(k, -INFINITY), fz = rk_const_f32(k, 0.0f);
    for (uint32_t y = 0; y < nm; y++) {
        init[y] = ninf;
        init[nm + y] = fz;
    }
    for (uint32_t y = 0; y < no; y++) init[2 * nm + y] = rk_tile_acc_zero(k, a);
    rk_tile_copy_lanes lk, lv;
    rk_tile_copy_lanes_init(k, &pl->cpk, x.lane, &lk);
    rk_tile_copy_lanes_init(k, &pl->cpv, x.lane, &lv);
    rk_value u = rk_for_begin(k, ufirst, uend, nkg, "piece", nc, init, NULL, cur);
    {
        /* this key group's piece (past the split: the split's first, masked) */
        rk_value um = rk_build_add(k, u, x.kg);
        rk_value live = rk_build_cmp(k, "lt", um, uend);
        rk_value uc = rk_build_select(k, live, um, ufirst);
        rk_value first = rk_build_mul(k, uc, bnv);
        rk_value pcv = c32(k, g->piece);
        rk_value pg = rk_build_udiv(k, first, pcv);
        rk_value inner = rk_build_umod(k, first, pcv);
        rk_value base = kn_dec_piece_first(g, pg);
        rk_value in64 = i64(k, inner);
        rk_value io = rk_build_mul(k, in64, g->kstride);
        rk_value at = rk_build_add(k, base, io);
        rk_value left = rk_build_sub(k, t1, first);
        rk_value lcap = rk_build_smin(k, left, bnv);
        rk_value nvalid = rk_build_select(k, live, lcap, zero);
        rk_value eb = rk_const_i64(k, rk_tile_elem_bytes(kn_attn_decode_kv_type(s)));
        rk_value bytes = rk_build_mul(k, at, eb);
        rk_value kp = rk_build_global_ptr_add(k, g->K, bytes);
        rk_value vp = rk_build_global_ptr_add(k, g->V, bytes);
        rk_value ld = rk_build_trunc(k, g->kstride, RK_T_I32);
        rk_value Dv = c32(k, s->head_dim);
        rk_tile_gview gk = {kp, ld, nvalid, Dv}, gv = {vp, ld, nvalid, Dv};
        rk_value kvs = c32(k, da.kv_elems);
        rk_value kb = rk_build_mul(k, x.kg, kvs);
        rk_value vbo = c32(k, pl->v_base);
        rk_value vb = rk_build_add(k, kb, vbo);
        rk_value copier = rk_build_cmp(k, "eq", x.rg, zero);
        rk_if_begin(k, copier);
        if (s->kv_dtype == RK_ATTN_KV_SAME) {
            rk_tile_copy_issue(k, &pl->cpk, &lk, &gk, zero, zero, x.smem, kb);
            rk_tile_copy_issue(k, &pl->cpv, &lv, &gv, zero, zero, x.smem, vb);
        } else {
            fp8_copy(&x, &pl->cpk, &lk, &gk, kb);
            fp8_copy(&x, &pl->cpv, &lv, &gv, vb);
        }
        rk_if_end(k, NULL, 0);
        rk_build_sync(k);
        rk_value m[AMAXV], l[AMAXV], o[AMAXV];
        for (uint32_t y = 0; y < nm; y++) {
            m[y] = cur[y];
            l[y] = cur[nm + y];
        }
        for (uint32_t y = 0; y < no; y++) o[y] = cur[2 * nm + y];
        rk_value kfirst = rk_build_mul(k, um, bnv);
        atom_step(&x, kfirst, t1, scale_l2, qf, m, l, o);
        rk_build_sync(k);
        rk_value yv[3 * AMAXV];
        for (uint32_t y = 0; y < nm; y++) {
            yv[y] = m[y];
            yv[nm + y] = l[y];
        }
        for (uint32_t y = 0; y < no; y++) yv[2 * nm + y] = o[y];
        rk_for_end(k, yv, nc, res);
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

