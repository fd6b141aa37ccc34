/* rocke — activations and the fused epilogue chain (see tile_epilogue.h):
 * the parser and name tags, the chain's kernel parameters, its IR per
 * element or vector of columns, and the double host model. Layer: tile. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocke/tile.h"
#include "rocke/tile_epilogue.h"
#include "../base/base_int.h"

#define LOG2E 1.4426950408889634

static const char *const act_names[RK_ACT__COUNT] = {"relu", "gelu", "silu", "sigmoid", "tanh"};

const char *rk_act_name(rk_act a) { return (unsigned)a < RK_ACT__COUNT ? act_names[a] : "?"; }

/* ---- activations ------------------------------------------------------------------ */
/* 2^(x * scale) */
static rk_value exp2_scaled(rk_kernel *k, rk_value x, double scale) {
    rk_value s = rk_const_f32(k, (float)scale);
    rk_value xs = rk_build_fmul(k, x, s);
    return rk_build_exp2(k, xs);
}

/* 1 + e^-x */
static rk_value one_plus_exp_neg(rk_kernel *k, rk_value x) {
    rk_value one = rk_const_f32(k, 1.0f);
    rk_value e = exp2_scaled(k, x, -LOG2E);
    return rk_build_fadd(k, one, e);
}

static rk_value act1(rk_kernel *k, rk_value x, void *ud) {
    rk_act a = *(const rk_act *)ud;
    switch (a) {
    case RK_ACT_RELU: {
        /* x < 0 ? 0 : x keeps NaN (maxnum would turn it into 0) */
        rk_value zero = rk_const_f32(k, 0.0f);
        rk_value neg = rk_build_fcmp(k, "olt", x, zero);
        return rk_build_select(k, neg, zero, x);
    }
    case RK_ACT_SIGMOID: {
        rk_value one = rk_const_f32(k, 1.0f);
        rk_value d = one_plus_exp_neg(k, x);
        return rk_build_fdiv(k, one, d);
    }
    case RK_ACT_SILU: {
        rk_value d = one_plus_exp_neg(k, x);
        return rk_build_fdiv(k, x, d);
    }
    case RK_ACT_GELU_TANH: {
        /* tanh(u) = 1 - 2 / (1 + e^(2u)), which saturates cleanly at both ends */
        rk_value xx = rk_build_fmul(k, x, x);
        rk_value x3 = rk_build_fmul(k, xx, x);
        rk_value c = rk_const_f32(k, 0.044715f);
        rk_value inner = rk_build_fma(k, x3, c, x);
        rk_value s2pi = rk_const_f32(k, 0.7978845608028654f);
        rk_value u = rk_build_fmul(k, inner, s2pi);
        rk_value e = exp2_scaled(k, u, 2.0 * LOG2E);
        rk_value one = rk_const_f32(k, 1.0f);
        rk_value den = rk_build_fadd(k, one, e);
        rk_value two = rk_const_f32(k, 2.0f);
        rk_value q = rk_build_fdiv(k, two, den);
        rk_value th = rk_build_fsub(k, one, q);
        rk_value half = rk_const_f32(k, 0.5f);
        rk_value hx = rk_build_fmul(k, x, half);
        return rk_build_fma(k, hx, th, hx);
    }
    case RK_ACT_TANH:
        return rk_build_tanh(k, x);
    case RK_ACT__COUNT: break;
    }
    rk_bug("rk_tile_act: activation out of range");
}

rk_value rk_tile_act(rk_kernel *k, rk_act a, rk_value x) { return rk_tile_map(k, x, act1, &a); }

double rk_act_ref(rk_act a, double x) {
    switch (a) {
    case RK_ACT_RELU: return x < 0 ? 0.0 : x;
    case RK_ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case RK_ACT_SILU: return x / (1.0 + exp(-x));
    case RK_ACT_GELU_TANH: return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case RK_ACT_TANH: return tanh(x);
    case RK_ACT__COUNT: break;
    }
    return NAN;
}

