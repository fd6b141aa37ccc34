/* rocke — HSACO analysis: every resource number equals what
 * `llvm-readelf-22 --notes` prints for the same code object (its YAML-ish
 * text is the independent reference), for kernels with LDS, AGPRs and
 * spills on gfx90a/gfx942/gfx950; the occupancy model on hand-computed
 * cases; instruction counts; bad inputs, and (issue 20 item 6) crafted
 * metadata whose msgpack lengths and counts claim more than the note holds,
 * refused before msgpack-c allocates for them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "rocke/compile.h"
#include "rocke/analysis.h"
#include "base/base_int.h"

static const char *readelf(void) {
    const char *e = getenv("LLVM_READELF");
    if (e && access(e, X_OK) == 0) return e;
    return access("/usr/bin/llvm-readelf-22", X_OK) == 0 ? "/usr/bin/llvm-readelf-22"
           : access("/usr/lib/llvm-22/bin/llvm-readelf", X_OK) == 0 ? "/usr/lib/llvm-22/bin/llvm-readelf" : NULL;
}

static rk_arena notes_arena;

static rk_artifact *build(const char *fixture, const char *kernel, const char *target) {
    char path[512], *ll;
    size_t n;
    snprintf(path, sizeof path, "%s/tests/compile/fixtures/%s", ROCKE_SOURCE_DIR, fixture);
    assert_int_equal(rk_read_file(path, &ll, &n), RK_OK);
    const rk_target *t = rk_target_find(target);
    rk_compile_options o;
    assert_int_equal(rk_compile_options_default(t, &o), RK_OK);
    o.toolchain = RK_TOOLCHAIN_LLVM;
    o.inprocess = true;
    o.cache = true; /* reruns of the suite cost a cache hit per code object */
    snprintf(o.cache_dir, sizeof o.cache_dir, "%s/test-compile-cache", ROCKE_BINARY_DIR);
    rk_artifact *a = NULL;
    rk_status s = rk_compile_llvm_ir(ll, kernel, t, &o, &a);
    if (s != RK_OK) fprintf(stderr, "%s\n", rk_error_message());
    assert_int_equal(s, RK_OK);
    rk_free(ll, n + 1);
    return a;
}

/* The value of "<key>: N" in readelf's notes dump, -1 when absent. */
static long note_value(const char *text, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "%s:", key);
    const char *p = strstr(text, pat);
    if (!p) return -1;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (!strncmp(p, "true", 4)) return 1;
    if (!strncmp(p, "false", 5)) return 0;
    return strtol(p, NULL, 10);
}

/* One llvm-readelf process for all code objects (each prints "File: PATH"
 * before its notes); notes[i] gets the part of object i. */
static void readelf_notes(rk_artifact *const *arts, int n, char **notes) {
    char dir[] = "/tmp/rocke-an-XXXXXX";
    assert_non_null(mkdtemp(dir));
    rk_buf cmd;
    rk_buf_init(&cmd);
    rk_buf_printf(&cmd, "%s --notes", readelf());
    for (int i = 0; i < n; i++) {
        char p[64];
        snprintf(p, sizeof p, "%s/%d.hsaco", dir, i);
        FILE *f = fopen(p, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(arts[i]->binary, 1, arts[i]->binary_size, f), arts[i]->binary_size);
        fclose(f);
        rk_buf_printf(&cmd, " %s", p);
    }
    FILE *p = popen(rk_buf_cstr(&cmd), "r");
    assert_non_null(p);
    rk_buf all;
    rk_buf_init(&all);
    char line[512];
    while (fgets(line, sizeof line, p)) rk_buf_puts(&all, line);
    assert_int_equal(pclose(p), 0);
    for (int i = 0; i < n; i++) {
        char path[64], *start, *end;
        snprintf(path, sizeof path, "File: %s/%d.hsaco\n", dir, i);
        start = strstr(rk_buf_cstr(&all), path);
        assert_non_null(start);
        end = strstr(start + 1, "File: ");
        notes[i] = rk_arena_strndup(&notes_arena, start, end ? (size_t)(end - start) : strlen(start));
        snprintf(path, sizeof path, "%s/%d.hsaco", dir, i);
        unlink(path);
    }
    rmdir(dir);
    rk_buf_free(&all);
    rk_buf_free(&cmd);
}

