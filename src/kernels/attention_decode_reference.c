/* rocke — attention decode on the host: the reference in double over the
 * gathered cache (each sequence's keys looked up through its block table),
 * the problem's context lengths and block table (a random permutation of
 * the cache's pages), their checks before a launch and --lengths.
 * Layer: kernels. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attention_int.h"

typedef struct dshape { uint64_t B, Hq, Hkv, Sq, Skv, D, P, maxp; } dshape;

static dshape shape_of(const rk_problem *p) {
    dshape d = {rk_problem_dim(p, "B"), rk_problem_dim(p, "Hq"), rk_problem_dim(p, "Hkv"), rk_problem_dim(p, "Sq"),
                rk_problem_dim(p, "Skv"), rk_problem_dim(p, "D"), p->inst.u.attn.page_size, 0};
    d.maxp = d.P ? (d.Skv + d.P - 1) / d.P : 0;
    return d;
}

typedef struct decode_ref {
    const rk_problem *p;
    const rk_attention_spec *s;
    dshape d;
    const rk_host_buf *q, *kc, *vc, *bt, *lens, *ks, *vs;
    double *want, *tol, scale, prel;
    int64_t wl, wr;
} decode_ref;

/* Index of element 0 of key j of head hk of sequence b in a cache (through the block table when paged). */
static uint64_t cache_row(const dshape *d, const rk_host_buf *bt, uint64_t b, uint64_t hk, uint64_t j) {
    if (!d->P) return ((b * d->Hkv + hk) * d->Skv + j) * d->D;
    uint64_t page = (uint64_t)kn_get(bt, b * d->maxp + j / d->P);
    return ((page * d->P + j % d->P) * d->Hkv + hk) * d->D;
}

static void decode_ref_pair(void *ctx, uint64_t chunk, uint64_t lo_pair, uint64_t hi_pair) {
    (void)chunk;
    const decode_ref *r = ctx;
    const dshape *d = &r->d;
    /* a paged sequence may hold up to its pages' keys (maxp * P >= CTX, check_inputs' bound) */
    uint64_t G = d->Hq / d->Hkv, n = d->P ? d->maxp * d->P : d->Skv;
    n = n ? n : 1;
    double *sc = malloc((2 * n + 3 * d->D) * sizeof *sc), *w = sc + n, *qv = w + n, *acc = qv + d->D,
           *mag = acc + d->D;
    RK_ASSERT(sc, "attention decode reference: out of memory");
    for (uint64_t pair = lo_pair; pair < hi_pair; pair++) {
        uint64_t b = pair / d->Hq, h = pair % d->Hq, hk = h / G;
        double ksc = r->ks ? kn_get(r->ks, hk) : 1.0, vsc = r->vs ? kn_get(r->vs, hk) : 1.0;
        int64_t len = (int64_t)kn_get(r->lens, b);
        for (uint64_t i = 0; i < d->Sq; i++) {
            int64_t lo, hi;
            kn_attn_visible(r->s->mask, (int64_t)i, (int64_t)d->Sq, len, r->wl, r->wr, &lo, &hi);
            double mx = -INFINITY, sum = 0;
            uint64_t qrow = ((b * d->Sq + i) * d->Hq + h) * d->D;
            for (uint64_t e = 0; e < d->D; e++) qv[e] = kn_get(r->q, qrow + e), acc[e] = 0, mag[e] = 0;
            for (int64_t j = lo; j < hi; j++) {
                uint64_t at = cache_row(d, r->bt, b, hk, (uint64_t)j);
                double x = 0;
                for (uint64_t e = 0; e < d->D; e++) x += qv[e] * (ksc * kn_get(r->kc, at + e));
                sc[j] = x * r->scale;
                mx = sc[j] > mx ? sc[j] : mx;
            }
            for (int64_t j = lo; j < hi; j++) sum += exp(sc[j] - mx);
            for (int64_t j = lo; j < hi; j++) {
                w[j] = exp(sc[j] - mx) / sum;
                uint64_t at = cache_row(d, r->bt, b, hk, (uint64_t)j);
                for (uint64_t e = 0; e < d->D; e++) {
                    double x = vsc * kn_get(r->vc, at + e);
                    acc[e] += w[j] * x;
                    mag[e] += w[j] * fabs(x);
                }
            }
            for (uint64_t e = 0; e < d->D; e++) {
                r->want[qrow + e] = hi > lo ? acc[e] : 0;
                /* f32 scores, exp2 and sums, P's rounding (atoms), the output's ulp */
                r->tol[qrow + e] = 2 * r->prel * mag[e] + 1e-4 * mag[e] + kn_ulp(r->s->dtype, acc[e]) + 1e-6;
            }
        }
    }
    free(sc);
}

