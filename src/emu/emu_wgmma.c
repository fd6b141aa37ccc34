/* rocke — warpgroup MMA (tile.wgmma and its descriptor, fence, commit and
 * wait): D = A·B (+ D) for m64nNk16 (f16, bf16) and m64nNk32 (OCP e4m3,
 * e5m2: decoded exactly, K-major only) with A and B read from shared memory
 * through matrix descriptors in the PTX ISA's canonical layouts (K-major or
 * MN-major, no swizzle or the 32/64/128-byte swizzle), f32 accumulation.
 * Each warp of the warpgroup computes its own 16 rows (A and B are in LDS,
 * so the four warps need nothing from each other). The result is computed at
 * issue and may be read only through the wait that retires its group: the
 * compiler rejects any other read (emu_hopper_emit.c), the wait checks that
 * the accumulators it hands on are retired. Layer: emu. */
#include <stdio.h>

#include "emu_int.h"

/* ---- descriptors ------------------------------------------------------------------ */
/* aux = allocation, a = element index (i32), imm = the LBO / SBO / swizzle
 * fields, es = element bytes. */
int emu_h_wgmma_desc(emu_wave *w, const emu_ins *in) {
    const emu_smem *s = in->aux;
    const int32_t *ix = REF(in->a);
    uint64_t *d = REF(in->d);
    FOR_ACTIVE(w, l) {
        if (ix[l] < 0 || (uint32_t)ix[l] >= s->elems)
            return emu_fail(w, in, (int)l, "wgmma_desc index %d is outside %s %s (%u elements)", ix[l], s->name,
                            s->type, s->elems);
        uint64_t addr = s->offset + (uint64_t)ix[l] * in->es;
        d[l] = ((addr & 0x3FFFFu) >> 4) | (uint64_t)in->imm;
    }
    return EMU_NEXT;
}

typedef struct wg_desc { uint32_t start, lbo, sbo, span; } wg_desc;

static bool decode(emu_wave *w, const emu_ins *in, const uint64_t *dv, const char *which, wg_desc *out) {
    uint64_t d = dv[0];
    for (uint32_t l = 1; l < w->W; l++)
        if (dv[l] != d)
            return emu_fail(w, in, (int)l, "the %s descriptor differs between lanes (0x%llx at lane 0, 0x%llx here): "
                            "it must be the same across the warpgroup", which, (unsigned long long)d,
                            (unsigned long long)dv[l]), false;
    uint32_t base = (uint32_t)(d >> 49) & 7u, mode = (uint32_t)(d >> 62);
    if (base)
        return emu_fail(w, in, -1, "the %s descriptor 0x%llx has matrix base offset %u: only 0 is emulated (start the "
                        "swizzle pattern on its repeat boundary)", which, (unsigned long long)d, base), false;
    *out = (wg_desc){.start = (uint32_t)(d & 0x3FFFu) << 4, .lbo = (uint32_t)((d >> 16) & 0x3FFFu) << 4,
                     .sbo = (uint32_t)((d >> 32) & 0x3FFFu) << 4, .span = mode == 1 ? 128u : mode == 2 ? 64u : mode == 3 ? 32u : 0u};
    return true;
}

/* Shared address of element (mn, k) of an operand of eb-byte elements: mn
 * along M (A) or N (B), k along K; the PTX ISA's canonical layouts with
 * T = 16 / eb elements per 16 bytes, then the swizzle on the address bits.
 * (8-bit operands are K-major only: the verifier refuses their transposes.) */
static uint32_t elem_addr(const wg_desc *g, uint32_t mn, uint32_t k, bool mn_major, uint32_t eb) {
    uint32_t a, t = 16u / eb;
    if (!mn_major) {   /* K-major: 8-row groups SBO apart; no swizzle: T-k core matrices LBO apart */
        a = g->span ? g->start + (mn % 8u) * g->span + (mn / 8u) * g->sbo + k * eb
                    : g->start + (mn % 8u) * 16u + (mn / 8u) * g->sbo + (k % t) * eb + (k / t) * g->lbo;
    } else if (g->span) {   /* MN-major swizzled: span/2 mn per row, atoms LBO apart along MN, 8-k groups SBO apart */
        uint32_t per = g->span / 2u;
        a = g->start + (mn % per) * 2u + (mn / per) * g->lbo + (k % 8u) * g->span + (k / 8u) * g->sbo;
    } else {   /* MN-major interleaved: 8-mn columns SBO apart, 8-k groups LBO apart */
        a = g->start + (mn % 8u) * 2u + (mn / 8u) * g->sbo + (k % 8u) * 16u + (k / 8u) * g->lbo;
    }
    return (uint32_t)emu_swizzle(a, g->span);
}