static void test_matches_readelf(void **state) {
    (void)state;
    if (!readelf()) {
        fprintf(stderr, "SKIP: no llvm-readelf-22 (set LLVM_READELF)\n");
        skip();
    }
    static const struct { const char *fx, *kernel; } cases[] = {
        {"amd_vadd.ll", "vadd"}, {"amd_lds.ll", "lds_kernel"},
        {"amd_agpr.ll", "agpr_kernel"}, {"amd_spill.ll", "spill_kernel"}};
    static const char *const targets[] = {"gfx90a", "gfx942", "gfx950"};
    bool saw_lds = false, saw_agpr = false, saw_spill = false;
    rk_artifact *arts[12];
    char *notes_of[12];
    for (unsigned c = 0; c < 4; c++)
        for (unsigned ti = 0; ti < 3; ti++) arts[c * 3 + ti] = build(cases[c].fx, cases[c].kernel, targets[ti]);
    rk_arena_init(&notes_arena);
    readelf_notes(arts, 12, notes_of);
    for (unsigned c = 0; c < 4; c++)
        for (unsigned ti = 0; ti < 3; ti++) {
            rk_artifact *a = arts[c * 3 + ti];
            const char *notes = notes_of[c * 3 + ti];
            rk_hsaco_info info;
            assert_int_equal(rk_analyze_hsaco(a->binary, a->binary_size, NULL, &info), RK_OK);
            assert_int_equal(info.nkernels, 1);
            const rk_kernel_resources *k = &info.kernels[0];
            assert_string_equal(k->name, cases[c].kernel);
            assert_string_equal(info.arch, targets[ti]);
            assert_ptr_equal(info.t, rk_target_find(targets[ti]));
            char want_target[128];
            snprintf(want_target, sizeof want_target, "amdhsa.target:   %s", info.target);
            assert_non_null(strstr(notes, want_target));
            struct { const char *key; uint32_t have; } f[] = {
                {".vgpr_count", k->vgpr_count}, {".agpr_count", k->agpr_count}, {".sgpr_count", k->sgpr_count},
                {".group_segment_fixed_size", k->lds_bytes}, {".private_segment_fixed_size", k->scratch_bytes},
                {".vgpr_spill_count", k->vgpr_spill_count}, {".sgpr_spill_count", k->sgpr_spill_count},
                {".kernarg_segment_size", k->kernarg_size}, {".wavefront_size", k->wavefront_size},
                {".max_flat_workgroup_size", k->max_flat_workgroup_size},
                {".uses_dynamic_stack", k->uses_dynamic_stack}};
            for (unsigned i = 0; i < sizeof f / sizeof f[0]; i++) {
                long want = note_value(notes, f[i].key);
                if (want != (long)f[i].have)
                    fprintf(stderr, "%s %s %s: readelf %ld, rocke %u\n", cases[c].kernel, targets[ti], f[i].key, want,
                            f[i].have);
                assert_int_equal(want, (long)f[i].have);
            }
            /* the unified count is arch VGPRs rounded to 4 plus AGPRs */
            assert_true(k->arch_vgpr_count > 0);
            uint32_t unified = k->agpr_count ? (k->arch_vgpr_count + 3) / 4 * 4 + k->agpr_count : k->arch_vgpr_count;
            assert_int_equal(unified, k->vgpr_count);
            assert_true(k->has_occupancy);
            saw_lds |= k->lds_bytes > 0;
            saw_agpr |= k->agpr_count > 0;
            saw_spill |= k->vgpr_spill_count > 0 && k->scratch_bytes > 0;
            rk_artifact_free(a);
        }
    rk_arena_free(&notes_arena);
    assert_true(saw_lds && saw_agpr && saw_spill);
}

