/* rocke — matrix atoms and the loads that feed them. tile.mma gathers A, B
 * and C from the lanes through the atom's lane maps (data in
 * include/rocke/atoms.def, read through rk_lane_map_eval), multiplies with
 * f32 accumulation and scatters D back: for each output,
 * acc = C; for k = 0..K-1: acc = f32(acc + a*b), the product exact in double
 * (fp8/f16/bf16 products are exact in f32 anyway). tf32/xf32 inputs drop
 * their low 13 mantissa bits first. Scaled (MX) atoms multiply each product
 * by the E8M0 scales of the lanes holding a and b, still exact in double.
 * ldmatrix follows the PTX ISA; the gfx950 transposing LDS reads follow
 * docs/emulator.md. Layer: emu. */
#include <math.h>

#include "emu_int.h"

typedef struct emu_atom {
    const rk_mma_atom *atom;
    uint32_t M, N, K, B, lanes, alen, blen, clen;
    uint32_t *aidx, *bidx, *cidx;     /* (lane, slot) -> flat index into A / B / C */
    uint8_t *alane, *blane;           /* scaled atoms: flat index into A / B -> the lane holding it */
    rk_scalar ae, be;
    bool tf32;                        /* f32 inputs keep 10 mantissa bits (the catalog's tf32 column) */
} emu_atom;

const void *emu_mma_prepare(rk_arena *ar, const rk_mma_atom *a, rk_scalar a_elem, rk_scalar b_elem) {
    emu_atom *t = rk_arena_zalloc(ar, sizeof *t);
    if (!t) return NULL;
    *t = (emu_atom){a, a->m, a->n, a->k, a->batch, a->lanes, a->a_len, a->b_len, a->c_len,
                    NULL, NULL, NULL, NULL, NULL, a_elem, b_elem, a->tf32};
    t->aidx = rk_arena_alloc(ar, sizeof(uint32_t) * a->lanes * a->a_len);
    t->bidx = rk_arena_alloc(ar, sizeof(uint32_t) * a->lanes * a->b_len);
    t->cidx = rk_arena_alloc(ar, sizeof(uint32_t) * a->lanes * a->c_len);
    if (!t->aidx || !t->bidx || !t->cidx) return NULL;
    if (a->scaled) {
        RK_ASSERT(a->lanes <= 256, "a scaled atom's lanes fit a byte");
        t->alane = rk_arena_alloc(ar, (size_t)a->lanes * a->a_len);
        t->blane = rk_arena_alloc(ar, (size_t)a->lanes * a->b_len);
        if (!t->alane || !t->blane) return NULL;
    }
    for (uint32_t l = 0; l < a->lanes; l++) {
        for (uint32_t s = 0; s < a->a_len; s++) {
            rk_lane_coord p = rk_lane_map_eval(a->a_map, l, s);
            t->aidx[l * a->a_len + s] = (p.batch * t->M + p.row) * t->K + p.col;
            if (t->alane) t->alane[t->aidx[l * a->a_len + s]] = (uint8_t)l;
        }
        for (uint32_t s = 0; s < a->b_len; s++) {
            rk_lane_coord p = rk_lane_map_eval(a->b_map, l, s);
            t->bidx[l * a->b_len + s] = (p.batch * t->K + p.row) * t->N + p.col;
            if (t->blane) t->blane[t->bidx[l * a->b_len + s]] = (uint8_t)l;
        }
        for (uint32_t s = 0; s < a->c_len; s++) {
            rk_lane_coord p = rk_lane_map_eval(a->c_map, l, s);
            t->cidx[l * a->c_len + s] = (p.batch * t->M + p.row) * t->N + p.col;
        }
    }
    return t;
}

static float in_val(rk_scalar s, const uint8_t *p, uint32_t i, bool tf32) {
    switch (s) {
    case RK_S_F16: return emu_h2f(((const uint16_t *)(const void *)p)[i]);
    case RK_S_BF16: return emu_b2f(((const uint16_t *)(const void *)p)[i]);
    case RK_S_F32: {
        float f = ((const float *)(const void *)p)[i];
        return tf32 ? rk_bits_f32(rk_f32_bits(f) & 0xffffe000u) : f;
    }
    default: return rk_fp8_to_f32(p[i], emu_fp8_format(s));
    }
}