void kn_attn_decode_reference(const rk_problem *p, double **want, double **tol) {
    const rk_attention_spec *s = &p->inst.u.attn;
    int io = kn_buf_index(p, "O");
    decode_ref r = {.p = p, .s = s, .d = shape_of(p), .q = kn_buf(p, "Q"), .kc = kn_buf(p, "K_cache"),
                    .vc = kn_buf(p, "V_cache"), .bt = kn_buf(p, "block_table"), .lens = kn_buf(p, "context_lens"),
                    .ks = kn_buf(p, "K_scale"), .vs = kn_buf(p, "V_scale"), .want = want[io], .tol = tol[io],
                    .scale = (double)(float)kn_scalar(p, "scale"),
                    .wl = (int64_t)kn_scalar(p, "window_left"), .wr = (int64_t)kn_scalar(p, "window_right")};
    /* the atom path rounds P to 16 bits for P V (relative 2^-8 bf16, 2^-11 f16) */
    r.prel = !kn_attn_decode_atoms(s) ? 0 : s->dtype == RK_S_BF16 ? 0x1p-8 : 0x1p-11;
    rk_par_for(r.d.B * r.d.Hq, 1, decode_ref_pair, &r);
}

/* Lengths: the first sequence at the shape's CTX, the others in [1, CTX];
 * the block table: every page of the cache once, in random order. */
void kn_attn_decode_fix_inputs(rk_problem *p) {
    dshape d = shape_of(p);
    uint64_t rng = p->seed ^ 0xdec0de5eedull;
    int il = kn_buf_index(p, "context_lens"), ib = kn_buf_index(p, "block_table");
    for (uint64_t b = 0; b < d.B; b++) kn_set(&p->buf[il], b, (double)(b == 0 ? d.Skv : 1 + kn_splitmix(&rng) % d.Skv));
    /* every split the instance has, until a run chooses (rk_problem_attention_splits) */
    if (p->inst.u.attn.kv_splits > 1) (void)rk_problem_set_scalar(p, "num_splits", p->inst.u.attn.kv_splits);
    /* fp8 caches: per-head scales in [1/4, 2) */
    int isc[2] = {kn_buf_index(p, "K_scale"), kn_buf_index(p, "V_scale")};
    for (int x = 0; x < 2; x++)
        for (uint64_t h = 0; isc[x] >= 0 && h < d.Hkv; h++)
            kn_set(&p->buf[isc[x]], h, 0.25 + 1.75 * (double)(kn_splitmix(&rng) >> 11) * 0x1.0p-53);
    if (ib < 0) return;
    uint64_t n = d.B * d.maxp;
    for (uint64_t x = 0; x < n; x++) kn_set(&p->buf[ib], x, (double)x);
    for (uint64_t x = n; x > 1; x--) {   /* Fisher-Yates */
        uint64_t y = kn_splitmix(&rng) % x;
        double a = kn_get(&p->buf[ib], x - 1), c = kn_get(&p->buf[ib], y);
        kn_set(&p->buf[ib], x - 1, c);
        kn_set(&p->buf[ib], y, a);
    }
}

/* The first `used` block-table entries of sequence b point inside a cache of `pages` pages. */
rk_status kn_attn_check_pages(const char *who, const rk_host_buf *bt, uint64_t b, uint64_t maxp, uint64_t used,
                              uint64_t pages) {
    for (uint64_t pg = 0; pg < used; pg++) {
        double id = kn_get(bt, b * maxp + pg);
        if (id < 0 || id >= (double)pages)
            return rk_fail(RK_ERR_INVALID, "%s: sequence %llu: block_table[%llu][%llu] = %.0f points outside the "
                           "cache's %llu pages (0..%llu)", who, (unsigned long long)b, (unsigned long long)b,
                           (unsigned long long)pg, id, (unsigned long long)pages,
                           (unsigned long long)(pages ? pages - 1 : 0));
    }
    return RK_OK;
}

