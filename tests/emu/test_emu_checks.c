/* rocke tests — the emulator's checkers fire on planted bugs and stay quiet
 * on the corrected kernels: out-of-bounds global and LDS accesses (message
 * names op, lane, workgroup, address, nearest buffer), LDS races between
 * waves (a missing barrier), barrier deadlock and partial-mask barriers, and
 * reading an async copy's destination before its wait (cp.async and the AMD
 * DMA forms). Each check can be turned off. Layer: tests. */
#include "emu_test.h"

static rk_emu *emu_opts(const char *t, bool checks) {
    rk_emu_options o = rk_emu_options_default();
    o.threads = 2;
    o.check_races = o.check_barriers = o.check_async = checks;
    rk_emu *e = rk_emu_new(rk_target_find(t), &o);
    assert_non_null(e);
    return e;
}

/* ---- out of bounds ------------------------------------------------------------------------- */
static void t_oob_global(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("copy");
    rk_value in = et_ptr_param(k, "in", RK_T_F32), out = et_ptr_param(k, "out", RK_T_F32);
    rk_value nv = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value i = et_gid(k);
    rk_value ok = rk_build_cmp(k, "lt", i, nv);
    rk_if_begin(k, ok);
    rk_set_loc(k, "copy.c:12");
    rk_value v = rk_load_global(k, in, i, 1);
    rk_set_loc(k, "copy.c:13");
    rk_store_global(k, out, i, v);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    float a[300], b[250];
    for (int j = 0; j < 300; j++) a[j] = (float)j;
    rk_emu *e = et_emu("gfx950", 2);
    uint64_t ab = et_buf(e, a, sizeof a, "in"), bb = et_buf(e, b, sizeof b, "out");
    int32_t n = 300;
    void *args[] = {&ab, &bb, &n};
    /* element 250 is the first past 'out': workgroup 1 (threads 128..255), wave 1, lane 58 */
    char addr[64];
    snprintf(addr, sizeof addr, "at 0x%llx", (unsigned long long)(bb + 1000));
    et_expect_error(et_launch(e, k, 3, 1, 1, 128, 1, 1, args), RK_ERR_DEVICE, "out-of-bounds global write of 4 bytes",
                    addr, "buffer 'out'", "4 bytes past the end", "(1000 bytes)", "'memref.global_store_typed'",
                    "@\"copy.c:13\"", "workgroup (1,0,0) wave 1 lane 58 (thread (122,0,0))", NULL);
    /* the lowest failing workgroup is reported even with several threads */
    n = 250;
    assert_int_equal(et_launch(e, k, 3, 1, 1, 128, 1, 1, args), RK_OK);
    for (int j = 0; j < 250; j++) assert_true(b[j] == (float)j);
    /* a null pointer and an address between buffers */
    uint64_t nul = 0;
    void *args2[] = {&nul, &bb, &n};
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, args2), RK_ERR_DEVICE, "null pointer", "global read", NULL);
    uint64_t before = ab - 64;
    void *args3[] = {&before, &bb, &n};
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, args3), RK_ERR_DEVICE, "64 bytes before buffer 'in'", NULL);
    /* a released buffer is gone */
    assert_int_equal(rk_emu_release(e, ab), RK_OK);
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE, "out-of-bounds global read", NULL);
    rk_emu_free(e);
    rk_kernel_free(k);
}

