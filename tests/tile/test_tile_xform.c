/* rocke tests — the coordinate-transform DAG and fast division. Descriptors
 * for an implicit-GEMM convolution input, a paged KV cache, an XOR-swizzled
 * LDS tile and a chain of the remaining transforms are evaluated in kernels
 * run on the emulator (wave64 and warp32 targets) at random coordinates,
 * in range and past the edges, with constant and run-time dims, and compared
 * with direct formulas written here; listing order never changes the IR;
 * linear moves, constant folding and bad descriptors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/emu.h"
#include "rocke/tile_xform.h"

static const char *const targets[] = {"gfx942", "sm_90"};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}
static int32_t rnd_in(int32_t lo, int32_t hi) { return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1)); }

/* ---- fast division on the host ------------------------------------------------- */
static void check_magic(uint32_t d, uint32_t n) {
    uint32_t m, s;
    assert_int_equal(rk_magic_u32(d, &m, &s), RK_OK);
    uint32_t hi = (uint32_t)(((uint64_t)n * m) >> 32);
    uint32_t q = (hi + n) >> s;
    if (q != n / d) fail_msg("magic %u / %u: got %u want %u", n, d, q, n / d);
}

static void test_magic_host(void **state) {
    (void)state;
    uint32_t ds[] = {1, 2, 3, 5, 7, 10, 24, 25, 641, 1000, 4093, 65535, 65536, 65537, 1u << 20, (1u << 20) + 1,
                     999999937u, (1u << 30) - 1, 1u << 30, (1u << 30) + 1, 2147483647u};
    uint32_t edge[] = {0, 1, 2, 1000, 65535, 65536, 2147483646u, 2147483647u};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        uint32_t d = ds[i];
        for (size_t j = 0; j < sizeof edge / sizeof edge[0]; j++) check_magic(d, edge[j]);
        for (uint32_t off = 0; off < 3; off++) {
            for (uint32_t mul = 1; mul < 50; mul++) {
                uint64_t n = (uint64_t)d * mul + off;
                if (n < 2147483648u) check_magic(d, (uint32_t)n);
                if (n >= 1 && n - 1 < 2147483648u) check_magic(d, (uint32_t)(n - 1));
            }
        }
        for (int r = 0; r < 2000; r++) check_magic(d, rnd() & 0x7fffffffu);
    }
    for (uint32_t d = 1; d < 3000; d++)
        for (int r = 0; r < 50; r++) check_magic(d, rnd() & 0x7fffffffu);
    uint32_t m, s;
    assert_int_equal(rk_magic_u32(0, &m, &s), RK_ERR_INVALID);
    assert_int_equal(rk_magic_u32(2147483648u, &m, &s), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "divisor"));
}

/* ---- a kernel over one descriptor -------------------------------------------------- */
/* In: nup i32 coordinates per thread; Out: offset (low 32 bits), offset high
 * 32 bits (offset64 only), valid per thread; P: run-time parameters. */
typedef struct harness {
    rk_kernel *k;
    rk_value in, out, p, tid, gid, active;
    rk_value params[16];
    uint32_t nparams;
} harness;

static harness begin(const char *name, uint32_t nparams) {
    harness h;
    memset(&h, 0, sizeof h);
    h.k = rk_kernel_new(name);
    rk_type pi = rk_type_ptr(h.k, RK_T_I32, RK_AS_GLOBAL);
    h.in = rk_add_param(h.k, "In", pi, NULL);
    h.out = rk_add_param(h.k, "Out", pi, NULL);
    h.p = rk_add_param(h.k, "P", pi, NULL);
    rk_value count = rk_add_param(h.k, "count", RK_T_I32, NULL);
    rk_value bid = rk_build_block_id(h.k, 0);
    rk_value bdim = rk_build_block_dim(h.k, 0);
    h.tid = rk_build_thread_id(h.k, 0);
    rk_value base = rk_build_mul(h.k, bid, bdim);
    h.gid = rk_build_add(h.k, base, h.tid);
    /* run-time parameters first (wave-uniform), then the guard */
    h.nparams = nparams;
    for (uint32_t i = 0; i < nparams; i++) {
        rk_value idx = rk_const_i32(h.k, (int32_t)i);
        h.params[i] = rk_load_global(h.k, h.p, idx, 1);
    }
    h.active = rk_build_cmp(h.k, "lt", h.gid, count);
    rk_if_begin(h.k, h.active);
    return h;
}

