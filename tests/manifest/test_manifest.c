/* rocke tests — manifest v1: write -> read round trip, an upstream-style
 * manifest (hsaco, "ptr<f16, global>"), a bad-manifest table (each error
 * names its field), the binary size/hash check, and rocke's NVIDIA fields
 * (dyn_smem_min, tensormap arguments). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rocke/ir.h"
#include "rocke/manifest.h"
#include "rocke/runtime.h"

/* The sample's binary: PTX text for sm_90 that defines its kernel. */
static const char sample_ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                                 ".visible .entry rk_softmax_bf16_obf16_w32()\n{\n  ret;\n}\n";

static void sample(rk_manifest *m) {
    rk_manifest_init(m);
    snprintf(m->kind, sizeof m->kind, "softmax_bf16");
    snprintf(m->kernel_name, sizeof m->kernel_name, "rk_softmax_bf16_obf16_w32");
    snprintf(m->target, sizeof m->target, "sm_90");
    snprintf(m->binary, sizeof m->binary, "%s.ptx", m->kernel_name);
    snprintf(m->binary_kind, sizeof m->binary_kind, "ptx");
    m->binary_bytes = strlen(sample_ptx);
    rk_manifest_hash(sample_ptx, strlen(sample_ptx), m->binary_hash);
    snprintf(m->ir, sizeof m->ir, "%s.ir", m->kernel_name);
    snprintf(m->llvm, sizeof m->llvm, "%s.ll", m->kernel_name);
    m->threads_per_block = 256;
    rk_manifest_add_arg(m, "X", "ptr<bf16, global>", 8);
    rk_manifest_add_arg(m, "Y", "ptr<bf16, global>", 8);
    rk_manifest_add_arg(m, "M", "i32", 4);
    rk_manifest_add_arg(m, "N", "i32", 4);
    m->timing_ms.lower = 0.25;
    m->timing_ms.total = 12.5;
    snprintf(m->op, sizeof m->op, "softmax");
    snprintf(m->dtype, sizeof m->dtype, "bf16");
    m->default_shape[0] = 4096;
    m->default_shape[1] = 32768;
    m->ndefault_shape = 2;
    snprintf(m->default_shape_dims[0], sizeof m->default_shape_dims[0], "M");
    snprintf(m->default_shape_dims[1], sizeof m->default_shape_dims[1], "N");
    m->has_eps = true;
    m->eps = 1e-5;
    snprintf(m->family, sizeof m->family, "softmax");
    rk_manifest_add_spec(m, "block_size", "1024");
    rk_manifest_add_spec(m, "dtype", "bf16");
}

static void test_round_trip(void **state) {
    (void)state;
    rk_manifest m, back;
    sample(&m);
    char *t1 = rk_manifest_text(&m);
    assert_non_null(t1);
    assert_int_equal(rk_manifest_parse(t1, strlen(t1), &back), RK_OK);
    assert_string_equal(back.kernel_name, m.kernel_name);
    assert_int_equal(back.nargs, 4);
    assert_true(back.eps == 1e-5);
    assert_string_equal(rk_manifest_spec(&back, "block_size"), "1024");
    assert_int_equal(back.ndefault_shape, 2);
    assert_string_equal(back.default_shape_dims[1], "N");
    assert_true(back.default_shape[1] == 32768);
    char *t2 = rk_manifest_text(&back);
    assert_string_equal(t1, t2);
    assert_non_null(strstr(t1, "\"schema\": \"ck.dsl.example.manifest/v1\""));
    assert_null(strstr(t1, "\"hsaco\""));          /* NVIDIA artifact: no upstream alias */
    rk_string_free(t1);
    rk_string_free(t2);
    /* an AMD artifact also carries the upstream hsaco fields */
    snprintf(m.binary_kind, sizeof m.binary_kind, "hsaco");
    t1 = rk_manifest_text(&m);
    assert_non_null(strstr(t1, "\"hsaco\": \"rk_softmax_bf16_obf16_w32.ptx\""));
    char hb[40];
    snprintf(hb, sizeof hb, "\"hsaco_bytes\": %zu", strlen(sample_ptx));
    assert_non_null(strstr(t1, hb));
    rk_string_free(t1);
}

