/* rocke tests — the in-process AMDGPU linker (src/compile/amdgpu_link.c)
 * against ld.lld-22. Every AMD-legal one-op kernel and a set of kernel-family
 * instances are compiled for gfx90a, gfx942 and gfx950 (libLLVM in worker
 * processes, two threads) and linked in process; a sample (every second op on
 * one of its targets in turn, every family instance on all three) is also
 * linked by ld.lld and must be byte-identical given ld.lld's .comment text
 * (with ours, only .comment and the file offsets after it differ). Also:
 * layouts whose segments end on a page boundary, objects without the optional
 * sections or with the symbols swapped, ROCKE_LINKER selection and fallback,
 * the cache identity, and damaged or unsupported objects (a clear error,
 * never a crash). ROCKE_TEST_LINK_ALL=1 compares every object with ld.lld.
 * Skips with a message without libLLVM or ld.lld-22. Layer: tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <pthread.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "rocke/compile.h"
#include "rocke/kernels.h"
#include "compile/compile_int.h"
#include "support/op_samples.h"

static const char *const amd_targets[] = {"gfx90a", "gfx942", "gfx950"};

static const cc_llvm *llvm;        /* NULL: libLLVM not found */
static rk_llvm_flavor flavor;
static char lld[RK_PATH_MAX];      /* "": ld.lld-22 not found */
static char lld_comment[256];      /* ld.lld's .comment text, from its first output */