/* ---- parsing and names -------------------------------------------------------------- */
static const char *const kind_names[RK_EPI__COUNT] = {"bias", "bias_row", "scale", "clamp", "act", "add", "mul"};
static const char legal_steps[] = "bias, bias_row, scale, clamp(LO:HI), relu, gelu, silu, sigmoid, tanh, add, mul";

static rk_status parse_step(const char *s, size_t n, rk_epi_step *out) {
    memset(out, 0, sizeof *out);
    char w[64];
    if (n == 0 || n >= sizeof w)
        return rk_fail(RK_ERR_INVALID, "--fuse: empty or over-long step '%.*s' (legal: %s)", (int)n, s, legal_steps);
    memcpy(w, s, n);
    w[n] = 0;
    for (int a = 0; a < RK_ACT__COUNT; a++)
        if (strcmp(w, act_names[a]) == 0) {
            out->kind = RK_EPI_ACT;
            out->act = (rk_act)a;
            return RK_OK;
        }
    static const rk_epi_kind plain[] = {RK_EPI_BIAS, RK_EPI_BIAS_ROW, RK_EPI_SCALE, RK_EPI_ADD, RK_EPI_MUL};
    for (size_t i = 0; i < RK_COUNTOF(plain); i++)
        if (strcmp(w, kind_names[plain[i]]) == 0) {
            out->kind = plain[i];
            return RK_OK;
        }
    if (strncmp(w, "clamp(", 6) == 0 && w[n - 1] == ')') {
        char *end;
        double lo = strtod(w + 6, &end);
        if (*end == ':') {
            char *end2;
            double hi = strtod(end + 1, &end2);
            if (end2 == w + n - 1 && end != w + 6 && end2 != end + 1 && isfinite(lo) && isfinite(hi) && lo <= hi &&
                fabs(lo) <= 3.4e38 && fabs(hi) <= 3.4e38) {
                out->kind = RK_EPI_CLAMP;
                out->lo = (float)lo;
                out->hi = (float)hi;
                return RK_OK;
            }
        }
        return rk_fail(RK_ERR_INVALID, "--fuse: '%s' must be clamp(LO:HI) with finite LO <= HI, e.g. clamp(-1:1)", w);
    }
    return rk_fail(RK_ERR_INVALID, "--fuse: unknown step '%s' (legal: %s)", w, legal_steps);
}

rk_status rk_epi_parse(const char *text, rk_epi_chain *out) {
    memset(out, 0, sizeof *out);
    if (!text || !text[0] || strcmp(text, "none") == 0) return RK_OK;
    const char *p = text;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (out->n == RK_EPI_MAX_STEPS)
            return rk_fail(RK_ERR_INVALID, "--fuse: at most %d steps ('%s')", RK_EPI_MAX_STEPS, text);
        rk_status st = parse_step(p, n, &out->s[out->n]);
        if (st) {
            memset(out, 0, sizeof *out);
            return st;
        }
        out->n++;
        if (!e) break;
        p = e + 1;
    }
    return RK_OK;
}

static const char *step_word(const rk_epi_step *s) {
    return s->kind == RK_EPI_ACT ? rk_act_name(s->act) : kind_names[s->kind];
}

void rk_epi_format(const rk_epi_chain *c, char *buf, size_t n) {
    size_t at = 0;
    if (n) buf[0] = 0;
    for (uint32_t i = 0; i < c->n && at < n; i++) {
        const rk_epi_step *s = &c->s[i];
        int w = s->kind == RK_EPI_CLAMP
                    ? snprintf(buf + at, n - at, "%sclamp(%.9g:%.9g)", i ? "," : "", (double)s->lo, (double)s->hi)
                    : snprintf(buf + at, n - at, "%s%s", i ? "," : "", step_word(s));
        if (w < 0) return;
        at += (size_t)w;
    }
}

/* A number as letters and digits: -1.5 -> m1p5, 1e-05 -> 1em05. */
static void tag_num(char *buf, size_t n, double v) {
    char t[40];
    snprintf(t, sizeof t, "%.9g", v);
    size_t j = 0;
    for (size_t i = 0; t[i] && j + 2 < n; i++) {
        char ch = t[i];
        if (ch == '-') buf[j++] = 'm';
        else if (ch == '.') buf[j++] = 'p';
        else if (ch == '+') continue;
        else buf[j++] = ch;
    }
    buf[j] = 0;
}

