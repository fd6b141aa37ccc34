/* rocke tests — kernel-argument packing: a table of signatures with their
 * offsets and sizes (the reference's (ptr,i32,ptr) = 24 and GEMM = 36; tensor
 * maps: 128 bytes at multiples of 64), random signatures against an
 * independent offset rule, the packed bytes and the kernelParams pointers
 * (a tensor map's 64-byte aligned in memory), f16/bf16 rounding, signatures
 * from kernels and manifest type names, and every error naming its argument. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "rocke/rocke.h"

/* ---- the table --------------------------------------------------------------------- */
typedef struct sig_case {
    const char *what;
    const char *types[8];
    uint32_t offsets[8];
    uint32_t size;
} sig_case;

static const sig_case cases[] = {
    {"reference (ptr, i32, ptr)", {"ptr<f32,global>", "i32", "ptr<f32,global>"}, {0, 8, 16}, 24},
    {"GEMM A,B,C,M,N,K", {"ptr<f16, global>", "ptr<f16, global>", "ptr<f16, global>", "i32", "i32", "i32"},
     {0, 8, 16, 24, 28, 32}, 36},
    {"no trailing round-up", {"i32", "i8"}, {0, 4}, 5},
    {"padding before i32", {"i8", "i32"}, {0, 4}, 8},
    {"mixed floats", {"f16", "f32", "bf16", "i64"}, {0, 4, 8, 16}, 24},
    {"small ints then f64", {"i1", "i16", "i8", "f64"}, {0, 2, 4, 8}, 16},
    {"i32 x3 then ptr", {"i32", "i32", "i32", "ptr<i32,global>"}, {0, 4, 8, 16}, 24},
    {"single byte", {"i8"}, {0}, 1},
    {"attention scalars", {"f32", "f32", "i32", "ptr<f16,global>", "f16"}, {0, 4, 8, 16, 24}, 26},
    /* tensor maps: 128 bytes at the next multiple of 64 */
    {"TMA kernel (map, out, x, y)", {"tensormap", "ptr<f32,global>", "i32", "i32"}, {0, 128, 136, 140}, 144},
    {"i32 then a map", {"i32", "tensormap"}, {0, 64}, 192},
    {"map after 65 bytes", {"ptr<i8,global>", "i32", "tensormap", "i8"}, {0, 8, 64, 192}, 193},
    {"two maps", {"tensormap", "tensormap"}, {0, 128}, 256},
    {"map after 136 bytes", {"tensormap", "ptr<f16,global>", "tensormap", "f16"}, {0, 128, 192, 320}, 322},
};

static uint32_t ntypes(const sig_case *c) {
    uint32_t n = 0;
    while (n < 8 && c->types[n]) n++;
    return n;
}

static void test_table(void **state) {
    (void)state;
    static const char *const names[8] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const sig_case *c = &cases[i];
        uint32_t n = ntypes(c);
        rk_argsig *s = NULL;
        assert_int_equal(rk_argsig_new(names, c->types, n, &s), RK_OK);
        assert_int_equal(rk_argsig_count(s), n);
        for (uint32_t j = 0; j < n; j++)
            if (rk_argsig_offset(s, j) != c->offsets[j])
                fail_msg("%s: argument %u at %u, want %u", c->what, j, rk_argsig_offset(s, j), c->offsets[j]);
        if (rk_argsig_size(s) != c->size) fail_msg("%s: %u bytes, want %u", c->what, rk_argsig_size(s), c->size);
        rk_argsig_free(s);
    }
    /* the empty signature */
    rk_argsig *s = NULL;
    assert_int_equal(rk_argsig_new(NULL, NULL, 0, &s), RK_OK);
    assert_int_equal(rk_argsig_size(s), 0);
    rk_argpack p;
    rk_argpack_init(&p);
    assert_int_equal(rk_args_pack(s, NULL, 0, &p), RK_OK);
    assert_int_equal(p.size, 0);
    rk_argpack_free(&p);
    rk_argsig_free(s);
}

