/* rocke — attribute maps: insertion-ordered key/value lists (small, so
 * linear lookup), deep equality and hashing for CSE, sorted views for
 * printing. Layer: ir. */
#include "ir_int.h"

const rk_attr_val *rk_attrs_get(const rk_attrs *a, const char *key) {
    for (uint32_t i = 0; i < a->n; i++)
        if (strcmp(a->items[i].key, key) == 0) return &a->items[i].val;
    return NULL;
}

bool rk_attrs_int(const rk_attrs *a, const char *key, int64_t *out) {
    const rk_attr_val *v = rk_attrs_get(a, key);
    if (!v) return false;
    if (v->kind == RK_AK_INT) { *out = v->u.i; return true; }
    if (v->kind == RK_AK_BOOL) { *out = v->u.b; return true; }
    return false;
}

bool rk_attrs_num(const rk_attrs *a, const char *key, double *out) {
    const rk_attr_val *v = rk_attrs_get(a, key);
    if (!v) return false;
    if (v->kind == RK_AK_FLOAT) { *out = v->u.f; return true; }
    if (v->kind == RK_AK_INT) { *out = (double)v->u.i; return true; }
    return false;
}

const char *rk_attrs_str(const rk_attrs *a, const char *key) {
    const rk_attr_val *v = rk_attrs_get(a, key);
    return v && v->kind == RK_AK_STR ? v->u.s : NULL;
}

bool rk_attrs_bool(const rk_attrs *a, const char *key, bool dflt) {
    const rk_attr_val *v = rk_attrs_get(a, key);
    if (!v) return dflt;
    if (v->kind == RK_AK_BOOL) return v->u.b;
    if (v->kind == RK_AK_INT) return v->u.i != 0;
    return dflt;
}

rk_attr_val *ir_attrs_put(rk_kernel *k, rk_attrs *a, const char *key) {
    for (uint32_t i = 0; i < a->n; i++)
        if (strcmp(a->items[i].key, key) == 0) return &a->items[i].val;
    rk_attr *items = rk_arena_grow(&k->arena, a->items, sizeof *items, &a->cap, a->n + 1);
    if (!items) return NULL;
    a->items = items;
    const char *kc = ir_intern(k, key);
    if (!kc) return NULL;
    rk_attr *at = &a->items[a->n++];
    at->key = kc;
    memset(&at->val, 0, sizeof at->val);
    return &at->val;
}


void ir_attrs_sorted(const rk_attrs *a, uint32_t *order) {
    for (uint32_t i = 0; i < a->n; i++) order[i] = i;
    /* insertion sort: maps are small and this needs no shared state */
    for (uint32_t i = 1; i < a->n; i++) {
        uint32_t v = order[i], j = i;
        while (j > 0 && strcmp(a->items[order[j - 1]].key, a->items[v].key) > 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = v;
    }
}

bool ir_attr_val_eq(const rk_attr_val *x, const rk_attr_val *y) {
    if (x->kind != y->kind) return false;
    switch (x->kind) {
    case RK_AK_INT: return x->u.i == y->u.i;
    case RK_AK_FLOAT: return memcmp(&x->u.f, &y->u.f, sizeof(double)) == 0;
    case RK_AK_STR: return strcmp(x->u.s, y->u.s) == 0;
    case RK_AK_BOOL: return x->u.b == y->u.b;
    case RK_AK_LIST:
        if (x->n != y->n) return false;
        for (uint32_t i = 0; i < x->n; i++)
            if (!ir_attr_val_eq(&x->u.list[i], &y->u.list[i])) return false;
        return true;
    case RK_AK_MAP: {
        rk_attrs mx = {x->u.map, x->n, x->n}, my = {y->u.map, y->n, y->n};
        return ir_attrs_eq(&mx, &my);
    }
    }
    return false;
}

bool ir_attrs_eq(const rk_attrs *x, const rk_attrs *y) {
    if (x->n != y->n) return false;
    for (uint32_t i = 0; i < x->n; i++) {
        const rk_attr_val *v = rk_attrs_get(y, x->items[i].key);
        if (!v || !ir_attr_val_eq(&x->items[i].val, v)) return false;
    }
    return true;
}

static uint64_t val_hash(const rk_attr_val *v, uint64_t h) {
    h = rk_hash_u64((uint64_t)v->kind, h);
    switch (v->kind) {
    case RK_AK_INT: return rk_hash_u64((uint64_t)v->u.i, h);
    case RK_AK_FLOAT: { uint64_t b; memcpy(&b, &v->u.f, 8); return rk_hash_u64(b, h); }
    case RK_AK_STR: return rk_hash_bytes(v->u.s, strlen(v->u.s), h);
    case RK_AK_BOOL: return rk_hash_u64(v->u.b, h);
    case RK_AK_LIST:
        for (uint32_t i = 0; i < v->n; i++) h = val_hash(&v->u.list[i], h);
        return h;
    case RK_AK_MAP: {
        uint64_t acc = 0;   /* order-independent */
        for (uint32_t i = 0; i < v->n; i++)
            acc += val_hash(&v->u.map[i].val, rk_hash_str(v->u.map[i].key));
        return rk_hash_u64(acc, h);
    }
    }
    return h;
}

uint64_t ir_attrs_hash(const rk_attrs *a) {
    uint64_t acc = 0;
    for (uint32_t i = 0; i < a->n; i++)
        acc += val_hash(&a->items[i].val, rk_hash_str(a->items[i].key));
    return acc;
}

static bool copy_into(rk_kernel *k, rk_attr_val *d, const rk_attr_val *v) {
    *d = *v;
    switch (v->kind) {
    case RK_AK_STR:
        d->u.s = rk_arena_strdup(&k->arena, v->u.s);
        return d->u.s != NULL;
    case RK_AK_LIST:
        d->u.list = rk_arena_alloc(&k->arena, (v->n ? v->n : 1) * sizeof *d->u.list);
        if (!d->u.list) return false;
        for (uint32_t i = 0; i < v->n; i++)
            if (!copy_into(k, &d->u.list[i], &v->u.list[i])) return false;
        return true;
    case RK_AK_MAP:
        d->u.map = rk_arena_alloc(&k->arena, (v->n ? v->n : 1) * sizeof *d->u.map);
        if (!d->u.map) return false;
        for (uint32_t i = 0; i < v->n; i++) {
            d->u.map[i].key = ir_intern(k, v->u.map[i].key);
            if (!d->u.map[i].key || !copy_into(k, &d->u.map[i].val, &v->u.map[i].val)) return false;
        }
        return true;
    case RK_AK_INT: case RK_AK_FLOAT: case RK_AK_BOOL:
        return true;
    }
    return true;
}

rk_attr_val *ir_attr_val_copy(rk_kernel *k, const rk_attr_val *v) {
    rk_attr_val *d = rk_arena_alloc(&k->arena, sizeof *d);
    return d && copy_into(k, d, v) ? d : NULL;
}

bool ir_attrs_copy(rk_kernel *k, rk_attrs *dst, const rk_attrs *src) {
    for (uint32_t i = 0; i < src->n; i++) {
        rk_attr_val *d = ir_attrs_put(k, dst, src->items[i].key);
        if (!d || !copy_into(k, d, &src->items[i].val)) return false;
    }
    return true;
}
