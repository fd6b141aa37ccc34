/* rocke — a manifest checked against itself: the instance its family + spec
 * rebuild implies every other field, each compared with what the manifest
 * says; then the binary (size, hash, kind, target, kernel). Layer: kernels
 * (uses manifest). */
#include <stdio.h>
#include <string.h>

#include "rocke/kernels.h"
#include "rocke/manifest.h"

enum { TENSORMAP_BYTES = 128 };   /* a CUtensorMap by value (runtime.h RK_TENSORMAP_BYTES) */

uint32_t rk_kparam_manifest_type(const rk_kparam *p, char *type, size_t n) {
    bool map = p->role == RK_KP_TENSORMAP;
    if (p->ptr) snprintf(type, n, "ptr<%s, global>", rk_scalar_name(p->type));
    else snprintf(type, n, "%s", map ? "tensormap" : rk_scalar_name(p->type));
    return p->ptr ? 8 : map ? TENSORMAP_BYTES : rk_scalar_bits(p->type) / 8;
}

static rk_status contradicts(const char *field, const char *says, const char *implies) {
    return rk_fail(RK_ERR_INVALID, "manifest field '%s' is %s but its spec implies %s", field, says, implies);
}

static rk_status contradicts_u64(const char *field, uint64_t says, uint64_t implies) {
    char a[24], b[24];
    snprintf(a, sizeof a, "%llu", (unsigned long long)says);
    snprintf(b, sizeof b, "%llu", (unsigned long long)implies);
    return contradicts(field, a, b);
}

static rk_status compare_str(const char *field, const char *says, const char *implies) {
    if (!says[0] || !strcmp(says, implies)) return RK_OK;   /* absent fields state nothing */
    char a[300], b[300];
    snprintf(a, sizeof a, "'%s'", says);
    snprintf(b, sizeof b, "'%s'", implies);
    return contradicts(field, a, b);
}

/* The instance of family + spec, whose name must be kernel_name. */
static rk_status rebuild(const rk_manifest *m, rk_instance *in) {
    rk_family_id f;
    if (!m->family[0])
        return rk_fail(RK_ERR_INVALID, "manifest '%s' (kind %s) has no rocke 'family'/'spec': rocke run handles "
                       "manifests written by rocke build", m->kernel_name, m->kind);
    if (rk_family_parse(m->family, &f)) return rk_fail(RK_ERR_INVALID, "manifest field 'family': %s", rk_error_message());
    rk_instance_default(f, in);
    for (uint32_t i = 0; i < m->nspec; i++)
        if (rk_instance_set(in, m->spec[i].key, m->spec[i].value, NULL))
            return rk_fail(RK_ERR_INVALID, "manifest field 'spec': %s", rk_error_message());
    char name[256];
    rk_instance_name(in, name, sizeof name);
    if (strcmp(name, m->kernel_name))
        return rk_fail(RK_ERR_INVALID, "manifest 'spec' describes kernel %s but 'kernel_name' is %s", name,
                       m->kernel_name);
    return RK_OK;
}

/* A type as written, without spaces ("ptr<f16, global>" = "ptr<f16,global>"). */
static void squeeze(const char *s, char *out, size_t n) {
    size_t o = 0;
    for (; *s && o + 1 < n; s++)
        if (*s != ' ') out[o++] = *s;
    out[o] = 0;
}