/* ---- random signatures against an independent rule ----------------------------------- */
/* indexed by rk_arg_type */
static const char *const scalar_names[] = {"ptr<f16,global>", "i64", "i32", "i16", "i8", "i1", "f64", "f32", "f16", "bf16",
                                           "tensormap"};
static const uint32_t scalar_sizes[] = {8, 8, 4, 2, 1, 1, 8, 4, 2, 2, 128};
static const uint32_t scalar_aligns[] = {8, 8, 4, 2, 1, 1, 8, 4, 2, 2, 64};
_Static_assert(sizeof scalar_sizes / sizeof *scalar_sizes == RK_ARG__COUNT, "one row per argument type");

static void test_random(void **state) {
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    printf("test_random seed %u\n", seed);
    srand(seed);
    char namebuf[24][16];
    const char *names[24], *types[24];
    for (int trial = 0; trial < 500; trial++) {
        uint32_t n = 1 + (uint32_t)(rand() % 24), off = 0, want[24];
        for (uint32_t i = 0; i < n; i++) {
            int t = rand() % 11;
            snprintf(namebuf[i], sizeof namebuf[i], "x%u", i);
            names[i] = namebuf[i];
            types[i] = scalar_names[t];
            /* step up to the next multiple of the alignment, one byte at a time */
            while (off % scalar_aligns[t]) off++;
            want[i] = off;
            off += scalar_sizes[t];
        }
        rk_argsig *s = NULL;
        assert_int_equal(rk_argsig_new(names, types, n, &s), RK_OK);
        for (uint32_t i = 0; i < n; i++) assert_int_equal(rk_argsig_offset(s, i), want[i]);
        assert_int_equal(rk_argsig_size(s), off);
        rk_argsig_free(s);
    }
}