static void test_upstream(void **state) {
    (void)state;
    const char *up =
        "{\"schema\": \"ck.dsl.example.manifest/v1\", \"kind\": \"gemm_fp16\", \"kernel_name\": \"gemm_k\",\n"
        " \"hsaco\": \"gemm_k.hsaco\", \"threads_per_block\": 256, \"hsaco_bytes\": 7656,\n"
        " \"args_signature\": [{\"name\": \"A\", \"type\": \"ptr<f16, global>\", \"size_bytes\": 8},\n"
        "   {\"name\": \"M\", \"type\": \"i32\", \"size_bytes\": 4}],\n"
        " \"sig_has_bytes\": 0, \"warmup_iters\": 5, \"timed_iters\": 100, \"timing_ms\": {\"comgr\": 12.8},\n"
        " \"atoms\": [\"mfma_f32_32x32x16_f16\"], \"notes\": \"\", \"ck_dependency\": false,\n"
        " \"ir_authored\": true, \"engine_build_id\": \"unknown\", \"engine_version\": \"unknown\",\n"
        " \"codegen_policy\": {\"scheduler_strategy\": null}, \"codegen_policy_key\": \"default\",\n"
        " \"block_m\": 64, \"block_n\": 64, \"default_shape\": [3328, 4096, 4096], \"grid_order\": \"NM\"}";
    rk_manifest m;
    assert_int_equal(rk_manifest_parse(up, strlen(up), &m), RK_OK);
    assert_string_equal(m.binary, "gemm_k.hsaco");
    assert_string_equal(m.binary_kind, "hsaco");
    assert_int_equal(m.binary_bytes, 7656);
    assert_int_equal(m.nargs, 2);
    assert_string_equal(m.args[0].type, "ptr<f16, global>");
    assert_int_equal(m.args[0].size_bytes, 8);
    assert_int_equal(m.ndefault_shape, 3);
    assert_string_equal(m.target, "");
}

/* dyn_smem_min is optional (absent = 0, written only when set); a tensor map
 * argument is 128 bytes. */
