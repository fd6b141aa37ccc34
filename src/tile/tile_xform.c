/* rocke — transforms and tensor descriptors: constructors, the derived
 * upper coordinates, and evaluation. Evaluation is dependency driven: a
 * transform runs once all its uppers are known; a transform that names a
 * coordinate both as upper and as lower (a pad, an in-place xor) refines it,
 * and every other consumer of that coordinate waits until its refinements
 * (in chain order) have run; among ready transforms the one with the
 * smallest first-lower name runs first, so the order transforms are listed
 * in changes neither the result nor the IR. Layer: tile. */
#include <string.h>

#include "rocke/tile_xform.h"

/* ---- constructors ------------------------------------------------------------- */
static rk_xform xf(rk_xf_kind kind) {
    rk_xform x;
    memset(&x, 0, sizeof x);
    x.kind = kind;
    return x;
}

static void io(rk_xform *x, uint32_t nup, const char *const *ups, uint32_t nlo, const char *const *los) {
    x->nup = nup;
    x->nlo = nlo;
    for (uint32_t i = 0; i < nup && i < RK_XF_MAX_IO; i++) x->up[i] = ups[i];
    for (uint32_t i = 0; i < nlo && i < RK_XF_MAX_IO; i++) x->lo[i] = los[i];
}

static rk_xform one_to_one(rk_xf_kind kind, const char *up, const char *into) {
    rk_xform x = xf(kind);
    io(&x, 1, &up, 1, &into);
    return x;
}

rk_xform rk_xf_pass_through(const char *up, const char *into) { return one_to_one(RK_XF_PASS_THROUGH, up, into); }

rk_xform rk_xf_pad(const char *c, bool has_lo, rk_ix lo, bool has_hi, rk_ix hi) {
    rk_xform x = one_to_one(RK_XF_PAD, c, c);
    x.has_a = has_lo;
    x.a = lo;
    x.has_b = has_hi;
    x.b = hi;
    return x;
}

rk_xform rk_xf_left_pad(const char *up, const char *into, rk_ix left) {
    rk_xform x = one_to_one(RK_XF_LEFT_PAD, up, into);
    x.a = left;
    return x;
}

rk_xform rk_xf_right_pad(const char *c, rk_ix length) {
    rk_xform x = one_to_one(RK_XF_RIGHT_PAD, c, c);
    x.a = length;
    return x;
}

rk_xform rk_xf_embed(uint32_t n, const char *const *ups, const char *into, const rk_ix *strides, rk_ix offset) {
    rk_xform x = xf(RK_XF_EMBED);
    io(&x, n, ups, 1, &into);
    for (uint32_t i = 0; i < n && i < RK_XF_MAX_IO; i++) x.s[i] = strides[i];
    x.a = offset;
    return x;
}

rk_xform rk_xf_embed_bounded(uint32_t n, const char *const *ups, const char *into, const rk_ix *strides,
                             rk_ix offset, rk_ix lo, rk_ix hi) {
    rk_xform x = rk_xf_embed(n, ups, into, strides, offset);
    x.bounded = true;
    x.lo_bound = lo;
    x.hi_bound = hi;
    return x;
}

rk_xform rk_xf_merge(uint32_t n, const char *const *ups, const char *into, const rk_ix *dims) {
    rk_xform x = xf(RK_XF_MERGE);
    io(&x, n, ups, 1, &into);
    for (uint32_t i = 0; i < n && i < RK_XF_MAX_IO; i++) x.s[i] = dims[i];
    return x;
}

rk_xform rk_xf_unmerge(const char *up, uint32_t n, const char *const *intos, const rk_fastdiv *dims) {
    rk_xform x = xf(RK_XF_UNMERGE);
    io(&x, 1, &up, n, intos);
    for (uint32_t i = 0; i < n && i < RK_XF_MAX_IO; i++) x.dv[i] = dims[i];
    return x;
}

rk_xform rk_xf_xor(const char *a, const char *b, const char *a_out, const char *b_out, rk_ix len, bool modulo) {
    rk_xform x = xf(RK_XF_XOR);
    const char *ups[2] = {a, b}, *los[2] = {a_out, b_out};
    io(&x, 2, ups, 2, los);
    x.a = len;
    x.xor_modulo = modulo;
    return x;
}

