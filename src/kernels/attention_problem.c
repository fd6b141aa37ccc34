/* rocke — attention problems: the scale's default, varlen lengths (random,
 * or given), and the window bounds, each checked with a message naming the
 * field and what is legal. Layer: kernels. */
#include <math.h>

#include "attention_unified_int.h"

static uint64_t next_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void kn_attn_fix_inputs(rk_problem *p) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!strcmp(p->sig.p[i].name, "scale") && p->scalar[i] == 0)
            p->scalar[i] = 1.0 / sqrt((double)rk_problem_dim(p, "D"));
    int cq = kn_buf_index(p, "cu_seqlens_q");
    if (cq < 0) return;
    /* random lengths in [1, max]: the first sequence at the maxima (the shape's Sq, Skv), the last with one
     * query and, from three sequences on, the second with one key */
    uint64_t B = rk_problem_dim(p, "B"), Sq = rk_problem_dim(p, "Sq"), Skv = rk_problem_dim(p, "Skv");
    uint64_t rng = p->seed ^ 0x5eed1e7a11ull;
    uint64_t *lq = rk_calloc(2 * B, sizeof *lq), *lk = lq + B;
    RK_ASSERT(lq, "attention: out of memory for the sequence lengths");
    for (uint64_t b = 0; b < B; b++) {
        lq[b] = b == 0 ? Sq : 1 + next_rand(&rng) % Sq;
        lk[b] = b == 0 ? Skv : 1 + next_rand(&rng) % Skv;
        if (b && b + 1 == B) lq[b] = 1;
        if (b == 1 && B >= 3) lk[b] = 1;
    }
    rk_status st = rk_problem_set_lengths(p, lq, lk, (uint32_t)B);
    rk_free(lq, 2 * B * sizeof *lq);
    RK_ASSERT(st == RK_OK, "attention: random lengths within the shape");
}

rk_status rk_problem_set_lengths(rk_problem *p, const uint64_t *lq, const uint64_t *lk, uint32_t n) {
    if (p->inst.family == RK_FAMILY_ATTENTION && p->inst.u.attn.mode == RK_ATTN_UNIFIED)
        return kn_attn_unified_set_lengths(p, lq, lk, n);
    int cq = kn_buf_index(p, "cu_seqlens_q"), ck = kn_buf_index(p, "cu_seqlens_k");
    if (p->inst.family != RK_FAMILY_ATTENTION || cq < 0)
        return rk_fail(RK_ERR_INVALID, "sequence lengths are for attention instances built with --layout varlen");
    uint64_t B = rk_problem_dim(p, "B"), Sq = rk_problem_dim(p, "Sq"), Skv = rk_problem_dim(p, "Skv");
    if (n != B)
        return rk_fail(RK_ERR_INVALID, "attention: %u sequence lengths for B = %llu sequences (one LQ[:LK] each)", n,
                       (unsigned long long)B);
    for (uint32_t b = 0; b < n; b++)
        if (lq[b] > Sq || lk[b] > Skv)
            return rk_fail(RK_ERR_INVALID, "attention: sequence %u is %llu:%llu long, but the shape allows at most "
                           "Sq = %llu queries and Skv = %llu keys", b, (unsigned long long)lq[b],
                           (unsigned long long)lk[b], (unsigned long long)Sq, (unsigned long long)Skv);
    uint64_t tq = 0, tk = 0;
    kn_set(&p->buf[cq], 0, 0);
    kn_set(&p->buf[ck], 0, 0);
    for (uint32_t b = 0; b < n; b++) {
        tq += lq[b];
        tk += lk[b];
        kn_set(&p->buf[cq], b + 1, (double)tq);
        kn_set(&p->buf[ck], b + 1, (double)tk);
    }
    return RK_OK;
}

