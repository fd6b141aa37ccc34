/* rocke tests — fold, CSE and DCE keep semantics: random integer kernels run
 * through a small reference interpreter (LLVM semantics, poison included)
 * before and after rk_optimize; folded constants against host math; every
 * side effect survives in order; convergent ops stay apart across regions;
 * dominance-correct CSE; the fixed point and the round cap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <float.h>
#include <cmocka.h>

#include "ir/ir_int.h"
#include "support/op_samples.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void assert_verifies(const rk_kernel *k) {
    rk_diags d;
    rk_diags_init(&d);
    rk_status st = rk_verify(k, NULL, &d);
    if (st != RK_OK || d.nerrors) {
        char *t = rk_diags_text(&d);
        fprintf(stderr, "kernel '%s' does not verify:\n%s", rk_kernel_name(k), t);
        rk_string_free(t);
    }
    assert_int_equal(st, RK_OK);
    rk_diags_free(&d);
}

/* ---- a reference interpreter for scalar integer kernels -------------------------------- */
typedef struct ival { uint64_t u; bool poison; } ival;

enum { NOUT = 256 };
typedef struct interp {
    const rk_kernel *k;
    ival *v;                          /* per value id */
    ival out[2][NOUT];                /* o32 and o64 */
    bool written[2][NOUT];
} interp;

static uint64_t umask(uint32_t b) { return b >= 64 ? ~0ull : (1ull << b) - 1; }
/* two's complement value of the low b bits, computed without shifts of negatives */
static __int128 sval(uint64_t u, uint32_t b) {
    u &= umask(b);
    if (b < 64 && (u >> (b - 1)) & 1) return (__int128)u - ((__int128)1 << b);
    if (b == 64 && (u >> 63)) return (__int128)u - ((__int128)1 << 64);
    return (__int128)u;
}
static bool sfits(__int128 r, uint32_t b) {
    __int128 lo = -((__int128)1 << (b - 1)), hi = ((__int128)1 << (b - 1)) - 1;
    return r >= lo && r <= hi;
}

static uint32_t bits_of(const rk_kernel *k, rk_value v) { return rk_type_bits(k, rk_value_type(k, v)); }

static void run_region(interp *I, const rk_region *r);

static void run_op(interp *I, const rk_op *op) {
    const rk_kernel *k = I->k;
    ival a = {0, false}, b = {0, false}, c = {0, false}, res = {0, false};
    if (op->nin > 0) a = I->v[op->in[0].id];
    if (op->nin > 1) b = I->v[op->in[1].id];
    if (op->nin > 2) c = I->v[op->in[2].id];
    uint32_t w = op->nout ? bits_of(k, op->out[0]) : 0, aw = op->nin ? bits_of(k, op->in[0]) : 0;
    bool p = a.poison || b.poison;
    __int128 sa = op->nin ? sval(a.u, aw) : 0, sb = op->nin > 1 ? sval(b.u, aw) : 0, sr;
    uint64_t ua = a.u & umask(aw), ub = b.u & umask(aw);
    switch (op->code) {
    case RK_OP_CONSTANT: res.u = (uint64_t)rk_attrs_get(&op->attrs, "value")->u.i; break;
    case RK_OP_ADD: sr = sa + sb; res = (ival){(uint64_t)sr, p || !sfits(sr, w)}; break;
    case RK_OP_SUB: sr = sa - sb; res = (ival){(uint64_t)sr, p || !sfits(sr, w)}; break;
    case RK_OP_MUL: sr = sa * sb; res = (ival){(uint64_t)sr, p || !sfits(sr, w)}; break;
    case RK_OP_DIV: case RK_OP_MOD:
        if (p || sb == 0 || (sa == -((__int128)1 << (w - 1)) && sb == -1)) { res.poison = true; break; }
        res.u = (uint64_t)(op->code == RK_OP_DIV ? sa / sb : sa % sb);
        break;
    case RK_OP_UDIV: case RK_OP_UMOD:
        if (p || ub == 0) { res.poison = true; break; }
        res.u = op->code == RK_OP_UDIV ? ua / ub : ua % ub;
        break;
    case RK_OP_AND: res = (ival){ua & ub, p}; break;
    case RK_OP_OR: res = (ival){ua | ub, p}; break;
    case RK_OP_XOR: res = (ival){ua ^ ub, p}; break;
    case RK_OP_NOT: res = (ival){~ua, p}; break;
    case RK_OP_SHL: case RK_OP_LSHR: case RK_OP_ASHR:
        if (p || ub >= w) { res.poison = true; break; }
        if (op->code == RK_OP_SHL) res.u = ua << ub;
        else if (op->code == RK_OP_LSHR) res.u = ua >> ub;
        else res.u = (uint64_t)(sa / ((__int128)1 << ub) - (sa < 0 && sa % ((__int128)1 << ub) != 0));
        break;
    case RK_OP_SMAX: res = (ival){(uint64_t)(sa > sb ? sa : sb), p}; break;
    case RK_OP_SMIN: res = (ival){(uint64_t)(sa < sb ? sa : sb), p}; break;
    case RK_OP_UMAX: res = (ival){ua > ub ? ua : ub, p}; break;
    case RK_OP_UMIN: res = (ival){ua < ub ? ua : ub, p}; break;
    case RK_OP_CMP: {
        const char *pr = rk_attrs_str(&op->attrs, "pred");
        bool t = !strcmp(pr, "lt") ? sa < sb : !strcmp(pr, "le") ? sa <= sb : !strcmp(pr, "gt") ? sa > sb
               : !strcmp(pr, "ge") ? sa >= sb : !strcmp(pr, "eq") ? ua == ub : !strcmp(pr, "ne") ? ua != ub
               : !strcmp(pr, "ult") ? ua < ub : !strcmp(pr, "ule") ? ua <= ub : !strcmp(pr, "ugt") ? ua > ub
               : ua >= ub;
        res = (ival){t, p};
        break;
    }
    case RK_OP_SELECT:
        if (a.poison) res.poison = true;
        else res = (a.u & 1) ? b : c;
        break;
    case RK_OP_ZEXT: res = (ival){ua, a.poison}; break;
    case RK_OP_SEXT: res = (ival){(uint64_t)sa, a.poison}; break;
    case RK_OP_TRUNC: res = (ival){a.u, a.poison}; break;
    case RK_OP_GLOBAL_STORE_TYPED: {
        int which = rk_value_eq(op->in[0], rk_kernel_param(k, 0)->value) ? 0 : 1;
        uint64_t at = I->v[op->in[1].id].u & 0xffffffffu;
        assert_true(at < NOUT);
        I->out[which][at] = c;
        I->out[which][at].u &= umask(bits_of(k, op->in[2]));
        I->written[which][at] = true;
        return;
    }
    case RK_OP_IF:
        if (!a.poison && (a.u & 1)) run_region(I, &op->regions[0]);
        return;
    default:
        fail_msg("interpreter: unexpected op %s", rk_opcode_name(op->code));
    }
    res.u &= umask(w);
    I->v[op->out[0].id] = res;
}

