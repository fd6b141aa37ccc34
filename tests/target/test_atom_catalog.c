/* rocke tests — the matrix-atom catalog (include/rocke/atoms.def): ids and
 * names round-trip; every atom's fields agree with what its name and the
 * vendors' tables say (shape, element types, lanes, blocks, which chips have
 * it); and every lane map, evaluated by rk_lane_map_eval for every (lane,
 * slot), equals the layout written here again from the AMD
 * matrix-instruction calculator (MFMA: which lane and item hold element
 * (i, k)) and the PTX ISA fragment tables (mma.sync, wgmma: which element
 * register a_i of a thread holds), covering each matrix element exactly
 * once. Layer: tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/target.h"

typedef struct elem { uint32_t row, col, batch; } elem;

/* What an atom's name says: <unit prefix>_<shape>_<types>. */
typedef struct named {
    char unit;                  /* 'a' MFMA, 'm' mma.sync, 'w' wgmma */
    uint32_t m, n, k;
    char type[16];              /* the input type word: f16 bf16 f32 xf32 tf32 fp8 bf8 f8f6f4 */
    bool scaled;
} named;

static named parse_name(const char *s) {
    named p = {0};
    int used = 0;
    if (sscanf(s, "mfma_scale_f32_%ux%ux%u_%15s%n", &p.m, &p.n, &p.k, p.type, &used) == 4) {
        p.unit = 'a';
        p.scaled = true;
    } else if (sscanf(s, "mfma_f32_%ux%ux%u_%15s%n", &p.m, &p.n, &p.k, p.type, &used) == 4) {
        p.unit = 'a';
    } else if (sscanf(s, "wgmma_m%un%uk%u_f32_%15s%n", &p.m, &p.n, &p.k, p.type, &used) == 4) {
        p.unit = 'w';
    } else if (sscanf(s, "mma_m%un%uk%u_f32_%15s%n", &p.m, &p.n, &p.k, p.type, &used) == 4) {
        p.unit = 'm';
    } else {
        fail_msg("atom name '%s' follows none of the naming patterns", s);
    }
    return p;
}

static rk_scalar type_of(const char *t) {
    if (!strcmp(t, "f16")) return RK_S_F16;
    if (!strcmp(t, "bf16")) return RK_S_BF16;
    if (!strcmp(t, "f32") || !strcmp(t, "xf32") || !strcmp(t, "tf32")) return RK_S_F32;
    if (!strcmp(t, "fp8") || !strcmp(t, "f8f6f4")) return RK_S_FP8E4M3;
    if (!strcmp(t, "bf8") || !strcmp(t, "e5m2")) return RK_S_BF8E5M2;
    if (!strcmp(t, "e4m3")) return RK_S_FP8E4M3;
    fail_msg("unknown input type '%s'", t);
    return RK_S_NONE;
}

static void test_ids_and_names(void **state) {
    (void)state;
    uint32_t n = 0;
    for (const rk_mma_atom *const *ap = rk_mma_atoms(); *ap; ap++, n++) {
        const rk_mma_atom *a = *ap;
        assert_int_equal(a->id, n + 1);
        assert_ptr_equal(rk_mma_atom_get(a->id), a);
        assert_ptr_equal(rk_mma_atom_find(a->op_id), a);
        assert_ptr_equal(rk_mma_atom_map(a, RK_FRAG_A), a->a_map);
        assert_ptr_equal(rk_mma_atom_map(a, RK_FRAG_C), a->c_map);
        assert_int_equal(rk_mma_atom_len(a, RK_FRAG_B), a->b_len);
    }
    assert_int_equal(n, RK_ATOM__COUNT - 1);
    assert_null(rk_mma_atom_get(RK_ATOM_NONE));
    assert_null(rk_mma_atom_get(RK_ATOM__COUNT));
    assert_null(rk_mma_atom_find("mfma_f32_16x16x16_f17"));
    assert_null(rk_mma_atom_find(NULL));
    assert_string_equal(rk_mma_atom_get(RK_ATOM_MFMA_F32_32X32X8_BF16)->op_id, "mfma_f32_32x32x8_bf16");
}

/* The chips that have an atom, from the CDNA2/3/4 ISA guides and the PTX
 * ISA: xf32 only on CDNA3; fp8/bf8 from CDNA3; the K-packed f16/bf16 shapes
 * and 16x16x128 on CDNA4 only; mma.sync from sm_80 (8-bit floats from sm_89); wgmma on sm_90a only. */
static const char *chips_of(const named *p) {
    if (p->unit == 'm') return p->k == 32 ? "sm_90 sm_90a" : "sm_80 sm_90 sm_90a";   /* fp8 mma.sync: sm_89+ */
    if (p->unit == 'w') return "sm_90a";
    if (!strcmp(p->type, "xf32")) return "gfx942";
    if (p->k == 128) return "gfx950";
    if (!strcmp(p->type, "fp8") || !strcmp(p->type, "bf8")) return "gfx942 gfx950";
    if ((p->m == 16 && p->k == 32) || (p->m == 32 && p->k == 16)) return "gfx950";
    return "gfx90a gfx942 gfx950";
}

