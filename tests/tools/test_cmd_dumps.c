/* rocke tests — what the compiler did: --dump-after/--dump-dir on compile,
 * build and lower write the expected files in pipeline order; every dumped
 * IR file parses back and prints to the same bytes; the LLVM IR, ISA, PTX and
 * (through a stand-in disassembler) SASS files hold what they should;
 * --time-stages prints every stage in order; a recompile because the cache
 * key changed names the part that changed. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rocke/rocke.h"
#include "support/cli_run.h"

#define ROCKE ROCKE_BINARY_DIR "/rocke"
#define VADD ROCKE_SOURCE_DIR "/tests/golden/vector_add.ir"

static char dir[256];

static char *slurp(const char *sub, const char *name, size_t *n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("missing dump file %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    buf[len] = 0;
    fclose(f);
    *n = (size_t)len;
    return buf;
}

/* The folder's files, sorted, as "a b c"; every .ir one parsed back and printed again byte for byte. */
static void listing(const char *sub, char *out, size_t cap) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    struct dirent **ents;
    int n = scandir(path, &ents, NULL, alphasort);
    assert_true(n > 0);
    size_t off = 0;
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        if (nm[0] != '.') {
            off += (size_t)snprintf(out + off, cap - off, "%s%s", off ? " " : "", nm);
            size_t len = strlen(nm), sz;
            if (len > 3 && !strcmp(nm + len - 3, ".ir")) {
                char *text = slurp(sub, nm, &sz);
                rk_kernel *k = NULL;
                if (rk_parse(text, sz, &k) != RK_OK)
                    fail_msg("%s/%s does not parse: %s", sub, nm, rk_error_message());
                char *again = rk_serialize(k);
                assert_string_equal(again, text);
                rk_string_free(again);
                rk_kernel_free(k);
                free(text);
            }
        }
        free(ents[i]);
    }
    free(ents);
}

static int setup(void **state) {
    (void)state;
    /* a stand-in for cuobjdump: prints what it was asked */
    return rk_test_make_dir(dir, sizeof dir, "rocke-dumps",
                            "printf '#!/bin/sh\\necho \"sass of $*\"\\n' > fake_cuobjdump && chmod +x fake_cuobjdump");
}

static int teardown(void **state) {
    (void)state;
    return rk_test_remove_dir(dir);
}

static void test_compile_all(void **state) {
    (void)state;
    char files[1024];
    rk_test_run r = rk_test_shf(dir, "ROCKE_CACHE_DIR=cache " ROCKE " compile " VADD " --target gfx942 -o out --passes "
                                     "--dump-dir amd --time-stages");
    if (r.rc)
        fail_msg("%s%s", r.out, r.err);
    /* every stage in pipeline order */
    const char *order[] = {"parse", "verify",   "fold.1",  "cse.1", "dce.1",
                           "lower", "llvm-opt", "codegen", "link",  "total"};
    const char *p = strstr(r.out, "  stage");
    assert_non_null(p);
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        char row[32];
        snprintf(row, sizeof row, "\n  %s ", order[i]);
        const char *q = strstr(p, row);
        if (!q)
            fail_msg("no stage row '%s' after the previous one in:\n%s", order[i], r.out);
        p = q;
    }
    rk_test_run_free(&r);
    listing("amd", files, sizeof files);
    assert_string_equal(files, "00-parse.ir 01-verify.ir 02-fold.1.ir 03-cse.1.ir 04-dce.1.ir 30-lower.ll 31-isa.s");
    size_t n;
    char *ll = slurp("amd", "30-lower.ll", &n), *isa = slurp("amd", "31-isa.s", &n),
         *out = slurp("out", "vector_add.ll", &n);
    assert_string_equal(ll, out); /* the dump is what was compiled */
    assert_non_null(strstr(isa, "s_endpgm"));
    free(ll);
    free(isa);
    free(out);
}