/* ---- packed bytes ------------------------------------------------------------------------- */
static uint64_t le(const uint8_t *p, uint32_t n) {
    uint64_t v = 0;
    for (uint32_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void test_pack_values(void **state) {
    (void)state;
    const char *names[] = {"A", "flag", "n", "h", "B", "scale", "bh", "big", "d", "s"};
    const char *types[] = {"ptr<f32,global>", "i1", "i32", "f16", "ptr<f32,global>", "f32", "bf16", "i64", "f64", "i16"};
    rk_argsig *s = NULL;
    assert_int_equal(rk_argsig_new(names, types, 10, &s), RK_OK);
    /* A@0 flag@8 n@12 h@16 B@24 scale@32 bh@36 big@40 d@48 s@56 -> 58 */
    assert_int_equal(rk_argsig_size(s), 58);
    rk_argpack p;
    rk_argpack_init(&p);
    /* positional first, then by name in any order */
    const rk_arg args[] = {
        rk_arg_ptr(0x1122334455667788ull), rk_arg_i1(true), rk_arg_i32(-3),
        rk_arg_named("s", rk_arg_i16(-2)),  rk_arg_named("d", rk_arg_f64(0.1)),
        rk_arg_named("big", rk_arg_i64(-5000000000ll)), rk_arg_named("bh", rk_arg_bf16(1.0f / 3)),
        rk_arg_named("scale", rk_arg_f32(0.5f)), rk_arg_named("B", rk_arg_ptr(0xdeadbeef00ull)),
        rk_arg_named("h", rk_arg_f16(1.0f / 3)),
    };
    assert_int_equal(rk_args_pack(s, args, 10, &p), RK_OK);
    assert_int_equal(p.size, 58);
    assert_int_equal(p.n, 10);
    for (uint32_t i = 0; i < 10; i++) assert_ptr_equal(p.params[i], p.bytes + rk_argsig_offset(s, i));
    assert_true(le(p.bytes + 0, 8) == 0x1122334455667788ull);
    assert_int_equal(le(p.bytes + 8, 1), 1);
    assert_int_equal(le(p.bytes + 9, 3), 0);               /* padding is zero */
    assert_int_equal((uint32_t)le(p.bytes + 12, 4), 0xfffffffdu);
    assert_int_equal(le(p.bytes + 16, 2), 0x3555);          /* f16(1/3), round to nearest even */
    assert_int_equal(le(p.bytes + 18, 6), 0);
    assert_true(le(p.bytes + 24, 8) == 0xdeadbeef00ull);
    assert_int_equal((uint32_t)le(p.bytes + 32, 4), 0x3f000000u);
    assert_int_equal(le(p.bytes + 36, 2), 0x3eab);          /* bf16(1/3) */
    assert_int_equal(le(p.bytes + 38, 2), 0);
    assert_true(le(p.bytes + 40, 8) == (uint64_t)-5000000000ll);
    double d;
    uint64_t bits = le(p.bytes + 48, 8);
    memcpy(&d, &bits, 8);
    assert_true(d == 0.1);
    assert_int_equal(le(p.bytes + 56, 2), 0xfffe);
    /* the pack is reusable: a second call with other values replaces them */
    const rk_arg again[] = {rk_arg_ptr(1), rk_arg_i1(false), rk_arg_i32(7), rk_arg_f16(2.0f), rk_arg_ptr(2),
                            rk_arg_f32(1.0f), rk_arg_bf16(-1.0f), rk_arg_i64(1), rk_arg_f64(2.0), rk_arg_i16(3)};
    assert_int_equal(rk_args_pack(s, again, 10, &p), RK_OK);
    assert_int_equal(le(p.bytes + 12, 4), 7);
    assert_int_equal(le(p.bytes + 16, 2), 0x4000);
    assert_int_equal(le(p.bytes + 36, 2), 0xbf80);
    rk_argpack_free(&p);
    rk_argsig_free(s);
}

/* ---- tensor maps ---------------------------------------------------------------------------- */
static rk_kernel *tma_kernel(void) {
    rk_kernel *k = rk_kernel_new("tma");
    rk_param_abi tm = {.tensormap = true};
    rk_add_param(k, "tmap", rk_type_ptr(k, RK_T_I8, RK_AS_CONSTANT), &tm);
    rk_add_param(k, "out", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_add_param(k, "x", RK_T_I32, NULL);
    rk_add_param(k, "y", RK_T_I32, NULL);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

static void test_tensormap_pack(void **state) {
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    printf("test_tensormap_pack seed %u\n", seed);
    srand(seed);
    rk_kernel *k = tma_kernel();
    rk_argsig *s = NULL;
    assert_int_equal(rk_argsig_from_kernel(k, &s), RK_OK);
    rk_kernel_free(k);
    assert_int_equal(rk_argsig_type(s, 0), RK_ARG_TENSORMAP);
    assert_int_equal(rk_argsig_type(s, 1), RK_ARG_PTR);
    assert_int_equal(rk_argsig_offset(s, 1), 128);
    assert_int_equal(rk_argsig_size(s), 144);
    uint8_t desc[2][RK_TENSORMAP_BYTES + 1];   /* +1: an odd address is fine for the source */
    for (int d = 0; d < 2; d++)
        for (uint32_t i = 0; i < sizeof desc[d]; i++) desc[d][i] = (uint8_t)rand();
    rk_argpack p;
    rk_argpack_init(&p);
    const rk_arg args[] = {rk_arg_tensormap(desc[0] + 1), rk_arg_ptr(0xabcdef00ull), rk_arg_i32(64),
                           rk_arg_named("y", rk_arg_i32(-32))};
    assert_int_equal(rk_args_pack(s, args, 4, &p), RK_OK);
    assert_int_equal(p.size, 144);
    assert_int_equal((uintptr_t)p.params[0] % RK_TENSORMAP_ALIGN, 0);
    assert_memory_equal(p.params[0], desc[0] + 1, RK_TENSORMAP_BYTES);
    assert_true(le(p.params[1], 8) == 0xabcdef00ull);
    assert_int_equal(le(p.params[2], 4), 64);
    assert_int_equal((uint32_t)le(p.params[3], 4), (uint32_t)-32);
    /* the copy is taken at pack time: the source may change afterwards */
    desc[0][1] ^= 0xff;
    assert_int_not_equal(((uint8_t *)p.params[0])[0], desc[0][1]);
    rk_argsig_free(s);

    /* a larger block (new allocation) keeps every map 64-byte aligned, padding zero */
    const char *names[] = {"n", "a", "p", "b"}, *types[] = {"i32", "tensormap", "ptr<f16,global>", "tensormap"};
    assert_int_equal(rk_argsig_new(names, types, 4, &s), RK_OK);
    assert_int_equal(rk_argsig_size(s), 384);   /* n@0 a@64 p@192 b@256 */
    for (int round = 0; round < 2; round++) {
        const rk_arg a2[] = {rk_arg_i32(7), rk_arg_tensormap(desc[round]), rk_arg_ptr(5), rk_arg_tensormap(desc[1 - round])};
        assert_int_equal(rk_args_pack(s, a2, 4, &p), RK_OK);
        assert_int_equal((uintptr_t)p.bytes % RK_TENSORMAP_ALIGN, 0);
        assert_ptr_equal(p.params[1], p.bytes + 64);
        assert_ptr_equal(p.params[3], p.bytes + 256);
        assert_memory_equal(p.params[1], desc[round], RK_TENSORMAP_BYTES);
        assert_memory_equal(p.params[3], desc[1 - round], RK_TENSORMAP_BYTES);
        assert_int_equal(le(p.bytes + 4, 8), 0);   /* padding */
        assert_int_equal(le(p.bytes + 56, 8), 0);
        assert_int_equal(le(p.bytes + 200, 8), 0);
        assert_int_equal(le(p.bytes + 248, 8), 0);
    }
    rk_argpack_free(&p);
    rk_argsig_free(s);
}

static void test_tensormap_errors(void **state) {
    (void)state;
    rk_kernel *k = tma_kernel();
    rk_argsig *s = NULL;
    assert_int_equal(rk_argsig_from_kernel(k, &s), RK_OK);
    rk_kernel_free(k);
    rk_argpack p;
    rk_argpack_init(&p);
    uint8_t desc[RK_TENSORMAP_BYTES] = {1};
    /* a device pointer where the map belongs */
    rk_arg a[] = {rk_arg_ptr(0x1000), rk_arg_ptr(0x2000), rk_arg_i32(0), rk_arg_i32(0)};
    assert_int_equal(rk_args_pack(s, a, 4, &p), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "argument 'tmap' (#1 of 4) is tensormap in the kernel signature, but "
                                               "the value given is ptr"));
    assert_non_null(strstr(rk_error_message(), "rk_arg_tensormap"));
    /* a map where a pointer belongs */
    a[0] = rk_arg_tensormap(desc);
    a[1] = rk_arg_tensormap(desc);
    assert_int_equal(rk_args_pack(s, a, 4, &p), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "argument 'out' (#2 of 4) is ptr"));
    assert_non_null(strstr(rk_error_message(), "given is tensormap (a tensor map goes only to a parameter marked "
                                               "tensormap)"));
    /* no descriptor */
    a[0] = rk_arg_named("tmap", rk_arg_tensormap(NULL));
    a[1] = rk_arg_ptr(0x2000);
    assert_int_equal(rk_args_pack(s, a, 4, &p), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "argument 'tmap' (#1): the tensor map is NULL"));
    /* missing: the message says what type it is */
    const rk_arg named[] = {rk_arg_named("out", rk_arg_ptr(1)), rk_arg_named("x", rk_arg_i32(0)),
                            rk_arg_named("y", rk_arg_i32(0))};
    assert_int_equal(rk_args_pack(s, named, 3, &p), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "missing kernel argument 'tmap' (#1 of 4, tensormap)"));
    assert_non_null(strstr(rk_error_message(), "tensormap tmap, ptr out, i32 x, i32 y"));
    rk_argpack_free(&p);
    rk_argsig_free(s);
}