static void t_oob_lds(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("lds");
    rk_value off = rk_add_param(k, "off", RK_T_I32, NULL);
    uint32_t dims[2] = {4, 32};
    rk_value sm = rk_build_smem_alloc(k, RK_T_F32, dims, 2);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value row = rk_build_lshr(k, tid, rk_const_i32(k, 5));
    rk_value col0 = rk_build_and(k, tid, rk_const_i32(k, 31));
    rk_value col = rk_build_add(k, col0, off);
    rk_value ix[2] = {row, col};
    rk_value one = rk_const_f32(k, 1.0f);
    rk_store_smem(k, sm, ix, one);
    rk_build_return(k);
    et_finish(k);
    rk_emu *e = et_emu("sm_90", 1);
    int32_t o = 0;
    void *args[] = {&o};
    assert_int_equal(et_launch(e, k, 1, 1, 1, 128, 1, 1, args), RK_OK);
    o = 1;   /* thread 127 writes element 128 of 128 */
    et_expect_error(et_launch(e, k, 1, 1, 1, 128, 1, 1, args), RK_ERR_DEVICE, "LDS access out of bounds",
                    "elements [128, 129)", "smem<f32, [4x32]>", "lane 31 (thread (127,0,0))", NULL);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* ---- races ---------------------------------------------------------------------------------- */
/* sm[tid] = tid; [sync]; out[tid] = sm[(tid + 64) % 256] — without the sync
 * wave 1 reads what wave 0... no: wave 0 reads wave 1's slot before wave 1
 * ran; the checker sees the write-after-read when wave 1 stores. */
static rk_kernel *neighbour_kernel(bool sync) {
    rk_kernel *k = rk_kernel_new(sync ? "good" : "racy");
    rk_value out = et_ptr_param(k, "out", RK_T_I32);
    uint32_t d = 256;
    rk_value sm = rk_build_smem_alloc(k, RK_T_I32, &d, 1);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_set_loc(k, "nb.c:5");
    rk_store_smem(k, sm, &tid, tid);
    if (sync) rk_build_sync(k);
    rk_value c64 = rk_const_i32(k, 64), m = rk_const_i32(k, 255);
    rk_value j0 = rk_build_add(k, tid, c64);
    rk_value j = rk_build_and(k, j0, m);
    rk_set_loc(k, "nb.c:7");
    rk_value v = rk_load_smem(k, sm, &j, 1);
    rk_store_global(k, out, tid, v);
    rk_build_return(k);
    et_finish(k);
    return k;
}

static void t_race(void **state) {
    (void)state;
    const char *targets[] = {"gfx950", "sm_80"};
    for (int t = 0; t < 2; t++) {
        int32_t o[256];
        rk_emu *e = emu_opts(targets[t], true);
        uint64_t ob = et_buf(e, o, sizeof o, "out");
        void *args[] = {&ob};
        rk_kernel *bad = neighbour_kernel(false), *good = neighbour_kernel(true);
        et_expect_error(et_launch(e, bad, 1, 1, 1, 256, 1, 1, args), RK_ERR_DEVICE, "LDS data race on LDS 0x100",
                        "%smem", "+ 256", "this write and the read by wave 0 lane 0 at op #", "@\"nb.c:7\"",
                        "'tile.smem_store'", "@\"nb.c:5\"", NULL);
        assert_int_equal(et_launch(e, good, 1, 1, 1, 256, 1, 1, args), RK_OK);
        for (int j = 0; j < 256; j++) assert_int_equal(o[j], (j + 64) & 255);
        rk_emu_free(e);
        /* with the check off the racy kernel runs (and gives what the wave order gives) */
        e = emu_opts(targets[t], false);
        ob = et_buf(e, o, sizeof o, "out");
        assert_int_equal(et_launch(e, bad, 1, 1, 1, 256, 1, 1, args), RK_OK);
        rk_emu_free(e);
        rk_kernel_free(bad);
        rk_kernel_free(good);
    }
}

/* LDS atomics from every wave between the same barriers are not a race. */
static void t_atomics_not_racy(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("hist");
    rk_value out = et_ptr_param(k, "out", RK_T_I32);
    uint32_t d = 4;
    rk_value sm = rk_build_smem_alloc(k, RK_T_I32, &d, 1);
    rk_value tid = rk_build_thread_id(k, 0), zero = rk_const_i32(k, 0);
    rk_value lt4 = rk_build_cmp(k, "lt", tid, rk_const_i32(k, 4));
    rk_if_begin(k, lt4);
    rk_store_smem(k, sm, &tid, zero);
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
    rk_value bin = rk_build_and(k, tid, rk_const_i32(k, 3));
    rk_value one = rk_const_i32(k, 1);
    rk_value old = rk_build_lds_atomic_add(k, sm, &bin, one);
    (void)old;
    rk_build_sync(k);
    rk_if_begin(k, lt4);
    rk_value v = rk_load_smem(k, sm, &tid, 1);
    rk_store_global(k, out, tid, v);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    int32_t o[4];
    rk_emu *e = emu_opts("gfx942", true);
    uint64_t ob = et_buf(e, o, sizeof o, "out");
    void *args[] = {&ob};
    assert_int_equal(et_launch(e, k, 1, 1, 1, 256, 1, 1, args), RK_OK);
    for (int j = 0; j < 4; j++) assert_int_equal(o[j], 64);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* ---- barriers ---------------------------------------------------------------------------------- */
static rk_kernel *guarded_sync(int32_t limit) {
    rk_kernel *k = rk_kernel_new("guarded");
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value c = rk_build_cmp(k, "lt", tid, rk_const_i32(k, limit));
    rk_if_begin(k, c);
    rk_set_loc(k, "g.c:3");
    rk_build_sync(k);
    rk_set_loc(k, NULL);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    return k;
}

static void t_barriers(void **state) {
    (void)state;
    rk_emu *e = emu_opts("gfx950", true);
    /* waves 0 and 1 reach the barrier, waves 2 and 3 skip it */
    rk_kernel *k = guarded_sync(128);
    et_expect_error(et_launch(e, k, 1, 1, 1, 256, 1, 1, NULL), RK_ERR_DEVICE, "barrier deadlock",
                    "wave 0 waits at op #4 'tile.sync' @\"g.c:3\"", "wave 1 waits at", "wave 2 finished at op #5 'cf.return'",
                    NULL);
    rk_kernel_free(k);
    /* half of wave 0 takes the barrier: divergent */
    k = guarded_sync(32);
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, NULL), RK_ERR_DEVICE,
                    "barrier reached under a partial exec mask (active lanes 0xffffffff of 0xffffffffffffffff)", NULL);
    /* a whole single wave under the guard is fine; so is a partial block */
    assert_int_equal(et_launch(e, k, 1, 1, 1, 32, 1, 1, NULL), RK_OK);
    rk_emu_free(e);
    e = emu_opts("gfx950", false);
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, NULL), RK_OK);     /* checks off: s_barrier is per wave */
    rk_kernel_free(k);
    k = guarded_sync(128);
    /* a deadlock cannot be run through even with the checks off */
    et_expect_error(et_launch(e, k, 1, 1, 1, 256, 1, 1, NULL), RK_ERR_DEVICE, "barrier deadlock", NULL);
    rk_kernel_free(k);
    rk_emu_free(e);
    /* on warp32: 3 warps of 32 under tid < 64 */
    e = emu_opts("sm_90", true);
    k = guarded_sync(64);
    et_expect_error(et_launch(e, k, 1, 1, 1, 96, 1, 1, NULL), RK_ERR_DEVICE, "wave 2 finished", NULL);
    rk_kernel_free(k);
    rk_emu_free(e);
}