/* ---- reading ELF64 little-endian images (independent of the linker) ------- */
static uint64_t rd(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static void wr(uint8_t *p, int n, uint64_t v) {
    for (int i = 0; i < n; i++, v >>= 8) p[i] = (uint8_t)v;
}

typedef struct shdr { const char *name; uint32_t type; uint64_t off, size; uint8_t *hdr; } shdr;

/* Section i of an image that the caller knows is well formed. */
static shdr section(const cc_blob *b, uint32_t i) {
    uint8_t *sh = b->data + rd(b->data + 40, 8), *h = sh + (size_t)i * 64;
    uint8_t *names = sh + rd(b->data + 62, 2) * 64;
    return (shdr){(const char *)b->data + rd(names + 24, 8) + rd(h, 4), (uint32_t)rd(h + 4, 4), rd(h + 24, 8),
                  rd(h + 32, 8), h};
}
static uint32_t section_count(const cc_blob *b) { return (uint32_t)rd(b->data + 60, 2); }

static bool find_section(const cc_blob *b, const char *name, shdr *out) {
    for (uint32_t i = 0; i < section_count(b); i++) {
        *out = section(b, i);
        if (!strcmp(out->name, name)) return true;
    }
    return false;
}

/* Symbol table entry of `name` in an object, or NULL. */
static uint8_t *find_symbol(const cc_blob *b, const char *name) {
    shdr st, str;
    if (!find_section(b, ".symtab", &st) || !find_section(b, ".strtab", &str)) return NULL;
    for (uint64_t i = 1; i < st.size / 24; i++) {
        uint8_t *y = b->data + st.off + i * 24;
        if (!strcmp((const char *)b->data + str.off + rd(y, 4), name)) return y;
    }
    return NULL;
}

static uint32_t symbol_index(const cc_blob *b, const char *name) {
    shdr st;
    assert_true(find_section(b, ".symtab", &st));
    uint8_t *y = find_symbol(b, name);
    assert_non_null(y);
    return (uint32_t)((size_t)(y - (b->data + st.off)) / 24);
}

/* NULL when `mine` (linked with our own .comment) equals ld.lld's file but for
 * the .comment text and, after it, the file offsets of the sections and of the
 * section header table; else what differs. */
static const char *differs_but_comment(const cc_blob *ref, const cc_blob *mine) {
    if (mine->size < 64 || memcmp(ref->data, mine->data, 40) || memcmp(ref->data + 48, mine->data + 48, 16))
        return "ELF header";
    uint64_t phend = 64 + rd(ref->data + 56, 2) * 56;
    shdr rc;
    if (!find_section(ref, ".comment", &rc) || rc.off < phend) return "no .comment in ld.lld's output";
    if (mine->size < rc.off || memcmp(ref->data, mine->data, rc.off)) return "bytes before .comment";
    for (uint32_t i = 0; i < section_count(ref); i++) {
        shdr a = section(ref, i), m = section(mine, i);
        bool comment = !strcmp(a.name, ".comment");
        if (strcmp(a.name, m.name) || memcmp(a.hdr + 4, m.hdr + 4, 20) || memcmp(a.hdr + 40, m.hdr + 40, 24))
            return "a section header";
        if (comment && (m.size != strlen(cc_amdgpu_link_comment) + 1 ||
                        strcmp((const char *)mine->data + m.off, cc_amdgpu_link_comment)))
            return ".comment text";
        if (!comment && (a.size != m.size ||
                         (a.type != SHT_NOBITS && memcmp(ref->data + a.off, mine->data + m.off, a.size))))
            return "section contents";
    }
    return NULL;
}

/* ---- one object, both linkers ---------------------------------------------- */
#define NAME_MAX_LEN 3000 /* kernel names (the page-boundary search renames kernels) */
typedef struct item {
    const rk_target *t;
    char what[160];        /* "math.tanh on gfx942" */
    char *ll;
    char kernel[NAME_MAX_LEN + 1];
    bool with_lld;
    bool inprocess;        /* codegen in this process (worker requests cap names at 1023 bytes) */
    char fail[768];        /* "" = passed */
    uint64_t text_size;
} item;

static rk_status codegen(const item *it, cc_blob *obj) {
    cc_job job = {.ll = it->ll, .ll_len = strlen(it->ll), .kernel = it->kernel, .t = it->t, .opt_level = 3,
                  .inprocess = it->inprocess};
    double fork_ms;
    double opt_ms;
    return cc_llvm_codegen(llvm, &job, obj, NULL, &fork_ms, &opt_ms);
}

/* Link obj both ways; "" in fail when the outputs agree. */
static void check_object(const cc_blob *obj, const char *kernel, bool with_lld, char *fail, size_t n) {
    cc_blob mine = {0}, as_lld = {0}, ref = {0};
    const char *d = NULL;
    if (cc_amdgpu_link(obj, &mine) != RK_OK || cc_check_hsaco(&mine, kernel) != RK_OK)
        snprintf(fail, n, "internal link: %s", rk_error_message());
    else if (with_lld && cc_lld_link(lld, obj, kernel, &ref) != RK_OK)
        snprintf(fail, n, "ld.lld: %s", rk_error_message());
    else if (with_lld && cc_amdgpu_link_as(obj, lld_comment, &as_lld) != RK_OK)
        snprintf(fail, n, "internal link: %s", rk_error_message());
    else if (with_lld && (as_lld.size != ref.size || memcmp(as_lld.data, ref.data, ref.size)))
        snprintf(fail, n, "differs from ld.lld's output (%zu vs %zu bytes)", as_lld.size, ref.size);
    else if (with_lld && (d = differs_but_comment(&ref, &mine)))
        snprintf(fail, n, "with rocke's .comment: %s differs", d);
    cc_blob_free(&mine);
    cc_blob_free(&as_lld);
    cc_blob_free(&ref);
}

static void run_item(item *it) {
    cc_blob obj = {0};
    if (codegen(it, &obj) != RK_OK) {
        snprintf(it->fail, sizeof it->fail, "codegen: %s", rk_error_message());
        return;
    }
    shdr text;
    it->text_size = find_section(&obj, ".text", &text) ? text.size : 0;
    check_object(&obj, it->kernel, it->with_lld, it->fail, sizeof it->fail);
    cc_blob_free(&obj);
}

typedef struct pool { item *items; size_t n, next; pthread_mutex_t mu; } pool;

static void *worker(void *arg) {
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n) return NULL;
        run_item(&p->items[i]);
    }
}

/* Run every item on two threads (each talks to its own LLVM worker). */
static void run_all(item *items, size_t n) {
    pool p = {items, n, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, &p), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
}

static int report(const item *items, size_t n) {
    int bad = 0, compared = 0;
    for (size_t i = 0; i < n; i++) {
        compared += items[i].with_lld;
        if (items[i].fail[0] && bad++ < 20) fprintf(stderr, "%s: %s\n", items[i].what, items[i].fail);
    }
    printf("%zu objects linked in process, %d of them compared with ld.lld, %d failures\n", n, compared, bad);
    return bad;
}

static bool add_kernel(item *it, rk_kernel *k, const rk_target *t, bool with_lld) {
    memset(it, 0, sizeof *it);
    it->t = t;
    it->with_lld = with_lld;
    if (!k || rk_lower_llvm(k, t, flavor, &it->ll) != RK_OK) {
        snprintf(it->fail, sizeof it->fail, "build/lower: %s", rk_error_message());
        it->ll = NULL;
    }
    if (k) snprintf(it->kernel, sizeof it->kernel, "%s", rk_kernel_name(k));
    rk_kernel_free(k);
    return it->ll != NULL;
}