rk_xform rk_xf_slice(const char *up, const char *into, rk_ix begin, rk_ix end) {
    rk_xform x = one_to_one(RK_XF_SLICE, up, into);
    x.a = begin;
    x.b = end;
    return x;
}

rk_xform rk_xf_freeze(const char *into, rk_ix value) {
    rk_xform x = xf(RK_XF_FREEZE);
    io(&x, 0, NULL, 1, &into);
    x.a = value;
    return x;
}

rk_xform rk_xf_replicate(uint32_t n, const char *const *ups) {
    rk_xform x = xf(RK_XF_REPLICATE);
    io(&x, n, ups, 0, NULL);
    return x;
}

rk_xform rk_xf_modulo(const char *up, const char *into, rk_ix m) {
    rk_xform x = one_to_one(RK_XF_MODULO, up, into);
    x.a = m;
    return x;
}

rk_xform rk_xf_offset(const char *up, const char *into, rk_ix off) {
    rk_xform x = one_to_one(RK_XF_OFFSET, up, into);
    x.a = off;
    return x;
}

rk_xform rk_xf_indirect(const char *up, const char *into, rk_value table, rk_ix base, bool has_max, rk_ix max,
                        int32_t dflt) {
    rk_xform x = one_to_one(RK_XF_INDIRECT, up, into);
    x.table = table;
    x.a = base;
    x.has_b = has_max;
    x.b = max;
    x.dflt = dflt;
    return x;
}

bool rk_xf_is_linear(const rk_xform *x) {
    switch (x->kind) {
    case RK_XF_PASS_THROUGH: case RK_XF_PAD: case RK_XF_LEFT_PAD: case RK_XF_RIGHT_PAD: case RK_XF_EMBED:
    case RK_XF_MERGE: case RK_XF_SLICE: case RK_XF_FREEZE: case RK_XF_REPLICATE: case RK_XF_OFFSET:
        return true;
    case RK_XF_UNMERGE: case RK_XF_XOR: case RK_XF_MODULO: case RK_XF_INDIRECT:
        return false;
    case RK_XF__COUNT: break;
    }
    return false;
}

static const char *const xf_names[RK_XF__COUNT] = {
    "pass_through", "pad", "left_pad", "right_pad", "embed", "merge", "unmerge", "xor",
    "slice", "freeze", "replicate", "modulo", "offset", "indirect",
};

/* ---- names ---------------------------------------------------------------------- */
static bool same(const char *a, const char *b) { return strcmp(a, b) == 0; }

static bool in_list(const char *const *l, uint32_t n, const char *s) {
    for (uint32_t i = 0; i < n; i++)
        if (same(l[i], s)) return true;
    return false;
}

/* x refines c: c is both an upper and a lower of x. */
static bool refines(const rk_xform *x, const char *c) {
    return in_list(x->up, x->nup, c) && in_list(x->lo, x->nlo, c);
}

static rk_status check_xform(const rk_xform *x, uint32_t at) {
    if ((unsigned)x->kind >= RK_XF__COUNT) return rk_fail(RK_ERR_INVALID, "transform %u: unknown kind %d", at, (int)x->kind);
    const char *nm = xf_names[x->kind];
    if (x->nup > RK_XF_MAX_IO || x->nlo > RK_XF_MAX_IO)
        return rk_fail(RK_ERR_INVALID, "transform %u (%s): at most %d uppers and lowers", at, nm, RK_XF_MAX_IO);
    bool want_up = x->kind != RK_XF_FREEZE, want_lo = x->kind != RK_XF_REPLICATE;
    if ((want_up && x->nup == 0) || (want_lo && x->nlo == 0))
        return rk_fail(RK_ERR_INVALID, "transform %u (%s) needs at least one upper and one lower coordinate", at, nm);
    for (uint32_t i = 0; i < x->nup; i++)
        if (!x->up[i] || !x->up[i][0]) return rk_fail(RK_ERR_INVALID, "transform %u (%s): upper %u has no name", at, nm, i);
    for (uint32_t i = 0; i < x->nlo; i++) {
        if (!x->lo[i] || !x->lo[i][0]) return rk_fail(RK_ERR_INVALID, "transform %u (%s): lower %u has no name", at, nm, i);
        for (uint32_t j = 0; j < i; j++)
            if (same(x->lo[i], x->lo[j]))
                return rk_fail(RK_ERR_INVALID, "transform %u (%s) produces '%s' twice", at, nm, x->lo[i]);
    }
    if (x->kind == RK_XF_UNMERGE)
        for (uint32_t i = 1; i < x->nlo; i++)
            if (!x->dv[i].d.dyn && x->dv[i].d.c <= 0)
                return rk_fail(RK_ERR_INVALID, "transform %u (unmerge): dim %u is %lld; dims must be positive", at, i,
                               (long long)x->dv[i].d.c);
    if (x->kind == RK_XF_MODULO && !x->a.dyn && x->a.c <= 0)
        return rk_fail(RK_ERR_INVALID, "transform %u (modulo): modulus %lld must be positive", at, (long long)x->a.c);
    if (x->kind == RK_XF_XOR && x->xor_modulo && !x->a.dyn && x->a.c <= 0)
        return rk_fail(RK_ERR_INVALID, "transform %u (xor): length %lld must be positive", at, (long long)x->a.c);
    return RK_OK;
}