static rk_status compare_signature(const rk_manifest *m, const rk_instance *in) {
    rk_ksig sig;
    if (rk_instance_signature(in, &sig)) return rk_fail(RK_ERR_INVALID, "manifest 'spec': %s", rk_error_message());
    bool has_bytes = false;
    for (uint32_t i = 0; i < sig.n || i < m->nargs; i++) {
        char field[48], says[64], implies[128];
        if (i >= sig.n || i >= m->nargs) {
            snprintf(field, sizeof field, "args_signature");
            snprintf(says, sizeof says, "%u parameters", m->nargs);
            snprintf(implies, sizeof implies, "%u (%s %s)", sig.n, i < sig.n ? "first missing:" : "first extra:",
                     i < sig.n ? sig.p[i].name : m->args[i].name);
            return contradicts(field, says, implies);
        }
        const rk_kparam *p = &sig.p[i];
        const rk_manifest_arg *a = &m->args[i];
        size_t nl = strlen(p->name);
        has_bytes |= nl >= 6 && !strcmp(p->name + nl - 6, "_bytes");
        snprintf(field, sizeof field, "args_signature[%u].name", i);
        rk_status st = compare_str(field, a->name, p->name);
        if (st) return st;
        char want[48], got[48], want_sq[48];
        uint32_t size = rk_kparam_manifest_type(p, want, sizeof want);
        squeeze(a->type, got, sizeof got);
        squeeze(want, want_sq, sizeof want_sq);
        snprintf(field, sizeof field, "args_signature[%u].type", i);
        if (strcmp(got, want_sq)) return compare_str(field, a->type, want);
        snprintf(field, sizeof field, "args_signature[%u].size_bytes", i);
        if (a->size_bytes != size) return contradicts_u64(field, a->size_bytes, size);
    }
    if (m->sig_has_bytes != has_bytes) return contradicts_u64("sig_has_bytes", m->sig_has_bytes, has_bytes);
    return RK_OK;
}

/* default_shape for the family: named dimensions must be exactly the
 * family's; an unnamed (upstream) list must have its rank. */
static rk_status manifest_shape(const rk_manifest *m, const rk_instance *in, rk_shape *s) {
    rk_family_id f = in->family;
    rk_shape_default(f, s);
    if (!m->ndefault_shape) return RK_OK;
    const char *names[RK_MANIFEST_MAX_DIMS];
    for (uint32_t i = 0; i < m->ndefault_shape; i++) names[i] = m->default_shape_dims[i];
    bool named = m->default_shape_dims[0][0] != 0;
    if (!named && m->ndefault_shape != s->rank)
        return rk_fail(RK_ERR_INVALID, "manifest field 'default_shape' has %u extents but family %s has %u "
                       "dimensions", m->ndefault_shape, rk_family_name(f), s->rank);
    if (rk_shape_update(f, s, named ? names : NULL, m->default_shape, m->ndefault_shape, true))
        return rk_fail(RK_ERR_INVALID, "manifest field 'default_shape': %s", rk_error_message());
    if (rk_instance_check_shape(in, s))
        return rk_fail(RK_ERR_INVALID, "manifest field 'default_shape': %s", rk_error_message());
    return RK_OK;
}

/* A field only some families have, stated for another. */
static rk_status foreign(const char *field, const rk_instance *in, const char *owner) {
    return rk_fail(RK_ERR_INVALID, "manifest field '%s' is for %s kernels but the spec is family %s", field, owner,
                   rk_family_name(in->family));
}

/* Every variant's ranges name dimensions of the family. */
static rk_status check_variants(const rk_manifest *m, const rk_instance *in) {
    uint32_t nd;
    const rk_dim_decl *dims = rk_family_dims(in->family, &nd);
    for (uint32_t i = 0; i < m->nvariants; i++)
        for (uint32_t j = 0; j < m->variants[i].ndims; j++) {
            bool known = false;
            char base[24];
            uint64_t mod;
            rk_status st = rk_manifest_dim_parse(m->variants[i].dim[j], base, sizeof base, &mod);
            if (st) return st;
            for (uint32_t d = 0; d < nd; d++) known |= !strcmp(dims[d].name, base);
            if (known) continue;
            char legal[128] = "";
            size_t off = 0;
            for (uint32_t d = 0; d < nd && off < sizeof legal; d++)
                off += (size_t)snprintf(legal + off, sizeof legal - off, "%s%s", d ? ", " : "", dims[d].name);
            return rk_fail(RK_ERR_INVALID, "manifest field 'variants[%u].when' names dimension '%s', which family "
                           "%s does not have (its dimensions: %s)", i, m->variants[i].dim[j],
                           rk_family_name(in->family), legal);
        }
    return RK_OK;
}

