/* rocke — the attention family's decode mode (mode = decode): Sq <= 8 new
 * query tokens per sequence over a paged (or contiguous) KV cache, one block
 * per (split, KV head, sequence) serving every query head of its KV head;
 * the heuristic (rows, split count), checks, signature, grid and cost.
 * attention_decode_build.c emits the kernel. Layer: kernels. */
#include <math.h>

#include "attention_decode_int.h"

enum { DB, DHQ, DHKV, DSQ, DSKV, DD };   /* the family's dimensions (attention.c) */

kn_decode_geom kn_attn_decode_geom(const rk_attention_spec *s, const rk_target *t) {
    kn_decode_geom g;
    g.vec = 16 / rk_tile_elem_bytes(s->dtype);
    g.lanes = s->head_dim / g.vec;
    g.slots = KN_DECODE_THREADS / g.lanes;
    g.warps = KN_DECODE_THREADS / t->wave_size;
    /* every warp's partial O and (m, l) per row, f32 */
    g.lds_bytes = g.warps * s->kv_rows * (s->head_dim + 2) * 4;
    return g;
}

static uint32_t pow2_at_least(uint64_t x) {
    uint32_t p = 1;
    while (p < x && p < (1u << 30)) p <<= 1;
    return p;
}

/* Whether the atom path's plan holds, with fewer stages (down to 1) when
 * they are free and the LDS does not hold them. */
static bool atom_fits(rk_attention_spec *a, const rk_target *t, bool free_stages) {
    kn_decode_atom da;
    while (kn_attn_decode_atom_plan(a, t, &da) != RK_OK) {
        if (!free_stages || a->stages <= 1) return false;
        a->stages--;
    }
    return true;
}

/* Rows: every query head of a KV head times Sq, rounded up to a power of
 * two. Splits: double while the grid (B * Hkv * splits blocks) stays under
 * two blocks per compute unit and every split keeps >= 256 keys of the
 * longest context, so one long sequence spreads over the GPU and 256
 * short ones stay one block each. */
void kn_attn_decode_tune(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked) {
    rk_attention_spec *a = &in->u.attn;
    if (!(locked >> KN_AK_WAVE & 1)) a->wave = t->wave_size;
    if (!(locked >> KN_AK_HD & 1) && (s->dim[DD] == 64 || s->dim[DD] == 128 || s->dim[DD] == 256))
        a->head_dim = (uint32_t)s->dim[DD];   /* a legal head_dim only: others fail at check_shape */
    uint64_t G = s->dim[DHKV] && s->dim[DHQ] % s->dim[DHKV] == 0 ? s->dim[DHQ] / s->dim[DHKV] : 1;
    if (!(locked >> KN_AK_ROWS & 1)) {
        uint32_t r = pow2_at_least(G * s->dim[DSQ]);
        a->kv_rows = r > 64 ? 64 : r;
    }
    /* K and V through a ring of 3 cp.async stages where the target has
     * cp.async; the AMD lowering of tile.async_copy is a plain load and
     * store, so there the keys come straight from global memory (1) */
    bool free_stages = !(locked >> KN_AK_STAGES & 1);
    uint32_t stages = t->features & RK_FEAT_SM80 ? 3 : 1;
    if (free_stages) a->stages = stages;
    if (!(locked >> KN_AK_PATH & 1)) {
        /* atoms from 16 rows on where the atom path serves the instance, else the lanes; on NVIDIA
         * with 16-bit caches from 4 rows: measured on the H200 (bench/RESULTS.md, session 5) at B32
         * Hq32 Hkv8 CTX8192 D128 page 16, 4008 GB/s of KV (94% of copy) against 3651 on the lanes */
        a->kv_path = RK_ATTN_PATH_VALU;
        uint32_t from = t->vendor == RK_VENDOR_NVIDIA && a->kv_dtype == RK_ATTN_KV_SAME ? 4 : 16;
        if (a->kv_rows >= from && atom_fits(a, t, free_stages)) a->kv_path = RK_ATTN_PATH_ATOM;
        if (free_stages && a->kv_path == RK_ATTN_PATH_VALU) a->stages = stages;
    } else if (kn_attn_decode_atoms(a)) {
        atom_fits(a, t, free_stages);
    }
    /* 16 rows on the lanes already spill; the ring's live values more than double that */
    if (free_stages && !kn_attn_decode_atoms(a) && a->kv_rows >= 16) a->stages = 1;
    if (!(locked >> KN_AK_SPLITS & 1)) {
        /* the most splits a run may use (each run picks its own from the batch's lengths,
         * rk_problem_attention_splits): room for 16 blocks a compute unit, 256 keys a split */
        uint64_t blocks = s->dim[DB] * s->dim[DHKV], want = 16ull * (t->compute_units ? t->compute_units : 1);
        uint32_t n = 1;
        while (n < 64 && blocks * n < want && s->dim[DSKV] / (2ull * n) >= 256) n *= 2;
        a->kv_splits = n;
    }
}

