/* rocke — the attention family's unified mode (mode = unified): one launch
 * for a mixed batch of prefill chunks and decodes over a paged KV cache;
 * block (query block, KV head, split) serves block_m / G query tokens of one
 * sequence times the G = Hq / Hkv query heads of its KV head. The heuristic,
 * checks, signature, grid and cost; attention_unified_build.c emits the
 * kernel. Layer: kernels. */
#include <math.h>

#include "attention_unified_int.h"

enum { DB, DHQ, DHKV, DSQ, DSKV, DD };   /* the family's dimensions (attention.c) */

rk_status kn_attn_unified_plan(const rk_attention_spec *s, const rk_target *t, kn_attn_plan *out) {
    if (s->page_size == 0)
        return rk_fail(RK_ERR_INVALID, "attention: mode = unified reads a paged cache (page_size 16, 32, 64 or 128)");
    rk_attention_spec w = *s;
    w.mode = RK_ATTN_PREFILL, w.mask = RK_ATTN_MASK_NONE, w.lse = false, w.layout = RK_ATTN_BHSD;
    w.kv_dtype = RK_ATTN_KV_SAME, w.path = RK_ATTN_PF_MMA, w.schedule = RK_ATTN_SCHED_PLAIN;
    /* path = wgmma: its rules first (the target, the tiles), then the decode blocks' mma.sync plan */
    uint32_t elems = 0;
    rk_status st = s->path == RK_ATTN_PF_WGMMA ? kn_attn_unified_wgmma_check(s, t, &elems) : RK_OK;
    if (!st) st = kn_attn_plan_make(&w, t, out);
    if (st || s->path != RK_ATTN_PF_WGMMA) return st;
    /* the full blocks' wgmma body shares the allocation: its Q and stages may need more */
    if (elems > out->lds_elems) {
        uint64_t bytes = (uint64_t)elems * rk_tile_elem_bytes(s->dtype);
        if (bytes > t->lds_bytes)
            return rk_fail(RK_ERR_INVALID, "attention: mode = unified with path = wgmma keeps Q and %u K/V stages "
                           "in %llu bytes of shared memory (block_n %u, D %u), %s has %u: fewer stages or a smaller "
                           "block_n", s->stages, (unsigned long long)bytes, s->block_n, s->head_dim, t->name,
                           t->lds_bytes);
        out->lds_elems = elems;
        out->lds_bytes = (uint32_t)bytes;
    }
    return RK_OK;
}

/* Rows: 64 (query tokens x the G heads of a KV head; the tokens a block
 * takes are 64 / G); the first candidate (block_n, stages) that fits two
 * blocks per compute unit's LDS, else the first that fits (a key block may
 * span pages: each chunk finds its own). */
