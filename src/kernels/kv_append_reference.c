/* rocke — kv_append's host side: the double reference (caches start from
 * their saved contents, written slots replaced; rope in double; e4m3 as
 * x / scale, one e4m3 step of tolerance), the slot and position draws, and
 * the check of slots against the cache before a launch. Layer: kernels. */
#include <math.h>
#include <stdio.h>

#include "kern_int.h"

typedef struct kshape { uint64_t T, Hq, Hkv, D, slots; } kshape;

static kshape shape_of(const rk_problem *p) {
    return (kshape){rk_problem_dim(p, "T"), rk_problem_dim(p, "Hq"), rk_problem_dim(p, "Hkv"),
                    rk_problem_dim(p, "D"), rk_problem_dim(p, "pages") * rk_problem_dim(p, "page_size")};
}

static int64_t *slots_of(const rk_problem *p) { return (int64_t *)kn_buf(p, "slot_mapping")->data; }

/* Distinct slots in a random order, about one token in five skipped (-1);
 * tokens past the cache's capacity skipped too. Positions below slots. */
void kn_kv_append_fix_inputs(rk_problem *p) {
    kshape d = shape_of(p);
    int64_t *slot = slots_of(p);
    uint64_t st = p->seed ^ 0x6b76617070656e64ull;
    uint64_t *perm = rk_malloc(d.slots * sizeof *perm);
    RK_ASSERT(perm, "kv_append: out of memory drawing slots");
    for (uint64_t i = 0; i < d.slots; i++) perm[i] = i;
    for (uint64_t t = 0; t < d.T; t++) {
        if (t >= d.slots || kn_splitmix(&st) % 5 == 0) { slot[t] = -1 - (int64_t)(kn_splitmix(&st) % 3); continue; }
        uint64_t j = t + kn_splitmix(&st) % (d.slots - t), x = perm[t];
        perm[t] = perm[j], perm[j] = x;
        slot[t] = (int64_t)perm[t];
    }
    rk_free(perm, d.slots * sizeof *perm);
    const rk_host_buf *pos = kn_buf(p, "Pos");
    if (pos)
        for (uint64_t i = 0; i < pos->count; i++) ((int32_t *)pos->data)[i] %= (int32_t)d.slots;
}

rk_status kn_kv_append_check_inputs(const rk_problem *p) {
    kshape d = shape_of(p);
    const int64_t *slot = slots_of(p);
    for (uint64_t t = 0; t < d.T; t++)
        if (slot[t] >= (int64_t)d.slots)
            return rk_fail(RK_ERR_INVALID, "kv_append: token %llu has slot_mapping %lld, outside the cache's %llu "
                           "slots (pages x page_size; legal: 0..%llu, or negative to skip the token)",
                           (unsigned long long)t, (long long)slot[t], (unsigned long long)d.slots,
                           (unsigned long long)(d.slots - 1));
    const rk_host_buf *pos = kn_buf(p, "Pos");
    for (uint64_t t = 0; pos && t < d.T; t++) {
        int32_t v = ((const int32_t *)pos->data)[t];
        if (v < 0 || (uint64_t)v >= d.slots)
            return rk_fail(RK_ERR_INVALID, "kv_append: token %llu has position %d, outside the cos/sin caches' %llu "
                           "rows (legal: 0..%llu)", (unsigned long long)t, v, (unsigned long long)d.slots,
                           (unsigned long long)(d.slots - 1));
    }
    return RK_OK;
}

/* Head h of token t of X rotated (rope) or copied, into y[D]; err[i]: the
 * f32 rounding bound of the rotation. */
static void head_of(const rk_problem *p, const rk_host_buf *X, uint64_t heads, uint64_t t, uint64_t h, bool rotate,
                    double *y, double *err) {
    const rk_kv_append_spec *s = &p->inst.u.kva;
    const uint64_t D = rk_problem_dim(p, "D"), RH = D / 2, base = (t * heads + h) * D;
    for (uint64_t j = 0; j < D; j++) y[j] = kn_get(X, base + j), err[j] = 0;
    if (!rotate || s->rope == RK_KV_ROPE_NONE) return;
    rk_host_buf Pos = kn_input(p, "Pos"), C = kn_input(p, "Cos"), S = kn_input(p, "Sin");
    uint64_t pos = (uint64_t)kn_get(&Pos, t);
    for (uint64_t i = 0; i < RH; i++) {
        bool neox = s->rope == RK_KV_ROPE_NEOX;
        uint64_t ia = neox ? i : 2 * i, ib = neox ? i + RH : 2 * i + 1;
        double a = kn_get(X, base + ia), b = kn_get(X, base + ib);
        double c = kn_get(&C, pos * RH + i), sn = kn_get(&S, pos * RH + i);
        y[ia] = a * c - b * sn, y[ib] = b * c + a * sn;
        err[ia] = err[ib] = 4e-7 * (fabs(a) + fabs(b));
    }
}

/* The new rows of one cache: X's heads (rotated for K), / scale for e4m3. */
static void cache_ref(const rk_problem *p, const char *x, const char *cache, const char *scale, bool rotate,
                      double *y, double *err, double **want, double **tol) {
    kshape d = shape_of(p);
    rk_host_buf X = kn_input(p, x), C0 = kn_input(p, cache);
    const rk_host_buf *sc = kn_buf(p, scale);
    int o = kn_buf_index(p, cache);
    rk_scalar ct = p->sig.p[o].type;
    const int64_t *slot = slots_of(p);
    for (uint64_t i = 0; i < C0.count; i++) want[o][i] = kn_get(&C0, i), tol[o][i] = 0;
    for (uint64_t t = 0; t < d.T; t++) {
        if (slot[t] < 0) continue;
        for (uint64_t h = 0; h < d.Hkv; h++) {
            head_of(p, &X, d.Hkv, t, h, rotate, y, err);
            double inv = sc ? 1.0 / kn_get(sc, h) : 1.0;
            uint64_t at = ((uint64_t)slot[t] * d.Hkv + h) * d.D;
            for (uint64_t j = 0; j < d.D; j++) {
                double v = y[j] * inv;
                want[o][at + j] = v;
                /* a rounding to the cache type, when anything is computed */
                bool exact = !sc && err[j] == 0;
                tol[o][at + j] = exact ? 0 : err[j] * inv + kn_ulp(ct, v) * (1 + 1e-6);
            }
        }
    }
}

void kn_kv_append_reference(const rk_problem *p, double **want, double **tol) {
    kshape d = shape_of(p);
    const rk_kv_append_spec *s = &p->inst.u.kva;
    double *y = rk_malloc(2 * d.D * sizeof *y);
    RK_ASSERT(y, "kn_kv_append_reference: out of memory");
    double *err = y + d.D;
    cache_ref(p, "K", "Kc", "k_scale", true, y, err, want, tol);
    cache_ref(p, "V", "Vc", "v_scale", false, y, err, want, tol);
    if (s->rope != RK_KV_ROPE_NONE) {
        rk_host_buf Q = kn_input(p, "Q");
        int o = kn_buf_index(p, "Q");
        for (uint64_t t = 0; t < d.T; t++)
            for (uint64_t h = 0; h < d.Hq; h++) {
                head_of(p, &Q, d.Hq, t, h, true, y, err);
                uint64_t at = (t * d.Hq + h) * d.D;
                for (uint64_t j = 0; j < d.D; j++) {
                    want[o][at + j] = y[j];
                    tol[o][at + j] = err[j] ? err[j] + kn_ulp(s->dtype, y[j]) : 0;
                }
            }
    }
    rk_free(y, 2 * d.D * sizeof *y);
}
