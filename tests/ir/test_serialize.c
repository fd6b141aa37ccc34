/* rocke tests — the IR text forms: the reference's §5.3 dump and §6
 * serialization byte for byte, serialize→parse→serialize identity over the
 * corpus, canonicalization, upstream quirks, float repr edge cases and
 * allocation failures. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/ir.h"
#include "support/ir_corpus.h"

/* Reference §6, for the kernel of §5.3. */
static const char rowsum_ir[] =
    "ckdsl.ir v1\n"
    "kernel @rowsum {\n"
    "  params {\n"
    "    %X : ptr<f32,global>\n"
    "    %N : i32\n"
    "  }\n"
    "  region @entry {\n"
    "    %c1 : i32 = arith.constant (  ) { ity = s:\"i32\", value = i:0 }\n"
    "    %c2 : i32 = arith.constant (  ) { ity = s:\"i32\", value = i:1 }\n"
    "    %c3 : f32 = arith.constant (  ) { ity = s:\"f32\", value = f:0.0 }\n"
    "    %for4 : f32 = scf.for ( %c1, %N, %c2, %c3 ) { elide_trailing_barrier = b:true, iter_args = l:[ { name = "
    "s:\"%acc\", type = s:\"f32\" } ], iv = s:\"%k0\", iv_type = s:\"i32\", num_iter_args = i:1, unroll = b:false }\n"
    "      region @body {\n"
    "        %gl5 : f32 = memref.global_load_typed ( %X, %k0 ) { align = i:4, elem_type = s:\"f32\" }\n"
    "        %fadd6 : f32 = arith.fadd ( %acc, %gl5 )\n"
    "        scf.yield ( %fadd6 ) { num = i:1 }\n"
    "      }\n"
    "    memref.global_store_typed ( %X, %c1, %for4 ) { align = i:1, elem_type = s:\"f32\" }\n"
    "  }\n"
    "}\n";

/* Reference §5.3. */
static const char rowsum_print[] =
    "kernel @rowsum(%X: ptr<f32,global>, %N: i32) {\n"
    "  %c1 = arith.constant {ity = \"i32\", value = 0} : i32\n"
    "  %c2 = arith.constant {ity = \"i32\", value = 1} : i32\n"
    "  %c3 = arith.constant {ity = \"f32\", value = 0.0} : f32\n"
    "  %for4 = scf.for %c1, %N, %c2, %c3 {elide_trailing_barrier = True, iter_args = [{'name': '%acc', 'type': "
    "'f32'}], iv = \"%k0\", iv_type = \"i32\", num_iter_args = 1, unroll = False} : f32\n"
    "    region 'body' {\n"
    "      %gl5 = memref.global_load_typed %X, %k0 {align = 4, elem_type = \"f32\"} : f32\n"
    "      %fadd6 = arith.fadd %acc, %gl5 : f32\n"
    "      scf.yield %fadd6 {num = 1}\n"
    "    }\n"
    "  memref.global_store_typed %X, %c1, %for4 {align = 1, elem_type = \"f32\"}\n"
    "}";

static const char rowsum_canon[] =
    "ckdsl.ir v1\n"
    "kernel @rowsum {\n"
    "  params {\n"
    "    %0 : ptr<f32,global>\n"
    "    %1 : i32\n"
    "  }\n"
    "  region @entry {\n"
    "    %2 : i32 = arith.constant (  ) { ity = s:\"i32\", value = i:0 }\n"
    "    %3 : i32 = arith.constant (  ) { ity = s:\"i32\", value = i:1 }\n"
    "    %4 : f32 = arith.constant (  ) { ity = s:\"f32\", value = f:0.0 }\n"
    "    %5 : f32 = scf.for ( %2, %1, %3, %4 ) { elide_trailing_barrier = b:true, iter_args = l:[ { name = "
    "s:\"%7\", type = s:\"f32\" } ], iv = s:\"%6\", iv_type = s:\"i32\", num_iter_args = i:1, unroll = b:false }\n"
    "      region @body {\n"
    "        %8 : f32 = memref.global_load_typed ( %0, %6 ) { align = i:4, elem_type = s:\"f32\" }\n"
    "        %9 : f32 = arith.fadd ( %7, %8 )\n"
    "        scf.yield ( %9 ) { num = i:1 }\n"
    "      }\n"
    "    memref.global_store_typed ( %0, %2, %5 ) { align = i:1, elem_type = s:\"f32\" }\n"
    "  }\n"
    "}\n";

