/* rocke — problem shapes: the named dimensions and typed scalars each family
 * declares in its table, shapes built from named or positional extents, and
 * their text forms. Every error names the dimension and lists the family's.
 * Layer: kernels. */
#include <stdio.h>

#include "kern_int.h"

const rk_dim_decl kn_row_dims[2] = {
    {"M", 4096, "rows"},
    {"N", 4096, "row length (transpose: columns of X)"},
};
const rk_scalar_decl kn_row_scalars[2] = {
    {"M", RK_S_I32, RK_SC_DIM, "M", NULL, 0, "rows"},
    {"N", RK_S_I32, RK_SC_DIM, "N", NULL, 0, "row length"},
};

const rk_dim_decl *rk_family_dims(rk_family_id f, uint32_t *n) {
    const kn_family *fam = kn_family_find(f);
    if (n) *n = fam ? fam->ndims : 0;
    return fam ? fam->dims : NULL;
}

const rk_scalar_decl *rk_family_scalars(rk_family_id f, uint32_t *n) {
    const kn_family *fam = kn_family_find(f);
    if (n) *n = fam ? fam->nscalars : 0;
    return fam ? fam->scalars : NULL;
}

static int dim_index(const kn_family *fam, const char *name, size_t len) {
    for (uint32_t i = 0; i < fam->ndims; i++)
        if (strlen(fam->dims[i].name) == len && !strncmp(fam->dims[i].name, name, len)) return (int)i;
    return -1;
}

int rk_family_dim_index(rk_family_id f, const char *name) {
    const kn_family *fam = kn_family_find(f);
    return fam && name ? dim_index(fam, name, strlen(name)) : -1;
}

uint64_t kn_dim(const kn_family *f, const rk_shape *s, const char *name) {
    int i = dim_index(f, name, strlen(name));
    RK_ASSERT(i >= 0 && (uint32_t)i < s->rank, "kn_dim: the family has no such dimension");
    return s->dim[i];
}

/* "M, N" */
static void dim_list(const kn_family *fam, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < fam->ndims && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? ", " : "", fam->dims[i].name);
}

static rk_status no_family(rk_family_id f) { return rk_fail(RK_ERR_INVALID, "unknown kernel family %d", (int)f); }

rk_status rk_shape_default(rk_family_id f, rk_shape *out) {
    const kn_family *fam = kn_family_find(f);
    if (!fam) return no_family(f);
    memset(out, 0, sizeof *out);
    out->rank = fam->ndims;
    for (uint32_t i = 0; i < fam->ndims; i++) out->dim[i] = fam->dims[i].def;
    return RK_OK;
}

rk_status kn_shape_check(const kn_family *fam, const rk_shape *s) {
    char dims[256];
    dim_list(fam, dims, sizeof dims);
    if (s->rank != fam->ndims)
        return rk_fail(RK_ERR_INVALID, "%s: a shape has %u dimensions (%s), got %u", fam->name, fam->ndims, dims,
                       s->rank);
    for (uint32_t i = 0; i < s->rank; i++)
        if (s->dim[i] == 0)
            return rk_fail(RK_ERR_INVALID, "%s: dimension %s must be at least 1", fam->name, fam->dims[i].name);
    /* The heuristics and costs multiply extents (and round them up to tiles) in 64 bits: a
     * product past 2^62 would wrap, even to 0 (a division by zero). No device holds such a
     * problem, so it is refused here, before any heuristic runs. */
    const uint64_t cap = (uint64_t)1 << 62;
    uint64_t prod = 1;
    for (uint32_t i = 0; i < s->rank; i++) {
        if (prod > cap / s->dim[i]) {
            char shape[512];
            size_t off = 0;
            shape[0] = 0;
            for (uint32_t j = 0; j < s->rank && off < sizeof shape; j++)
                off += (size_t)snprintf(shape + off, sizeof shape - off, "%s%s=%llu", j ? "," : "", fam->dims[j].name,
                                        (unsigned long long)s->dim[j]);
            return rk_fail(RK_ERR_INVALID, "%s: shape %s: the product of the extents (%s) is past 2^62; no device "
                           "holds a problem that large", fam->name, shape, dims);
        }
        prod *= s->dim[i];
    }
    return RK_OK;
}

rk_status rk_shape_update(rk_family_id f, rk_shape *s, const char *const *names, const uint64_t *vals, uint32_t n,
                          bool all) {
    const kn_family *fam = kn_family_find(f);
    if (!fam) return no_family(f);
    char dims[256];
    dim_list(fam, dims, sizeof dims);
    if (s->rank != fam->ndims) return kn_shape_check(fam, s);
    for (uint32_t i = 0; i < n; i++) {
        if (vals[i]) continue;
        const char *nm = names && names[i] ? names[i] : !names && n == fam->ndims ? fam->dims[i].name : NULL;
        if (nm) return rk_fail(RK_ERR_INVALID, "%s: dimension %s must be at least 1", fam->name, nm);
        return rk_fail(RK_ERR_INVALID, "%s: extent %u must be at least 1", fam->name, i + 1);
    }
    if (!names) {
        if (fam->ndims == 1 && n >= 1) {
            /* a rank-1 problem from several extents: their product */
            uint64_t prod = 1;
            for (uint32_t i = 0; i < n; i++) {
                if (prod > UINT64_MAX / vals[i])
                    return rk_fail(RK_ERR_INVALID, "%s: the product of the extents overflows", fam->name);
                prod *= vals[i];
            }
            s->dim[0] = prod;
            return RK_OK;
        }
        if (n != fam->ndims)
            return rk_fail(RK_ERR_INVALID, "%s: a shape has %u dimensions (%s), got %u extents", fam->name,
                           fam->ndims, dims, n);
        for (uint32_t i = 0; i < n; i++) s->dim[i] = vals[i];
        return RK_OK;
    }
    uint32_t seen = 0;
    for (uint32_t i = 0; i < n; i++) {
        int d = names[i] ? dim_index(fam, names[i], strlen(names[i])) : -1;
        if (d < 0)
            return rk_fail(RK_ERR_INVALID, "%s: unknown dimension '%s' (dimensions: %s)", fam->name,
                           names[i] ? names[i] : "", dims);
        if (seen >> d & 1u) return rk_fail(RK_ERR_INVALID, "%s: dimension %s given twice", fam->name, names[i]);
        seen |= 1u << d;
        s->dim[d] = vals[i];
    }
    for (uint32_t d = 0; all && d < fam->ndims; d++)
        if (!(seen >> d & 1u))
            return rk_fail(RK_ERR_INVALID, "%s: dimension %s missing (dimensions: %s)", fam->name,
                           fam->dims[d].name, dims);
    return RK_OK;
}

void rk_shape_format(rk_family_id f, const rk_shape *s, bool named, char *buf, size_t n) {
    const kn_family *fam = kn_family_find(f);
    size_t off = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < s->rank && off < n; i++) {
        const char *nm = fam && i < fam->ndims ? fam->dims[i].name : "?";
        off += (size_t)snprintf(buf + off, n - off, "%s%s%s%llu", i ? "," : "", named ? nm : "", named ? "=" : "",
                                (unsigned long long)s->dim[i]);
    }
}
