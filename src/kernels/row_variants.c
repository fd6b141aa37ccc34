/* rocke — shape variants of a row kernel built without a shape: split long
 * rows, one cached kernel per row-length class of the heuristic, a looped
 * kernel for every other shape, each with the ranges it serves, so one
 * manifest dispatches as a per-shape build would (docs/kernels.md). Layer:
 * kernels. */
#include <stdio.h>
#include <string.h>

#include "attention_unified_int.h"
#include "kern_int.h"

/* The row count the cached variants are tuned at: enough rows that the
 * heuristic keeps its full block (few rows halve it). */
#define KN_VARIANT_ROWS 65536u

static rk_row_knobs *row_knobs(rk_instance *in) {
    switch (in->family) {
    case RK_FAMILY_REDUCE: return &in->u.reduce.k;
    case RK_FAMILY_SOFTMAX: return &in->u.softmax.k;
    case RK_FAMILY_LAYERNORM: case RK_FAMILY_RMSNORM: return &in->u.norm.k;
    default: return NULL;
    }
}

/* The index of knob in in's family table, or -1. */
static int knob_index(const rk_instance *in, const char *knob) {
    uint32_t n;
    const rk_knob *kb = rk_family_knobs(in->family, &n);
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(kb[i].name, knob)) return (int)i;
    return -1;
}

static bool is_locked(const rk_instance *in, uint64_t locked, const char *knob) {
    int i = knob_index(in, knob);
    return i >= 0 && (locked >> i) & 1u;
}

/* knob unlocked in *locked: false when the family has no such knob. */
static bool unlock(const rk_instance *in, uint64_t *locked, const char *knob) {
    int i = knob_index(in, knob);
    if (i >= 0) *locked &= ~(1ull << i);
    return i >= 0;
}

/* in with `knob` set to value and locked, unless the caller locked it. */
static void lock(rk_instance *in, uint64_t *locked, const char *knob, const char *value) {
    uint32_t ix;
    if (is_locked(in, *locked, knob)) return;
    if (rk_instance_set(in, knob, value, &ix) == RK_OK) *locked |= 1ull << ix;
}

static bool tuned(const rk_instance *in, const rk_target *t, uint64_t locked, uint64_t M, uint64_t N,
                  rk_instance *out) {
    rk_shape s;
    const uint64_t ext[2] = {M, N};
    *out = *in;
    if (rk_shape_default(in->family, &s) || rk_shape_update(in->family, &s, NULL, ext, 2, false)) return false;
    if (rk_instance_tune(out, t, &s, locked) || rk_instance_validate(out, t)) return false;
    return true;
}

/* Knobs and their name under the heuristic at M x N (split on, slices 1). */
static bool pick_at(const rk_instance *one, const rk_target *t, uint64_t locked, uint64_t N, rk_instance *v,
                    char *name, size_t n) {
    return tuned(one, t, locked, KN_VARIANT_ROWS, N, v) && row_knobs(v)->chunks && !rk_instance_name(v, name, n);
}

/* The tensors a span of this family stages (kn_span_bytes): x, [r, h], y. */
static uint32_t span_elems(const rk_instance *in, rk_scalar *out) {
    switch (in->family) {
    case RK_FAMILY_REDUCE: out[0] = in->u.reduce.dtype; return 1;
    case RK_FAMILY_SOFTMAX: out[0] = in->u.softmax.dtype; out[1] = in->u.softmax.out_dtype; return 2;
    case RK_FAMILY_LAYERNORM: case RK_FAMILY_RMSNORM: {
        uint32_t n = 0;
        out[n++] = in->u.norm.dtype;
        if (in->u.norm.residual) {
            out[n++] = in->u.norm.dtype;
            out[n++] = in->u.norm.dtype;
        }
        out[n++] = in->u.norm.out_dtype;
        return n;
    }
    default: return 0;
    }
}

/* The class [lo, hi] as stage=auto (direct rows at N % vec == 0, the span
 * at other lengths, chosen at run time), when the heuristic with the stage
 * free picks span at the class's shortest length that is not a multiple of
 * vec, and the auto kernel's span (the class's threads, chunks x vec
 * elements each) keeps to the span budget and leaves the direct rows their
 * resident blocks and occupancy hint (kn_row_auto_fits, below). free: the
 * instance with only the caller's locks and split; staged: with stage=auto
 * locked. v: the class's direct pick, replaced on success. */