static void free_items(item *items, size_t n) {
    for (size_t i = 0; i < n; i++) rk_string_free(items[i].ll);
    free(items);
}

static bool compare_all(void) {
    const char *e = getenv("ROCKE_TEST_LINK_ALL");
    return e && *e && strcmp(e, "0");
}

static bool ready(void) {
    if (!llvm) fprintf(stderr, "SKIP: libLLVM (22) not found\n");
    else if (!lld[0]) fprintf(stderr, "SKIP: ld.lld-22 not found on PATH or in /usr/lib/llvm-22/bin (set ROCKE_LLD)\n");
    return llvm && lld[0];
}

/* Every AMD-legal one-op kernel on each AMD target, linked in process (so
 * `auto` never needs ld.lld for them); every second op is also compared with
 * ld.lld, on one of its legal targets in rotation (an ld.lld run costs ~70 ms
 * of CPU; ROCKE_TEST_LINK_ALL=1 compares all). */
static void test_every_op(void **state) {
    (void)state;
    if (!ready()) return;
    item *items = calloc((size_t)RK_OP__COUNT * 3, sizeof *items);
    assert_non_null(items);
    size_t n = 0;
    for (int c = 1; c < RK_OP__COUNT; c++) {
        int legal[3], nl = 0;
        for (int ti = 0; ti < 3; ti++)
            if (op_sample_legal((rk_opcode)c, rk_target_find(amd_targets[ti])->features)) legal[nl++] = ti;
        for (int j = 0; j < nl; j++) {
            const rk_target *t = rk_target_find(amd_targets[legal[j]]);
            item *it = &items[n++];
            bool with_lld = compare_all() || (c % 2 == 0 && j == c / 2 % nl);
            add_kernel(it, op_sample_kernel((rk_opcode)c, t->name), t, with_lld);
            snprintf(it->what, sizeof it->what, "%s on %s", rk_opcode_name((rk_opcode)c), t->name);
        }
    }
    run_all(items, n);
    int bad = report(items, n);
    free_items(items, n);
    assert_int_equal(bad, 0);
}

/* Kernel families (src/kernels): defaults and knob variants covering the
 * cached and looped row paths, tails, dtypes and LDS. */
static const char *const families[][2] = {
    {"elementwise", ""},
    {"elementwise", "op=gelu_tanh dtype=bf16"},
    {"elementwise", "op=div tail=masked vec=2"},
    {"reduce", ""},
    {"reduce", "chunks=0 unroll=2"},
    {"reduce", "op=max dtype=f16"},
    {"softmax", ""},
    {"softmax", "chunks=0 unroll=2"},
    {"softmax", "keep_exps=true"},
    {"layernorm", ""},
    {"layernorm", "residual=true save_stats=true chunks=0 unroll=2"},
    {"rmsnorm", ""},
    {"rmsnorm", "residual=true save_stats=true"},
    {"transpose", ""},
    {"transpose", "dtype=f16 lds_pad=1"},
};

static rk_kernel *family_kernel(const char *fam, const char *knobs, const rk_target *t) {
    rk_family_id f;
    rk_instance in;
    assert_int_equal(rk_family_parse(fam, &f), RK_OK);
    assert_int_equal(rk_instance_default(f, &in), RK_OK);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", knobs);
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        assert_non_null(eq);
        *eq = '\0';
        if (rk_instance_set(&in, tok, eq + 1, NULL) != RK_OK) fail_msg("%s %s: %s", fam, knobs, rk_error_message());
    }
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k) != RK_OK) fail_msg("%s %s on %s: %s", fam, knobs, t->name, rk_error_message());
    return k;
}

static void test_families(void **state) {
    (void)state;
    if (!ready()) return;
    size_t nf = sizeof families / sizeof families[0], n = 0;
    item *items = calloc(nf * 3, sizeof *items);
    assert_non_null(items);
    for (size_t f = 0; f < nf; f++)
        for (int ti = 0; ti < 3; ti++) {
            const rk_target *t = rk_target_find(amd_targets[ti]);
            item *it = &items[n++];
            add_kernel(it, family_kernel(families[f][0], families[f][1], t), t, true);
            snprintf(it->what, sizeof it->what, "%s {%s} on %s", families[f][0], families[f][1], t->name);
        }
    run_all(items, n);
    int bad = report(items, n);
    free_items(items, n);
    assert_int_equal(bad, 0);
}

