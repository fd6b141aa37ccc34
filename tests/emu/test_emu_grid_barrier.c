/* rocke tests — cooperative kernels and the grid barrier on the emulator:
 * every block of a cooperative launch runs in one pool of waves, so block b
 * can read what block b + 1 wrote before a barrier (a broken barrier reads
 * the sentinel); the Sync words are left consistent for the next launch,
 * also one with another grid size; a barrier that cannot complete is
 * reported as a grid barrier deadlock (not cooperative, or a block short);
 * memref.global_wait alone; the runtime's cooperative flag. Layer: tests. */
#include "emu_test.h"

enum { T = 96 };   /* three 32-lane waves per block on sm_90a */

static int32_t init_of(int32_t salt, uint32_t b, uint32_t t) { return salt * 1000003 + (int32_t)(b * 131u + t); }

/* buf[b, t] = init(salt, b, t); barrier; out[b, t] = buf[b + 1, t]; barrier;
 * buf[b, t] = out[b + 1, t] + 1 (blocks mod G). `arrivals` is what the
 * barrier waits for (the grid size; one more makes it wait forever). */
static rk_kernel *barrier_kernel(bool cooperative) {
    rk_kernel *k = rk_kernel_new("gridbar");
    rk_value buf = et_ptr_param(k, "buf", RK_T_I32), out = et_ptr_param(k, "out", RK_T_I32);
    rk_value sync = et_ptr_param(k, "sync", RK_T_I64);
    rk_value salt = rk_add_param(k, "salt", RK_T_I32, NULL), arrivals = rk_add_param(k, "arrivals", RK_T_I32, NULL);
    if (cooperative) rk_kernel_set_cooperative(k, true);
    rk_kernel_set_attr_int(k, "max_workgroup_size", T);
    rk_value t = rk_build_thread_id(k, 0), b = rk_build_block_id(k, 0), g = rk_build_grid_dim(k, 0);
    rk_value tn = rk_const_i32(k, T), one = rk_const_i32(k, 1), zero = rk_const_i32(k, 0);
    rk_value b1 = rk_build_add(k, b, one);
    rk_value wrap = rk_build_cmp(k, "eq", b1, g);
    rk_value nb = rk_build_select(k, wrap, zero, b1);
    rk_value row = rk_build_mul(k, b, tn), nrow = rk_build_mul(k, nb, tn);
    rk_value mine = rk_build_add(k, row, t), next = rk_build_add(k, nrow, t);
    rk_value big = rk_const_i32(k, 1000003), bt = rk_const_i32(k, 131);
    rk_value s0 = rk_build_mul(k, salt, big), s1 = rk_build_mul(k, b, bt);
    rk_value s2 = rk_build_add(k, s0, s1);
    rk_value v = rk_build_add(k, s2, t);
    /* block b writes only after 4·b block barriers: the emulator switches
     * blocks at barriers, so without a working grid barrier block b − 1 reads
     * first (the block-barrier ordering alone hides nothing) */
    rk_value four = rk_const_i32(k, 4);
    rk_value delay = rk_build_mul(k, b, four);
    rk_for_begin(k, zero, delay, one, NULL, 0, NULL, NULL, NULL);
    rk_build_sync(k);
    rk_for_end(k, NULL, 0, NULL);
    rk_store_global(k, buf, mine, v);
    rk_tile_grid_barrier(k, t, sync, zero, arrivals);
    rk_value x = rk_load_global(k, buf, next, 1);
    rk_store_global(k, out, mine, x);
    rk_tile_grid_barrier(k, t, sync, zero, arrivals);
    rk_value y = rk_load_global(k, out, next, 1);
    rk_value y1 = rk_build_add(k, y, one);
    rk_store_global(k, buf, mine, y1);
    rk_build_return(k);
    et_finish(k);
    return k;
}

typedef struct run { int32_t buf[16 * T], out[16 * T]; int64_t sync[2]; } run;

static rk_status launch(rk_emu *e, const rk_kernel *k, run *r, uint32_t G, int32_t salt, int32_t arrivals) {
    for (uint32_t i = 0; i < 16 * T; i++) r->buf[i] = r->out[i] = -1;   /* what a read too early sees */
    uint64_t db = et_buf(e, r->buf, sizeof r->buf, "buf"), dout = et_buf(e, r->out, sizeof r->out, "out");
    uint64_t ds = et_buf(e, r->sync, sizeof r->sync, "sync");
    void *args[] = {&db, &dout, &ds, &salt, &arrivals};
    rk_status st = et_launch(e, k, G, 1, 1, T, 1, 1, args);
    rk_emu_release(e, db);
    rk_emu_release(e, dout);
    rk_emu_release(e, ds);
    return st;
}

static void check_run(const run *r, uint32_t G, int32_t salt) {
    for (uint32_t b = 0; b < G; b++)
        for (uint32_t t = 0; t < T; t++) {
            assert_int_equal(r->out[b * T + t], init_of(salt, (b + 1) % G, t));
            assert_int_equal(r->buf[b * T + t], init_of(salt, (b + 2) % G, t) + 1);
        }
}