/* ---- signatures from kernels and manifests ----------------------------------------------- */
static void test_from_kernel(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("gemm");
    assert_non_null(k);
    rk_type pf16 = rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL);
    rk_add_param(k, "A", pf16, NULL);
    rk_add_param(k, "B", pf16, NULL);
    rk_add_param(k, "C", pf16, NULL);
    rk_add_param(k, "M", RK_T_I32, NULL);
    rk_add_param(k, "N", RK_T_I32, NULL);
    rk_add_param(k, "K", RK_T_I32, NULL);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    rk_argsig *s = NULL;
    assert_int_equal(rk_argsig_from_kernel(k, &s), RK_OK);
    assert_int_equal(rk_argsig_size(s), 36);
    assert_int_equal(rk_argsig_find(s, "K"), 5);
    assert_int_equal(rk_argsig_find(s, "Q"), -1);
    assert_int_equal(rk_argsig_type(s, 0), RK_ARG_PTR);
    assert_string_equal(rk_argsig_name(s, 3), "M");
    rk_argsig_free(s);
    rk_kernel_free(k);

    /* an i4 parameter has no place in the argument ABI: the error names it */
    k = rk_kernel_new("nibble");
    rk_add_param(k, "v", RK_T_I4, NULL);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_argsig_from_kernel(k, &s), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "'v'"));
    assert_non_null(strstr(rk_error_message(), "'i4'"));
    rk_kernel_free(k);
}