/* ---- page boundaries: the kernel's name length moves the read-only segment's
 * end in 4-byte steps (.note and .dynstr hold the name); find the lengths that
 * put the read-only end, or the code end, exactly on a page ---------------- */
static char *renamed(const char *ll, const char *old, size_t len, char *name) {
    memset(name, 'k', len);
    name[len] = '\0';
    char pat[NAME_MAX_LEN + 8];
    snprintf(pat, sizeof pat, "@%s(", old);
    const char *p = strstr(ll, pat);
    assert_non_null(p);
    assert_null(strstr(p + 1, pat));
    size_t n = strlen(ll) + len + 8;
    char *out = malloc(n);
    assert_non_null(out);
    snprintf(out, n, "%.*s@%s(%s", (int)(p - ll), ll, name, p + strlen(pat));
    return out;
}

typedef struct probe { uint64_t ro_end, text_end; } probe;

/* Compile `base` renamed to a name of len characters; compare both linkers. */
static probe try_length(const item *base, size_t len) {
    item it = *base;
    it.ll = renamed(base->ll, base->kernel, len, it.kernel);
    cc_blob obj = {0}, mine = {0};
    if (codegen(&it, &obj) != RK_OK || cc_amdgpu_link(&obj, &mine) != RK_OK)
        fail_msg("%s renamed to %zu characters: %s", base->what, len, rk_error_message());
    const uint8_t *ph = mine.data + 64;
    probe pr = {rd(ph + 56 + 32, 8), rd(ph + 112 + 16, 8) + rd(ph + 112 + 32, 8)}; /* PT_LOAD R and RX */
    it.fail[0] = '\0';
    check_object(&obj, it.kernel, true, it.fail, sizeof it.fail);
    if (it.fail[0]) fail_msg("%s renamed to %zu characters: %s", base->what, len, it.fail);
    cc_blob_free(&obj);
    cc_blob_free(&mine);
    free(it.ll);
    return pr;
}

/* Smallest name length whose read-only end (or, with `text`, code end)
 * reaches `want` (both grow with the length); 0 when none up to max_len. */
static size_t search(const item *base, size_t max_len, bool text, uint64_t want, probe *got) {
    size_t lo = 1, hi = max_len;
    *got = try_length(base, hi);
    if ((text ? got->text_end : got->ro_end) < want) return 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        probe p = try_length(base, mid);
        if ((text ? p.text_end : p.ro_end) < want) lo = mid + 1;
        else hi = mid;
    }
    *got = try_length(base, lo);
    return lo;
}

static void test_page_boundaries(void **state) {
    (void)state;
    if (!ready()) return;
    const rk_target *t = rk_target_find("gfx90a");
    /* a kernel whose code is a whole number of 256-byte blocks can end on a page */
    item base;
    bool found = false;
    for (int c = 1; c < RK_OP__COUNT && !found; c++) {
        if (!op_sample_legal((rk_opcode)c, t->features)) continue;
        add_kernel(&base, op_sample_kernel((rk_opcode)c, t->name), t, true);
        snprintf(base.what, sizeof base.what, "%s on %s", rk_opcode_name((rk_opcode)c), t->name);
        cc_blob obj = {0};
        shdr text;
        found = codegen(&base, &obj) == RK_OK && find_section(&obj, ".text", &text) && text.size % 256 == 0 &&
                text.size < 0x1000;
        base.text_size = found ? text.size : 0;
        cc_blob_free(&obj);
        if (!found) rk_string_free(base.ll);
    }
    assert_true(found);
    base.inprocess = true; /* names longer than a worker request carries */
    probe p0 = try_length(&base, 1), got;
    /* the read-only segment (headers .. .rodata) ending on the next page */
    uint64_t page_end = (p0.ro_end + 0xfff) & ~(uint64_t)0xfff;
    size_t ro_len = search(&base, NAME_MAX_LEN, false, page_end, &got);
    assert_true(ro_len > 0);
    assert_int_equal(got.ro_end, page_end);
    /* .text ending on a page: its start is 256-aligned and its size a
     * multiple of 256, so its end moves in 256-byte steps as the name grows
     * and the first length that reaches the next page ends exactly there */
    uint64_t want = (p0.text_end + 0xfff) & ~(uint64_t)0xfff;
    size_t text_len = search(&base, NAME_MAX_LEN, true, want, &got);
    assert_true(text_len > 0);
    assert_int_equal(got.text_end % 0x1000, 0);
    printf("page boundaries: %s named with %zu characters ends .rodata on a page, with %zu .text\n", base.what,
           ro_len, text_len);
    rk_string_free(base.ll);
}