rk_scalar kn_attn_decode_kv_type(const rk_attention_spec *s) {
    return s->kv_dtype == RK_ATTN_KV_FP8 ? RK_S_FP8E4M3 : s->kv_dtype == RK_ATTN_KV_FP8FNUZ ? RK_S_FP8E4M3FNUZ
                                                                                          : s->dtype;
}

rk_status kn_attn_decode_atom_plan(const rk_attention_spec *s, const rk_target *t, kn_decode_atom *out) {
    memset(out, 0, sizeof *out);
    const rk_mma_atom *a = s->atom ? rk_mma_atom_get((rk_atom_id)s->atom) : kn_attn_default_atom(t, s->dtype);
    if (!a) return rk_fail(RK_ERR_INVALID, "attention: %s has no %s matrix atom for kv_path = atom (use kv_path = valu)",
                           t->name, kn_dtype_name(s->dtype));
    uint32_t W = KN_DECODE_THREADS / t->wave_size, rows = s->kv_rows < a->m ? a->m : s->kv_rows;
    out->nrg = rows / a->m < W ? rows / a->m : W;
    if (!out->nrg) out->nrg = 1;
    out->wtm = rows / out->nrg;
    out->nkg = W / out->nrg;
    out->bn = a->k > 16 ? a->k : 16;
    uint32_t piece = s->page_size ? s->page_size : 64;
    if (piece % out->bn)
        return rk_fail(RK_ERR_INVALID, "attention: kv_path = atom steps %u keys at a time (%s), but page_size = %u "
                       "(use page_size %u or more, or kv_path = valu)", out->bn, a->op_id, piece, out->bn);
    /* fp8 pieces are converted on the way into LDS: synchronous copies, one stage */
    out->stages = s->kv_dtype == RK_ATTN_KV_SAME && s->stages > 1 ? s->stages : 1;
    rk_attention_spec w = *s;
    w.mode = RK_ATTN_PREFILL, w.mask = RK_ATTN_MASK_NONE, w.lse = false, w.layout = RK_ATTN_BHSD;
    w.block_m = out->wtm, w.block_n = out->bn, w.warps = 1, w.stages = out->stages > 1 ? 2 : 1;
    w.atom = (int)a->id;
    rk_status st = kn_attn_plan_make(&w, t, &out->pl);
    if (st) return st;
    uint32_t eb = rk_tile_elem_bytes(s->dtype);
    out->kv_elems = out->pl.kv_stage;
    out->p_base = out->stages * out->nkg * out->kv_elems;
    out->lds_elems = out->p_base + W * out->pl.p_warp;
    uint32_t q_all = out->nrg * out->pl.q_elems;
    if (out->pl.q_in_regs) {
        out->q_base = 0;
        if (out->lds_elems < q_all) out->lds_elems = q_all;
    } else {
        out->q_base = out->lds_elems;
        out->lds_elems += q_all;
    }
    out->merge_bytes = out->nkg * rows * (s->head_dim + 2) * 4;
    uint64_t bytes = (uint64_t)out->lds_elems * eb + out->merge_bytes;
    if (bytes > t->lds_bytes)
        return rk_fail(RK_ERR_INVALID, "attention: kv_path = atom with kv_rows = %u, head_dim = %u and stages = %u "
                       "needs %llu bytes of LDS, more than %s's %u (use fewer stages, kv_path = valu, fewer rows or a "
                       "smaller head_dim)", s->kv_rows, s->head_dim, out->stages, (unsigned long long)bytes, t->name,
                       t->lds_bytes);
    return RK_OK;
}

