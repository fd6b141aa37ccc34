/* rocke tests — the strict JSON reader/writer: values, escapes and UTF-8,
 * numbers, nesting limit, a table of malformed inputs each with its expected
 * message fragment, and write -> parse round trips. */
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
#include "rocke/manifest.h"

static rk_json *parse(const char *s) { return rk_json_parse(s, strlen(s)); }

static void test_values(void **state) {
    (void)state;
    rk_json *j = parse(" {\"a\": [1, -2.5, 1e3, true, false, null, \"x\"], \"b\": {}, \"c\": []} ");
    assert_non_null(j);
    assert_int_equal(j->kind, RK_JSON_OBJECT);
    const rk_json *a = rk_json_get(j, "a");
    assert_non_null(a);
    assert_int_equal(a->n, 7);
    assert_true(a->items[0]->is_int);
    assert_int_equal(a->items[0]->i, 1);
    assert_false(a->items[1]->is_int);
    assert_true(a->items[1]->num == -2.5);
    assert_false(a->items[2]->is_int);
    assert_true(a->items[2]->num == 1000.0);
    assert_true(a->items[3]->b);
    assert_false(a->items[4]->b);
    assert_int_equal(a->items[5]->kind, RK_JSON_NULL);
    assert_string_equal(a->items[6]->str, "x");
    assert_int_equal(rk_json_get(j, "b")->n, 0);
    assert_null(rk_json_get(j, "missing"));
    rk_json_free(j);
}

static void test_strings(void **state) {
    (void)state;
    rk_json *j = parse("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t \\u00e9 \\ud83d\\ude00 \xe2\x82\xac\"");
    assert_non_null(j);
    assert_string_equal(j->str, "q\" b\\ s/ \b\f\n\r\t \xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac");
    char *w = rk_json_write(j, false);
    rk_json *k = parse(w);
    assert_non_null(k);
    assert_string_equal(k->str, j->str);
    rk_string_free(w);
    rk_json_free(j);
    rk_json_free(k);
}

static void test_numbers(void **state) {
    (void)state;
    const char *ok[] = {"0", "-0", "12", "-12", "0.5", "1e5", "1E-5", "-1.25e+2", "9223372036854775807",
                        "9223372036854775808", "1.7976931348623157e308", "5e-324"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        rk_json *j = parse(ok[i]);
        assert_non_null(j);
        assert_true(j->num == strtod(ok[i], NULL));
        char *w = rk_json_write(j, false);
        rk_json *k = parse(w);
        assert_non_null(k);
        assert_true(k->num == j->num);
        rk_string_free(w);
        rk_json_free(j);
        rk_json_free(k);
    }
    rk_json *big = parse("9223372036854775808");
    assert_false(big->is_int);     /* beyond int64: a double */
    rk_json_free(big);
}

/* one row per malformed input: the message must name the problem */
static void test_bad_inputs(void **state) {
    (void)state;
    static const struct { const char *text; const char *frag; } rows[] = {
        {"", "end of input"},
        {"{", "object key"},
        {"[1,]", "trailing comma"},
        {"{\"a\":1,}", "trailing comma"},
        {"{\"a\" 1}", "':' expected"},
        {"{\"a\":1 \"b\":2}", "',' or '}'"},
        {"[1 2]", "',' or ']'"},
        {"{\"a\":1,\"a\":2}", "duplicate"},
        {"01", "leading zero"},
        {"1.", "after '.'"},
        {"1e", "exponent"},
        {"-", "malformed number"},
        {"1e999", "out of range"},
        {"NaN", "value expected"},
        {"\"abc", "unterminated string"},
        {"\"a\nb\"", "control character"},
        {"\"\\x\"", "unknown escape"},
        {"\"\\u12\"", "four hex"},
        {"\"\\ud800\"", "low surrogate"},
        {"\"\\udc00\"", "lone low"},
        {"\"\\u0000\"", "\\u0000"},
        {"\"\xff\"", "UTF-8"},
        {"\"\xc0\xaf\"", "UTF-8"},
        {"\"\xed\xa0\x80\"", "UTF-8"},
        {"\"\xf4\x90\x80\x80\"", "UTF-8"},
        {"tru", "value expected"},
        {"// c\n1", "value expected"},
        {"1 2", "after the value"},
        {"{} x", "after the value"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        rk_json *j = parse(rows[i].text);
        if (j || !strstr(rk_error_message(), rows[i].frag))
            fail_msg("row %zu '%s': expected failure with '%s', got %s", i, rows[i].text, rows[i].frag,
                     j ? "success" : rk_error_message());
        assert_non_null(strstr(rk_error_message(), "line 1"));
    }
}

static void test_depth(void **state) {
    (void)state;
    char deep[200];
    for (int n = 63; n <= 65; n++) {
        memset(deep, '[', (size_t)n);
        memset(deep + n, ']', (size_t)n);
        deep[2 * n] = 0;
        rk_json *j = parse(deep);
        if (n <= RK_JSON_MAX_DEPTH) assert_non_null(j);
        else {
            assert_null(j);
            assert_non_null(strstr(rk_error_message(), "nesting"));
        }
        rk_json_free(j);
    }
}

static void test_build_and_write(void **state) {
    (void)state;
    rk_json *o = rk_json_object();
    assert_true(rk_json_set(o, "z", rk_json_int(-3)));
    assert_true(rk_json_set(o, "a", rk_json_str("tab\there")));
    rk_json *arr = rk_json_array();
    assert_true(rk_json_push(arr, rk_json_num(0.1)));
    assert_true(rk_json_push(arr, rk_json_bool(true)));
    assert_true(rk_json_push(arr, rk_json_null()));
    assert_true(rk_json_set(o, "list", arr));
    assert_true(rk_json_set(o, "empty", rk_json_object()));
    assert_true(rk_json_set(o, "z", rk_json_int(7)));   /* replaces, keeps position */
    char *w = rk_json_write(o, true);
    assert_string_equal(w, "{\n  \"z\": 7,\n  \"a\": \"tab\\there\",\n  \"list\": [\n    0.1,\n    true,\n"
                           "    null\n  ],\n  \"empty\": {}\n}\n");
    rk_json *back = parse(w);
    assert_non_null(back);
    char *w2 = rk_json_write(back, true);
    assert_string_equal(w, w2);
    rk_string_free(w);
    rk_string_free(w2);
    rk_json_free(back);
    rk_json *inf = rk_json_num(INFINITY);
    assert_null(rk_json_write(inf, false));
    rk_json_free(inf);
    rk_json_free(o);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),      cmocka_unit_test(test_strings), cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_bad_inputs),  cmocka_unit_test(test_depth),   cmocka_unit_test(test_build_and_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