static rk_kernel_resources res(uint32_t arch_vgpr, uint32_t agpr, uint32_t sgpr, uint32_t lds, uint32_t wg) {
    rk_kernel_resources r;
    memset(&r, 0, sizeof r);
    r.arch_vgpr_count = arch_vgpr;
    r.agpr_count = agpr;
    r.vgpr_count = agpr ? (arch_vgpr + 3) / 4 * 4 + agpr : arch_vgpr;
    r.sgpr_count = sgpr;
    r.lds_bytes = lds;
    r.wavefront_size = 64;
    r.max_flat_workgroup_size = wg;
    return r;
}

/* Hand-computed: waves/SIMD = min(8, 512 / roundup(total, 8)) with total =
 * roundup(arch, 4) + agpr; SGPR table 80/88/100; WGs/CU = min(waves x 4 /
 * waves_per_wg, 16 slots (multi-wave groups), LDS/CU / roundup(lds, 512)). */
static void test_occupancy_hand_computed(void **state) {
    (void)state;
    static const struct {
        const char *target;
        uint32_t arch, agpr, sgpr, lds, wg;
        uint32_t vgpr_alloc, waves_by_vgpr, wgs, waves_cu;
        rk_occ_limit lim;
    } cases[] = {
        /* small kernel: nothing binds but the hardware */
        {"gfx942", 8, 0, 15, 0, 256, 8, 8, 8, 32, RK_OCC_WAVES},
        /* 128 VGPRs: 4 waves per SIMD, 4 groups of 4 waves */
        {"gfx942", 128, 0, 20, 0, 256, 128, 4, 4, 16, RK_OCC_VGPR},
        /* unified pool: 90 -> 92 + 100 AGPRs = 192 -> 2 waves; 1-wave groups */
        {"gfx90a", 90, 100, 20, 0, 64, 192, 2, 8, 8, RK_OCC_VGPR},
        /* 61 arch + 3 AGPRs = 64 + 3 = 67 -> 72 -> 7 waves */
        {"gfx950", 61, 3, 20, 0, 64, 72, 7, 28, 28, RK_OCC_VGPR},
        /* LDS 20000 -> 20480: 64 KiB holds 3 groups */
        {"gfx942", 16, 0, 20, 20000, 256, 16, 8, 3, 12, RK_OCC_LDS},
        /* the same on gfx950 (160 KiB): 8 groups, a tie with the waves */
        {"gfx950", 16, 0, 20, 20000, 256, 16, 8, 8, 32, RK_OCC_WAVES},
        /* 102 SGPRs: 7 waves per SIMD */
        {"gfx942", 16, 0, 102, 0, 64, 16, 8, 28, 28, RK_OCC_SGPR},
        /* 512 VGPRs and 16-wave groups: not even one group fits */
        {"gfx942", 512, 0, 20, 0, 1024, 512, 1, 0, 0, RK_OCC_VGPR},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rk_kernel_resources r = res(cases[i].arch, cases[i].agpr, cases[i].sgpr, cases[i].lds, cases[i].wg);
        rk_occupancy o;
        assert_int_equal(rk_occupancy_compute(rk_target_find(cases[i].target), &r, 0, &o), RK_OK);
        if (o.wgs_per_cu != cases[i].wgs || o.limited_by != cases[i].lim)
            fprintf(stderr, "case %u: wgs %u (want %u) limited by %s (want %s)\n", i, o.wgs_per_cu, cases[i].wgs,
                    rk_occ_limit_name(o.limited_by), rk_occ_limit_name(cases[i].lim));
        assert_int_equal(o.vgpr_alloc, cases[i].vgpr_alloc);
        assert_int_equal(o.waves_by_vgpr, cases[i].waves_by_vgpr);
        assert_int_equal(o.wgs_per_cu, cases[i].wgs);
        assert_int_equal(o.waves_per_cu, cases[i].waves_cu);
        assert_int_equal(o.limited_by, cases[i].lim);
    }
    /* an explicit workgroup size overrides the kernel's maximum */
    rk_kernel_resources r = res(8, 0, 15, 0, 1024);
    rk_occupancy o;
    assert_int_equal(rk_occupancy_compute(rk_target_find("gfx942"), &r, 128, &o), RK_OK);
    assert_int_equal(o.waves_per_wg, 2);
    assert_int_equal(o.wgs_per_cu, 16);
    assert_int_equal(rk_occupancy_compute(rk_target_find("sm_90"), &r, 0, &o), RK_ERR_UNSUPPORTED);
    assert_string_equal(rk_occ_limit_name(RK_OCC_LDS), "LDS");
}