static rk_ix coord_in(harness *h, uint32_t nup, uint32_t i) {
    rk_value n = rk_const_i32(h->k, (int32_t)nup);
    rk_value row = rk_build_mul(h->k, h->gid, n);
    rk_value ii = rk_const_i32(h->k, (int32_t)i);
    rk_value at = rk_build_add(h->k, row, ii);
    return rk_ix_v(rk_load_global(h->k, h->in, at, 1));
}

static void out_store(harness *h, uint32_t slot, rk_value v) {
    rk_value three = rk_const_i32(h->k, 3);
    rk_value row = rk_build_mul(h->k, h->gid, three);
    rk_value s = rk_const_i32(h->k, (int32_t)slot);
    rk_value at = rk_build_add(h->k, row, s);
    rk_store_global(h->k, h->out, at, v);
}

/* Evaluate d at the thread's coordinates and store offset and valid. */
static void emit_eval(harness *h, const rk_tile_desc *d, bool wide) {
    rk_ix up[RK_DESC_MAX_DIMS];
    for (uint32_t i = 0; i < d->nupper; i++) up[i] = coord_in(h, d->nupper, i);
    rk_ix valid;
    if (wide) {
        rk_value off64;
        assert_int_equal(rk_tile_desc_offset64(h->k, d, up, &off64, &valid), RK_OK);
        rk_value lo = rk_build_trunc(h->k, off64, RK_T_I32);
        rk_value c32 = rk_const_i64(h->k, 32);
        rk_value sh = rk_build_lshr(h->k, off64, c32);
        rk_value hi = rk_build_trunc(h->k, sh, RK_T_I32);
        out_store(h, 0, lo);
        out_store(h, 1, hi);
    } else {
        rk_ix off;
        if (rk_tile_desc_offset(h->k, d, up, &off, &valid)) fail_msg("%s", rk_error_message());
        rk_value ov = rk_ix_value(h->k, off);
        out_store(h, 0, ov);
    }
    rk_value vb = rk_ix_bool_value(h->k, valid);
    rk_value one = rk_const_i32(h->k, 1);
    rk_value zero = rk_const_i32(h->k, 0);
    rk_value vi = rk_build_select(h->k, vb, one, zero);
    out_store(h, 2, vi);
}

/* Close, run for `count` threads and return Out (3 words per thread). */
static int32_t *finish(harness *h, const rk_target *t, const int32_t *in, uint32_t nin, const int32_t *params,
                       uint32_t count, int32_t *table, uint32_t ntable) {
    rk_if_end(h->k, NULL, 0);
    rk_build_return(h->k);
    if (rk_kernel_finish(h->k)) fail_msg("%s", rk_builder_error(h->k));
    rk_emu *e = rk_emu_new(t, NULL);
    int32_t *out = calloc((size_t)count * 3, sizeof *out);
    int32_t pbuf[16] = {0};
    if (params) memcpy(pbuf, params, sizeof pbuf);
    uint64_t a_in, a_out, a_p;
    assert_int_equal(rk_emu_register(e, (void *)in, (size_t)nin * 4, "In", &a_in), RK_OK);
    assert_int_equal(rk_emu_register(e, out, (size_t)count * 12, "Out", &a_out), RK_OK);
    if (table) {
        /* the table rides in P after 16 parameter words */
        int32_t *pt = calloc(16 + ntable, 4);
        memcpy(pt, pbuf, sizeof pbuf);
        memcpy(pt + 16, table, (size_t)ntable * 4);
        assert_int_equal(rk_emu_register(e, pt, (16 + (size_t)ntable) * 4, "P", &a_p), RK_OK);
        void *args[] = {&a_in, &a_out, &a_p, &count};
        uint32_t g[3] = {(count + 63) / 64, 1, 1}, b[3] = {64, 1, 1};
        if (rk_emu_launch(e, h->k, g, b, 0, args)) fail_msg("%s: %s", t->name, rk_error_message());
        free(pt);
    } else {
        assert_int_equal(rk_emu_register(e, pbuf, sizeof pbuf, "P", &a_p), RK_OK);
        void *args[] = {&a_in, &a_out, &a_p, &count};
        uint32_t g[3] = {(count + 63) / 64, 1, 1}, b[3] = {64, 1, 1};
        if (rk_emu_launch(e, h->k, g, b, 0, args)) fail_msg("%s: %s", t->name, rk_error_message());
    }
    rk_emu_free(e);
    rk_kernel_free(h->k);
    return out;
}