rk_status kn_attn_decode_atom_validate(const rk_attention_spec *s, const rk_target *t) {
    kn_decode_atom da;
    return kn_attn_decode_atom_plan(s, t, &da);
}

bool kn_attn_decode_atoms(const rk_attention_spec *s) {
    if (s->kv_path == RK_ATTN_PATH_AUTO) return s->kv_rows >= 16;
    return s->kv_path == RK_ATTN_PATH_ATOM;
}

rk_status kn_attn_decode_validate(const rk_attention_spec *s, const rk_target *t) {
    if (s->dtype != RK_S_F16 && s->dtype != RK_S_BF16)
        return rk_fail(RK_ERR_INVALID, "attention: mode = decode takes f16 or bf16 queries and caches (dtype = %s)",
                       kn_dtype_name(s->dtype));
    if (s->lse)
        return rk_fail(RK_ERR_INVALID, "attention: lse = true is prefill only; mode = decode writes O alone");
    if (s->layout == RK_ATTN_VARLEN)
        return rk_fail(RK_ERR_INVALID, "attention: mode = decode takes Q and O as [B, Sq, Hq, D] and per-sequence "
                       "context lengths; layout = varlen is prefill only (use bhsd or bshd)");
    if (s->kv_dtype != RK_ATTN_KV_SAME) {
        /* the fp8 dialect the target converts natively */
        bool fnuz = !strcmp(t->name, "gfx942");
        if ((s->kv_dtype == RK_ATTN_KV_FP8FNUZ) != fnuz)
            return rk_fail(RK_ERR_INVALID, "attention: kv_dtype = %s, but %s's e4m3 is %s (use kv_dtype = %s)",
                           s->kv_dtype == RK_ATTN_KV_FP8 ? "fp8" : "fp8fnuz", t->name, fnuz ? "FNUZ" : "OCP e4m3fn",
                           fnuz ? "fp8fnuz" : "fp8");
    }
    if ((unsigned)s->kv_path >= RK_ATTN_PATH__COUNT)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'kv_path' out of range (auto, valu, atom)");
    if (kn_attn_decode_atoms(s)) return kn_attn_decode_atom_validate(s, t);
    if (s->kv_rows > 16)
        return rk_fail(RK_ERR_INVALID, "attention: kv_rows = %u on lanes (kv_path = valu) serves at most 16 rows; "
                       "use kv_path = atom (or auto) for 32 or 64", s->kv_rows);
    kn_decode_geom g = kn_attn_decode_geom(s, t);
    if (s->stages < 1 || s->stages > 4)
        return rk_fail(RK_ERR_INVALID, "attention: mode = decode takes stages = 1 (keys straight from global "
                       "memory) or 2..4 (a ring of async-copy LDS stages), got %u", s->stages);
    if (g.lanes > t->wave_size)
        return rk_fail(RK_ERR_INVALID, "attention: head_dim = %u needs %u lanes per key, more than %s's %u-lane waves",
                       s->head_dim, g.lanes, t->name, t->wave_size);
    if (g.lds_bytes > t->lds_bytes)
        return rk_fail(RK_ERR_INVALID, "attention: decode with kv_rows = %u and head_dim = %u needs %u bytes of LDS "
                       "for the warp merge, more than %s's %u; lower kv_rows", s->kv_rows, s->head_dim,
                       g.lds_bytes, t->name, t->lds_bytes);
    /* counted beside the merge area (the NVPTX pool overlays the two, the emulator does not) */
    if (kn_dec_ring_on(s) && kn_dec_ring_bytes(s) + g.lds_bytes > t->lds_bytes)
        return rk_fail(RK_ERR_INVALID, "attention: decode with stages = %u needs %u bytes of LDS for its ring "
                       "(%u keys of K and V a stage) and %u for the warp merge, more than %s's %u; use fewer stages",
                       s->stages, kn_dec_ring_bytes(s), kn_dec_ring_keys(s), g.lds_bytes, t->name, t->lds_bytes);
    return RK_OK;
}