static rk_kernel *parse_ok(const char *text) {
    rk_kernel *k = NULL;
    rk_status s = rk_parse(text, strlen(text), &k);
    if (s != RK_OK) fprintf(stderr, "parse failed: %s\n", rk_error_message());
    assert_int_equal(s, RK_OK);
    assert_non_null(k);
    return k;
}

static char *canon_ok(const char *text) {
    char *c = NULL;
    rk_status s = rk_canonicalize(text, strlen(text), &c);
    if (s != RK_OK) fprintf(stderr, "canonicalize failed: %s\n", rk_error_message());
    assert_int_equal(s, RK_OK);
    return c;
}

static void test_reference_serialization(void **state) {
    (void)state;
    rk_kernel *k = corpus_rowsum();
    assert_non_null(k);
    char *s = rk_serialize(k);
    assert_string_equal(s, rowsum_ir);
    rk_string_free(s);
    rk_kernel_free(k);
}

static void test_reference_print(void **state) {
    (void)state;
    rk_kernel *k = corpus_rowsum();
    char *p = rk_print(k);
    assert_string_equal(p, rowsum_print);
    rk_string_free(p);
    rk_kernel_free(k);
    /* a parsed kernel prints the same */
    k = parse_ok(rowsum_ir);
    p = rk_print(k);
    assert_string_equal(p, rowsum_print);
    rk_string_free(p);
    rk_kernel_free(k);
}

static void test_parsed_structure(void **state) {
    (void)state;
    rk_kernel *k = parse_ok(rowsum_ir);
    char nb[RK_NAME_MAX];
    assert_string_equal(rk_kernel_name(k), "rowsum");
    assert_int_equal(rk_kernel_nparams(k), 2);
    const rk_param *X = rk_kernel_param(k, 0), *N = rk_kernel_param(k, 1);
    assert_string_equal(X->name, "X");
    assert_string_equal(rk_type_name(k, X->type), "ptr<f32,global>");
    assert_int_equal(rk_value_kind_of(k, X->value), RK_VK_PARAM);
    assert_true(rk_type_eq(N->type, RK_T_I32));
    rk_region *body = rk_kernel_body(k);
    assert_string_equal(body->label, "entry");
    assert_int_equal(body->nops, 5);
    rk_op *loop = body->ops[3];
    assert_int_equal(loop->code, RK_OP_FOR);
    assert_int_equal(loop->line, 11);
    assert_int_equal(loop->nin, 4);
    assert_int_equal(loop->nout, 1);
    assert_int_equal(loop->nreg, 1);
    assert_true(rk_value_eq(loop->in[1], N->value));
    assert_string_equal(rk_value_name(k, loop->out[0], nb), "for4");
    rk_region *lb = &loop->regions[0];
    assert_string_equal(lb->label, "body");
    assert_ptr_equal(lb->owner, loop);
    assert_int_equal(lb->nargs, 2);
    assert_string_equal(rk_value_name(k, lb->args[0], nb), "k0");
    assert_string_equal(rk_value_name(k, lb->args[1], nb), "acc");
    assert_int_equal(rk_value_kind_of(k, lb->args[1]), RK_VK_REGION_ARG);
    assert_true(rk_type_eq(rk_value_type(k, lb->args[0]), RK_T_I32));
    assert_true(rk_type_eq(rk_value_type(k, lb->args[1]), RK_T_F32));
    assert_int_equal(lb->nops, 3);
    assert_ptr_equal(lb->ops[0]->parent, lb);
    assert_true(rk_value_eq(lb->ops[0]->in[1], lb->args[0]));     /* %k0 */
    assert_true(rk_value_eq(lb->ops[1]->in[0], lb->args[1]));     /* %acc */
    assert_ptr_equal(rk_value_def(k, lb->ops[1]->out[0]), lb->ops[1]);
    int64_t v = -1;
    assert_true(rk_attrs_int(&body->ops[1]->attrs, "value", &v));
    assert_int_equal(v, 1);
    rk_diags d;
    rk_diags_init(&d);
    assert_int_equal(rk_verify(k, NULL, &d), RK_OK);
    assert_int_equal(d.nerrors, 0);
    rk_diags_free(&d);
    rk_kernel_free(k);
}

