/* rocke — device selection (ROCKE_DEVICE=auto|cuda|hip|emu), open and close,
 * device queries and the memory calls, dispatched to the backend.
 * Layer: runtime. */
#include <stdio.h>
#include <stdlib.h>

#include "runtime_int.h"

const char *rk_device_kind_name(rk_device_kind k) {
    switch (k) {
    case RK_DEVICE_EMU: return "emu";
    case RK_DEVICE_CUDA: return "cuda";
    case RK_DEVICE_HIP: return "hip";
    }
    return "?";
}

void rt_device_finish_info(rk_device *d) {
    d->info.name = d->name;
    d->info.arch = d->arch;
    d->info.target = d->target;
    d->info.driver = d->driver;
    if (!d->info.smem_per_block_optin) d->info.smem_per_block_optin = d->info.smem_per_block;
}

/* ---- open / close ---------------------------------------------------------------- */
static rk_device *device_new(void) {
    rk_device *d = rk_calloc(1, sizeof *d);
    if (!d) return NULL;
    rt_list_init(&d->modules);
    rt_list_init(&d->streams);
    rt_list_init(&d->events);
    rt_list_init(&d->graphs);
    return d;
}

static void device_free(rk_device *d) {
    if (d->probe_log) rk_free(d->probe_log, strlen(d->probe_log) + 1);
    rk_free(d, sizeof *d);
}

/* "cuda:1" -> index 1; "cuda" -> 0. */
static bool parse_index(const char *suffix, int *index) {
    if (!suffix) { *index = 0; return true; }
    char *end;
    long v = strtol(suffix, &end, 10);
    if (!*suffix || *end || v < 0 || v > 1024) return false;
    *index = (int)v;
    return true;
}

static rk_status open_gpu(rk_device *d, rk_device_kind k, int index) {
    return k == RK_DEVICE_CUDA ? rt_cuda_open(d, index) : rt_hip_open(d, index);
}

static bool quiet_env(void) {
    const char *q = getenv("ROCKE_QUIET");
    return q && *q && strcmp(q, "0") != 0;
}

static rk_status open_auto(rk_device *d, const rk_device_opts *o) {
    char why[2][1024];
    const rk_device_kind kinds[2] = {RK_DEVICE_CUDA, RK_DEVICE_HIP};
    for (int i = 0; i < 2; i++) {
        if (open_gpu(d, kinds[i], 0) == RK_OK) return RK_OK;
        snprintf(why[i], sizeof why[i], "%s", rk_error_message());
    }
    const rk_target *t = rk_target_find(o->emu_target ? o->emu_target : rk_target_default()->name);
    if (!t) return RK_ERR_INVALID;
    rk_buf log;
    rk_buf_init(&log);
    rk_buf_printf(&log, "%s: %s; %s: %s", rt_cuda_lib_name(), why[0], rt_hip_lib_name(), why[1]);
    d->probe_log = rk_buf_take(&log);
    if (!d->probe_log) return rk_fail(RK_ERR_NOMEM, "out of memory opening a device");
    rk_status s = rt_emu_open(d, t, o->emu_options);
    if (s != RK_OK) return s;
    if (!o->quiet && !quiet_env())
        rk_log(RK_LOG_NOTE, "no GPU found (tried %s), using the emulator", d->probe_log);
    return RK_OK;
}

static rk_status open_named(rk_device *d, const char *which, const rk_device_opts *o) {
    char word[32];
    const char *colon = strchr(which, ':');
    size_t n = colon ? (size_t)(colon - which) : strlen(which);
    const char *suffix = colon ? colon + 1 : NULL;
    if (n >= sizeof word) n = sizeof word - 1;
    memcpy(word, which, n);
    word[n] = '\0';

    if (!strcmp(word, "auto") && !suffix) return open_auto(d, o);
    if (!strcmp(word, "emu")) {
        const char *tn = suffix ? suffix : o->emu_target ? o->emu_target : rk_target_default()->name;
        const rk_target *t = rk_target_find(tn);
        if (!t) return rt_fail_prefix(RK_ERR_INVALID, "device '%s'", which);
        return rt_emu_open(d, t, o->emu_options);
    }
    rk_device_kind k = !strcmp(word, "cuda") ? RK_DEVICE_CUDA : !strcmp(word, "hip") ? RK_DEVICE_HIP : RK_DEVICE_EMU;
    if (k == RK_DEVICE_EMU)
        return rk_fail(RK_ERR_INVALID, "unknown device '%s' (legal: auto, cuda, cuda:<index>, hip, hip:<index>, "
                       "emu, emu:<target>; targets: %s)", which, rk_target_names());
    int index;
    if (!parse_index(suffix, &index))
        return rk_fail(RK_ERR_INVALID, "device '%s': '%s' is not a device index (use %s or %s:<index>)", which,
                       suffix, word, word);
    if (open_gpu(d, k, index) != RK_OK)
        return rt_fail_prefix(RK_ERR_DEVICE, "device '%s' asked for, but no %s device could be opened (tried %s)",
                              which, k == RK_DEVICE_CUDA ? "CUDA" : "HIP",
                              k == RK_DEVICE_CUDA ? rt_cuda_lib_name() : rt_hip_lib_name());
    return RK_OK;
}