rk_status kn_attn_decode_check_shape(const rk_attention_spec *a, const rk_shape *s) {
    unsigned long long B = s->dim[DB], Hq = s->dim[DHQ], Hkv = s->dim[DHKV], Sq = s->dim[DSQ], D = s->dim[DD];
    if (D != a->head_dim)
        return rk_fail(RK_ERR_INVALID, "attention: the shape's D = %llu, but the instance serves head_dim = %u "
                       "(build with --head-dim %llu, or pass --shape B,Hq,Hkv,Sq,CTX,%u)", D, a->head_dim, D,
                       a->head_dim);
    if (Hq % Hkv)
        return rk_fail(RK_ERR_INVALID, "attention: Hq = %llu is not a multiple of Hkv = %llu (each KV head serves "
                       "Hq / Hkv query heads: MHA Hkv = Hq, GQA a divisor, MQA 1)", Hq, Hkv);
    if (Sq > 8 || Hq / Hkv * Sq > 64)
        return rk_fail(RK_ERR_INVALID, "attention: mode = decode serves Sq = 1..8 new tokens per sequence, got Sq = "
                       "%llu with %llu query heads per KV head (at most 8 tokens and 64 rows per KV head; longer queries: "
                       "--mode prefill)", Sq, Hkv ? Hq / Hkv : 0);
    if (Hq / Hkv * Sq > a->kv_rows)
        return rk_fail(RK_ERR_INVALID, "attention: (Hq / Hkv) * Sq = %llu query rows per KV head, but the instance "
                       "serves kv_rows = %u (legal kv_rows: 1, 2, 4, 8, 16, 32, 64; build with --kv-rows %u)", Hq / Hkv * Sq,
                       a->kv_rows, pow2_at_least(Hq / Hkv * Sq));
    if (B > 65535 || Hkv > 65535)
        return rk_fail(RK_ERR_INVALID, "attention: B and Hkv must each be at most 65535 (grid z and y)");
    uint64_t pages = a->page_size ? (s->dim[DSKV] + a->page_size - 1) / a->page_size : 0;
    if (B * pages > INT32_MAX || B * s->dim[DSKV] > INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "attention: B * CTX = %llu keys passes the i32 block-table and length range",
                       B * (unsigned long long)s->dim[DSKV]);
    return RK_OK;
}

#define WORK_O(n) "B,Hq,Sq," #n ",D",
#define WORK_ML(n) "B,Hq,Sq," #n ",2",

void kn_attn_decode_sig_of(const rk_attention_spec *s, kn_attn_dsig *o) {
    int n = 0;
    o->q = n++, o->kc = n++, o->vc = n++;
    o->bt = s->page_size ? n++ : -1;
    o->lens = n++;
    bool fp8 = s->kv_dtype != RK_ATTN_KV_SAME;
    o->kscale = fp8 ? n++ : -1;
    o->vscale = fp8 ? n++ : -1;
    o->o = n++;
    bool split = s->kv_splits > 1;
    o->work_o = split ? n++ : -1;
    o->work_ml = split ? n++ : -1;
    o->arrivals = split ? n++ : -1;
    o->B = n++, o->Hq = n++, o->Hkv = n++, o->Sq = n++, o->Skv = n++;
    o->scale = n++;
    bool win = s->mask == RK_ATTN_MASK_WINDOW;
    o->wl = win ? n++ : -1;
    o->wr = win ? n++ : -1;
    o->nsplit = split ? n++ : -1;
}