rk_status rk_problem_set_window(rk_problem *p, int64_t left, int64_t right) {
    if (p->inst.family != RK_FAMILY_ATTENTION || p->inst.u.attn.mask != RK_ATTN_MASK_WINDOW)
        return rk_fail(RK_ERR_INVALID, "a window (left, right) is for attention instances built with --mask window%s",
                       p->inst.family == RK_FAMILY_ATTENTION && p->inst.u.attn.mask == RK_ATTN_MASK_CAUSAL
                           ? " (causal is the window (-1, 0): build with --mask window for other bounds)"
                           : "");
    if (left < INT32_MIN / 2 || left > INT32_MAX / 2 || right < INT32_MIN / 2 || right > INT32_MAX / 2)
        return rk_fail(RK_ERR_INVALID, "attention: window bounds must lie within +-2^30 (negative: unbounded)");
    if (p->inst.u.attn.mode == RK_ATTN_UNIFIED) {
        /* causal inside each sequence: the window bounds the left side only */
        if (right != 0)
            return rk_fail(RK_ERR_INVALID, "attention unified: the window is causal, window_right = %lld is not "
                           "legal (pass --window L: the L keys before the diagonal, negative: unbounded)",
                           (long long)right);
        return rk_problem_set_scalar(p, "window_left", (double)left);
    }
    rk_status st = rk_problem_set_scalar(p, "window_left", (double)left);
    return st ? st : rk_problem_set_scalar(p, "window_right", (double)right);
}

/* The entry named `name`'s scalar slot (the signature has it: prefill declares every stride). */
static double *scalar_slot(rk_problem *p, const char *name) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!p->sig.p[i].ptr && !strcmp(p->sig.p[i].name, name)) return &p->scalar[i];
    RK_ASSERT(0, "attention prefill declares every stride scalar");
    return NULL;
}

rk_status rk_problem_set_row_padding(rk_problem *p, uint32_t pad) {
    if (p->inst.family != RK_FAMILY_ATTENTION || p->inst.u.attn.mode != RK_ATTN_PREFILL)
        return rk_fail(RK_ERR_INVALID, "row padding is for attention prefill instances (mode prefill: their Q, K, V "
                       "and O are strided views)");
    if (pad > 4096) return rk_fail(RK_ERR_INVALID, "attention: row padding %u is more than 4096 elements", pad);
    int lay = p->inst.u.attn.layout;
    static const char *const tensors[4] = {"Q", "K", "V", "O"}, letters[4] = {'q', 'k', 'v', 'o'};
    /* check every tensor first, then re-lay: nothing half-done on failure */
    for (int t = 0; t < 4; t++) {
        char n[8];
        snprintf(n, sizeof n, "%c_ss", letters[t]);
        double ss = *scalar_slot(p, n) + pad;
        if (ss > INT32_MAX) return rk_fail(RK_ERR_INVALID, "attention: %s's padded rows (%.0f elements) do not fit the "
                                           "i32 sequence stride", tensors[t], ss);
    }
    for (int t = 0; t < 4; t++) {
        rk_host_buf *b = &p->buf[kn_buf_index(p, tensors[t])];
        char nb[8], nh[8], ns[8];
        snprintf(nb, sizeof nb, "%c_sb", letters[t]);
        snprintf(nh, sizeof nh, "%c_sh", letters[t]);
        snprintf(ns, sizeof ns, "%c_ss", letters[t]);
        double *sb = scalar_slot(p, nb), *sh = scalar_slot(p, nh), *ss = scalar_slot(p, ns);
        /* every layout's rows lie ss apart from the start (bhsd: sh = S ss, sb = H sh; bshd: sb = S ss) */
        uint64_t old = (uint64_t)*ss, neu = old + pad, rows = old ? b->count / old : 0;
        size_t eb = rk_tile_elem_bytes(b->param->type), bytes = (size_t)(rows * neu) * eb;
        unsigned char *data = rk_calloc(bytes ? bytes : 1, 1);
        if (!data) return rk_fail(RK_ERR_NOMEM, "out of memory for the padded %s (%zu bytes)", tensors[t], bytes);
        bool in = b->param->role == RK_KP_IN;
        for (uint64_t r = 0; r < rows; r++) {
            memcpy(data + r * neu * eb, (unsigned char *)b->data + r * old * eb, old * eb);
            /* inputs' padding NaN (all ones): a read of it would show in O; outputs' stays zero */
            if (in) memset(data + (r * neu + old) * eb, 0xff, pad * eb);
        }
        rk_free(b->data, b->bytes ? b->bytes : 1);
        b->data = data, b->bytes = bytes, b->count = rows * neu;
        double S = (double)rk_problem_dim(p, t == 1 || t == 2 ? "Skv" : "Sq");
        double H = (double)rk_problem_dim(p, t == 1 || t == 2 ? "Hkv" : "Hq");
        *ss = (double)neu;
        if (lay == RK_ATTN_BHSD) *sh = S * *ss, *sb = H * *sh;
        if (lay == RK_ATTN_BSHD) *sb = S * *ss;
    }
    return RK_OK;
}