/* ---- damaged and unsupported objects ------------------------------------------ */
static cc_blob fixture_object(void) {
    item it;
    const rk_target *t = rk_target_find("gfx942");
    add_kernel(&it, op_sample_kernel(RK_OP_FADD, t->name), t, false);
    cc_blob obj = {0};
    assert_int_equal(codegen(&it, &obj), RK_OK);
    rk_string_free(it.ll);
    return obj;
}

static cc_blob copy(const cc_blob *b) {
    cc_blob c = {rk_malloc(b->size + 1), b->size};
    assert_non_null(c.data);
    memcpy(c.data, b->data, b->size + 1);
    return c;
}

/* Link a (damaged) object: expect status `want` and `part` in the message. */
static void expect(const cc_blob *obj, rk_status want, const char *part) {
    cc_blob out = {0};
    rk_status s = cc_amdgpu_link(obj, &out);
    if (s != want || !strstr(rk_error_message(), part))
        fail_msg("expected %s with '%s', got %s: %s", rk_status_name(want), part, rk_status_name(s),
                 rk_error_message());
    assert_null(out.data);
}

static void test_damaged_objects(void **state) {
    (void)state;
    if (!llvm) { fprintf(stderr, "SKIP: libLLVM (22) not found\n"); return; }
    cc_blob obj = fixture_object(), b;
    /* every truncation: the section header table sits at the end */
    for (size_t n = 0; n < obj.size; n++) {
        cc_blob cut = {malloc(n + 1), n}, out = {0}; /* exactly n bytes: ASan sees any read past them */
        assert_non_null(cut.data);
        memcpy(cut.data, obj.data, n);
        assert_int_equal(cc_amdgpu_link(&cut, &out), RK_ERR_INVALID);
        assert_non_null(strstr(rk_error_message(), "not a valid AMDGPU relocatable object"));
        free(cut.data);
    }
    b = copy(&obj);
    wr(b.data + 18, 2, 62); /* EM_X86_64 */
    expect(&b, RK_ERR_INVALID, "e_machine is 62, not EM_AMDGPU");
    cc_blob_free(&b);
    b = copy(&obj);
    b.data[0] = 0;
    expect(&b, RK_ERR_INVALID, "no ELF magic");
    cc_blob_free(&b);
    b = copy(&obj);
    b.data[4] = 1; /* ELFCLASS32 */
    expect(&b, RK_ERR_INVALID, "little-endian ELF64");
    cc_blob_free(&b);
    b = copy(&obj);
    b.data[8] = 5; /* EI_ABIVERSION past HSA code object v6 (4) */
    expect(&b, RK_ERR_UNSUPPORTED, "ELF ABI version 5");
    cc_blob_free(&b);
    b = copy(&obj);
    wr(b.data + 16, 2, 3); /* ET_DYN */
    expect(&b, RK_ERR_INVALID, "not ET_REL");
    cc_blob_free(&b);
    /* a section that lies past the end of the file */
    b = copy(&obj);
    shdr s = {0};
    assert_true(find_section(&b, ".text", &s));
    wr(s.hdr + 24, 8, b.size - 4);
    expect(&b, RK_ERR_INVALID, "lies past the end");
    cc_blob_free(&b);
    /* the descriptor relocation: another type, a bad offset */
    b = copy(&obj);
    assert_true(find_section(&b, ".rela.rodata", &s));
    wr(b.data + s.off + 8, 4, 3); /* R_AMDGPU_ABS64 */
    expect(&b, RK_ERR_UNSUPPORTED, "relocation type 3");
    cc_blob_free(&b);
    b = copy(&obj);
    assert_true(find_section(&b, ".rela.rodata", &s));
    wr(b.data + s.off, 8, 1u << 20);
    expect(&b, RK_ERR_INVALID, "overruns .rodata");
    cc_blob_free(&b);
    /* an undefined global, a symbol name outside .strtab */
    char kd[RK_PATH_MAX];
    snprintf(kd, sizeof kd, "%s.kd", "sample_arith_fadd");
    b = copy(&obj);
    uint8_t *y = find_symbol(&b, kd);
    assert_non_null(y);
    wr(y + 6, 2, 0);
    expect(&b, RK_ERR_UNSUPPORTED, "undefined symbol 'sample_arith_fadd.kd'");
    cc_blob_free(&b);
    b = copy(&obj);
    y = find_symbol(&b, kd);
    wr(y, 4, 1u << 30);
    expect(&b, RK_ERR_INVALID, "has no name in .strtab");
    cc_blob_free(&b);
    /* a relocation against the descriptor (default visibility: ld.lld refuses it too) */
    b = copy(&obj);
    assert_true(find_section(&b, ".rela.rodata", &s));
    wr(b.data + s.off + 12, 4, symbol_index(&b, kd));
    expect(&b, RK_ERR_UNSUPPORTED, "not the kernel");
    cc_blob_free(&b);
    /* two symbols of one name (the assembler's register counts) */
    b = copy(&obj);
    y = find_symbol(&b, "sample_arith_fadd.num_agpr");
    assert_non_null(y);
    wr(y, 4, rd(find_symbol(&b, "sample_arith_fadd.num_vgpr"), 4));
    expect(&b, RK_ERR_UNSUPPORTED, "two symbols named 'sample_arith_fadd.num_vgpr'");
    cc_blob_free(&b);
    /* a section the linker does not know (renamed in place) */
    b = copy(&obj);
    assert_true(find_section(&b, ".rodata", &s));
    ((char *)s.name)[6] = 'x';
    expect(&b, RK_ERR_UNSUPPORTED, "section '.rodatx'");
    cc_blob_free(&b);
    /* random byte damage: any status, no crash, no leak (ASan runs check) */
    uint32_t seed = 12345;
    for (int i = 0; i < 3000; i++) {
        b = copy(&obj);
        for (int k = 0; k < 1 + i % 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % b.size;
            seed = seed * 1103515245u + 12345u;
            b.data[at] ^= (uint8_t)(1u << (seed >> 28 & 7));
        }
        cc_blob out = {0};
        if (cc_amdgpu_link(&b, &out) == RK_OK) assert_non_null(out.data);
        else assert_true(rk_error_message()[0] != '\0');
        cc_blob_free(&out);
        cc_blob_free(&b);
    }
    cc_blob_free(&obj);
}