static void test_fields_agree_with_names(void **state) {
    (void)state;
    for (const rk_mma_atom *const *ap = rk_mma_atoms(); *ap; ap++) {
        const rk_mma_atom *a = *ap;
        named p = parse_name(a->op_id);
        const rk_atom_unit units[] = {['a'] = RK_ATOM_UNIT_MFMA, ['m'] = RK_ATOM_UNIT_MMA_SYNC,
                                      ['w'] = RK_ATOM_UNIT_WGMMA};
        const uint32_t lanes[] = {['a'] = 64, ['m'] = 32, ['w'] = 128};
        assert_int_equal(a->unit, units[(int)p.unit]);
        assert_int_equal(a->lanes, lanes[(int)p.unit]);
        assert_int_equal(a->m, p.m);
        assert_int_equal(a->n, p.n);
        assert_int_equal(a->k, p.k);
        assert_int_equal(a->batch, p.m == 4 ? 16 : 1);   /* v_mfma_f32_4x4x4f16: 16 blocks of 4x4 */
        assert_int_equal(a->a_elem, type_of(p.type));
        assert_int_equal(a->b_elem, type_of(p.type));
        assert_int_equal(a->c_elem, RK_S_F32);
        assert_int_equal(a->tf32, !strcmp(p.type, "xf32") || !strcmp(p.type, "tf32"));
        assert_int_equal(a->scaled, p.scaled);
        assert_int_equal(a->ab_formats, !strcmp(p.type, "f8f6f4") ? (1u << RK_S_FP8E4M3) | (1u << RK_S_BF8E5M2) : 0u);
        /* every element of A, B, C once: lanes * per-lane length */
        assert_int_equal((uint32_t)a->lanes * a->a_len, p.m * p.k * a->batch);
        assert_int_equal((uint32_t)a->lanes * a->b_len, p.k * p.n * a->batch);
        assert_int_equal((uint32_t)a->lanes * a->c_len, p.m * p.n * a->batch);
        char chips[64], word[24];
        snprintf(chips, sizeof chips, " %s ", chips_of(&p));
        for (const rk_target *const *tp = rk_targets(); *tp; tp++) {
            snprintf(word, sizeof word, " %s ", (*tp)->name);
            bool want = strstr(chips, word) != NULL;
            if (rk_target_has_atom(*tp, a) != want)
                fail_msg("%s on %s: catalog says %d, the ISA %d", a->op_id, (*tp)->name, rk_target_has_atom(*tp, a),
                         want);
        }
    }
}

/* ---- the vendors' layouts ---------------------------------------------------------------------------------- */
/* AMD matrix-instruction calculator, MFMA with R = M rows per block and
 * kb = K*M/64 K values per lane: A[i][k] is item k % kb of lane i + M*(k/kb);
 * B[k][j] item k % kb of lane j + N*(k/kb); D[i][j] of a 16x16 block is item
 * i % 4 of lane j + 16*(i/4), of a 32x32 block item 4*(i/8) + i%4 of lane
 * j + 32*((i/4) % 2). The 4x4x4 atom's block b: A[i][k] item k of lane
 * i + 4b, B[k][j] item k of lane j + 4b, D[i][j] item i of lane j + 4b. */
static void mfma_holder(const rk_mma_atom *a, rk_frag f, elem e, uint32_t *lane, uint32_t *item) {
    if (a->batch > 1) {
        *lane = (f == RK_FRAG_A ? e.row : e.col) + 4 * e.batch;
        *item = f == RK_FRAG_C ? e.row : f == RK_FRAG_A ? e.col : e.row;
        return;
    }
    uint32_t kb = a->k * a->m / 64;
    if (f == RK_FRAG_A) {
        *lane = e.row + a->m * (e.col / kb);
        *item = e.col % kb;
    } else if (f == RK_FRAG_B) {
        *lane = e.col + a->n * (e.row / kb);
        *item = e.row % kb;
    } else if (a->m == 16) {
        *lane = e.col + 16 * (e.row / 4);
        *item = e.row % 4;
    } else {
        *lane = e.col + 32 * ((e.row / 4) % 2);
        *item = 4 * (e.row / 8) + e.row % 4;
    }
}

/* PTX ISA fragment tables, groupID = (lane % 32) >> 2, threadID_in_group =
 * lane % 4; wgmma's warp w = lane / 32 owns rows 16w..16w+15 of A and D.
 * wgmma's B comes from shared memory: rocke's fragment is one element per
 * lane, k = lane % 16, n = lane / 16 (docs/lowering.md). */