static void run_region(interp *I, const rk_region *r) {
    for (uint32_t i = 0; i < r->nops; i++) run_op(I, r->ops[i]);
}

static void run_keep(interp *I, const rk_kernel *k, const uint64_t *args, bool keep);
static void run(interp *I, const rk_kernel *k, const uint64_t *args) { run_keep(I, k, args, false); }
static void run_keep(interp *I, const rk_kernel *k, const uint64_t *args, bool keep) {
    memset(I, 0, sizeof *I);
    I->k = k;
    I->v = calloc(k->nvals + 1, sizeof *I->v);
    for (uint32_t i = 2; i < rk_kernel_nparams(k); i++) {
        const rk_param *p = rk_kernel_param(k, i);
        I->v[p->value.id] = (ival){args[i - 2] & umask(rk_type_bits(k, p->type)), false};
    }
    run_region(I, rk_kernel_body(k));
    if (keep) return;
    free(I->v);
    I->v = NULL;
}

/* On failure: the kernel with the interpreter's values. */
static void dump_region(const rk_kernel *k, const rk_region *r, const ival *v, int depth) {
    for (uint32_t i = 0; i < r->nops; i++) {
        const rk_op *op = r->ops[i];
        char nb[RK_NAME_MAX];
        fprintf(stderr, "%*s", depth * 2 + 2, "");
        if (op->nout)
            fprintf(stderr, "%%%s = ", rk_value_name(k, op->out[0], nb));
        fprintf(stderr, "%s", rk_opcode_name(op->code));
        for (uint32_t j = 0; j < op->nin; j++) fprintf(stderr, " %%%s", rk_value_name(k, op->in[j], nb));
        const rk_attr_val *a = rk_attrs_get(&op->attrs, "value");
        if (a && a->kind == RK_AK_INT) fprintf(stderr, " {%lld}", (long long)a->u.i);
        const char *p = rk_attrs_str(&op->attrs, "pred");
        if (p) fprintf(stderr, " {%s}", p);
        if (op->nout) fprintf(stderr, " : %s", rk_type_name(k, rk_value_type(k, op->out[0])));
        if (op->nout && v) fprintf(stderr, "   -> %s%llx", v[op->out[0].id].poison ? "poison " : "",
                                   (unsigned long long)v[op->out[0].id].u);
        fprintf(stderr, "\n");
        for (uint32_t j = 0; j < op->nreg; j++) dump_region(k, &op->regions[j], v, depth + 1);
    }
}

/* ---- random integer kernels ----------------------------------------------------------------- */
static const int64_t special[] = {0, 1, -1, 2, 3, 7, 31, 32, 33, 63, 64, 100, 127, -128, 255,
                                  0x7fffffff, -0x7fffffff - 1, 0xffff, 65536};

typedef struct pool { rk_value v[512]; uint32_t n; } pool;

static rk_value pick_from(rk_kernel *k, pool *p, rk_type t) {
    if (p->n == 0 || rnd() % 100 < 45) {
        int64_t c = rnd() % 3 ? special[rnd() % RK_COUNTOF(special)] : (int64_t)rnd();
        uint32_t b = rk_type_bits(k, t);
        if (b < 64) c = (int64_t)((uint64_t)c & umask(b));
        if (b == 1) c &= 1;
        rk_value v = rk_const_int(k, t, c);
        if (p->n < 512) p->v[p->n++] = v;
        return v;
    }
    return p->v[rnd() % p->n];
}

static rk_value (*const binops[])(rk_kernel *, rk_value, rk_value) = {
    rk_build_add, rk_build_sub, rk_build_mul, rk_build_div, rk_build_mod, rk_build_udiv,
    rk_build_umod, rk_build_and, rk_build_or, rk_build_xor, rk_build_shl, rk_build_lshr,
    rk_build_ashr, rk_build_smax, rk_build_smin, rk_build_umax, rk_build_umin};
static const char *const preds[] = {"lt", "le", "gt", "ge", "eq", "ne", "ult", "ule", "ugt", "uge"};

static rk_kernel *random_kernel(uint32_t nops, bool with_if) {
    rk_kernel *k = rk_kernel_new("rnd");
    rk_value o32 = rk_add_param(k, "o32", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value o64 = rk_add_param(k, "o64", rk_type_ptr(k, RK_T_I64, RK_AS_GLOBAL), NULL);
    pool p32 = {.n = 0}, p64 = {.n = 0}, p1 = {.n = 0}, p8 = {.n = 0};
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "a%d", i);
        p32.v[p32.n++] = rk_add_param(k, name, RK_T_I32, NULL);
    }
    p64.v[p64.n++] = rk_add_param(k, "b0", RK_T_I64, NULL);
    p8.v[p8.n++] = rk_add_param(k, "c0", RK_T_I8, NULL);
    uint32_t mark32 = p32.n, mark64 = p64.n, mark1 = 0, mark8 = p8.n;
    bool in_if = false;
    for (uint32_t i = 0; i < nops; i++) {
        uint32_t kind = (uint32_t)(rnd() % 10);
        pool *pp = kind < 5 ? &p32 : kind < 7 ? &p64 : &p8;
        rk_type t = kind < 5 ? RK_T_I32 : kind < 7 ? RK_T_I64 : RK_T_I8;
        uint32_t sel = (uint32_t)(rnd() % 24);
        rk_value r;
        if (sel < 17) {
            rk_value a = pick_from(k, pp, t), b = pick_from(k, pp, t);
            r = binops[sel](k, a, b);
        } else if (sel == 17) {
            r = rk_build_not(k, pick_from(k, pp, t));
        } else if (sel <= 19) {
            rk_value a = pick_from(k, pp, t), b = pick_from(k, pp, t);
            rk_value c = rk_build_cmp(k, preds[rnd() % RK_COUNTOF(preds)], a, b);
            if (p1.n < 512) p1.v[p1.n++] = c;
            r = c;
            pp = &p1;
        } else if (sel == 20 && p1.n) {
            rk_value c = pick_from(k, &p1, RK_T_I1), a = pick_from(k, pp, t), b = pick_from(k, pp, t);
            r = rk_build_select(k, c, a, b);
        } else if (sel == 21) {
            rk_value a = pick_from(k, &p32, RK_T_I32);
            r = rk_emit_convert(k, rnd() & 1 ? RK_OP_SEXT : RK_OP_ZEXT, a, RK_T_I64);
            pp = &p64;
        } else if (sel == 22) {
            rk_value a = pick_from(k, &p64, RK_T_I64);
            r = rk_build_trunc(k, a, RK_T_I32);
            pp = &p32;
        } else if (with_if && !in_if && p1.n) {
            rk_value c = pick_from(k, &p1, RK_T_I1);
            rk_if_begin(k, c);
            in_if = true;
            /* values made inside the if stay inside it */
            mark32 = p32.n; mark64 = p64.n; mark1 = p1.n; mark8 = p8.n;
            continue;
        } else {
            continue;
        }
        if (pp->n < 512) pp->v[pp->n++] = r;
        if (in_if && rnd() % 6 == 0) {
            /* store from inside the region, then close it */
            rk_value at = rk_const_i32(k, (int32_t)(200 + rnd() % 50));
            rk_value v = pick_from(k, &p32, RK_T_I32);
            rk_store_global(k, o32, at, v);
            rk_if_end(k, NULL, 0);
            in_if = false;
            p32.n = mark32; p64.n = mark64; p1.n = mark1; p8.n = mark8;
        }
    }
    if (in_if) {
        rk_if_end(k, NULL, 0);
        p32.n = mark32; p64.n = mark64; p1.n = mark1; p8.n = mark8;
    }
    /* observe everything still in scope */
    for (uint32_t i = 0; i < p32.n && i < 100; i++) {
        rk_value at = rk_const_i32(k, (int32_t)i);
        rk_store_global(k, o32, at, p32.v[i]);
    }
    for (uint32_t i = 0; i < p8.n && i < 50; i++) {
        rk_value at = rk_const_i32(k, (int32_t)(100 + i));
        rk_value w = rk_build_sext(k, p8.v[i], RK_T_I32);
        rk_store_global(k, o32, at, w);
    }
    for (uint32_t i = 0; i < p1.n && i < 50; i++) {
        rk_value at = rk_const_i32(k, (int32_t)(150 + i));
        rk_value w = rk_build_zext(k, p1.v[i], RK_T_I32);
        rk_store_global(k, o32, at, w);
    }
    for (uint32_t i = 0; i < p64.n && i < 100; i++) {
        rk_value at = rk_const_i32(k, (int32_t)i);
        rk_store_global(k, o64, at, p64.v[i]);
    }
    if (rk_kernel_finish(k) != RK_OK) fail_msg("random kernel: %s", rk_builder_error(k));
    return k;
}

