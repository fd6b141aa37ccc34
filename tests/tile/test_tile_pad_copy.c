/* rocke tests — rk_tile_pad_copy on the emulator: odd and tail shapes, row
 * strides of every residue mod 8 and a padded source, f16 and bf16; the
 * copy's pad columns are zero, the source buffer is exactly its extent (a
 * read past it is an emulator fault); then the staging pattern of the padded
 * GEMM: a cooperative grid copies, meets at the grid barrier and reads
 * units other blocks wrote, launched twice over the same Sync. Layer: tests. */
#include "emu/emu_test.h"

enum { BLOCKS = 3, THREADS = 64 };

static uint32_t pad8(uint32_t c) { return (c + 7u) & ~7u; }

/* params src, dst, out, sync; rows, cols, ld, ldp. With `consume`: the
 * kernel is cooperative, and after the grid barrier thread g of the grid
 * copies units (units - 1 - g), (units - 1 - g - nthreads), ... of dst to out. */
static rk_kernel *pad_kernel(rk_type et, bool consume) {
    rk_kernel *k = rk_kernel_new(consume ? "pad_consume" : "pad_copy");
    rk_value src = et_ptr_param(k, "src", et), dst = et_ptr_param(k, "dst", et), out = et_ptr_param(k, "out", et);
    rk_value sync = et_ptr_param(k, "sync", RK_T_I64);
    rk_value rows = rk_add_param(k, "rows", RK_T_I32, NULL), cols = rk_add_param(k, "cols", RK_T_I32, NULL);
    rk_value ld = rk_add_param(k, "ld", RK_T_I32, NULL), ldp = rk_add_param(k, "ldp", RK_T_I32, NULL);
    if (consume) rk_kernel_set_cooperative(k, true);
    rk_kernel_set_attr_int(k, "max_workgroup_size", THREADS);
    rk_value t = rk_build_thread_id(k, 0), b = rk_build_block_id(k, 0), g = rk_build_grid_dim(k, 0);
    rk_value tn = rk_const_i32(k, THREADS);
    rk_value base = rk_build_mul(k, b, tn);
    rk_value gtid = rk_build_add(k, base, t);
    rk_value nthreads = rk_build_mul(k, g, tn);
    rk_tile_pad_copy(k, src, dst, rows, cols, ld, ldp, gtid, nthreads);
    if (consume) {
        rk_value zero = rk_const_i32(k, 0), one = rk_const_i32(k, 1), three = rk_const_i32(k, 3);
        /* what the padded GEMM does before TMA reads the copy */
        const rk_fence_proxy_async_opts glob = {.space = "global"};
        rk_build_fence_proxy_async_ex(k, &glob);
        rk_tile_grid_barrier(k, t, sync, zero, g);
        rk_value upr = rk_build_lshr(k, ldp, three);
        rk_value units = rk_build_mul(k, rows, upr);
        rk_value i = rk_for_begin(k, gtid, units, nthreads, NULL, 0, NULL, NULL, NULL);
        rk_value last = rk_build_sub(k, units, one);
        rk_value uu = rk_build_sub(k, last, i);
        rk_value at = rk_build_shl(k, uu, three);
        rk_value v = rk_load_global(k, dst, at, 8);
        rk_store_global(k, out, at, v);
        rk_for_end(k, NULL, 0, NULL);
    }
    rk_build_return(k);
    et_finish(k);
    return k;
}

static uint16_t rand_elem(bool bf) {
    float x = et_unit();
    return bf ? rk_f32_to_bf16(x) : rk_f32_to_f16(x);
}

static void run_case(rk_emu *e, const rk_kernel *k, bool bf, uint32_t rows, uint32_t cols, uint32_t ld, bool consume,
                     int64_t sync[2]) {
    uint32_t ldp = pad8(cols);
    size_t n = (size_t)(rows - 1) * ld + cols, np = (size_t)rows * ldp;
    uint16_t *src = malloc(n * 2), *dst = malloc(np * 2), *out = malloc(np * 2);
    for (size_t i = 0; i < n; i++) src[i] = rand_elem(bf);
    for (size_t i = 0; i < np; i++) dst[i] = out[i] = 0xabcd;
    uint64_t ds = et_buf(e, src, n * 2, "src"), dd = et_buf(e, dst, np * 2, "dst"), dout = et_buf(e, out, np * 2, "out");
    uint64_t dsy = et_buf(e, sync, 16, "sync");
    int32_t r = (int32_t)rows, c = (int32_t)cols, l = (int32_t)ld, lp = (int32_t)ldp;
    void *args[] = {&ds, &dd, &dout, &dsy, &r, &c, &l, &lp};
    rk_status st = et_launch(e, k, BLOCKS, 1, 1, THREADS, 1, 1, args);
    if (st) printf("%ux%u ld %u: %s\n", rows, cols, ld, rk_error_message());
    assert_int_equal(st, RK_OK);
    for (uint32_t i = 0; i < rows; i++)
        for (uint32_t j = 0; j < ldp; j++) {
            uint16_t want = j < cols ? src[(size_t)i * ld + j] : 0;
            if (dst[(size_t)i * ldp + j] != want)
                fail_msg("%ux%u ld %u: dst[%u, %u] = 0x%04x, want 0x%04x", rows, cols, ld, i, j,
                         dst[(size_t)i * ldp + j], want);
            if (consume) assert_int_equal(out[(size_t)i * ldp + j], want);
        }
    rk_emu_release(e, ds);
    rk_emu_release(e, dd);
    rk_emu_release(e, dout);
    rk_emu_release(e, dsy);
    free(src);
    free(dst);
    free(out);
}

static const struct { uint32_t rows, cols, ld; } shapes[] = {
    {67, 37, 37}, {129, 101, 101}, {5, 3, 3}, {3, 4093, 4093}, {45, 37, 40}, {1, 9, 9}, {70, 8, 8}, {11, 13, 21},
};

static void t_pad_copy(void **state) {
    (void)state;
    for (int bf = 0; bf < 2; bf++) {
        rk_kernel *k = pad_kernel(bf ? RK_T_BF16 : RK_T_F16, false);
        rk_emu *e = et_emu("sm_90a", 2);
        int64_t sync[2] = {0, 0};
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
            run_case(e, k, bf, shapes[i].rows, shapes[i].cols, shapes[i].ld, false, sync);
        rk_emu_free(e);
        rk_kernel_free(k);
    }
}

static void t_stage_then_consume(void **state) {
    (void)state;
    rk_kernel *k = pad_kernel(RK_T_BF16, true);
    rk_emu *e = et_emu("sm_90a", 1);
    int64_t sync[2] = {0, 0};
    for (int launch = 0; launch < 2; launch++) {
        run_case(e, k, true, 67, 37, 37, true, sync);
        run_case(e, k, true, 29, 101, 101, true, sync);
    }
    assert_int_equal(sync[0], 0);
    assert_int_equal(sync[1], 4);
    rk_emu_free(e);
    rk_kernel_free(k);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_pad_copy),
        cmocka_unit_test(t_stage_then_consume),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
