/* rocke — verifier diagnostics: a growable list of (severity, op, line,
 * where, message) records, printed compiler-style or returned as one text.
 * Layer: ir. */
#include <stdio.h>

#include "ir_int.h"

void rk_diags_init(rk_diags *d) { memset(d, 0, sizeof *d); }

static void free_str(char *s) {
    if (s) rk_free(s, strlen(s) + 1);
}

void rk_diags_free(rk_diags *d) {
    if (!d) return;
    for (uint32_t i = 0; i < d->n; i++) {
        free_str(d->items[i].where);
        free_str(d->items[i].msg);
    }
    rk_free(d->items, d->cap * sizeof *d->items);
    rk_diags_init(d);
}

/* Strings handed out by rocke (rk_buf_take, rk_diags_text, rk_print...) are
 * exactly strlen+1 bytes from the allocation hook. */
void rk_string_free(char *s) { free_str(s); }

bool ir_diag_add(rk_diags *d, rk_severity sev, const rk_op *op, const char *where, const char *msg) {
    if (d->n == d->cap) {
        uint32_t ncap = d->cap ? d->cap * 2 : 8;
        rk_diag *n = rk_realloc(d->items, d->cap * sizeof *n, ncap * sizeof *n);
        if (!n) return false;
        d->items = n;
        d->cap = ncap;
    }
    char *w = rk_strdup(where ? where : "");
    char *m = w ? rk_strdup(msg) : NULL;
    if (!w || !m) {
        free_str(w);
        return false;
    }
    d->items[d->n++] = (rk_diag){sev, op, op ? op->line : 0, w, m};
    if (sev == RK_SEV_ERROR) d->nerrors++;
    return true;
}

static void format(rk_buf *b, const rk_diags *d, const char *file) {
    for (uint32_t i = 0; i < d->n; i++) {
        const rk_diag *g = &d->items[i];
        const char *sev = g->severity == RK_SEV_ERROR ? "error" : "warning";
        if (file && g->line) rk_buf_printf(b, "%s:%u: %s: %s\n", file, g->line, sev, g->msg);
        else if (file) rk_buf_printf(b, "%s: %s: %s: %s\n", file, sev, g->where, g->msg);
        else if (g->line) rk_buf_printf(b, "line %u: %s: %s\n", g->line, sev, g->msg);
        else rk_buf_printf(b, "%s: %s: %s\n", sev, g->where, g->msg);
    }
}

void rk_diags_print(const rk_diags *d, FILE *f, const char *file) {
    rk_buf b;
    rk_buf_init(&b);
    format(&b, d, file);
    if (b.oom) {
        /* no memory for the text: print line by line instead */
        for (uint32_t i = 0; i < d->n; i++)
            fprintf(f, "%s: %s: %s\n", d->items[i].severity == RK_SEV_ERROR ? "error" : "warning",
                    d->items[i].where, d->items[i].msg);
    } else if (b.len) {
        fwrite(b.data, 1, b.len, f);
    }
    rk_buf_free(&b);
}

char *rk_diags_text(const rk_diags *d) {
    rk_buf b;
    rk_buf_init(&b);
    format(&b, d, NULL);
    rk_buf_putn(&b, "", 0);      /* an empty list still gives "" */
    return rk_buf_take(&b);
}