static void test_random_integer_kernels(void **state) {
    (void)state;
    uint32_t folded = 0, merged = 0, removed = 0;
    for (int round = 0; round < 300; round++) {
        uint64_t seed = rng_state;
        rk_kernel *k = random_kernel(20 + (uint32_t)(rnd() % 60), round % 2 == 1);
        assert_verifies(k);
        enum { NARGS = 5, NSETS = 6 };
        uint64_t args[NSETS][NARGS];
        static interp before[NSETS], after;
        for (int s = 0; s < NSETS; s++) {
            for (int a = 0; a < NARGS; a++)
                args[s][a] = rnd() % 4 ? (uint64_t)special[rnd() % RK_COUNTOF(special)] : rnd();
            run(&before[s], k, args[s]);
        }
        uint64_t n0 = rk_kernel_op_count(k);
        rk_pass_stats st;
        assert_int_equal(rk_optimize(k, 0, &st), RK_OK);
        assert_verifies(k);
        assert_true(rk_kernel_op_count(k) <= n0);
        folded += st.constants_folded;
        merged += st.common_subexpressions;
        removed += st.dead_ops_removed;
        for (int s = 0; s < NSETS; s++) {
            run(&after, k, args[s]);
            for (int w = 0; w < 2; w++)
                for (int i = 0; i < NOUT; i++) {
                    assert_int_equal(before[s].written[w][i], after.written[w][i]);
                    if (!before[s].written[w][i]) continue;
                    /* poison may be refined to any value (select of equal arms); a value must stay */
                    if (!before[s].out[w][i].poison &&
                        (after.out[w][i].poison || before[s].out[w][i].u != after.out[w][i].u)) {
                        uint64_t now = rng_state;
                        rng_state = seed;
                        rk_kernel *k0 = random_kernel(20 + (uint32_t)(rnd() % 60), round % 2 == 1);
                        interp I;
                        run_keep(&I, k0, args[s], true);
                        fprintf(stderr, "before:\n");
                        dump_region(k0, rk_kernel_body(k0), I.v, 0);
                        free(I.v);
                        run_keep(&I, k, args[s], true);
                        fprintf(stderr, "after:\n");
                        dump_region(k, rk_kernel_body(k), I.v, 0);
                        free(I.v);
                        rk_kernel_free(k0);
                        rng_state = now;
                        fail_msg("round %d set %d out%d[%d]: %s%llx before, %s%llx after", round, s, w ? 64 : 32,
                                 i, before[s].out[w][i].poison ? "poison " : "",
                                 (unsigned long long)before[s].out[w][i].u, after.out[w][i].poison ? "poison " : "",
                                 (unsigned long long)after.out[w][i].u);
                    }
                }
        }
        /* a second run finds nothing left to do */
        assert_int_equal(rk_optimize(k, 0, &st), RK_OK);
        assert_int_equal(st.constants_folded + st.common_subexpressions + st.dead_ops_removed, 0);
        assert_int_equal(st.iterations, 1);
        rk_kernel_free(k);
    }
    assert_true(folded > 1000);
    assert_true(merged > 100);
    assert_true(removed > 100);
}

/* ---- single folds against expected constants ----------------------------------------------- */
/* Build out[0] = op(consts...) and optimise; returns the stored value's
 * producer (a constant when it folded). */
static const rk_op *fold_one(rk_kernel **kp, rk_opcode code, rk_type t, rk_type rt, const char *pred,
                             const int64_t *vals, uint32_t n) {
    rk_kernel *k = rk_kernel_new("f1");
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, rt, RK_AS_GLOBAL), NULL);
    rk_value in[3];
    for (uint32_t i = 0; i < n; i++) in[i] = rk_const_int(k, t, vals[i]);
    rk_op *op = rk_emit(k, code, in, n, &rt, 1);
    if (pred) rk_op_set_str(k, op, "pred", pred);
    rk_op_check(k, op);
    rk_value zero = rk_const_i32(k, 0);
    rk_store_global(k, out, zero, op->out[0]);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_optimize(k, 0, NULL), RK_OK);
    assert_verifies(k);
    const rk_region *b = rk_kernel_body(k);
    const rk_op *stv = b->ops[b->nops - 1];
    assert_int_equal(stv->code, RK_OP_GLOBAL_STORE_TYPED);
    *kp = k;
    return rk_value_def(k, stv->in[2]);
}

typedef struct icase {
    rk_opcode code;
    rk_type t, rt;
    const char *pred;
    int64_t a, b;
    bool folds;
    int64_t want;
} icase;