/* Recompute d->upper: base names and transform uppers, less the lowers that a
 * transform produces (a refined coordinate stays an upper when nothing else
 * produces it). */
static rk_status derive_uppers(rk_tile_desc *d) {
    const char *produced[RK_DESC_MAX_XFORMS * RK_XF_MAX_IO];
    uint32_t np = 0;
    for (uint32_t i = 0; i < d->nx; i++)
        for (uint32_t j = 0; j < d->x[i].nlo; j++) {
            const char *c = d->x[i].lo[j];
            if (refines(&d->x[i], c)) continue;
            if (in_list(produced, np, c))
                return rk_fail(RK_ERR_INVALID, "descriptor: coordinate '%s' is produced by two transforms", c);
            produced[np++] = c;
        }
    d->nupper = 0;
    const char *cand[RK_DESC_MAX_DIMS + RK_DESC_MAX_XFORMS * RK_XF_MAX_IO];
    uint32_t nc = 0;
    for (uint32_t i = 0; i < d->rank; i++) cand[nc++] = d->base[i];
    for (uint32_t i = 0; i < d->nx; i++)
        for (uint32_t j = 0; j < d->x[i].nup; j++) cand[nc++] = d->x[i].up[j];
    for (uint32_t i = 0; i < nc; i++) {
        if (in_list(produced, np, cand[i]) || in_list(d->upper, d->nupper, cand[i])) continue;
        if (d->nupper == RK_DESC_MAX_DIMS)
            return rk_fail(RK_ERR_INVALID, "descriptor: more than %d upper coordinates", RK_DESC_MAX_DIMS);
        d->upper[d->nupper++] = cand[i];
    }
    return RK_OK;
}

static const char *const default_names[RK_DESC_MAX_DIMS] = {
    "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15",
};

rk_status rk_tile_desc_naive(rk_tile_desc *d, uint32_t rank, const char *const *names, const rk_ix *lengths,
                             const rk_ix *strides) {
    memset(d, 0, sizeof *d);
    if (rank == 0 || rank > RK_DESC_MAX_DIMS)
        return rk_fail(RK_ERR_INVALID, "descriptor: rank %u is outside 1..%d", rank, RK_DESC_MAX_DIMS);
    if (!lengths) return rk_fail(RK_ERR_INVALID, "descriptor: lengths are required");
    d->rank = rank;
    for (uint32_t i = 0; i < rank; i++) {
        d->base[i] = names ? names[i] : default_names[i];
        if (!d->base[i] || !d->base[i][0]) return rk_fail(RK_ERR_INVALID, "descriptor: dim %u has no name", i);
        for (uint32_t j = 0; j < i; j++)
            if (same(d->base[i], d->base[j]))
                return rk_fail(RK_ERR_INVALID, "descriptor: dim name '%s' is used twice", d->base[i]);
        d->length[i] = lengths[i];
    }
    if (strides) {
        for (uint32_t i = 0; i < rank; i++) d->stride[i] = strides[i];
    } else {
        /* row-major: stride_i = prod(lengths[i+1..]), which needs constant lengths past dim 0 */
        int64_t s = 1;
        for (uint32_t i = rank; i-- > 0;) {
            d->stride[i] = rk_ix_c(s);
            if (i > 0) {
                if (lengths[i].dyn)
                    return rk_fail(RK_ERR_INVALID, "descriptor: dim '%s' has a run-time length: give the strides",
                                   d->base[i]);
                s *= lengths[i].c;
            }
        }
    }
    return derive_uppers(d);
}

