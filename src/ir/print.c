/* rocke — the MLIR-style human dump of a kernel (reference §5.3), never
 * parsed back. Layer: ir. */
#include "text_int.h"

static void put_indent(rk_buf *b, uint32_t n) {
    static const char spaces[] = "                                ";
    while (n > 32) { ir_put(b, spaces, 32); n -= 32; }
    ir_put(b, spaces, n);
}

static void put_float(rk_buf *b, double f) {
    char num[32];
    ir_put(b, num, (size_t)rk_fmt_double_repr(num, f));
}

/* Python's repr() of a str: single quotes unless the text holds a ' and no ". */
static void put_pystr(rk_buf *b, const char *s) {
    char q = (strchr(s, '\'') && !strchr(s, '"')) ? '"' : '\'';
    ir_putc(b, q);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\' || c == (unsigned char)q) { ir_putc(b, '\\'); ir_putc(b, (char)c); }
        else if (c == '\n') ir_put(b, "\\n", 2);
        else if (c == '\r') ir_put(b, "\\r", 2);
        else if (c == '\t') ir_put(b, "\\t", 2);
        else if (c < 0x20 || c == 0x7f) rk_buf_printf(b, "\\x%02x", c);
        else ir_putc(b, (char)c);
    }
    ir_putc(b, q);
}

/* Python's repr() of a value nested in a list or dict. Dict keys are sorted
 * (Python keeps insertion order) so a parsed kernel prints like the original. */
static void put_py(rk_buf *b, const rk_attr_val *v) {
    switch (v->kind) {
    case RK_AK_BOOL: ir_puts(b, v->u.b ? "True" : "False"); return;
    case RK_AK_INT: ir_put_i64(b, v->u.i); return;
    case RK_AK_FLOAT: put_float(b, v->u.f); return;
    case RK_AK_STR: put_pystr(b, v->u.s); return;
    case RK_AK_LIST:
        ir_putc(b, '[');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i) ir_put(b, ", ", 2);
            put_py(b, &v->u.list[i]);
        }
        ir_putc(b, ']');
        return;
    case RK_AK_MAP: {
        const rk_attr *local[16];
        const rk_attr **o = ir_sorted_attrs(v->u.map, v->n, local, 16);
        if (!o) { b->oom = true; return; }
        ir_putc(b, '{');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i) ir_put(b, ", ", 2);
            put_pystr(b, o[i]->key);
            ir_put(b, ": ", 2);
            put_py(b, &o[i]->val);
        }
        ir_putc(b, '}');
        ir_sorted_free(o, local, v->n);
        return;
    }
    }
}

/* A top-level attribute value: strings double-quoted, the rest as Python. */
static void put_attr(rk_buf *b, const rk_attr_val *v) {
    if (v->kind == RK_AK_STR) ir_put_quoted(b, v->u.s);
    else put_py(b, v);
}

static void put_region(rk_buf *b, const rk_kernel *k, const rk_region *r, uint32_t indent);

static void put_op(rk_buf *b, const rk_kernel *k, const rk_op *op, uint32_t indent) {
    put_indent(b, indent);
    for (uint32_t i = 0; i < op->nout; i++) {
        if (i) ir_put(b, ", ", 2);
        ir_put_value(b, k, op->out[i]);
    }
    if (op->nout) ir_put(b, " = ", 3);
    ir_puts(b, rk_opcode_name(op->code));
    for (uint32_t i = 0; i < op->nin; i++) {
        ir_puts(b, i ? ", " : " ");
        ir_put_value(b, k, op->in[i]);
    }
    if (op->attrs.n) {
        const rk_attr *local[16];
        const rk_attr **o = ir_sorted_attrs(op->attrs.items, op->attrs.n, local, 16);
        if (!o) { b->oom = true; return; }
        ir_put(b, " {", 2);
        for (uint32_t i = 0; i < op->attrs.n; i++) {
            if (i) ir_put(b, ", ", 2);
            ir_puts(b, o[i]->key);
            ir_put(b, " = ", 3);
            put_attr(b, &o[i]->val);
        }
        ir_putc(b, '}');
        ir_sorted_free(o, local, op->attrs.n);
    }
    for (uint32_t i = 0; i < op->nout; i++) {
        ir_puts(b, i ? ", " : " : ");
        ir_puts(b, rk_type_name(k, rk_value_type(k, op->out[i])));
    }
    ir_putc(b, '\n');
    for (uint32_t i = 0; i < op->nreg; i++) put_region(b, k, &op->regions[i], indent + 2);
}

static void put_region(rk_buf *b, const rk_kernel *k, const rk_region *r, uint32_t indent) {
    put_indent(b, indent);
    ir_puts(b, "region '");
    ir_puts(b, r->label ? r->label : "");
    ir_puts(b, "' {\n");
    for (uint32_t i = 0; i < r->nops; i++) put_op(b, k, r->ops[i], indent + 2);
    put_indent(b, indent);
    ir_puts(b, "}\n");
}

char *rk_print(const rk_kernel *k) {
    rk_buf b;
    rk_buf_init(&b);
    rk_buf_reserve(&b, 4096 + (size_t)k->nvals * 64);
    ir_puts(&b, "kernel @");
    ir_puts(&b, k->name);
    ir_putc(&b, '(');
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (i) ir_put(&b, ", ", 2);
        ir_put_value(&b, k, k->params[i].value);
        ir_put(&b, ": ", 2);
        ir_puts(&b, rk_type_name(k, k->params[i].type));
    }
    ir_puts(&b, ") {\n");
    for (uint32_t i = 0; i < k->body.nops; i++) put_op(&b, k, k->body.ops[i], 2);
    ir_putc(&b, '}');
    char *s = ir_buf_finish(&b);
    if (!s) rk_fail(RK_ERR_NOMEM, "out of memory printing kernel '%s'", k->name);
    return s;
}
