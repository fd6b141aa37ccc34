/* rocke tests — the builder's and parser's fast paths say what the slow ones
 * said: attribute keys and enum values taken from caller buffers, the type
 * memo against the by-name table, value tables past their first growths, and
 * parsed names that share numbers, exceed the number index or are reused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ir/ir_int.h"

/* Keys and string values may come from buffers the caller reuses: the op
 * must keep its own copies (or the op table's), never the caller's bytes. */
static void test_attr_keys_from_buffers(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("keys");
    rk_value n = rk_add_param(k, "N", RK_T_I32, NULL);
    const rk_value in[] = {n, n};
    rk_type i32 = RK_T_I32, i1 = RK_T_I1;
    rk_op *add = rk_emit(k, RK_OP_ADD, in, 2, &i32, 1);
    char key[32];
    snprintf(key, sizeof key, "%s", "my_note");              /* not in the spec */
    rk_op_set_int(k, add, key, 7);
    snprintf(key, sizeof key, "%s", "xxxxxxx");
    int64_t v = 0;
    assert_true(rk_attrs_int(&add->attrs, "my_note", &v));
    assert_int_equal(v, 7);
    rk_op_set_int(k, add, "my_note", 9);                      /* overwrites, no second entry */
    assert_int_equal(add->attrs.n, 1);
    assert_true(rk_attrs_int(&add->attrs, "my_note", &v));
    assert_int_equal(v, 9);
    for (int i = 0; i < 12; i++) {                            /* past any preallocated room */
        snprintf(key, sizeof key, "extra%d", i);
        rk_op_set_int(k, add, key, i);
    }
    for (int i = 0; i < 12; i++) {
        snprintf(key, sizeof key, "extra%d", i);
        assert_true(rk_attrs_int(&add->attrs, key, &v));
        assert_int_equal(v, i);
    }
    assert_true(rk_op_check(k, add));

    /* a spec key and an enum value from buffers */
    rk_op *cmp = rk_emit(k, RK_OP_CMP, in, 2, &i1, 1);
    char pkey[8], pred[8];
    snprintf(pkey, sizeof pkey, "%s", "pred");
    snprintf(pred, sizeof pred, "%s", "lt");
    rk_op_set_str(k, cmp, pkey, pred);
    snprintf(pkey, sizeof pkey, "%s", "zzzz");
    snprintf(pred, sizeof pred, "%s", "qq");
    assert_string_equal(rk_attrs_str(&cmp->attrs, "pred"), "lt");
    assert_true(rk_op_check(k, cmp));
    assert_int_equal(rk_kernel_finish(k), RK_OK);

    /* the builder still rejects a value outside the enumeration, by name */
    rk_value c = rk_build_cmp(k, "lq", n, n);
    assert_false(rk_value_ok(c));
    assert_int_equal(rk_builder_status(k), RK_ERR_INVALID);
    assert_non_null(strstr(rk_builder_error(k), "attribute 'pred' = lq is not one of: lt, le"));
    rk_kernel_free(k);
}

/* A non-string value for a string attribute, and a missing required one,
 * are still caught when the key came through the shared-key path. */
static void test_attr_errors_by_shared_key(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("keys2");
    rk_value n = rk_add_param(k, "N", RK_T_I32, NULL);
    const rk_value in[] = {n, n};
    rk_type i1 = RK_T_I1;
    rk_op *cmp = rk_emit(k, RK_OP_CMP, in, 2, &i1, 1);
    rk_op_set_int(k, cmp, "pred", 3);
    assert_false(rk_op_check(k, cmp));
    assert_non_null(strstr(rk_builder_error(k), "attribute 'pred' must be a string"));
    rk_kernel_free(k);

    k = rk_kernel_new("keys3");
    rk_type i32 = RK_T_I32;
    rk_op *c = rk_emit(k, RK_OP_CONSTANT, NULL, 0, &i32, 1);
    rk_op_set_type(k, c, "ity", RK_T_I32);
    assert_false(rk_op_check(k, c));
    assert_non_null(strstr(rk_builder_error(k), "missing required attribute 'value'"));
    rk_kernel_free(k);
}

