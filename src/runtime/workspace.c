/* rocke — the workspace pool: long-lived device scratch buffers keyed by name.
 * Asking for the same or a smaller size returns the buffer already held; a
 * larger size frees it and allocates anew (the driver's free waits for work
 * still using it). Not for concurrent use. Layer: runtime. */
#include <stdio.h>

#include "runtime_int.h"

typedef struct ws_slot {
    char *name;
    size_t bytes;              /* last size asked for */
    size_t cap;                /* bytes held */
    rk_devptr p;
} ws_slot;

struct rk_workspace_pool {
    rk_device *dev;
    ws_slot *slots;
    uint32_t n, cap;
};

rk_status rk_workspace_pool_new(rk_device *dev, rk_workspace_pool **out) {
    if (!dev || !out) return rk_fail(RK_ERR_INVALID, "rk_workspace_pool_new: NULL device or out");
    *out = rk_calloc(1, sizeof **out);
    if (!*out) return rk_fail(RK_ERR_NOMEM, "out of memory creating a workspace pool");
    (*out)->dev = dev;
    return RK_OK;
}

static ws_slot *find(const rk_workspace_pool *p, const char *name) {
    for (uint32_t i = 0; i < p->n; i++)
        if (!strcmp(p->slots[i].name, name)) return &p->slots[i];
    return NULL;
}

static rk_status release(rk_workspace_pool *p, ws_slot *s) {
    rk_status st = rk_mem_free(p->dev, s->p);
    rk_free(s->name, strlen(s->name) + 1);
    *s = p->slots[--p->n];
    return st;
}

rk_status rk_workspace_get(rk_workspace_pool *p, const char *name, size_t bytes, rk_devptr *out) {
    if (!p || !name || !out) return rk_fail(RK_ERR_INVALID, "rk_workspace_get: NULL pool, name or out");
    *out = 0;
    ws_slot *s = find(p, name);
    if (s && bytes <= s->cap) {
        s->bytes = bytes;
        *out = s->p;
        return RK_OK;
    }
    if (s) {
        /* free before allocating: the peak stays at the larger size */
        rk_status st = release(p, s);
        if (st != RK_OK) return rt_fail_prefix(st, "workspace '%s': freeing the old buffer", name);
    }
    if (p->n == p->cap) {
        uint32_t cap = p->cap ? 2 * p->cap : 8;
        ws_slot *ns = rk_realloc(p->slots, p->cap * sizeof *ns, cap * sizeof *ns);
        if (!ns) return rk_fail(RK_ERR_NOMEM, "out of memory growing the workspace pool");
        p->slots = ns;
        p->cap = cap;
    }
    ws_slot n = {.name = rk_strdup(name), .bytes = bytes, .cap = bytes};
    if (!n.name) return rk_fail(RK_ERR_NOMEM, "out of memory naming a workspace");
    rk_status st = rk_mem_alloc(p->dev, bytes, &n.p);
    if (st != RK_OK) {
        rk_free(n.name, strlen(n.name) + 1);
        return rt_fail_prefix(st, "workspace '%s' (%zu bytes)", name, bytes);
    }
    p->slots[p->n++] = n;
    *out = n.p;
    return RK_OK;
}

rk_status rk_workspace_prepare(rk_workspace_pool *p, const rk_workspace_spec *specs, uint32_t n, rk_devptr *out) {
    if (!p || (n && (!specs || !out))) return rk_fail(RK_ERR_INVALID, "rk_workspace_prepare: NULL pool, specs or out");
    for (uint32_t i = 0; i < n; i++) {
        if (!specs[i].name) return rk_fail(RK_ERR_INVALID, "workspace spec #%u has no name", i + 1);
        /* a second spec under one name could reallocate the first one's buffer */
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(specs[i].name, specs[j].name))
                return rk_fail(RK_ERR_INVALID, "workspace '%s' appears twice (specs #%u and #%u)", specs[i].name,
                               j + 1, i + 1);
    }
    for (uint32_t i = 0; i < n; i++) {
        rk_status s = rk_workspace_get(p, specs[i].name, specs[i].bytes, &out[i]);
        if (s != RK_OK) return s;
    }
    return RK_OK;
}

size_t rk_workspace_required_bytes(const rk_workspace_spec *specs, uint32_t n) {
    size_t total = 0;
    for (uint32_t i = 0; specs && i < n; i++) total += (specs[i].bytes + 255) & ~(size_t)255;
    return total;
}

bool rk_workspace_lookup(const rk_workspace_pool *p, const char *name, size_t *bytes, size_t *capacity) {
    const ws_slot *s = p && name ? find(p, name) : NULL;
    if (!s) return false;
    if (bytes) *bytes = s->bytes;
    if (capacity) *capacity = s->cap;
    return true;
}

size_t rk_workspace_capacity_bytes(const rk_workspace_pool *p) {
    size_t total = 0;
    for (uint32_t i = 0; p && i < p->n; i++) total += p->slots[i].cap;
    return total;
}

uint32_t rk_workspace_count(const rk_workspace_pool *p) { return p ? p->n : 0; }

rk_status rk_workspace_drop(rk_workspace_pool *p, const char *name) {
    if (!p || !name) return rk_fail(RK_ERR_INVALID, "rk_workspace_drop: NULL pool or name");
    ws_slot *s = find(p, name);
    if (!s) return rk_fail(RK_ERR_NOT_FOUND, "no workspace named '%s'", name);
    return release(p, s);
}

void rk_workspace_clear(rk_workspace_pool *p) {
    while (p && p->n) release(p, &p->slots[p->n - 1]);
}

void rk_workspace_pool_free(rk_workspace_pool *p) {
    if (!p) return;
    rk_workspace_clear(p);
    rk_free(p->slots, p->cap * sizeof *p->slots);
    rk_free(p, sizeof *p);
}
