/* rocke — unified attention on the host: the reference in double over each
 * sequence's keys gathered through its block table, the batch's lengths
 * (query starts, KV lengths) and block table, their checks before a launch,
 * the cost at the real lengths (the per-batch choices:
 * attention_unified_choice.c).
 * Layer: kernels. */
#include <math.h>
#include <stdlib.h>

#include "attention_unified_int.h"

typedef struct ushape { uint64_t B, Hq, Hkv, Sq, Skv, D, P, maxp; } ushape;

static ushape shape_of(const rk_problem *p) {
    ushape d = {rk_problem_dim(p, "B"), rk_problem_dim(p, "Hq"), rk_problem_dim(p, "Hkv"), rk_problem_dim(p, "Sq"),
                rk_problem_dim(p, "Skv"), rk_problem_dim(p, "D"), p->inst.u.attn.page_size, 0};
    d.maxp = d.P ? (d.Skv + d.P - 1) / d.P : 0;
    return d;
}

static int64_t window_of(const rk_problem *p) {
    return p->inst.u.attn.mask == RK_ATTN_MASK_WINDOW ? (int64_t)kn_scalar(p, "window_left") : -1;
}

bool kn_attn_unified_sees(int64_t i, int64_t q_len, int64_t kv_len, int64_t left, int64_t j) {
    int64_t pos = kv_len - q_len + i;
    return j >= 0 && j <= pos && (left < 0 || j >= pos - left);
}

/* Element e of key j of KV head hk of sequence b, times the head's scale
 * (sc NULL: none). */
static double cache_at(const ushape *d, const rk_host_buf *c, const rk_host_buf *sc, const rk_host_buf *bt,
                       uint64_t b, uint64_t hk, uint64_t j, uint64_t e) {
    uint64_t page = (uint64_t)kn_get(bt, b * d->maxp + j / d->P);
    double s = sc ? kn_get(sc, hk) : 1.0;
    return s * kn_get(c, ((page * d->P + j % d->P) * d->Hkv + hk) * d->D + e);
}

/* One sequence per chunk, in parallel (rk_par_for): each writes only its own rows; the sampled rows follow
 * the running row number (flat0[b] + i * Hq + h), so the result does not depend on the thread count. */
typedef struct uref {
    const rk_attention_spec *s;
    ushape d;
    const rk_host_buf *q, *kc, *vc, *bt, *qs, *lens, *sinks, *slopes, *ks, *vs;
    int io, il;
    double scale, cap, prel;
    int64_t left;
    uint64_t stride;
    const uint64_t *flat0;
    double **want, **tol;
} uref;

