/* rocke run — the batch of an attention --mode unified run: --lengths as
 * Q:K pairs or a random mixed batch, and the problem shape it implies
 * (--shape Hq,Hkv,D). Layer: tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_int.h"
#include "cli.h"
#include "run_side.h"

enum { DB, DHQ, DHKV, DSQ, DSKV, DD };   /* attention's dimensions */

static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static bool alloc_batch(run_batch *b, uint32_t n) {
    b->n = n;
    b->lq = calloc(n ? 2 * (size_t)n : 2, sizeof *b->lq);
    b->lk = b->lq ? b->lq + n : NULL;
    if (!b->lq) fprintf(stderr, "rocke run: --lengths: out of memory\n");
    return b->lq != NULL;
}

/* One sequence in eight a prefill chunk of about 200 tokens, one of
 * page_size - 1, one of page_size + 1, one a 2-token decode, the rest 1. */
static void draw(run_batch *b, uint64_t seed, uint32_t page) {
    uint64_t rng = seed ^ 0x6d1c3dbau;
    for (uint32_t i = 0; i < b->n; i++) {
        uint64_t kind = next(&rng) % 8, q = 1;
        if (kind == 0) q = 192 + next(&rng) % 32;
        if (kind == 1) q = page > 1 ? page - 1 : 1;
        if (kind == 2) q = page + 1;
        if (kind == 3) q = 2;
        b->lq[i] = q;
        b->lk[i] = q + next(&rng) % 1000;
    }
}

bool run_batch_parse(const char *text, uint64_t seed, uint32_t page_size, run_batch *out) {
    memset(out, 0, sizeof *out);
    if (!strncmp(text, "random:", 7)) {
        const char *end;
        uint64_t n = 0;
        if (!cli_decimal(text + 7, &end, &n) || *end || n == 0 || n > 65535) {
            fprintf(stderr, "rocke run: --lengths '%s': expected random:N with N in 1..65535 sequences\n", text);
            return false;
        }
        if (!alloc_batch(out, (uint32_t)n)) return false;
        draw(out, seed, page_size);
        return true;
    }
    uint32_t n = 1;
    for (const char *c = text; *c; c++) n += *c == ',';
    if (!alloc_batch(out, n)) return false;
    const char *c = text;
    for (uint32_t i = 0; i < n; i++) {
        const char *end = c;
        bool ok = cli_decimal(c, &end, &out->lq[i]) && *end == ':';
        if (ok) ok = cli_decimal(end + 1, &end, &out->lk[i]) && (*end == ',' || !*end);
        if (ok && out->lq[i] > out->lk[i]) {
            fprintf(stderr, "rocke run: --lengths: sequence %u has %llu new queries over %llu keys; the KV length "
                    "counts the new tokens too (Q <= K)\n", i, (unsigned long long)out->lq[i],
                    (unsigned long long)out->lk[i]);
            run_batch_free(out);
            return false;
        }
        if (!ok) {
            fprintf(stderr, "rocke run: --lengths '%s': sequence %u: expected Q:K (new query tokens : KV length "
                    "including them) per sequence, separated by ',', or random:N\n", text, i);
            run_batch_free(out);
            return false;
        }
        c = *end ? end + 1 : end;
    }
    return true;
}

void run_batch_free(run_batch *b) {
    free(b->lq);
    memset(b, 0, sizeof *b);
}

bool run_batch_short_shape(const char *text) {
    uint32_t commas = 0;
    for (const char *c = text; *c; c++) {
        if (*c == '=') return false;
        commas += *c == ',';
    }
    return commas == 2;
}