rk_status rk_tile_desc_add(rk_tile_desc *d, const rk_xform *xs, uint32_t n) {
    if (d->nx + n > RK_DESC_MAX_XFORMS)
        return rk_fail(RK_ERR_INVALID, "descriptor: more than %d transforms", RK_DESC_MAX_XFORMS);
    for (uint32_t i = 0; i < n; i++) {
        rk_status st = check_xform(&xs[i], d->nx + i);
        if (st) return st;
    }
    rk_tile_desc save = *d;
    for (uint32_t i = 0; i < n; i++) d->x[d->nx++] = xs[i];
    rk_status st = derive_uppers(d);
    if (st) *d = save;
    return st;
}

int rk_tile_desc_upper_index(const rk_tile_desc *d, const char *name) {
    for (uint32_t i = 0; i < d->nupper; i++)
        if (same(d->upper[i], name)) return (int)i;
    return -1;
}

/* ---- evaluation ---------------------------------------------------------------- */
/* The coordinates known so far. In delta mode (host only) a coordinate
 * carries the constant change of its value and `moved` marks non-zero ones. */
typedef struct coord {
    const char *name;
    rk_ix v, valid;
    int64_t delta;
} coord;

typedef struct evalst {
    rk_kernel *k;            /* NULL in delta mode */
    const rk_tile_desc *d;
    coord c[RK_DESC_MAX_DIMS + RK_DESC_MAX_XFORMS * RK_XF_MAX_IO];
    uint32_t n;
    bool done[RK_DESC_MAX_XFORMS];
} evalst;

static coord *find(evalst *e, const char *name) {
    for (uint32_t i = 0; i < e->n; i++)
        if (same(e->c[i].name, name)) return &e->c[i];
    return NULL;
}

static coord *put(evalst *e, const char *name) {
    coord *c = find(e, name);
    if (!c) {
        c = &e->c[e->n++];
        memset(c, 0, sizeof *c);
        c->name = name;
    }
    return c;
}

/* Is coordinate `name` ready for transform t: known, and every refinement of
 * it that must come first (all of them; for a refining t, those before t)
 * has run. */
static bool ready(const evalst *e, uint32_t t, const char *name) {
    if (!find((evalst *)e, name)) return false;
    const rk_tile_desc *d = e->d;
    bool t_refines = refines(&d->x[t], name);
    for (uint32_t r = 0; r < d->nx; r++) {
        if (r == t || !refines(&d->x[r], name)) continue;
        if (t_refines && r > t) continue;
        if (!e->done[r]) return false;
    }
    return true;
}

static rk_status not_linear(const rk_xform *x, uint32_t t) {
    return rk_fail(RK_ERR_UNSUPPORTED, "descriptor: transform %u (%s) is not linear in a moved coordinate ('%s'): "
                   "re-evaluate the offset instead of moving it", t, xf_names[x->kind], x->up[0]);
}

static rk_status not_constant(const rk_xform *x, uint32_t t) {
    return rk_fail(RK_ERR_UNSUPPORTED, "descriptor: transform %u (%s) has a run-time stride or dim on a moved "
                   "coordinate: the offset change is not a host constant", t, xf_names[x->kind]);
}