static void auto_class(const rk_instance *free, uint64_t lfree, const rk_instance *staged, uint64_t lstaged,
                       const rk_target *t, uint64_t lo, uint64_t hi, rk_instance *v) {
    const rk_row_knobs *k = row_knobs(v);
    uint64_t odd = lo % k->vec ? lo : lo + 1;
    rk_scalar el[4];
    uint32_t ne = span_elems(v, el);
    rk_instance h, a;
    if (k->vec < 2 || odd > hi || !kn_row_auto_fits(k, t, el, ne)) return;
    if (!tuned(free, t, lfree, KN_VARIANT_ROWS, odd, &h) || row_knobs(&h)->stage != RK_STAGE_SPAN) return;
    if (!tuned(staged, t, lstaged, KN_VARIANT_ROWS, lo, &a)) return;
    const rk_row_knobs *ka = row_knobs(&a);
    /* the same geometry as the class */
    if (ka->block_size != k->block_size || ka->rows_per_block != k->rows_per_block || ka->chunks != k->chunks ||
        ka->vec != k->vec)
        return;
    /* and the direct rows' occupancy: aligned rows must not lose resident
     * blocks to the span's f32 elements. Softmax, RMSNorm and reduce spans
     * fit the direct hint (ptxas -v, sm_90a bf16: RMSNorm t64c2 at 8 blocks
     * of 256 in 32 registers, no spill; with a residual 4 bytes);
     * LayerNorm's 16-element span spills 40 bytes there, so its classes
     * stay direct where the two hints differ */
    if (k->min_blocks && ka->min_blocks < k->min_blocks) {
        if (v->family == RK_FAMILY_LAYERNORM) return;
        row_knobs(&a)->min_blocks = k->min_blocks;
        if (rk_instance_validate(&a, t)) return;
    }
    *v = a;
}

/* The span classes of a shape-less build: odd row lengths (N % vec != 0)
 * the heuristic stages through LDS (kn_row_tune_stage: the family's
 * measured limit, a span that fits) go to span kernels, each serving the
 * lengths whose span pick has its geometry (same_span; its chunks cover
 * the class's longest row). */
static const char *const mod_dims[] = {"N%2", "N%4", "N%8", "N%16"};

static const char *mod_dim(uint32_t vec) {
    for (uint32_t i = 0; i < 4; i++)
        if (2u << i == vec) return mod_dims[i];
    return NULL;
}

/* The span pick at the row length nearest N (at or below it) that is not a
 * multiple of vec: false when there is none or it is not a span. */
static bool span_at(const rk_instance *free, uint64_t lfree, const rk_target *t, uint32_t vec, uint64_t N,
                    rk_instance *out) {
    if (N % vec == 0) N--;
    if (!N) return false;
    return tuned(free, t, lfree, KN_VARIANT_ROWS, N, out) && row_knobs(out)->stage == RK_STAGE_SPAN;
}

/* The least of 1, 2, 3, 4, 6, 8, 12, 16, 24, ... (powers of two and their
 * halfway steps) at or above x. */
static uint32_t bracket_at_least(uint32_t x) {
    uint32_t p = 1;
    while (p < x) {
        if (p >= 2 && p / 2 * 3 >= x) return p / 2 * 3;
        p *= 2;
    }
    return p;
}

/* One class: the same threads per row and rows per block, and chunks in
 * the same bracket (a class's kernel holds at most 1.5 times the elements
 * its shortest row needs: a thread's span elements are registers, and idle
 * chunk slots cost: on the H200, session 16, LayerNorm 65536 x 767 ran its
 * class's 16 chunks at 1707 GB/s where a build for the shape (12) ran 2240). */
static bool same_span(rk_instance *a, rk_instance *b) {
    const rk_row_knobs *x = row_knobs(a), *y = row_knobs(b);
    return x->block_size == y->block_size && x->rows_per_block == y->rows_per_block && x->vec == y->vec &&
           bracket_at_least(x->chunks) == bracket_at_least(y->chunks);
}

/* Span variants over the odd lengths of [lo, hi] into out (at most room). */
static uint32_t span_classes(const rk_instance *free, uint64_t lfree, const rk_target *t, uint32_t vec, uint64_t lo,
                             uint64_t hi, rk_variant *out, uint32_t room) {
    const char *md = mod_dim(vec);
    uint32_t n = 0;
    uint64_t from = lo % vec ? lo : lo + 1;
    rk_instance a, b;
    while (md && n < room && from <= hi && span_at(free, lfree, t, vec, from, &a)) {
        /* the largest length whose span pick keeps a's geometry */
        uint64_t end = from, cap = hi;
        while (end < cap) {
            uint64_t mid = end + (cap - end + 1) / 2;
            if (span_at(free, lfree, t, vec, mid, &b) && same_span(&a, &b)) end = mid;
            else cap = mid - 1;
        }
        /* the kernel for the class's longest odd row (its chunks hold it) */
        if (!span_at(free, lfree, t, vec, end, &b) || !same_span(&a, &b)) break;
        const rk_row_knobs *k = row_knobs(&b);
        out[n] = (rk_variant){.inst = b, .ndims = 2, .dim = {"N", md}, .lo = {from, 1}, .hi = {end, vec - 1}};
        snprintf(out[n].tag, sizeof out[n].tag, "sp%uc%u", kn_row_tpr(k), k->chunks);
        n++;
        from = end + 1;
        if (from % vec == 0) from++;
    }
    return n;
}