/* Every corpus kernel: serialize -> parse -> serialize is byte-identical,
 * the print of the parsed kernel equals the original's, the verifier says
 * the same about both, and canonicalization is idempotent. */
static void test_corpus_round_trip(void **state) {
    (void)state;
    for (unsigned i = 0; i < corpus_count; i++) {
        rk_kernel *k = corpus_kernels[i].build();
        assert_non_null(k);
        char *s1 = rk_serialize(k), *p1 = rk_print(k);
        rk_kernel *k2 = parse_ok(s1);
        char *s2 = rk_serialize(k2), *p2 = rk_print(k2);
        assert_string_equal(s1, s2);
        assert_string_equal(p1, p2);
        assert_int_equal(rk_kernel_op_count(k), rk_kernel_op_count(k2));
        rk_diags d1, d2;
        rk_diags_init(&d1);
        rk_diags_init(&d2);
        rk_verify(k, NULL, &d1);
        rk_verify(k2, NULL, &d2);
        assert_int_equal(d1.nerrors, d2.nerrors);
        assert_int_equal(d1.n, d2.n);
        rk_diags_free(&d1);
        rk_diags_free(&d2);
        char *c1 = canon_ok(s1), *c2 = canon_ok(c1);
        assert_string_equal(c1, c2);
        rk_string_free(c1);
        rk_string_free(c2);
        rk_string_free(s1);
        rk_string_free(s2);
        rk_string_free(p1);
        rk_string_free(p2);
        rk_kernel_free(k);
        rk_kernel_free(k2);
    }
}

static void test_canonicalize(void **state) {
    (void)state;
    char *c = canon_ok(rowsum_ir);
    assert_string_equal(c, rowsum_canon);
    rk_string_free(c);
    /* other names, @loc, comments, CRLF and unsorted keys: same canonical text */
    const char *renamed =
        "# a hand-edited copy\r\n"
        "ckdsl.ir v1\r\n"
        "kernel @rowsum {\r\n"
        "  params {\r\n"
        "    %src : ptr<f32,global>\r\n"
        "    %n : i32\r\n"
        "  }\r\n"
        "\r\n"
        "  region @entry {\r\n"
        "    %zero : i32 = arith.constant (  ) { value = i:0, ity = s:\"i32\" } @loc \"a.py:1\"\r\n"
        "    %one : i32 = arith.constant ( ) { ity = s:\"i32\", value = i:1 }\r\n"
        "    %fz : f32 = arith.constant() {ity=s:\"f32\",value=f:0.0}\r\n"
        "    %r : f32 = scf.for_iter ( %zero, %n, %one, %fz ) { unroll = b:false, iv = s:\"%i\", iv_type = s:\"i32\", "
        "num_iter_args = i:1, elide_trailing_barrier = b:true, iter_args = l:[ { type = s:\"f32\", name = s:\"%sum\" } ] }\r\n"
        "      region @body {\r\n"
        "        # comment inside a region\r\n"
        "        %x : f32 = memref.global_load_typed ( %src, %i ) { align = i:4, elem_type = s:\"f32\" }\r\n"
        "        %y : f32 = arith.fadd ( %sum, %x )\r\n"
        "        scf.yield ( %y ) { num = i:1 }\r\n"
        "      }\r\n"
        "    memref.global_store_typed ( %src, %zero, %r ) { align = i:1, elem_type = s:\"f32\" }\r\n"
        "  }\r\n"
        "}\r\n"
        "# >>> llvm gfx942\r\n"
        "define amdgpu_kernel void @rowsum() {\r\n"
        "}\r\n"
        "# <<<\r\n";
    c = canon_ok(renamed);
    assert_string_equal(c, rowsum_canon);
    rk_string_free(c);
    /* canonical text is itself a fixed point of serialize(parse()) */
    rk_kernel *k = parse_ok(rowsum_canon);
    char *s = rk_serialize(k);
    assert_string_equal(s, rowsum_canon);
    rk_string_free(s);
    rk_kernel_free(k);
}