/* ---- implicit-GEMM convolution input (NHWC) ------------------------------------- */
typedef struct conv { int32_t N, Hi, Wi, C, Ho, Wo, Y, X, sH, sW, dH, dW, pH, pW; } conv;

static void conv_ref(const conv *p, int32_t m, int32_t kk, int64_t *off, int *valid) {
    int32_t n = m / (p->Ho * p->Wo), ho = (m / p->Wo) % p->Ho, wo = m % p->Wo;
    int32_t y = kk / (p->X * p->C), x = (kk / p->C) % p->X, c = kk % p->C;
    int32_t hi = ho * p->sH + y * p->dH - p->pH, wi = wo * p->sW + x * p->dW - p->pW;
    *valid = m < p->N * p->Ho * p->Wo && y < p->Y && hi >= 0 && hi < p->Hi && wi >= 0 && wi < p->Wi;
    *off = (((int64_t)n * p->Hi + hi) * p->Wi + wi) * p->C + c;
}

/* mode 0: every dim a constant; 1: run-time dims with magic pairs from the
 * host; 2: run-time dims with the magic computed in the kernel. */
static void build_conv_desc(rk_kernel *k, const conv *p, int mode, const rk_value *prm, rk_tile_desc *d) {
    static const char *const names[] = {"n", "hi", "wi", "c"};
    rk_ix L[4], S[4];
    int32_t Mtot = p->N * p->Ho * p->Wo;
    if (mode == 0) {
        rk_ix l[4] = {rk_ix_c(p->N), rk_ix_c(p->Hi), rk_ix_c(p->Wi), rk_ix_c(p->C)};
        memcpy(L, l, sizeof l);
        assert_int_equal(rk_tile_desc_naive(d, 4, names, L, NULL), RK_OK);
    } else {
        /* strides from the parameters: C, Wi*C, Hi*Wi*C */
        rk_ix l[4] = {rk_ix_v(prm[0]), rk_ix_v(prm[1]), rk_ix_v(prm[2]), rk_ix_v(prm[3])};
        rk_ix s[4] = {rk_ix_v(prm[6]), rk_ix_v(prm[5]), rk_ix_v(prm[4]), rk_ix_c(1)};
        memcpy(L, l, sizeof l);
        memcpy(S, s, sizeof s);
        assert_int_equal(rk_tile_desc_naive(d, 4, names, L, S), RK_OK);
    }
    rk_fastdiv dm[3], dk[3];
    if (mode == 0) {
        dm[0] = rk_fastdiv_const(1); dm[1] = rk_fastdiv_const((uint32_t)p->Ho); dm[2] = rk_fastdiv_const((uint32_t)p->Wo);
        dk[0] = rk_fastdiv_const(1); dk[1] = rk_fastdiv_const((uint32_t)p->X); dk[2] = rk_fastdiv_const((uint32_t)p->C);
    } else if (mode == 1) {
        /* params 7..12: Ho, Ho mult, Ho shift, Wo, ..., then X, C with pairs at 13..18 */
        dm[0] = rk_fastdiv_const(1);
        dm[1] = rk_fastdiv_magic(prm[7], prm[8], prm[9]);
        dm[2] = rk_fastdiv_magic(prm[10], prm[11], prm[12]);
        dk[0] = rk_fastdiv_const(1);
        dk[1] = rk_fastdiv_magic(prm[13], prm[14], prm[15]);
        dk[2] = rk_fastdiv_const((uint32_t)p->C);
    } else {
        dm[0] = rk_fastdiv_const(1);
        dm[1] = rk_fastdiv_compute(k, prm[7]);
        dm[2] = rk_fastdiv_compute(k, prm[10]);
        dk[0] = rk_fastdiv_const(1);
        dk[1] = rk_fastdiv_compute(k, prm[13]);
        dk[2] = rk_fastdiv_const((uint32_t)p->C);
    }
    static const char *const m_out[] = {"nn", "ho", "wo"}, *const k_out[] = {"y", "x", "c"};
    static const char *const hy[] = {"ho", "y"}, *const wx[] = {"wo", "x"};
    rk_ix sh[2] = {rk_ix_c(p->sH), rk_ix_c(p->dH)}, sw[2] = {rk_ix_c(p->sW), rk_ix_c(p->dW)};
    rk_xform xs[] = {
        rk_xf_pad("m", false, rk_ix_c(0), true, rk_ix_c(Mtot)),
        rk_xf_unmerge("m", 3, m_out, dm),
        rk_xf_pass_through("nn", "n"),
        rk_xf_embed_bounded(2, hy, "hi", sh, rk_ix_c(-p->pH), rk_ix_c(0), mode ? rk_ix_v(prm[1]) : rk_ix_c(p->Hi)),
        rk_xf_embed_bounded(2, wx, "wi", sw, rk_ix_c(-p->pW), rk_ix_c(0), mode ? rk_ix_v(prm[2]) : rk_ix_c(p->Wi)),
        rk_xf_unmerge("k", 3, k_out, dk),
        rk_xf_pad("y", true, rk_ix_c(0), true, rk_ix_c(p->Y)),
        rk_xf_pad("x", true, rk_ix_c(0), true, rk_ix_c(p->X)),
    };
    assert_int_equal(rk_tile_desc_add(d, xs, sizeof xs / sizeof xs[0]), RK_OK);
    assert_int_equal(d->nupper, 2);
    assert_string_equal(d->upper[0], "m");
    assert_string_equal(d->upper[1], "k");
}