void kn_attn_unified_tune(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked) {
    rk_attention_spec *a = &in->u.attn;
    if (!(locked >> KN_AK_WAVE & 1)) a->wave = t->wave_size;
    if (!(locked >> KN_AK_HD & 1) && (s->dim[DD] == 64 || s->dim[DD] == 128 || s->dim[DD] == 256))
        a->head_dim = (uint32_t)s->dim[DD];
    if (!(locked >> KN_AK_MASK & 1) && a->mask == RK_ATTN_MASK_NONE) a->mask = RK_ATTN_MASK_CAUSAL;
    if (!(locked >> KN_AK_SPLITS & 1)) a->kv_splits = 8;
    bool amd = t->vendor == RK_VENDOR_AMD;
    static const uint32_t nv[][3] = {{64, 64, 3}, {64, 64, 2}, {64, 32, 2}, {64, 16, 2}, {64, 16, 1}};
    static const uint32_t nv256[][3] = {{64, 16, 2}, {64, 16, 1}, {64, 16, 2}, {64, 16, 1}, {64, 16, 1}};
    static const uint32_t cd[][3] = {{64, 64, 1}, {64, 32, 1}, {64, 16, 1}, {64, 32, 1}, {64, 16, 1}};
    const uint32_t (*c)[3] = amd ? cd : a->head_dim == 256 ? nv256 : nv;
    /* path: wgmma for the full blocks on sm_90a where its body takes the tiles (auto or unset), else the
     * mma.sync / MFMA body everywhere (a variant copied from a wgmma instance goes back to mma) */
    bool pinned = locked >> KN_AK_PFPATH & 1 && a->path != RK_ATTN_PF_AUTO;
    bool try_wg = pinned ? a->path == RK_ATTN_PF_WGMMA : (t->features & RK_FEAT_SM90A) != 0;
    if (!pinned && a->path == RK_ATTN_PF_WGMMA) a->path = RK_ATTN_PF_MMA;
    for (size_t i = 0; i < 10; i++) {
        rk_attention_spec trial = *a;
        if (try_wg) trial.path = RK_ATTN_PF_WGMMA;
        if (!(locked >> KN_AK_BM & 1)) trial.block_m = c[i % 5][0];
        if (!(locked >> KN_AK_BN & 1)) trial.block_n = c[i % 5][1];
        if (!(locked >> KN_AK_WARPS & 1)) trial.warps = 4;
        if (!(locked >> KN_AK_STAGES & 1)) trial.stages = c[i % 5][2];
        kn_attn_plan p;
        if (kn_attn_unified_plan(&trial, t, &p) != RK_OK) {
            if (pinned || trial.path != RK_ATTN_PF_WGMMA) continue;
            trial.path = a->path;   /* these tiles on the mma body */
            if (kn_attn_unified_plan(&trial, t, &p) != RK_OK) continue;
        }
        if (i >= 5 || 2 * p.lds_bytes <= t->lds_per_cu) {
            *a = trial;
            return;
        }
    }
}

rk_status kn_attn_unified_validate(const rk_attention_spec *s, const rk_target *t) {
    if (s->dtype != RK_S_F16 && s->dtype != RK_S_BF16)
        return rk_fail(RK_ERR_INVALID, "attention: mode = unified takes f16 or bf16 queries and caches (dtype = %s)",
                       kn_dtype_name(s->dtype));
    if (s->layout != RK_ATTN_BHSD)
        return rk_fail(RK_ERR_INVALID, "attention: mode = unified packs Q and O as [total_q, Hq, D] with query_start "
                       "offsets; the layout knob is prefill only (leave it at bhsd)");
    if (s->mask != RK_ATTN_MASK_CAUSAL && s->mask != RK_ATTN_MASK_WINDOW)
        return rk_fail(RK_ERR_INVALID, "attention: mode = unified is causal inside each sequence (mask = causal, or "
                       "window for a sliding window of window_left keys); mask = none is prefill only");
    if (s->kv_dtype != RK_ATTN_KV_SAME) {
        /* the e4m3 dialect the target converts natively */
        bool fnuz = !strcmp(t->name, "gfx942");
        if ((s->kv_dtype == RK_ATTN_KV_FP8FNUZ) != fnuz)
            return rk_fail(RK_ERR_INVALID, "attention: kv_dtype = %s, but %s's e4m3 is %s (use kv_dtype = %s)",
                           s->kv_dtype == RK_ATTN_KV_FP8 ? "fp8" : "fp8fnuz", t->name, fnuz ? "FNUZ" : "OCP e4m3fn",
                           fnuz ? "fp8fnuz" : "fp8");
    }
    if (s->page_size == 0)
        return rk_fail(RK_ERR_INVALID, "attention: mode = unified reads a paged cache (page_size 16, 32, 64 or 128)");
    kn_attn_plan p;
    return kn_attn_unified_plan(s, t, &p);
}

