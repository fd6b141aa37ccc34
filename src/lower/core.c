/* rocke — rk_lower_llvm: verify against the target, pick the vendor, lay out
 * LDS, walk the body, then assemble the module in a fixed order: datalayout
 * and triple, the LDS pool, the used declarations (fixed table order), the
 * kernel, its attribute group, metadata, the vendor's tail. Also the LLVM
 * flavor names and their resolution. Layer: lower. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "lower_int.h"

/* ---- flavors ------------------------------------------------------------------------------ */
static const char *const flavor_names[] = {"llvm20", "llvm22", "llvm23"};
_Static_assert(RK_COUNTOF(flavor_names) == RK_LLVM23 + 1, "one name per flavor");

const char *rk_llvm_flavor_name(rk_llvm_flavor f) {
    return (unsigned)f < RK_COUNTOF(flavor_names) ? flavor_names[f] : "?";
}

/* Built once (pthread_once): concurrent callers must not write the buffer
 * another thread is reading, even with the same bytes. */
static char flavor_list[64];
static pthread_once_t flavor_list_once = PTHREAD_ONCE_INIT;

static void fill_flavor_list(void) {
    size_t off = 0;
    for (size_t i = 0; i < RK_COUNTOF(flavor_names); i++)
        off += (size_t)snprintf(flavor_list + off, sizeof flavor_list - off, "%s%s%s", i ? ", " : "",
                                flavor_names[i], i == RK_LLVM_FLAVOR_DEFAULT ? " (default)" : "");
}

const char *rk_llvm_flavor_names(void) {
    pthread_once(&flavor_list_once, fill_flavor_list);
    return flavor_list;
}

rk_status rk_llvm_flavor_parse(const char *name, rk_llvm_flavor *out) {
    for (size_t i = 0; name && i < RK_COUNTOF(flavor_names); i++)
        if (strcmp(name, flavor_names[i]) == 0) {
            if (out) *out = (rk_llvm_flavor)i;
            return RK_OK;
        }
    return rk_fail(RK_ERR_INVALID, "unknown LLVM flavor '%s' (legal: %s)", name ? name : "(null)",
                   rk_llvm_flavor_names());
}

rk_status rk_llvm_flavor_resolve(const char *explicit_or_NULL, rk_llvm_flavor *out) {
    if (explicit_or_NULL) return rk_llvm_flavor_parse(explicit_or_NULL, out);
    const char *env = getenv("ROCKE_LLVM_FLAVOR");
    if (env && *env) {
        if (rk_llvm_flavor_parse(env, out) != RK_OK)
            return rk_fail(RK_ERR_INVALID, "ROCKE_LLVM_FLAVOR='%s' is not an LLVM flavor (legal: %s)", env,
                           rk_llvm_flavor_names());
        return RK_OK;
    }
    if (out) *out = RK_LLVM_FLAVOR_DEFAULT;
    return RK_OK;
}

/* ---- the op switch ------------------------------------------------------------------------------ */
void lw_lower_op(lw_ctx *cx, const rk_op *op) {
    switch (op->code) {
    LW_FLOW_OPS(LW_CASE) lw_lower_flow(cx, op); break;
    LW_GENERIC_OPS(LW_CASE) lw_lower_generic(cx, op); break;
    LW_VENDOR_OPS(LW_CASE) cx->vd->lower_op(cx, op); break;
    case RK_OP_INVALID: case RK_OP__COUNT: rk_bug("lowering an invalid op (the verifier rejects it)");
    }
}