/* The heuristic's pick at the odd length nearest N (at or above it) with
 * the split left to the shape (odd: locked split off), when it is not the
 * direct class's kernel `name`. */
static bool wide_at(const rk_instance *odd, uint64_t lodd, const rk_target *t, uint32_t vec, uint64_t N,
                    const char *name, rk_instance *out, char *oname, size_t n) {
    if (N % vec == 0) N++;
    return pick_at(odd, t, lodd, N, out, oname, n) && strcmp(oname, name);
}

/* The odd lengths of the direct class [lo, hi] (kernel `name`, vec) that a
 * build for their shape runs with four chunks (rowcommon.c, split_wide:
 * only where the split follows from an odd N, which the classes lock): the
 * rule holds from some length through the class's end (it depends on the
 * row's vectors against the class's threads), so a bisection finds where
 * it starts; one variant over those odd lengths (N%vec in its ranges),
 * false where the rule does not hold at the class's longest odd length or
 * its kernel is not one kernel over the range. */
static bool wide_class(const rk_instance *odd, uint64_t lodd, const rk_target *t, uint32_t vec, uint64_t lo,
                       uint64_t hi, const char *name, rk_variant *out) {
    const char *md = mod_dim(vec);
    uint64_t top = hi % vec ? hi : hi - 1;
    rk_instance a, b;
    char an[256], bn[256];
    if (!md || top < lo || !wide_at(odd, lodd, t, vec, top, name, &b, bn, sizeof bn)) return false;
    uint64_t x = lo, y = top;   /* the rule holds at the odd length nearest y */
    while (x < y) {
        uint64_t mid = x + (y - x) / 2;
        if (wide_at(odd, lodd, t, vec, mid, name, &a, an, sizeof an)) y = mid;
        else x = mid + 1;
    }
    if (x % vec == 0) x++;
    if (x > top || !wide_at(odd, lodd, t, vec, x, name, &a, an, sizeof an) || strcmp(an, bn)) return false;
    const rk_row_knobs *k = row_knobs(&b);
    *out = (rk_variant){.inst = b, .ndims = 2, .dim = {"N", md}, .lo = {x, 1}, .hi = {top, vec - 1}};
    snprintf(out->tag, sizeof out->tag, "o%uc%u", kn_row_tpr(k), k->chunks);
    return true;
}

/* The largest row length in [lo, cap] whose heuristic pick is named `name`:
 * each pick serves one interval of lengths (threads per row and chunks grow
 * with N), so a bisection finds its end. */
static uint64_t class_end(const rk_instance *one, const rk_target *t, uint64_t locked, uint64_t lo, uint64_t cap,
                          const char *name) {
    rk_instance v;
    char other[256];
    while (lo < cap) {
        uint64_t mid = lo + (cap - lo + 1) / 2;
        if (pick_at(one, t, locked, mid, &v, other, sizeof other) && !strcmp(other, name)) lo = mid;
        else cap = mid - 1;
    }
    return lo;
}