void rk_epi_tag(const rk_epi_chain *c, char *buf, size_t n) {
    size_t at = 0;
    if (n) buf[0] = 0;
    for (uint32_t i = 0; i < c->n && at < n; i++) {
        const rk_epi_step *s = &c->s[i];
        int w;
        if (s->kind == RK_EPI_CLAMP) {
            char lo[24], hi[24];
            tag_num(lo, sizeof lo, s->lo);
            tag_num(hi, sizeof hi, s->hi);
            w = snprintf(buf + at, n - at, "%sclamp%s_%s", i ? "_" : "_f", lo, hi);
        } else {
            w = snprintf(buf + at, n - at, "%s%s", i ? "_" : "_f", step_word(s));
        }
        if (w < 0) return;
        at += (size_t)w;
    }
}

/* ---- parameters ----------------------------------------------------------------------- */
static void name_param(rk_epi_param *p, const char *base, uint32_t nth) {
    if (nth) snprintf(p->name, sizeof p->name, "%s%u", base, nth);
    else snprintf(p->name, sizeof p->name, "%s", base);
}

uint32_t rk_epi_params(const rk_epi_chain *c, rk_scalar operand_type, rk_epi_param *out) {
    uint32_t n = 0, seen[RK_EPI__COUNT] = {0}, nd = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        const rk_epi_step *s = &c->s[i];
        rk_epi_param *p = &out[n];
        memset(p, 0, sizeof *p);
        p->step = i;
        switch (s->kind) {
        case RK_EPI_BIAS: case RK_EPI_BIAS_ROW:
            name_param(p, s->kind == RK_EPI_BIAS ? "Bias" : "BiasRow", seen[s->kind]++);
            p->ptr = true;
            p->type = operand_type;
            n++;
            break;
        case RK_EPI_SCALE:
            name_param(p, "alpha", seen[s->kind]++);
            p->type = RK_S_F32;
            n++;
            break;
        case RK_EPI_ADD: case RK_EPI_MUL:
            snprintf(p->name, sizeof p->name, "D%u", nd);
            p->ptr = true;
            p->type = operand_type;
            rk_epi_param *q = &out[n + 1];
            memset(q, 0, sizeof *q);
            q->step = i;
            snprintf(q->name, sizeof q->name, "ldd%u", nd);
            q->type = RK_S_I32;
            nd++;
            n += 2;
            break;
        case RK_EPI_CLAMP: case RK_EPI_ACT: break;
        case RK_EPI__COUNT: break;
        }
    }
    return n;
}

void rk_tile_epi_add_params(rk_kernel *k, const rk_epi_chain *c, rk_scalar operand_type, rk_epi_args *out) {
    memset(out, 0, sizeof *out);
    out->chain = c;
    rk_epi_param ps[RK_EPI_MAX_PARAMS];
    uint32_t n = rk_epi_params(c, operand_type, ps);
    for (uint32_t i = 0; i < n; i++) {
        rk_param_abi abi = {.noalias = true, .readonly = true};
        rk_type t = ps[i].ptr ? rk_type_ptr(k, (rk_type){ps[i].type}, RK_AS_GLOBAL) : (rk_type){ps[i].type};
        out->p[i] = rk_add_param(k, ps[i].name, t, ps[i].ptr ? &abi : NULL);
    }
}

/* ---- applying it ----------------------------------------------------------------------- */
static uint32_t width(rk_kernel *k, rk_value x) {
    return rk_type_count(k, rk_value_type(k, x));
}

/* f32 of ptr[idx], with idx (i64) replaced by 0 where !valid. */
static rk_value load_f32(rk_kernel *k, rk_value ptr, rk_value idx, rk_value valid) {
    rk_value zero = rk_const_i64(k, 0);
    rk_value safe = rk_build_select(k, valid, idx, zero);
    rk_value v = rk_load_global(k, ptr, safe, 1);
    return rk_tile_to_f32(k, v);
}