/* Delta mode: the lowers' constant changes from the uppers' changes. */
static rk_status apply_delta(evalst *e, uint32_t t) {
    const rk_xform *x = &e->d->x[t];
    int64_t du[RK_XF_MAX_IO] = {0};
    bool moved = false;
    for (uint32_t i = 0; i < x->nup; i++) {
        du[i] = find(e, x->up[i])->delta;
        moved |= du[i] != 0;
    }
    int64_t out = 0;
    switch (x->kind) {
    case RK_XF_PASS_THROUGH: case RK_XF_PAD: case RK_XF_LEFT_PAD: case RK_XF_RIGHT_PAD: case RK_XF_SLICE:
    case RK_XF_OFFSET:
        out = du[0];
        break;
    case RK_XF_EMBED:
        for (uint32_t i = 0; i < x->nup; i++) {
            if (!du[i]) continue;
            if (x->s[i].dyn) return not_constant(x, t);
            out += x->s[i].c * du[i];
        }
        break;
    case RK_XF_MERGE: {
        int64_t scale = 1;   /* prod(dims[i+1..]) */
        bool dyn_scale = false;
        for (uint32_t i = x->nup; i-- > 0;) {
            if (du[i]) {
                if (dyn_scale) return not_constant(x, t);
                out += scale * du[i];
            }
            if (i > 0) {
                if (x->s[i].dyn) dyn_scale = true;
                else scale *= x->s[i].c;
            }
        }
        break;
    }
    case RK_XF_FREEZE: case RK_XF_REPLICATE:
        break;
    case RK_XF_UNMERGE: case RK_XF_XOR: case RK_XF_MODULO: case RK_XF_INDIRECT:
        if (moved) return not_linear(x, t);
        break;
    case RK_XF__COUNT: break;
    }
    /* one-output transforms move their lower by `out`; the others (not moved) by 0 */
    for (uint32_t i = 0; i < x->nlo; i++) put(e, x->lo[i])->delta = x->nlo == 1 ? out : 0;
    return RK_OK;
}

static rk_status apply(evalst *e, uint32_t t) {
    if (!e->k) return apply_delta(e, t);
    rk_kernel *k = e->k;
    const rk_xform *x = &e->d->x[t];
    rk_ix u[RK_XF_MAX_IO], uv[RK_XF_MAX_IO];
    for (uint32_t i = 0; i < x->nup; i++) {
        coord *c = find(e, x->up[i]);
        u[i] = c->v;
        uv[i] = c->valid;
    }
    rk_ix valid = rk_ix_c(1);
    for (uint32_t i = 0; i < x->nup; i++) valid = rk_ix_and(k, valid, uv[i]);
    rk_ix out[RK_XF_MAX_IO];
    switch (x->kind) {
    case RK_XF_PASS_THROUGH:
        out[0] = u[0];
        break;
    case RK_XF_PAD:
        out[0] = u[0];
        if (x->has_a) {
            rk_ix ge = rk_ix_ge(k, u[0], x->a);
            valid = rk_ix_and(k, valid, ge);
        }
        if (x->has_b) {
            rk_ix lt = rk_ix_lt(k, u[0], x->b);
            valid = rk_ix_and(k, valid, lt);
        }
        break;
    case RK_XF_LEFT_PAD: {
        rk_ix ge = rk_ix_ge(k, u[0], x->a);
        valid = rk_ix_and(k, valid, ge);
        out[0] = rk_ix_sub(k, u[0], x->a);
        break;
    }
    case RK_XF_RIGHT_PAD: {
        rk_ix lt = rk_ix_lt(k, u[0], x->a);
        valid = rk_ix_and(k, valid, lt);
        out[0] = u[0];
        break;
    }
    case RK_XF_EMBED: {
        rk_ix s = x->a;
        for (uint32_t i = 0; i < x->nup; i++) {
            rk_ix p = rk_ix_mul(k, x->s[i], u[i]);
            s = rk_ix_add(k, s, p);
        }
        out[0] = s;
        if (x->bounded) {
            rk_ix ge = rk_ix_ge(k, s, x->lo_bound);
            valid = rk_ix_and(k, valid, ge);
            rk_ix lt = rk_ix_lt(k, s, x->hi_bound);
            valid = rk_ix_and(k, valid, lt);
        }
        break;
    }
    case RK_XF_MERGE: {
        /* Horner: ((u0 * d1 + u1) * d2 + u2) ... */
        rk_ix s = u[0];
        for (uint32_t i = 1; i < x->nup; i++) {
            rk_ix p = rk_ix_mul(k, s, x->s[i]);
            s = rk_ix_add(k, p, u[i]);
        }
        out[0] = s;
        break;
    }
    case RK_XF_UNMERGE: {
        rk_ix r = u[0];
        for (uint32_t i = x->nlo; i-- > 1;) {
            rk_ix rem;
            r = rk_fastdiv_divmod(k, r, &x->dv[i], &rem);
            out[i] = rem;
        }
        out[0] = r;
        break;
    }
    case RK_XF_XOR: {
        rk_ix a = x->xor_modulo ? rk_ix_umod(k, u[0], x->a) : u[0];
        out[0] = u[0];
        out[1] = rk_ix_xor(k, u[1], a);
        break;
    }
    case RK_XF_SLICE: case RK_XF_OFFSET:
        out[0] = rk_ix_add(k, u[0], x->a);
        break;
    case RK_XF_FREEZE:
        out[0] = x->a;
        break;
    case RK_XF_REPLICATE:
        break;
    case RK_XF_MODULO:
        out[0] = rk_ix_umod(k, u[0], x->a);
        break;
    case RK_XF_INDIRECT: {
        rk_ix idx = rk_ix_add(k, x->a, u[0]);
        rk_value iv = rk_ix_value(k, idx);
        if (x->has_b) {
            /* keep the address inside the table for lanes past max */
            rk_ix ok = rk_ix_lt(k, idx, x->b);
            rk_value okv = rk_ix_bool_value(k, ok);
            rk_value zero = rk_const_i32(k, 0);
            rk_value safe = rk_build_select(k, okv, iv, zero);
            rk_value got = rk_load_global(k, x->table, safe, 1);
            rk_value dv = rk_const_i32(k, x->dflt);
            out[0] = rk_ix_v(rk_build_select(k, okv, got, dv));
        } else {
            out[0] = rk_ix_v(rk_load_global(k, x->table, iv, 1));
        }
        break;
    }
    case RK_XF__COUNT:
        break;
    }
    for (uint32_t i = 0; i < x->nlo; i++) {
        coord *c = put(e, x->lo[i]);
        c->v = out[i];
        c->valid = valid;
    }
    return RK_OK;
}