uint32_t rk_instance_variants(const rk_instance *in, const rk_target *t, uint64_t locked, rk_instance *general,
                              rk_variant *out, uint32_t max) {
    if (in->family == RK_FAMILY_ATTENTION && in->u.attn.mode == RK_ATTN_UNIFIED)
        return kn_attn_unified_variants(in, t, locked, general, out, max);
    rk_instance base = *in;
    if (!row_knobs(&base) || !t) return 0;
    uint64_t lk = locked;
    /* auto classes only where the build asks for stage=auto: measured on the H200 (bench/RESULTS.md, session
     * 11) they ran odd lengths slower than the direct rows (softmax 65536 x 127: 1129 GB/s against 1351,
     * x 1001: 2460 against 3295) */
    bool ask_auto = is_locked(in, locked, "stage") && row_knobs(&base)->stage == RK_STAGE_AUTO;
    /* span classes where the caller left the stage to the heuristic */
    bool spans = !is_locked(in, locked, "stage");
    if (ask_auto) {
        uint32_t ix;
        if (rk_instance_set(&base, "stage", "direct", &ix) == RK_OK) lk &= ~(1ull << ix);
    }
    /* every variant takes any row length and any base */
    lock(&base, &lk, "split", "true");
    rk_instance free = base, staged = base;
    uint64_t lfree = lk, lstaged = lk;
    lock(&staged, &lstaged, "stage", "auto");
    /* the classes are the direct rows' picks: a span kernel's pick
     * alternates with N % vec, which would cut the row lengths into
     * classes of a few each; a class the span serves better at its odd
     * lengths becomes stage=auto (both, chosen at run time) */
    lock(&base, &lk, "stage", "direct");
    uint32_t n = 0;
    /* few long rows: split over blocks (rows fewer than compute units), in
     * two classes as the heuristic has two rules (kn_row_tune_slices: up
     * to KN_SLICE_FEW_ROWS rows, and more), each tuned at its fewest rows */
    rk_instance v;
    uint64_t units = t->compute_units ? t->compute_units : 1;
    static const struct { uint64_t lo, hi; const char *tag; } splits[] = {{1, KN_SLICE_FEW_ROWS, "split"}, {KN_SLICE_FEW_ROWS + 1, UINT64_MAX, "splitm"}};
    for (uint32_t i = 0; i < 2; i++) {
        uint64_t hi = splits[i].hi < units - 1 ? splits[i].hi : units - 1;
        if (n >= max || splits[i].lo > hi || !tuned(&base, t, lk, splits[i].lo, 262144, &v) ||
            row_knobs(&v)->slices < 2 || (row_knobs(&v)->chunks && kn_row_cap(row_knobs(&v)) < 16384))
            continue;
        /* cached slices (a locked chunks) serve rows up to their capacity */
        uint64_t top = row_knobs(&v)->chunks ? kn_row_cap(row_knobs(&v)) : INT32_MAX;
        out[n] = (rk_variant){.inst = v, .ndims = 2, .dim = {"M", "N"}, .lo = {splits[i].lo, 16384},
                              .hi = {hi, top}};
        snprintf(out[n].tag, sizeof out[n].tag, "%s", splits[i].tag);
        n++;
    }
    /* odd lengths the span serves, before every direct class (the first
     * matching variant runs); vec from the span pick at N = 3 */
    if (spans && n < max && tuned(&free, t, lfree, KN_VARIANT_ROWS, 3, &v) && row_knobs(&v)->stage == RK_STAGE_SPAN)
        n += span_classes(&free, lfree, t, row_knobs(&v)->vec, 1, INT32_MAX, out + n, max - n);
    /* cached rows: one variant per distinct pick of the heuristic over the
     * row lengths it caches (from N = 1 up; the norms' cached slices of
     * rows too long for one block included), each serving the lengths that
     * pick it, so a shape runs the kernel a build for it would (with split
     * views: any base) */
    uint64_t l2 = lk;
    rk_instance one = base;
    char name[256];
    /* the odd lengths' own picks: the direct classes with the split left to the shape (unless the
     * caller locked it; auto classes serve their odd lengths with the span) */
    rk_instance odd = base;
    uint64_t lodd = lk;
    bool wide = !ask_auto && !is_locked(in, locked, "split") && unlock(&odd, &lodd, "split");
    for (uint64_t from = 1; n < max && pick_at(&one, t, l2, from, &v, name, sizeof name);) {
        const rk_row_knobs *k = row_knobs(&v);
        /* a locked chunks (or vec, block) keeps the pick past its row
         * capacity: the cached classes end there, longer rows go to the
         * looped kernel (or are refused if that is capped too) */
        if (from > kn_row_cap(k)) break;
        uint64_t hi = class_end(&one, t, l2, from, kn_row_cap(k), name);
        if (k->slices == 1 && ask_auto) auto_class(&free, lfree, &staged, lstaged, t, from, hi, &v);
        k = row_knobs(&v);
        /* before the class: the first matching variant runs */
        if (wide && k->slices == 1 && n + 1 < max && wide_class(&odd, lodd, t, k->vec, from, hi, name, &out[n])) n++;
        out[n] = (rk_variant){.inst = v, .ndims = 1, .dim = {"N"}, .lo = {from}, .hi = {hi}};
        if (k->slices > 1) snprintf(out[n].tag, sizeof out[n].tag, "t%uc%us%u", kn_row_tpr(k), k->chunks, k->slices);
        else snprintf(out[n].tag, sizeof out[n].tag, "t%uc%u", kn_row_tpr(k), k->chunks);
        n++;
        from = hi + 1;
    }
    /* the rest: looped rows, one kernel for any shape */
    if (general) {
        uint64_t l3 = lk;
        rk_instance any = base;
        lock(&any, &l3, "chunks", "0");
        lock(&any, &l3, "slices", "1");
        if (!tuned(&any, t, l3, 4096, 65536, general)) *general = any;
    }
    return n;
}