/* ---- ROCKE_LINKER: selection, fallback, the cache identity ------------------ */
static void test_selection_and_fallback(void **state) {
    (void)state;
    if (!ready()) return;
    cc_blob obj = fixture_object(), out = {0}, ref = {0};
    const char *kernel = "sample_arith_fadd", *used = NULL;
    /* valid for ld.lld (which drops .note.GNU-stack), refused by us */
    cc_blob odd = copy(&obj);
    shdr s = {0};
    assert_true(find_section(&odd, ".note.GNU-stack", &s));
    wr(s.hdr + 32, 8, 1);
    expect(&odd, RK_ERR_UNSUPPORTED, "a non-empty '.note.GNU-stack' section");
    assert_int_equal(cc_lld_link(lld, &obj, kernel, &ref), RK_OK);
    /* the descriptor before the kernel in .symtab: both linkers keep that
     * order in .dynsym and .symtab */
    cc_blob swapped = copy(&obj);
    uint32_t fi = symbol_index(&swapped, kernel), ki = symbol_index(&swapped, "sample_arith_fadd.kd");
    uint8_t tmp[24];
    shdr st, rela;
    assert_true(find_section(&swapped, ".symtab", &st) && find_section(&swapped, ".rela.rodata", &rela));
    memcpy(tmp, swapped.data + st.off + fi * 24, 24);
    memcpy(swapped.data + st.off + fi * 24, swapped.data + st.off + ki * 24, 24);
    memcpy(swapped.data + st.off + ki * 24, tmp, 24);
    wr(swapped.data + rela.off + 12, 4, ki);
    char fail[768] = "";
    check_object(&swapped, kernel, true, fail, sizeof fail);
    if (fail[0]) fail_msg("kernel and descriptor swapped in .symtab: %s", fail);
    cc_blob_free(&swapped);

    cc_toolchain tc;
    memset(&tc, 0, sizeof tc);
    snprintf(tc.lld, sizeof tc.lld, "%s", lld);
    tc.linker = CC_LINK_AUTO;
    assert_int_equal(cc_link_hsaco(&tc, &obj, kernel, &out, &used), RK_OK);
    assert_string_equal(used, "internal linker");
    assert_null(differs_but_comment(&ref, &out));
    cc_blob_free(&out);
    assert_int_equal(cc_link_hsaco(&tc, &odd, kernel, &out, &used), RK_OK); /* fell back */
    assert_non_null(strstr(used, "ld.lld"));
    assert_int_equal(out.size, ref.size);
    assert_memory_equal(out.data, ref.data, ref.size);
    cc_blob_free(&out);
    tc.linker = CC_LINK_LLD;
    assert_int_equal(cc_link_hsaco(&tc, &obj, kernel, &out, &used), RK_OK);
    assert_non_null(strstr(used, "ld.lld"));
    assert_memory_equal(out.data, ref.data, ref.size);
    cc_blob_free(&out);
    tc.linker = CC_LINK_INTERNAL;
    assert_int_equal(cc_link_hsaco(&tc, &odd, kernel, &out, &used), RK_ERR_UNSUPPORTED);
    assert_non_null(strstr(rk_error_message(), "'.note.GNU-stack'"));
    assert_non_null(strstr(rk_error_message(), "ROCKE_LINKER=internal"));
    tc.linker = CC_LINK_AUTO;
    tc.lld[0] = '\0';
    assert_int_equal(cc_link_hsaco(&tc, &odd, kernel, &out, &used), RK_ERR_UNSUPPORTED);
    assert_non_null(strstr(rk_error_message(), "no ld.lld was found to fall back on"));
    assert_int_equal(cc_link_hsaco(&tc, &obj, kernel, &out, &used), RK_OK); /* no ld.lld needed */
    /* the output check still runs: the wrong kernel name is caught */
    cc_blob_free(&out);
    assert_int_equal(cc_link_hsaco(&tc, &obj, "other", &out, &used), RK_ERR_TOOLCHAIN);
    assert_null(out.data);
    cc_blob_free(&odd);
    cc_blob_free(&obj);
    cc_blob_free(&ref);
}