/* ---- the kernel signature ---------------------------------------------------------------------- */
static bool check_params(lw_ctx *cx) {
    for (uint32_t i = 0; i < rk_kernel_nparams(cx->k); i++) {
        const rk_param *p = rk_kernel_param(cx->k, i);
        const rk_attrs *a = &p->attrs;
        bool is_ptr = rk_type_kind_of(cx->k, p->type) == RK_TK_PTR;
        int64_t al = 0, deref = 0;
        rk_attrs_int(a, "align", &al);
        rk_attrs_int(a, "dereferenceable", &deref);
        bool any = rk_attrs_bool(a, "noalias", false) || rk_attrs_bool(a, "readonly", false) ||
                   rk_attrs_bool(a, "writeonly", false) || rk_attrs_bool(a, "nonnull", false) || al || deref;
        if (!is_ptr && any)
            return lw_error(cx, NULL, RK_ERR_INVALID, "parameter '%s' is %s; ABI attributes apply to pointers only",
                            p->name, rk_type_name(cx->k, p->type));
        if (rk_attrs_bool(a, "readonly", false) && rk_attrs_bool(a, "writeonly", false))
            return lw_error(cx, NULL, RK_ERR_INVALID,
                            "parameter '%s' is both readonly and writeonly (LLVM rejects the pair); keep one",
                            p->name);
        if (al < 0 || al > (1ll << 32) || (al & (al - 1)))
            return lw_error(cx, NULL, RK_ERR_INVALID, "parameter '%s': align %lld is not a power of two in [1, 2^32]",
                            p->name, (long long)al);
        if (deref < 0)
            return lw_error(cx, NULL, RK_ERR_INVALID, "parameter '%s': dereferenceable %lld is negative", p->name,
                            (long long)deref);
    }
    return true;
}

static void signature(lw_ctx *cx, rk_buf *b) {
    rk_buf_printf(b, "define %s void @%s(", cx->vd->kernel_cc, rk_kernel_name(cx->k));
    for (uint32_t i = 0; i < rk_kernel_nparams(cx->k); i++) {
        const rk_param *p = rk_kernel_param(cx->k, i);
        const rk_attrs *a = &p->attrs;
        if (i) rk_buf_puts(b, ", ");
        const char *own = cx->vd->param_type ? cx->vd->param_type(cx, p) : NULL;
        if (own) {
            rk_buf_printf(b, "%s %s", own, lw_val(cx, p->value));
            continue;
        }
        rk_buf_puts(b, lw_ty(cx, p->type));
        if (rk_type_kind_of(cx->k, p->type) == RK_TK_PTR) {
            /* fixed order: noalias readonly writeonly nocapture nonnull align dereferenceable */
            static const char *const flags[] = {"noalias", "readonly", "writeonly"};
            for (size_t f = 0; f < RK_COUNTOF(flags); f++)
                if (rk_attrs_bool(a, flags[f], false)) rk_buf_printf(b, " %s", flags[f]);
            if (rk_attrs_bool(a, "nocapture", true)) rk_buf_puts(b, " nocapture");
            if (rk_attrs_bool(a, "nonnull", false)) rk_buf_puts(b, " nonnull");
            int64_t v;
            if (rk_attrs_int(a, "align", &v) && v > 0) rk_buf_printf(b, " align %lld", (long long)v);
            if (rk_attrs_int(a, "dereferenceable", &v) && v > 0) rk_buf_printf(b, " dereferenceable(%lld)", (long long)v);
        }
        rk_buf_printf(b, " %s", lw_val(cx, p->value));
    }
    rk_buf_puts(b, ") #0 {\n");
}

/* ---- module assembly --------------------------------------------------------------------------- */
static int decl_cmp(const void *x, const void *y) {
    const lw_decl *a = x, *b = y;
    if (a->order != b->order) return a->order < b->order ? -1 : 1;
    return strcmp(a->line, b->line);
}

/* Head and tail are built small; the body buffer becomes the output: resized
 * to the exact size (strlen + 1, as rk_string_free expects; for a large
 * block realloc remaps pages instead of copying them), the body slid up and
 * the head and tail copied in. The body text is never copied to new pages. */
