/* rocke — checking a run's outputs against the family's double reference:
 * the reference (want and tolerance per output element) computed once, then
 * any number of runs over the same inputs compared with it, in parallel
 * chunks. Layer: kernels. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kern_int.h"

/* "Y[3,17]": the flat index i as coordinates of the parameter's layout. */
static void where(const rk_problem *p, const rk_host_buf *b, uint64_t i, char *buf, size_t n) {
    uint64_t ext[RK_SHAPE_MAX_DIMS], coord[RK_SHAPE_MAX_DIMS];
    uint32_t r = 0;
    for (const char *d = b->param->dims ? b->param->dims : ""; *d && r < RK_SHAPE_MAX_DIMS; r++) {
        size_t len = strcspn(d, ",");
        char nm[32];
        size_t nlen = len > 2 && !strncmp(d + len - 2, "+1", 2) ? len - 2 : len;
        snprintf(nm, sizeof nm, "%.*s", (int)(nlen < 31 ? nlen : 31), d);
        ext[r] = rk_problem_dim(p, nm) + (nlen != len);
        d += len + (d[len] == ',');
    }
    for (uint32_t k = r; k-- > 0;) {
        coord[k] = ext[k] ? i % ext[k] : 0;
        i = ext[k] ? i / ext[k] : 0;
    }
    size_t off = (size_t)snprintf(buf, n, "%s[", b->param->name);
    for (uint32_t k = 0; k < r && off < n; k++)
        off += (size_t)snprintf(buf + off, n - off, "%s%llu", k ? "," : "", (unsigned long long)coord[k]);
    if (off < n) snprintf(buf + off, n - off, "]");
}

/* The check of one output buffer, in parallel chunks (CHECK_GRAIN elements). */
#define CHECK_GRAIN ((uint64_t)1 << 18)
typedef struct check_part {
    double max_abs_diff;
    uint64_t bad, first_bad;
} check_part;
typedef struct check_job {
    const rk_host_buf *b;
    const double *want, *tol;
    check_part *part;
} check_job;

static void check_chunk(void *ctx, uint64_t chunk, uint64_t lo, uint64_t hi) {
    const check_job *c = ctx;
    check_part *q = &c->part[chunk];
    for (uint64_t j = lo; j < hi; j++) {
        double got = kn_get(c->b, j), w = kn_round(c->b->param->type, c->want[j]);
        double diff = (got == w || (isnan(got) && isnan(w))) ? 0.0 : fabs(got - w);
        if (isnan(diff)) diff = INFINITY;
        if (diff > q->max_abs_diff) q->max_abs_diff = diff;
        if (diff > c->tol[j] && !q->bad++) q->first_bad = j;
    }
}

static bool is_output(rk_kparam_role role) {
    return role == RK_KP_OUT || role == RK_KP_ACCUM || role == RK_KP_INOUT;
}

void rk_problem_ref_free(rk_problem_ref *r) {
    for (uint32_t i = 0; i < RK_KSIG_MAX; i++) {
        size_t n = (size_t)(r->count[i] ? r->count[i] : 1);
        if (r->want[i]) rk_free(r->want[i], n * sizeof(double));
        if (r->tol[i]) rk_free(r->tol[i], n * sizeof(double));
    }
    memset(r, 0, sizeof *r);
}

rk_status rk_problem_reference(const rk_problem *p, rk_problem_ref *out) {
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (!is_output(p->sig.p[i].role)) continue;
        size_t n = (size_t)(p->buf[i].count ? p->buf[i].count : 1);
        out->count[i] = p->buf[i].count;
        out->want[i] = rk_calloc(n, sizeof(double));
        out->tol[i] = rk_calloc(n, sizeof(double));
        if (!out->want[i] || !out->tol[i]) {
            rk_problem_ref_free(out);
            return rk_fail(RK_ERR_NOMEM, "out of memory for the reference (%s: %zu elements)", p->sig.p[i].name, n);
        }
    }
    kn_family_of(p->inst.family)->reference(p, out->want, out->tol);
    return RK_OK;
}

rk_status rk_problem_check_ref(const rk_problem *p, const rk_problem_ref *r, rk_problem_diff *out) {
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < RK_KSIG_MAX; i++) {
        bool mine = i < p->sig.n && is_output(p->sig.p[i].role);
        if (mine != (r->want[i] != NULL) || (mine && r->count[i] != p->buf[i].count))
            return rk_fail(RK_ERR_INVALID, "rk_problem_check_ref: the reference is not of this problem (entry %u%s%s: "
                           "%llu elements, the reference %llu)", i, i < p->sig.n ? " " : "",
                           i < p->sig.n ? p->sig.p[i].name : "", (unsigned long long)(mine ? p->buf[i].count : 0),
                           (unsigned long long)r->count[i]);
    }
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (!r->want[i]) continue;
        const rk_host_buf *b = &p->buf[i];
        check_job j = {.b = b, .want = r->want[i], .tol = r->tol[i]};
        uint64_t nc = rk_par_chunks(b->count, CHECK_GRAIN);
        if (!(j.part = rk_calloc(nc ? nc : 1, sizeof *j.part))) return rk_fail(RK_ERR_NOMEM, "out of memory for the check");
        rk_par_for(b->count, CHECK_GRAIN, check_chunk, &j);
        for (uint64_t c = 0; c < nc; c++) {   /* in element order: the first bad one is the lowest index */
            const check_part *q = &j.part[c];
            if (q->max_abs_diff > out->max_abs_diff) out->max_abs_diff = q->max_abs_diff;
            if (q->bad && !out->bad) {
                uint64_t x = q->first_bad;
                double got = kn_get(b, x), w = kn_round(b->param->type, r->want[i][x]);
                char at[64];
                where(p, b, x, at, sizeof at);
                snprintf(out->first_bad, sizeof out->first_bad, "%s: got %.9g want %.9g (tol %.3g)", at, got, w,
                         r->tol[i][x]);
            }
            out->bad += q->bad;
        }
        out->total += b->count;
        rk_free(j.part, (nc ? nc : 1) * sizeof *j.part);
    }
    return RK_OK;
}

rk_status rk_problem_check(const rk_problem *p, rk_problem_diff *out) {
    rk_problem_ref r;
    memset(out, 0, sizeof *out);
    rk_status st = rk_problem_reference(p, &r);
    if (st) return st;
    st = rk_problem_check_ref(p, &r, out);
    rk_problem_ref_free(&r);
    return st;
}