/* ---- async copies -------------------------------------------------------------------------------- */
/* cp.async: each thread copies one f32 into sm[tid]; commit; [wait]; [sync];
 * out[tid] = sm[tid ^ 32] (another warp's copy). */
static rk_kernel *cp_kernel(bool wait, bool sync) {
    rk_kernel *k = rk_kernel_new("cp");
    rk_value in = et_ptr_param(k, "in", RK_T_F32), out = et_ptr_param(k, "out", RK_T_F32);
    uint32_t d = 128;
    rk_value sm = rk_build_smem_alloc(k, RK_T_F32, &d, 1);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value lt = rk_build_cmp(k, "lt", tid, rk_const_i32(k, 100));     /* tail lanes zero-fill */
    rk_set_loc(k, "cp.c:4");
    rk_build_async_copy(k, in, tid, sm, tid, lt, 4);
    rk_set_loc(k, NULL);
    rk_build_async_commit_group(k);
    if (wait) rk_build_async_wait_group(k, 0);
    if (sync) rk_build_sync(k);
    rk_value j = rk_build_xor(k, tid, rk_const_i32(k, 32));
    rk_set_loc(k, "cp.c:9");
    rk_value v = rk_load_smem(k, sm, &j, 1);
    rk_store_global(k, out, tid, v);
    rk_build_return(k);
    et_finish(k);
    return k;
}