static char *assemble(lw_ctx *cx) {
    rk_buf h, t;
    rk_buf_init(&h);
    rk_buf_init(&t);
    rk_buf_printf(&h, "target datalayout = \"%s\"\ntarget triple = \"%s\"\n\n", cx->vd->datalayout(cx->flavor),
                  cx->t->triple);
    if (cx->pool_bytes) {
        lw_pool_global(cx, &h);
        rk_buf_putc(&h, '\n');
    }
    if (cx->ndecls) {
        qsort(cx->decls, cx->ndecls, sizeof *cx->decls, decl_cmp);
        for (uint32_t i = 0; i < cx->ndecls; i++) {
            rk_buf_puts(&h, cx->decls[i].line);
            rk_buf_putc(&h, '\n');
        }
        rk_buf_putc(&h, '\n');
    }
    signature(cx, &h);
    rk_buf_puts(&t, "}\n\nattributes #0 = { ");
    cx->vd->fn_attrs(cx, &t);
    rk_buf_puts(&t, " }\n");
    static const char *const md_text[LW_MD__COUNT] = {"!0 = !{i32 1}", "!1 = !{}"};
    bool any = false;
    for (int i = 0; i < LW_MD__COUNT; i++)
        if (cx->md_used[i]) {
            if (!any) rk_buf_putc(&t, '\n');
            any = true;
            rk_buf_puts(&t, md_text[i]);
            rk_buf_putc(&t, '\n');
        }
    if (cx->vd->module_tail) cx->vd->module_tail(cx, &t);
    char *out = NULL;
    if (!h.oom && !t.oom && !cx->body.oom && !cx->scratch.oom) {
        size_t n = h.len + cx->body.len + t.len;
        out = rk_realloc(cx->body.data, cx->body.cap, n + 1);
        if (out) {
            memmove(out + h.len, out, cx->body.len);
            memcpy(out, h.data, h.len);
            memcpy(out + h.len + cx->body.len, t.data, t.len);
            out[n] = '\0';
            rk_buf_init(&cx->body);   /* the block is the output now */
        }
    }
    rk_buf_free(&h);
    rk_buf_free(&t);
    return out;
}

/* ---- entry ---------------------------------------------------------------------------------------- */
static rk_status verify_for(const rk_kernel *k, const rk_target *t) {
    rk_diags d;
    rk_diags_init(&d);
    rk_status s = rk_target_verify(k, t, &d);
    if (s == RK_OK && d.nerrors == 0) {
        rk_diags_free(&d);
        return RK_OK;
    }
    if (d.nerrors == 0) {       /* out of memory, already reported */
        rk_diags_free(&d);
        return s;
    }
    char *text = rk_diags_text(&d);
    s = rk_fail(RK_ERR_VERIFY, "kernel '%s' is not valid for %s (%u error%s):\n%s", rk_kernel_name(k), t->name,
                d.nerrors, d.nerrors == 1 ? "" : "s", text ? text : "(out of memory formatting diagnostics)");
    rk_string_free(text);
    rk_diags_free(&d);
    return s;
}

static rk_status run(lw_ctx *cx, char **out) {
    cx->ntext = cx->k->nvals;
    cx->nttext = RK_TYPE_FIRST_COMPOSITE + cx->k->ntypes;
    cx->vtext = rk_arena_zalloc(&cx->arena, cx->ntext * sizeof *cx->vtext);
    cx->ttext = rk_arena_zalloc(&cx->arena, cx->nttext * sizeof *cx->ttext);
    cx->smem_agg = rk_arena_zalloc(&cx->arena, cx->nttext * sizeof *cx->smem_agg);
    if (!cx->vtext || !cx->ttext || !cx->smem_agg)
        return rk_fail(RK_ERR_NOMEM, "out of memory lowering kernel '%s'", cx->k->name);
    if (check_params(cx) && cx->vd->check_kernel(cx) && lw_pool_layout(cx)) {
        /* about 60 bytes of text per value: one reservation instead of a
         * dozen doublings of a many-megabyte buffer */
        rk_buf_reserve(&cx->body, (size_t)cx->k->nvals * 64u + 4096u);
        lw_block(cx, "entry");
        lw_lower_region(cx, rk_kernel_body(cx->k));
        if (!cx->terminated) lw_ins(cx, "ret void");
    }
    if (!lw_ok(cx))
        return rk_fail(cx->err, "lowering kernel '%s' for %s: %s", cx->k->name, cx->t->name, cx->msg);
    *out = assemble(cx);
    if (!*out) return rk_fail(RK_ERR_NOMEM, "out of memory lowering kernel '%s'", cx->k->name);
    return RK_OK;
}

