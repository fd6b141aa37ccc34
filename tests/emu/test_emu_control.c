/* rocke tests — control flow on the emulator: divergent scf.if and
 * scf.if_else with results, divergent scf.for (each lane leaves at its own
 * bound, carries hold each lane's exit value, carries swapped by the yield),
 * nested loops, loops with odd steps and i64 bounds, multi-wave workgroups meeting at barriers in
 * loops, 2-D/3-D grids with partial waves, on wave64 and warp32 targets.
 * References are plain C loops over the threads. Layer: tests. */
#include "emu_test.h"

static const char *const TARGETS[] = {"gfx950", "sm_90"};

/* out[i] = i%3==0 ? (scf.if store) 1000+i : if_else(i%5<2 ? i*i : -i) */
static void t_divergent_if(void **state) {
    (void)state;
    for (int t = 0; t < 2; t++) {
        rk_kernel *k = rk_kernel_new("ifs");
        rk_value out = et_ptr_param(k, "out", RK_T_I32);
        rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
        rk_value i = et_gid(k);
        rk_value inb = rk_build_cmp(k, "lt", i, n);
        rk_if_begin(k, inb);
        rk_value three = rk_const_i32(k, 3), five = rk_const_i32(k, 5), two = rk_const_i32(k, 2), zero = rk_const_i32(k, 0);
        rk_value m3 = rk_build_mod(k, i, three);
        rk_value c3 = rk_build_cmp(k, "eq", m3, zero);
        rk_if_begin(k, c3);
        rk_value thousand = rk_const_i32(k, 1000);
        rk_value v1 = rk_build_add(k, thousand, i);
        rk_store_global(k, out, i, v1);
        rk_else(k, NULL, 0);
        rk_value m5 = rk_build_mod(k, i, five);
        rk_value c5 = rk_build_cmp(k, "lt", m5, two);
        rk_value r;
        rk_type ti = RK_T_I32;
        rk_if_else_begin(k, c5, 1, &ti, &r);
        rk_value sq = rk_build_mul(k, i, i);
        rk_else(k, &sq, 1);
        rk_value ng = rk_build_sub(k, zero, i);
        rk_if_end(k, &ng, 1);
        rk_store_global(k, out, i, r);
        rk_if_end(k, NULL, 0);
        rk_if_end(k, NULL, 0);
        rk_build_return(k);
        et_finish(k);
        int32_t nn = 1001, o[1024];
        memset(o, 0x7f, sizeof o);
        rk_emu *e = et_emu(TARGETS[t], 2);
        uint64_t ob = et_buf(e, o, sizeof o, "out");
        void *args[] = {&ob, &nn};
        assert_int_equal(et_launch(e, k, 8, 1, 1, 128, 1, 1, args), RK_OK);
        for (int j = 0; j < 1024; j++) {
            int32_t want = j >= nn ? 0x7f7f7f7f : j % 3 == 0 ? 1000 + j : j % 5 < 2 ? j * j : -j;
            assert_int_equal(o[j], want);
        }
        rk_emu_free(e);
        rk_kernel_free(k);
    }
}

/* Each lane loops hi = i % 37 times (0 for some): carries sum += iv,
 * prod = prod * 3 + 1 (i64), and a pair swapped each trip. An inner loop
 * runs iv times. Results are each lane's values at its own exit. */
