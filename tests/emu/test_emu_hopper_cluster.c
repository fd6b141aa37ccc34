/* rocke tests — thread-block clusters on the emulator: the blocks of a
 * cluster share one tile, each rank loading its slice of rows with a
 * multicast TMA to every block; a remote mbarrier arrive per block says it
 * is done; cluster barriers fence setup and exit. Every block's copy of the
 * tile is checked against the tensor (zeros past its last row), and the
 * cluster identity registers against the grid arithmetic, for 2x1, 1x2 and
 * 4x1 clusters over odd grids. Plus the misuse messages: a mask naming a rank
 * outside the cluster, a remote arrive at such a rank, a grid that is not a
 * whole number of clusters, a cluster wait with no arrive. Layer: tests. */
#include "hopper_test.h"

enum { COLS = 24, SLICE = 4 };   /* a rank's slice: SLICE rows of COLS i32 (96-byte rows, 384 bytes: 128-aligned; no swizzle) */

typedef enum { OK_RUN, BAD_MASK, BAD_RANK, WAIT_FIRST } misuse;

/* out[block][tile], ids[block] = rank | cluster linear id << 8 | cluster size << 16 */
static rk_kernel *cluster_kernel(uint32_t cx, uint32_t cy, misuse bad) {
    uint32_t cs = cx * cy, tile = cs * SLICE * COLS;
    rk_kernel *k = rk_kernel_new("cluster_model");
    rk_kernel_set_attr_int(k, "max_workgroup_size", 64);
    rk_kernel_set_cluster_dims(k, cx, cy, 1);
    rk_value map = ht_tensormap_param(k, "map");
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value ids = rk_add_param(k, "ids", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value dst = ht_alloc(k, RK_T_I32, tile, 1024);
    rk_value bars = ht_alloc(k, RK_T_I64, 2, 16);
    rk_value zero = ht_c32(k, 0), one = ht_c32(k, 1), csz = ht_c32(k, (int32_t)cs);
    if (bad == WAIT_FIRST) rk_build_cluster_wait(k);
    ht_thread0_begin(k);
    ht_mbar_init(k, bars, 0, one);
    ht_mbar_init(k, bars, 1, csz);
    rk_build_fence_mbarrier_init(k);
    rk_if_end(k, NULL, 0);
    rk_build_cluster_arrive(k);
    rk_build_cluster_wait(k);
    /* the cluster's linear id and this block's rank */
    rk_value rank = rk_build_cluster_rank(k);
    rk_value cidx = rk_build_cluster_id(k, "x"), cidy = rk_build_cluster_id(k, "y");
    rk_value gdx = rk_build_grid_dim(k, 0), cdx = rk_build_cluster_dim(k, "x");
    rk_value ncx = rk_build_div(k, gdx, cdx);
    rk_value cyl = rk_build_mul(k, cidy, ncx);
    rk_value clin = rk_build_add(k, cidx, cyl);
    ht_thread0_begin(k);
    rk_value tx = ht_c32(k, (int32_t)(tile * 4));
    rk_build_mbarrier_arrive_expect_tx(k, bars, zero, tx);
    rk_value slice_elems = ht_c32(k, SLICE * COLS), slice_rows = ht_c32(k, SLICE), tile_rows = ht_c32(k, (int32_t)(cs * SLICE));
    rk_value didx = rk_build_mul(k, rank, slice_elems);
    rk_value y0 = rk_build_mul(k, clin, tile_rows), ys = rk_build_mul(k, rank, slice_rows);
    rk_value y = rk_build_add(k, y0, ys);
    rk_value mask = ht_c32(k, bad == BAD_MASK ? (int32_t)(1u << cs) | 1 : (int32_t)((1u << cs) - 1u));
    rk_build_tma_load_2d_multicast(k, map, dst, didx, bars, zero, zero, y, mask);
    rk_if_end(k, NULL, 0);
    ht_mbar_wait(k, bars, 0, zero);
    rk_value t = rk_build_thread_id(k, 0);
    rk_value bx = rk_build_block_id(k, 0), by = rk_build_block_id(k, 1);
    rk_value byl = rk_build_mul(k, by, gdx);
    rk_value blin = rk_build_add(k, bx, byl);
    rk_value hi = ht_c32(k, (int32_t)tile), step = ht_c32(k, 64), tc = ht_c32(k, (int32_t)tile);
    rk_value obase = rk_build_mul(k, blin, tc);
    rk_value base = rk_for_begin(k, zero, hi, step, NULL, 0, NULL, NULL, NULL);
    rk_value i = rk_build_add(k, base, t);
    rk_value inb = rk_build_cmp(k, "lt", i, hi);
    rk_if_begin(k, inb);
    rk_value v = rk_load_smem(k, dst, &i, 1);
    rk_value oi = rk_build_add(k, obase, i);
    rk_store_global(k, out, oi, v);
    rk_if_end(k, NULL, 0);
    rk_for_end(k, NULL, 0, NULL);
    /* done with the tile: one arrival on every block's "done" barrier */
    ht_thread0_begin(k);
    rk_value sh8 = ht_c32(k, 8), sh16 = ht_c32(k, 16);
    rk_value cl8 = rk_build_shl(k, clin, sh8), cs16 = rk_build_shl(k, csz, sh16);
    rk_value id0 = rk_build_or(k, rank, cl8);
    rk_value id = rk_build_or(k, id0, cs16);
    rk_store_global(k, ids, blin, id);
    for (uint32_t r = 0; r < cs; r++) {
        rk_value rr = ht_c32(k, (int32_t)(bad == BAD_RANK ? r + cs : r)), b1 = ht_c32(k, 1);
        rk_build_mbarrier_arrive_cluster(k, bars, b1, rr);
    }
    rk_if_end(k, NULL, 0);
    ht_mbar_wait(k, bars, 1, zero);
    rk_build_cluster_arrive(k);
    rk_build_cluster_wait(k);
    rk_build_return(k);
    et_finish(k);
    return k;
}

static rk_status run(uint32_t cx, uint32_t cy, uint32_t gx, uint32_t gy, uint32_t rows, misuse bad, bool check) {
    uint32_t cs = cx * cy, tile = cs * SLICE * COLS, nb = gx * gy;
    int32_t *src = malloc((size_t)rows * COLS * 4), *out = malloc((size_t)nb * tile * 4), *ids = malloc(nb * 4);
    for (uint32_t i = 0; i < rows * COLS; i++) src[i] = (int32_t)(et_rand() | 1);   /* never 0 */
    rk_emu *e = et_emu("sm_90a", 2);
    uint64_t as = et_buf(e, src, (size_t)rows * COLS * 4, "tensor"), ao = et_buf(e, out, (size_t)nb * tile * 4, "out");
    uint64_t ai = et_buf(e, ids, nb * 4, "ids");
    uint8_t map[128];
    assert_int_equal(rk_emu_tensormap_encode_2d(as, 4, rows, COLS, COLS * 4, SLICE, COLS, 0, map), RK_OK);
    rk_kernel *k = cluster_kernel(cx, cy, bad);
    void *args[] = {map, &ao, &ai};
    rk_status st = et_launch(e, k, gx, gy, 1, 64, 1, 1, args);
    if (check && st == RK_OK)
        for (uint32_t by = 0; by < gy; by++)
            for (uint32_t bx = 0; bx < gx; bx++) {
                uint32_t b = bx + by * gx, rank = bx % cx + (by % cy) * cx, clin = bx / cx + (by / cy) * (gx / cx);
                assert_int_equal(ids[b], (int32_t)(rank | clin << 8 | cs << 16));
                for (uint32_t j = 0; j < tile; j++) {
                    uint32_t row = clin * cs * SLICE + j / COLS, col = j % COLS;
                    int32_t want = row < rows ? src[row * COLS + col] : 0;
                    if (out[(size_t)b * tile + j] != want)
                        fail_msg("block (%u,%u) element %u: %d, want %d", bx, by, j, out[(size_t)b * tile + j], want);
                }
            }
    rk_emu_free(e);
    rk_kernel_free(k);
    free(src);
    free(out);
    free(ids);
    return st;
}

/* 2x1 over 10 blocks (5 clusters, an odd count), 1x2 over a 3x4 grid, 4x1
 * over 8; the tensor's rows end inside the last cluster's tile */
static void test_cluster_multicast(void **state) {
    (void)state;
    assert_int_equal(run(2, 1, 10, 1, 5 * 2 * SLICE - 2, OK_RUN, true), RK_OK);
    assert_int_equal(run(1, 2, 3, 4, 6 * 2 * SLICE - 4, OK_RUN, true), RK_OK);
    assert_int_equal(run(4, 1, 8, 1, 2 * 4 * SLICE - 1, OK_RUN, true), RK_OK);
}

static void test_cluster_misuse(void **state) {
    (void)state;
    et_expect_error(run(2, 1, 4, 1, 12, BAD_MASK, false), RK_ERR_DEVICE, "multicast CTA mask 0x5 names ranks outside",
                    "cluster's 2 blocks", NULL);
    et_expect_error(run(2, 1, 4, 1, 12, BAD_RANK, false), RK_ERR_DEVICE, "names cluster rank 2", "ranks 0..1", NULL);
    et_expect_error(run(2, 1, 5, 1, 12, OK_RUN, false), RK_ERR_INVALID, "grid.x = 5 is not a multiple",
                    "cluster_dims x = 2", NULL);
    et_expect_error(run(1, 2, 2, 2, 12, WAIT_FIRST, false), RK_ERR_DEVICE,
                    "tile.cluster_wait before any tile.cluster_arrive", NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_multicast),
        cmocka_unit_test(test_cluster_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