static void test_integer_fold_table(void **state) {
    (void)state;
    const int64_t IMIN = -0x7fffffffll - 1, IMAX = 0x7fffffffll;
    const icase cases[] = {
        {RK_OP_ADD, RK_T_I32, RK_T_I32, NULL, 2, 3, true, 5},
        {RK_OP_ADD, RK_T_I32, RK_T_I32, NULL, IMAX, 1, false, 0},          /* nsw overflow */
        {RK_OP_SUB, RK_T_I32, RK_T_I32, NULL, IMIN, 1, false, 0},
        {RK_OP_SUB, RK_T_I32, RK_T_I32, NULL, IMIN, -1, true, IMIN + 1},
        {RK_OP_MUL, RK_T_I32, RK_T_I32, NULL, 65536, 32768, false, 0},
        {RK_OP_MUL, RK_T_I32, RK_T_I32, NULL, -65536, 32768, true, IMIN},
        {RK_OP_ADD, RK_T_I8, RK_T_I8, NULL, 100, 27, true, 127},
        {RK_OP_ADD, RK_T_I8, RK_T_I8, NULL, 100, 28, false, 0},
        {RK_OP_ADD, RK_T_I64, RK_T_I64, NULL, INT64_MAX, 1, false, 0},
        {RK_OP_MUL, RK_T_I64, RK_T_I64, NULL, 1ll << 40, 1ll << 22, true, 1ll << 62},
        {RK_OP_DIV, RK_T_I32, RK_T_I32, NULL, 7, 0, false, 0},
        {RK_OP_DIV, RK_T_I32, RK_T_I32, NULL, IMIN, -1, false, 0},
        {RK_OP_DIV, RK_T_I32, RK_T_I32, NULL, -7, 2, true, -3},
        {RK_OP_MOD, RK_T_I32, RK_T_I32, NULL, -7, 2, true, -1},
        {RK_OP_MOD, RK_T_I32, RK_T_I32, NULL, IMIN, -1, false, 0},
        {RK_OP_UDIV, RK_T_I32, RK_T_I32, NULL, -1, 2, true, IMAX},
        {RK_OP_UMOD, RK_T_I32, RK_T_I32, NULL, -1, 10, true, 5},
        {RK_OP_UDIV, RK_T_I32, RK_T_I32, NULL, 5, 0, false, 0},
        {RK_OP_SHL, RK_T_I32, RK_T_I32, NULL, 1, 31, true, IMIN},
        {RK_OP_SHL, RK_T_I32, RK_T_I32, NULL, 1, 32, false, 0},
        {RK_OP_LSHR, RK_T_I32, RK_T_I32, NULL, -1, 28, true, 15},
        {RK_OP_ASHR, RK_T_I32, RK_T_I32, NULL, -16, 2, true, -4},
        {RK_OP_ASHR, RK_T_I32, RK_T_I32, NULL, -1, -1, false, 0},           /* amount 0xffffffff */
        {RK_OP_UMUL_HI_I32, RK_T_I32, RK_T_I32, NULL, -1, -1, true, -2},
        {RK_OP_UMAX, RK_T_I32, RK_T_I32, NULL, -1, 5, true, -1},
        {RK_OP_SMAX, RK_T_I32, RK_T_I32, NULL, -1, 5, true, 5},
        {RK_OP_XOR, RK_T_I16, RK_T_I16, NULL, 0x7fff, -1, true, -0x8000},
        {RK_OP_CMP, RK_T_I32, RK_T_I1, "ult", -1, 5, true, 0},
        {RK_OP_CMP, RK_T_I32, RK_T_I1, "lt", -1, 5, true, 1},
        {RK_OP_ZEXT, RK_T_I8, RK_T_I32, NULL, -1, 0, true, 255},
        {RK_OP_SEXT, RK_T_I8, RK_T_I32, NULL, -1, 0, true, -1},
        {RK_OP_TRUNC, RK_T_I64, RK_T_I32, NULL, 0x100000005ll, 0, true, 5},
        {RK_OP_TRUNC, RK_T_I64, RK_T_I8, NULL, 0xff, 0, true, -1},
        {RK_OP_NOT, RK_T_I32, RK_T_I32, NULL, 0, 0, true, -1},
    };
    for (size_t i = 0; i < RK_COUNTOF(cases); i++) {
        const icase *c = &cases[i];
        const int64_t v[] = {c->a, c->b};
        uint32_t n = RK_COUNT_N(rk_op_info_of(c->code)->nin);
        rk_kernel *k;
        const rk_op *d = fold_one(&k, c->code, c->t, c->rt, c->pred, v, n);
        if (c->folds != (d->code == RK_OP_CONSTANT))
            fail_msg("case %zu (%s %lld %lld): expected %s", i, rk_opcode_name(c->code), (long long)c->a,
                     (long long)c->b, c->folds ? "a fold" : "no fold");
        if (c->folds) {
            int64_t got = rk_attrs_get(&d->attrs, "value")->u.i;
            if (got != c->want) fail_msg("case %zu (%s): got %lld, want %lld", i, rk_opcode_name(c->code),
                                         (long long)got, (long long)c->want);
            assert_string_equal(rk_attrs_str(&d->attrs, "ity"), rk_type_name(k, c->rt));
            char nb[RK_NAME_MAX];
            assert_int_equal(rk_value_name(k, d->out[0], nb)[0], 'c');
        }
        rk_kernel_free(k);
    }
}

/* ---- floats: folded values against host float/double arithmetic ------------------------------ */
static float rnd_f32(void) {
    for (;;) {
        uint32_t u = (uint32_t)rnd();
        if (rnd() % 4 == 0) u = (u & 0x807fffffu) | ((uint32_t)(120 + rnd() % 16) << 23);  /* near 1 */
        float f;
        memcpy(&f, &u, 4);
        if (isfinite(f)) return f;
    }
}

static bool subnormal(double v, bool f32) {
    return v != 0 && fabs(v) < (f32 ? (double)FLT_MIN : DBL_MIN);
}

static const rk_op *fold_float(rk_kernel **kp, rk_opcode code, rk_type t, rk_type rt, const char *pred,
                               const double *v, uint32_t n) {
    rk_kernel *k = rk_kernel_new("ff");
    rk_type st = rk_type_eq(rt, RK_T_I1) ? RK_T_I32 : rt;
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, st, RK_AS_GLOBAL), NULL);
    rk_value in[3];
    for (uint32_t i = 0; i < n; i++) in[i] = rk_const_float(k, t, v[i]);
    rk_op *op = rk_emit(k, code, in, n, &rt, 1);
    if (pred) rk_op_set_str(k, op, "pred", pred);
    assert_true(rk_op_check(k, op));
    rk_value res = op->out[0];
    if (rk_type_eq(rt, RK_T_I1)) res = rk_build_zext(k, res, RK_T_I32);
    rk_value zero = rk_const_i32(k, 0);
    rk_store_global(k, out, zero, res);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_optimize(k, 0, NULL), RK_OK);
    assert_verifies(k);
    const rk_region *b = rk_kernel_body(k);
    *kp = k;
    return rk_value_def(k, b->ops[b->nops - 1]->in[2]);
}