rk_status kn_attn_unified_check_shape(const rk_attention_spec *a, const rk_shape *s) {
    unsigned long long B = s->dim[DB], Hq = s->dim[DHQ], Hkv = s->dim[DHKV], Sq = s->dim[DSQ], D = s->dim[DD],
                       Skv = s->dim[DSKV];
    if (D != a->head_dim)
        return rk_fail(RK_ERR_INVALID, "attention: the shape's D = %llu, but the instance serves head_dim = %u "
                       "(build with --head-dim %llu, or pass --shape B,Hq,Hkv,Sq,Skv,%u)", D, a->head_dim, D, a->head_dim);
    if (Hq % Hkv)
        return rk_fail(RK_ERR_INVALID, "attention: Hq = %llu is not a multiple of Hkv = %llu (each KV head serves "
                       "Hq / Hkv query heads: MHA Hkv = Hq, GQA a divisor, MQA 1)", Hq, Hkv);
    if (Hq / Hkv > a->block_m)
        return rk_fail(RK_ERR_INVALID, "attention: Hq / Hkv = %llu query heads per KV head, but a block of the instance "
                       "holds block_m = %u rows (query tokens x heads); rebuild with a larger --block-m", Hq / Hkv,
                       a->block_m);
    if (Sq > B * Skv)
        return rk_fail(RK_ERR_INVALID, "attention: Sq = %llu query tokens cannot fit B = %llu sequences of at most Skv = "
                       "%llu keys each (every sequence's new tokens are among its keys)", Sq, B, Skv);
    if (Hkv > 65535 || B > 65535)
        return rk_fail(RK_ERR_INVALID, "attention: B and Hkv must each be at most 65535");
    uint64_t pages = (Skv + a->page_size - 1) / a->page_size;
    if ((uint64_t)B * pages > INT32_MAX || Sq * Hq > INT32_MAX || Sq + B > INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "attention: the batch passes the i32 ranges of the block table (B * "
                       "ceil(Skv / page_size) pages) or of the packed rows (total_q * Hq)");
    return RK_OK;
}

#define WORK_O(n) "Sq,Hq," #n ",D",
#define WORK_ML(n) "Sq,Hq," #n ",2",

void kn_attn_unified_sig_of(const rk_attention_spec *s, kn_attn_usig *o) {
    int n = 0;
    o->q = n++, o->kc = n++, o->vc = n++, o->bt = n++, o->qstart = n++, o->kvlens = n++;
    bool fp8 = s->kv_dtype != RK_ATTN_KV_SAME, split = s->kv_splits > 1;
    o->kscale = fp8 ? n++ : -1;
    o->vscale = fp8 ? n++ : -1;
    o->sinks = s->sinks ? n++ : -1;
    o->slopes = s->alibi ? n++ : -1;
    o->o = n++;
    o->lse = s->lse ? n++ : -1;
    o->work_o = split ? n++ : -1;
    o->work_ml = split ? n++ : -1;
    o->arrivals = split ? n++ : -1;
    o->B = n++, o->Hq = n++, o->Hkv = n++, o->Sq = n++, o->Skv = n++;
    o->scale = n++;
    o->nsplit = split ? n++ : -1;
    o->cap = s->softcap ? n++ : -1;
    o->wl = s->mask == RK_ATTN_MASK_WINDOW ? n++ : -1;
}

