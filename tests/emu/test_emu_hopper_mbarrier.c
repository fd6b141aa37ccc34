/* rocke tests — mbarriers on the emulator against a phase/count model:
 * random arrival counts give floor(arrivals / count) completed phases (a
 * wait on the last completed parity passes, one on the current phase is a
 * deadlock that names the pending arrivals); a producer/consumer ping-pong
 * over two barriers across waves (waiting waves yield); and misuse (no init,
 * arrivals past the count, a bad count). Layer: tests. */
#include "hopper_test.h"

/* thread t arrives arr[t] (0..2) times on a count-C barrier; after a sync,
 * thread 0 waits for parity `parity` and writes 1 to out[0] */
static rk_status phases(int32_t C, const int32_t *arr, int32_t parity) {
    rk_kernel *k = rk_kernel_new("mbar_phases");
    rk_value A = rk_add_param(k, "arr", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value O = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value bars = ht_alloc(k, RK_T_I64, 2, 16);
    ht_thread0_begin(k);
    ht_mbar_init(k, bars, 1, ht_c32(k, C));
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
    rk_value t = rk_build_thread_id(k, 0);
    rk_value mine = rk_load_global(k, A, t, 1);
    for (int32_t j = 0; j < 2; j++) {
        rk_value jc = ht_c32(k, j);
        rk_value more = rk_build_cmp(k, "gt", mine, jc);
        rk_if_begin(k, more);
        ht_mbar_arrive(k, bars, 1);
        rk_if_end(k, NULL, 0);
    }
    rk_build_sync(k);
    ht_thread0_begin(k);
    ht_mbar_wait(k, bars, 1, ht_c32(k, parity));
    rk_value zero = ht_c32(k, 0), one = ht_c32(k, 1);
    rk_store_global(k, O, zero, one);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    int32_t out = 0;
    rk_emu *e = et_emu("sm_90", 1);
    uint64_t aa = et_buf(e, (void *)arr, 128 * 4, "arr"), ao = et_buf(e, &out, 4, "out");
    void *args[] = {&aa, &ao};
    rk_status st = et_launch(e, k, 1, 1, 1, 128, 1, 1, args);
    if (st == RK_OK) assert_int_equal(out, 1);
    rk_emu_free(e);
    rk_kernel_free(k);
    return st;
}

static void t_phase_model(void **state) {
    (void)state;
    for (int rep = 0; rep < 6; rep++) {
        int32_t arr[128], C = 1 + (int32_t)(et_rand() % 6), total = 0;
        for (int i = 0; i < 128; i++) total += arr[i] = (int32_t)(et_rand() % 3);
        int32_t P = total / C, pend = C - total % C;
        if (P >= 1) assert_int_equal(phases(C, arr, (P - 1) & 1), RK_OK);   /* the last completed phase */
        char msg[160];
        snprintf(msg, sizeof msg, "phase %d has %d of %d arrivals pending", P, pend, C);
        rk_status st = phases(C, arr, P & 1);                                /* the current one: never */
        et_expect_error(st, RK_ERR_DEVICE, "mbarrier deadlock", "'tile.mbarrier_wait'", msg, "parity", NULL);
    }
}

/* thread 0 (wave 0) produces vals[p] into a slot for P rounds; the 96
 * threads of waves 1-3 consume each round and sum */
static void t_pingpong(void **state) {
    (void)state;
    enum { P = 7 };
    int32_t vals[P], sums[128];
    for (int i = 0; i < P; i++) vals[i] = (int32_t)(et_rand() % 1000);
    memset(sums, 0, sizeof sums);
    rk_kernel *k = rk_kernel_new("mbar_pingpong");
    rk_value V = rk_add_param(k, "vals", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value S = rk_add_param(k, "sums", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value slot = ht_alloc(k, RK_T_I32, 1, 16), bars = ht_alloc(k, RK_T_I64, 2, 16);   /* 0 full, 1 empty */
    ht_thread0_begin(k);
    ht_mbar_init(k, bars, 0, ht_c32(k, 1));
    ht_mbar_init(k, bars, 1, ht_c32(k, 96));
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
    rk_value t = rk_build_thread_id(k, 0), zero = ht_c32(k, 0), one = ht_c32(k, 1), np = ht_c32(k, P);
    rk_value c32v = ht_c32(k, 32);
    ht_thread0_begin(k);
    rk_value p = rk_for_begin(k, zero, np, one, NULL, 0, NULL, NULL, NULL);
    rk_value par = rk_build_and(k, p, one);
    rk_value epar = rk_build_xor(k, par, one);
    ht_mbar_wait(k, bars, 1, epar);
    rk_value v = rk_load_global(k, V, p, 1);
    rk_store_smem(k, slot, &zero, v);
    ht_mbar_arrive(k, bars, 0);
    rk_for_end(k, NULL, 0, NULL);
    rk_if_end(k, NULL, 0);
    rk_value cons = rk_build_cmp(k, "ge", t, c32v);
    rk_if_begin(k, cons);
    rk_value acc;
    rk_value q = rk_for_begin(k, zero, np, one, NULL, 1, &zero, NULL, &acc);
    rk_value qpar = rk_build_and(k, q, one);
    ht_mbar_wait(k, bars, 0, qpar);
    rk_value got = rk_load_smem(k, slot, &zero, 1);
    rk_value nacc = rk_build_add(k, acc, got);
    ht_mbar_arrive(k, bars, 1);
    rk_value total;
    rk_for_end(k, &nacc, 1, &total);
    rk_store_global(k, S, t, total);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    rk_emu *e = et_emu("sm_90", 1);
    uint64_t av = et_buf(e, vals, sizeof vals, "vals"), as = et_buf(e, sums, sizeof sums, "sums");
    void *args[] = {&av, &as};
    rk_status st = et_launch(e, k, 1, 1, 1, 128, 1, 1, args);
    if (st) printf("%s\n", rk_error_message());
    assert_int_equal(st, RK_OK);
    int32_t want = 0;
    for (int i = 0; i < P; i++) want += vals[i];
    for (int i = 0; i < 128; i++) assert_int_equal(sums[i], i >= 32 ? want : 0);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* thread 0 alone: optional init with `count`, then expect_tx(tx) when tx >
 * 0, then `arrivals` arrivals */
static rk_status misuse(bool init, int32_t count, int32_t tx, int arrivals) {
    rk_kernel *k = rk_kernel_new("mbar_misuse");
    rk_value bars = ht_alloc(k, RK_T_I64, 1, 16);
    ht_thread0_begin(k);
    if (init) ht_mbar_init(k, bars, 0, ht_c32(k, count));
    if (tx > 0) ht_mbar_expect(k, bars, 0, tx);
    for (int i = 0; i < arrivals; i++) ht_mbar_arrive(k, bars, 0);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    rk_emu *e = et_emu("sm_90", 1);
    rk_status st = et_launch(e, k, 1, 1, 1, 32, 1, 1, NULL);
    rk_emu_free(e);
    rk_kernel_free(k);
    return st;
}

static void t_misuse(void **state) {
    (void)state;
    assert_int_equal(misuse(true, 2, 64, 1), RK_OK);   /* two arrivals, 64 bytes still expected: fine */
    et_expect_error(misuse(false, 1, 0, 1), RK_ERR_DEVICE, "used before any tile.mbarrier_init", "'tile.mbarrier_arrive'",
                    NULL);
    et_expect_error(misuse(true, 1, 64, 1), RK_ERR_DEVICE, "arrive count overflow", "waits only for 64 bytes", NULL);
    et_expect_error(misuse(true, 0, 0, 0), RK_ERR_DEVICE, "mbarrier_init count 0 is outside", NULL);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_phase_model),
        cmocka_unit_test(t_pingpong),
        cmocka_unit_test(t_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