rk_status kn_attn_decode_check_inputs(const rk_problem *p) {
    dshape d = shape_of(p);
    const rk_host_buf *bt = kn_buf(p, "block_table"), *lens = kn_buf(p, "context_lens");
    uint64_t pages = d.B * d.maxp, cap = d.P ? d.maxp * d.P : d.Skv;
    for (uint64_t b = 0; b < d.B; b++) {
        double len = kn_get(lens, b);
        if (len < 0 || len > (double)cap)
            return rk_fail(RK_ERR_INVALID, "attention decode: sequence %llu has context length %.0f, outside 0..%llu "
                           "(%s)", (unsigned long long)b, len, (unsigned long long)cap,
                           d.P ? "its block_table row holds ceil(CTX / page_size) pages" : "the cache's CTX keys");
        if (!d.P) continue;
        rk_status st = kn_attn_check_pages("attention decode", bt, b, d.maxp, ((uint64_t)len + d.P - 1) / d.P, pages);
        if (st) return st;
    }
    double ns = kn_scalar(p, "num_splits");
    if (p->inst.u.attn.kv_splits > 1 && (ns < 1 || ns > p->inst.u.attn.kv_splits))
        return rk_fail(RK_ERR_INVALID, "attention decode: num_splits = %.0f, legal 1..%u (the instance's kv_splits)",
                       ns, p->inst.u.attn.kv_splits);
    return RK_OK;
}

/* Keys of split i of a sequence of len keys cut n ways, the kernel's rule
 * (kn_dec_split_range): whole pieces, at least four a split. */
static double split_keys(double len, uint32_t n, uint32_t i, uint32_t piece) {
    double per_pc = ceil(ceil(len / n) / piece), per = (per_pc > 4 ? per_pc : 4) * piece;
    double t0 = i * per, t1 = t0 + per < len ? t0 + per : len;
    return t1 > t0 ? t1 - t0 : 0;
}

enum { SPLIT_SETUP_KEYS = 128, SLOTS_PER_CU = 2, MAX_SIM_BLOCKS = 1 << 20 };

/* The batch's time in keys with n splits: its blocks, in grid order (split
 * fastest, then KV head, then sequence), each to the first free of `slots`
 * resident blocks; a block costs its keys plus a fixed setup. */
static double makespan(const rk_host_buf *lens, uint64_t B, uint64_t Hkv, uint32_t n, uint32_t piece, double *heap,
                       uint32_t slots) {
    for (uint32_t s = 0; s < slots; s++) heap[s] = 0;   /* a min-heap of the slots' finish times */
    double end = 0;
    for (uint64_t b = 0; b < B; b++)
        for (uint64_t h = 0; h < Hkv; h++)
            for (uint32_t i = 0; i < n; i++) {
                double t = heap[0] + split_keys(kn_get(lens, b), n, i, piece) + SPLIT_SETUP_KEYS;
                end = t > end ? t : end;
                uint32_t x = 0;   /* replace the root, sift down */
                for (;;) {
                    uint32_t c = 2 * x + 1;
                    if (c >= slots) break;
                    if (c + 1 < slots && heap[c + 1] < heap[c]) c++;
                    if (heap[c] >= t) break;
                    heap[x] = heap[c];
                    x = c;
                }
                heap[x] = t;
            }
    return end;
}

/* The splits of this batch: of 1, 2, 4, ... up to kv_splits (each keeping
 * at least 256 keys of the longest sequence), the count whose blocks finish
 * first when the device's resident blocks take them in grid order; a
 * smaller count wins within 2%. Fills the GPU with one long sequence, keeps
 * a lone long sequence among short ones from finishing last, and leaves
 * equal ones that already fill the device unsplit. */