void kn_attn_unified_signature(const rk_attention_spec *s, rk_ksig *sg) {
    static const char *const paged[] = {KN_ATTN_PAGED(16), KN_ATTN_PAGED(32), KN_ATTN_PAGED(64), KN_ATTN_PAGED(128)};
    static const char *const table[] = {KN_ATTN_TABLE(16), KN_ATTN_TABLE(32), KN_ATTN_TABLE(64), KN_ATTN_TABLE(128)};
    static const char *const work_o[] = {KN_ATTN_SPLITS(WORK_O)};
    static const char *const work_ml[] = {KN_ATTN_SPLITS(WORK_ML)};
    int pi = s->page_size >= 16 ? kn_attn_log2(s->page_size / 16) : 0;
    kn_sig_add(sg, "Q", true, s->dtype, RK_KP_IN, "Sq,Hq,D");
    rk_scalar kv = kn_attn_decode_kv_type(s);
    kn_sig_add(sg, "K_cache", true, kv, RK_KP_IN, paged[pi]);
    kn_sig_add(sg, "V_cache", true, kv, RK_KP_IN, paged[pi]);
    kn_sig_add(sg, "block_table", true, RK_S_I32, RK_KP_IN, table[pi]);
    kn_sig_add(sg, "query_start", true, RK_S_I32, RK_KP_IN, "B+1");
    kn_sig_add(sg, "kv_lens", true, RK_S_I32, RK_KP_IN, "B");
    if (s->kv_dtype != RK_ATTN_KV_SAME) {
        kn_sig_add(sg, "K_scale", true, RK_S_F32, RK_KP_IN, "Hkv");
        kn_sig_add(sg, "V_scale", true, RK_S_F32, RK_KP_IN, "Hkv");
    }
    if (s->sinks) kn_sig_add(sg, "sinks", true, RK_S_F32, RK_KP_IN, "Hq");
    if (s->alibi) kn_sig_add(sg, "alibi_slopes", true, RK_S_F32, RK_KP_IN, "Hq");
    kn_sig_add(sg, "O", true, s->dtype, RK_KP_OUT, "Sq,Hq,D");
    if (s->lse) kn_sig_add(sg, "LSE", true, RK_S_F32, RK_KP_OUT, "Sq,Hq");
    if (s->kv_splits > 1) {
        int si = kn_attn_log2(s->kv_splits) - 1;
        kn_sig_add(sg, "Work_o", true, RK_S_F32, RK_KP_WORK, work_o[si]);
        kn_sig_add(sg, "Work_ml", true, RK_S_F32, RK_KP_WORK, work_ml[si]);
        kn_sig_add(sg, "Arrivals", true, RK_S_F32, RK_KP_WORK, "Sq,Hkv");
    }
    static const char *const ext[] = {"B", "Hq", "Hkv", "Sq", "Skv"};
    for (int i = 0; i < 5; i++) kn_sig_add(sg, ext[i], false, RK_S_I32, RK_KP_SCALAR, NULL);
    kn_sig_add(sg, "scale", false, RK_S_F32, RK_KP_SCALAR, NULL);
    if (s->kv_splits > 1) kn_sig_add(sg, "num_splits", false, RK_S_I32, RK_KP_SCALAR, NULL);
    if (s->softcap) kn_sig_add(sg, "softcap", false, RK_S_F32, RK_KP_SCALAR, NULL);
    if (s->mask == RK_ATTN_MASK_WINDOW) kn_sig_add(sg, "window_left", false, RK_S_I32, RK_KP_SCALAR, NULL);
}

/* Grid x: floor(total_q / BQ) + B query blocks with BQ = block_m / G tokens
 * each (sequence b's blocks start at floor(query_start[b] / BQ) + b, so
 * every sequence has cdiv(q_len, BQ) of them, plus at most one empty); y: the
 * KV heads; z: kv_splits (blocks past the run's num_splits return at once). */
void kn_attn_unified_geometry(const rk_attention_spec *a, rk_launch_geom *g) {
    g->block[0] = a->warps * a->wave;
    kn_geom_dim(g, DSQ);
    kn_geom_const(g, a->block_m);
    kn_geom_dim(g, DHQ);
    kn_geom_dim(g, DHKV);
    kn_geom_op(g, RK_GEOM_DIV);
    kn_geom_op(g, RK_GEOM_DIV);
    kn_geom_op(g, RK_GEOM_DIV);
    kn_geom_dim(g, DB);
    kn_geom_op(g, RK_GEOM_ADD);
    kn_geom_axis(g);
    kn_geom_dim(g, DHKV);
    kn_geom_axis(g);
    kn_geom_const(g, a->kv_splits);
    kn_geom_axis(g);
}

/* The shape alone: as if one sequence held all Sq queries at the end of
 * Skv keys (rk_problem_cost counts the batch's real lengths). */
void kn_attn_unified_cost(const rk_attention_spec *a, const rk_shape *s, double *bytes, double *flops) {
    double Hq = (double)s->dim[DHQ], Hkv = (double)s->dim[DHKV], Sq = (double)s->dim[DSQ], Skv = (double)s->dim[DSKV],
           D = (double)s->dim[DD], eb = rk_tile_elem_bytes(a->dtype);
    double q = Sq < Skv ? Sq : Skv;
    *flops = 4.0 * Hq * D * (q * (Skv - q) + q * (q + 1) / 2);
    *bytes = 2 * Skv * Hkv * D * eb + 2 * Sq * Hq * D * eb;
}