static void fill_info(const lw_ctx *cx, rk_lower_info *info) {
    if (!info) return;
    *info = (rk_lower_info){.lds_pool_bytes = cx->pool_bytes, .lds_pool_align = cx->pool_bytes ? cx->pool_align : 0,
                            .dyn_smem_min = lw_pool_dynamic(cx) ? cx->pool_bytes : 0};
}

/* The checks both entry points make before a context exists; *vd on success. */
static rk_status begin(const rk_kernel *k, const rk_target *t, const char *who, const lw_vendor **vd) {
    if (!k || !t) return rk_fail(RK_ERR_INVALID, "%s: %s is NULL", who, k ? "the target" : "the kernel");
    if (strncmp(rk_kernel_name(k), "llvm.", 5) == 0)
        return rk_fail(RK_ERR_INVALID, "kernel name '%s' is reserved: LLVM keeps 'llvm.' for intrinsics",
                       rk_kernel_name(k));
    rk_status s = verify_for(k, t);
    if (s != RK_OK) return s;
    if (!(*vd = lw_vendor_for(t)))
        return rk_fail(RK_ERR_UNSUPPORTED, "no LLVM lowering for %s (%s) yet; AMD targets lower today: gfx90a, gfx942, gfx950",
                       t->name, t->family);
    return RK_OK;
}

rk_status rk_lower_llvm_ex(const rk_kernel *k, const rk_target *t, rk_llvm_flavor f, char **out_ll,
                           rk_lower_info *info) {
    if (info) *info = (rk_lower_info){0};
    if (!out_ll) return rk_fail(RK_ERR_INVALID, "rk_lower_llvm: out_ll is NULL");
    *out_ll = NULL;
    if (k && t && (unsigned)f > RK_LLVM23)
        return rk_fail(RK_ERR_INVALID, "rk_lower_llvm: flavor %d is not one of %s", (int)f, rk_llvm_flavor_names());
    const lw_vendor *vd = NULL;
    rk_status s = begin(k, t, "rk_lower_llvm", &vd);
    if (s != RK_OK) return s;
    lw_ctx cx = {.k = k, .t = t, .vd = vd, .flavor = f, .suffix = ""};
    rk_arena_init(&cx.arena);
    rk_buf_init(&cx.body);
    rk_buf_init(&cx.scratch);
    s = run(&cx, out_ll);
    if (s == RK_OK) fill_info(&cx, info);
    rk_buf_free(&cx.body);
    rk_buf_free(&cx.scratch);
    rk_arena_free(&cx.arena);
    return s;
}

rk_status rk_lower_llvm(const rk_kernel *k, const rk_target *t, rk_llvm_flavor f, char **out_ll) {
    return rk_lower_llvm_ex(k, t, f, out_ll, NULL);
}

rk_status rk_lower_query(const rk_kernel *k, const rk_target *t, rk_lower_info *info) {
    if (!info) return rk_fail(RK_ERR_INVALID, "rk_lower_query: info is NULL");
    *info = (rk_lower_info){0};
    const lw_vendor *vd = NULL;
    rk_status s = begin(k, t, "rk_lower_query", &vd);
    if (s != RK_OK) return s;
    lw_ctx cx = {.k = k, .t = t, .vd = vd, .flavor = RK_LLVM_FLAVOR_DEFAULT, .suffix = ""};
    rk_arena_init(&cx.arena);
    if (lw_pool_layout(&cx)) fill_info(&cx, info);
    else s = rk_fail(cx.err, "laying out kernel '%s' for %s: %s", rk_kernel_name(k), t->name, cx.msg);
    rk_arena_free(&cx.arena);
    return s;
}

rk_status rk_lower_dyn_smem_bytes(const rk_kernel *k, const rk_target *t, uint32_t *out) {
    if (!out) return rk_fail(RK_ERR_INVALID, "rk_lower_dyn_smem_bytes: out is NULL");
    rk_lower_info info;
    rk_status s = rk_lower_query(k, t, &info);
    *out = info.dyn_smem_min;
    return s;
}