static void test_nvidia_fields(void **state) {
    (void)state;
    rk_manifest m, back;
    sample(&m);
    char *t = rk_manifest_text(&m);
    assert_null(strstr(t, "dyn_smem_min"));
    assert_null(strstr(t, "cluster_dims"));   /* older readers see the manifest they know */
    assert_null(strstr(t, "cooperative"));
    assert_int_equal(rk_manifest_parse(t, strlen(t), &back), RK_OK);
    assert_int_equal(back.dyn_smem_min, 0);
    assert_false(back.cooperative);
    assert_true(back.cluster_dims[0] == 0 && back.cluster_dims[1] == 0 && back.cluster_dims[2] == 0);
    rk_string_free(t);
    m.dyn_smem_min = 98304;
    m.cluster_dims[0] = 1;
    m.cluster_dims[1] = 2;
    m.cluster_dims[2] = 1;
    m.cooperative = true;
    assert_true(rk_manifest_add_arg(&m, "tmap", "tensormap", 128));
    t = rk_manifest_text(&m);
    assert_non_null(strstr(t, "\"cooperative\": true"));
    assert_non_null(strstr(t, "\"dyn_smem_min\": 98304"));
    assert_non_null(strstr(t, "\"type\": \"tensormap\""));
    assert_int_equal(rk_manifest_parse(t, strlen(t), &back), RK_OK);
    assert_int_equal(back.dyn_smem_min, 98304);
    assert_true(back.cluster_dims[0] == 1 && back.cluster_dims[1] == 2 && back.cluster_dims[2] == 1);
    assert_true(back.cooperative);
    assert_int_equal(back.nargs, 5);
    assert_string_equal(back.args[4].type, "tensormap");
    assert_int_equal(back.args[4].size_bytes, 128);
    char *t2 = rk_manifest_text(&back);
    assert_string_equal(t, t2);
    rk_string_free(t2);
    /* the manifest's types make a launch signature: the map at offset 64 */
    const char *names[5], *types[5];
    for (uint32_t i = 0; i < 5; i++) names[i] = back.args[i].name, types[i] = back.args[i].type;
    rk_argsig *sig = NULL;
    assert_int_equal(rk_argsig_new(names, types, 5, &sig), RK_OK);
    assert_int_equal(rk_argsig_offset(sig, 4), 64);
    assert_int_equal(rk_argsig_size(sig), 192);
    rk_argsig_free(sig);
    /* bad values are named */
    static const struct { const char *find, *replace, *frag; } rows[] = {
        {"\"dyn_smem_min\": 98304", "\"dyn_smem_min\": -1", "'dyn_smem_min' must be an integer in 0..4294967295"},
        {"\"dyn_smem_min\": 98304", "\"dyn_smem_min\": \"big\"", "'dyn_smem_min'"},
        {"\"dyn_smem_min\": 98304", "\"dyn_smem_min\": 4294967296", "'dyn_smem_min'"},
        {"\"size_bytes\": 128", "\"size_bytes\": 8", "args_signature[4].size_bytes' must be 128 for type 'tensormap'"},
        {"\"type\": \"tensormap\"", "\"type\": \"tensor_map\"", "'tensormap' or a scalar"},
        {"\"cluster_dims\": [", "\"cluster_dims\": [9, ", "'cluster_dims' must be [x, y, z], each an integer in 1..8"},
        {"\"cluster_dims\": [", "\"cluster_dims\": [0, 1, 1], \"old_cluster_dims\": [", "'cluster_dims'"},
        {"\"cluster_dims\": [", "\"cluster_dims\": [8, 2, 1], \"old_cluster_dims\": [", "at most 8 blocks"},
        {"\"cluster_dims\": [", "\"cluster_dims\": 2, \"old_cluster_dims\": [", "'cluster_dims'"},
        {"\"cooperative\": true", "\"cooperative\": \"yes\"", "'cooperative' must be true, false, 0 or 1"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char *at = strstr(t, rows[i].find);
        assert_non_null(at);
        size_t pre = (size_t)(at - t), fl = strlen(rows[i].find), rl = strlen(rows[i].replace);
        char *bad = malloc(strlen(t) + rl + 1);
        memcpy(bad, t, pre);
        memcpy(bad + pre, rows[i].replace, rl);
        strcpy(bad + pre + rl, at + fl);
        rk_manifest out;
        rk_status st = rk_manifest_parse(bad, strlen(bad), &out);
        if (st == RK_OK || !strstr(rk_error_message(), rows[i].frag))
            fail_msg("row %zu: expected an error naming %s, got %s", i, rows[i].frag, st ? rk_error_message() : "success");
        free(bad);
    }
    rk_string_free(t);
}

#define TPB_RANGE "'threads_per_block' must be an integer in 1..1024"

static void test_bad_manifests(void **state) {
    (void)state;
    static const struct { const char *find, *replace, *frag; } rows[] = {
        {"\"schema\": \"ck.dsl.example.manifest/v1\"", "\"schema\": \"v2\"", "'schema'"},
        {"\"kind\": \"softmax_bf16\"", "\"kind\": 3", "'kind' must be a string"},
        {"\"kernel_name\": \"rk_softmax_bf16_obf16_w32\"", "\"kernel_name\": \"\"", "'kernel_name'"},
        /* one legal range whatever the wrong value (4096 and -1 used to say 0..1024) */
        {"\"threads_per_block\": 256", "\"threads_per_block\": 0", TPB_RANGE},
        {"\"threads_per_block\": 256", "\"threads_per_block\": 4096", TPB_RANGE},
        {"\"threads_per_block\": 256", "\"threads_per_block\": -1", TPB_RANGE},
        {"\"threads_per_block\": 256", "\"threads_per_block\": 2.5", TPB_RANGE},
        {"\"type\": \"ptr<bf16, global>\"", "\"type\": \"ptr<bf16, local>\"", "args_signature[0].type"},
        {"\"type\": \"i32\"", "\"type\": \"int\"", "args_signature[2].type"},
        {"\"size_bytes\": 4", "\"size_bytes\": 8", "args_signature[2].size_bytes"},
        {"\"binary\": \"rk_softmax_bf16_obf16_w32.ptx\"", "\"binary\": \"../evil.ptx\"", "'binary'"},
        {"\"binary_kind\": \"ptx\"", "\"binary_kind\": \"elf\"", "'binary_kind' must be \"hsaco\", \"ptx\", \"cubin\" or \"ir\""},
        {"\"binary_hash\": \"xxh3-64:", "\"binary_hash\": \"md5:", "'binary_hash'"},
        {"\"default_shape\": [\n    4096,", "\"default_shape\": [\n    -1,", "'default_shape'"},
        {"\"default_shape_dims\": [\n    \"M\",", "\"default_shape_dims\": [\n", "'default_shape_dims' must list one "
         "dimension name per default_shape entry (2)"},
        {"\"default_shape_dims\": [\n    \"M\",", "\"default_shape_dims\": [\n    \"N\",", "'default_shape_dims' must not name"},
        {"\"default_shape_dims\": [\n    \"M\",", "\"default_shape_dims\": [\n    \"\",", "'default_shape_dims' must hold names"},
        {"\"eps\": 1e-05", "\"eps\": \"small\"", "'eps'"},
        {"\"ir\": \"rk_softmax_bf16_obf16_w32.ir\"", "\"ir\": \"/etc/passwd\"", "'ir'"},
        {"\"spec\": {", "\"spec\": 5, \"x\": {", "'spec'"},
        {"\"timing_ms\": {", "\"timing_ms\": 5, \"x\": {", "'timing_ms'"},
        {"\"ck_dependency\": false", "\"ck_dependency\": 0", "'ck_dependency'"},
        {"{", "[", "json"},
    };
    rk_manifest m;
    sample(&m);
    char *good = rk_manifest_text(&m);
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char *at = strstr(good, rows[i].find);
        if (!at) fail_msg("row %zu: '%s' not in the sample manifest", i, rows[i].find);
        size_t pre = (size_t)(at - good), fl = strlen(rows[i].find), rl = strlen(rows[i].replace);
        char *bad = malloc(strlen(good) + rl + 1);
        memcpy(bad, good, pre);
        memcpy(bad + pre, rows[i].replace, rl);
        strcpy(bad + pre + rl, at + fl);
        rk_manifest out;
        rk_status st = rk_manifest_parse(bad, strlen(bad), &out);
        if (st == RK_OK || !strstr(rk_error_message(), rows[i].frag))
            fail_msg("row %zu: expected an error naming %s, got %s", i, rows[i].frag,
                     st ? rk_error_message() : "success");
        free(bad);
    }
    /* missing required fields */
    const char *missing[] = {"{\"schema\": \"ck.dsl.example.manifest/v1\"}", "{}"};
    for (size_t i = 0; i < 2; i++) {
        rk_manifest out;
        assert_int_not_equal(rk_manifest_parse(missing[i], strlen(missing[i]), &out), RK_OK);
        assert_non_null(strstr(rk_error_message(), "is missing"));
    }
    rk_string_free(good);
}