static void test_conv_input(void **state) {
    (void)state;
    const conv shapes[] = {
        {2, 7, 9, 3, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1},     /* same padding, odd sizes */
        {3, 13, 11, 5, 6, 5, 3, 3, 2, 2, 1, 1, 1, 1},   /* stride 2 */
        {1, 17, 19, 7, 13, 15, 3, 3, 1, 1, 2, 2, 2, 2}, /* dilation 2 */
    };
    for (int ti = 0; ti < 2; ti++) {
        const rk_target *t = rk_target_find(targets[ti]);
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            const conv *p = &shapes[si];
            for (int mode = 0; mode < 3; mode++) {
                harness h = begin("conv_in", 16);
                rk_tile_desc d;
                build_conv_desc(h.k, p, mode, h.params, &d);
                emit_eval(&h, &d, false);
                const uint32_t count = 300;
                int32_t *in = malloc(count * 2 * sizeof *in);
                int32_t Mtot = p->N * p->Ho * p->Wo, Ktot = p->Y * p->X * p->C;
                for (uint32_t i = 0; i < count; i++) {
                    in[2 * i] = rnd_in(0, Mtot + 20);       /* past the end too */
                    in[2 * i + 1] = rnd_in(0, Ktot + 10);   /* a partial K tile */
                }
                int32_t prm[16] = {p->N, p->Hi, p->Wi, p->C, p->C, p->Wi * p->C, p->Hi * p->Wi * p->C};
                uint32_t mul, sft;
                int32_t dv[3] = {p->Ho, p->Wo, p->X};
                for (int j = 0; j < 3; j++) {
                    assert_int_equal(rk_magic_u32((uint32_t)dv[j], &mul, &sft), RK_OK);
                    prm[7 + 3 * j] = dv[j];
                    prm[8 + 3 * j] = (int32_t)mul;
                    prm[9 + 3 * j] = (int32_t)sft;
                }
                int32_t *out = finish(&h, t, in, count * 2, prm, count, NULL, 0);
                for (uint32_t i = 0; i < count; i++) {
                    int64_t off;
                    int valid;
                    conv_ref(p, in[2 * i], in[2 * i + 1], &off, &valid);
                    if (out[3 * i + 2] != valid)
                        fail_msg("%s shape %zu mode %d: m=%d k=%d valid %d want %d", t->name, si, mode, in[2 * i],
                                 in[2 * i + 1], out[3 * i + 2], valid);
                    if (valid && out[3 * i] != (int32_t)off)
                        fail_msg("%s shape %zu mode %d: m=%d k=%d offset %d want %lld", t->name, si, mode, in[2 * i],
                                 in[2 * i + 1], out[3 * i], (long long)off);
                }
                free(in);
                free(out);
            }
        }
    }
}