static void uref_seq(void *ctx, uint64_t chunk, uint64_t lo_b, uint64_t hi_b) {
    (void)chunk;
    const uref *r = ctx;
    const ushape *d = &r->d;
    const rk_attention_spec *s = r->s;
    int io = r->io, il = r->il;
    uint64_t G = d->Hq / d->Hkv, n = d->Skv ? d->Skv : 1;
    double *sc = malloc((2 * n + 3 * d->D) * sizeof *sc), *w = sc + n, *qv = w + n, *acc = qv + d->D, *mag = acc + d->D;
    RK_ASSERT(sc, "attention unified reference: out of memory");
    for (uint64_t b = lo_b; b < hi_b; b++) {
        int64_t q0 = (int64_t)kn_get(r->qs, b), qlen = (int64_t)kn_get(r->qs, b + 1) - q0;
        int64_t kvlen = (int64_t)kn_get(r->lens, b);
        uint64_t flat = r->flat0[b];
        for (int64_t i = 0; i < qlen; i++)
            for (uint64_t h = 0; h < d->Hq; h++, flat++) {
                uint64_t row = (uint64_t)(q0 + i) * d->Hq + h, qrow = row * d->D;
                if (flat % r->stride) {
                    for (uint64_t e = 0; e < d->D; e++) r->want[io][qrow + e] = 0, r->tol[io][qrow + e] = INFINITY;
                    if (il >= 0) r->want[il][row] = 0, r->tol[il][row] = INFINITY;
                    continue;
                }
                double mx = r->sinks ? kn_get(r->sinks, h) : -INFINITY, sum = 0;
                double slope = r->slopes ? kn_get(r->slopes, h) : 0;
                int64_t pos = kvlen - qlen + i;
                for (uint64_t e = 0; e < d->D; e++) qv[e] = kn_get(r->q, qrow + e), acc[e] = 0, mag[e] = 0;
                for (int64_t j = 0; j < kvlen; j++) {
                    if (!kn_attn_unified_sees(i, qlen, kvlen, r->left, j)) continue;
                    double x = 0;
                    for (uint64_t e = 0; e < d->D; e++)
                        x += qv[e] * cache_at(d, r->kc, r->ks, r->bt, b, h / G, (uint64_t)j, e);
                    x *= r->scale;
                    if (s->softcap) x = r->cap * tanh(x / r->cap);
                    x += slope * (double)(j - pos);
                    sc[j] = x;
                    mx = x > mx ? x : mx;
                }
                bool any = false;
                for (int64_t j = 0; j < kvlen; j++)
                    if (kn_attn_unified_sees(i, qlen, kvlen, r->left, j)) sum += exp(sc[j] - mx), any = true;
                if (r->sinks) sum += exp(kn_get(r->sinks, h) - mx);
                for (int64_t j = 0; j < kvlen; j++) {
                    if (!kn_attn_unified_sees(i, qlen, kvlen, r->left, j)) continue;
                    w[j] = exp(sc[j] - mx) / sum;
                    for (uint64_t e = 0; e < d->D; e++) {
                        double x = cache_at(d, r->vc, r->vs, r->bt, b, h / G, (uint64_t)j, e);
                        acc[e] += w[j] * x;
                        mag[e] += w[j] * fabs(x);
                    }
                }
                for (uint64_t e = 0; e < d->D; e++) {
                    r->want[io][qrow + e] = any ? acc[e] : 0;
                    /* f32 scores, exp2 and sums, P's rounding, the output's ulp */
                    r->tol[io][qrow + e] = 2 * r->prel * mag[e] + 1e-4 * mag[e] + kn_ulp(s->dtype, acc[e]) + 1e-6;
                }
                if (il >= 0) {
                    double lse = sum > 0 ? mx + log(sum) : -INFINITY;
                    r->want[il][row] = lse;
                    r->tol[il][row] = isinf(lse) ? 0 : 1e-4 * (1 + fabs(lse));
                }
            }
    }
    free(sc);
}

void kn_attn_unified_reference(const rk_problem *p, double **want, double **tol) {
    const rk_attention_spec *s = &p->inst.u.attn;
    uref r = {.s = s, .d = shape_of(p), .q = kn_buf(p, "Q"), .kc = kn_buf(p, "K_cache"), .vc = kn_buf(p, "V_cache"),
              .bt = kn_buf(p, "block_table"), .qs = kn_buf(p, "query_start"), .lens = kn_buf(p, "kv_lens"),
              .sinks = kn_buf(p, "sinks"), .slopes = kn_buf(p, "alibi_slopes"), .ks = kn_buf(p, "K_scale"),
              .vs = kn_buf(p, "V_scale"), .io = kn_buf_index(p, "O"), .il = kn_buf_index(p, "LSE"),
              .scale = (double)(float)kn_scalar(p, "scale"), .cap = (double)(float)kn_scalar(p, "softcap"),
              .left = window_of(p), .want = want, .tol = tol};
    /* P is rounded to 16 bits for P V (relative 2^-8 bf16, 2^-11 f16) */
    r.prel = s->dtype == RK_S_BF16 ? 0x1p-8 : 0x1p-11;
    const ushape *d = &r.d;
    double work = 0;
    for (uint64_t b = 0; b < d->B; b++)
        work += (kn_get(r.qs, b + 1) - kn_get(r.qs, b)) * kn_get(r.lens, b) * (double)(d->Hq * d->D);
    /* past 2^30 multiply-adds every stride-th row is checked (odd stride); the others only must be finite */
    r.stride = work > 0x1p30 ? (uint64_t)ceil(work / 0x1p30) | 1 : 1;
    uint64_t *flat0 = malloc((d->B ? d->B : 1) * sizeof *flat0), flat = 0;
    RK_ASSERT(flat0, "attention unified reference: out of memory");
    for (uint64_t b = 0; b < d->B; b++) {
        flat0[b] = flat;
        flat += (uint64_t)(kn_get(r.qs, b + 1) - kn_get(r.qs, b)) * d->Hq;
    }
    r.flat0 = flat0;
    rk_par_for(d->B, 1, uref_seq, &r);
    free(flat0);
}