static void test_write_and_binary_check(void **state) {
    (void)state;
    char dir[] = "/tmp/rk_manifest_XXXXXX";
    assert_non_null(mkdtemp(dir));
    rk_manifest m, back;
    sample(&m);
    assert_int_equal(rk_manifest_write(&m, dir), RK_OK);
    char path[512], bin[512];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    assert_int_equal(rk_manifest_read(path, &back), RK_OK);
    char *t1 = rk_manifest_text(&m), *t2 = rk_manifest_text(&back);
    assert_string_equal(t1, t2);
    rk_string_free(t1);
    rk_string_free(t2);
    snprintf(bin, sizeof bin, "%s/%s", dir, m.binary);
    assert_int_not_equal(rk_manifest_check_binary(&m, dir), RK_OK);          /* absent */
    FILE *f = fopen(bin, "wb");
    fputs(sample_ptx, f);
    fclose(f);
    assert_int_equal(rk_manifest_check_binary(&m, dir), RK_OK);
    char tampered[sizeof sample_ptx];
    memcpy(tampered, sample_ptx, sizeof sample_ptx);
    tampered[1] = 'V';                                          /* same size, other bytes */
    f = fopen(bin, "wb");
    fputs(tampered, f);
    fclose(f);
    assert_int_not_equal(rk_manifest_check_binary(&m, dir), RK_OK);
    assert_non_null(strstr(rk_error_message(), "hash"));
    f = fopen(bin, "wb");
    fputs(sample_ptx, f);
    fputc('\n', f);
    fclose(f);
    char want[64];
    snprintf(want, sizeof want, "%zu bytes", strlen(sample_ptx) + 1);
    assert_int_not_equal(rk_manifest_check_binary(&m, dir), RK_OK);
    assert_non_null(strstr(rk_error_message(), want));
    unlink(bin);
    unlink(path);
    rmdir(dir);
}