static void t_divergent_loops(void **state) {
    (void)state;
    for (int t = 0; t < 2; t++) {
        rk_kernel *k = rk_kernel_new("loops");
        rk_value out = et_ptr_param(k, "out", RK_T_I64);
        rk_value i = et_gid(k);
        rk_value m = rk_const_i32(k, 37), zero = rk_const_i32(k, 0), one = rk_const_i32(k, 1);
        rk_value hi = rk_build_mod(k, i, m);
        rk_value z64 = rk_const_i64(k, 0), o64 = rk_const_i64(k, 1), three = rk_const_i64(k, 3);
        rk_value a0 = rk_const_i32(k, 7), b0 = rk_const_i32(k, 11);
        rk_value inits[] = {zero, o64, a0, b0, z64};
        rk_value it[5];
        rk_value iv = rk_for_begin(k, zero, hi, one, "j", 5, inits, NULL, it);
        rk_value s = rk_build_add(k, it[0], iv);
        rk_value p3 = rk_build_mul(k, it[1], three);
        rk_value p = rk_build_add(k, p3, o64);
        /* inner: acc += j2 for j2 in [0, iv) */
        rk_value in_it;
        rk_value j2 = rk_for_begin(k, zero, iv, one, "j2", 1, &it[4], NULL, &in_it);
        rk_value j2w = rk_build_sext(k, j2, RK_T_I64);
        rk_value acc = rk_build_add(k, in_it, j2w);
        rk_value inner;
        rk_for_end(k, &acc, 1, &inner);
        rk_value ys[] = {s, p, it[3], it[2], inner};
        rk_value res[5];
        rk_for_end(k, ys, 5, res);
        rk_value s64 = rk_build_sext(k, res[0], RK_T_I64);
        rk_value a64 = rk_build_sext(k, res[2], RK_T_I64);
        rk_value c4 = rk_const_i32(k, 4), c1 = rk_const_i32(k, 1), c2 = rk_const_i32(k, 2), c3 = rk_const_i32(k, 3);
        rk_value base = rk_build_mul(k, i, c4);
        rk_value i1 = rk_build_add(k, base, c1), i2 = rk_build_add(k, base, c2), i3 = rk_build_add(k, base, c3);
        rk_store_global(k, out, base, s64);
        rk_store_global(k, out, i1, res[1]);
        rk_store_global(k, out, i2, a64);
        rk_store_global(k, out, i3, res[4]);
        rk_build_return(k);
        et_finish(k);
        enum { T = 200 };
        int64_t o[T * 4];
        rk_emu *e = et_emu(TARGETS[t], 1);
        uint64_t ob = et_buf(e, o, sizeof o, "out");
        void *args[] = {&ob};
        assert_int_equal(et_launch(e, k, 2, 1, 1, 100, 1, 1, args), RK_OK);
        for (int j = 0; j < T; j++) {
            int64_t hi_ = j % 37, sum = 0, prod = 1, a = 7, b = 11, tri = 0;
            for (int64_t v = 0; v < hi_; v++) {
                sum += v;
                prod = prod * 3 + 1;
                int64_t x = a; a = b; b = x;
                for (int64_t w = 0; w < v; w++) tri += w;
            }
            assert_true(o[4 * j] == sum && o[4 * j + 1] == prod && o[4 * j + 2] == a && o[4 * j + 3] == tri);
        }
        rk_emu_free(e);
        rk_kernel_free(k);
    }
}

/* A loop with step 3 from a negative start and i64 bounds, inside an if
 * that lanes with i % 4 == 1 skip (the verifier keeps cf.return at the end
 * of the body, so there is no early return to test). */
static void t_loop_steps(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("ret");
    rk_value out = et_ptr_param(k, "out", RK_T_I64);
    rk_value i = et_gid(k);
    rk_value four = rk_const_i32(k, 4), one = rk_const_i32(k, 1);
    rk_value m = rk_build_and(k, i, rk_const_i32(k, 3));
    (void)four;
    rk_value c = rk_build_cmp(k, "ne", m, one);
    rk_if_begin(k, c);
    rk_value lo = rk_const_i64(k, -10), step = rk_const_i64(k, 3);
    rk_value hi = rk_build_sext(k, i, RK_T_I64);
    rk_value z = rk_const_i64(k, 0), acc;
    rk_value iv = rk_for_begin(k, lo, hi, step, "v", 1, &z, NULL, &acc);
    rk_value na = rk_build_add(k, acc, iv);
    rk_value r;
    rk_for_end(k, &na, 1, &r);
    rk_store_global(k, out, i, r);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    for (int t = 0; t < 2; t++) {
        int64_t o[150];
        for (int j = 0; j < 150; j++) o[j] = -777;
        rk_emu *e = et_emu(TARGETS[t], 2);
        uint64_t ob = et_buf(e, o, sizeof o, "out");
        void *args[] = {&ob};
        rk_status st = et_launch(e, k, 3, 1, 1, 50, 1, 1, args);
        if (st) printf("%s\n", rk_error_message());
        assert_int_equal(st, RK_OK);
        for (int j = 0; j < 150; j++) {
            int64_t want = 0;
            for (int64_t v = -10; v < j; v += 3) want += v;
            assert_true(o[j] == ((j & 3) == 1 ? -777 : want));
        }
        rk_emu_free(e);
    }
    rk_kernel_free(k);
}