/* A scaled atom's factor per lane: the E8M0 byte imm (0..3) of each lane's
 * scale word (255: NaN, as in the OCP MX spec). */
static void lane_scales(emu_wave *w, uint32_t ref, int64_t opsel, uint32_t lanes, double *out) {
    const uint32_t *word = REF(ref);
    for (uint32_t l = 0; l < lanes; l++) out[l] = rk_e8m0_value((uint8_t)(word[l] >> (8 * (opsel & 3))));
}

/* a, b, c operand refs; d result; aux = emu_atom; scaled atoms: args = the
 * a_scale and b_scale refs, imm/imm2 = opsel_a/opsel_b. The whole wave takes
 * part. */
int emu_h_mma(emu_wave *w, const emu_ins *in) {
    const emu_atom *t = in->aux;
    if (w->exec != emu_full(w))
        return emu_fail(w, in, -1, "matrix atom '%s' executed under a partial exec mask (active lanes 0x%llx): every "
                        "lane of the wave takes part", t->atom->op_id, (unsigned long long)w->exec);
    const uint8_t *A = REF(in->a), *Bm = REF(in->b);
    const float *C = REF(in->c);
    float *D = REF(in->d);
    uint32_t na = t->B * t->M * t->K, nb = t->B * t->K * t->N, nc = t->B * t->M * t->N;
    float fa[4096], fb[4096], fc[4096];
    RK_ASSERT(na <= 4096 && nb <= 4096 && nc <= 4096, "matrix atom larger than the emulator's scratch");
    memset(fa, 0, sizeof(float) * na);
    memset(fb, 0, sizeof(float) * nb);
    memset(fc, 0, sizeof(float) * nc);
    for (uint32_t i = 0; i < t->lanes * t->alen; i++) fa[t->aidx[i]] = in_val(t->ae, A, i, t->tf32);
    for (uint32_t i = 0; i < t->lanes * t->blen; i++) fb[t->bidx[i]] = in_val(t->be, Bm, i, t->tf32);
    for (uint32_t i = 0; i < t->lanes * t->clen; i++) fc[t->cidx[i]] = C[i];
    double sa[EMU_MAXW], sb[EMU_MAXW];
    if (t->alane) {
        RK_ASSERT(t->lanes <= EMU_MAXW && in->nargs == 2, "scaled atom: one scale word per lane, two operands");
        lane_scales(w, in->args[0], in->imm, t->lanes, sa);
        lane_scales(w, in->args[1], in->imm2, t->lanes, sb);
    }
    for (uint32_t bt = 0; bt < t->B; bt++)
        for (uint32_t r = 0; r < t->M; r++)
            for (uint32_t c = 0; c < t->N; c++) {
                float acc = fc[(bt * t->M + r) * t->N + c];
                uint32_t ar = (bt * t->M + r) * t->K;
                for (uint32_t k = 0; k < t->K; k++) {
                    uint32_t bk = (bt * t->K + k) * t->N + c;
                    double p = (double)fa[ar + k] * (double)fb[bk];
                    if (t->alane) p *= sa[t->alane[ar + k]] * sb[t->blane[bk]];   /* powers of two: exact */
                    acc = (float)((double)acc + p);
                }
                fc[(bt * t->M + r) * t->N + c] = acc;
            }
    for (uint32_t i = 0; i < t->lanes * t->clen; i++) D[i] = fc[t->cidx[i]];
    return EMU_NEXT;
}

/* ---- LDS reads that feed matrix atoms ---------------------------------------------------------- */
/* Byte offset of lane l's address (smem aux, index refs in args) for a read
 * of n bytes, checked; false after failing. */