/* The order-independent key of a transform: its first lower (replicate: its
 * first upper). Keys are unique but for refinements of one coordinate, which
 * keep their chain order. */
static const char *key(const rk_xform *x) { return x->nlo ? x->lo[0] : x->up[0]; }

/* Seed the uppers, then run the ready transform with the smallest key until
 * none is left: the IR comes out the same whatever order the transforms were
 * listed in. */
static rk_status run(evalst *e, const rk_ix *uppers, const int64_t *delta) {
    const rk_tile_desc *d = e->d;
    for (uint32_t i = 0; i < d->nupper; i++) {
        coord *c = put(e, d->upper[i]);
        if (uppers) c->v = uppers[i];
        c->valid = rk_ix_c(1);
        if (delta) c->delta = delta[i];
    }
    for (uint32_t left = d->nx; left; left--) {
        int best = -1;
        for (uint32_t t = 0; t < d->nx; t++) {
            if (e->done[t]) continue;
            bool ok = true;
            for (uint32_t i = 0; i < d->x[t].nup && ok; i++) ok = ready(e, t, d->x[t].up[i]);
            if (ok && (best < 0 || strcmp(key(&d->x[t]), key(&d->x[best])) < 0)) best = (int)t;
        }
        if (best < 0) {
            for (uint32_t t = 0; t < d->nx; t++) {
                if (e->done[t]) continue;
                for (uint32_t i = 0; i < d->x[t].nup; i++)
                    if (!ready(e, t, d->x[t].up[i]))
                        return rk_fail(RK_ERR_INVALID, "descriptor: transform %u (%s) waits for '%s', which nothing "
                                       "produces (a cycle or a missing transform)", t, xf_names[d->x[t].kind],
                                       d->x[t].up[i]);
            }
            return rk_fail(RK_ERR_INVALID, "descriptor: transforms left that cannot run");
        }
        rk_status st = apply(e, (uint32_t)best);
        if (st) return st;
        e->done[best] = true;
    }
    for (uint32_t i = 0; i < d->rank; i++)
        if (!find(e, d->base[i]))
            return rk_fail(RK_ERR_INVALID, "descriptor: base dim '%s' is never produced", d->base[i]);
    return RK_OK;
}

