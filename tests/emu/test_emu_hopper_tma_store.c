/* rocke tests — tile.tma_store_2d on the emulator against a per-element
 * formula: a random LDS image stored as a box of random tensors (1-, 2-, 4-
 * and 8-byte elements, odd shapes, every swizzle), the box hanging over
 * every edge (those elements are dropped; the rest of the tensor keeps its
 * bytes). Plus the source checks (alignment, a box past the allocation).
 * Layer: tests. */
#include "hopper_test.h"

/* the block copies `words` of in into an LDS allocation of words + pad,
 * fences, and thread 0 stores the box at (x, y) from element src_idx */
static rk_kernel *store_kernel(uint32_t words, uint32_t pad, int32_t src_idx) {
    rk_kernel *k = rk_kernel_new("tma_store_model");
    rk_value map = ht_tensormap_param(k, "map");
    rk_value in = rk_add_param(k, "in", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value x = rk_add_param(k, "x", RK_T_I32, NULL), y = rk_add_param(k, "y", RK_T_I32, NULL);
    rk_value src = ht_alloc(k, RK_T_I32, words + pad, 1024);
    rk_value t = rk_build_thread_id(k, 0);
    rk_value lo = ht_c32(k, 0), hi = ht_c32(k, (int32_t)words), step = ht_c32(k, 128), at = ht_c32(k, src_idx);
    rk_value base = rk_for_begin(k, lo, hi, step, NULL, 0, NULL, NULL, NULL);
    rk_value i = rk_build_add(k, base, t);
    rk_value inb = rk_build_cmp(k, "lt", i, hi);
    rk_if_begin(k, inb);
    rk_value v = rk_load_global(k, in, i, 1);
    rk_store_smem(k, src, &i, v);
    rk_if_end(k, NULL, 0);
    rk_for_end(k, NULL, 0, NULL);
    rk_build_fence_proxy_async(k);
    rk_build_sync(k);
    ht_thread0_begin(k);
    rk_build_tma_store_2d(k, map, src, at, x, y);
    rk_build_bulk_commit_group(k);
    const rk_bulk_wait_group_opts rd = {.read = RK_SOME(true)};
    rk_build_bulk_wait_group_ex(k, 0, &rd);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    return k;
}

typedef struct scase {
    uint32_t eb, rows, cols, stride, box_rows, box_cols, swz;
    int32_t x, y;
} scase;

/* Store the LDS image img (the box's bytes) into tensor (rows x stride
 * bytes), in place. */
static rk_status run(const scase *c, uint32_t pad, int32_t src_idx, uint8_t *tensor, const uint8_t *img) {
    size_t tbytes = (size_t)c->rows * c->stride;
    uint32_t box = c->box_rows * c->box_cols * c->eb, words = (box + 3) / 4;
    rk_emu *e = et_emu("sm_90", 1);
    uint64_t at = et_buf(e, tensor, tbytes, "tensor"), ai = et_buf(e, (void *)img, words * 4, "in");
    uint8_t map[128];
    assert_int_equal(rk_emu_tensormap_encode_2d(at, c->eb, c->rows, c->cols, c->stride, c->box_rows, c->box_cols,
                                                c->swz, map), RK_OK);
    rk_kernel *k = store_kernel(words, pad, src_idx);
    void *args[] = {map, &ai, (void *)&c->x, (void *)&c->y};
    rk_status st = et_launch(e, k, 1, 1, 1, 128, 1, 1, args);
    rk_emu_free(e);
    rk_kernel_free(k);
    return st;
}

/* Box element (r, col) sits at r*row + col*eb of the image before the
 * swizzle, which exchanges 16-byte chunks inside each 128-byte line by the
 * line's number (mod span / 16); it lands at (x + col, y + r) when that is
 * inside the tensor. */
static void expected(const scase *c, const uint8_t *img, uint8_t *want) {
    uint32_t row = c->box_cols * c->eb;
    for (uint32_t r = 0; r < c->box_rows; r++)
        for (uint32_t col = 0; col < c->box_cols; col++) {
            uint32_t lin = r * row + col * c->eb, at = lin;
            if (c->swz) {
                uint32_t mask = c->swz / 16 - 1, line = lin / 128, chunk = (lin / 16) % 8;
                at = lin - 16 * chunk + 16 * ((chunk & ~mask) | ((chunk ^ line) & mask));
            }
            int64_t gy = (int64_t)c->y + r, gx = (int64_t)c->x + col;
            if (gy < 0 || gx < 0 || gy >= (int64_t)c->rows || gx >= (int64_t)c->cols) continue;
            memcpy(want + (size_t)gy * c->stride + (size_t)gx * c->eb, img + at, c->eb);
        }
}

static void t_boxes(void **state) {
    (void)state;
    static const uint32_t ebs[] = {1, 2, 4, 8}, swzs[] = {0, 32, 64, 128};
    for (uint32_t ie = 0; ie < 4; ie++)
        for (uint32_t is = 0; is < 4; is++) {
            scase c = {.eb = ebs[ie], .swz = swzs[is]};
            uint32_t span = c.swz ? c.swz : 16u * (1 + (uint32_t)(et_rand() % 4));
            c.box_cols = span / c.eb;
            c.box_rows = 1 + (uint32_t)(et_rand() % 37);
            c.rows = 1 + (uint32_t)(et_rand() % 70);
            c.cols = 1 + (uint32_t)(et_rand() % (3 * c.box_cols));
            c.stride = (c.cols * c.eb + 15) / 16 * 16 + 16 * (uint32_t)(et_rand() % 3);
            c.x = (int32_t)(et_rand() % (c.cols + c.box_cols)) - (int32_t)c.box_cols / 2;
            c.y = (int32_t)(et_rand() % (c.rows + c.box_rows)) - (int32_t)c.box_rows / 2;
            uint32_t box = c.box_rows * c.box_cols * c.eb;
            size_t tbytes = (size_t)c.rows * c.stride;
            uint8_t *img = malloc(box + 4), *tensor = malloc(tbytes), *want = malloc(tbytes);
            for (uint32_t b = 0; b < box + 4; b++) img[b] = (uint8_t)et_rand();
            for (size_t b = 0; b < tbytes; b++) tensor[b] = want[b] = (uint8_t)et_rand();
            rk_status st = run(&c, 0, 0, tensor, img);
            if (st) printf("%s\n", rk_error_message());
            assert_int_equal(st, RK_OK);
            expected(&c, img, want);
            for (size_t b = 0; b < tbytes; b++) {
                if (tensor[b] != want[b])
                    printf("eb %u swz %u box %ux%u at (%d, %d) of %ux%u: byte %zu is 0x%02x, want 0x%02x\n", c.eb,
                           c.swz, c.box_rows, c.box_cols, c.x, c.y, c.rows, c.cols, b, tensor[b], want[b]);
                assert_int_equal(tensor[b], want[b]);
            }
            free(img), free(tensor), free(want);
        }
}

static void t_checks(void **state) {
    (void)state;
    scase c = {.eb = 4, .rows = 20, .cols = 24, .stride = 96, .box_rows = 16, .box_cols = 32, .swz = 128};
    uint8_t img[2048 + 4] = {0}, tensor[20 * 96];
    /* a source 64 bytes into the allocation */
    et_expect_error(run(&c, 16, 16, tensor, img), RK_ERR_DEVICE, "TMA store source", "not 128-byte aligned", NULL);
    /* a source whose box runs past the allocation */
    et_expect_error(run(&c, 0, 32, tensor, img), RK_ERR_DEVICE, "does not fit in", NULL);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_boxes),
        cmocka_unit_test(t_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
