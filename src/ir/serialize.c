/* rocke — the canonical ckdsl.ir v1 text of a kernel (reference §6); grammar
 * and choices in docs/ir_text.md. Layer: ir. */
#include "text_int.h"

static void put_map(rk_buf *b, const rk_attr *items, uint32_t n);

static void put_indent(rk_buf *b, uint32_t n) {
    static const char spaces[] = "                                ";
    while (n > 32) { ir_put(b, spaces, 32); n -= 32; }
    ir_put(b, spaces, n);
}

/* Keys the parser reads bare are written bare; anything else (never made
 * by rocke's builders, but legal in the model) is quoted so it round-trips. */
static void put_key(rk_buf *b, const char *key) {
    if (ir_is_word(key, strlen(key))) ir_puts(b, key);
    else ir_put_quoted(b, key);
}

static void put_val(rk_buf *b, const rk_attr_val *v) {
    char num[32];
    switch (v->kind) {
    case RK_AK_BOOL: ir_puts(b, v->u.b ? "b:true" : "b:false"); return;
    case RK_AK_INT: ir_put(b, "i:", 2); ir_put_i64(b, v->u.i); return;
    case RK_AK_FLOAT: ir_put(b, "f:", 2); ir_put(b, num, (size_t)rk_fmt_double_repr(num, v->u.f)); return;
    case RK_AK_STR: ir_put(b, "s:", 2); ir_put_quoted(b, v->u.s); return;
    case RK_AK_LIST:
        ir_put(b, "l:[ ", 4);
        for (uint32_t i = 0; i < v->n; i++) {
            if (i) ir_put(b, ", ", 2);
            put_val(b, &v->u.list[i]);
        }
        ir_put(b, " ]", 2);
        return;
    case RK_AK_MAP: put_map(b, v->u.map, v->n); return;
    }
}

static void put_map(rk_buf *b, const rk_attr *items, uint32_t n) {
    const rk_attr *local[16];
    const rk_attr **o = ir_sorted_attrs(items, n, local, 16);
    if (!o) { b->oom = true; return; }
    ir_put(b, "{ ", 2);
    for (uint32_t i = 0; i < n; i++) {
        if (i) ir_put(b, ", ", 2);
        put_key(b, o[i]->key);
        ir_put(b, " = ", 3);
        put_val(b, &o[i]->val);
    }
    ir_put(b, " }", 2);
    ir_sorted_free(o, local, n);
}

static void put_type(rk_buf *b, const rk_kernel *k, rk_type t) { ir_puts(b, rk_type_name(k, t)); }

static void put_region(rk_buf *b, const rk_kernel *k, const rk_region *r, uint32_t indent);

static void put_op(rk_buf *b, const rk_kernel *k, const rk_op *op, uint32_t indent) {
    put_indent(b, indent);
    for (uint32_t i = 0; i < op->nout; i++) {
        if (i) ir_put(b, ", ", 2);
        ir_put_value(b, k, op->out[i]);
        ir_put(b, " : ", 3);
        put_type(b, k, rk_value_type(k, op->out[i]));
    }
    if (op->nout) ir_put(b, " = ", 3);
    ir_puts(b, rk_opcode_name(op->code));
    ir_put(b, " ( ", 3);
    for (uint32_t i = 0; i < op->nin; i++) {
        if (i) ir_put(b, ", ", 2);
        ir_put_value(b, k, op->in[i]);
    }
    ir_put(b, " )", 2);
    if (op->attrs.n) {
        ir_putc(b, ' ');
        put_map(b, op->attrs.items, op->attrs.n);
    }
    if (op->loc) {
        ir_put(b, " @loc ", 6);
        ir_put_quoted(b, op->loc);
    }
    ir_putc(b, '\n');
    for (uint32_t i = 0; i < op->nreg; i++) put_region(b, k, &op->regions[i], indent + 2);
}

static void put_region(rk_buf *b, const rk_kernel *k, const rk_region *r, uint32_t indent) {
    put_indent(b, indent);
    ir_put(b, "region @", 8);
    ir_puts(b, r->label ? r->label : "");
    ir_put(b, " {\n", 3);
    for (uint32_t i = 0; i < r->nops; i++) put_op(b, k, r->ops[i], indent + 2);
    put_indent(b, indent);
    ir_put(b, "}\n", 2);
}

char *rk_serialize(const rk_kernel *k) {
    rk_buf b;
    rk_buf_init(&b);
    /* one allocation for typical kernels (about 80 bytes per value) */
    rk_buf_reserve(&b, 4096 + (size_t)k->nvals * 80);
    ir_puts(&b, "ckdsl.ir v1\nkernel @");
    ir_puts(&b, k->name);
    ir_put(&b, " {\n", 3);
    if (k->attrs.n) {
        ir_puts(&b, "  attrs ");
        put_map(&b, k->attrs.items, k->attrs.n);
        ir_putc(&b, '\n');
    }
    ir_puts(&b, "  params {\n");
    for (uint32_t i = 0; i < k->nparams; i++) {
        const rk_param *p = &k->params[i];
        ir_puts(&b, "    ");
        ir_put_value(&b, k, p->value);
        ir_put(&b, " : ", 3);
        put_type(&b, k, p->type);
        if (p->attrs.n) {
            ir_putc(&b, ' ');
            put_map(&b, p->attrs.items, p->attrs.n);
        }
        ir_putc(&b, '\n');
    }
    ir_puts(&b, "  }\n");
    put_region(&b, k, &k->body, 2);
    ir_put(&b, "}\n", 2);
    char *s = ir_buf_finish(&b);
    if (!s) rk_fail(RK_ERR_NOMEM, "out of memory serializing kernel '%s'", k->name);
    return s;
}