static void test_loc_and_escapes(void **state) {
    (void)state;
    const char *text =
        "ckdsl.ir v1\n"
        "kernel @esc {\n"
        "  params {\n"
        "  }\n"
        "  region @entry {\n"
        "    tile.sync (  ) { note = s:\"a\\\\b\\\"c\\nd\\te\x01\" } @loc \"f \\\"x\\\".py:3\"\n"
        "  }\n"
        "}\n";
    rk_kernel *k = parse_ok(text);
    const rk_op *op = rk_kernel_body(k)->ops[0];
    assert_string_equal(op->loc, "f \"x\".py:3");
    assert_string_equal(rk_attrs_str(&op->attrs, "note"), "a\\b\"c\nd\te\x01");
    char *s = rk_serialize(k);
    assert_string_equal(s, text);
    rk_string_free(s);
    rk_kernel_free(k);
    char *c = canon_ok(text);
    assert_null(strstr(c, "@loc"));
    rk_string_free(c);
}

static void test_float_edges(void **state) {
    (void)state;
    const char *text =
        "ckdsl.ir v1\n"
        "kernel @floats {\n"
        "  params {\n"
        "  }\n"
        "  region @entry {\n"
        "    tile.sync (  ) { a = f:-0.0, b = f:5e-324, c = f:nan, d = f:-inf, e = f:1e+16, f = f:9999999999999998.0, "
        "g = f:0.1, h = f:1.7976931348623157e+308, i = f:1e-05, j = f:0.0001 }\n"
        "  }\n"
        "}\n";
    rk_kernel *k = parse_ok(text);
    const rk_attrs *a = &rk_kernel_body(k)->ops[0]->attrs;
    double v;
    assert_true(rk_attrs_num(a, "a", &v));
    assert_true(v == 0.0 && signbit(v));
    assert_true(rk_attrs_num(a, "b", &v));
    assert_true(v == 5e-324);
    assert_true(rk_attrs_num(a, "c", &v));
    assert_true(isnan(v));
    assert_true(rk_attrs_num(a, "d", &v));
    assert_true(isinf(v) && v < 0);
    assert_true(rk_attrs_num(a, "e", &v));
    assert_true(v == 1e16);
    assert_true(rk_attrs_num(a, "f", &v));
    assert_true(v == 9999999999999998.0);
    char *s = rk_serialize(k);
    assert_string_equal(s, text);
    rk_string_free(s);
    rk_kernel_free(k);
    /* lenient input forms normalize to repr */
    const char *loose =
        "ckdsl.ir v1\nkernel @floats {\n  params {\n  }\n  region @entry {\n"
        "    tile.sync (  ) { a = f:1, b = f:2.50E3, c = f:0.000010 }\n  }\n}\n";
    k = parse_ok(loose);
    s = rk_serialize(k);
    assert_non_null(strstr(s, "{ a = f:1.0, b = f:2500.0, c = f:1e-05 }"));
    rk_string_free(s);
    rk_kernel_free(k);
}