/* Block-wide tree reduction in LDS with a barrier inside a uniform loop, on
 * several waves (256 threads: 4 waves of 64 or 8 warps of 32). */
static void t_multiwave_barriers(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("reduce");
    rk_value in = et_ptr_param(k, "in", RK_T_I32), out = et_ptr_param(k, "out", RK_T_I32);
    rk_value tid = rk_build_thread_id(k, 0), bid = rk_build_block_id(k, 0);
    uint32_t d = 256;
    rk_value sm = rk_build_smem_alloc(k, RK_T_I32, &d, 1);
    rk_value g = et_gid(k);
    rk_value v = rk_load_global(k, in, g, 1);
    rk_store_smem(k, sm, &tid, v);
    rk_build_sync(k);
    /* for s in 0..7: stride = 128 >> s; if tid < stride: sm[tid] += sm[tid+stride]; sync */
    rk_value zero = rk_const_i32(k, 0), eight = rk_const_i32(k, 8), one = rk_const_i32(k, 1), c128 = rk_const_i32(k, 128);
    rk_value s = rk_for_begin(k, zero, eight, one, "s", 0, NULL, NULL, NULL);
    rk_value stride = rk_build_lshr(k, c128, s);
    rk_value act = rk_build_cmp(k, "lt", tid, stride);
    rk_if_begin(k, act);
    rk_value j = rk_build_add(k, tid, stride);
    rk_value x = rk_load_smem(k, sm, &tid, 1), y = rk_load_smem(k, sm, &j, 1);
    rk_value sum = rk_build_add(k, x, y);
    rk_store_smem(k, sm, &tid, sum);
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
    rk_for_end(k, NULL, 0, NULL);
    rk_value is0 = rk_build_cmp(k, "eq", tid, zero);
    rk_if_begin(k, is0);
    rk_value tot = rk_load_smem(k, sm, &zero, 1);
    rk_store_global(k, out, bid, tot);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    for (int t = 0; t < 2; t++) {
        int32_t a[256 * 9], o[9];
        for (int q = 0; q < 256 * 9; q++) a[q] = (int32_t)(et_rand() % 1000) - 500;
        rk_emu *e = et_emu(TARGETS[t], 2);
        uint64_t ab = et_buf(e, a, sizeof a, "in"), ob = et_buf(e, o, sizeof o, "out");
        void *args[] = {&ab, &ob};
        assert_int_equal(et_launch(e, k, 9, 1, 1, 256, 1, 1, args), RK_OK);
        for (int b = 0; b < 9; b++) {
            int32_t want = 0;
            for (int q = 0; q < 256; q++) want += a[b * 256 + q];
            assert_int_equal(o[b], want);
        }
        rk_emu_stats st;
        rk_emu_stats_get(e, &st);
        assert_int_equal(st.workgroups, 9);
        assert_int_equal(st.waves, 9 * 256 / (t ? 32 : 64));
        rk_emu_free(e);
    }
    rk_kernel_free(k);
}

/* Every identity op on 2-D and 3-D grids with odd block shapes (partial
 * last waves): out[linear thread] = packed (tid, bid, bdim, gdim, lane). */