/* The vec/ptr memo has 64 slots: ask for many more types than that, twice,
 * and compare every answer with the by-name table (rk_type_parse). */
static void test_type_memo(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("memo");
    for (int pass = 0; pass < 2; pass++)
        for (int s = 1; s < RK_S__COUNT; s++)
            for (uint32_t lanes = 1; lanes <= 40; lanes++) {
                rk_type v = rk_type_vec(k, (rk_type){(uint32_t)s}, lanes);
                char name[48];
                snprintf(name, sizeof name, "vec<%sx%u>", rk_scalar_name((rk_scalar)s), lanes);
                assert_string_equal(rk_type_name(k, v), name);
                assert_true(rk_type_eq(v, rk_type_parse(k, name)));
                assert_int_equal(rk_type_count(k, v), lanes);
                assert_int_equal(rk_type_bits(k, v), lanes * rk_scalar_bits((rk_scalar)s));
                for (int as = 0; as < RK_AS__COUNT; as++) {
                    rk_type p = rk_type_ptr(k, lanes == 1 ? (rk_type){(uint32_t)s} : v, (rk_addrspace)as);
                    char pname[96];
                    snprintf(pname, sizeof pname, "ptr<%s,%s>", lanes == 1 ? rk_scalar_name((rk_scalar)s) : name,
                             rk_addrspace_name((rk_addrspace)as));
                    assert_string_equal(rk_type_name(k, p), pname);
                    assert_true(rk_type_eq(p, rk_type_parse(k, pname)));
                }
            }
    /* the bad inputs still fail, memo or not */
    assert_false(rk_type_ok(rk_type_vec(k, RK_T_F32, 0)));
    assert_false(rk_type_ok(rk_type_vec(k, RK_T_F32, 4097)));
    assert_false(rk_type_ok(rk_type_ptr(k, RK_T_F32, RK_AS__COUNT)));
    rk_kernel_free(k);
}

/* Enough values to grow the value table many times: every result keeps its
 * type, producer and name through the moves. */
static void test_value_table_growth(void **state) {
    (void)state;
    enum { N = 70000 };
    rk_kernel *k = rk_kernel_new("grow");
    rk_value x = rk_add_param(k, "X", RK_T_I64, NULL);
    rk_value a = x;
    for (int i = 0; i < N; i++) a = rk_build_add(k, a, x);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_kernel_nvalues(k), N + 1);
    const rk_region *body = rk_kernel_body(k);
    assert_int_equal(body->nops, N);
    for (uint32_t i = 0; i < body->nops; i++) {
        const rk_op *op = body->ops[i];
        assert_true(rk_value_def(k, op->out[0]) == op);
        assert_true(rk_type_eq(rk_value_type(k, op->out[0]), RK_T_I64));
    }
    char nb[RK_NAME_MAX];
    assert_string_equal(rk_value_name(k, a, nb), "add70000");
    rk_diags d;
    rk_diags_init(&d);
    assert_int_equal(rk_verify(k, NULL, &d), RK_OK);
    rk_diags_free(&d);
    rk_kernel_free(k);
}

/* Parsed names: two names ending in the same number, a name past the number
 * index, one of nine digits, and names reused by a sibling loop; the parse
 * must bind each use to the right value (and the text round-trips). */