static void test_isa_counts(void **state) {
    (void)state;
    const char *listing =
        "\nk.hsaco:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n\n"
        "0000000000001a00 <k>:\n"
        "\ts_load_dwordx2 s[0:1], s[4:5], 0x0 // 1A00: C0060002\n"
        "\ts_waitcnt lgkmcnt(0)\n"
        "\tbuffer_load_dword v1, v0, s[8:11], 0 offen lds\n"
        "\tbuffer_load_dwordx4 v[2:5], v0, s[8:11], 0 offen\n"
        "\tds_read_b128 v[6:9], v0\n"
        "\tds_write_b32 v0, v1\n"
        "\ts_barrier\n"
        "\tv_mfma_f32_16x16x16_f16 a[0:3], v[6:7], v[8:9], a[0:3]\n"
        "\tv_add_f32_e32 v1, v1, v2\n"
        "\tglobal_store_dword v0, v1, s[0:1]\n"
        "\tscratch_store_dword off, v1, off\n"
        "\ts_endpgm\n"
        "\ts_nop 0\n"
        "\ts_nop 0\n";
    rk_isa_stats s;
    rk_isa_count(listing, &s);
    assert_int_equal(s.instructions, 12);
    assert_int_equal(s.buffer_load, 2);
    assert_int_equal(s.buffer_load_lds, 1);
    assert_int_equal(s.ds_read, 1);
    assert_int_equal(s.ds_write, 1);
    assert_int_equal(s.s_barrier, 1);
    assert_int_equal(s.s_waitcnt, 1);
    assert_int_equal(s.mfma, 1);
    assert_int_equal(s.valu, 1);
    assert_int_equal(s.salu, 2); /* s_load, s_endpgm; the padding s_nops are not code */
    assert_int_equal(s.global_store, 1);
    assert_int_equal(s.scratch_store, 1);

    rk_artifact *a = build("amd_lds.ll", "lds_kernel", "gfx942");
    char *text = NULL;
    rk_status st = rk_analyze_isa(a->binary, a->binary_size, &s, &text);
    if (st == RK_ERR_TOOLCHAIN) {
        fprintf(stderr, "SKIP ISA listing: %s\n", rk_error_message());
    } else {
        assert_int_equal(st, RK_OK);
        assert_non_null(strstr(text, "<lds_kernel>:"));
        assert_true(s.ds_write >= 1 && s.ds_read >= 1 && s.s_barrier >= 1 && s.global_load >= 1);
        rk_string_free(text);
    }
    rk_artifact_free(a);
    a = build("amd_spill.ll", "spill_kernel", "gfx942");
    if (rk_analyze_isa(a->binary, a->binary_size, &s, NULL) == RK_OK) assert_true(s.scratch_store > 0);
    rk_artifact_free(a);
}

static void test_bad_inputs(void **state) {
    (void)state;
    rk_hsaco_info info;
    assert_int_equal(rk_analyze_hsaco("hello", 5, NULL, &info), RK_ERR_PARSE);
    assert_non_null(strstr(rk_error_message(), "not an ELF"));
    char *self;
    size_t n;
    assert_int_equal(rk_read_file("/proc/self/exe", &self, &n), RK_OK);
    assert_int_equal(rk_analyze_hsaco(self, n, NULL, &info), RK_ERR_PARSE);
    assert_non_null(strstr(rk_error_message(), "not an AMDGPU code object"));
    rk_free(self, n + 1);
    /* a cut-off HSACO */
    rk_artifact *a = build("amd_vadd.ll", "vadd", "gfx942");
    assert_int_not_equal(rk_analyze_hsaco(a->binary, 200, NULL, &info), RK_OK);
    rk_artifact_free(a);
}

