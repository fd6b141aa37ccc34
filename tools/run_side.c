/* rocke run — one device's copy of a problem: upload the inputs, encode the
 * tensor maps over the device buffers, name elements by their indices.
 * Layer: tools. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_side.h"

bool run_side_is_output(const rk_kparam *kp) {
    return kp->ptr && (kp->role == RK_KP_OUT || kp->role == RK_KP_ACCUM || kp->role == RK_KP_INOUT);
}

/* Encode the signature's tensor maps over the buffers already on the device
 * (rk_problem_tensormap_nd gives each map's rank, shape, box, strides and swizzle). */
static bool encode_maps(run_side *s, const rk_problem *p) {
    static const rk_tensormap_swizzle swz[] = {RK_TENSORMAP_SWIZZLE_NONE, RK_TENSORMAP_SWIZZLE_32B,
                                               RK_TENSORMAP_SWIZZLE_64B, RK_TENSORMAP_SWIZZLE_128B};
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (p->sig.p[i].role != RK_KP_TENSORMAP) continue;
        rk_problem_tmap_nd t;
        if (rk_problem_tensormap_nd(p, i, &t)) return false;
        uint32_t sw = t.swizzle_bytes == 128 ? 3 : t.swizzle_bytes == 64 ? 2 : t.swizzle_bytes == 32 ? 1 : 0;
        if (t.rank == 2 ? rk_tensormap_encode_2d(s->dev, s->dptr[t.buf], t.elem, t.dims[1], t.dims[0],
                                                 t.strides_bytes[0], t.box[1], t.box[0], swz[sw], s->maps[i])
                        : rk_tensormap_encode_nd(s->dev, s->dptr[t.buf], t.elem, t.rank, t.dims, t.strides_bytes,
                                                 t.box, t.elem_strides, swz[sw], s->maps[i]))
            return false;
        s->args[i] = s->maps[i];
    }
    return true;
}

bool run_side_upload(run_side *s, const rk_problem *p, void *const *init) {
    for (uint32_t i = 0; i < p->sig.n; i++) {
        const rk_kparam *kp = &p->sig.p[i];
        if (kp->ptr) {
            const rk_host_buf *b = &p->buf[i];
            if (rk_mem_alloc(s->dev, b->bytes, &s->dptr[i]) || rk_mem_copy_htod(s->dev, s->dptr[i], init[i], b->bytes) ||
                rk_mem_name(s->dev, s->dptr[i], kp->name))
                return false;
            s->args[i] = &s->dptr[i];
        } else if (kp->role != RK_KP_TENSORMAP) {
            if (rk_problem_scalar(p, i, &s->sv[i])) return false;
            s->args[i] = &s->sv[i];
        }
    }
    return encode_maps(s, p);
}

void run_side_free(run_side *s) {
    if (s->dev)
        for (uint32_t i = 0; i < RK_KSIG_MAX; i++) rk_mem_free(s->dev, s->dptr[i]);
    if (s->mod) rk_module_unload(s->mod);
    if (s->dev) rk_device_close(s->dev);
    memset(s, 0, sizeof *s);
}

void run_side_element_name(const rk_problem *p, uint32_t entry, uint64_t i, char *buf, size_t n) {
    const rk_kparam *kp = &p->sig.p[entry];
    uint64_t ext[RK_SHAPE_MAX_DIMS], count = 1;
    uint32_t rank = 0;
    for (const char *d = kp->dims; d && *d && rank < RK_SHAPE_MAX_DIMS;) {
        size_t len = strcspn(d, ",");
        char word[32];
        snprintf(word, sizeof word, "%.*s", (int)(len < 31 ? len : 31), d);
        char *end;
        uint64_t v = strtoull(word, &end, 10);
        ext[rank] = *end || end == word ? rk_problem_dim(p, word) : v;
        count *= ext[rank++];
        d += len;
        if (*d == ',') d++;
    }
    if (!rank || count != p->buf[entry].count) {
        snprintf(buf, n, "%s[%" PRIu64 "]", kp->name, i);
        return;
    }
    uint64_t idx[RK_SHAPE_MAX_DIMS];
    for (uint32_t r = rank; r-- > 0;) {
        idx[r] = i % ext[r];
        i /= ext[r];
    }
    size_t off = (size_t)snprintf(buf, n, "%s[", kp->name);
    for (uint32_t r = 0; r < rank && off < n; r++)
        off += (size_t)snprintf(buf + off, n - off, "%s%" PRIu64, r ? "," : "", idx[r]);
    if (off < n) snprintf(buf + off, n - off, "]");
}