/* ---- paged KV cache ------------------------------------------------------------------ */
static void test_paged_kv(void **state) {
    (void)state;
    enum { MAXB = 11, BS = 5, HEADS = 3, HD = 7, SEQS = 4, TSTRIDE = 6 };
    int32_t table[SEQS * TSTRIDE];
    for (int i = 0; i < SEQS * TSTRIDE; i++) table[i] = (int32_t)(rnd() % MAXB);
    for (int ti = 0; ti < 2; ti++) {
        const rk_target *t = rk_target_find(targets[ti]);
        harness h = begin("paged_kv", 1);
        static const char *const names[] = {"blk", "tok", "head", "dim"};
        rk_ix L[4] = {rk_ix_c(MAXB), rk_ix_c(BS), rk_ix_c(HEADS), rk_ix_c(HD)};
        rk_tile_desc d;
        assert_int_equal(rk_tile_desc_naive(&d, 4, names, L, NULL), RK_OK);
        /* the table lives at P + 16; base = seq * TSTRIDE with seq the first parameter */
        rk_value c16 = rk_const_i32(h.k, 16);
        rk_value tstride = rk_const_i32(h.k, TSTRIDE);
        rk_value seqbase = rk_build_mul(h.k, h.params[0], tstride);
        rk_value base = rk_build_add(h.k, seqbase, c16);
        rk_value maxv = rk_const_i32(h.k, 16 + SEQS * TSTRIDE);
        static const char *const lin_out[] = {"tok", "dim"};
        rk_fastdiv dd[2] = {rk_fastdiv_const(1), rk_fastdiv_const(HD)};
        rk_xform xs[] = {
            rk_xf_indirect("tile", "blk", h.p, rk_ix_v(base), true, rk_ix_v(maxv), -1),
            rk_xf_unmerge("linear", 2, lin_out, dd),
            rk_xf_pass_through("kvh", "head"),
        };
        assert_int_equal(rk_tile_desc_add(&d, xs, 3), RK_OK);
        assert_int_equal(d.nupper, 3);
        emit_eval(&h, &d, false);
        const uint32_t count = 200;
        int32_t in[200 * 3];
        for (uint32_t i = 0; i < count; i++) {
            in[3 * i] = rnd_in(0, TSTRIDE * SEQS);   /* some past the whole table */
            in[3 * i + 1] = rnd_in(0, BS * HD - 1);
            in[3 * i + 2] = rnd_in(0, HEADS - 1);
        }
        int32_t prm[16] = {1};
        int32_t *out = finish(&h, t, in, count * 3, prm, count, table, SEQS * TSTRIDE);
        for (uint32_t i = 0; i < count; i++) {
            int32_t idx = 1 * TSTRIDE + in[3 * i];
            int32_t blk = idx < SEQS * TSTRIDE ? table[idx] : -1;
            int32_t tok = in[3 * i + 1] / HD, dim = in[3 * i + 1] % HD;
            int64_t want = (((int64_t)blk * BS + tok) * HEADS + in[3 * i + 2]) * HD + dim;
            assert_int_equal(out[3 * i + 2], 1);
            if (out[3 * i] != (int32_t)want)
                fail_msg("%s: tile=%d linear=%d head=%d offset %d want %lld", t->name, in[3 * i], in[3 * i + 1],
                         in[3 * i + 2], out[3 * i], (long long)want);
        }
        free(out);
    }
}