/* Element (mn, k) of an operand of type ty (f16, bf16, or an 8-bit float), exactly. */
static bool load(emu_wave *w, const emu_ins *in, const wg_desc *g, uint32_t mn, uint32_t k, bool mn_major,
                 rk_scalar ty, int which, double *v) {
    const emu_smem *const *from = in->aux;
    uint32_t eb = emu_sbytes(ty), a = elem_addr(g, mn, k, mn_major, eb);
    if (!emu_lds_within(w, in, 0, from[which], a, eb, which ? "the B operand's read" : "the A operand's read"))
        return false;
    if (!emu_lds_touch(w, in, 0, a, eb, 0)) return false;
    if (eb == 1) {
        *v = rk_fp8_to_f32(w->lds[a], emu_fp8_format(ty));
        return true;
    }
    uint16_t h;
    memcpy(&h, w->lds + a, 2);
    *v = ty == RK_S_BF16 ? emu_b2f(h) : emu_h2f(h);
    return true;
}

/* ---- tile.wgmma ---------------------------------------------------------------------- */
/* d = result, a = accumulators (vec<f32 x n/2>), b / c = A / B descriptors;
 * m = n; imm bits: 1 trans_a, 2 trans_b, 4 scale_d, 8 the accumulators come
 * from a tile.wgmma (no fence needed); sa = f16, bf16, fp8e4m3 or bf8e5m2
 * (K = 32 for the 8-bit types, 16 otherwise). */
enum { WG_TA = 1, WG_TB = 2, WG_SCALE = 4, WG_CHAINED = 8 };

static bool record(emu_wave *w, const emu_ins *in) {
    emu_worker *wk = w->wk;
    if (wk->nwgrec == wk->wgrec_cap) {
        uint32_t nc = wk->wgrec_cap ? wk->wgrec_cap * 2 : 64;
        emu_wgrec *nr = rk_realloc(wk->wgrec, wk->wgrec_cap * sizeof *nr, nc * sizeof *nr);
        if (!nr) return emu_fail(w, in, -1, "out of memory tracking wgmma groups"), false;
        wk->wgrec = nr;
        wk->wgrec_cap = nc;
    }
    wk->wgrec[wk->nwgrec++] = (emu_wgrec){.wave = w->id, .opidx = in->opidx, .group = 0};
    return true;
}

/* Every lane of the warp, and the warp's warpgroup complete in the block. */
static bool whole_warpgroup(emu_wave *w, const emu_ins *in, const char *op) {
    const emu_launch *L = w->wk->L;
    uint32_t nthreads = L->block[0] * L->block[1] * L->block[2], last = (w->id | 3u) + 1u;
    if (w->exec != emu_full(w))
        return emu_fail(w, in, -1, "%s needs every lane of the warp (.sync.aligned): active lanes 0x%llx", op,
                        (unsigned long long)w->exec), false;
    if (last * w->W > nthreads)
        return emu_fail(w, in, -1, "%s runs on a warpgroup of 4 warps: warp %u's warpgroup (threads %u..%u) is not "
                        "complete in a block of %u threads", op, w->id, (w->id & ~3u) * w->W, last * w->W - 1u,
                        nthreads), false;
    return true;
}

/* K of one instruction: 32 for the 8-bit types, 16 otherwise. */
static uint32_t k_depth(const emu_ins *in) { return emu_sbytes(in->sa) == 1 ? 32u : 16u; }

/* B (kd x n) through its descriptor into B[k * n + c]. */
static bool load_b(emu_wave *w, const emu_ins *in, const wg_desc *gb, uint32_t n, double *B) {
    bool ok = true, tb = in->imm & WG_TB;
    uint32_t kd = k_depth(in);
    for (uint32_t k = 0; k < kd && ok; k++)
        for (uint32_t c = 0; c < n && ok; c++) ok = load(w, in, gb, c, k, tb, in->sa, 1, &B[k * n + c]);
    return ok;
}

/* D = A·B (+ C) for the warp's 16 rows, recorded as in flight. */
static bool product(emu_wave *w, const emu_ins *in, double A[16][32], const double *B, uint32_t n) {
    /* lane l, element i: row l/4 + 8·bit1(i), column 8·(i/4) + 2·(l%4) + bit0(i) (the m64nNk16 D fragment) */
    uint32_t half = n / 2u, kd = k_depth(in);
    const float *cin = REF(in->a);
    float *d = REF(in->d);
    for (uint32_t l = 0; l < w->W; l++)
        for (uint32_t i = 0; i < half; i++) {
            uint32_t r = l / 4u + 8u * ((i >> 1) & 1u), c = 8u * (i >> 2) + 2u * (l % 4u) + (i & 1u);
            float acc = (in->imm & WG_SCALE) ? cin[l * half + i] : 0.0f;
            for (uint32_t k = 0; k < kd; k++) acc = (float)((double)acc + A[r][k] * B[k * n + c]);
            d[l * half + i] = acc;
        }
    return record(w, in);
}