bool run_batch_shape(const run_batch *b, const char *text, const rk_shape *base, rk_shape *out) {
    *out = *base;
    if (text) {
        unsigned long long v[3];
        char tail;
        if (sscanf(text, "%llu,%llu,%llu%c", &v[0], &v[1], &v[2], &tail) != 3 || !v[0] || !v[1] || !v[2]) {
            fprintf(stderr, "rocke run: --shape '%s': attention --mode unified takes Hq,Hkv,D (positive) with "
                    "--lengths, or the six dimensions B,Hq,Hkv,Sq,Skv,D\n", text);
            return false;
        }
        out->dim[DHQ] = v[0], out->dim[DHKV] = v[1], out->dim[DD] = v[2];
    }
    uint64_t total = 0, longest = 1;
    for (uint32_t i = 0; i < b->n; i++) {
        total += b->lq[i];
        longest = b->lk[i] > longest ? b->lk[i] : longest;
    }
    out->dim[DB] = b->n, out->dim[DSQ] = total ? total : 1, out->dim[DSKV] = longest;
    return true;
}

/* One candidate's rows, warps and key split (its manifest file in dir; "" = m itself). */
static bool candidate_of(const char *dir, const char *file, const rk_manifest *m, rk_manifest *tmp,
                         rk_attention_unified_candidate *c) {
    if (*file) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, file);
        if (rk_manifest_read(path, tmp)) return false;
        m = tmp;
    }
    rk_instance in;
    rk_shape unused;
    if (rk_manifest_check(m, dir, &in, &unused)) return false;
    *c = (rk_attention_unified_candidate){.block_m = in.u.attn.block_m, .warps = in.u.attn.warps,
                                          .key_split = rk_attention_unified_key_splits(&in, rk_target_find(m->target)),
                                          .wgmma_full = in.u.attn.path == RK_ATTN_PF_WGMMA};
    return true;
}

rk_status run_batch_pick_rows(const char *dir, rk_manifest *m, const run_batch *b, const rk_shape *sh, char *line,
                              size_t n) {
    *line = 0;
    if (!m->nvariants || !b->n) return RK_OK;
    uint32_t nc = m->nvariants + 1;
    rk_attention_unified_candidate cand[RK_MANIFEST_MAX_VARIANTS + 1];
    char files[RK_MANIFEST_MAX_VARIANTS + 1][64];
    rk_manifest *tmp = malloc(sizeof *tmp);
    if (!tmp) return rk_fail(RK_ERR_NOMEM, "out of memory");
    rk_status st = RK_OK;
    for (uint32_t i = 0; i < nc && !st; i++) {
        snprintf(files[i], sizeof files[i], "%s", i ? m->variants[i - 1].manifest : "");
        if (!candidate_of(dir, files[i], m, tmp, &cand[i]))
            st = rk_fail(RK_ERR_INVALID, "variant %s: %s", i ? files[i] : "manifest.json", rk_error_message());
    }
    uint32_t G = (uint32_t)(sh->dim[DHQ] / (sh->dim[DHKV] ? sh->dim[DHKV] : 1));
    double cost[RK_MANIFEST_MAX_VARIANTS + 1];
    uint32_t pick = st ? 0 : rk_attention_unified_pick(b->lq, b->lk, b->n, G, cand, nc, cost);
    if (!st && pick) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, files[pick]);
        st = rk_manifest_read(path, tmp);
        if (!st && tmp->nvariants) st = rk_fail(RK_ERR_INVALID, "variant %s lists variants itself", files[pick]);
        if (!st) *m = *tmp;
    }
    if (!st) {
        size_t at = (size_t)snprintf(line, n, "unified: rows %u per block (%s) for G = %u%s%s: row units",
                                     cand[pick].block_m, pick ? files[pick] : "manifest.json", G,
                                     cand[pick].key_split ? ", key split" : "",
                                     cand[pick].wgmma_full ? ", full blocks on wgmma" : "");
        for (uint32_t i = 0; i < nc && at < n; i++)
            at += (size_t)snprintf(line + at, n - at, "%s block_m %u%s %.3g", i ? "," : "", cand[i].block_m,
                                   cand[i].key_split ? " key split" : "", cost[i]);
    }
    free(tmp);
    return st;
}