static bool row_at(emu_wave *w, const emu_ins *in, uint32_t l, uint32_t n, uint64_t *off) {
    const emu_smem *s = in->aux;
    int64_t flat = 0;
    for (uint32_t r = 0; r < in->nargs; r++) flat += (int64_t)((const int32_t *)REF(in->args[r]))[l] * s->stride[r];
    if (flat < 0 || (uint64_t)flat * s->es + n > s->bytes) {
        emu_fail(w, in, (int)l, "LDS read of %u bytes at element %lld of %s %s (%u bytes) is out of bounds", n,
                 (long long)flat, s->name, s->type, s->bytes);
        return false;
    }
    *off = s->offset + (uint64_t)flat * s->es;
    return emu_lds_touch(w, in, l, *off, n, 0);
}

/* ldmatrix (PTX): imm = number of 8x8 b16 matrices, imm2 = .trans. Lanes
 * 8j..8j+7 give the row addresses of matrix j (16 bytes per row). Without
 * .trans lane l's register j holds matrix j's row l/4, columns 2(l%4) and
 * 2(l%4)+1 (low half first); with .trans it holds rows 2(l%4) and 2(l%4)+1
 * of column l/4. Every lane of the warp must take part (.sync.aligned). */
int emu_h_ldmatrix(emu_wave *w, const emu_ins *in) {
    if (w->exec != emu_full(w))
        return emu_fail(w, in, -1, "ldmatrix executed under a partial mask (active lanes 0x%llx): it is .sync.aligned",
                        (unsigned long long)w->exec);
    uint32_t num = (uint32_t)in->imm;
    uint16_t rows[4][8][8];
    for (uint32_t j = 0; j < num; j++)
        for (uint32_t r = 0; r < 8; r++) {
            uint64_t off;
            if (!row_at(w, in, 8 * j + r, 16, &off)) return EMU_STOP;
            memcpy(rows[j][r], w->lds + off, 16);
        }
    uint32_t *d = REF(in->d);
    for (uint32_t l = 0; l < 32; l++)
        for (uint32_t j = 0; j < num; j++) {
            uint16_t lo, hi;
            if (in->imm2) {
                lo = rows[j][2 * (l % 4)][l / 4];
                hi = rows[j][2 * (l % 4) + 1][l / 4];
            } else {
                lo = rows[j][l / 4][2 * (l % 4)];
                hi = rows[j][l / 4][2 * (l % 4) + 1];
            }
            d[l * num + j] = (uint32_t)lo | ((uint32_t)hi << 16);
        }
    return EMU_NEXT;
}

/* gfx950 transposing LDS reads (ds_read_b64_tr_b16, ds_read_b64_tr_b8): in
 * each group of 16 lanes every lane reads m elements of es bytes (8 bytes)
 * at its address; the 16*m elements form an m x 16 tile whose row r comes
 * from lanes (16/m)*r .. (16/m)*r + 16/m - 1, m consecutive columns each;
 * lane j of the group receives column j (element e = tile[e][j]). A 16-byte
 * lane is tr16_b128, which ops.def defines as two such 8-byte reads: at the
 * lane's address (elements 0-3) and 8 bytes after it (elements 4-7). */
int emu_h_ds_read_tr(emu_wave *w, const emu_ins *in) {
    if (w->exec != emu_full(w))
        return emu_fail(w, in, -1, "transposing LDS read executed under a partial mask (active lanes 0x%llx): the "
                        "whole wave exchanges data", (unsigned long long)w->exec);
    uint32_t es = in->es, lane_bytes = in->m * es, parts = lane_bytes / 8, m = in->m / parts, per_row = 16 / m;
    uint8_t src[EMU_MAXW][16];
    for (uint32_t l = 0; l < w->W; l++) {
        uint64_t off;
        if (!row_at(w, in, l, lane_bytes, &off)) return EMU_STOP;
        memcpy(src[l], w->lds + off, lane_bytes);
    }
    uint8_t *d = REF(in->d);
    for (uint32_t l = 0; l < w->W; l++) {
        uint32_t g = l & ~15u, j = l & 15u;
        for (uint32_t p = 0; p < parts; p++)
            for (uint32_t e = 0; e < m; e++) {
                uint32_t from = g + per_row * e + j / m;
                memcpy(d + ((size_t)l * in->m + p * m + e) * es, src[from] + 8 * p + (j % m) * es, es);
            }
    }
    return EMU_NEXT;
}