static void check_float(rk_opcode code, bool f32, double a, double b, double want, bool defined) {
    rk_type t = f32 ? RK_T_F32 : RK_T_F64;
    const double v[] = {a, b};
    uint32_t n = RK_COUNT_N(rk_op_info_of(code)->nin);
    rk_kernel *k;
    const rk_op *d = fold_float(&k, code, t, t, NULL, v, n);
    bool expect = defined && !isnan(want) && !subnormal(want, f32) && !subnormal(a, f32) && (n < 2 || !subnormal(b, f32));
    if (expect != (d->code == RK_OP_CONSTANT))
        fail_msg("%s(%a, %a) = %a: expected %s", rk_opcode_name(code), a, b, want, expect ? "a fold" : "no fold");
    if (expect) {
        double got;
        assert_true(rk_attrs_num(&d->attrs, "value", &got));
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("%s(%a, %a): folded %a, host says %a", rk_opcode_name(code), a, b, got, want);
    }
    rk_kernel_free(k);
}

static void test_float_folds(void **state) {
    (void)state;
    for (int i = 0; i < 3000; i++) {
        volatile float fa = rnd_f32(), fb = rnd_f32();
        check_float(RK_OP_FADD, true, fa, fb, (float)(fa + fb), true);
        check_float(RK_OP_FSUB, true, fa, fb, (float)(fa - fb), true);
        check_float(RK_OP_FMUL, true, fa, fb, (float)(fa * fb), true);
        check_float(RK_OP_FDIV, true, fa, fb, (float)(fa / fb), true);
        check_float(RK_OP_FNEG, true, fa, 0, -fa, true);
        check_float(RK_OP_FMAX, true, fa, fb, fa > fb ? fa : fb, true);
        volatile double da = (double)fa * 3.1, db = (double)fb / 7.3;
        check_float(RK_OP_FADD, false, da, db, da + db, true);
        check_float(RK_OP_FMUL, false, da, db, da * db, true);
        check_float(RK_OP_FDIV, false, da, db, da / db, true);
    }
    /* edges: NaN results and subnormals never fold; inf does; signed zeros */
    check_float(RK_OP_FDIV, true, 0.0, 0.0, NAN, true);
    check_float(RK_OP_FSUB, true, INFINITY, INFINITY, NAN, true);
    check_float(RK_OP_FADD, true, INFINITY, 1.0, INFINITY, true);
    check_float(RK_OP_FMUL, true, 0x1p-100, 0x1p-30, 0x1p-130, true);       /* subnormal result */
    check_float(RK_OP_FADD, true, 0x1p-130, 1.0, 1.0, false);                /* subnormal input */
    check_float(RK_OP_FMUL, true, 0x1p100, 0x1p100, INFINITY, true);
    check_float(RK_OP_FADD, true, -0.0, -0.0, -0.0, true);
    check_float(RK_OP_FADD, true, 1.0, 0x1p-24, 1.0, true);                  /* tie to even */
    check_float(RK_OP_FADD, true, 1.0, 0x1.8p-24, 1.0 + 0x1p-23, true);
    check_float(RK_OP_FMAX, true, NAN, 2.0, 2.0, true);                      /* maxnum: NaN loses */
    check_float(RK_OP_FMIN, true, 3.0, NAN, 3.0, true);
    check_float(RK_OP_FMAX, true, 0.0, -0.0, 0.0, false);                    /* either zero is allowed */
    check_float(RK_OP_FABS, true, -2.5, 0, 2.5, true);

    /* compares, including unordered ones */
    const struct { const char *p; double a, b; int want; } fc[] = {
        {"olt", 1, 2, 1}, {"olt", NAN, 2, 0}, {"ult", NAN, 2, 1}, {"oeq", 2, 2, 1}, {"one", NAN, 1, 0},
        {"une", NAN, 1, 1}, {"ord", 1, 2, 1}, {"uno", 1, NAN, 1}, {"oge", -0.0, 0.0, 1}, {"ugt", 1, 2, 0},
    };
    for (size_t i = 0; i < RK_COUNTOF(fc); i++) {
        rk_kernel *k;
        const double v[] = {fc[i].a, fc[i].b};
        const rk_op *d = fold_float(&k, RK_OP_FCMP, RK_T_F32, RK_T_I1, fc[i].p, v, 2);
        /* the compare folds to an i1 constant, then the zext folds too */
        assert_int_equal(d->code, RK_OP_CONSTANT);
        assert_int_equal(rk_attrs_get(&d->attrs, "value")->u.i, fc[i].want);
        rk_kernel_free(k);
    }
}

static void test_cast_folds(void **state) {
    (void)state;
    for (int i = 0; i < 2000; i++) {
        int32_t x = (int32_t)rnd();
        if (i % 3 == 0) x >>= (rnd() % 31);
        rk_kernel *k;
        const int64_t v[] = {x};
        const rk_op *d = fold_one(&k, RK_OP_SITOFP, RK_T_I32, RK_T_F32, NULL, v, 1);
        double got;
        assert_int_equal(d->code, RK_OP_CONSTANT);
        assert_true(rk_attrs_num(&d->attrs, "value", &got));
        volatile float want = (float)x;
        assert_true(got == (double)want);
        rk_kernel_free(k);
        d = fold_one(&k, RK_OP_UITOFP, RK_T_I32, RK_T_F64, NULL, v, 1);
        assert_true(rk_attrs_num(&d->attrs, "value", &got));
        assert_true(got == (double)(uint32_t)x);
        rk_kernel_free(k);
    }
    /* float to int: in range folds (toward zero), out of range stays */
    const struct { double v; bool u; bool folds; int64_t want; } fi[] = {
        {-2.75, false, true, -2}, {2.75, true, true, 2}, {-0.5, true, true, 0}, {-1.0, true, false, 0},
        {2147483520.0, false, true, 2147483520}, {2147483648.0, false, false, 0}, {-2147483648.0, false, true,
        -2147483648ll}, {4294967040.0, true, true, -256}, {NAN, false, false, 0}, {INFINITY, false, false, 0},
    };
    for (size_t i = 0; i < RK_COUNTOF(fi); i++) {
        rk_kernel *k;
        const double v[] = {fi[i].v};
        const rk_op *d = fold_float(&k, fi[i].u ? RK_OP_FPTOUI : RK_OP_FPTOSI, RK_T_F32, RK_T_I32, NULL, v, 1);
        if (fi[i].folds != (d->code == RK_OP_CONSTANT)) fail_msg("fptoi case %zu", i);
        if (fi[i].folds) assert_int_equal(rk_attrs_get(&d->attrs, "value")->u.i, fi[i].want);
        rk_kernel_free(k);
    }
    /* fpext / fptrunc */
    rk_kernel *k;
    const double one_third[] = {1.0 / 3.0};
    const rk_op *d = fold_float(&k, RK_OP_FPTRUNC, RK_T_F64, RK_T_F32, NULL, one_third, 1);
    double got;
    assert_true(rk_attrs_num(&d->attrs, "value", &got));
    assert_true(got == (double)(float)(1.0 / 3.0));
    rk_kernel_free(k);
}