/* A 64-byte ELF64 header with e_machine and the e_flags low byte, then the
 * kernel's name (as a string table would hold it). */
static size_t fake_elf(uint8_t *d, unsigned machine, unsigned mach, const char *name) {
    memset(d, 0, 64);
    memcpy(d, "\177ELF", 4);
    d[4] = 2;
    d[18] = (uint8_t)machine;
    d[19] = (uint8_t)(machine >> 8);
    d[48] = (uint8_t)mach;
    size_t k = strlen(name) + 1;
    memcpy(d + 64, name, k);
    return 64 + k;
}

/* The binary's form against binary_kind and target, and the kernel in it;
 * size and hash not recorded, so only the form decides. */
static void test_binary_form(void **state) {
    (void)state;
    static const char name[] = "rk_softmax_bf16_obf16_w32";
    enum { TEXT, ELF_AMD_942, ELF_AMD_950, ELF_CUDA, ELF_AMD_OTHER_NAME };
    static const struct { const char *kind, *target; int what; const char *text, *frag; } rows[] = {
        {"ptx", "sm_90", TEXT, ".version 8.0\n.target sm_90\n.entry rk_softmax_bf16_obf16_w32()\n", NULL},
        {"ptx", "sm_90a", TEXT, ".target sm_90a, texmode_independent\n.entry rk_softmax_bf16_obf16_w32(\n", NULL},
        {"ptx", "sm_90", TEXT, ".version 8.0\n.entry rk_softmax_bf16_obf16_w32()\n", "is not PTX text"},
        {"ptx", "sm_90", TEXT, ".target sm_80\n.entry rk_softmax_bf16_obf16_w32()\n",
         "is PTX for .target sm_80 but the manifest's target is sm_90"},
        {"ptx", "sm_90", TEXT, ".target sm_90\n.entry rk_softmax_bf16_obf16_w32x()\n", "does not define kernel"},
        {"ptx", "sm_90", ELF_CUDA, NULL, "is not PTX text"},
        {"ptx", "gfx942", TEXT, ".target sm_90\n", "'binary_kind' is 'ptx' but target gfx942 (AMD) runs hsaco or ir"},
        {"hsaco", "sm_90", ELF_AMD_942, NULL, "'binary_kind' is 'hsaco' but target sm_90 (NVIDIA)"},
        {"hsaco", "gfx942", ELF_AMD_942, NULL, NULL},
        {"", "", ELF_AMD_950, NULL, NULL},                                   /* upstream: hsaco implied */
        {"hsaco", "gfx942", ELF_AMD_950, NULL, "processor 0x4f (EF_AMDGPU_MACH) but the manifest's target gfx942 is 0x4c"},
        {"hsaco", "gfx950", ELF_CUDA, NULL, "is not an AMDGPU code object"},
        {"hsaco", "gfx950", TEXT, "ckdsl.ir v1\nkernel @rk_softmax_bf16_obf16_w32 {\n", "is not an AMDGPU code object"},
        {"hsaco", "gfx942", ELF_AMD_OTHER_NAME, NULL, "does not define kernel 'rk_softmax_bf16_obf16_w32'"},
        {"cubin", "sm_90", ELF_CUDA, NULL, NULL},
        {"cubin", "sm_80", ELF_AMD_942, NULL, "is not a cubin"},
        {"ir", "gfx950", TEXT, "ckdsl.ir v1\nkernel @rk_softmax_bf16_obf16_w32 {\n", NULL},
        {"ir", "sm_90", TEXT, "ckdsl.ir v2\nkernel @rk_softmax_bf16_obf16_w32 {\n", "is not ckdsl.ir text"},
    };
    char dir[] = "/tmp/rk_manifest_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char bin[512];
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        rk_manifest m;
        rk_manifest_init(&m);
        snprintf(m.kernel_name, sizeof m.kernel_name, "%s", name);
        snprintf(m.binary_kind, sizeof m.binary_kind, "%s", rows[i].kind);
        snprintf(m.target, sizeof m.target, "%s", rows[i].target);
        snprintf(m.binary, sizeof m.binary, "k.bin");
        uint8_t d[512];
        size_t n = 0;
        switch (rows[i].what) {
        case TEXT: n = strlen(rows[i].text); memcpy(d, rows[i].text, n); break;
        case ELF_AMD_942: n = fake_elf(d, 224, 0x4c, name); break;
        case ELF_AMD_950: n = fake_elf(d, 224, 0x4f, name); break;
        case ELF_CUDA: n = fake_elf(d, 190, 0x5a, name); break;
        case ELF_AMD_OTHER_NAME: n = fake_elf(d, 224, 0x4c, "rk_softmax_bf16_obf16_w64"); break;
        }
        snprintf(bin, sizeof bin, "%s/k.bin", dir);
        FILE *f = fopen(bin, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(d, 1, n, f), n);
        fclose(f);
        rk_status st = rk_manifest_check_binary(&m, dir);
        if (!rows[i].frag ? st != RK_OK : st == RK_OK || !strstr(rk_error_message(), rows[i].frag))
            fail_msg("row %zu (%s, %s): status %d, message '%s' (wanted %s)", i, rows[i].kind, rows[i].target, st,
                     st ? rk_error_message() : "", rows[i].frag ? rows[i].frag : "success");
    }
    unlink(bin);
    rmdir(dir);
}

