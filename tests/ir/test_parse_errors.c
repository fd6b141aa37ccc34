/* rocke tests — malformed ckdsl.ir v1: one row per mistake, each rejected
 * with RK_ERR_PARSE, no kernel, and a message starting "LINE:COL: " that
 * holds the expected fragment. Set ROCKE_WRITE_CORPUS=DIR to write every
 * row's text there (seeds for the fuzz corpus). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/ir.h"

/* Lines 1-7; body lines start at line 8. */
#define HEAD "ckdsl.ir v1\nkernel @k {\n  params {\n    %X : ptr<f32,global>\n    %N : i32\n  }\n  region @entry {\n"
#define TAIL "  }\n}\n"
#define BODY(lines) HEAD lines TAIL

typedef struct bad {
    const char *text;
    const char *where;      /* "LINE:COL" */
    const char *fragment;
} bad;

static const bad rows[] = {
    /* header and kernel line */
    {"", "1:1", "unexpected end of input: expected the header 'ckdsl.ir v1'"},
    {"ckdsl.ir v2\nkernel @k {\n", "1:10", "unsupported ckdsl.ir version 'v2' (this reader understands v1)"},
    {"ckdsl.irv1\n", "1:1", "expected the header 'ckdsl.ir v1', found 'ckdsl.irv1'"},
    {"ckdsl.ir v1 extra\n", "1:13", "expected end of line after the header, found 'extra'"},
    {"ckdsl.ir v1\n", "1:12", "unexpected end of input: expected 'kernel @NAME {'"},
    {"ckdsl.ir v1\nkernal @k {\n", "2:1", "expected 'kernel @NAME {', found 'kernal'"},
    {"ckdsl.ir v1\nkernel @1k {\n", "2:9", "kernel name '1k' must not start with a digit"},
    {"ckdsl.ir v1\nkernel @k\n", "2:10", "expected '{' after the kernel name, found end of line"},
    {"ckdsl.ir v1\nkernel @k {\n  region @entry {\n", "3:3", "expected 'params {', found 'region'"},
    {"ckdsl.ir v1\nkernel @k {\n  attrs { a = i:1, a = i:2 }\n", "3:20", "duplicate attribute 'a'"},
    /* params */
    {"ckdsl.ir v1\nkernel @k {\n  params {\n    %X :\n", "4:9", "expected a type, found end of line"},
    {"ckdsl.ir v1\nkernel @k {\n  params {\n    %X : i32\n    %X : i32\n", "5:5", "%X is already defined (line 4)"},
    {"ckdsl.ir v1\nkernel @k {\n  params {\n    %X : vec<f32x4>\n", "4:10",
     "parameter %X has type vec<f32x4>; parameters are scalars or pointers"},
    {"ckdsl.ir v1\nkernel @k {\n  params {\n    %X : f33\n", "4:10", "malformed type 'f33' (expected a scalar such as i32 or f16"},
    {"ckdsl.ir v1\nkernel @k {\n  params {\n    %X : ptr<f32,global\n", "4:10", "unterminated type (missing '>')"},
    {"ckdsl.ir v1\nkernel @k {\n  params {\n    X : i32\n", "4:5",
     "expected a parameter '%name : TYPE' or '}', found 'X'"},
    {"ckdsl.ir v1\nkernel @k {\n  params {\n  }\n  region @body {\n", "5:11",
     "expected the kernel body 'region @entry {', found 'body'"},
    /* op lines */
    {BODY("    %c1 : i32 = arith.constnt (  )\n"), "8:17", "unknown op 'arith.constnt' (did you mean 'arith.constant'?)"},
    {BODY("    %a : i32 = arith.addd ( %N, %N )\n"), "8:16", "unknown op 'arith.addd' (did you mean 'arith.add'?)"},
    {BODY("    %a : i32 = frobnicate ( %N, %N )\n"), "8:16", "unknown op 'frobnicate'"},
    {BODY("    %a : i32 = arith.add %N, %N\n"), "8:26", "expected '(' after the op name, found '%N'"},
    {BODY("    %a : i32 = arith.add ( %N %N )\n"), "8:31", "expected ',' or ')' after operand, found '%N'"},
    {BODY("    %a : i32 = arith.add ( %N, %zz )\n"), "8:32", "undefined value %zz"},
    {BODY("    %a : i32 = arith.add ( 1, %N )\n"), "8:28", "expected an operand '%name', found '1'"},
    {BODY("    %a : i32 = arith.add ( %N, %N )\n    %a : i32 = arith.add ( %N, %N )\n"), "9:5",
     "%a is already defined (line 8)"},
    {BODY("    %N : i32 = arith.add ( %N, %N )\n"), "8:5", "%N is already defined (line 5)"},
    {BODY("    %a : i32, %a : i32 = tile.permlane32_swap ( %N, %N )\n"), "8:15", "%a is defined twice on this line"},
    {BODY("    %a : i32 arith.add ( %N, %N )\n"), "8:14", "expected ',' or '=' after result type, found 'arith.add'"},
    {BODY("    % : i32 = arith.add ( %N, %N )\n"), "8:6", "expected a result name after '%', found a space"},
    {BODY("    %a : vec<f32x0> = arith.constant (  )\n"), "8:10", "bad type 'vec<f32x0>'"},
    {BODY("    %a : ptr<ptr<ptr<ptr<ptr<f32,global>,global>,global>,global>,global> = arith.constant (  )\n"), "8:10",
     "type nests deeper than 4 levels"},
    {BODY("    !!\n"), "8:5", "expected an op, 'region @LABEL {' or '}', found '!'"},
    {BODY("    tile.sync (  ) junk\n"), "8:20", "expected end of line after the op, found 'junk'"},
    {BODY("    tile.sync (  ) @loc\n"), "8:24", "expected a string \"...\", found end of line"},
    {BODY("    tile.sync (  ) @where \"x\"\n"), "8:20", "expected '@loc \"...\"' or end of line after the op"},
    {BODY("    tile.sync (  ) { a = i:1 } { b = i:2 }\n"), "8:32", "expected end of line after the op, found '{'"},
    /* attribute values */
    {BODY("    tile.sync (  ) { x = 3 }\n"), "8:26", "expected a tagged value (b:, i:, f:, s:\"...\", l:[...]) or a {...} map, found '3'"},
    {BODY("    tile.sync (  ) { x = b:yes }\n"), "8:28", "expected true or false after 'b:', found 'yes'"},
    {BODY("    tile.sync (  ) { x = i:9223372036854775808 }\n"), "8:28", "integer literal out of range"},
    {BODY("    tile.sync (  ) { x = i:-9223372036854775809 }\n"), "8:28", "integer literal out of range"},
    {BODY("    tile.sync (  ) { x = i:12ab }\n"), "8:28", "malformed integer literal '12ab'"},
    {BODY("    tile.sync (  ) { x = i: }\n"), "8:28", "expected digits after 'i:', found a space"},
    {BODY("    tile.sync (  ) { x = f:1. }\n"), "8:28", "malformed float literal (digits must follow '.')"},
    {BODY("    tile.sync (  ) { x = f:1e }\n"), "8:28", "malformed float literal (digits must follow 'e')"},
    {BODY("    tile.sync (  ) { x = f:0x10 }\n"), "8:28", "malformed float literal '0x10'"},
    {BODY("    tile.sync (  ) { x = f:infinity }\n"), "8:28", "expected a number, nan or inf after 'f:', found 'infinity'"},
    {BODY("    tile.sync (  ) { x = s:\"a\\qb\" }\n"), "8:30", "unknown escape '\\q' in string"},
    {BODY("    tile.sync (  ) { x = s:\"abc }\n"), "8:28", "unterminated string (no closing '\"' on this line)"},
    {BODY("    tile.sync (  ) { x = s:abc }\n"), "8:28", "expected '\"' after 's:', found 'abc'"},
    {BODY("    tile.sync (  ) { x = l:[ i:1 i:2 ] }\n"), "8:34", "expected ',' or ']' after list item, found 'i'"},
    {BODY("    tile.sync (  ) { x = l: i:1 }\n"), "8:28", "expected '[' after 'l:', found a space"},
    {BODY("    tile.sync (  ) { x i:1 }\n"), "8:24", "expected '=' after attribute name 'x', found 'i'"},
    {BODY("    tile.sync (  ) { x = i:1 y = i:2 }\n"), "8:30", "expected ',' or '}' after attribute 'x', found 'y'"},
    {BODY("    tile.sync (  ) { = i:1 }\n"), "8:22", "expected an attribute name, found '='"},
    {BODY("    tile.sync (  ) { b = i:1, a = i:2, b = i:3 }\n"), "8:40", "duplicate attribute 'b'"},
    {BODY("    tile.sync (  ) { m = l:[ { k = i:1, k = i:2 } ] }\n"), "8:41", "duplicate attribute 'k'"},
    {BODY("    tile.sync (  ) { x = l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ "
          "l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ l:[ i:1 ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] "
          "] ] ] ] ] ] ] ] }\n"),
     "8:158", "attribute values nest deeper than 32 levels"},
    /* regions and scopes */
    {BODY("    region @body {\n    }\n"), "8:5", "region @body does not follow an op"},
    {BODY("    %a : i32 = arith.add ( %N, %N )\n    region @body {\n    }\n"), "9:5",
     "op 'arith.add' (line 8) has no regions"},
    {BODY("    %c : i1 = arith.cmp ( %N, %N ) { pred = s:\"lt\" }\n    scf.if ( %c )\n      region @then {\n      }\n"
          "      region @else {\n      }\n"),
     "12:7", "op 'scf.if' (line 9) takes 1 region; this would be region 2"},
    {BODY("    %c : i1 = arith.cmp ( %N, %N ) { pred = s:\"lt\" }\n    scf.if ( %c )\n      region @then {\n"
          "        %x : i32 = arith.add ( %N, %N )\n      }\n    %y : i32 = arith.add ( %x, %N )\n"),
     "13:28", "%x is not visible here: it was defined at line 11 inside a region that has ended"},
    {BODY("    %c : i1 = arith.cmp ( %N, %N ) { pred = s:\"lt\" }\n"
          "    %r : i32 = scf.if_else ( %c )\n      region @then {\n        scf.yield ( %r ) { num = i:1 }\n      }\n"),
     "11:21", "%r is a result of the op at line 9 and cannot be used inside that op's regions"},
    {BODY("    scf.for ( %N, %N, %N )\n"), "8:5", "scf.for needs attribute iv naming its loop variable"},
    {BODY("    scf.for ( %N, %N, %N ) { iv = s:\"k0\" }\n"), "8:30", "attribute iv must name the loop variable as s:\"%NAME\""},
    {BODY("    scf.for ( %N, %N, %N ) { iv = s:\"%k0\", iv_type = s:\"int\" }\n"), "8:44",
     "attribute iv_type must be a type name such as s:\"i32\""},
    {BODY("    scf.for ( %N, %N, %N ) { iter_args = l:[ i:1 ], iv = s:\"%k0\" }\n"), "8:30",
     "iter_args item 0 must be { name = s:\"%NAME\", type = s:\"TYPE\" }"},
    {BODY("    scf.for ( %N, %N, %N ) { iter_args = s:\"x\", iv = s:\"%k0\" }\n"), "8:30",
     "attribute iter_args must be a list"},
    {BODY("    scf.for (  ) { iv = s:\"%k0\" }\n"), "8:5", "scf.for needs attribute iv_type or a lower-bound operand"},
    {BODY("    scf.for ( %N, %N, %N ) { iv = s:\"%N\" }\n      region @body {\n      }\n"), "9:7",
     "scf.for at line 8: loop variable %N is already defined (line 5)"},
    {BODY("    region\n"), "8:11", "expected '@' before the region label, found end of line"},
    {BODY("    scf.if ( %N )\n      region @ {\n"), "9:15", "expected a region label after '@', found a space"},
    {HEAD "    tile.sync (  )\n", "8:19", "unexpected end of input: expected '}' closing region @entry opened at line 7"},
    {HEAD "  }\n", "8:4", "unexpected end of input: expected '}' closing kernel @k"},
    {HEAD "  }\n  ]\n", "9:3", "expected '}' closing kernel @k, found ']'"},
    {BODY("") "kernel @again {\n", "10:1", "unexpected text after the end of kernel @k: 'kernel'"},
    {BODY("    } }\n"), "8:7", "expected end of line after '}', found '}'"},
    {BODY("    tile.sync (  ) { x = i:1\n"), "8:29", "expected ',' or '}' after attribute 'x', found end of line"},
    {BODY("    tile.sync (  ) { x = f:1.00000000000000000000000000000000000000000000000000000000000000000000000000000"
          "000000000000000000000000000000000000000000000000000000000000000 }\n"),
     "8:28", "float literal longer than 127 characters"},
};