/* and(ptrtoint(p + off), mask) folds exactly when p is a parameter of known
 * alignment A and mask < A: to (off mod A) & mask. */
static void test_address_low_bits_fold(void **state) {
    (void)state;
    const uint32_t aligns[] = {0, 4, 16, 256};
    for (int i = 0; i < 400; i++) {
        uint32_t A = aligns[rnd() % RK_COUNTOF(aligns)];
        int64_t off = (int64_t)(rnd() % 1000), mask = (int64_t)(rnd() % 300);
        bool two_steps = rnd() & 1;
        rk_kernel *k = rk_kernel_new("addr_low");
        rk_param_abi abi = {.align = A};
        rk_value p = rk_add_param(k, "p", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), &abi);
        rk_value o = rk_add_param(k, "o", rk_type_ptr(k, RK_T_I64, RK_AS_GLOBAL), NULL);
        rk_value c1 = rk_const_i64(k, two_steps ? off / 2 : off);
        rk_value q = rk_build_global_ptr_add(k, p, c1);
        if (two_steps) {
            rk_value c2 = rk_const_i64(k, off - off / 2);
            q = rk_build_global_ptr_add(k, q, c2);
        }
        rk_value a = rk_build_ptrtoint(k, q);
        rk_value m = rk_const_i64(k, mask);
        rk_value r = rk_build_and(k, a, m);
        rk_value zero = rk_const_i32(k, 0);
        rk_store_global(k, o, zero, r);
        rk_build_return(k);
        assert_int_equal(rk_kernel_finish(k), RK_OK);
        assert_int_equal(rk_optimize(k, 0, NULL), RK_OK);
        assert_verifies(k);
        const rk_op *st = NULL;
        for (uint32_t j = 0; j < k->body.nops; j++)
            if (rk_op_info_of(k->body.ops[j]->code)->flags & RK_F_WRITES) st = k->body.ops[j];
        assert_non_null(st);
        const rk_op *d = rk_value_def(k, st->in[2]);
        bool folds = A && (uint64_t)mask < A;
        if (folds != (d && d->code == RK_OP_CONSTANT))
            fail_msg("align %u off %lld mask %lld", A, (long long)off, (long long)mask);
        if (folds) assert_int_equal(rk_attrs_get(&d->attrs, "value")->u.i, (off % A) & mask);
        rk_kernel_free(k);
    }
}

/* ---- side effects ------------------------------------------------------------------------------- */
typedef struct seq { const rk_op *ops[512]; uint32_t n; } seq;
static bool collect_effects(void *ud, rk_op *op, uint32_t depth) {
    (void)depth;
    seq *s = ud;
    uint32_t f = rk_op_info_of(op->code)->flags;
    if (!(f & (RK_F_PURE | RK_F_ALLOC)) && s->n < 512) s->ops[s->n++] = op;
    return true;
}

/* Every op sample: ops with effects survive optimisation, in order, and
 * the sampled op is still there (its result is always observed). */
static void test_samples_keep_effects(void **state) {
    (void)state;
    const char *targets[] = {NULL, "gfx942", "sm_90"};
    for (size_t t = 0; t < RK_COUNTOF(targets); t++)
        for (int c = 1; c < RK_OP__COUNT; c++) {
            rk_kernel *k = op_sample_kernel((rk_opcode)c, targets[t]);
            if (!k) fail_msg("sample %s: %s", rk_opcode_name((rk_opcode)c), rk_error_message());
            static seq before, after;
            before.n = after.n = 0;
            ir_walk(rk_kernel_body(k), collect_effects, &before, 0);
            rk_pass_stats st;
            assert_int_equal(rk_optimize(k, 0, &st), RK_OK);
            assert_verifies(k);
            ir_walk(rk_kernel_body(k), collect_effects, &after, 0);
            assert_int_equal(before.n, after.n);
            for (uint32_t i = 0; i < before.n; i++) assert_ptr_equal(before.ops[i], after.ops[i]);
            if (op_sample_count(k, (rk_opcode)c) != 1)
                fail_msg("optimising the %s sample removed or duplicated it", rk_opcode_name((rk_opcode)c));
            rk_kernel_free(k);
        }
}

/* Unused results of effectful ops do not make them dead. */
static void test_unused_effects_stay(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("effects");
    rk_type pi = rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), ph = rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL);
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    rk_value p = rk_add_param(k, "p", pi, NULL), h = rk_add_param(k, "h", ph, NULL), f = rk_add_param(k, "f", pf, NULL);
    rk_value i = rk_const_i32(k, 0), one = rk_const_i32(k, 1);
    rk_load_global(k, p, i, 1);                                   /* unused load */
    rk_build_global_atomic(k, "add", p, i, one);                         /* unused old value */
    rk_value a = rk_load_global(k, h, i, 4), c = rk_load_global(k, f, i, 4);
    rk_build_mma(k, "mfma_f32_16x16x16_f16", a, a, c);            /* unused accumulator */
    rk_type i32 = RK_T_I32;
    rk_build_inline_asm(k, "v_mov_b32 $0, 0", "=v", NULL, 0, &i32, 1, true);
    rk_build_sync(k);
    rk_build_s_waitcnt(k, 0, 0, -1);
    rk_build_sched_barrier(k, 0);
    uint32_t d[] = {64};
    rk_value lds = rk_build_smem_alloc(k, RK_T_F32, d, 1);
    rk_value valid = rk_const_bool(k, true);
    rk_build_async_copy(k, f, i, lds, i, valid, 4);
    rk_build_async_commit_group(k);
    rk_build_async_wait_group(k, 0);
    uint32_t d2[] = {32};
    rk_build_smem_alloc(k, RK_T_F32, d2, 1);                      /* unused allocation: dead */
    rk_value dead1 = rk_build_add(k, one, one);
    rk_build_mul(k, dead1, dead1);                                /* dead chain */
    rk_value mask = rk_const_i64(k, -1);
    rk_build_exec_and_saveexec(k, mask);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    static seq before, after;
    before.n = after.n = 0;
    ir_walk(rk_kernel_body(k), collect_effects, &before, 0);
    rk_pass_stats st;
    assert_int_equal(rk_optimize(k, 0, &st), RK_OK);
    ir_walk(rk_kernel_body(k), collect_effects, &after, 0);
    assert_int_equal(before.n, 13);
    assert_int_equal(after.n, before.n);
    for (uint32_t j = 0; j < before.n; j++) assert_ptr_equal(before.ops[j], after.ops[j]);
    assert_int_equal(op_sample_count(k, RK_OP_SMEM_ALLOC), 1);    /* the used one */
    assert_int_equal(op_sample_count(k, RK_OP_MUL), 0);
    assert_int_equal(op_sample_count(k, RK_OP_ADD), 0);
    /* add(1,1) folds to a constant first, which then dies with the mul */
    assert_true(st.constants_folded >= 1);
    assert_true(st.dead_ops_removed >= 3);
    assert_verifies(k);
    rk_kernel_free(k);
}

