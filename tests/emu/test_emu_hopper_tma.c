/* rocke tests — tile.tma_load_2d on the emulator against a per-element
 * formula: random tensors of 1-, 2-, 4- and 8-byte elements with odd shapes,
 * boxes hanging over every edge (zeros there), every swizzle; the landed LDS
 * image is copied out and compared byte for byte. Plus the TMA checks:
 * reading the destination before the mbarrier phase completed, more bytes
 * than expect_tx announced, a map the emulator did not make. Layer: tests. */
#include "hopper_test.h"

/* thread 0: init, expect, load; everyone: wait (unless skip_wait), then the
 * raw LDS words go to out */
static rk_kernel *tma_kernel(uint32_t box_bytes, int32_t expect, bool skip_wait) {
    rk_kernel *k = rk_kernel_new("tma_model");
    rk_value map = ht_tensormap_param(k, "map");
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value x = rk_add_param(k, "x", RK_T_I32, NULL), y = rk_add_param(k, "y", RK_T_I32, NULL);
    uint32_t words = (box_bytes + 3) / 4;
    rk_value dst = ht_alloc(k, RK_T_I32, words, 1024);
    rk_value bars = ht_alloc(k, RK_T_I64, 1, 16);
    ht_thread0_begin(k);
    ht_mbar_init(k, bars, 0, ht_c32(k, 1));
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
    ht_thread0_begin(k);
    ht_mbar_expect(k, bars, 0, expect);
    ht_tma(k, map, dst, bars, 0, x, y);
    rk_if_end(k, NULL, 0);
    if (!skip_wait) ht_mbar_wait(k, bars, 0, ht_c32(k, 0));
    rk_value t = rk_build_thread_id(k, 0);
    rk_value lo = ht_c32(k, 0), hi = ht_c32(k, (int32_t)words), step = ht_c32(k, 128);
    rk_value base = rk_for_begin(k, lo, hi, step, NULL, 0, NULL, NULL, NULL);
    rk_value i = rk_build_add(k, base, t);
    rk_value inb = rk_build_cmp(k, "lt", i, hi);
    rk_if_begin(k, inb);
    rk_value v = rk_load_smem(k, dst, &i, 1);
    rk_store_global(k, out, i, v);
    rk_if_end(k, NULL, 0);
    rk_for_end(k, NULL, 0, NULL);
    rk_build_return(k);
    et_finish(k);
    return k;
}

typedef struct tcase {
    uint32_t eb, rows, cols, stride, box_rows, box_cols, swz;
    int32_t x, y;
} tcase;

static rk_status run(const tcase *c, int32_t expect, bool skip_wait, bool foreign_map, uint8_t **image,
                     uint8_t **tensor) {
    size_t tbytes = (size_t)c->rows * c->stride;
    uint8_t *src = malloc(tbytes);
    for (size_t i = 0; i < tbytes; i++) src[i] = (uint8_t)(et_rand() | 1);   /* never 0: a zero fill shows */
    uint32_t box = c->box_rows * c->box_cols * c->eb, words = (box + 3) / 4;
    uint8_t *out = malloc(words * 4);
    rk_emu *e = et_emu("sm_90", 1);
    uint64_t as = et_buf(e, src, tbytes, "tensor"), ao = et_buf(e, out, words * 4, "out");
    uint8_t map[128];
    assert_int_equal(rk_emu_tensormap_encode_2d(as, c->eb, c->rows, c->cols, c->stride, c->box_rows, c->box_cols,
                                                c->swz, map), RK_OK);
    if (foreign_map) map[0] ^= 0x5a;
    rk_kernel *k = tma_kernel(box, expect, skip_wait);
    void *args[] = {map, &ao, (void *)&c->x, (void *)&c->y};
    rk_status st = et_launch(e, k, 1, 1, 1, 128, 1, 1, args);
    rk_emu_free(e);
    rk_kernel_free(k);
    *image = out;
    *tensor = src;
    return st;
}

/* the byte the box puts at LDS offset `at`: element (r, c) at r*row + c*eb
 * before the swizzle, which exchanges 16-byte chunks within each 128-byte
 * line by the line's number (mod span / 16) */
