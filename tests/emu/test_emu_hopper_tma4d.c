/* rocke tests — tile.tma_load_4d on the emulator against a per-element
 * formula: random 4-D tensors of 2- and 4-byte elements with odd extents and
 * padded strides, boxes with traversal strides 1..3 on the outer dimensions
 * hanging over every edge (negative origins too: zeros there), swizzle none
 * and 128; the landed LDS image is copied out and compared byte for byte.
 * Plus: a 2-D op on a rank-4 map and a 4-D op on a 2-D map are refused.
 * Layer: tests. */
#include "hopper_test.h"

typedef struct tcase {
    uint32_t eb, swz;
    uint64_t dim[4], stride[4];   /* stride[0] = eb; bytes */
    uint32_t box[4], es[4];
    int32_t x[4];
} tcase;

static uint32_t take(const tcase *c, int i) { return (c->box[i] + c->es[i] - 1) / c->es[i]; }
static uint32_t box_bytes(const tcase *c) { return take(c, 0) * take(c, 1) * take(c, 2) * take(c, 3) * c->eb; }

/* thread 0: init, expect the box's bytes, load at x; everyone: wait, copy the LDS words to out */
static rk_kernel *tma4_kernel(uint32_t bytes, bool two_d) {
    rk_kernel *k = rk_kernel_new("tma4_model");
    rk_value map = ht_tensormap_param(k, "map");
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value x[4];
    for (int i = 0; i < 4; i++) {
        char nm[4] = {'x', (char)('0' + i), 0, 0};
        x[i] = rk_add_param(k, nm, RK_T_I32, NULL);
    }
    uint32_t words = (bytes + 3) / 4;
    rk_value dst = ht_alloc(k, RK_T_I32, words, 1024);
    rk_value bars = ht_alloc(k, RK_T_I64, 1, 16);
    ht_thread0_begin(k);
    ht_mbar_init(k, bars, 0, ht_c32(k, 1));
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
    ht_thread0_begin(k);
    ht_mbar_expect(k, bars, 0, (int32_t)bytes);
    rk_value zero = ht_c32(k, 0);
    if (two_d) rk_build_tma_load_2d(k, map, dst, zero, bars, zero, x[0], x[1]);
    else rk_build_tma_load_4d(k, map, dst, zero, bars, zero, x[0], x[1], x[2], x[3]);
    rk_if_end(k, NULL, 0);
    ht_mbar_wait(k, bars, 0, ht_c32(k, 0));
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

static rk_status run(const tcase *c, bool two_d_op, bool two_d_map, uint8_t **image, uint8_t **tensor) {
    size_t tbytes = (size_t)(c->dim[3] * c->stride[3]);
    uint8_t *src = malloc(tbytes);
    for (size_t i = 0; i < tbytes; i++) src[i] = (uint8_t)(et_rand() | 1);   /* never 0: a zero fill shows */
    uint32_t bytes = box_bytes(c), words = (bytes + 3) / 4;
    uint8_t *out = malloc(words * 4);
    rk_emu *e = et_emu("sm_90", 1);
    uint64_t as = et_buf(e, src, tbytes, "tensor"), ao = et_buf(e, out, words * 4, "out");
    uint8_t map[128];
    if (two_d_map) {
        assert_int_equal(rk_emu_tensormap_encode_2d(as, c->eb, c->dim[1], c->dim[0], c->stride[1], c->box[1],
                                                    c->box[0], c->swz, map), RK_OK);
    } else {
        const uint64_t st[3] = {c->stride[1], c->stride[2], c->stride[3]};
        assert_int_equal(rk_emu_tensormap_encode_nd(as, c->eb, 4, c->dim, st, c->box, c->es, c->swz, map), RK_OK);
    }
    rk_kernel *k = tma4_kernel(bytes, two_d_op);
    void *args[] = {map, &ao, (void *)&c->x[0], (void *)&c->x[1], (void *)&c->x[2], (void *)&c->x[3]};
    rk_status st = et_launch(e, k, 1, 1, 1, 128, 1, 1, args);
    rk_emu_free(e);
    rk_kernel_free(k);
    *image = out;
    *tensor = src;
    return st;
}

/* element j of the box (j0 innermost) at x_i + j_i * es_i; rows of the innermost dimension, the 128-byte
 * swizzle exchanging 16-byte chunks within each 128-byte line by the line's number mod 8 */
static void expected(const tcase *c, const uint8_t *src, uint8_t *want) {
    uint32_t t0 = take(c, 0), t1 = take(c, 1), t2 = take(c, 2), t3 = take(c, 3), row = t0 * c->eb;
    for (uint32_t j3 = 0; j3 < t3; j3++)
        for (uint32_t j2 = 0; j2 < t2; j2++)
            for (uint32_t j1 = 0; j1 < t1; j1++)
                for (uint32_t j0 = 0; j0 < t0; j0++) {
                    uint32_t r = (j3 * t2 + j2) * t1 + j1, lin = r * row + j0 * c->eb, at = lin;
                    if (c->swz) {
                        uint32_t line = lin / 128, chunk = (lin / 16) % 8;
                        at = lin - 16 * chunk + 16 * ((chunk ^ line) & 7);
                    }
                    int64_t g[4] = {(int64_t)c->x[0] + j0, (int64_t)c->x[1] + (int64_t)j1 * c->es[1],
                                    (int64_t)c->x[2] + (int64_t)j2 * c->es[2], (int64_t)c->x[3] + (int64_t)j3 * c->es[3]};
                    bool in = true;
                    size_t off = 0;
                    for (int i = 0; i < 4; i++) {
                        in = in && g[i] >= 0 && (uint64_t)g[i] < c->dim[i];
                        off += (size_t)(in ? g[i] : 0) * (size_t)c->stride[i];
                    }
                    for (uint32_t b = 0; b < c->eb; b++) want[at + b] = in ? src[off + b] : 0;
                }
}

static void t_boxes(void **state) {
    (void)state;
    for (int n = 0; n < 40; n++) {
        tcase c = {.eb = n % 2 ? 4 : 2, .swz = n % 3 ? 128 : 0};
        c.box[0] = 128 / c.eb;   /* one 128-byte row: the swizzle span */
        c.dim[0] = 1 + (uint64_t)(et_rand() % (2 * c.box[0]));
        c.stride[0] = c.eb;
        c.stride[1] = (c.dim[0] * c.eb + 15) / 16 * 16 + 16 * (et_rand() % 2);
        c.es[0] = 1;
        for (int i = 1; i < 4; i++) {
            c.dim[i] = 1 + (uint64_t)(et_rand() % (i == 3 ? 3 : 9));
            if (i > 1) c.stride[i] = c.stride[i - 1] * c.dim[i - 1] + 16 * (et_rand() % 2);
            c.es[i] = 1 + (uint32_t)(et_rand() % 3);
            c.box[i] = 1 + (uint32_t)(et_rand() % (i == 3 ? 3 : 7));
        }
        for (int i = 0; i < 4; i++) {
            int64_t span = (int64_t)c.dim[i] + (int64_t)c.box[i];
            c.x[i] = (int32_t)((int64_t)(et_rand() % (uint64_t)span) - (int64_t)c.box[i] / 2 - 1);
        }
        uint32_t bytes = box_bytes(&c);
        uint8_t *img, *src, *want = calloc(1, bytes + 4);
        rk_status st = run(&c, false, false, &img, &src);
        if (st) printf("%s\n", rk_error_message());
        assert_int_equal(st, RK_OK);
        expected(&c, src, want);
        for (uint32_t b = 0; b < bytes; b++) {
            if (img[b] != want[b])
                printf("case %d eb %u swz %u: byte %u is 0x%02x, want 0x%02x\n", n, c.eb, c.swz, b, img[b], want[b]);
            assert_int_equal(img[b], want[b]);
        }
        free(img), free(src), free(want);
    }
}

static void t_rank_mismatch(void **state) {
    (void)state;
    tcase c = {.eb = 2, .swz = 128, .dim = {64, 5, 3, 2}, .stride = {2, 128, 640, 1920}, .box = {64, 5, 3, 1},
               .es = {1, 1, 1, 1}};
    uint8_t *img, *src;
    et_expect_error(run(&c, true, false, &img, &src), RK_ERR_INVALID, "has rank 4, the op reads rank 2", NULL);
    free(img), free(src);
    et_expect_error(run(&c, false, true, &img, &src), RK_ERR_INVALID, "has rank 2, the op reads rank 4", NULL);
    free(img), free(src);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_boxes),
        cmocka_unit_test(t_rank_mismatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