/* ---- CSE ------------------------------------------------------------------------------------------ */
static void test_cse_scopes(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("cse");
    rk_value x = rk_add_param(k, "x", RK_T_I32, NULL), y = rk_add_param(k, "y", RK_T_I32, NULL);
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value i0 = rk_const_i32(k, 0), i1 = rk_const_i32(k, 1), i2 = rk_const_i32(k, 2), i3 = rk_const_i32(k, 3);
    rk_value outer = rk_build_add(k, x, y);
    rk_value swapped = rk_build_add(k, y, x);                  /* commutative: merges */
    rk_value s1 = rk_build_sub(k, x, y), s2 = rk_build_sub(k, y, x);  /* not commutative: both stay */
    rk_value c = rk_build_cmp(k, "lt", x, y);
    rk_if_begin(k, c);
    rk_value inner = rk_build_add(k, x, y);                    /* replaced by the outer add */
    rk_value only_inner = rk_build_mul(k, x, y);
    rk_store_global(k, out, i0, inner);
    rk_store_global(k, out, i1, only_inner);
    rk_if_end(k, NULL, 0);
    rk_value later = rk_build_mul(k, x, y);                    /* not replaced by the inner mul */
    rk_store_global(k, out, i2, later);
    rk_store_global(k, out, i3, swapped);
    rk_value s = rk_build_add(k, s1, s2);
    rk_store_global(k, out, i0, s);
    rk_store_global(k, out, i1, outer);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    rk_pass_stats st;
    assert_int_equal(rk_optimize(k, 0, &st), RK_OK);
    assert_verifies(k);
    assert_int_equal(st.common_subexpressions, 2);
    assert_int_equal(op_sample_count(k, RK_OP_ADD), 2);        /* x+y and s1+s2 */
    assert_int_equal(op_sample_count(k, RK_OP_SUB), 2);
    assert_int_equal(op_sample_count(k, RK_OP_MUL), 2);
    /* the store inside the if now reads the outer add */
    const rk_region *b = rk_kernel_body(k);
    const rk_op *ifop = NULL;
    for (uint32_t j = 0; j < b->nops; j++)
        if (b->ops[j]->code == RK_OP_IF) ifop = b->ops[j];
    assert_non_null(ifop);
    assert_true(rk_value_eq(ifop->regions[0].ops[1]->in[2], outer));
    rk_kernel_free(k);
}