rk_status kn_attn_unified_set_lengths(rk_problem *p, const uint64_t *lq, const uint64_t *lk, uint32_t n) {
    ushape d = shape_of(p);
    if (n != d.B)
        return rk_fail(RK_ERR_INVALID, "attention unified: %u sequences for B = %llu (one Q:K pair each)", n,
                       (unsigned long long)d.B);
    uint64_t total = 0;
    for (uint32_t b = 0; b < n; b++) {
        if (lq[b] > lk[b] || lk[b] > d.Skv)
            return rk_fail(RK_ERR_INVALID, "attention unified: sequence %u has %llu new queries over %llu keys; the "
                           "keys include the new tokens (q_len <= kv_len) and are at most Skv = %llu", b,
                           (unsigned long long)lq[b], (unsigned long long)lk[b], (unsigned long long)d.Skv);
        total += lq[b];
    }
    if (total != d.Sq)
        return rk_fail(RK_ERR_INVALID, "attention unified: the sequences hold %llu query tokens, but the shape's Sq "
                       "(total_q) is %llu", (unsigned long long)total, (unsigned long long)d.Sq);
    int iq = kn_buf_index(p, "query_start"), il = kn_buf_index(p, "kv_lens");
    uint64_t at = 0;
    kn_set(&p->buf[iq], 0, 0);
    for (uint32_t b = 0; b < n; b++) {
        at += lq[b];
        kn_set(&p->buf[iq], b + 1, (double)at);
        kn_set(&p->buf[il], b, (double)lk[b]);
    }
    return RK_OK;
}

/* The shape's Sq tokens spread evenly over the B sequences, the first at
 * Skv keys, the others in [q_len, Skv]; the block table a random
 * permutation of the cache's pages; sinks in [-2, 2); ALiBi's geometric
 * slopes 2^(-8 (h + 1) / Hq). */
void kn_attn_unified_fix_inputs(rk_problem *p) {
    ushape d = shape_of(p);
    uint64_t rng = p->seed ^ 0x0a11f1edull;
    uint64_t *lq = rk_calloc(2 * d.B + 1, sizeof *lq), *lk = lq + d.B;
    RK_ASSERT(lq, "attention unified: out of memory for the sequence lengths");
    for (uint64_t b = 0; b < d.B; b++) {
        lq[b] = d.Sq / d.B + (b < d.Sq % d.B);
        uint64_t span = d.Skv > lq[b] ? d.Skv - lq[b] + 1 : 1;
        lk[b] = b == 0 ? d.Skv : lq[b] + kn_splitmix(&rng) % span;
        if (lk[b] > d.Skv) lk[b] = d.Skv;
    }
    rk_status st = kn_attn_unified_set_lengths(p, lq, lk, (uint32_t)d.B);
    rk_free(lq, (2 * d.B + 1) * sizeof *lq);
    RK_ASSERT(st == RK_OK, "attention unified: default lengths within a checked shape");
    int ib = kn_buf_index(p, "block_table");
    uint64_t n = d.B * d.maxp;
    for (uint64_t x = 0; x < n; x++) kn_set(&p->buf[ib], x, (double)x);
    for (uint64_t x = n; x > 1; x--) {   /* Fisher-Yates */
        uint64_t y = kn_splitmix(&rng) % x;
        double a = kn_get(&p->buf[ib], x - 1), c = kn_get(&p->buf[ib], y);
        kn_set(&p->buf[ib], x - 1, c);
        kn_set(&p->buf[ib], y, a);
    }
    /* e4m3 caches: per-head scales in [1/4, 2) */
    int isc[2] = {kn_buf_index(p, "K_scale"), kn_buf_index(p, "V_scale")};
    for (int x = 0; x < 2; x++)
        for (uint64_t h = 0; isc[x] >= 0 && h < d.Hkv; h++)
            kn_set(&p->buf[isc[x]], h, 0.25 + 1.75 * (double)(kn_splitmix(&rng) >> 11) * 0x1.0p-53);
    int is = kn_buf_index(p, "sinks"), ia = kn_buf_index(p, "alibi_slopes");
    for (uint64_t h = 0; is >= 0 && h < d.Hq; h++)
        kn_set(&p->buf[is], h, -2.0 + 4.0 * (double)(kn_splitmix(&rng) >> 11) * 0x1.0p-53);
    for (uint64_t h = 0; ia >= 0 && h < d.Hq; h++) kn_set(&p->buf[ia], h, exp2(-8.0 * (double)(h + 1) / (double)d.Hq));
}