static void expected(const tcase *c, const uint8_t *src, uint8_t *want) {
    uint32_t row = c->box_cols * c->eb;
    for (uint32_t r = 0; r < c->box_rows; r++)
        for (uint32_t col = 0; col < c->box_cols; col++) {
            uint32_t lin = r * row + col * c->eb, at = lin;
            if (c->swz) {
                uint32_t mask = c->swz / 16 - 1, line = lin / 128, chunk = (lin / 16) % 8;
                at = lin - 16 * chunk + 16 * ((chunk & ~mask) | ((chunk ^ line) & mask));
            }
            int64_t gy = (int64_t)c->y + r, gx = (int64_t)c->x + col;
            bool in = gy >= 0 && gx >= 0 && gy < (int64_t)c->rows && gx < (int64_t)c->cols;
            for (uint32_t b = 0; b < c->eb; b++)
                want[at + b] = in ? src[(size_t)gy * c->stride + (size_t)gx * c->eb + b] : 0;
        }
}

static void t_boxes(void **state) {
    (void)state;
    static const uint32_t ebs[] = {1, 2, 4, 8}, swzs[] = {0, 32, 64, 128};
    for (uint32_t ie = 0; ie < 4; ie++)
        for (uint32_t is = 0; is < 4; is++) {
            tcase c = {.eb = ebs[ie], .swz = swzs[is]};
            uint32_t span = c.swz ? c.swz : 16u * (1 + (uint32_t)(et_rand() % 4));
            /* a box row of the whole span, or (with rows in multiples of 8) half of it */
            bool half = c.swz >= 64 && et_rand() % 2;
            c.box_cols = (half ? span / 2 : span) / c.eb;
            c.box_rows = half ? 8 * (1 + (uint32_t)(et_rand() % 3)) : 1 + (uint32_t)(et_rand() % 37);
            c.rows = 1 + (uint32_t)(et_rand() % 70);
            c.cols = 1 + (uint32_t)(et_rand() % (3 * c.box_cols));
            c.stride = (c.cols * c.eb + 15) / 16 * 16 + 16 * (uint32_t)(et_rand() % 3);
            /* corners and edges: start before, inside or past the end on each axis */
            c.x = (int32_t)(et_rand() % (c.cols + c.box_cols)) - (int32_t)c.box_cols / 2;
            c.y = (int32_t)(et_rand() % (c.rows + c.box_rows)) - (int32_t)c.box_rows / 2;
            uint32_t box = c.box_rows * c.box_cols * c.eb;
            uint8_t *img, *src, *want = calloc(1, box + 4);
            rk_status st = run(&c, (int32_t)box, false, false, &img, &src);
            if (st) printf("%s\n", rk_error_message());
            assert_int_equal(st, RK_OK);
            expected(&c, src, want);
            for (uint32_t b = 0; b < box; b++) {
                if (img[b] != want[b])
                    printf("eb %u swz %u box %ux%u at (%d, %d) of %ux%u: byte %u is 0x%02x, want 0x%02x\n", c.eb, c.swz,
                           c.box_rows, c.box_cols, c.x, c.y, c.rows, c.cols, b, img[b], want[b]);
                assert_int_equal(img[b], want[b]);
            }
            free(img), free(src), free(want);
        }
}

static void t_checks(void **state) {
    (void)state;
    tcase c = {.eb = 4, .rows = 20, .cols = 24, .stride = 96, .box_rows = 16, .box_cols = 32, .swz = 128, .x = 3, .y = -2};
    uint8_t *img, *src;
    /* read the destination with no wait: the bytes are still in flight */
    rk_status st = run(&c, 2048, true, false, &img, &src);
    et_expect_error(st, RK_ERR_DEVICE, "before the asynchronous copy into it completed", "'tile.tma_load_2d'",
                    "tile.mbarrier_wait", NULL);
    free(img), free(src);
    /* announce half the box: the phase gets more bytes than expected */
    st = run(&c, 1024, false, false, &img, &src);
    et_expect_error(st, RK_ERR_DEVICE, "expect_tx underflow", "1024 bytes more", NULL);
    free(img), free(src);
    /* announce more than the box: the phase can never complete */
    st = run(&c, 4096, false, false, &img, &src);
    et_expect_error(st, RK_ERR_DEVICE, "mbarrier deadlock", "'tile.mbarrier_wait'", "transaction count of 2048", NULL);
    free(img), free(src);
    st = run(&c, 2048, false, true, &img, &src);
    et_expect_error(st, RK_ERR_INVALID, "was not made for the emulator", NULL);
    free(img), free(src);
    uint8_t map[128];
    assert_int_equal(rk_emu_tensormap_encode_2d(0x1000, 4, 8, 8, 32, 8, 64, 128, map), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "wider than the 128-byte swizzle span"));
    assert_int_equal(rk_emu_tensormap_encode_2d(0x1000, 4, 8, 8, 24, 8, 8, 0, map), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "row stride"));
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_boxes),
        cmocka_unit_test(t_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