static const char names_ir[] =
    "ckdsl.ir v1\n"
    "kernel @names {\n"
    "  params {\n"
    "    %X : ptr<i32,global>\n"
    "    %N : i32\n"
    "  }\n"
    "  region @entry {\n"
    "    %x5 : i32 = arith.constant (  ) { ity = s:\"i32\", value = i:1 }\n"
    "    %y5 : i32 = arith.constant (  ) { ity = s:\"i32\", value = i:2 }\n"
    "    %w99999999 : i32 = arith.add ( %y5, %x5 )\n"
    "    %v123456789 : i32 = arith.sub ( %w99999999, %y5 )\n"
    "    %z0 : i32 = arith.constant (  ) { ity = s:\"i32\", value = i:0 }\n"
    "    scf.for ( %z0, %N, %x5 ) { iv = s:\"%k7\", iv_type = s:\"i32\" }\n"
    "      region @body {\n"
    "        %t : i32 = arith.mul ( %k7, %v123456789 )\n"
    "        memref.global_store_typed ( %X, %k7, %t ) { align = i:4, elem_type = s:\"i32\" }\n"
    "      }\n"
    "    scf.for ( %z0, %N, %y5 ) { iv = s:\"%k7\", iv_type = s:\"i32\" }\n"
    "      region @body {\n"
    "        %t : i32 = arith.add ( %k7, %x5 )\n"
    "        memref.global_store_typed ( %X, %k7, %t ) { align = i:4, elem_type = s:\"i32\" }\n"
    "      }\n"
    "  }\n"
    "}\n";

static void test_parse_names(void **state) {
    (void)state;
    rk_kernel *k = NULL;
    rk_status s = rk_parse(names_ir, strlen(names_ir), &k);
    if (s != RK_OK) fprintf(stderr, "%s\n", rk_error_message());
    assert_int_equal(s, RK_OK);
    char *text = rk_serialize(k);
    assert_string_equal(text, names_ir);
    rk_string_free(text);
    /* %w99999999 = %y5 + %x5: the operands are the two constants, in order */
    const rk_region *body = rk_kernel_body(k);
    const rk_op *w = body->ops[2];
    char nb[RK_NAME_MAX];
    assert_string_equal(rk_value_name(k, w->in[0], nb), "y5");
    assert_string_equal(rk_value_name(k, w->in[1], nb), "x5");
    assert_true(rk_value_def(k, w->in[0]) == body->ops[1]);
    assert_true(rk_value_def(k, w->in[1]) == body->ops[0]);
    /* each loop's %k7 and %t are its own (rk_verify would object to the
     * reuse; the parser allows it) */
    for (uint32_t i = 5; i <= 6; i++) {
        const rk_op *loop = body->ops[i];
        const rk_region *lb = &loop->regions[0];
        assert_int_equal(loop->code, RK_OP_FOR);
        assert_true(rk_value_eq(lb->ops[0]->in[0], lb->args[0]));
        assert_true(rk_value_eq(lb->ops[1]->in[1], lb->args[0]));
        assert_true(rk_value_eq(lb->ops[1]->in[2], lb->ops[0]->out[0]));
    }
    rk_kernel_free(k);

    /* a live name defined twice is still an error, whichever table finds it */
    static const char twice[] =
        "ckdsl.ir v1\nkernel @k {\n  params {\n    %N : i32\n  }\n  region @entry {\n"
        "    %y5 : i32 = arith.add ( %N, %N )\n"
        "    %x5 : i32 = arith.add ( %N, %N )\n"
        "    %y5 : i32 = arith.add ( %N, %N )\n  }\n}\n";
    assert_int_equal(rk_parse(twice, strlen(twice), &k), RK_ERR_PARSE);
    assert_non_null(strstr(rk_error_message(), "%y5 is already defined (line 7)"));
    static const char undefined[] =
        "ckdsl.ir v1\nkernel @k {\n  params {\n    %N : i32\n  }\n  region @entry {\n"
        "    %x5 : i32 = arith.add ( %N, %N )\n"
        "    %y6 : i32 = arith.add ( %y5, %N )\n  }\n}\n";
    assert_int_equal(rk_parse(undefined, strlen(undefined), &k), RK_ERR_PARSE);
    assert_non_null(strstr(rk_error_message(), "undefined value %y5"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attr_keys_from_buffers),
        cmocka_unit_test(test_attr_errors_by_shared_key),
        cmocka_unit_test(test_type_memo),
        cmocka_unit_test(test_value_table_growth),
        cmocka_unit_test(test_parse_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