rk_status kn_attn_decode_splits(rk_problem *p, const rk_target *t, uint32_t *splits) {
    dshape d = shape_of(p);
    const rk_host_buf *lens = kn_buf(p, "context_lens");
    uint32_t most = p->inst.u.attn.kv_splits, piece = d.P ? (uint32_t)d.P : 64;
    double maxlen = 0;
    for (uint64_t b = 0; b < d.B; b++) maxlen = kn_get(lens, b) > maxlen ? kn_get(lens, b) : maxlen;
    uint32_t slots = SLOTS_PER_CU * (t->compute_units ? t->compute_units : 1), n = 1;
    double *heap = rk_calloc(slots, sizeof *heap);
    if (!heap) return rk_fail(RK_ERR_NOMEM, "attention decode: out of memory choosing the splits");
    double best = makespan(lens, d.B, d.Hkv, 1, piece, heap, slots);
    for (uint32_t c = 2; c <= most && maxlen / c >= 256 && d.B * d.Hkv * c <= MAX_SIM_BLOCKS; c *= 2) {
        double m = makespan(lens, d.B, d.Hkv, c, piece, heap, slots);
        if (m < 0.98 * best) best = m, n = c;
    }
    rk_free(heap, slots * sizeof *heap);
    *splits = n;
    if (most == 1) return RK_OK;
    return rk_problem_set_scalar(p, "num_splits", n);
}

void kn_attn_decode_problem_cost(const rk_problem *p, double *bytes, double *flops) {
    dshape d = shape_of(p);
    const rk_host_buf *lens = kn_buf(p, "context_lens");
    double keys = 0, eb = rk_tile_elem_bytes(p->inst.u.attn.dtype),
           kvb = rk_tile_elem_bytes(kn_attn_decode_kv_type(&p->inst.u.attn));
    for (uint64_t b = 0; b < d.B; b++) keys += kn_get(lens, b);
    double pages = d.P ? ceil(keys / (double)d.P) * 4 : 0;   /* about: one id per page read */
    *flops = 4.0 * (double)(d.Hq * d.Sq * d.D) * keys;
    *bytes = 2 * keys * (double)(d.Hkv * d.D) * kvb + 2 * (double)(d.B * d.Sq * d.Hq * d.D) * eb + pages +
             (double)d.B * 4;
}

/* "8192, 17 1\n..." -> B integers. */
static rk_status read_lengths(const char *path, uint64_t B, double *out) {
    FILE *f = fopen(path, "r");
    if (!f)
        return rk_fail(RK_ERR_INVALID, "--lengths %s: not random, equal or a readable file (%s)", path,
                       strerror(errno));
    uint64_t n = 0;
    rk_status st = RK_OK;
    for (;;) {
        int c = fgetc(f);
        if (c == EOF) break;
        if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
        /* a count: decimal digits only (no sign, hex or exponent), then a separator */
        uint64_t v = 0;
        bool digits = false, over = false;
        for (; c >= '0' && c <= '9'; c = fgetc(f)) {
            digits = true;
            over |= v > (uint64_t)INT32_MAX;
            if (!over) v = v * 10 + (uint64_t)(c - '0');
        }
        bool sep = c == EOF || c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
        if (!digits || !sep) {
            st = rk_fail(RK_ERR_INVALID, "--lengths %s: entry %llu is not a count (decimal digits, the lengths "
                         "separated by ',', blanks or lines)", path, (unsigned long long)n);
            break;
        }
        if (over || v > (uint64_t)INT32_MAX) {
            st = rk_fail(RK_ERR_INVALID, "--lengths %s: entry %llu is past 2^31-1", path, (unsigned long long)n);
            break;
        }
        if (n < B) out[n] = (double)v;
        n++;
        if (c == EOF) break;
    }
    fclose(f);
    if (!st && n != B)
        st = rk_fail(RK_ERR_INVALID, "--lengths %s: %llu lengths for B = %llu sequences", path, (unsigned long long)n,
                     (unsigned long long)B);
    return st;
}

rk_status rk_problem_set_context_lengths(rk_problem *p, const char *how) {
    int il = kn_buf_index(p, "context_lens");
    if (il < 0 || !p->sig.p[il].ptr)
        return rk_fail(RK_ERR_INVALID, "--lengths: this kernel has no per-sequence lengths (attention --mode decode "
                       "has: context_lens)");
    dshape d = shape_of(p);
    if (!strcmp(how, "random")) return RK_OK;   /* the default fill */
    double *v = malloc(d.B * sizeof *v);
    if (!v) return rk_fail(RK_ERR_NOMEM, "--lengths: out of memory");
    rk_status st = RK_OK;
    if (!strcmp(how, "equal"))
        for (uint64_t b = 0; b < d.B; b++) v[b] = (double)d.Skv;
    else
        st = read_lengths(how, d.B, v);
    for (uint64_t b = 0; !st && b < d.B; b++) kn_set(&p->buf[il], b, v[b]);
    free(v);
    return st ? st : kn_attn_decode_check_inputs(p);
}