static void t_barrier_orders_writes(void **state) {
    (void)state;
    rk_kernel *k = barrier_kernel(true);
    for (uint32_t threads = 1; threads <= 4; threads += 3) {
        rk_emu *e = et_emu("sm_90a", threads);
        static run r;
        r.sync[0] = r.sync[1] = 0;   /* zeroed once, before the first launch */
        /* launched again with the same Sync, then with another grid size */
        const uint32_t grids[] = {5, 5, 3, 16};
        for (uint32_t i = 0; i < sizeof grids / sizeof grids[0]; i++) {
            int32_t salt = (int32_t)i + 1;
            rk_status st = launch(e, k, &r, grids[i], salt, (int32_t)grids[i]);
            if (st) printf("%s\n", rk_error_message());
            assert_int_equal(st, RK_OK);
            check_run(&r, grids[i], salt);
            assert_int_equal(r.sync[0], 0);                       /* the count is back at 0 */
            assert_int_equal(r.sync[1], 2 * (int64_t)(i + 1));    /* two barriers per launch */
        }
        rk_emu_free(e);
    }
    rk_kernel_free(k);
}

static void t_deadlocks_are_named(void **state) {
    (void)state;
    rk_emu *e = et_emu("sm_90a", 1);
    static run r;
    /* not cooperative: the emulator runs one block at a time, nobody releases block 0 */
    rk_kernel *k = barrier_kernel(false);
    r.sync[0] = r.sync[1] = 0;
    et_expect_error(launch(e, k, &r, 2, 1, 2), RK_ERR_DEVICE, "grid barrier deadlock", "memref.global_wait",
                    "not cooperative", "rk_kernel_set_cooperative", "workgroup (0,0,0)", NULL);
    rk_kernel_free(k);
    /* cooperative, but the barrier waits for one block more than the grid has */
    k = barrier_kernel(true);
    r.sync[0] = r.sync[1] = 0;
    et_expect_error(launch(e, k, &r, 3, 1, 4), RK_ERR_DEVICE, "grid barrier deadlock", "3 of the 3 blocks", NULL);
    /* a cooperative grid the emulator cannot hold at once */
    int32_t dummy[4];
    int64_t sy[2] = {0, 0};
    uint64_t db = et_buf(e, dummy, sizeof dummy, "d"), ds = et_buf(e, sy, sizeof sy, "s");
    int32_t salt = 0, arr = 2000;
    void *args[] = {&db, &db, &ds, &salt, &arr};
    et_expect_error(et_launch(e, k, 2000, 1, 1, T, 1, 1, args), RK_ERR_INVALID, "cooperative", "2000 blocks", "1024",
                    NULL);
    rk_kernel_free(k);
    rk_emu_free(e);
}

/* memref.global_wait by itself: block 1 raises a flag that block 0 waits
 * for (uge), in a cooperative launch; the attribute round-trips the text. */
static void t_global_wait_op(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("flagwait");
    rk_value flag = et_ptr_param(k, "flag", RK_T_I32), out = et_ptr_param(k, "out", RK_T_I32);
    rk_kernel_set_cooperative(k, true);
    rk_value b = rk_build_block_id(k, 0), t = rk_build_thread_id(k, 0), zero = rk_const_i32(k, 0);
    rk_value seven = rk_const_i32(k, 7);
    rk_value is0 = rk_build_cmp(k, "eq", b, zero);
    rk_if_else_begin(k, is0, 0, NULL, NULL);
    rk_build_global_wait(k, "uge", flag, zero, seven);
    rk_value f = rk_load_global(k, flag, zero, 1);
    rk_store_global(k, out, t, f);
    rk_else(k, NULL, 0);
    const rk_global_atomic_opts rel = {.ordering = "release", .scope = "device"};
    rk_value v = rk_const_i32(k, 9);
    rk_value first = rk_build_cmp(k, "eq", t, zero);
    rk_if_begin(k, first);
    rk_build_global_atomic_ex(k, "xchg", flag, zero, v, &rel);
    rk_if_end(k, NULL, 0);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    char *text = rk_serialize(k);
    assert_non_null(text);
    assert_non_null(strstr(text, "cooperative"));
    assert_non_null(strstr(text, "memref.global_wait"));
    rk_kernel *back = NULL;
    assert_int_equal(rk_parse(text, strlen(text), &back), RK_OK);
    assert_true(rk_kernel_cooperative(back));
    rk_string_free(text);
    int32_t fl = 0, o[32];
    rk_emu *e = et_emu("sm_90a", 1);
    uint64_t df = et_buf(e, &fl, sizeof fl, "flag"), dout = et_buf(e, o, sizeof o, "out");
    void *args[] = {&df, &dout};
    assert_int_equal(et_launch(e, back, 2, 1, 1, 32, 1, 1, args), RK_OK);
    for (int i = 0; i < 32; i++) assert_int_equal(o[i], 9);
    rk_emu_free(e);
    rk_kernel_free(back);
    rk_kernel_free(k);
}

/* The runtime takes the flag from the IR and lets a caller set it. */
static void t_runtime_flag(void **state) {
    (void)state;
    rk_kernel *k = barrier_kernel(true);
    rk_device *dev = NULL;
    assert_int_equal(rk_device_open("emu:sm_90a", &dev), RK_OK);
    rk_module_image img = {.kind = RK_IMAGE_IR, .kernel = k, .target = "sm_90a"};
    rk_module *mod = NULL;
    rk_function *fn = NULL;
    assert_int_equal(rk_module_load_image(dev, &img, &mod), RK_OK);
    assert_int_equal(rk_module_function(mod, "gridbar", &fn), RK_OK);
    assert_true(rk_function_cooperative(fn));
    assert_int_equal(rk_function_set_cooperative(fn, false), RK_OK);
    assert_false(rk_function_cooperative(fn));
    assert_int_equal(rk_function_set_cooperative(NULL, true), RK_ERR_INVALID);
    rk_device_close(dev);
    rk_kernel_free(k);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_barrier_orders_writes),
        cmocka_unit_test(t_deadlocks_are_named),
        cmocka_unit_test(t_global_wait_op),
        cmocka_unit_test(t_runtime_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