static void test_cse_convergent(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("conv");
    rk_value x = rk_add_param(k, "x", RK_T_I32, NULL), y = rk_add_param(k, "y", RK_T_I32, NULL);
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value i[6];
    for (int j = 0; j < 6; j++) i[j] = rk_const_i32(k, j);
    rk_value a = rk_build_readfirstlane(k, x);
    rk_value a2 = rk_build_readfirstlane(k, x);                /* same region, same lanes: merged */
    rk_value c = rk_build_cmp(k, "lt", x, y);
    rk_if_begin(k, c);
    rk_value b = rk_build_readfirstlane(k, x);                 /* other region: other lanes */
    rk_value p = rk_build_add(k, x, y);                        /* not convergent */
    rk_store_global(k, out, i[0], b);
    rk_store_global(k, out, i[1], p);
    rk_if_end(k, NULL, 0);
    rk_value q = rk_build_add(k, x, y);                        /* never replaced by the inner add */
    rk_value m = rk_const_i64(k, 3);
    rk_build_exec_and_saveexec(k, m);                          /* the lane set changes here */
    rk_value e = rk_build_readfirstlane(k, x);                 /* so this one stays */
    rk_store_global(k, out, i[2], a);
    rk_store_global(k, out, i[3], a2);
    rk_store_global(k, out, i[4], q);
    rk_store_global(k, out, i[5], e);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    rk_pass_stats st;
    assert_int_equal(rk_optimize(k, 0, &st), RK_OK);
    assert_verifies(k);
    assert_int_equal(op_sample_count(k, RK_OP_READFIRSTLANE), 3);
    assert_int_equal(op_sample_count(k, RK_OP_ADD), 2);
    assert_int_equal(st.common_subexpressions, 1);
    rk_kernel_free(k);

    /* two mma with identical operands are never merged (not pure) */
    k = rk_kernel_new("mma2");
    rk_value ph = rk_add_param(k, "h", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
    rk_value pf = rk_add_param(k, "f", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value z = rk_const_i32(k, 0);
    rk_value va = rk_load_global(k, ph, z, 4), vc = rk_load_global(k, pf, z, 4);
    rk_value d1 = rk_build_mma(k, "mfma_f32_16x16x16_f16", va, va, vc);
    rk_value d2 = rk_build_mma(k, "mfma_f32_16x16x16_f16", va, va, vc);
    rk_store_global(k, pf, z, d1);
    rk_store_global(k, pf, z, d2);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_optimize(k, 0, &st), RK_OK);
    assert_int_equal(op_sample_count(k, RK_OP_MMA), 2);
    assert_int_equal(op_sample_count(k, RK_OP_GLOBAL_LOAD_VN), 2);
    rk_kernel_free(k);
}

/* ---- loops: folding and CSE inside a body ------------------------------------------------------- */
static void test_loop_body(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("loop");
    rk_value x = rk_add_param(k, "x", RK_T_I32, NULL);
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value lo = rk_const_i32(k, 0), hi = rk_const_i32(k, 8), step = rk_const_i32(k, 1), acc, res;
    rk_value two = rk_const_i32(k, 2), three = rk_const_i32(k, 3);
    const char *names[] = {"acc"};
    rk_value iv = rk_for_begin(k, lo, hi, step, "k0", 1, &x, names, &acc);
    rk_value six = rk_build_mul(k, two, three);                 /* folds inside the body */
    rk_value t = rk_build_add(k, iv, six);
    rk_value t2 = rk_build_add(k, six, iv);                     /* CSE in the body */
    rk_value u = rk_build_add(k, acc, t);
    rk_value n = rk_build_add(k, u, t2);
    rk_for_end(k, &n, 1, &res);
    rk_store_global(k, out, lo, res);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    rk_pass_stats st;
    assert_int_equal(rk_optimize(k, 0, &st), RK_OK);
    assert_verifies(k);
    assert_int_equal(st.constants_folded, 1);
    assert_int_equal(st.common_subexpressions, 1);
    assert_int_equal(op_sample_count(k, RK_OP_MUL), 0);
    assert_int_equal(op_sample_count(k, RK_OP_ADD), 3);
    assert_int_equal(op_sample_count(k, RK_OP_YIELD), 1);
    rk_kernel_free(k);
}

/* ---- fixed point and the round cap --------------------------------------------------------------- */
/* select(c, e, e') where e and e' are equal only after CSE: needs a second
 * round to fold the select; nested `depth` times. */
static rk_kernel *select_tower(int depth) {
    rk_kernel *k = rk_kernel_new("tower");
    rk_value x = rk_add_param(k, "x", RK_T_I32, NULL), y = rk_add_param(k, "y", RK_T_I32, NULL);
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value c = rk_build_cmp(k, "lt", x, y);
    rk_value a = rk_build_add(k, x, y), b = rk_build_add(k, x, y);
    for (int i = 0; i < depth; i++) {
        rk_value s = rk_build_select(k, c, a, b);
        rk_value s2 = rk_build_select(k, c, a, b);
        a = s;
        b = s2;
    }
    rk_value z = rk_const_i32(k, 0);
    rk_store_global(k, out, z, a);
    rk_store_global(k, out, z, b);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

static void test_fixed_point_and_cap(void **state) {
    (void)state;
    rk_pass_stats st;
    rk_kernel *k = select_tower(3);
    assert_int_equal(rk_optimize(k, 1, &st), RK_OK);
    assert_int_equal(st.iterations, 1);
    assert_int_equal(st.constants_folded, 0);
    assert_true(op_sample_count(k, RK_OP_SELECT) > 0);
    assert_verifies(k);
    assert_int_equal(rk_optimize(k, 0, &st), RK_OK);
    assert_int_equal(op_sample_count(k, RK_OP_SELECT), 0);
    assert_int_equal(op_sample_count(k, RK_OP_ADD), 1);
    assert_true(st.iterations >= 2 && st.iterations <= 8);
    assert_verifies(k);
    rk_kernel_free(k);

    k = select_tower(3);
    assert_int_equal(rk_optimize(k, 0, &st), RK_OK);
    assert_int_equal(st.iterations, 3);                         /* cse; fold; nothing left */
    assert_int_equal(st.constants_folded, 3);
    assert_int_equal(op_sample_count(k, RK_OP_SELECT), 0);
    rk_kernel_free(k);

    /* nothing to do: one round */
    k = rk_kernel_new("idle");
    rk_value p = rk_add_param(k, "p", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value t = rk_build_thread_id(k, 0);
    rk_store_global(k, p, t, t);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_optimize(k, 5, &st), RK_OK);
    assert_int_equal(st.iterations, 1);
    assert_int_equal(st.constants_folded + st.common_subexpressions + st.dead_ops_removed, 0);
    assert_int_equal(rk_optimize(k, 0, NULL), RK_OK);
    rk_kernel_free(k);
}

/* Folded constants take fresh numbers and avoid parameter names. */
static void test_fresh_names(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("names");
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_add_param(k, "c5", RK_T_I32, NULL);
    rk_add_param(k, "c6", RK_T_I32, NULL);
    rk_value a = rk_const_i32(k, 20), b = rk_const_i32(k, 22);   /* %c1 %c2 */
    rk_value s = rk_build_add(k, a, b);                          /* %add3 */
    rk_value z = rk_const_i32(k, 0);                             /* %c4 */
    rk_store_global(k, out, z, s);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_optimize(k, 0, NULL), RK_OK);
    const rk_region *b0 = rk_kernel_body(k);
    const rk_op *d = rk_value_def(k, b0->ops[b0->nops - 1]->in[2]);
    char nb[RK_NAME_MAX];
    assert_string_equal(rk_value_name(k, d->out[0], nb), "c7");
    assert_int_equal(rk_attrs_get(&d->attrs, "value")->u.i, 42);
    assert_verifies(k);
    rk_kernel_free(k);
}

static void test_refusals(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("bad");
    rk_value x = rk_add_param(k, "x", RK_T_I32, NULL);
    rk_value f = rk_const_f32(k, 1.0f);
    rk_build_add(k, x, f);
    rk_pass_stats st = {1, 1, 1, 1};
    assert_int_equal(rk_optimize(k, 0, &st), RK_ERR_INVALID);
    assert_int_equal(st.iterations, 0);
    assert_non_null(strstr(rk_error_message(), "the builder failed"));
    rk_kernel_free(k);

    k = rk_kernel_new("open");
    rk_value y = rk_add_param(k, "y", RK_T_I32, NULL);
    rk_value c = rk_build_cmp(k, "lt", y, y);
    rk_if_begin(k, c);
    assert_int_equal(rk_optimize(k, 0, &st), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "still open"));
    rk_kernel_free(k);
    assert_int_equal(rk_optimize(NULL, 0, NULL), RK_ERR_INVALID);
}

/* An explicit pure = false attribute keeps an otherwise pure op. */
static void test_pure_override(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("pure");
    rk_value x = rk_add_param(k, "x", RK_T_I32, NULL);
    rk_value a = rk_build_add(k, x, x);
    rk_op_set_bool(k, rk_value_def(k, a), "pure", false);
    rk_value b = rk_build_add(k, x, x);
    (void)b;
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    rk_pass_stats st;
    assert_int_equal(rk_optimize(k, 0, &st), RK_OK);
    assert_int_equal(op_sample_count(k, RK_OP_ADD), 1);        /* the unmarked dead one goes */
    assert_int_equal(st.dead_ops_removed, 1);
    rk_kernel_free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_integer_kernels),
        cmocka_unit_test(test_integer_fold_table),
        cmocka_unit_test(test_float_folds),
        cmocka_unit_test(test_cast_folds),
        cmocka_unit_test(test_address_low_bits_fold),
        cmocka_unit_test(test_samples_keep_effects),
        cmocka_unit_test(test_unused_effects_stay),
        cmocka_unit_test(test_cse_scopes),
        cmocka_unit_test(test_cse_convergent),
        cmocka_unit_test(test_loop_body),
        cmocka_unit_test(test_fixed_point_and_cap),
        cmocka_unit_test(test_fresh_names),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_pure_override),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