rk_status kn_attn_unified_check_inputs(const rk_problem *p) {
    ushape d = shape_of(p);
    const rk_host_buf *bt = kn_buf(p, "block_table"), *qs = kn_buf(p, "query_start"), *lens = kn_buf(p, "kv_lens");
    uint64_t pages = d.B * d.maxp;
    if (kn_get(qs, 0) != 0)
        return rk_fail(RK_ERR_INVALID, "attention unified: query_start[0] = %.0f; the offsets start at 0",
                       kn_get(qs, 0));
    for (uint64_t b = 0; b < d.B; b++) {
        double q0 = kn_get(qs, b), q1 = kn_get(qs, b + 1), len = kn_get(lens, b);
        if (q1 < q0)
            return rk_fail(RK_ERR_INVALID, "attention unified: sequence %llu: query_start[%llu] = %.0f is below "
                           "query_start[%llu] = %.0f (the offsets must not decrease)", (unsigned long long)b,
                           (unsigned long long)b + 1, q1, (unsigned long long)b, q0);
        if (len < q1 - q0)
            return rk_fail(RK_ERR_INVALID, "attention unified: sequence %llu has %.0f new queries but kv_len = %.0f; "
                           "the KV length counts the new tokens too (q_len <= kv_len)", (unsigned long long)b,
                           q1 - q0, len);
        if (len > (double)(d.maxp * d.P))
            return rk_fail(RK_ERR_INVALID, "attention unified: sequence %llu: kv_len = %.0f needs %llu pages, but its "
                           "block_table row holds %llu (ceil(Skv / page_size))", (unsigned long long)b, len,
                           (unsigned long long)(((uint64_t)len + d.P - 1) / d.P), (unsigned long long)d.maxp);
        rk_status st = kn_attn_check_pages("attention unified", bt, b, d.maxp, ((uint64_t)len + d.P - 1) / d.P, pages);
        if (st) return st;
    }
    if (kn_get(qs, d.B) != (double)d.Sq)
        return rk_fail(RK_ERR_INVALID, "attention unified: query_start[%llu] = %.0f, but total_q (Sq) = %llu: the last "
                       "offset ends the packed queries", (unsigned long long)d.B, kn_get(qs, d.B),
                       (unsigned long long)d.Sq);
    double ns = kn_scalar(p, "num_splits");
    if (p->inst.u.attn.kv_splits > 1 && (ns < 1 || ns > p->inst.u.attn.kv_splits))
        return rk_fail(RK_ERR_INVALID, "attention unified: num_splits = %.0f, legal 1..%u (the instance's kv_splits)",
                       ns, p->inst.u.attn.kv_splits);
    return RK_OK;
}

/* Flops: 4 D per visible (query, key) pair of every query head; bytes: each
 * sequence's K and V once per KV head, Q, O and the block-table ids read. */
void kn_attn_unified_problem_cost(const rk_problem *p, double *bytes, double *flops) {
    ushape d = shape_of(p);
    const rk_host_buf *qs = kn_buf(p, "query_start"), *lens = kn_buf(p, "kv_lens");
    int64_t left = window_of(p);
    double pairs = 0, keys = 0, eb = rk_tile_elem_bytes(p->inst.u.attn.dtype),
           kvb = rk_tile_elem_bytes(kn_attn_decode_kv_type(&p->inst.u.attn));
    for (uint64_t b = 0; b < d.B; b++) {
        int64_t qlen = (int64_t)(kn_get(qs, b + 1) - kn_get(qs, b)), kvlen = (int64_t)kn_get(lens, b);
        keys += (double)kvlen;
        for (int64_t i = 0; i < qlen; i++) {
            int64_t pos = kvlen - qlen + i, lo = left >= 0 && pos - left > 0 ? pos - left : 0;
            pairs += (double)(pos + 1 - lo);
        }
    }
    *flops = 4.0 * (double)(d.Hq * d.D) * pairs;
    *bytes = 2 * keys * (double)(d.Hkv * d.D) * kvb + 2 * (double)(d.Sq * d.Hq * d.D) * eb +
             ceil(keys / (double)d.P) * 4;
}