rk_status rk_device_open_opts(const rk_device_opts *o, rk_device **out) {
    if (!out) return rk_fail(RK_ERR_INVALID, "rk_device_open: out is NULL");
    *out = NULL;
    rk_device_opts dflt = {0};
    if (!o) o = &dflt;
    const char *which = o->which;
    if (!which || !*which) which = getenv("ROCKE_DEVICE");
    if (!which || !*which) which = "auto";
    rk_device *d = device_new();
    if (!d) return rk_fail(RK_ERR_NOMEM, "out of memory opening a device");
    rk_status s = open_named(d, which, o);
    if (s != RK_OK) {
        device_free(d);
        return s;
    }
    if (!d->probe_log) d->probe_log = rk_strdup("");
    if (!d->probe_log) {
        d->be->close(d);
        device_free(d);
        return rk_fail(RK_ERR_NOMEM, "out of memory opening a device");
    }
    rt_device_finish_info(d);
    *out = d;
    return RK_OK;
}

rk_status rk_device_open(const char *which, rk_device **out) {
    rk_device_opts o = {.which = which};
    return rk_device_open_opts(&o, out);
}

void rk_device_close(rk_device *d) {
    if (!d) return;
    /* dependants first: graphs and events may refer to streams, functions to modules */
    while (d->graphs.next != &d->graphs) rk_graph_destroy((rk_graph *)d->graphs.next);
    while (d->events.next != &d->events) rk_event_destroy((rk_event *)d->events.next);
    while (d->streams.next != &d->streams) rk_stream_destroy((rk_stream *)d->streams.next);
    while (d->modules.next != &d->modules) rk_module_unload((rk_module *)d->modules.next);
    d->be->close(d);
    device_free(d);
}

const rk_device_info *rk_device_info_of(const rk_device *d) { return d ? &d->info : NULL; }
rk_device_kind rk_device_kind_of(const rk_device *d) { return d ? d->info.kind : RK_DEVICE_EMU; }
const char *rk_device_name(const rk_device *d) { return d ? d->name : ""; }
const char *rk_device_target(const rk_device *d) { return d ? d->target : ""; }
const char *rk_device_probe_log(const rk_device *d) { return d && d->probe_log ? d->probe_log : ""; }

rk_status rk_device_synchronize(rk_device *d) {
    if (!d) return rk_fail(RK_ERR_INVALID, "rk_device_synchronize: device is NULL");
    return d->be->synchronize(d);
}

/* ---- memory -------------------------------------------------------------------------- */
static rk_status check_stream(rk_device *d, rk_stream *s, const char *who) {
    if (!d) return rk_fail(RK_ERR_INVALID, "%s: device is NULL", who);
    if (s && s->dev != d) return rk_fail(RK_ERR_INVALID, "%s: the stream belongs to another device", who);
    return RK_OK;
}

rk_status rk_mem_alloc(rk_device *d, size_t bytes, rk_devptr *out) {
    if (!d || !out) return rk_fail(RK_ERR_INVALID, "rk_mem_alloc: device or out is NULL");
    *out = 0;
    if (!bytes) return RK_OK;
    return d->be->mem_alloc(d, bytes, out);
}

rk_status rk_mem_free(rk_device *d, rk_devptr p) {
    if (!d) return rk_fail(RK_ERR_INVALID, "rk_mem_free: device is NULL");
    return p ? d->be->mem_free(d, p) : RK_OK;
}

rk_status rk_mem_copy_htod(rk_device *d, rk_devptr dst, const void *src, size_t n) {
    if (!d || (n && (!dst || !src))) return rk_fail(RK_ERR_INVALID, "rk_mem_copy_htod: NULL device, source or destination");
    return n ? d->be->htod(d, dst, src, n) : RK_OK;
}

rk_status rk_mem_copy_dtoh(rk_device *d, void *dst, rk_devptr src, size_t n) {
    if (!d || (n && (!dst || !src))) return rk_fail(RK_ERR_INVALID, "rk_mem_copy_dtoh: NULL device, source or destination");
    return n ? d->be->dtoh(d, dst, src, n) : RK_OK;
}

rk_status rk_mem_copy_dtod(rk_device *d, rk_devptr dst, rk_devptr src, size_t n, rk_stream *s) {
    rk_status st = check_stream(d, s, "rk_mem_copy_dtod");
    if (st != RK_OK) return st;
    if (n && (!dst || !src)) return rk_fail(RK_ERR_INVALID, "rk_mem_copy_dtod: NULL source or destination");
    return n ? d->be->dtod(d, dst, src, n, s) : RK_OK;
}

rk_status rk_mem_memset(rk_device *d, rk_devptr dst, uint8_t byte, size_t n, rk_stream *s) {
    rk_status st = check_stream(d, s, "rk_mem_memset");
    if (st != RK_OK) return st;
    if (n && !dst) return rk_fail(RK_ERR_INVALID, "rk_mem_memset: NULL destination");
    return n ? d->be->memset(d, dst, byte, n, s) : RK_OK;
}

rk_status rk_mem_name(rk_device *d, rk_devptr p, const char *name) {
    if (!d || !p || !name) return rk_fail(RK_ERR_INVALID, "rk_mem_name: NULL device, pointer or name");
    return d->be->mem_name ? d->be->mem_name(d, p, name) : RK_OK;
}
