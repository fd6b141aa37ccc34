/* rocke sweep — a run worker's problem on its device: the held shape's
 * buffers uploaded once per fill and restaged there for each config
 * (outputs zeroed, in-out buffers restored: no per-config allocation or
 * upload), the reference uploaded beside them for the device check, the
 * check itself (cmd_sweep_compare.c's kernel per output, 12 bytes read
 * back) and the outputs fetched for the host check. Layer: tools. */
#include <stdlib.h>
#include <string.h>

#include "base/fp.h"
#include "sweep_int.h"

static bool is_output(rk_kparam_role role) {
    return role == RK_KP_OUT || role == RK_KP_ACCUM || role == RK_KP_INOUT;
}

void sw_dev_free(rk_device *dev, sw_devprob *d) {
    for (uint32_t i = 0; i < RK_KSIG_MAX; i++) {
        rk_mem_free(dev, d->d[i]);
        rk_mem_free(dev, d->init[i]);
        rk_mem_free(dev, d->want[i]);
        rk_mem_free(dev, d->tol[i]);
    }
    rk_mem_free(dev, d->res);
    memset(d, 0, sizeof *d);
}

/* The reference of one output as the device check reads it, converted in parallel chunks. */
typedef struct conv_job {
    rk_scalar type;
    const double *want, *tol;
    void *w;
    float *t;
} conv_job;

static void conv_chunk(void *ctx, uint64_t chunk, uint64_t lo, uint64_t hi) {
    (void)chunk;
    const conv_job *c = ctx;
    for (uint64_t j = lo; j < hi; j++) {
        if (c->type == RK_S_F32) ((float *)c->w)[j] = (float)c->want[j];
        else if (c->type == RK_S_F16) ((uint16_t *)c->w)[j] = rk_f64_to_f16(c->want[j]);
        else ((uint16_t *)c->w)[j] = rk_f64_to_bf16(c->want[j]);
        c->t[j] = sw_compare_tol(c->tol[j]);
    }
}

static rk_status upload_reference(rk_device *dev, sw_devprob *d, const sw_problem *c, uint32_t i) {
    const rk_host_buf *b = &c->p.buf[i];
    rk_scalar type = b->param->type;
    if (!sw_compare_supported(type) || !b->count || b->count > SW_COMPARE_MAX_N || !c->ref.want[i]) return RK_OK;
    size_t eb = type == RK_S_F32 ? 4 : 2;
    conv_job j = {.type = type, .want = c->ref.want[i], .tol = c->ref.tol[i], .w = malloc(b->count * eb),
                  .t = malloc(b->count * sizeof(float))};
    rk_status st = j.w && j.t ? RK_OK : rk_fail(RK_ERR_NOMEM, "out of memory for the device check's reference");
    if (!st) rk_par_for(b->count, (uint64_t)1 << 18, conv_chunk, &j);
    if (!st) st = rk_mem_alloc(dev, b->count * eb, &d->want[i]);
    if (!st) st = rk_mem_alloc(dev, b->count * sizeof(float), &d->tol[i]);
    if (!st) st = rk_mem_copy_htod(dev, d->want[i], j.w, b->count * eb);
    if (!st) st = rk_mem_copy_htod(dev, d->tol[i], j.t, b->count * sizeof(float));
    free(j.w);
    free(j.t);
    return st;
}

rk_status sw_dev_stage(rk_device *dev, sw_devprob *d, const sw_problem *c, bool *fresh) {
    const rk_problem *p = &c->p;
    *fresh = !d->have || d->gen != c->gen;
    if (!*fresh) {
        for (uint32_t i = 0; i < p->sig.n; i++) {
            rk_kparam_role role = p->sig.p[i].role;
            rk_status st = RK_OK;
            if (!p->sig.p[i].ptr || role == RK_KP_IN || !p->buf[i].bytes) continue;
            if (role == RK_KP_INOUT) st = rk_mem_copy_dtod(dev, d->d[i], d->init[i], p->buf[i].bytes, NULL);
            else st = rk_mem_memset(dev, d->d[i], 0, p->buf[i].bytes, NULL);
            if (st) return st;
        }
        return RK_OK;
    }
    sw_dev_free(dev, d);
    rk_status st = rk_mem_alloc(dev, 3 * sizeof(int32_t), &d->res);
    for (uint32_t i = 0; i < p->sig.n && !st; i++) {
        const rk_host_buf *b = &p->buf[i];
        rk_kparam_role role = p->sig.p[i].role;
        if (!p->sig.p[i].ptr || role == RK_KP_TENSORMAP) continue;
        st = rk_mem_alloc(dev, b->bytes, &d->d[i]);
        if (!st && b->bytes) st = rk_mem_copy_htod(dev, d->d[i], b->data, b->bytes);
        if (!st && role == RK_KP_INOUT && b->bytes) {
            st = rk_mem_alloc(dev, b->bytes, &d->init[i]);
            if (!st) st = rk_mem_copy_dtod(dev, d->init[i], d->d[i], b->bytes, NULL);
        }
        if (!st && is_output(role)) st = upload_reference(dev, d, c, i);
    }
    if (st) {
        sw_dev_free(dev, d);
        return st;
    }
    d->have = true;
    d->gen = c->gen;
    return RK_OK;
}

rk_status sw_dev_check(rk_device *dev, const sw_devprob *d, const rk_problem *p, sw_checker *chk,
                       rk_problem_diff *out, bool *ran) {
    *ran = false;
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (is_output(p->sig.p[i].role) && (!d->want[i] || !chk[p->sig.p[i].type].ok)) return RK_OK;
    rk_problem_diff r = {0};
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (!is_output(p->sig.p[i].role)) continue;
        int32_t res[3] = {0, INT32_MAX, 0}, n = (int32_t)p->buf[i].count;
        rk_devptr got = d->d[i], want = d->want[i], tol = d->tol[i], rp = d->res;
        void *args[] = {&got, &want, &tol, &rp, &n};
        uint32_t grid[3], block[3];
        sw_compare_grid(p->buf[i].count, grid, block);
        rk_status st = rk_mem_copy_htod(dev, d->res, res, sizeof res);
        if (!st) st = rk_launch(chk[p->sig.p[i].type].fn, grid, block, 0, NULL, args);
        if (!st) st = rk_mem_copy_dtoh(dev, res, d->res, sizeof res);
        if (st) return st;
        float mx;
        memcpy(&mx, &res[2], sizeof mx);
        if (mx > r.max_abs_diff) r.max_abs_diff = mx;
        if (res[0] && !r.bad)
            snprintf(r.first_bad, sizeof r.first_bad, "%s: element %d of %llu off (device check)",
                     p->sig.p[i].name, (int)res[1], (unsigned long long)p->buf[i].count);
        r.bad += (uint32_t)res[0];
        r.total += p->buf[i].count;
    }
    *out = r;
    *ran = true;
    return RK_OK;
}

rk_status sw_dev_fetch(rk_device *dev, const sw_devprob *d, rk_problem *p) {
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (!is_output(p->sig.p[i].role) || !p->buf[i].bytes) continue;
        rk_status st = rk_mem_copy_dtoh(dev, p->buf[i].data, d->d[i], p->buf[i].bytes);
        if (st) return st;
    }
    return RK_OK;
}