/* ---- XOR swizzle and the remaining transforms ------------------------------------------- */
static void test_xor_and_chain(void **state) {
    (void)state;
    enum { R = 13, CC = 16, LEN = 8 };
    for (int ti = 0; ti < 2; ti++) {
        const rk_target *t = rk_target_find(targets[ti]);
        /* swizzle: [R, CC] tile, column' = column ^ (row % LEN) */
        {
            harness h = begin("xor", 0);
            static const char *const names[] = {"r", "c"};
            rk_ix L[2] = {rk_ix_c(R), rk_ix_c(CC)};
            rk_tile_desc d;
            assert_int_equal(rk_tile_desc_naive(&d, 2, names, L, NULL), RK_OK);
            rk_xform x = rk_xf_xor("r", "c", "r", "c", rk_ix_c(LEN), true);
            assert_int_equal(rk_tile_desc_add(&d, &x, 1), RK_OK);
            assert_int_equal(d.nupper, 2);
            emit_eval(&h, &d, false);
            int32_t in[2 * R * CC];
            for (int i = 0; i < R * CC; i++) {
                in[2 * i] = i / CC;
                in[2 * i + 1] = i % CC;
            }
            int32_t *out = finish(&h, t, in, 2 * R * CC, NULL, R * CC, NULL, 0);
            /* a bijection on each row, and the formula */
            for (int i = 0; i < R * CC; i++) {
                int r = i / CC, c = i % CC;
                assert_int_equal(out[3 * i], r * CC + (c ^ (r % LEN)));
            }
            free(out);
        }
        /* merge(i, j) -> a; left_pad(a) -> b; right_pad(b); modulo(b) -> c0; offset(e) -> c1;
         * slice(s) -> c2; freeze -> c3; replicate(z) */
        {
            harness h = begin("chain", 0);
            static const char *const names[] = {"c0", "c1", "c2", "c3"};
            rk_ix L[4] = {rk_ix_c(7), rk_ix_c(50), rk_ix_c(9), rk_ix_c(4)};
            rk_ix S[4] = {rk_ix_c(1000), rk_ix_c(10), rk_ix_c(1), rk_ix_c(100000)};
            rk_tile_desc d;
            assert_int_equal(rk_tile_desc_naive(&d, 4, names, L, S), RK_OK);
            static const char *const ij[] = {"i", "j"}, *const z[] = {"z"};
            rk_ix md[2] = {rk_ix_c(0), rk_ix_c(6)};
            rk_xform xs[] = {
                rk_xf_replicate(1, z),
                rk_xf_freeze("c3", rk_ix_c(2)),
                rk_xf_slice("s", "c2", rk_ix_c(3), rk_ix_c(9)),
                rk_xf_offset("e", "c1", rk_ix_c(-4)),
                rk_xf_modulo("b", "c0", rk_ix_c(7)),
                rk_xf_right_pad("b", rk_ix_c(40)),
                rk_xf_left_pad("a", "b", rk_ix_c(5)),
                rk_xf_merge(2, ij, "a", md),
            };
            assert_int_equal(rk_tile_desc_add(&d, xs, sizeof xs / sizeof xs[0]), RK_OK);
            /* uppers: z, s, e, i, j (base names are all produced) */
            assert_int_equal(d.nupper, 5);
            emit_eval(&h, &d, false);
            const uint32_t count = 150;
            int32_t in[150 * 5];
            for (uint32_t i = 0; i < count; i++) {
                for (int q = 0; q < 5; q++) in[5 * i + q] = rnd_in(0, 8);
            }
            int32_t *out = finish(&h, t, in, count * 5, NULL, count, NULL, 0);
            for (uint32_t i = 0; i < count; i++) {
                int32_t v[5];
                for (int q = 0; q < 5; q++) v[q] = in[5 * i + q];
                int32_t zz = v[rk_tile_desc_upper_index(&d, "z")], s = v[rk_tile_desc_upper_index(&d, "s")];
                int32_t e = v[rk_tile_desc_upper_index(&d, "e")], ii = v[rk_tile_desc_upper_index(&d, "i")];
                int32_t jj = v[rk_tile_desc_upper_index(&d, "j")];
                (void)zz;
                int32_t a = ii * 6 + jj, b = a - 5;
                int valid = a >= 5 && b < 40;
                int64_t want = (int64_t)(b % 7) * 1000 + (e - 4) * 10 + (s + 3) + 2 * 100000;
                assert_int_equal(out[3 * i + 2], valid);
                if (valid) assert_int_equal(out[3 * i], (int32_t)want);
            }
            free(out);
        }
    }
}