static void test_upstream_quirks(void **state) {
    (void)state;
    const char *text =
        "ckdsl.ir v1\n"
        "kernel @quirks {\n"
        "  params {\n"
        "    %P : ptr<f32,global>\n"
        "    %L : ptr<f16,shared>\n"
        "    %n : i32\n"
        "  }\n"
        "  region @entry {\n"
        "    %r : vec<i32x4> = tile.buffer_rsrc ( %P, %n )\n"
        "    %s : smem<f16,[4x8]> = tile.smem_alloc (  )\n"
        "    %v : vec<i32x4> = arith.constant_vec (  ) { elem = s:\"i32\", fill = i:0, vec = i:4 }\n"
        "  }\n"
        "}\n";
    rk_kernel *k = parse_ok(text);
    rk_region *b = rk_kernel_body(k);
    assert_true(rk_type_eq(rk_value_type(k, b->ops[0]->out[0]), RK_T_RSRC));
    assert_string_equal(rk_type_name(k, rk_value_type(k, b->ops[1]->out[0])), "smem<f16, [4x8]>");
    /* vec<i32x4> stays a vector everywhere else */
    assert_string_equal(rk_type_name(k, rk_value_type(k, b->ops[2]->out[0])), "vec<i32x4>");
    assert_string_equal(rk_type_name(k, rk_kernel_param(k, 1)->type), "ptr<f16,lds>");
    char *s = rk_serialize(k);
    assert_non_null(strstr(s, "%r : rsrc = tile.buffer_rsrc ( %P, %n )\n"));
    assert_non_null(strstr(s, "%L : ptr<f16,lds>\n"));
    rk_string_free(s);
    rk_kernel_free(k);
}

/* Names follow regions: a loop variable may be reused by a sibling loop, and
 * the builder numbers later values past every parsed numbered name. */
static void test_scopes_and_counter(void **state) {
    (void)state;
    rk_kernel *k = corpus_nested();
    char *s = rk_serialize(k);
    rk_kernel_free(k);
    k = parse_ok(s);
    rk_string_free(s);
    rk_region *b = rk_kernel_body(k);
    const rk_op *l1 = b->ops[4], *l2 = b->ops[5];
    char n1[RK_NAME_MAX], n2[RK_NAME_MAX];
    assert_string_equal(rk_value_name(k, l1->regions[0].args[0], n1), "k0");
    assert_string_equal(rk_value_name(k, l2->regions[0].args[0], n2), "k0");
    assert_false(rk_value_eq(l1->regions[0].args[0], l2->regions[0].args[0]));
    /* the sibling's store uses its own %k0 */
    assert_true(rk_value_eq(l2->regions[0].ops[0]->in[1], l2->regions[0].args[0]));
    rk_value c = rk_const_i32(k, 5);
    assert_string_equal(rk_value_name(k, c, n1), "c15");
    rk_kernel_free(k);
}

/* Names that share a trailing number (%x1, %y1, %1) or differ only in it
 * resolve to their own values, also after a region ends and a name is
 * reused. */