/* Objects without the optional sections (.AMDGPU.gpr_maximums is new in
 * recent LLVMs; .note.GNU-stack is dropped by ld.lld): still identical. */
static void test_optional_sections(void **state) {
    (void)state;
    if (!ready()) return;
    static const char *const names[] = {"llvm-objcopy-22", NULL};
    static const char *const dirs[] = {"/usr/lib/llvm-22/bin", NULL};
    char objcopy[RK_PATH_MAX], dir[RK_PATH_MAX], in[RK_PATH_MAX + 16], out[RK_PATH_MAX + 16];
    if (cc_find_tool(NULL, names, dirs, objcopy, NULL) != CC_FOUND) {
        fprintf(stderr, "SKIP optional sections: llvm-objcopy-22 not found\n");
        return;
    }
    cc_blob obj = fixture_object();
    assert_int_equal(cc_tmpdir(dir), RK_OK);
    snprintf(in, sizeof in, "%s/in.o", dir);
    snprintf(out, sizeof out, "%s/out.o", dir);
    assert_int_equal(cc_write_file(in, obj.data, obj.size), RK_OK);
    const char *drop[] = {"--remove-section=.AMDGPU.gpr_maximums", "--remove-section=.note.GNU-stack"};
    for (int i = 0; i < 2; i++) {
        const char *argv[] = {objcopy, drop[i], in, out, NULL};
        cc_proc p;
        assert_int_equal(cc_run(argv, &p), RK_OK);
        assert_int_equal(p.exit_code, 0);
        cc_proc_free(&p);
        cc_blob less = {0};
        assert_int_equal(cc_read_blob(out, &less), RK_OK);
        shdr s;
        assert_false(find_section(&less, strchr(drop[i], '=') + 1, &s));
        char fail[768] = "";
        check_object(&less, "sample_arith_fadd", true, fail, sizeof fail);
        if (fail[0]) fail_msg("object without %s: %s", strchr(drop[i], '=') + 1, fail);
        cc_blob_free(&less);
    }
    cc_tmpdir_remove(dir);
    cc_blob_free(&obj);
}