/* Offset and size of the AMDGPU metadata descriptor inside an HSACO: the
 * note header is namesz 7, descsz, type 32, then "AMDGPU\0" padded to 8. */
static size_t find_metadata(const uint8_t *p, size_t n, uint32_t *descsz) {
    for (size_t i = 12; i + 8 <= n; i++) {
        if (memcmp(p + i, "AMDGPU\0\0", 8)) continue;
        uint32_t namesz, type;
        memcpy(&namesz, p + i - 12, 4);
        memcpy(descsz, p + i - 8, 4);
        memcpy(&type, p + i - 4, 4);
        if (namesz == 7 && type == 32 && i + 8 + *descsz <= n) return i + 8;
    }
    fail_msg("no AMDGPU metadata note found");
    return 0;
}

static void expect_refused(const uint8_t *orig, size_t n, size_t at, const uint8_t *bytes, size_t k, const char *msg) {
    uint8_t *p = malloc(n);
    memcpy(p, orig, n);
    memcpy(p + at, bytes, k);
    rk_hsaco_info info;
    assert_int_equal(rk_analyze_hsaco(p, n, NULL, &info), RK_ERR_PARSE);
    if (!strstr(rk_error_message(), msg)) fprintf(stderr, "message: %s\n", rk_error_message());
    assert_non_null(strstr(rk_error_message(), msg));
    free(p);
}

static void test_crafted_lengths(void **state) {
    (void)state;
    rk_artifact *a = build("amd_vadd.ll", "vadd", "gfx942");
    const uint8_t *h = a->binary;
    size_t n = a->binary_size;
    uint32_t descsz = 0;
    size_t d = find_metadata(h, n, &descsz);
    rk_hsaco_info info;
    assert_int_equal(rk_analyze_hsaco(h, n, NULL, &info), RK_OK);
    assert_int_equal(info.nkernels, 1);
    /* containers and strings claiming 4 G of content in a note of a few hundred bytes */
    expect_refused(h, n, d, (const uint8_t[]){0xdd, 0xff, 0xff, 0xff, 0xff}, 5, "declares 4294967295 msgpack elements");
    expect_refused(h, n, d, (const uint8_t[]){0xdf, 0x7f, 0xff, 0xff, 0xff}, 5, "msgpack elements");
    expect_refused(h, n, d, (const uint8_t[]){0xdb, 0xff, 0xff, 0xff, 0xff}, 5, "4294967295-byte msgpack item");
    expect_refused(h, n, d, (const uint8_t[]){0xc6, 0x00, 0x10, 0x00, 0x00}, 5, "1048576-byte msgpack item");
    /* nested: each level is small, the innermost claims what the note lacks */
    expect_refused(h, n, d, (const uint8_t[]){0x91, 0x91, 0x91, 0xdc, 0xff, 0xff}, 6, "65535 msgpack elements");
    expect_refused(h, n, d, (const uint8_t[]){0xc1}, 1, "unused msgpack byte 0xc1");
    /* the last bytes of the note cut a length field */
    expect_refused(h, n, d + descsz - 3, (const uint8_t[]){0xdd, 0x00, 0x00}, 3, "");
    /* random damage anywhere in the note: parsed or refused, never more */
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    uint8_t *p = malloc(n);
    for (int i = 0; i < 300; i++) {
        memcpy(p, h, n);
        for (int k = 0; k < 1 + rand() % 3; k++) p[d + (size_t)rand() % descsz] = (uint8_t)rand();
        rk_status st = rk_analyze_hsaco(p, n, NULL, &info);
        assert_true(st == RK_OK || st == RK_ERR_PARSE || st == RK_ERR_UNSUPPORTED);
        if (st != RK_OK) assert_true(rk_error_message()[0] != '\0');
    }
    free(p);
    rk_artifact_free(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_readelf),
        cmocka_unit_test(test_occupancy_hand_computed),
        cmocka_unit_test(test_isa_counts),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_crafted_lengths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