static void t_grids(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("ids");
    rk_value out = et_ptr_param(k, "out", RK_T_I32);
    rk_value tx = rk_build_thread_id(k, 0), ty = rk_build_thread_id(k, 1), tz = rk_build_thread_id(k, 2);
    rk_value bx = rk_build_block_id(k, 0), by = rk_build_block_id(k, 1), bz = rk_build_block_id(k, 2);
    rk_value dx = rk_build_block_dim(k, 0), dy = rk_build_block_dim(k, 1), dz = rk_build_block_dim(k, 2);
    rk_value gx = rk_build_grid_dim(k, 0), gy = rk_build_grid_dim(k, 1), gz = rk_build_grid_dim(k, 2);
    rk_value lane = rk_build_lane_id(k);
    /* linear = (((bz*gy + by)*gx + bx) * (dx*dy*dz)) + (tz*dy + ty)*dx + tx */
    rk_value b1 = rk_build_mul(k, bz, gy), b2 = rk_build_add(k, b1, by), b3 = rk_build_mul(k, b2, gx);
    rk_value blin = rk_build_add(k, b3, bx);
    rk_value dxy = rk_build_mul(k, dx, dy), dxyz = rk_build_mul(k, dxy, dz);
    rk_value t1 = rk_build_mul(k, tz, dy), t2 = rk_build_add(k, t1, ty), t3 = rk_build_mul(k, t2, dx);
    rk_value tlin = rk_build_add(k, t3, tx);
    rk_value base = rk_build_mul(k, blin, dxyz);
    rk_value lin = rk_build_add(k, base, tlin);
    rk_value c8 = rk_const_i32(k, 8);
    rk_value o0 = rk_build_mul(k, lin, c8);
    rk_value vals[8] = {tx, ty, tz, lane, blin, dxyz, gx, gz};
    (void)gy;
    for (int q = 0; q < 8; q++) {
        rk_value cq = rk_const_i32(k, q);
        rk_value oq = rk_build_add(k, o0, cq);
        rk_store_global(k, out, oq, vals[q]);
    }
    rk_build_return(k);
    et_finish(k);
    const uint32_t shapes[][6] = {{3, 2, 1, 7, 5, 1}, {2, 2, 3, 5, 3, 4}, {1, 1, 1, 100, 1, 1}, {4, 3, 2, 9, 1, 3}};
    for (int t = 0; t < 2; t++)
        for (int sh = 0; sh < 4; sh++) {
            const uint32_t *g = shapes[sh], *b = shapes[sh] + 3;
            uint32_t nb = g[0] * g[1] * g[2], nt = b[0] * b[1] * b[2];
            int32_t *o = calloc((size_t)nb * nt * 8, 4);
            rk_emu *e = et_emu(TARGETS[t], 2);
            uint64_t ob = et_buf(e, o, (size_t)nb * nt * 32, "out");
            void *args[] = {&ob};
            assert_int_equal(et_launch(e, k, g[0], g[1], g[2], b[0], b[1], b[2], args), RK_OK);
            uint32_t W = t ? 32 : 64;
            for (uint32_t bl = 0; bl < nb; bl++)
                for (uint32_t th = 0; th < nt; th++) {
                    const int32_t *r = o + ((size_t)bl * nt + th) * 8;
                    assert_int_equal(r[0], (int)(th % b[0]));
                    assert_int_equal(r[1], (int)(th / b[0] % b[1]));
                    assert_int_equal(r[2], (int)(th / (b[0] * b[1])));
                    assert_int_equal(r[3], (int)(th % W));
                    assert_int_equal(r[4], (int)bl);
                    assert_int_equal(r[5], (int)nt);
                    assert_int_equal(r[6], (int)g[0]);
                    assert_int_equal(r[7], (int)g[2]);
                }
            rk_emu_free(e);
            free(o);
        }
    rk_kernel_free(k);
}

/* NVIDIA named barriers: in a block of 4 warps, warps 0-1 exchange through
 * barrier 1 (count 64) and warps 2-3 through barrier 2; a count that no
 * group of warps reaches is a deadlock. */
