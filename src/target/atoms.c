/* rocke — the matrix-atom catalog (rows of include/rocke/atoms.def: MFMA,
 * mma.sync, wgmma) indexed by id, the lane-map evaluator, and a host
 * reference that applies the maps. Layer: target. */
#include <math.h>
#include <stdlib.h>

#include "rocke/target.h"
#include "../base/base_int.h"

/* ---- the catalog, instantiated from atoms.def ----------------------------------------------- */
#define LN(shift, mask, stride) {RK_LANE_SRC_LANE, shift, mask, stride},
#define SL(shift, mask, stride) {RK_LANE_SRC_SLOT, shift, mask, stride},
#define ZERO {RK_LANE_SRC_LANE, 0, 0, 0},
#define RK_LANE_MAP(id, row, col, batch) static const rk_lane_map map_##id = {#id, {{row}, {col}, {batch}}};
#include "rocke/atoms.def"
#undef LN
#undef SL
#undef ZERO

_Static_assert(RK_S__COUNT <= 32, "ab_formats holds one bit per scalar type");
#define RK_ATOM(ID, name, unit, feat, M, N, K, B, lanes, ae, be, ce, al, bl, cl, am, bm, cm, pack, tf32, scaled, \
                formats, instr)                                                                                  \
    [RK_ATOM_##ID] = {RK_ATOM_##ID, name, RK_ATOM_UNIT_##unit, feat, M, N, K, B, lanes, RK_S_##ae, RK_S_##be,       \
                      RK_S_##ce, al, bl, cl, &map_##am, &map_##bm, &map_##cm, RK_ATOM_PACK_##pack, tf32, scaled,   \
                      formats, instr},
static const rk_mma_atom catalog[RK_ATOM__COUNT] = {
#include "rocke/atoms.def"
};

/* catalog[] in id order, NULL-terminated (entry 0 is RK_ATOM_NONE) */
#define RK_ATOM(ID, ...) &catalog[RK_ATOM_##ID],
static const rk_mma_atom *const atoms[] = {
#include "rocke/atoms.def"
    NULL,
};

const rk_mma_atom *const *rk_mma_atoms(void) { return atoms; }

const rk_mma_atom *rk_mma_atom_find(const char *op_id) {
    for (const rk_mma_atom *const *a = atoms; op_id && *a; a++)
        if (strcmp((*a)->op_id, op_id) == 0) return *a;
    return NULL;
}

const rk_mma_atom *rk_mma_atom_get(rk_atom_id id) {
    return id > RK_ATOM_NONE && id < RK_ATOM__COUNT ? &catalog[id] : NULL;
}

const rk_lane_map *rk_mma_atom_map(const rk_mma_atom *a, rk_frag f) {
    return f == RK_FRAG_A ? a->a_map : f == RK_FRAG_B ? a->b_map : a->c_map;
}

uint32_t rk_mma_atom_len(const rk_mma_atom *a, rk_frag f) {
    return f == RK_FRAG_A ? a->a_len : f == RK_FRAG_B ? a->b_len : a->c_len;
}

rk_lane_coord rk_lane_map_eval(const rk_lane_map *m, uint32_t lane, uint32_t slot) {
    uint32_t v[RK_LANE__AXES] = {0, 0, 0};
    for (int ax = 0; ax < RK_LANE__AXES; ax++)
        for (int i = 0; i < RK_LANE_MAX_TERMS; i++) {
            const rk_lane_term *t = &m->coord[ax][i];
            uint32_t x = t->src == RK_LANE_SRC_SLOT ? slot : lane;
            v[ax] += ((x >> t->shift) & t->mask) * t->stride;
        }
    return (rk_lane_coord){v[RK_LANE_ROW], v[RK_LANE_COL], v[RK_LANE_BATCH]};
}

bool rk_target_has_atom(const rk_target *t, const rk_mma_atom *a) {
    /* a warpgroup atom (128 lanes) runs on four warps of 32 */
    return (t->features & a->feat) == a->feat &&
           (a->lanes == t->wave_size || (a->unit == RK_ATOM_UNIT_WGMMA && t->wave_size == 32));
}

double rk_e8m0_value(uint8_t e) { return e == 255 ? NAN : ldexp(1.0, (int)e - 127); }

rk_status rk_mma_atom_reference(const rk_mma_atom *a, const double *A, const double *B, const double *C,
                                double *D) {
    return rk_mma_atom_reference_scaled(a, A, B, C, NULL, 0, NULL, 0, D);
}

/* The scale factor lane l applies to its A or B elements (1 when unscaled). */
static double lane_scale(const uint32_t *words, unsigned opsel, uint32_t l) {
    return words ? rk_e8m0_value((uint8_t)(words[l] >> (8 * (opsel & 3u)))) : 1.0;
}

/* Rebuild full A (batch x m x k), B (batch x k x n), C from the lane
 * fragments (each element times its lane's scale, exact in double), multiply
 * in double, and scatter D back through the C map. */
rk_status rk_mma_atom_reference_scaled(const rk_mma_atom *a, const double *A, const double *B, const double *C,
                                  const uint32_t *a_scale, unsigned opsel_a, const uint32_t *b_scale,
                                  unsigned opsel_b, double *D) {
    uint32_t M = a->m, N = a->n, K = a->k, nb = a->batch;
    size_t na = (size_t)nb * M * K, nbb = (size_t)nb * K * N, nc = (size_t)nb * M * N;
    double *fa = rk_calloc(na, sizeof *fa);
    double *fb = rk_calloc(nbb, sizeof *fb);
    double *fc = rk_calloc(nc, sizeof *fc);
    if (!fa || !fb || !fc) {
        rk_free(fa, na * sizeof *fa);
        rk_free(fb, nbb * sizeof *fb);
        rk_free(fc, nc * sizeof *fc);
        return rk_fail(RK_ERR_NOMEM, "out of memory in the reference of atom %s", a->op_id);
    }
    for (uint32_t l = 0; l < a->lanes; l++) {
        for (uint32_t s = 0; s < a->a_len; s++) {
            rk_lane_coord p = rk_lane_map_eval(a->a_map, l, s);
            fa[((size_t)p.batch * M + p.row) * K + p.col] = A[l * a->a_len + s] * lane_scale(a_scale, opsel_a, l);
        }
        for (uint32_t s = 0; s < a->b_len; s++) {
            rk_lane_coord p = rk_lane_map_eval(a->b_map, l, s);
            fb[((size_t)p.batch * K + p.row) * N + p.col] = B[l * a->b_len + s] * lane_scale(b_scale, opsel_b, l);
        }
        for (uint32_t s = 0; s < a->c_len; s++) {
            rk_lane_coord p = rk_lane_map_eval(a->c_map, l, s);
            fc[((size_t)p.batch * M + p.row) * N + p.col] = C[l * a->c_len + s];
        }
    }
    for (uint32_t l = 0; l < a->lanes; l++)
        for (uint32_t s = 0; s < a->c_len; s++) {
            rk_lane_coord p = rk_lane_map_eval(a->c_map, l, s);
            double acc = fc[((size_t)p.batch * M + p.row) * N + p.col];
            for (uint32_t kk = 0; kk < K; kk++)
                acc += fa[((size_t)p.batch * M + p.row) * K + kk] * fb[((size_t)p.batch * K + kk) * N + p.col];
            D[l * a->c_len + s] = acc;
        }
    rk_free(fa, na * sizeof *fa);
    rk_free(fb, nbb * sizeof *fb);
    rk_free(fc, nc * sizeof *fc);
    return RK_OK;
}