/* A NUL byte cannot sit in a C string literal row: built by hand. */
static void test_nul_byte(void **state) {
    (void)state;
    const char text[] = BODY("    tile.sync (  ) { x = s:\"a\0b\" }\n");
    rk_kernel *k = (rk_kernel *)1;
    assert_int_equal(rk_parse(text, sizeof text - 1, &k), RK_ERR_PARSE);
    assert_null(k);
    assert_string_equal(rk_error_message(), "8:30: NUL byte in the input");
}

static void test_rows(void **state) {
    (void)state;
    const char *dir = getenv("ROCKE_WRITE_CORPUS");
    unsigned failures = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const bad *r = &rows[i];
        rk_kernel *k = (rk_kernel *)1;
        rk_status s = rk_parse(r->text, strlen(r->text), &k);
        const char *msg = rk_error_message();
        size_t wl = strlen(r->where);
        bool ok = s == RK_ERR_PARSE && k == NULL && strncmp(msg, r->where, wl) == 0 && msg[wl] == ':' &&
                  msg[wl + 1] == ' ' && strstr(msg, r->fragment) != NULL;
        if (!ok) {
            fprintf(stderr, "row %zu: status %d, message \"%s\"\n  expected \"%s: ...%s...\"\n", i, (int)s, msg,
                    r->where, r->fragment);
            failures++;
        }
        if (s == RK_OK) rk_kernel_free(k);
        /* canonicalize reports the same error */
        char *c = (char *)1;
        assert_int_equal(rk_canonicalize(r->text, strlen(r->text), &c), RK_ERR_PARSE);
        assert_null(c);
        if (dir) {
            char path[4096];
            snprintf(path, sizeof path, "%s/error_%03zu.ir", dir, i);
            FILE *f = fopen(path, "wb");
            if (f) { fwrite(r->text, 1, strlen(r->text), f); fclose(f); }
        }
    }
    assert_int_equal(failures, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_nul_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