static rk_kernel *named_kernel(int count) {
    rk_kernel *k = rk_kernel_new("named");
    rk_value out = et_ptr_param(k, "out", RK_T_I32);
    uint32_t d = 128;
    rk_value sm = rk_build_smem_alloc(k, RK_T_I32, &d, 1);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_store_smem(k, sm, &tid, tid);
    rk_value lo = rk_build_cmp(k, "lt", tid, rk_const_i32(k, 64));
    for (int half = 0; half < 2; half++) {
        rk_value c = half ? rk_build_xor(k, lo, rk_const_bool(k, true)) : lo;
        rk_if_begin(k, c);
        rk_build_named_barrier(k, 1 + half, count);
        rk_if_end(k, NULL, 0);
    }
    /* read the other warp of the pair: tid ^ 32 */
    rk_value j = rk_build_xor(k, tid, rk_const_i32(k, 32));
    rk_value v = rk_load_smem(k, sm, &j, 1);
    rk_store_global(k, out, tid, v);
    rk_build_return(k);
    et_finish(k);
    return k;
}

static void t_named_barriers(void **state) {
    (void)state;
    int32_t o[128];
    rk_emu *e = et_emu("sm_90", 1);
    uint64_t ob = et_buf(e, o, sizeof o, "out");
    void *args[] = {&ob};
    rk_kernel *k = named_kernel(64);
    assert_int_equal(et_launch(e, k, 1, 1, 1, 128, 1, 1, args), RK_OK);
    for (int i = 0; i < 128; i++) assert_int_equal(o[i], i ^ 32);
    rk_kernel_free(k);
    k = named_kernel(96);
    et_expect_error(et_launch(e, k, 1, 1, 1, 128, 1, 1, args), RK_ERR_DEVICE, "barrier deadlock", "'tile.named_barrier'",
                    NULL);
    rk_kernel_free(k);
    rk_emu_free(e);
}

/* bar.arrive hand-off between the two warps of 64 threads, `rounds` times
 * in turn: warp w waits on barrier 1 + w, writes its round into shared
 * memory, arrives on the other's barrier; warp 1 is let in first by warp 0's
 * opening arrival. out[tid] = what the thread read of the other warp's last
 * write before its own (the ordering the hand-off promises). */
static rk_kernel *arrive_kernel(int64_t count, bool opening) {
    rk_kernel *k = rk_kernel_new("arrive_handoff");
    rk_value out = et_ptr_param(k, "out", RK_T_I32);
    uint32_t d = 64;
    rk_value sm = rk_build_smem_alloc(k, RK_T_I32, &d, 1);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value c5 = rk_const_i32(k, 5), c31 = rk_const_i32(k, 31);
    rk_value w = rk_build_lshr(k, tid, c5), lane = rk_build_and(k, tid, c31);
    rk_value w0 = rk_build_cmp(k, "eq", w, rk_const_i32(k, 0));
    rk_if_begin(k, w0);
    if (opening) rk_build_named_barrier_arrive(k, 2, count);   /* warp 1 goes first */
    rk_if_end(k, NULL, 0);
    rk_value zero = rk_const_i32(k, 0), one = rk_const_i32(k, 1);
    rk_value init = rk_const_i32(k, -1), seen;
    rk_value r = rk_for_begin(k, zero, rk_const_i32(k, 3), one, "round", 1, &init, NULL, &seen);
    for (int me = 0; me < 2; me++) {
        rk_value mine = me ? rk_build_xor(k, w0, rk_const_bool(k, true)) : w0;
        rk_value other = rk_const_i32(k, 32 * (1 - me)), self = rk_const_i32(k, 32 * me);
        rk_type t = RK_T_I32;
        rk_value got;
        rk_if_else_begin(k, mine, 1, &t, &got);
        rk_build_named_barrier(k, 1 + me, count);
        rk_value oi = rk_build_add(k, other, lane);
        rk_value v = rk_load_smem(k, sm, &oi, 1);
        rk_value si = rk_build_add(k, self, lane);
        rk_value tag = rk_build_add(k, r, rk_const_i32(k, 100 * (me + 1)));
        rk_store_smem(k, sm, &si, tag);
        rk_build_named_barrier_arrive(k, 2 - me, count);
        rk_else(k, &v, 1);
        rk_if_end(k, &seen, 1);
        seen = got;
    }
    rk_value y = seen, fin;
    rk_for_end(k, &y, 1, &fin);
    rk_store_global(k, out, tid, fin);
    rk_build_return(k);
    et_finish(k);
    return k;
}