static void test_type_names(void **state) {
    (void)state;
    rk_arg_type t;
    assert_int_equal(rk_arg_type_parse("ptr<f16, global>", &t), RK_OK);
    assert_int_equal(t, RK_ARG_PTR);
    assert_int_equal(rk_arg_type_parse("ptr<i32,global>", &t), RK_OK);
    assert_int_equal(rk_arg_type_parse("bf16", &t), RK_OK);
    assert_int_equal(t, RK_ARG_BF16);
    assert_int_equal(rk_arg_type_parse("u32", &t), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "'u32'"));
    assert_non_null(strstr(rk_error_message(), "legal"));
    assert_int_equal(rk_arg_type_parse("ptr<", &t), RK_ERR_INVALID);
    assert_int_equal(rk_arg_type_parse("tensormap", &t), RK_OK);
    assert_int_equal(t, RK_ARG_TENSORMAP);
    assert_string_equal(rk_arg_type_name(RK_ARG_TENSORMAP), "tensormap");
    for (int i = 0; i < RK_ARG__COUNT; i++) {
        assert_int_equal(rk_arg_type_size((rk_arg_type)i), scalar_sizes[i]);
        assert_int_equal(rk_arg_type_align((rk_arg_type)i), scalar_aligns[i]);
        if (i) {
            assert_int_equal(rk_arg_type_parse(rk_arg_type_name((rk_arg_type)i), &t), RK_OK);
            assert_int_equal(t, i);
        }
    }
}

/* ---- errors -------------------------------------------------------------------------------- */
static void expect(rk_status got, const char *a, const char *b) {
    assert_int_equal(got, RK_ERR_INVALID);
    if (!strstr(rk_error_message(), a) || (b && !strstr(rk_error_message(), b)))
        fail_msg("message '%s' lacks '%s' / '%s'", rk_error_message(), a, b ? b : "");
}