static void test_compile_nvidia_and_sass(void **state) {
    (void)state;
    char files[1024];
    rk_test_expect(rk_test_shf(dir,
                               "ROCKE_CUOBJDUMP=%s/fake_cuobjdump ROCKE_CACHE=0 " ROCKE " compile " VADD
                               " --target sm_90a -o out "
                               "--dump-dir nv --dump-after parse,codegen",
                               dir),
                   0, NULL, NULL);
    listing("nv", files, sizeof files);
    size_t n;
    char *ptx = slurp("nv", "31-ptx.ptx", &n);
    assert_non_null(strstr(ptx, ".entry vector_add"));
    free(ptx);
    if (strstr(files, "32-sass.sass")) { /* only when ptxas made a cubin */
        char *sass = slurp("nv", "32-sass.sass", &n);
        assert_non_null(strstr(sass, "sass of -sass "));
        assert_non_null(strstr(sass, "kernel.cubin"));
        free(sass);
        assert_string_equal(files, "00-parse.ir 31-ptx.ptx 32-sass.sass");
    } else {
        assert_string_equal(files, "00-parse.ir 31-ptx.ptx");
    }
}

static void test_build_and_lower(void **state) {
    (void)state;
    char files[1024];
    rk_test_expect(rk_test_shf(dir, "ROCKE_CACHE_DIR=cache " ROCKE
                                    " build softmax --target gfx950 --shape 64,1000 -o b --dump-dir bd "
                                    "--dump-after verify,lower --time-stages"),
                   0, "  build ", NULL);
    listing("bd", files, sizeof files);
    assert_string_equal(files, "01-verify.ir 30-lower.ll");
    /* the built kernel is the one dumped */
    rk_test_expect(rk_test_shf(dir, "cmp b/*.ir bd/01-verify.ir"), 0, NULL, NULL);
    rk_test_expect(rk_test_shf(dir, ROCKE " lower " VADD " --target sm_90 --dump-dir ld --time-stages -o l.ll"), 0,
                   NULL, "  lower ");
    listing("ld", files, sizeof files);
    assert_string_equal(files, "00-parse.ir 30-lower.ll");
    rk_test_expect(rk_test_shf(dir, "cmp l.ll ld/30-lower.ll"), 0, NULL, NULL);
    /* without --shape softmax builds shape variants: each one's stage files in DIR/TAG, the
     * general kernel's in DIR */
    rk_test_expect(rk_test_shf(dir, "ROCKE_CACHE_DIR=cache " ROCKE " build softmax --target gfx950 -o v "
                                    "--dump-dir vd --dump-after verify && ls vd/*/01-verify.ir | wc -l && "
                                    "test -f vd/01-verify.ir"),
                   0, "4", NULL);
}

static void test_recompile_note(void **state) {
    (void)state;
#define NOTES "ROCKE_CACHE_DIR=notes " ROCKE " compile "
    rk_test_expect(rk_test_shf(dir, NOTES VADD " --target gfx942 -o n"), 0, NULL, NULL);
    rk_test_run r = rk_test_shf(dir, NOTES VADD " --target gfx942 -o n"); /* a hit: no note */
    assert_int_equal(r.rc, 0);
    assert_null(strstr(r.err, "note:"));
    rk_test_run_free(&r);
    rk_test_expect(rk_test_shf(dir, NOTES VADD " --target gfx942 -o n -O1"), 0, NULL,
                   "note: compiling vector_add again (now for gfx942): its cache key changed (options)\n");
    /* the LLVM IR of AMD targets is the same text: only the target differs */
    rk_test_expect(rk_test_shf(dir, NOTES VADD " --target gfx90a -o n -O1"), 0, NULL,
                   "its cache key changed (target)\n");
    /* the same kernel name, another body */
    rk_test_expect(rk_test_shf(dir, "sed 's/arith.add/arith.sub/' " VADD " > vsub.ir && " NOTES
                                    "vsub.ir --target gfx90a -o n -O1"),
                   0, NULL, "its cache key changed (IR hash)\n");
    /* another vendor: other LLVM IR (and, with ptxas, another toolchain) */
    rk_test_expect(rk_test_shf(dir, NOTES "vsub.ir --target sm_90 -o n -O1"), 0, NULL,
                   "its cache key changed (IR hash, target");
#undef NOTES
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_all),
        cmocka_unit_test(test_compile_nvidia_and_sass),
        cmocka_unit_test(test_build_and_lower),
        cmocka_unit_test(test_recompile_note),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