static void test_name_resolution(void **state) {
    (void)state;
    const char *text =
        "ckdsl.ir v1\n"
        "kernel @names {\n"
        "  params {\n"
        "    %1 : i32\n"
        "    %x : i32\n"
        "  }\n"
        "  region @entry {\n"
        "    %x1 : i32 = arith.add ( %1, %x )\n"                          /* op 0 */
        "    %y1 : i32 = arith.add ( %x1, %1 )\n"                         /* op 1 */
        "    %x11 : i32 = arith.add ( %y1, %x1 )\n"                       /* op 2 */
        "    scf.for ( %1, %x1, %y1 ) { iv = s:\"%x1b\", iv_type = s:\"i32\" }\n"
        "      region @body {\n"
        "        %z1 : i32 = arith.add ( %x1b, %y1 )\n"
        "        %w1 : i32 = arith.add ( %z1, %x11 )\n"
        "      }\n"
        "    %z1 : i32 = arith.add ( %x1, %y1 )\n"                        /* op 4: %z1 reused */
        "    %r : i32 = arith.add ( %z1, %x11 )\n"                        /* op 5 */
        "  }\n"
        "}\n";
    rk_kernel *k = parse_ok(text);
    rk_region *b = rk_kernel_body(k);
    rk_value p1 = rk_kernel_param(k, 0)->value, px = rk_kernel_param(k, 1)->value;
    rk_value x1 = b->ops[0]->out[0], y1 = b->ops[1]->out[0], x11 = b->ops[2]->out[0];
    assert_true(rk_value_eq(b->ops[0]->in[0], p1) && rk_value_eq(b->ops[0]->in[1], px));
    assert_true(rk_value_eq(b->ops[1]->in[0], x1) && rk_value_eq(b->ops[1]->in[1], p1));
    assert_true(rk_value_eq(b->ops[2]->in[0], y1) && rk_value_eq(b->ops[2]->in[1], x1));
    const rk_region *body = &b->ops[3]->regions[0];
    rk_value inner_z1 = body->ops[0]->out[0];
    assert_true(rk_value_eq(body->ops[0]->in[0], body->args[0]));
    assert_true(rk_value_eq(body->ops[1]->in[0], inner_z1) && rk_value_eq(body->ops[1]->in[1], x11));
    rk_value outer_z1 = b->ops[4]->out[0];
    assert_false(rk_value_eq(inner_z1, outer_z1));
    assert_true(rk_value_eq(b->ops[5]->in[0], outer_z1) && rk_value_eq(b->ops[5]->in[1], x11));
    char *s = rk_serialize(k);
    assert_string_equal(s, text);
    rk_string_free(s);
    rk_kernel_free(k);
}

/* ---- allocation failures: fail call N for N = 1, 2, ... until success ---- */
typedef struct fail_alloc { long countdown; bool failed; } fail_alloc;

static void *failing(void *ud, void *ptr, size_t osize, size_t nsize) {
    fail_alloc *f = ud;
    (void)osize;
    if (nsize == 0) { free(ptr); return NULL; }
    if (f->countdown-- == 0) { f->failed = true; return NULL; }
    return realloc(ptr, nsize);
}

static void test_out_of_memory(void **state) {
    (void)state;
    rk_kernel *src = corpus_every_attr();
    char *text = rk_serialize(src);
    rk_kernel_free(src);
    size_t len = strlen(text);
    bool parsed = false, canoned = false;
    for (long n = 0; (!parsed || !canoned) && n < 100000; n++) {
        fail_alloc f = {n, false};
        rk_set_allocator(failing, &f);
        rk_kernel *k = NULL;
        char *c = NULL, *s = NULL;
        rk_status ps = rk_parse(text, len, &k);
        if (ps == RK_OK) s = rk_serialize(k);
        f.countdown = n;
        rk_status cs = rk_canonicalize(text, len, &c);
        rk_set_allocator(NULL, NULL);
        if (ps == RK_OK) {
            assert_non_null(k);
            if (s) { assert_string_equal(s, text); parsed = true; }
        } else {
            assert_int_equal(ps, RK_ERR_NOMEM);
            assert_null(k);
        }
        if (cs == RK_OK) canoned = true;
        else assert_int_equal(cs, RK_ERR_NOMEM);
        rk_string_free(s);
        rk_string_free(c);
        rk_kernel_free(k);
    }
    assert_true(parsed && canoned);
    rk_string_free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_serialization),
        cmocka_unit_test(test_reference_print),
        cmocka_unit_test(test_parsed_structure),
        cmocka_unit_test(test_corpus_round_trip),
        cmocka_unit_test(test_canonicalize),
        cmocka_unit_test(test_loc_and_escapes),
        cmocka_unit_test(test_float_edges),
        cmocka_unit_test(test_upstream_quirks),
        cmocka_unit_test(test_scopes_and_counter),
        cmocka_unit_test(test_name_resolution),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