int emu_h_wgmma(emu_wave *w, const emu_ins *in) {
    if (!whole_warpgroup(w, in, "tile.wgmma")) return EMU_STOP;
    if (!(in->imm & WG_CHAINED) && !w->wg_fenced)
        return emu_fail(w, in, -1, "tile.wgmma reads accumulators that other instructions wrote, with no "
                        "tile.wgmma_fence since the warp's last tile.wgmma_wait_group (or its start): the PTX ISA "
                        "leaves that undefined");
    wg_desc ga, gb;
    if (!decode(w, in, REF(in->b), "A", &ga) || !decode(w, in, REF(in->c), "B", &gb)) return EMU_STOP;
    uint32_t n = in->m, row0 = 16u * (w->id & 3u), kd = k_depth(in);
    bool ta = in->imm & WG_TA;
    double A[16][32], *B = rk_malloc(sizeof(double) * kd * n);
    if (!B) return emu_fail(w, in, -1, "out of memory");
    bool ok = true;
    for (uint32_t r = 0; r < 16 && ok; r++)
        for (uint32_t k = 0; k < kd && ok; k++) ok = load(w, in, &ga, row0 + r, k, ta, in->sa, 0, &A[r][k]);
    ok = ok && load_b(w, in, &gb, n, B) && product(w, in, A, B, n);
    rk_free(B, sizeof(double) * kd * n);
    return ok ? EMU_NEXT : EMU_STOP;
}

int emu_h_wgmma_fence(emu_wave *w, const emu_ins *in) {
    (void)in;
    w->wg_fenced = true;
    return EMU_NEXT;
}

int emu_h_wgmma_commit(emu_wave *w, const emu_ins *in) {
    (void)in;
    emu_worker *wk = w->wk;
    w->wg_groups++;
    for (uint32_t i = 0; i < wk->nwgrec; i++)
        if (wk->wgrec[i].wave == w->id && !wk->wgrec[i].group) wk->wgrec[i].group = w->wg_groups;
    return EMU_NEXT;
}

/* imm = n (groups left pending); args = (operand, result, lane bytes,
 * producing wgmma op index or UINT32_MAX) per accumulator. */
int emu_h_wgmma_wait(emu_wave *w, const emu_ins *in) {
    emu_worker *wk = w->wk;
    uint32_t keep = 0, upto = w->wg_groups >= (uint64_t)in->imm ? w->wg_groups - (uint32_t)in->imm : 0;
    for (uint32_t i = 0; i < wk->nwgrec; i++) {
        emu_wgrec *r = &wk->wgrec[i];
        if (r->wave == w->id && r->group && r->group <= upto) continue;   /* retired */
        wk->wgrec[keep++] = *r;
    }
    wk->nwgrec = keep;
    for (uint32_t j = 0; j + 3 < in->nargs; j += 4) {
        uint32_t src = in->args[j + 3];
        for (uint32_t i = 0; src != UINT32_MAX && i < wk->nwgrec; i++) {
            const emu_wgrec *r = &wk->wgrec[i];
            if (r->wave != w->id || r->opidx != src) continue;
            return emu_fail(w, in, -1, "tile.wgmma_wait_group {n = %lld} hands on accumulator %u, the result of op #%u "
                            "'tile.wgmma', whose group is still pending%s", (long long)in->imm, j / 4, src,
                            r->group ? "" : " (it was never committed: tile.wgmma_commit_group)");
        }
        memmove(REF(in->args[j + 1]), REF(in->args[j]), (size_t)w->W * in->args[j + 2]);
    }
    w->wg_fenced = false;
    return EMU_NEXT;
}

/* ---- tile.wgmma_rs ---------------------------------------------------------------------- */
/* d = result, a = accumulators, b = the A fragment (vec<dtype x 8> per lane),
 * c = B descriptor, aux = {unused, B's allocation}; m = n; imm bits as for
 * tile.wgmma (trans_a unused). A is in registers: each warp multiplies its
 * 16 rows, lane l slot s holding row l/4 + 8·bit1(s), k 2·(l%4) + bit0(s) +
 * 8·(s/4) (the PTX ISA's register fragment of A for .f16/.bf16). Registers
 * written since the last tile.wgmma_wait_group need a tile.wgmma_fence. */
int emu_h_wgmma_rs(emu_wave *w, const emu_ins *in) {
    if (!whole_warpgroup(w, in, "tile.wgmma_rs")) return EMU_STOP;
    if (!w->wg_fenced)
        return emu_fail(w, in, -1, "tile.wgmma_rs reads its A fragment from registers with no tile.wgmma_fence since "
                        "the warp's last tile.wgmma_wait_group (or its start): the PTX ISA leaves that undefined");
    wg_desc gb;
    if (!decode(w, in, REF(in->c), "B", &gb)) return EMU_STOP;
    uint32_t n = in->m;
    bool bf = in->sa == RK_S_BF16;
    double A[16][32], *B = rk_malloc(sizeof(double) * 16u * n);
    if (!B) return emu_fail(w, in, -1, "out of memory");
    const uint16_t *af = REF(in->b);
    for (uint32_t l = 0; l < w->W; l++)
        for (uint32_t s = 0; s < 8; s++) {
            uint32_t r = l / 4u + 8u * ((s >> 1) & 1u), kk = 2u * (l % 4u) + (s & 1u) + 8u * (s >> 2);
            A[r][kk] = bf ? emu_b2f(af[l * 8u + s]) : emu_h2f(af[l * 8u + s]);
        }
    bool ok = load_b(w, in, &gb, n, B) && product(w, in, A, B, n);
    rk_free(B, sizeof(double) * 16u * n);
    return ok ? EMU_NEXT : EMU_STOP;
}