void kn_attn_decode_signature(const rk_attention_spec *s, rk_ksig *sg) {
    static const char *const paged[] = {KN_ATTN_PAGED(16), KN_ATTN_PAGED(32), KN_ATTN_PAGED(64), KN_ATTN_PAGED(128)};
    static const char *const table[] = {KN_ATTN_TABLE(16), KN_ATTN_TABLE(32), KN_ATTN_TABLE(64), KN_ATTN_TABLE(128)};
    static const char *const work_o[] = {KN_ATTN_SPLITS(WORK_O)};
    static const char *const work_ml[] = {KN_ATTN_SPLITS(WORK_ML)};
    int pi = s->page_size ? kn_attn_log2(s->page_size / 16) : 0;
    const char *cache = s->page_size ? paged[pi] : "B,Hkv,Skv,D";
    kn_sig_add(sg, "Q", true, s->dtype, RK_KP_IN, "B,Sq,Hq,D");
    rk_scalar kv = kn_attn_decode_kv_type(s);
    kn_sig_add(sg, "K_cache", true, kv, RK_KP_IN, cache);
    kn_sig_add(sg, "V_cache", true, kv, RK_KP_IN, cache);
    if (s->page_size) kn_sig_add(sg, "block_table", true, RK_S_I32, RK_KP_IN, table[pi]);
    kn_sig_add(sg, "context_lens", true, RK_S_I32, RK_KP_IN, "B");
    if (s->kv_dtype != RK_ATTN_KV_SAME) {
        kn_sig_add(sg, "K_scale", true, RK_S_F32, RK_KP_IN, "Hkv");
        kn_sig_add(sg, "V_scale", true, RK_S_F32, RK_KP_IN, "Hkv");
    }
    kn_sig_add(sg, "O", true, s->dtype, RK_KP_OUT, "B,Sq,Hq,D");
    if (s->kv_splits > 1) {
        int si = kn_attn_log2(s->kv_splits) - 1;
        kn_sig_add(sg, "Work_o", true, RK_S_F32, RK_KP_WORK, work_o[si]);
        kn_sig_add(sg, "Work_ml", true, RK_S_F32, RK_KP_WORK, work_ml[si]);
        kn_sig_add(sg, "Arrivals", true, RK_S_F32, RK_KP_WORK, "B,Hkv");
    }
    static const char *const ext[] = {"B", "Hq", "Hkv", "Sq", "Skv"};
    for (int i = 0; i < 5; i++) kn_sig_add(sg, ext[i], false, RK_S_I32, RK_KP_SCALAR, NULL);
    kn_sig_add(sg, "scale", false, RK_S_F32, RK_KP_SCALAR, NULL);
    if (s->mask == RK_ATTN_MASK_WINDOW) {
        kn_sig_add(sg, "window_left", false, RK_S_I32, RK_KP_SCALAR, NULL);
        kn_sig_add(sg, "window_right", false, RK_S_I32, RK_KP_SCALAR, NULL);
    }
    if (s->kv_splits > 1) kn_sig_add(sg, "num_splits", false, RK_S_I32, RK_KP_SCALAR, NULL);
}

void kn_attn_decode_geometry(const rk_attention_spec *a, rk_launch_geom *g) {
    g->block[0] = KN_DECODE_THREADS;
    kn_geom_const(g, a->kv_splits);
    kn_geom_axis(g);
    kn_geom_dim(g, DHKV);
    kn_geom_axis(g);
    kn_geom_dim(g, DB);
    kn_geom_axis(g);
}

/* Bytes: the K and V keys of every sequence at the shape's context (each
 * read once per KV head), Q, O and the block table; flops: Q K^T and P V. */
void kn_attn_decode_cost(const rk_attention_spec *a, const rk_shape *s, double *bytes, double *flops) {
    double B = (double)s->dim[DB], Hq = (double)s->dim[DHQ], Hkv = (double)s->dim[DHKV], Sq = (double)s->dim[DSQ],
           Skv = (double)s->dim[DSKV], D = (double)s->dim[DD], eb = rk_tile_elem_bytes(a->dtype),
           kvb = rk_tile_elem_bytes(kn_attn_decode_kv_type(a));
    *flops = 4.0 * B * Hq * Sq * Skv * D;
    double pages = a->page_size ? B * ceil(Skv / a->page_size) * 4 : 0;
    *bytes = 2 * B * Skv * Hkv * D * kvb + 2 * B * Sq * Hq * D * eb + pages + B * 4;
}