static elem ptx_element(const rk_mma_atom *a, rk_frag f, uint32_t lane, uint32_t i) {
    uint32_t g = (lane % 32) >> 2, t = lane % 4, w = lane / 32;
    bool wg = a->lanes == 128, tf32 = a->a_elem == RK_S_F32;
    if (wg && f == RK_FRAG_B) return (elem){lane % 16, lane / 16, 0};
    uint32_t base = wg ? 16 * w : 0;
    if (f == RK_FRAG_C) return (elem){base + g + (i >= 2 ? 8 : 0), t * 2 + (i & 1), 0};
    if (a->k == 16) {
        if (f == RK_FRAG_A)
            return (elem){base + ((i < 2 || (i >= 4 && i < 6)) ? g : g + 8), t * 2 + (i & 1) + (i >= 4 ? 8 : 0), 0};
        return (elem){t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g, 0};
    }
    if (a->k == 32) {
        /* 8-bit m16n8k32: A rows g for a0-a3 and a8-a11, K 4t + i % 4 (+16 from a8); B K 4t + i % 4 (+16 from b4) */
        if (f == RK_FRAG_A)
            return (elem){(i < 4 || (i >= 8 && i < 12)) ? g : g + 8, t * 4 + (i & 3) + (i >= 8 ? 16 : 0), 0};
        return (elem){t * 4 + (i & 3) + (i >= 4 ? 16 : 0), g, 0};
    }
    if (tf32) {
        if (f == RK_FRAG_A) return (elem){(i == 0 || i == 2) ? g : g + 8, (i < 2) ? t : t + 4, 0};
        return (elem){i == 0 ? t : t + 4, g, 0};
    }
    if (f == RK_FRAG_A) return (elem){i < 2 ? g : g + 8, t * 2 + (i & 1), 0};
    return (elem){t * 2 + i, g, 0};
}

static void test_maps_follow_the_isa_layouts(void **state) {
    (void)state;
    static const char *const names[] = {"A", "B", "C"};
    for (const rk_mma_atom *const *ap = rk_mma_atoms(); *ap; ap++) {
        const rk_mma_atom *a = *ap;
        const uint32_t rows[3] = {a->m, a->k, a->m}, cols[3] = {a->k, a->n, a->n};
        for (int fi = 0; fi < 3; fi++) {
            rk_frag f = (rk_frag)fi;
            uint32_t len = rk_mma_atom_len(a, f), cells = rows[fi] * cols[fi] * a->batch;
            assert_int_equal(cells, (uint32_t)a->lanes * len);
            unsigned char *seen = calloc(cells, 1);
            assert_non_null(seen);
            for (uint32_t l = 0; l < a->lanes; l++)
                for (uint32_t s = 0; s < len; s++) {
                    rk_lane_coord got = rk_lane_map_eval(rk_mma_atom_map(a, f), l, s);
                    elem e = {got.row, got.col, got.batch};
                    if (a->unit == RK_ATOM_UNIT_MFMA) {
                        /* the calculator names the holder of each element */
                        uint32_t hl, hi;
                        mfma_holder(a, f, e, &hl, &hi);
                        if (hl != l || hi != s)
                            fail_msg("%s %s lane %u slot %u: the map gives (%u, %u, block %u), which the ISA puts "
                                     "in lane %u item %u", a->op_id, names[fi], l, s, e.row, e.col, e.batch, hl, hi);
                    } else {
                        elem want = ptx_element(a, f, l, s);
                        if (want.row != e.row || want.col != e.col || want.batch != e.batch)
                            fail_msg("%s %s lane %u slot %u: the map gives (%u, %u), the PTX table (%u, %u)",
                                     a->op_id, names[fi], l, s, e.row, e.col, want.row, want.col);
                    }
                    if (e.row >= rows[fi] || e.col >= cols[fi] || e.batch >= a->batch)
                        fail_msg("%s %s lane %u slot %u: (%u, %u, %u) is outside the matrix", a->op_id, names[fi], l,
                                 s, e.row, e.col, e.batch);
                    uint32_t at = (e.batch * rows[fi] + e.row) * cols[fi] + e.col;
                    if (seen[at]++)
                        fail_msg("%s %s: element (%u, %u, %u) held twice", a->op_id, names[fi], e.row, e.col, e.batch);
                }
            free(seen);
        }
    }
}

/* The evaluator on hand-made maps: every term kind, all four terms, a
 * shift past the lane's bits and a stride that is not a power of two. */
static void test_evaluator(void **state) {
    (void)state;
    const rk_lane_map m = {"test", {
        {{RK_LANE_SRC_LANE, 1, 3, 5}, {RK_LANE_SRC_SLOT, 0, 1, 100}, {RK_LANE_SRC_LANE, 9, 7, 3}, {RK_LANE_SRC_SLOT, 2, 2, 7}},
        {{RK_LANE_SRC_SLOT, 1, 0xffff, 1}},
        {{RK_LANE_SRC_LANE, 0, 1, 2}},
    }};
    for (uint32_t l = 0; l < 1024; l += 7)
        for (uint32_t s = 0; s < 16; s++) {
            rk_lane_coord c = rk_lane_map_eval(&m, l, s);
            assert_int_equal(c.row, ((l >> 1) & 3) * 5 + (s & 1) * 100 + ((l >> 9) & 7) * 3 + ((s >> 2) & 2) * 7);
            assert_int_equal(c.col, s >> 1);
            assert_int_equal(c.batch, (l & 1) * 2);
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_and_names),
        cmocka_unit_test(test_fields_agree_with_names),
        cmocka_unit_test(test_maps_follow_the_isa_layouts),
        cmocka_unit_test(test_evaluator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