static evalst *eval_new(rk_kernel *k, const rk_tile_desc *d, evalst *e) {
    memset(e, 0, sizeof *e);
    e->k = k;
    e->d = d;
    return e;
}

rk_status rk_tile_desc_lower(rk_kernel *k, const rk_tile_desc *d, const rk_ix *uppers, rk_ix *base, rk_ix *valid) {
    evalst e;
    rk_status st = run(eval_new(k, d, &e), uppers, NULL);
    if (st) return st;
    rk_ix v = rk_ix_c(1);
    for (uint32_t i = 0; i < d->rank; i++) {
        coord *c = find(&e, d->base[i]);
        if (base) base[i] = c->v;
        v = rk_ix_and(k, v, c->valid);
    }
    if (valid) *valid = v;
    return RK_OK;
}

rk_status rk_tile_desc_offset(rk_kernel *k, const rk_tile_desc *d, const rk_ix *uppers, rk_ix *offset, rk_ix *valid) {
    rk_ix base[RK_DESC_MAX_DIMS];
    rk_status st = rk_tile_desc_lower(k, d, uppers, base, valid);
    if (st) return st;
    rk_ix off = rk_ix_c(0);
    for (uint32_t i = 0; i < d->rank; i++) {
        rk_ix p = rk_ix_mul(k, base[i], d->stride[i]);
        off = rk_ix_add(k, off, p);
    }
    if (!off.dyn && (off.c < INT32_MIN || off.c > INT32_MAX))
        return rk_fail(RK_ERR_INVALID, "descriptor: constant offset %lld does not fit in i32 (use the i64 offset)",
                       (long long)off.c);
    *offset = off;
    return RK_OK;
}

rk_status rk_tile_desc_offset64(rk_kernel *k, const rk_tile_desc *d, const rk_ix *uppers, rk_value *offset,
                                rk_ix *valid) {
    rk_ix base[RK_DESC_MAX_DIMS];
    rk_status st = rk_tile_desc_lower(k, d, uppers, base, valid);
    if (st) return st;
    int64_t cst = 0;
    rk_value acc = {0};
    bool have = false;
    for (uint32_t i = 0; i < d->rank; i++) {
        if (!base[i].dyn && !d->stride[i].dyn) {
            cst += base[i].c * d->stride[i].c;
            continue;
        }
        if ((!base[i].dyn && base[i].c == 0) || (!d->stride[i].dyn && d->stride[i].c == 0)) continue;
        /* sign-extend the i32 coordinate and stride, multiply in i64 */
        rk_value b64 = base[i].dyn ? rk_build_sext(k, base[i].v, RK_T_I64) : rk_const_i64(k, base[i].c);
        rk_value s64 = d->stride[i].dyn ? rk_build_sext(k, d->stride[i].v, RK_T_I64)
                                        : rk_const_i64(k, d->stride[i].c);
        rk_value p = (!d->stride[i].dyn && d->stride[i].c == 1) ? b64 : rk_build_mul(k, b64, s64);
        acc = have ? rk_build_add(k, acc, p) : p;
        have = true;
    }
    if (!have) {
        *offset = rk_const_i64(k, cst);
    } else if (cst) {
        rk_value c = rk_const_i64(k, cst);
        *offset = rk_build_add(k, acc, c);
    } else {
        *offset = acc;
    }
    return RK_OK;
}

rk_status rk_tile_desc_delta(const rk_tile_desc *d, const int64_t *delta, int64_t *offset_delta) {
    evalst e;
    rk_status st = run(eval_new(NULL, d, &e), NULL, delta);
    if (st) return st;
    int64_t off = 0;
    for (uint32_t i = 0; i < d->rank; i++) {
        int64_t dl = find(&e, d->base[i])->delta;
        if (!dl) continue;
        if (d->stride[i].dyn)
            return rk_fail(RK_ERR_UNSUPPORTED, "descriptor: base dim '%s' moves but its stride is a run-time value: "
                           "the offset change is not a host constant", d->base[i]);
        off += dl * d->stride[i].c;
    }
    *offset_delta = off;
    return RK_OK;
}