static void test_errors(void **state) {
    (void)state;
    const char *names[] = {"A", "B", "C", "M", "N", "K"};
    const char *types[] = {"ptr<f16,global>", "ptr<f16,global>", "ptr<f16,global>", "i32", "i32", "i32"};
    rk_argsig *s = NULL;
    assert_int_equal(rk_argsig_new(names, types, 6, &s), RK_OK);
    rk_argpack p;
    rk_argpack_init(&p);
    rk_arg ok[6] = {rk_arg_ptr(1), rk_arg_ptr(2), rk_arg_ptr(3), rk_arg_i32(4), rk_arg_i32(5), rk_arg_i32(6)};

    /* too few: the first missing one is named with its position */
    expect(rk_args_pack(s, ok, 5, &p), "missing kernel argument 'K'", "#6 of 6");
    /* too many */
    rk_arg seven[7];
    memcpy(seven, ok, sizeof ok);
    seven[6] = rk_arg_i32(7);
    expect(rk_args_pack(s, seven, 7, &p), "too many arguments", "value #7");
    /* a type mismatch names the argument and both types */
    rk_arg bad[6];
    memcpy(bad, ok, sizeof ok);
    bad[4] = rk_arg_f32(5.0f);
    expect(rk_args_pack(s, bad, 6, &p), "argument 'N' (#5 of 6) is i32", "given is f32");
    /* an unknown name lists the legal ones */
    memcpy(bad, ok, sizeof ok);
    bad[5] = rk_arg_named("Q", rk_arg_i32(6));
    expect(rk_args_pack(s, bad, 6, &p), "no kernel argument named 'Q'", "i32 K");
    /* positional A then A again by name */
    memcpy(bad, ok, sizeof ok);
    bad[5] = rk_arg_named("A", rk_arg_ptr(9));
    expect(rk_args_pack(s, bad, 6, &p), "argument 'A' (#1) is given twice", NULL);
    /* out of range for i32 */
    memcpy(bad, ok, sizeof ok);
    bad[3].v.i = 1ll << 40;
    expect(rk_args_pack(s, bad, 6, &p), "argument 'M' (#4)", "does not fit i32");
    /* all by name, any order, works */
    rk_arg named[6];
    for (int i = 0; i < 6; i++) named[i] = rk_arg_named(names[5 - i], ok[5 - i]);
    assert_int_equal(rk_args_pack(s, named, 6, &p), RK_OK);
    assert_int_equal(p.size, 36);
    assert_int_equal(p.bytes[32], 6);
    rk_argpack_free(&p);
    rk_argsig_free(s);

    /* bad signatures */
    const char *dup[] = {"x", "x"};
    const char *two[] = {"i32", "i32"};
    expect(rk_argsig_new(dup, two, 2, &s), "'x' appears twice", NULL);
    const char *one[] = {"x", "y"};
    const char *badt[] = {"i32", "vec<f32x4>"};
    expect(rk_argsig_new(one, badt, 2, &s), "argument 'y' (#2)", "vec<f32x4>");
}

/* ---- out of memory: allocation N fails, for N = 1, 2, ... until the work succeeds ---------- */
static long fail_at, allocs;
static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    if (++allocs == fail_at) return NULL;
    return realloc(ptr, nsize);
}

static void test_out_of_memory(void **state) {
    (void)state;
    const char *names[] = {"A", "B", "C", "M", "N", "K"};
    const char *types[] = {"ptr<f16,global>", "ptr<f16,global>", "ptr<f16,global>", "i32", "i32", "i32"};
    const rk_arg args[] = {rk_arg_ptr(1), rk_arg_ptr(2), rk_arg_ptr(3), rk_arg_i32(4), rk_arg_i32(5), rk_arg_i32(6)};
    for (fail_at = 1;; fail_at++) {
        allocs = 0;
        rk_set_allocator(failing_alloc, NULL);
        rk_argsig *s = NULL;
        rk_argpack p;
        rk_argpack_init(&p);
        rk_status st = rk_argsig_new(names, types, 6, &s);
        if (st == RK_OK) st = rk_args_pack(s, args, 6, &p);
        rk_argpack_free(&p);
        rk_argsig_free(s);
        rk_set_allocator(NULL, NULL);
        if (st == RK_OK) break;
        assert_int_equal(st, RK_ERR_NOMEM);
        assert_non_null(strstr(rk_error_message(), "out of memory"));
        assert_true(fail_at < 100);
    }
    assert_true(fail_at > 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),       cmocka_unit_test(test_random),     cmocka_unit_test(test_pack_values),
        cmocka_unit_test(test_from_kernel), cmocka_unit_test(test_type_names), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_out_of_memory), cmocka_unit_test(test_tensormap_pack),
        cmocka_unit_test(test_tensormap_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
