/* rocke CLI — the one parser of problem shapes (--shape) and given scalars
 * (--arg) for every sub-command: positional "4096,4096" or named
 * "M=4096,N=4096" extents, resolved against the family's dimension table.
 * Layer: tools. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rocke/rocke.h"
#include "rocke/kernels.h"
#include "cli.h"

/* The usage of --shape for family f, after a message about `text`. */
static bool shape_usage(const char *cmd, rk_family_id f, const char *text, const char *what) {
    uint32_t nd;
    const rk_dim_decl *d = rk_family_dims(f, &nd);
    char legal[256] = "";
    size_t off = 0;
    for (uint32_t i = 0; i < nd && off < sizeof legal; i++)
        off += (size_t)snprintf(legal + off, sizeof legal - off, "%s%s", i ? "," : "", d[i].name);
    fprintf(stderr, "rocke %s: --shape '%s': %s; --shape expects positive integers, positional (%s in "
            "that order) or named (NAME=VALUE,... with NAME one of %s)\n", cmd, text, what, legal, legal);
    return false;
}

bool cli_shape_parse(const char *cmd, rk_family_id f, const char *text, rk_shape *s) {
    char buf[512], why[600], *names[RK_SHAPE_MAX_DIMS];
    uint64_t vals[RK_SHAPE_MAX_DIMS];
    uint32_t n = 0, named = 0;
    if (!text || !*text) return shape_usage(cmd, f, "", "no extents");
    if (strlen(text) >= sizeof buf) return shape_usage(cmd, f, text, "too long");
    memcpy(buf, text, strlen(text) + 1);
    for (char *p = buf; p;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        if (n == RK_SHAPE_MAX_DIMS) return shape_usage(cmd, f, text, "more extents than any family has");
        char *eq = strchr(p, '=');
        names[n] = NULL;
        if (eq) {
            *eq = 0;
            if (!*p) return shape_usage(cmd, f, text, "an extent without its dimension name");
            names[n] = p;
            p = eq + 1;
            named++;
        }
        char *end;
        errno = 0;
        bool digits = *p >= '0' && *p <= '9';
        unsigned long long v = digits ? strtoull(p, &end, 10) : 0;
        /* 0 passes: the family's check names the dimension */
        if (!digits || *end) snprintf(why, sizeof why, "%s is not a positive integer", *p ? p : "''");
        else if (errno) snprintf(why, sizeof why, "%s is too large (at most 18446744073709551615)", p);
        if (!digits || *end || errno) return shape_usage(cmd, f, text, why);
        vals[n++] = v;
        p = comma ? comma + 1 : NULL;
    }
    if (named && named != n) {
        fprintf(stderr, "rocke %s: --shape '%s' mixes named and positional extents\n", cmd, text);
        return false;
    }
    if (rk_shape_update(f, s, named ? (const char *const *)names : NULL, vals, n, false)) {
        fprintf(stderr, "rocke %s: --shape '%s': %s\n", cmd, text, rk_error_message());
        return false;
    }
    return true;
}

bool cli_decimal(const char *p, const char **end, uint64_t *v) {
    uint64_t x = 0;
    const char *q = p;
    for (; *q >= '0' && *q <= '9'; q++) {
        unsigned d = (unsigned)(*q - '0');
        if (x > (UINT64_MAX - d) / 10) return false;
        x = x * 10 + d;
    }
    *end = q;
    *v = x;
    return q != p;
}

bool cli_arg_parse(const char *cmd, const char *text, cli_arg *out) {
    const char *eq = text ? strchr(text, '=') : NULL;
    char *end;
    if (!eq || eq == text || (size_t)(eq - text) >= sizeof out->name) goto bad;
    if (isspace((unsigned char)eq[1])) goto bad;   /* strtod would skip it: a value has one spelling */
    errno = 0;
    out->value = strtod(eq + 1, &end);
    if (errno || end == eq + 1 || *end || !isfinite(out->value)) goto bad;
    snprintf(out->name, sizeof out->name, "%.*s", (int)(eq - text), text);
    return true;
bad:
    fprintf(stderr, "rocke %s: --arg expects NAME=NUMBER, a finite number (e.g. eps=1e-6), got '%s'\n", cmd,
            text ? text : "");
    return false;
}

bool cli_geometry_set(const char *cmd, rk_instance *in, const char *knob, const char *text) {
    uint32_t nk;
    const rk_knob *kb = rk_family_knobs(in->family, &nk), *hit = NULL;
    for (uint32_t i = 0; i < nk; i++)
        if (!strcmp(kb[i].name, knob) && !kb[i].tag) hit = &kb[i];
    if (!hit) {
        fprintf(stderr, "rocke %s: --%s: family %s has no run-time knob '%s' (conv and conv3d have stride, pad, "
                "dilation, groups)\n", cmd, knob, rk_family_name(in->family), knob);
        return false;
    }
    uint32_t count = hit->kind == RK_KNOB_TUPLE ? hit->count : 1, n = 0;
    char part[16][24];
    /* Every value is checked here, in the user's spelling: the knob parser sees the expanded
     * 'x'-joined form and would echo that instead. Values past the 16th are counted, not kept. */
    for (const char *p = text;; n++) {
        size_t len = strcspn(p, ",x");
        bool digits = len > 0 && len < sizeof part[0] && strspn(p, "0123456789") == len;
        if (!digits) {
            fprintf(stderr, "rocke %s: --%s '%s': value %u ('%.*s') is not a non-negative integer (0..4294967295)\n",
                    cmd, knob, text, n + 1, (int)(len < 40 ? len : 40), p);
            return false;
        }
        if (n < 16) snprintf(part[n], sizeof part[0], "%.*s", (int)len, p);
        if (!p[len]) { n++; break; }
        p += len + 1;
    }
    bool halves = !strcmp(knob, "pad") && 2 * n == count;
    if (n != count && n != 1 && !halves) {
        fprintf(stderr, "rocke %s: --%s '%s': expects 1%s or %u values separated by ',' (got %u)\n", cmd, knob, text,
                !strcmp(knob, "pad") ? ", one per axis" : "", count, n);
        return false;
    }
    char full[256];
    size_t off = 0;
    for (uint32_t i = 0; i < count && off < sizeof full; i++) {
        const char *v = n == count ? part[i] : halves ? part[i / 2] : part[0];
        off += (size_t)snprintf(full + off, sizeof full - off, "%s%s", i ? "x" : "", v);
    }
    if (rk_instance_set(in, knob, full, NULL)) {
        fprintf(stderr, "rocke %s: --%s '%s': %s\n", cmd, knob, text, rk_error_message());
        return false;
    }
    return true;
}
