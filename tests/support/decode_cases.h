/* rocke tests — attention decode cases on the emulator, shared by
 * test_attention_decode.c and test_attention_decode_atoms.c (two programs so
 * that ctest runs them side by side): the tuned instance, the context
 * lengths, a checked run that must also catch one corrupted element, and
 * the relaunch over a cleared O. Static: each test program includes it once
 * (cmocka's assertions inside). Layer: tests. */
#ifndef ROCKE_TESTS_DECODE_CASES_H
#define ROCKE_TESTS_DECODE_CASES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/emu.h"
#include "rocke/kernels.h"
#include "problem_emu.h"

static uint64_t seed;
static unsigned runs;

/* The decode instance for shape (B, Hq, Hkv, Sq, CTX, D) on target, knobs locked. */
static void decode_instance(const char *target, const uint64_t ext[6], const char *knobs, rk_instance *in,
                            rk_shape *sh) {
    rk_family_id f;
    assert_int_equal(rk_family_parse("attention", &f), RK_OK);
    rk_instance_default(f, in);
    char all[256];
    snprintf(all, sizeof all, "mode=decode %s", knobs);
    uint64_t locked;
    if (problem_knobs_set(in, all, &locked)) fail_msg("%s: %s", all, rk_error_message());
    assert_int_equal(rk_shape_default(f, sh), RK_OK);
    assert_int_equal(rk_shape_update(f, sh, NULL, ext, 6, false), RK_OK);
    if (rk_instance_tune(in, rk_target_find(target), sh, locked)) fail_msg("%s: %s", all, rk_error_message());
}

static int32_t *lens_of(rk_problem *p) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!strcmp(p->sig.p[i].name, "context_lens")) return p->buf[i].data;
    fail_msg("no context_lens");
    return NULL;
}

/* A second launch over a cleared O gives the same bytes (the merge order
 * does not depend on arrival order; Arrivals were reset). */
static void relaunch_same(rk_problem *p, const rk_target *t, rk_kernel *k, const rk_shape *sh, const char *name) {
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (strcmp(p->sig.p[i].name, "O")) continue;
        void *first = malloc(p->buf[i].bytes);
        memcpy(first, p->buf[i].data, p->buf[i].bytes);
        memset(p->buf[i].data, 0, p->buf[i].bytes);
        if (problem_emu_launch(t, k, p, sh)) fail_msg("%s: relaunch: %s", name, rk_error_message());
        if (memcmp(first, p->buf[i].data, p->buf[i].bytes)) fail_msg("%s: O differs on the second launch", name);
        free(first);
    }
}

/* num_splits of the next runs (0: the instance's kv_splits, the default) */
static uint32_t run_splits;

/* Build, fill (lens: NULL keeps the random lengths), run, verify; the
 * reference must also reject O with one element moved. */
static void run_case(const char *target, const uint64_t ext[6], const char *knobs, const int32_t *lens) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    rk_instance in;
    rk_shape sh;
    decode_instance(target, ext, knobs, &in, &sh);
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    rk_kernel *k;
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    if (problem_emu_prepare(t, &in, &sh, s, &k, &p)) fail_msg("%s %s: %s", target, name, rk_error_message());
    if (lens) memcpy(lens_of(&p), lens, ext[0] * sizeof *lens);
    if (run_splits && rk_problem_set_scalar(&p, "num_splits", run_splits)) fail_msg("%s", rk_error_message());
    if (rk_problem_check_inputs(&p)) fail_msg("%s %s: %s", target, name, rk_error_message());
    rk_problem_diff c;
    if (problem_emu_verify(t, k, &p, &sh, &c)) fail_msg("%s %s: launch: %s", target, name, rk_error_message());
    if (c.bad)
        fail_msg("%s %s seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", target, name, (unsigned long long)s,
                 (unsigned long long)c.bad, (unsigned long long)c.total, c.max_abs_diff, c.first_bad);
    if (in.u.attn.kv_splits > 1) relaunch_same(&p, t, k, &sh, name);
    /* the check is not blind: the largest output scaled by 4 or 1/4 (bf16)
     * or by about 1 +- 1/4 (f16: a high mantissa bit) is caught */
    int io = -1;
    for (uint32_t i = 0; i < p.sig.n; i++)
        if (!strcmp(p.sig.p[i].name, "O")) io = (int)i;
    uint16_t *o = p.buf[io].data;
    uint64_t big = 0;
    for (uint64_t x = 1; x < p.buf[io].count; x++)
        if ((o[x] & 0x7fff) > (o[big] & 0x7fff)) big = x;   /* 16-bit magnitudes order as their bits */
    o[big] ^= 0x0100;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad != 1) fail_msg("%s %s: a corrupted O gave bad=%llu", target, name, (unsigned long long)c.bad);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

#endif