/* Shape variants: round trip, the pick (first match, every range must
 * hold, an unknown dimension never matches), bad entries named. */
static void test_variants(void **state) {
    (void)state;
    rk_manifest m, back;
    sample(&m);
    rk_manifest_variant v0 = {.manifest = "manifest.split.json", .ndims = 2, .dim = {"M", "N"}, .lo = {1, 16384},
                              .hi = {131, 2147483647}};
    rk_manifest_variant v1 = {.manifest = "manifest.short.json", .ndims = 1, .dim = {"N"}, .lo = {1}, .hi = {128}};
    /* odd rows (N mod 8 in [1, 7]) of 129..1000 */
    rk_manifest_variant v2 = {.manifest = "manifest.odd.json", .ndims = 2, .dim = {"N", "N%8"}, .lo = {129, 1},
                              .hi = {1000, 7}};
    m.variants[0] = v0;
    m.variants[1] = v1;
    m.variants[2] = v2;
    m.nvariants = 3;
    char *t1 = rk_manifest_text(&m);
    assert_non_null(t1);
    assert_int_equal(rk_manifest_parse(t1, strlen(t1), &back), RK_OK);
    assert_int_equal(back.nvariants, 3);
    assert_string_equal(back.variants[2].dim[1], "N%8");
    assert_string_equal(back.variants[0].dim[1], "N");
    assert_true(back.variants[0].hi[1] == 2147483647u);
    char *t2 = rk_manifest_text(&back);
    assert_string_equal(t1, t2);
    rk_string_free(t2);
    const char *names[2] = {"M", "N"};
    const struct { uint64_t M, N; const char *want; } picks[] = {
        {1, 262144, "manifest.split.json"}, {131, 16384, "manifest.split.json"}, {132, 16384, NULL},
        {1, 16383, NULL}, {5000, 128, "manifest.short.json"}, {1, 1, "manifest.short.json"}, {4096, 129, "manifest.odd.json"},
        {100, 100000, "manifest.split.json"}, {4096, 136, NULL}, {4096, 999, "manifest.odd.json"},
        {4096, 1001, NULL},
    };
    for (size_t i = 0; i < sizeof picks / sizeof *picks; i++) {
        const uint64_t ext[2] = {picks[i].M, picks[i].N};
        const rk_manifest_variant *v = rk_manifest_pick(&back, names, ext, 2);
        if (!picks[i].want ? v != NULL : !v || strcmp(v->manifest, picks[i].want))
            fail_msg("pick %zu (%llu x %llu): got %s", i, (unsigned long long)picks[i].M,
                     (unsigned long long)picks[i].N, v ? v->manifest : "none");
    }
    const char *only_n[1] = {"N"};
    const uint64_t n1[1] = {262144};
    assert_null(rk_manifest_pick(&back, only_n, n1, 1));      /* the split variant needs M too */
    static const struct { const char *find, *replace, *frag; } rows[] = {
        {"\"manifest\": \"manifest.split.json\"", "\"manifest\": \"../x.json\"", "variants[0].manifest"},
        {"\"manifest\": \"manifest.short.json\"", "\"manifest\": 7", "variants[1].manifest"},
        {"\"when\": {\n        \"N\"", "\"when\": {\n        \"N\": [5, 1], \"X\"", "variants[1].when"},
        {"\"variants\": [", "\"variants\": 5, \"later\": [", "'variants'"},
        {"\"N%8\"", "\"N%1\"", "variants[2].when"},      /* modulus below 2 */
        {"\"N%8\"", "\"N%\"", "variants[2].when"},       /* no modulus */
        {"\"N%8\"", "\"N%4\"", "variants[2].when"},      /* hi 7 is not below 4 */
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const char *at = strstr(t1, rows[i].find);
        if (!at) fail_msg("row %zu: '%s' not in the sample", i, rows[i].find);
        char bad[1 << 14];
        snprintf(bad, sizeof bad, "%.*s%s%s", (int)(at - t1), t1, rows[i].replace, at + strlen(rows[i].find));
        rk_status st = rk_manifest_parse(bad, strlen(bad), &back);
        if (st == RK_OK || !strstr(rk_error_message(), rows[i].frag))
            fail_msg("row %zu: status %d, message '%s' (wanted %s)", i, st, st ? rk_error_message() : "",
                     rows[i].frag);
    }
    rk_string_free(t1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_upstream), cmocka_unit_test(test_bad_manifests),
        cmocka_unit_test(test_write_and_binary_check), cmocka_unit_test(test_nvidia_fields),
        cmocka_unit_test(test_binary_form), cmocka_unit_test(test_variants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
