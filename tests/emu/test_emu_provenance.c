/* rocke tests — pointer provenance in the emulator (issue 20 item 2): an
 * access through a pointer must stay inside the buffer of the parameter it
 * came from, whatever lies where it lands (a neighbouring buffer included);
 * LDS accesses by address stay inside their allocation; a buffer resource may
 * not cover more than its source buffer. Layer: tests (emu). */
#include "emu_test.h"

/* C[gid + off] = gid for gid < n. */
static rk_kernel *store_kernel(void) {
    rk_kernel *k = rk_kernel_new("store_off");
    rk_value c = et_ptr_param(k, "C", RK_T_I32);
    rk_value off = rk_add_param(k, "off", RK_T_I32, NULL);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value i = et_gid(k);
    rk_value ok = rk_build_cmp(k, "lt", i, n);
    rk_if_begin(k, ok);
    rk_value j = rk_build_add(k, i, off);
    rk_store_global(k, c, j, i);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    return k;
}

/* A store that overruns C lands in D, the next buffer: reported, D untouched;
 * in range (a random offset, an odd size) it lands where the host says. */
static void t_store_into_neighbour(void **state) {
    (void)state;
    rk_kernel *k = store_kernel();
    rk_emu *e = et_emu("gfx942", 2);
    int32_t n = 100 + (int32_t)(et_rand() % 157);
    int32_t *c = calloc((size_t)n * 2, sizeof *c), *d = calloc(4096, sizeof *d);
    assert_true(c && d);
    for (int i = 0; i < 4096; i++) d[i] = (int32_t)et_rand();
    int32_t *d0 = malloc(4096 * sizeof *d);
    memcpy(d0, d, 4096 * sizeof *d);
    uint64_t dc = et_buf(e, c, (size_t)n * 2 * sizeof *c, "C"), dd = et_buf(e, d, 4096 * sizeof *d, "D");
    assert_true(dd > dc);
    int32_t off = (int32_t)(et_rand() % (uint64_t)(n + 1));
    void *args[] = {&dc, &off, &n};
    assert_int_equal(et_launch(e, k, (uint32_t)(n + 63) / 64, 1, 1, 64, 1, 1, args), RK_OK);
    for (int i = 0; i < 2 * n; i++) assert_int_equal(c[i], i >= off && i < off + n ? i - off : 0);
    /* an offset that puts every lane inside D: the old "inside some buffer" rule let it through */
    off = (int32_t)((dd - dc) / 4) + (int32_t)(et_rand() % 1024);
    et_expect_error(et_launch(e, k, (uint32_t)(n + 63) / 64, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE,
                    "out-of-bounds global write of 4 bytes", "past the end of buffer 'C'", "parameter %C",
                    "lands inside buffer 'D'", "memref.global_store_typed", "workgroup (0,0,0) wave 0 lane 0", NULL);
    assert_memory_equal(d, d0, 4096 * sizeof *d);
    free(c);
    free(d);
    free(d0);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* out[l] = *(p + l), p = select(l odd, B, A) moved by `step` bytes `trips`
 * times when trips > 0: the pointer passes a select, ptr_adds and an
 * if_else result. */
static rk_kernel *walk_kernel(void) {
    rk_kernel *k = rk_kernel_new("walk");
    rk_value a = et_ptr_param(k, "A", RK_T_F32), b = et_ptr_param(k, "B", RK_T_F32);
    rk_value out = et_ptr_param(k, "out", RK_T_F32);
    rk_value step = rk_add_param(k, "step", RK_T_I64, NULL), trips = rk_add_param(k, "trips", RK_T_I32, NULL);
    rk_value l = rk_build_thread_id(k, 0);
    rk_value one = rk_const_i32(k, 1), zero = rk_const_i32(k, 0);
    rk_value bit = rk_build_and(k, l, one);
    rk_value odd = rk_build_cmp(k, "ne", bit, zero);
    rk_value p0 = rk_build_select(k, odd, b, a);
    rk_value any = rk_build_cmp(k, "gt", trips, zero);
    rk_type pt = rk_value_type(k, a);
    rk_value res;
    rk_if_else_begin(k, any, 1, &pt, &res);
    rk_value q = rk_build_global_ptr_add(k, p0, step);
    rk_value rest = rk_build_sub(k, trips, one);
    rk_value rest64 = rk_build_sext(k, rest, RK_T_I64);
    rk_value more = rk_build_mul(k, rest64, step);
    rk_value q2 = rk_build_global_ptr_add(k, q, more);
    rk_else(k, &q2, 1);
    rk_if_end(k, &p0, 1);
    rk_value v = rk_load_global(k, res, l, 1);
    rk_store_global(k, out, l, v);
    rk_build_return(k);
    et_finish(k);
    return k;
}

static void t_read_through_moved_pointer(void **state) {
    (void)state;
    rk_kernel *k = walk_kernel();
    rk_emu *e = et_emu("sm_90", 1);
    enum { NA = 512 };
    float a[NA], b[NA], o[32];
    for (int i = 0; i < NA; i++) {
        a[i] = et_unit();
        b[i] = et_unit();
    }
    uint64_t da = et_buf(e, a, sizeof a, "A"), db = et_buf(e, b, sizeof b, "B"), dout = et_buf(e, o, sizeof o, "out");
    int64_t step = 4 * (int64_t)(1 + et_rand() % 8);
    int32_t trips = (int32_t)(et_rand() % 40);
    void *args[] = {&da, &db, &dout, &step, &trips};
    assert_int_equal(et_launch(e, k, 1, 1, 1, 32, 1, 1, args), RK_OK);
    int64_t shift = step / 4 * trips;
    for (int l = 0; l < 32; l++) assert_true(et_same_f32(o[l], (l & 1 ? b : a)[shift + l]));
    /* A moved by exactly B - A: every even lane reads B's bytes through A's pointer */
    step = (int64_t)(db - da);
    trips = 1;
    et_expect_error(et_launch(e, k, 1, 1, 1, 32, 1, 1, args), RK_ERR_DEVICE, "out-of-bounds global read",
                    "past the end of buffer 'A'", "parameter %A", "lands inside buffer 'B'", "lane 0 ", NULL);
    /* moved below A's start, in two steps: named as before it, lying in no buffer */
    step = -2048;
    trips = 2;
    et_expect_error(et_launch(e, k, 1, 1, 1, 32, 1, 1, args), RK_ERR_DEVICE, "4096 bytes before buffer 'A'",
                    "parameter %A", "lies in no buffer", "lane 0 ", NULL);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* global_load_lds writes lane l's dword at smem_addr_of(first) + base + 4l;
 * then second[l] = l, and out[l] = first[base/4 + l] + second[l]. Past
 * `first` the DMA would land in `second`, the next allocation. */
static rk_kernel *dma_kernel(uint32_t d1, uint32_t d2) {
    rk_kernel *k = rk_kernel_new("dma_base");
    rk_value in = et_ptr_param(k, "in", RK_T_I32), out = et_ptr_param(k, "out", RK_T_I32);
    rk_value base = rk_add_param(k, "base", RK_T_I64, NULL);
    rk_value first = rk_build_smem_alloc(k, RK_T_I32, &d1, 1);
    rk_value second = rk_build_smem_alloc(k, RK_T_I32, &d2, 1);
    rk_value at = rk_build_smem_addr_of(k, first);
    rk_value dst = rk_build_smem_ptr_add(k, at, base);
    rk_value l = rk_build_thread_id(k, 0);
    rk_value four = rk_const_i32(k, 4);
    rk_value off = rk_build_mul(k, l, four);
    rk_build_global_load_lds(k, in, off, dst, 4);
    rk_store_smem(k, second, &l, l);
    rk_build_s_waitcnt(k, 0, -1, -1);
    rk_build_sync(k);
    rk_value b32 = rk_build_trunc(k, base, RK_T_I32);
    rk_value two = rk_const_i32(k, 2);
    rk_value e0 = rk_build_lshr(k, b32, two);
    rk_value j = rk_build_add(k, e0, l);
    rk_value v = rk_load_smem(k, first, &j, 1);
    rk_value w = rk_load_smem(k, second, &l, 1);
    rk_value s = rk_build_add(k, v, w);
    rk_store_global(k, out, l, s);
    rk_build_return(k);
    et_finish(k);
    return k;
}

static void t_lds_dma_past_allocation(void **state) {
    (void)state;
    rk_kernel *k = dma_kernel(80, 256);
    int32_t a[64], o[64];
    for (int i = 0; i < 64; i++) a[i] = (int32_t)(et_rand() % 100000);
    rk_emu *e = et_emu("gfx942", 1);
    uint64_t da = et_buf(e, a, sizeof a, "in"), dout = et_buf(e, o, sizeof o, "out");
    /* 64 lanes x 4 bytes = 256 bytes from `base` in an allocation of 320: past 64 they reach `second` */
    int64_t b = 68 + 4 * (int64_t)(et_rand() % 48);
    void *args[] = {&da, &dout, &b};
    char lane[32];
    snprintf(lane, sizeof lane, "lane %d ", (int)((320 - b) / 4));
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE, "asynchronous LDS destination",
                    "leaves %smem", "smem<i32, [80]>", "the allocation its address comes from", lane, NULL);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* The same DMA inside its allocation works: lane l's dword lands at element
 * base/4 + l, which the host reproduces. */
static void t_lds_dma_inside_allocation(void **state) {
    (void)state;
    rk_kernel *k = dma_kernel(96, 64);
    int32_t a[64], o[64];
    for (int i = 0; i < 64; i++) a[i] = (int32_t)(et_rand() % 100000);
    rk_emu *e = et_emu("gfx942", 1);
    uint64_t da = et_buf(e, a, sizeof a, "in"), dout = et_buf(e, o, sizeof o, "out");
    int64_t b = 4 * (int64_t)(et_rand() % 33);            /* 0 .. 128 bytes: the 256 written still fit in 384 */
    void *args[] = {&da, &dout, &b};
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    for (int i = 0; i < 64; i++) assert_int_equal(o[i], a[i] + i);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* The smem form of the AMD DMA writes W dwords from the allocation's start:
 * an allocation of fewer bytes is left, reported even though the pool has room. */
static void t_lds_dma_smem_form(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("dma_small");
    rk_value in = et_ptr_param(k, "in", RK_T_I32);
    uint32_t d1 = 48, d2 = 64;
    rk_value small = rk_build_smem_alloc(k, RK_T_I32, &d1, 1);
    rk_value after = rk_build_smem_alloc(k, RK_T_I32, &d2, 1);
    rk_value nb = rk_const_i32(k, 256);
    rk_value rs = rk_build_buffer_rsrc(k, in, nb);
    rk_value l = rk_build_thread_id(k, 0);
    rk_value four = rk_const_i32(k, 4), zero = rk_const_i32(k, 0);
    rk_value off = rk_build_mul(k, l, four);
    rk_build_async_buffer_load_lds(k, rs, small, off, zero, 1);
    rk_build_s_waitcnt(k, 0, -1, -1);
    rk_value v = rk_load_smem(k, after, &l, 1);
    (void)v;
    rk_build_return(k);
    et_finish(k);
    int32_t a[64] = {0};
    rk_emu *e = et_emu("gfx950", 1);
    uint64_t da = et_buf(e, a, sizeof a, "in");
    void *args[] = {&da};
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE, "asynchronous LDS destination [0xc0, 0xc4)",
                    "leaves %smem", "smem<i32, [48]>", "lane 48 ", NULL);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* out[l] = buffer_load(V#(base, nbytes), 4l): a V# may cover at most its
 * buffer, built in the kernel or passed as an argument. */
static void t_vsharp_over_too_many_bytes(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("vsharp");
    rk_value in = et_ptr_param(k, "in", RK_T_F32), out = et_ptr_param(k, "out", RK_T_F32);
    rk_value nb = rk_add_param(k, "nbytes", RK_T_I32, NULL);
    rk_value rs = rk_build_buffer_rsrc(k, in, nb);
    rk_value l = rk_build_thread_id(k, 0);
    rk_value four = rk_const_i32(k, 4), zero = rk_const_i32(k, 0);
    rk_value off = rk_build_mul(k, l, four);
    rk_value v = rk_build_buffer_load(k, rs, off, zero, RK_T_F32);
    rk_store_global(k, out, l, v);
    rk_build_return(k);
    et_finish(k);
    int32_t n = 1 + (int32_t)(et_rand() % 64);             /* floats of memory */
    float a[64], o[64];
    for (int i = 0; i < 64; i++) a[i] = et_unit();
    rk_emu *e = et_emu("gfx942", 1);
    uint64_t da = et_buf(e, a, (size_t)n * 4, "in"), dout = et_buf(e, o, sizeof o, "out");
    int32_t nbytes = 4 * n;
    void *args[] = {&da, &dout, &nbytes};
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    for (int i = 0; i < 64; i++) assert_true(et_same_f32(o[i], i < n ? a[i] : 0.0f));
    nbytes = 4 * n + 1 + (int32_t)(et_rand() % 4096);      /* one byte too many is enough */
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE, "buffer resource over",
                    "exceeds its source buffer 'in'", "tile.buffer_rsrc", "lane 0 ", NULL);
    rk_emu_free(e);
    rk_kernel_free(k);

}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_store_into_neighbour),
        cmocka_unit_test(t_read_through_moved_pointer),
        cmocka_unit_test(t_lds_dma_past_allocation),
        cmocka_unit_test(t_lds_dma_inside_allocation),
        cmocka_unit_test(t_lds_dma_smem_form),
        cmocka_unit_test(t_vsharp_over_too_many_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