/* ---- i64 offsets ----------------------------------------------------------------------- */
static void test_offset64(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90");
    harness h = begin("wide", 1);
    static const char *const names[] = {"row", "col"};
    rk_ix L[2] = {rk_ix_c(100000), rk_ix_c(70000)};
    rk_ix S[2] = {rk_ix_v(h.params[0]), rk_ix_c(1)};
    rk_tile_desc d;
    assert_int_equal(rk_tile_desc_naive(&d, 2, names, L, S), RK_OK);
    emit_eval(&h, &d, true);
    const uint32_t count = 64;
    int32_t in[128];
    for (uint32_t i = 0; i < count; i++) {
        in[2 * i] = rnd_in(0, 99999);
        in[2 * i + 1] = rnd_in(0, 69999);
    }
    int32_t prm[16] = {70001};
    int32_t *out = finish(&h, t, in, 128, prm, count, NULL, 0);
    for (uint32_t i = 0; i < count; i++) {
        int64_t want = (int64_t)in[2 * i] * 70001 + in[2 * i + 1];
        int64_t got = (int64_t)(((uint64_t)(uint32_t)out[3 * i + 1] << 32) | (uint32_t)out[3 * i]);
        assert_int_equal(got, want);
    }
    free(out);
}

/* ---- listing order, folding, moves, errors ------------------------------------------------ */
static char *conv_ir(const conv *p, const int *perm) {
    rk_kernel *k = rk_kernel_new("order");
    rk_value dst = rk_add_param(k, "Out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value m = rk_add_param(k, "m", RK_T_I32, NULL);
    rk_value kk = rk_add_param(k, "k", RK_T_I32, NULL);
    rk_tile_desc base;
    build_conv_desc(k, p, 0, NULL, &base);
    rk_tile_desc d = base;
    d.nx = 0;
    rk_xform xs[RK_DESC_MAX_XFORMS];
    for (uint32_t i = 0; i < base.nx; i++) xs[i] = base.x[perm[i]];
    assert_int_equal(rk_tile_desc_add(&d, xs, base.nx), RK_OK);
    int mi = rk_tile_desc_upper_index(&d, "m"), ki = rk_tile_desc_upper_index(&d, "k");
    rk_ix up[2];
    up[mi] = rk_ix_v(m);
    up[ki] = rk_ix_v(kk);
    rk_ix off, valid;
    assert_int_equal(rk_tile_desc_offset(k, &d, up, &off, &valid), RK_OK);
    rk_value z = rk_const_i32(k, 0);
    rk_value ov = rk_ix_value(k, off);
    rk_store_global(k, dst, z, ov);
    rk_value one = rk_const_i32(k, 1);
    rk_value vb = rk_ix_bool_value(k, valid);
    rk_value vi = rk_build_select(k, vb, ov, z);
    rk_store_global(k, dst, one, vi);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *s = rk_serialize(k);
    rk_kernel_free(k);
    return s;
}

static void test_listing_order(void **state) {
    (void)state;
    const conv p = {2, 7, 9, 3, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1};
    int ident[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    char *want = conv_ir(&p, ident);
    for (int r = 0; r < 40; r++) {
        int perm[8];
        memcpy(perm, ident, sizeof perm);
        for (int i = 7; i > 0; i--) {
            int j = (int)(rnd() % (uint32_t)(i + 1)), tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
        char *got = conv_ir(&p, perm);
        /* the descriptor's uppers keep their names, so the IR must match byte for byte */
        if (strcmp(got, want) != 0) fail_msg("a different listing order changed the IR (try %d)", r);
        rk_string_free(got);
    }
    rk_string_free(want);
}

static void test_fold_and_delta(void **state) {
    (void)state;
    const conv p = {2, 7, 9, 3, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1};
    rk_kernel *k = rk_kernel_new("fold");
    rk_tile_desc d;
    build_conv_desc(k, &p, 0, NULL, &d);
    uint64_t before = rk_kernel_op_count(k);
    for (int r = 0; r < 100; r++) {
        int32_t m = rnd_in(0, 140), kk = rnd_in(0, 30);
        rk_ix up[2] = {rk_ix_c(m), rk_ix_c(kk)}, off, valid;
        assert_int_equal(rk_tile_desc_offset(k, &d, up, &off, &valid), RK_OK);
        assert_false(off.dyn);
        assert_false(valid.dyn);
        int64_t wo;
        int wv;
        conv_ref(&p, m, kk, &wo, &wv);
        assert_int_equal(valid.c, wv);
        if (wv) assert_int_equal(off.c, wo);
    }
    assert_int_equal(rk_kernel_op_count(k), before);   /* nothing emitted */
    /* the unmerges make (m, k) non-linear */
    int64_t dl[2] = {0, 1}, od;
    assert_int_equal(rk_tile_desc_delta(&d, dl, &od), RK_ERR_UNSUPPORTED);
    assert_non_null(strstr(rk_error_message(), "unmerge"));
    rk_kernel_free(k);

    /* a GEMM A tile: [M, K] row-major with lda = 37, user coords through
     * slice + embed + pad: moving k by 32 moves the offset by 32, m by 4 by 4*37 */
    rk_tile_desc a;
    static const char *const names[] = {"row", "col"};
    rk_ix L[2] = {rk_ix_c(50), rk_ix_c(33)}, S[2] = {rk_ix_c(37), rk_ix_c(1)};
    assert_int_equal(rk_tile_desc_naive(&a, 2, names, L, S), RK_OK);
    static const char *const mm[] = {"m"};
    rk_ix one[1] = {rk_ix_c(1)};
    rk_xform xs[] = {
        rk_xf_pad("k", true, rk_ix_c(0), true, rk_ix_c(33)),
        rk_xf_slice("k", "col", rk_ix_c(0), rk_ix_c(33)),
        rk_xf_embed(1, mm, "row", one, rk_ix_c(0)),
    };
    assert_int_equal(rk_tile_desc_add(&a, xs, 3), RK_OK);
    int mi = rk_tile_desc_upper_index(&a, "m"), ki = rk_tile_desc_upper_index(&a, "k");
    int64_t dk[2] = {0, 0};
    dk[ki] = 32;
    assert_int_equal(rk_tile_desc_delta(&a, dk, &od), RK_OK);
    assert_int_equal(od, 32);
    int64_t dm[2] = {0, 0};
    dm[mi] = 4;
    dm[ki] = -1;
    assert_int_equal(rk_tile_desc_delta(&a, dm, &od), RK_OK);
    assert_int_equal(od, 4 * 37 - 1);
}

static void test_bad_descriptors(void **state) {
    (void)state;
    rk_tile_desc d;
    rk_ix L[2] = {rk_ix_c(4), rk_ix_c(4)};
    assert_int_equal(rk_tile_desc_naive(&d, 0, NULL, L, NULL), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "rank"));
    static const char *const dup[] = {"a", "a"};
    assert_int_equal(rk_tile_desc_naive(&d, 2, dup, L, NULL), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "'a'"));
    rk_ix Ld[2] = {rk_ix_c(4), rk_ix_v((rk_value){7})};
    assert_int_equal(rk_tile_desc_naive(&d, 2, NULL, Ld, NULL), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "give the strides"));

    assert_int_equal(rk_tile_desc_naive(&d, 2, NULL, L, NULL), RK_OK);
    rk_xform twice[] = {rk_xf_pass_through("p", "d0"), rk_xf_pass_through("q", "d0")};
    assert_int_equal(rk_tile_desc_add(&d, twice, 2), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "two transforms"));
    assert_int_equal(d.nx, 0);   /* unchanged on failure */
    /* a cycle: d0 <- a <- d0 */
    rk_xform cyc[] = {rk_xf_pass_through("a", "d0"), rk_xf_offset("d0", "a", rk_ix_c(1))};
    assert_int_equal(rk_tile_desc_add(&d, cyc, 2), RK_OK);
    rk_kernel *k = rk_kernel_new("bad");
    rk_ix up[RK_DESC_MAX_DIMS] = {rk_ix_c(0), rk_ix_c(0)}, off, valid;
    assert_int_equal(rk_tile_desc_offset(k, &d, up, &off, &valid), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "waits for"));
    rk_kernel_free(k);
    rk_fastdiv z = rk_fastdiv_const(0);
    static const char *const o2[] = {"d0", "d1"};
    rk_fastdiv dz[2] = {rk_fastdiv_const(1), z};
    assert_int_equal(rk_tile_desc_naive(&d, 2, NULL, L, NULL), RK_OK);
    rk_xform um = rk_xf_unmerge("u", 2, o2, dz);
    assert_int_equal(rk_tile_desc_add(&d, &um, 1), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "positive"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_magic_host),   cmocka_unit_test(test_conv_input),
        cmocka_unit_test(test_paged_kv),     cmocka_unit_test(test_xor_and_chain),
        cmocka_unit_test(test_offset64),     cmocka_unit_test(test_listing_order),
        cmocka_unit_test(test_fold_and_delta), cmocka_unit_test(test_bad_descriptors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