static void t_async_copy(void **state) {
    (void)state;
    float a[128], o[128];
    for (int j = 0; j < 128; j++) a[j] = (float)j + 0.5f;
    rk_emu *e = emu_opts("sm_80", true);
    uint64_t ab = et_buf(e, a, sizeof a, "in"), ob = et_buf(e, o, sizeof o, "out");
    void *args[] = {&ab, &ob};
    rk_kernel *k = cp_kernel(false, true);
    et_expect_error(et_launch(e, k, 1, 1, 1, 128, 1, 1, args), RK_ERR_DEVICE, "reads LDS 0x80", "before the asynchronous copy",
                    "op #", "'tile.async_copy' @\"cp.c:4\" (wave 1 lane 0)", "tile.async_wait_group", "@\"cp.c:9\"",
                    "wave 0 lane 0", NULL);
    rk_kernel_free(k);
    /* wait without a barrier: warp 0 read warp 1's slot before warp 1's copy
     * landed in the same barrier interval — a race, seen when it lands */
    k = cp_kernel(true, false);
    et_expect_error(et_launch(e, k, 1, 1, 1, 128, 1, 1, args), RK_ERR_DEVICE, "LDS data race",
                    "this write and the read by wave 0 lane 0", "'tile.async_copy'", NULL);
    rk_kernel_free(k);
    /* one warp: no other warp to race with */
    assert_int_equal(et_launch(e, k = cp_kernel(true, false), 1, 1, 1, 32, 1, 1, args), RK_OK);
    rk_kernel_free(k);
    k = cp_kernel(true, true);
    assert_int_equal(et_launch(e, k, 1, 1, 1, 128, 1, 1, args), RK_OK);
    for (int j = 0; j < 128; j++) assert_true(o[j] == ((j ^ 32) < 100 ? a[j ^ 32] : 0.0f));
    rk_kernel_free(k);
    rk_emu_free(e);
    /* checks off: data still lands only at the wait (or the warp's end), so
     * warps 0 and 2 read their neighbour's slots before they are filled and
     * see the LDS fill (NaN); warps 1 and 3 run after their neighbour ended */
    e = emu_opts("sm_80", false);
    ab = et_buf(e, a, sizeof a, "in");
    ob = et_buf(e, o, sizeof o, "out");
    k = cp_kernel(false, true);
    assert_int_equal(et_launch(e, k, 1, 1, 1, 128, 1, 1, args), RK_OK);
    for (int j = 0; j < 128; j++) assert_true(((j / 32) % 2 == 0) == !!isnan(o[j]));
    rk_kernel_free(k);
    rk_emu_free(e);
}

/* AMD DMA: buffer_load_lds of one dword per lane into sm at lane*4 (one wave
 * of 64), then [s_waitcnt vmcnt(0) | sync_lds_only | nothing] + barrier. */
static rk_kernel *dma_kernel(int mode) {
    rk_kernel *k = rk_kernel_new("dma");
    rk_value in = et_ptr_param(k, "in", RK_T_I32), out = et_ptr_param(k, "out", RK_T_I32);
    rk_value nb = rk_add_param(k, "nbytes", RK_T_I32, NULL);
    uint32_t d = 64;
    rk_value sm = rk_build_smem_alloc(k, RK_T_I32, &d, 1);
    rk_value rs = rk_build_buffer_rsrc(k, in, nb);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value vo = rk_build_mul(k, tid, rk_const_i32(k, 4));
    rk_value zero = rk_const_i32(k, 0);
    rk_build_async_buffer_load_lds(k, rs, sm, vo, zero, 1);
    if (mode == 0) rk_build_s_waitcnt(k, 0, -1, -1);
    if (mode == 1) rk_build_sync_lds_only(k);
    else rk_build_sync(k);
    rk_value v = rk_load_smem(k, sm, &tid, 1);
    rk_store_global(k, out, tid, v);
    rk_build_return(k);
    et_finish(k);
    return k;
}

static void t_async_dma(void **state) {
    (void)state;
    int32_t a[64], o[64];
    for (int j = 0; j < 64; j++) a[j] = 100 + j;
    rk_emu *e = emu_opts("gfx950", true);
    uint64_t ab = et_buf(e, a, sizeof a, "in"), ob = et_buf(e, o, sizeof o, "out");
    int32_t nbytes = 200;       /* dwords 50..63 are out of range: zeros */
    void *args[] = {&ab, &ob, &nbytes};
    rk_kernel *k = dma_kernel(1);
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE, "before the asynchronous copy",
                    "'tile.async_buffer_load_lds'", "s_waitcnt vmcnt or tile.sync", NULL);
    rk_kernel_free(k);
    for (int mode = 0; mode < 3; mode += 2) {
        k = dma_kernel(mode);
        assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
        for (int j = 0; j < 64; j++) assert_int_equal(o[j], j < 50 ? 100 + j : 0);
        rk_kernel_free(k);
    }
    rk_emu_free(e);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_oob_global),
        cmocka_unit_test(t_oob_lds),
        cmocka_unit_test(t_race),
        cmocka_unit_test(t_atomics_not_racy),
        cmocka_unit_test(t_barriers),
        cmocka_unit_test(t_async_copy),
        cmocka_unit_test(t_async_dma),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