/* n consecutive elements ptr[base + e] as f32 (a vector when n > 1). */
static rk_value load_run(rk_kernel *k, rk_value ptr, rk_value base, uint32_t n, rk_value valid) {
    rk_value e[64];
    RK_ASSERT(n <= RK_COUNTOF(e), "epilogue: vector wider than 64");
    for (uint32_t i = 0; i < n; i++) {
        rk_value off = rk_const_i64(k, i);
        rk_value at = i ? rk_build_add(k, base, off) : base;
        e[i] = load_f32(k, ptr, at, valid);
    }
    return n == 1 ? e[0] : rk_build_vpack(k, e, n);
}

static rk_value wide(rk_kernel *k, rk_value v) { return rk_build_sext(k, v, RK_T_I64); }

typedef struct clampv { float lo, hi; } clampv;
static rk_value clamp1(rk_kernel *k, rk_value x, void *ud) {
    const clampv *c = ud;
    rk_value lo = rk_const_f32(k, c->lo);
    rk_value hi = rk_const_f32(k, c->hi);
    rk_value a = rk_build_fmax(k, x, lo);
    return rk_build_fmin(k, a, hi);
}

rk_value rk_tile_epi_apply(rk_kernel *k, const rk_epi_args *a, rk_value x, rk_value row, rk_value col,
                           rk_value valid) {
    const rk_epi_chain *c = a->chain;
    uint32_t n = width(k, x), pi = 0;
    rk_value row64 = {0}, col64 = {0};
    for (uint32_t i = 0; i < c->n; i++) {
        const rk_epi_step *s = &c->s[i];
        switch (s->kind) {
        case RK_EPI_BIAS: {
            if (!col64.id) col64 = wide(k, col);
            rk_value b = load_run(k, a->p[pi++], col64, n, valid);
            x = rk_tile_add(k, x, b);
            break;
        }
        case RK_EPI_BIAS_ROW: {
            if (!row64.id) row64 = wide(k, row);
            rk_value b = load_f32(k, a->p[pi++], row64, valid);
            rk_value bb = rk_tile_bcast(k, b, x);
            x = rk_tile_add(k, x, bb);
            break;
        }
        case RK_EPI_SCALE: {
            rk_value al = rk_tile_bcast(k, a->p[pi++], x);
            x = rk_tile_mul(k, x, al);
            break;
        }
        case RK_EPI_CLAMP: {
            clampv cv = {s->lo, s->hi};
            x = rk_tile_map(k, x, clamp1, &cv);
            break;
        }
        case RK_EPI_ACT:
            x = rk_tile_act(k, s->act, x);
            break;
        case RK_EPI_ADD: case RK_EPI_MUL: {
            if (!row64.id) row64 = wide(k, row);
            if (!col64.id) col64 = wide(k, col);
            rk_value ptr = a->p[pi++];
            rk_value ldd = wide(k, a->p[pi++]);
            rk_value rowoff = rk_build_mul(k, row64, ldd);
            rk_value at = rk_build_add(k, rowoff, col64);
            rk_value d = load_run(k, ptr, at, n, valid);
            x = s->kind == RK_EPI_ADD ? rk_tile_add(k, x, d) : rk_tile_mul(k, x, d);
            break;
        }
        case RK_EPI__COUNT: break;
        }
    }
    return x;
}

double rk_epi_ref(const rk_epi_chain *c, double x, const double *operand) {
    for (uint32_t i = 0; i < c->n; i++) {
        const rk_epi_step *s = &c->s[i];
        switch (s->kind) {
        case RK_EPI_BIAS: case RK_EPI_BIAS_ROW: case RK_EPI_ADD: x += operand[i]; break;
        case RK_EPI_SCALE: case RK_EPI_MUL: x *= operand[i]; break;
        case RK_EPI_CLAMP: x = x < s->lo ? s->lo : x > s->hi ? s->hi : x; break;
        case RK_EPI_ACT: x = rk_act_ref(s->act, x); break;
        case RK_EPI__COUNT: break;
        }
    }
    return x;
}