static void test_toolchain_identity(void **state) {
    (void)state;
    if (!ready()) return;
    const rk_target *t = rk_target_find("gfx942");
    const char *modes[] = {"auto", "internal", "lld"};
    const char *tags[] = {"link=auto+internal-v", "link=internal-v", "link=lld;"};
    char ids[3][sizeof ((cc_toolchain *)0)->identity];
    char *saved = getenv("ROCKE_LINKER") ? strdup(getenv("ROCKE_LINKER")) : NULL;
    rk_compile_options o;
    assert_int_equal(rk_compile_options_default(t, &o), RK_OK);
    for (int i = 0; i < 3; i++) {
        setenv("ROCKE_LINKER", modes[i], 1);
        cc_toolchain tc;
        assert_int_equal(cc_toolchain_resolve(RK_TOOLCHAIN_LLVM, t, &tc), RK_OK);
        assert_non_null(strstr(tc.identity, tags[i]));
        /* ld.lld is part of the identity exactly when it may run */
        assert_true((strstr(tc.identity, "lld=/") != NULL) == (i != 1));
        memcpy(ids[i], tc.identity, sizeof ids[i]);
        cc_key k = cc_cache_key("x", 1, "k", t, &tc, &o, RK_LLVM22);
        for (int j = 0; j < i; j++) {
            cc_toolchain other = tc;
            memcpy(other.identity, ids[j], sizeof other.identity);
            cc_key kj = cc_cache_key("x", 1, "k", t, &other, &o, RK_LLVM22);
            assert_memory_not_equal(k.b, kj.b, sizeof k.b);
        }
    }
    /* internal never looks for ld.lld, so a bad ROCKE_LLD does not matter */
    setenv("ROCKE_LINKER", "internal", 1);
    setenv("ROCKE_LLD", "/nonexistent/ld.lld", 1);
    cc_toolchain tc;
    assert_int_equal(cc_toolchain_resolve(RK_TOOLCHAIN_LLVM, t, &tc), RK_OK);
    setenv("ROCKE_LINKER", "auto", 1);
    assert_int_equal(cc_toolchain_resolve(RK_TOOLCHAIN_LLVM, t, &tc), RK_ERR_TOOLCHAIN);
    assert_non_null(strstr(rk_error_message(), "ROCKE_LLD=/nonexistent/ld.lld"));
    unsetenv("ROCKE_LLD");
    setenv("ROCKE_LINKER", "gold", 1);
    assert_int_equal(cc_toolchain_resolve(RK_TOOLCHAIN_LLVM, t, &tc), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "ROCKE_LINKER='gold' is not a linker (legal: auto (default), "
                                               "internal, lld)"));
    /* end to end: the artifact names the linker that ran */
    for (int i = 1; i < 3; i++) {
        setenv("ROCKE_LINKER", modes[i], 1);
        o.cache = false;
        o.toolchain = RK_TOOLCHAIN_LLVM;
        rk_kernel *k = op_sample_kernel(RK_OP_FADD, t->name);
        rk_artifact *a = NULL;
        assert_int_equal(rk_compile(k, t, &o, &a), RK_OK);
        assert_non_null(strstr(a->toolchain, i == 1 ? "+ internal linker" : "+ ld.lld"));
        rk_artifact_free(a);
        rk_kernel_free(k);
    }
    if (saved) setenv("ROCKE_LINKER", saved, 1);
    else unsetenv("ROCKE_LINKER");
    free(saved);
}

static int setup(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("gfx942");
    cc_toolchain tc;
    char *saved = getenv("ROCKE_LINKER") ? strdup(getenv("ROCKE_LINKER")) : NULL;
    setenv("ROCKE_LINKER", "internal", 1); /* find libLLVM whatever ld.lld's state */
    if (cc_toolchain_resolve(RK_TOOLCHAIN_LLVM, t, &tc) == RK_OK && cc_llvm_load(tc.lib, &llvm) == RK_OK) {
        unsigned maj, min, pat;
        cc_llvm_version(llvm, &maj, &min, &pat);
        flavor = cc_flavor_for_major(maj);
    } else {
        llvm = NULL;
    }
    if (saved) setenv("ROCKE_LINKER", saved, 1);
    else unsetenv("ROCKE_LINKER");
    free(saved);
    static const char *const names[] = {"ld.lld-22", NULL};
    static const char *const dirs[] = {"/usr/lib/llvm-22/bin", NULL};
    if (cc_find_tool("ROCKE_LLD", names, dirs, lld, NULL) != CC_FOUND) lld[0] = '\0';
    if (!llvm || !lld[0]) return 0;
    /* ld.lld's .comment names its build ("Linker: Debian LLD 22.1.8") */
    cc_blob obj = fixture_object(), ref = {0};
    shdr c;
    if (cc_lld_link(lld, &obj, "sample_arith_fadd", &ref) != RK_OK || !find_section(&ref, ".comment", &c)) {
        fprintf(stderr, "setup: %s\n", rk_error_message());
        return -1;
    }
    snprintf(lld_comment, sizeof lld_comment, "%s", (const char *)ref.data + c.off);
    cc_blob_free(&obj);
    cc_blob_free(&ref);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_damaged_objects),
        cmocka_unit_test(test_selection_and_fallback),
        cmocka_unit_test(test_optional_sections),
        cmocka_unit_test(test_toolchain_identity),
        cmocka_unit_test(test_page_boundaries),
        cmocka_unit_test(test_families),
        cmocka_unit_test(test_every_op),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