static rk_status compare_family_fields(const rk_manifest *m, const rk_instance *in) {
    rk_status vst = check_variants(m, in);
    if (vst) return vst;
    bool ew = in->family == RK_FAMILY_ELEMENTWISE, tr = in->family == RK_FAMILY_TRANSPOSE;
    if (ew) {
        uint64_t epb = (uint64_t)in->u.ew.block_size * in->u.ew.vec * in->u.ew.unroll;
        int bin = rk_ew_op_is_binary(in->u.ew.op);
        if (m->elems_per_block && m->elems_per_block != epb)
            return contradicts_u64("elems_per_block", m->elems_per_block, epb);
        if (m->is_binary >= 0 && m->is_binary != bin) return contradicts_u64("is_binary", (uint64_t)m->is_binary, (uint64_t)bin);
    } else if (m->elems_per_block || m->is_binary >= 0) {
        return foreign(m->elems_per_block ? "elems_per_block" : "is_binary", in, "elementwise");
    }
    if (tr) {
        if (m->block_m && m->block_m != in->u.transpose.tile_m)
            return contradicts_u64("block_m", m->block_m, in->u.transpose.tile_m);
        if (m->block_n && m->block_n != in->u.transpose.tile_n)
            return contradicts_u64("block_n", m->block_n, in->u.transpose.tile_n);
    } else if (m->block_m || m->block_n) {
        return foreign(m->block_m ? "block_m" : "block_n", in, "transpose");
    }
    if (m->has_eps) {
        uint32_t nsc;
        const rk_scalar_decl *sc = rk_family_scalars(in->family, &nsc);
        bool given = false;
        for (uint32_t i = 0; i < nsc; i++) given |= sc[i].src == RK_SC_GIVEN && !strcmp(sc[i].name, "eps");
        if (!given) return foreign("eps", in, "the eps-taking (norm)");
    }
    return RK_OK;
}

static rk_status compare_launch(const rk_manifest *m, const rk_instance *in, const rk_shape *s) {
    uint32_t grid[3], block[3];
    rk_instance_grid(in, s, grid, block);
    if (m->threads_per_block != block[0]) return contradicts_u64("threads_per_block", m->threads_per_block, block[0]);
    if (!m->grid_explicit[0]) return RK_OK;
    for (int i = 0; i < 3; i++)
        if (m->grid_explicit[i] != grid[i]) {
            char a[48], b[48];
            snprintf(a, sizeof a, "[%u, %u, %u]", m->grid_explicit[0], m->grid_explicit[1], m->grid_explicit[2]);
            snprintf(b, sizeof b, "[%u, %u, %u] for default_shape", grid[0], grid[1], grid[2]);
            return contradicts("grid_explicit", a, b);
        }
    return RK_OK;
}

rk_status rk_manifest_check(const rk_manifest *m, const char *dir, rk_instance *in_out, rk_shape *shape_out) {
    rk_instance in;
    rk_shape s;
    rk_status st = rebuild(m, &in);
    if (st) return st;
    const rk_target *t = rk_target_find(m->target);
    if (!t) return rk_fail(RK_ERR_INVALID, "manifest field 'target': %s", rk_error_message());
    char kind[64], v[128], op[32], dtype[16] = "";
    rk_instance_kind(&in, kind, sizeof kind);
    if ((st = compare_str("kind", m->kind, kind))) return st;
    if (rk_instance_get(&in, "op", v, sizeof v) == RK_OK) snprintf(op, sizeof op, "%.31s", v);
    else snprintf(op, sizeof op, "%s", rk_family_name(in.family));
    if ((st = compare_str("op", m->op, op))) return st;
    if (rk_instance_get(&in, "dtype", v, sizeof v) == RK_OK) snprintf(dtype, sizeof dtype, "%.15s", v);
    if (m->dtype[0] && !dtype[0]) return foreign("dtype", &in, "dtype-taking");
    if ((st = compare_str("dtype", m->dtype, dtype))) return st;
    if ((st = compare_signature(m, &in))) return st;
    if ((st = compare_family_fields(m, &in))) return st;
    if ((st = manifest_shape(m, &in, &s))) return st;
    if ((st = compare_launch(m, &in, &s))) return st;
    if ((st = rk_manifest_check_binary(m, dir))) return st;
    if (rk_instance_validate(&in, t))
        return rk_fail(RK_ERR_INVALID, "manifest 'spec' is not valid for its target %s: %s", t->name,
                       rk_error_message());
    if (in_out) *in_out = in;
    if (shape_out) *shape_out = s;
    return RK_OK;
}
