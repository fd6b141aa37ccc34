/* rocke tests — device selection (ROCKE_DEVICE=cuda|hip with no driver is an
 * error listing what was tried; auto falls back to the emulator with a
 * one-line notice through the log callback, never on stderr, which quiet
 * suppresses; emu and emu:<target> work; bad
 * names list the legal ones), emulator memory, streams, events and graph
 * capture, the workspace pool, and the structure of timing results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "rocke/rocke.h"

static void has(const char *what) {
    if (!strstr(rk_error_message(), what)) fail_msg("message '%s' lacks '%s'", rk_error_message(), what);
}

/* Point both drivers at files that do not exist, so that the results do not
 * depend on the machine the tests run on. */
static int no_gpu(void **state) {
    (void)state;
    setenv("ROCKE_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
    setenv("ROCKE_HIP_LIB", "/nonexistent/libamdhip64.so", 1);
    unsetenv("ROCKE_DEVICE");
    unsetenv("ROCKE_QUIET");
    return 0;
}

/* The log callback: the notes it got, one per line, and their levels. */
static char logged[4096];
static void record(void *ud, rk_log_level level, const char *msg) {
    assert_ptr_equal(ud, logged);
    size_t off = strlen(logged);
    snprintf(logged + off, sizeof logged - off, "%s: %s\n", rk_log_level_name(level), msg);
}

/* Run open_fn with stderr captured into buf and the log callback into
 * logged; the library must leave stderr alone. */
static rk_status open_capturing(const rk_device_opts *o, rk_device **d, char *buf, size_t n) {
    logged[0] = '\0';
    rk_set_log_callback(record, logged);
    fflush(stderr);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    rk_status s = rk_device_open_opts(o, d);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t got = fread(buf, 1, n - 1, tmp);
    buf[got] = '\0';
    fclose(tmp);
    rk_set_log_callback(NULL, NULL);
    if (buf[0]) fail_msg("the library wrote to stderr: '%s'", buf);
    snprintf(buf, n, "%s", logged);
    return s;
}

/* ---- selection ------------------------------------------------------------------------- */
static void test_explicit_gpu_missing(void **state) {
    (void)state;
    rk_device *d = NULL;
    setenv("ROCKE_DEVICE", "cuda", 1);
    assert_int_equal(rk_device_open(NULL, &d), RK_ERR_DEVICE);
    assert_null(d);
    has("device 'cuda' asked for, but no CUDA device could be opened (tried /nonexistent/libcuda.so.1)");
    has("No such file or directory");
    setenv("ROCKE_DEVICE", "hip", 1);
    assert_int_equal(rk_device_open(NULL, &d), RK_ERR_DEVICE);
    has("device 'hip' asked for, but no HIP device could be opened");
    has("/nonexistent/libamdhip64.so");
    unsetenv("ROCKE_DEVICE");
    /* the explicit argument wins over the environment */
    setenv("ROCKE_DEVICE", "bogus", 1);
    assert_int_equal(rk_device_open("emu", &d), RK_OK);
    rk_device_close(d);
    assert_int_equal(rk_device_open(NULL, &d), RK_ERR_INVALID);
    has("unknown device 'bogus' (legal: auto, cuda, cuda:<index>, hip, hip:<index>, emu, emu:<target>");
    unsetenv("ROCKE_DEVICE");
    assert_int_equal(rk_device_open("emu:gfx999", &d), RK_ERR_INVALID);
    has("unknown target 'gfx999'");
    has("sm_90a");
    assert_int_equal(rk_device_open("auto:1", &d), RK_ERR_INVALID);
}

static void test_auto_falls_back(void **state) {
    (void)state;
    char err[4096];
    rk_device *d = NULL;
    rk_device_opts o = {0};
    assert_int_equal(open_capturing(&o, &d, err, sizeof err), RK_OK);
    assert_int_equal(rk_device_kind_of(d), RK_DEVICE_EMU);
    assert_string_equal(rk_device_target(d), "gfx950");
    if (!strstr(err, "note: no GPU found (tried /nonexistent/libcuda.so.1: ") ||
        !strstr(err, "; /nonexistent/libamdhip64.so: ") || !strstr(err, "), using the emulator\n"))
        fail_msg("notice was '%s'", err);
    /* one line */
    assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
    assert_non_null(strstr(rk_device_probe_log(d), "/nonexistent/libcuda.so.1: "));
    rk_device_close(d);

    o.quiet = true;
    o.emu_target = "sm_90a";
    assert_int_equal(open_capturing(&o, &d, err, sizeof err), RK_OK);
    assert_string_equal(err, "");
    assert_string_equal(rk_device_target(d), "sm_90a");
    rk_device_close(d);
    setenv("ROCKE_QUIET", "1", 1);
    o.quiet = false;
    assert_int_equal(open_capturing(&o, &d, err, sizeof err), RK_OK);
    assert_string_equal(err, "");
    rk_device_close(d);
    unsetenv("ROCKE_QUIET");
}

static void test_emu_device(void **state) {
    (void)state;
    rk_device *d = NULL;
    assert_int_equal(rk_device_open("emu:sm_90a", &d), RK_OK);
    const rk_device_info *in = rk_device_info_of(d);
    assert_int_equal(in->kind, RK_DEVICE_EMU);
    assert_string_equal(in->target, "sm_90a");
    assert_int_equal(in->warp_size, 32);
    assert_int_equal(in->smem_per_block, 232448);
    assert_non_null(strstr(in->name, "emulator"));
    assert_non_null(strstr(in->driver, "host clock"));
    assert_string_equal(rk_device_kind_name(in->kind), "emu");
    rk_device_close(d);
    assert_int_equal(rk_device_open("emu:gfx942", &d), RK_OK);
    assert_int_equal(rk_device_info_of(d)->warp_size, 64);
    rk_device_close(d);
}

/* ---- memory, streams, events, graphs on the emulator ------------------------------------------ */
static void test_emu_memory(void **state) {
    (void)state;
    rk_device *d = NULL;
    assert_int_equal(rk_device_open("emu", &d), RK_OK);
    enum { N = 777 };
    uint8_t src[N], back[N];
    for (int i = 0; i < N; i++) src[i] = (uint8_t)(i * 37 + 1);
    rk_devptr a, b;
    assert_int_equal(rk_mem_alloc(d, N, &a), RK_OK);
    assert_int_equal(rk_mem_alloc(d, N, &b), RK_OK);
    assert_int_equal(rk_mem_copy_htod(d, a, src, N), RK_OK);
    rk_stream *s = NULL;
    assert_int_equal(rk_stream_create(d, &s), RK_OK);
    assert_int_equal(rk_mem_copy_dtod(d, b, a, N, s), RK_OK);
    assert_int_equal(rk_mem_memset(d, b + 10, 0x11, 5, s), RK_OK);
    assert_int_equal(rk_stream_synchronize(d, s), RK_OK);
    assert_int_equal(rk_mem_copy_dtoh(d, back, b, N), RK_OK);
    for (int i = 0; i < N; i++) assert_int_equal(back[i], i >= 10 && i < 15 ? 0x11 : src[i]);
    /* a copy running past the end of the buffer is refused, naming the overrun */
    assert_int_equal(rk_mem_copy_dtoh(d, back, b + 700, 100), RK_ERR_INVALID);
    has("runs 23 bytes past the end");
    assert_int_equal(rk_mem_copy_htod(d, 12345, src, 4), RK_ERR_INVALID);
    has("not in any buffer");

    /* a graph records memsets and copies, runs them only when replayed */
    assert_int_equal(rk_graph_capture_begin(s), RK_OK);
    assert_int_equal(rk_graph_capture_begin(s), RK_ERR_INVALID);
    assert_int_equal(rk_mem_memset(d, b, 0x22, N, s), RK_OK);
    assert_int_equal(rk_mem_copy_dtod(d, b, a, 3, s), RK_OK);
    assert_int_equal(rk_stream_synchronize(d, s), RK_ERR_INVALID);
    rk_graph *g = NULL;
    assert_int_equal(rk_graph_capture_end(s, &g), RK_OK);
    assert_int_equal(rk_mem_copy_dtoh(d, back, b, N), RK_OK);
    assert_int_equal(back[20], src[20]);            /* not yet */
    assert_int_equal(rk_graph_launch(g, s), RK_OK);
    assert_int_equal(rk_mem_copy_dtoh(d, back, b, N), RK_OK);
    for (int i = 0; i < N; i++) assert_int_equal(back[i], i < 3 ? src[i] : 0x22);
    assert_int_equal(rk_graph_capture_begin(NULL), RK_ERR_INVALID);
    has("not the default stream");

    /* events on the host clock */
    rk_event *e0, *e1;
    assert_int_equal(rk_event_create(d, &e0), RK_OK);
    assert_int_equal(rk_event_create(d, &e1), RK_OK);
    double ms = -1;
    assert_int_equal(rk_event_elapsed_ms(e0, e1, &ms), RK_ERR_INVALID);
    has("never recorded");
    assert_int_equal(rk_event_record(e0, s), RK_OK);
    assert_int_equal(rk_event_record(e1, NULL), RK_OK);
    bool done = false;
    assert_int_equal(rk_event_query(e1, &done), RK_OK);
    assert_true(done);
    assert_int_equal(rk_event_synchronize(e1), RK_OK);
    assert_int_equal(rk_event_elapsed_ms(e0, e1, &ms), RK_OK);
    assert_true(ms >= 0);
    rk_event_destroy(e0);
    assert_int_equal(rk_mem_free(d, a), RK_OK);
    assert_int_equal(rk_mem_free(d, b), RK_OK);
    /* the graph, e1 and s are still open: close frees them */
    rk_device_close(d);
}

/* ---- workspaces ------------------------------------------------------------------------------------ */
static void test_workspace(void **state) {
    (void)state;
    rk_device *d = NULL;
    assert_int_equal(rk_device_open("emu", &d), RK_OK);
    rk_workspace_pool *p = NULL;
    assert_int_equal(rk_workspace_pool_new(d, &p), RK_OK);
    rk_devptr a, a2, a3, b;
    size_t bytes, cap;
    assert_int_equal(rk_workspace_get(p, "acc", 1000, &a), RK_OK);
    uint8_t mark[1000];
    memset(mark, 0x5c, sizeof mark);
    assert_int_equal(rk_mem_copy_htod(d, a, mark, sizeof mark), RK_OK);
    /* same size: same buffer; smaller: the same buffer, capacity kept */
    assert_int_equal(rk_workspace_get(p, "acc", 1000, &a2), RK_OK);
    assert_true(a2 == a);
    assert_int_equal(rk_workspace_get(p, "acc", 10, &a2), RK_OK);
    assert_true(a2 == a);
    assert_true(rk_workspace_lookup(p, "acc", &bytes, &cap));
    assert_int_equal(bytes, 10);
    assert_int_equal(cap, 1000);
    uint8_t back[1000];
    assert_int_equal(rk_mem_copy_dtoh(d, back, a2, sizeof back), RK_OK);
    assert_memory_equal(back, mark, sizeof back);   /* contents survive reuse */
    /* larger: a new buffer */
    assert_int_equal(rk_workspace_get(p, "acc", 5000, &a3), RK_OK);
    assert_true(a3 != a);
    assert_true(rk_workspace_lookup(p, "acc", &bytes, &cap));
    assert_int_equal(cap, 5000);
    assert_int_equal(rk_mem_copy_dtoh(d, back, a, 4), RK_ERR_INVALID);   /* the old one is gone */
    assert_int_equal(rk_workspace_get(p, "tmp", 300, &b), RK_OK);
    assert_int_equal(rk_workspace_count(p), 2);
    assert_int_equal(rk_workspace_capacity_bytes(p), 5300);
    /* prepare: several at once; a name twice is refused */
    const rk_workspace_spec specs[] = {{"acc", 4000}, {"lse", 64}, {"tmp", 301}};
    rk_devptr out[3];
    assert_int_equal(rk_workspace_prepare(p, specs, 3, out), RK_OK);
    assert_true(out[0] == a3);
    assert_true(out[2] != b);   /* grew by one byte */
    assert_int_equal(rk_workspace_capacity_bytes(p), 5000 + 64 + 301);
    assert_int_equal(rk_workspace_required_bytes(specs, 3), 4096 + 256 + 512);
    const rk_workspace_spec dup[] = {{"x", 1}, {"x", 2}};
    assert_int_equal(rk_workspace_prepare(p, dup, 2, out), RK_ERR_INVALID);
    has("'x' appears twice");
    assert_int_equal(rk_workspace_drop(p, "lse"), RK_OK);
    assert_int_equal(rk_workspace_drop(p, "lse"), RK_ERR_NOT_FOUND);
    has("no workspace named 'lse'");
    assert_false(rk_workspace_lookup(p, "lse", NULL, NULL));
    assert_int_equal(rk_workspace_count(p), 2);
    rk_workspace_clear(p);
    assert_int_equal(rk_workspace_count(p), 0);
    assert_int_equal(rk_workspace_capacity_bytes(p), 0);
    assert_int_equal(rk_workspace_get(p, "again", 0, &b), RK_OK);   /* zero bytes: a null buffer */
    assert_true(b == 0);
    rk_workspace_pool_free(p);
    rk_device_close(d);
}

/* ---- timing structure ------------------------------------------------------------------------------- */
typedef struct fill_work { rk_device *d; rk_devptr p; size_t n; int calls; } fill_work;
static rk_status fill_run(void *ud, rk_stream *s) {
    fill_work *w = ud;
    w->calls++;
    return rk_mem_memset(w->d, w->p, (uint8_t)w->calls, w->n, s);
}
static rk_status failing_run(void *ud, rk_stream *s) {
    int *calls = ud;
    (void)s;
    return ++*calls == 4 ? rk_fail(RK_ERR_DEVICE, "boom") : RK_OK;
}

static void test_timing(void **state) {
    (void)state;
    rk_device *d = NULL;
    assert_int_equal(rk_device_open("emu", &d), RK_OK);
    fill_work w = {.d = d, .n = 1 << 16};
    assert_int_equal(rk_mem_alloc(d, w.n, &w.p), RK_OK);
    rk_time_result r;
    rk_time_opts o = {.warmup = 3, .iters = 9};
    assert_int_equal(rk_time_launches(d, fill_run, &w, &o, &r), RK_OK);
    assert_int_equal(w.calls, 12);
    assert_int_equal(r.samples, 9);
    assert_int_equal(r.runs_per_sample, 1);
    assert_int_equal(r.clock, RK_CLOCK_HOST_EMULATOR);
    assert_string_equal(rk_clock_name(r.clock), "host clock (emulator)");
    assert_true(0 <= r.min_ms && r.min_ms <= r.median_ms && r.median_ms <= r.max_ms);
    assert_true(r.min_ms <= r.mean_ms && r.mean_ms <= r.max_ms);
    if (r.median_ms > 0) assert_true(r.spread == (r.max_ms - r.min_ms) / r.median_ms);
    assert_true(r.burst_ms >= r.min_ms * 0.5);
    assert_false(r.graph || r.flushed);
    /* flushed and graph-replayed */
    o.flush_l2 = true;
    o.graph = true;
    o.replays = 4;
    w.calls = 0;
    assert_int_equal(rk_time_launches(d, fill_run, &w, &o, &r), RK_OK);
    assert_int_equal(w.calls, 3 + 9);   /* warm-up, then captured once */
    assert_int_equal(r.samples, 4);
    assert_int_equal(r.runs_per_sample, 9);
    assert_true(r.flushed && r.graph);
    uint8_t last;
    assert_int_equal(rk_mem_copy_dtoh(d, &last, w.p, 1), RK_OK);
    assert_int_equal(last, 12);        /* replays repeat the captured values */
    /* defaults */
    w.calls = 0;
    assert_int_equal(rk_time_launches(d, fill_run, &w, NULL, &r), RK_OK);
    assert_int_equal(w.calls, 105);
    assert_int_equal(r.samples, 100);
    /* a failing run is reported with its position */
    int calls = 0;
    o = (rk_time_opts){.warmup = 2, .iters = 5};
    assert_int_equal(rk_time_launches(d, failing_run, &calls, &o, &r), RK_ERR_DEVICE);
    has("timed run 2: boom");
    calls = 0;
    o.graph = true;
    assert_int_equal(rk_time_launches(d, failing_run, &calls, &o, &r), RK_ERR_DEVICE);
    has("captured run 2: boom");
    rk_mem_free(d, w.p);
    rk_device_close(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_explicit_gpu_missing), cmocka_unit_test(test_auto_falls_back),
        cmocka_unit_test(test_emu_device),           cmocka_unit_test(test_emu_memory),
        cmocka_unit_test(test_workspace),            cmocka_unit_test(test_timing),
    };
    return cmocka_run_group_tests(tests, no_gpu, NULL);
}