static void t_named_barrier_arrive(void **state) {
    (void)state;
    int32_t o[64];
    rk_emu *e = et_emu("sm_90", 1);
    uint64_t ob = et_buf(e, o, sizeof o, "out");
    void *args[] = {&ob};
    rk_kernel *k = arrive_kernel(64, true);
    for (int i = 0; i < 64; i++) o[i] = -7;
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    /* warp 1 runs round r first and reads warp 0's round r - 1 (nothing, 0 from the fresh
     * shared memory, in round 0); warp 0 then reads warp 1's round r */
    for (int i = 0; i < 64; i++) assert_int_equal(o[i], i < 32 ? 200 + 2 : 100 + 1);
    rk_kernel_free(k);
    k = arrive_kernel(64, false);   /* no opening arrival: both warps wait forever */
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE, "barrier deadlock", NULL);
    rk_kernel_free(k);
    rk_emu_free(e);
}

/* A loop whose step is not positive would never end: a fault, not a hang. */
static void t_bad_loops(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("spin");
    rk_value step = rk_add_param(k, "step", RK_T_I32, NULL);
    rk_value zero = rk_const_i32(k, 0), ten = rk_const_i32(k, 10);
    rk_for_begin(k, zero, ten, step, "j", 0, NULL, NULL, NULL);
    rk_for_end(k, NULL, 0, NULL);
    rk_build_return(k);
    et_finish(k);
    rk_emu *e = et_emu("gfx942", 1);
    int32_t st0 = 0, stm = -2;
    void *a0[] = {&st0}, *a1[] = {&stm};
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, a0), RK_ERR_DEVICE, "step 0 <= 0 would never end", NULL);
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, a1), RK_ERR_DEVICE, "never end", NULL);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* Bad launches are refused with the field and its limit. */
static void t_bad_launch(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("empty");
    rk_value p = et_ptr_param(k, "p", RK_T_F32);
    (void)p;
    rk_build_return(k);
    et_finish(k);
    rk_emu *e = et_emu("gfx950", 1);
    uint64_t a = 0;
    void *args[] = {&a};
    et_expect_error(et_launch(e, k, 0, 1, 1, 64, 1, 1, args), RK_ERR_INVALID, "grid.x is 0", NULL);
    et_expect_error(et_launch(e, k, 1, 1, 1, 2048, 1, 1, args), RK_ERR_INVALID, "exceeds gfx950's limit of 1024", NULL);
    et_expect_error(et_launch(e, k, 1, 1, 1, 512, 1, 1, args), RK_ERR_INVALID, "max_workgroup_size of 256", NULL);
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, NULL), RK_ERR_INVALID, "args is NULL", NULL);
    void *nulls[] = {NULL};
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, nulls), RK_ERR_INVALID, "argument 0 (%p)", NULL);
    rk_emu_free(e);
    rk_kernel_free(k);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_divergent_if),
        cmocka_unit_test(t_divergent_loops),
        cmocka_unit_test(t_loop_steps),
        cmocka_unit_test(t_multiwave_barriers),
        cmocka_unit_test(t_grids),
        cmocka_unit_test(t_named_barriers),
        cmocka_unit_test(t_named_barrier_arrive),
        cmocka_unit_test(t_bad_loops),
        cmocka_unit_test(t_bad_launch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
