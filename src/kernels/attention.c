/* rocke — the attention family's table: knobs, the named problem dimensions
 * (B, Hq, Hkv, Sq, Skv, D), the scalars (extents, per-tensor batch / head /
 * sequence strides, softmax scale, window), the heuristic, shape checks,
 * signature, grid and cost. attention_plan.c validates, attention_build.c
 * emits the kernel, attention_reference.c is the double reference and the
 * varlen lengths. Layer: kernels. */
#include <math.h>
#include <stdio.h>

#include "attention_hopper.h"
#include "attention_unified_int.h"

static const char *const mask_names[] = {"none", "causal", "window", NULL};
static const char *const layout_names[] = {"bhsd", "bshd", "varlen", NULL};
static const char *const atom_names[] = {
    "auto",
#define RK_ATOM(id, name, ...) name,
#include "rocke/atoms.def"
    NULL,
};
static const uint32_t legal_hd[] = {64, 128, 256, 0};
static const uint32_t legal_bm[] = {16, 32, 64, 128, 192, 256, 0};   /* 192: path=wgmma only */
static const uint32_t legal_bn[] = {16, 32, 64, 128, 176, 0};        /* 176: path=wgmma only */
static const uint32_t legal_warps[] = {1, 2, 4, 8, 12, 0};   /* 12: path=wgmma block_m 192 only */
static const uint32_t legal_stages[] = {1, 2, 3, 4, 0};   /* 4: decode only */
static const uint32_t legal_wave[] = {32, 64, 0};
static const char *const mode_names[] = {"prefill", "decode", "unified", NULL};
static const uint32_t legal_page[] = {0, 16, 32, 64, 128, 0};
static const uint32_t legal_rows[] = {1, 2, 4, 8, 16, 32, 64, 0};
static const uint32_t legal_splits[] = {1, 2, 4, 8, 16, 32, 64, 0};
static const char *const kv_names[] = {"same", "fp8", "fp8fnuz", NULL};
static const char *const path_names[] = {"auto", "valu", "atom", NULL};
static const char *const pf_names[] = {"auto", "mma", "wgmma", NULL};
static const char *const sched_names[] = {"plain", "ws", "overlap", "pingpong", NULL};

const char *kn_attn_sched_name(int s) { return s >= 0 && s < RK_ATTN_SCHED__COUNT ? sched_names[s] : "?"; }

static const rk_knob knobs[] = {
    KN_DTYPE_HALF("dtype", "", u.attn.dtype, "Q, K, V and O element type"),
    KN_U32("head_dim", "d", u.attn.head_dim, legal_hd, false, "head dimension D the kernel serves"),
    KN_ENUM("mask", "m", u.attn.mask, mask_names, false,
            "none, causal or window (left, right given at run time), bottom-right aligned"),
    KN_BOOL("lse", "lse", u.attn.lse, "also write the log-sum-exp (f32, natural log) of every query row"),
    KN_ENUM("layout", "l", u.attn.layout, layout_names, false,
            "bhsd / bshd: padded [B,H,S,D] / [B,S,H,D] (strides are kernel arguments); varlen: packed "
            "[total,H,D] with cu_seqlens_q/k"),
    KN_U32("block_m", "bm", u.attn.block_m, legal_bm, true, "query rows per block"),
    KN_U32("block_n", "bn", u.attn.block_n, legal_bn, true, "keys per step of the KV loop"),
    KN_U32("warps", "w", u.attn.warps, legal_warps, true, "warps (waves) per block, stacked along the query rows"),
    KN_U32("stages", "s", u.attn.stages, legal_stages, true, "K/V LDS buffers in flight (2+: async copies)"),
    KN_ENUM("atom", "a", u.attn.atom, atom_names, true, "matrix atom (auto: the target's default for dtype)"),
    KN_U32("wave", "wv", u.attn.wave, legal_wave, true, "target wave/warp size (64 CDNA, 32 NVIDIA)"),
    KN_ENUM("mode", "md", u.attn.mode, mode_names, false,
            "prefill (the forward above) or decode (Sq <= 8 new tokens over a KV cache, split-KV)"),
    KN_U32("page_size", "ps", u.attn.page_size, legal_page, false,
           "decode: tokens per page of the paged K/V caches [pages, P, Hkv, D]; 0: contiguous [B, Hkv, S, D]"),
    KN_U32("kv_rows", "qr", u.attn.kv_rows, legal_rows, true,
           "decode: query rows a block serves, (Hq / Hkv) * Sq at most (all query heads of a KV head)"),
    KN_U32("kv_splits", "ks", u.attn.kv_splits, legal_splits, true,
           "decode: blocks per (sequence, KV head) over the context, merged by the last to arrive"),
    KN_ENUM("kv_dtype", "kv", u.attn.kv_dtype, kv_names, false,
            "decode: the caches' type, dtype's (same) or e4m3 with per-KV-head K and V scales (fp8: OCP, NVIDIA "
            "and gfx950; fp8fnuz: gfx942)"),
    KN_ENUM("kv_path", "kp", u.attn.kv_path, path_names, true,
            "decode: the scores on lanes (valu, up to 16 rows) or on matrix atoms (atom, 16..64 rows); auto: atoms "
            "from 16 rows on"),
    KN_ENUM("path", "pt", u.attn.path, pf_names, true,
            "prefill's kernel: mma (mma.sync / MFMA, every target) or wgmma (sm_90a: TMA and warpgroup MMA, every "
            "layout); auto: wgmma where it applies. unified: the body of full query blocks (wgmma on sm_90a with "
            "block_m 64, warps 4; decode blocks stay on mma.sync)"),
    KN_ENUM("schedule", "sc", u.attn.schedule, sched_names, true,
            "path=wgmma: plain (the consumers' thread 0 refills after a block barrier) or ws (a producer "
            "warpgroup streams K and V on full/empty mbarriers) or overlap (ws, the softmax of one key block under "
            "the previous block's P V) or pingpong (overlap, the consumer warpgroups taking turns on named barriers to "
            "issue their products)"),
    KN_BOOL("sinks", "snk", u.attn.sinks, "unified: a per-query-head f32 logit (sinks[Hq]) joins the softmax "
            "denominator"),
    KN_BOOL("softcap", "cap", u.attn.softcap, "unified: scores s -> softcap * tanh(s / softcap), the scalar softcap"),
    KN_BOOL("alibi", "alibi", u.attn.alibi, "unified: + alibi_slopes[h] * (j - i), key j, query position i"),
    KN_BOOL("whole_keys", "wk", u.attn.whole_keys, "unified: every warp keeps its own rows over whole key blocks, "
            "also in a decode's block (no key split across the warps: the variant rocke run picks for batches "
            "without decodes)"),
    KN_BOOL("exact_softmax", "xs", u.attn.exact_softmax, "path=wgmma: the mma kernel's softmax (scores scaled, then "
            "masked, max, exp2 with IEEE denormals) instead of the folded one (max of the raw scores, one FMA and "
            "ex2.approx.ftz per score; a scale <= 0 takes the exact one at run time)"),
    KN_BOOL("reverse_order", "ro", u.attn.reverse_order, "unified: the grid takes the query blocks last to first, "
            "all KV heads of one before the next (a batch listed prefills first starts its decodes at once)"),
};
_Static_assert(RK_COUNTOF(knobs) == KN_AK__COUNT, "knob indices follow the table");

static const rk_dim_decl dims[] = {
    {"B", 4, "batch"}, {"Hq", 32, "query heads"}, {"Hkv", 32, "key/value heads (divides Hq)"},
    {"Sq", 4096, "query length (varlen: the longest)"}, {"Skv", 4096, "key length (varlen: the longest)"},
    {"D", 128, "head dimension (the instance's head_dim)"},
};
enum { DB, DHQ, DHKV, DSQ, DSKV, DD };

static const rk_attention_spec *spec(const rk_instance *in) { return &in->u.attn; }

/* Without --shape the build checks the declared defaults against the knobs: D must be the
 * head_dim given and decode serves at most 8 new tokens, so both follow the instance. */
static void default_shape(const rk_instance *in, rk_shape *s) {
    s->dim[DD] = spec(in)->head_dim;
    if (spec(in)->mode == RK_ATTN_DECODE) s->dim[DSQ] = 1;
}
static double dm(const rk_shape *s, int i) { return (double)s->dim[i]; }

/* Strides of a padded / packed tensor with H heads and S rows per batch. */
static double sb(const rk_instance *in, const rk_shape *s, int h, int q) {
    return spec(in)->layout == RK_ATTN_VARLEN ? 0 : dm(s, h) * dm(s, q) * dm(s, DD);
}
static double sh(const rk_instance *in, const rk_shape *s, int q) {
    return spec(in)->layout == RK_ATTN_BHSD ? dm(s, q) * dm(s, DD) : dm(s, DD);
}
static double ss(const rk_instance *in, const rk_shape *s, int h) {
    return spec(in)->layout == RK_ATTN_BHSD ? dm(s, DD) : dm(s, h) * dm(s, DD);
}
#define STRIDES(t, h, q)                                                                          \
    static double t##_sb(const rk_instance *in, const rk_shape *s) { return sb(in, s, h, q); }    \
    static double t##_sh(const rk_instance *in, const rk_shape *s) { return sh(in, s, q); }       \
    static double t##_ss(const rk_instance *in, const rk_shape *s) { return ss(in, s, h); }
STRIDES(q, DHQ, DSQ)
STRIDES(k, DHKV, DSKV)
STRIDES(v, DHKV, DSKV)
STRIDES(o, DHQ, DSQ)
#define STRIDE_DECLS(t, T)                                                                                   \
    {#t "_sb", RK_S_I64, RK_SC_DERIVED, NULL, t##_sb, 0, T "'s batch stride (elements; varlen: unused)"},   \
    {#t "_sh", RK_S_I64, RK_SC_DERIVED, NULL, t##_sh, 0, T "'s head stride (elements)"},                   \
    {#t "_ss", RK_S_I32, RK_SC_DERIVED, NULL, t##_ss, 0, T "'s sequence stride (elements; D is contiguous)"}

static const rk_scalar_decl scalars[] = {
    {"B", RK_S_I32, RK_SC_DIM, "B", NULL, 0, "batch"},
    {"Hq", RK_S_I32, RK_SC_DIM, "Hq", NULL, 0, "query heads"},
    {"Hkv", RK_S_I32, RK_SC_DIM, "Hkv", NULL, 0, "key/value heads"},
    {"Sq", RK_S_I32, RK_SC_DIM, "Sq", NULL, 0, "query length"},
    {"Skv", RK_S_I32, RK_SC_DIM, "Skv", NULL, 0, "key length"},
    STRIDE_DECLS(q, "Q"), STRIDE_DECLS(k, "K"), STRIDE_DECLS(v, "V"), STRIDE_DECLS(o, "O"),
    {"scale", RK_S_F32, RK_SC_GIVEN, NULL, NULL, 0, "softmax scale (0: 1/sqrt(D), resolved by the problem)"},
    {"window_left", RK_S_I32, RK_SC_GIVEN, NULL, NULL, 128, "mask=window: keys before the diagonal (<0: all)"},
    {"window_right", RK_S_I32, RK_SC_GIVEN, NULL, NULL, 0, "mask=window: keys after the diagonal (<0: all)"},
    {"num_splits", RK_S_I32, RK_SC_GIVEN, NULL, NULL, 1,
     "decode or unified with kv_splits > 1: the splits this batch uses, 1..kv_splits (rk_problem_attention_splits)"},
    {"softcap", RK_S_F32, RK_SC_GIVEN, NULL, NULL, 30, "unified with softcap: the cap of softcap * tanh(s / softcap)"},
};
enum { SC_WINDOW_LEFT = 18, SC_WINDOW_RIGHT = 19 };   /* indices of the window's defaults in scalars[] */

void kn_attn_sig_of(const rk_attention_spec *s, kn_attn_sig *o) {
    int n = 0;
    o->q = n++, o->k = n++, o->v = n++, o->o = n++;
    o->lse = s->lse ? n++ : -1;
    bool vl = s->layout == RK_ATTN_VARLEN;
    o->cuq = vl ? n++ : -1;
    o->cuk = vl ? n++ : -1;
    o->B = n++, o->Hq = n++, o->Hkv = n++, o->Sq = n++, o->Skv = n++;
    for (int t = 0; t < 4; t++)
        for (int j = 0; j < 3; j++) o->stride[t][j] = n++;
    o->scale = n++;
    bool win = s->mask == RK_ATTN_MASK_WINDOW;
    o->wl = win ? n++ : -1;
    o->wr = win ? n++ : -1;
    bool maps = kn_attn_hopper(s);
    o->qmap = maps ? n++ : -1;
    o->kmap = maps ? n++ : -1;
    o->vmap = maps ? n++ : -1;
}

static void signature(const rk_instance *in, rk_ksig *sg) {
    const rk_attention_spec *s = spec(in);
    if (s->mode == RK_ATTN_DECODE) {
        kn_attn_decode_signature(s, sg);
        return;
    }
    if (s->mode == RK_ATTN_UNIFIED) {
        kn_attn_unified_signature(s, sg);
        return;
    }
    bool vl = s->layout == RK_ATTN_VARLEN, bhsd = s->layout == RK_ATTN_BHSD;
    /* varlen buffers hold B * Sq (B * Skv) rows: room for any lengths up to the maxima */
    kn_sig_add(sg, "Q", true, s->dtype, RK_KP_IN, bhsd ? "B,Hq,Sq,D" : "B,Sq,Hq,D");
    kn_sig_add(sg, "K", true, s->dtype, RK_KP_IN, bhsd ? "B,Hkv,Skv,D" : "B,Skv,Hkv,D");
    kn_sig_add(sg, "V", true, s->dtype, RK_KP_IN, bhsd ? "B,Hkv,Skv,D" : "B,Skv,Hkv,D");
    kn_sig_add(sg, "O", true, s->dtype, RK_KP_OUT, bhsd ? "B,Hq,Sq,D" : "B,Sq,Hq,D");
    if (s->lse) kn_sig_add(sg, "LSE", true, RK_S_F32, RK_KP_OUT, vl ? "B,Sq,Hq" : "B,Hq,Sq");
    if (vl) {
        kn_sig_add(sg, "cu_seqlens_q", true, RK_S_I32, RK_KP_IN, "B+1");
        kn_sig_add(sg, "cu_seqlens_k", true, RK_S_I32, RK_KP_IN, "B+1");
    }
    static const char *const ext[] = {"B", "Hq", "Hkv", "Sq", "Skv"};
    for (int i = 0; i < 5; i++) kn_sig_add(sg, ext[i], false, RK_S_I32, RK_KP_SCALAR, NULL);
    for (int t = 0; t < 4; t++)
        for (int j = 0; j < 3; j++) {
            const rk_scalar_decl *d = &scalars[5 + t * 3 + j];
            kn_sig_add(sg, d->name, false, d->type, RK_KP_SCALAR, NULL);
        }
    kn_sig_add(sg, "scale", false, RK_S_F32, RK_KP_SCALAR, NULL);
    if (s->mask == RK_ATTN_MASK_WINDOW) {
        kn_sig_add(sg, "window_left", false, RK_S_I32, RK_KP_SCALAR, NULL);
        kn_sig_add(sg, "window_right", false, RK_S_I32, RK_KP_SCALAR, NULL);
    }
    if (kn_attn_hopper(s)) kn_attn_hopper_signature(s, sg);
}

static void defaults(rk_instance *in) {
    in->u.attn = (rk_attention_spec){.dtype = RK_S_BF16, .head_dim = 128, .mask = RK_ATTN_MASK_NONE,
                                     .layout = RK_ATTN_BHSD, .block_m = 64, .block_n = 64, .warps = 4,
                                     .stages = 2, .atom = RK_ATOM_NONE, .wave = 32};
    in->u.attn.page_size = 16;
    in->u.attn.kv_rows = 4;
    in->u.attn.kv_splits = 1;
}

/* The first candidate (block_m, block_n, warps, stages) whose plan fits the
 * target with two blocks per compute unit's LDS, else the first that fits
 * at all; the mma.sync path keeps 16 rows per warp, MFMA 32 (two atoms). */
static void tune(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked) {
    rk_attention_spec *a = &in->u.attn;
    if (a->mode == RK_ATTN_DECODE) {
        kn_attn_decode_tune(in, t, s, locked);
        return;
    }
    if (a->mode == RK_ATTN_UNIFIED) {
        kn_attn_unified_tune(in, t, s, locked);
        return;
    }
    if (!(locked >> KN_AK_WAVE & 1)) a->wave = t->wave_size;
    /* the shape's D when the instance may serve it (check_shape names a mismatch) */
    for (const uint32_t *d = legal_hd; *d && !(locked >> KN_AK_HD & 1); d++)
        if (s->dim[DD] == *d) a->head_dim = *d;
    bool amd = t->vendor == RK_VENDOR_AMD;
    static const uint32_t nv[][4] = {{64, 64, 4, 2}, {64, 32, 4, 2}, {64, 32, 4, 1}, {32, 32, 2, 1}, {16, 16, 1, 1}};
    static const uint32_t cd[][4] = {{128, 64, 4, 2}, {128, 64, 4, 1}, {128, 32, 4, 1}, {64, 32, 4, 1},
                                     {16, 16, 1, 1}};
    /* D = 256 on mma.sync: 16-key steps keep S and P small beside O (0 spills at 64 they do not) */
    static const uint32_t nv256[][4] = {{64, 16, 4, 2}, {64, 16, 4, 1}, {32, 16, 2, 2}, {32, 16, 2, 1},
                                        {16, 16, 1, 1}};
    /* sm_90a: the wgmma kernel wherever its plan takes the spec (path auto, or unset) */
    int want = locked >> KN_AK_PFPATH & 1 ? a->path : RK_ATTN_PF_AUTO;
    if (want == RK_ATTN_PF_WGMMA || (want == RK_ATTN_PF_AUTO && !(locked >> KN_AK_ATOM & 1))) {
        rk_attention_spec w = *a;
        w.path = RK_ATTN_PF_WGMMA;
        kn_attn_hopper_tune(&w, locked);
        kn_attn_hplan hp;
        if (want == RK_ATTN_PF_WGMMA || kn_attn_hopper_plan(&w, t, &hp) == RK_OK) {
            *a = w;   /* an explicit path=wgmma keeps its knobs even where the plan refuses them: validate says why */
            return;
        }
    }
    a->path = RK_ATTN_PF_MMA;
    if (!(locked >> KN_AK_SCHED & 1)) a->schedule = RK_ATTN_SCHED_PLAIN;
    const uint32_t (*c)[4] = amd ? cd : a->head_dim == 256 ? nv256 : nv;
    for (size_t i = 0; i < 10; i++) {
        rk_attention_spec trial = *a;
        if (!(locked >> KN_AK_BM & 1)) trial.block_m = c[i % 5][0];
        if (!(locked >> KN_AK_BN & 1)) trial.block_n = c[i % 5][1];
        if (!(locked >> KN_AK_WARPS & 1)) trial.warps = c[i % 5][2];
        if (!(locked >> KN_AK_STAGES & 1)) trial.stages = c[i % 5][3];
        kn_attn_plan p;
        if (kn_attn_plan_make(&trial, t, &p) != RK_OK) continue;
        /* the last candidate (one warp of 16 rows) is only a fallback */
        if (i >= 5 || (i < 4 && 2 * p.lds_bytes <= t->lds_per_cu)) {
            *a = trial;
            return;
        }
    }
}

static rk_status validate(const rk_instance *in, const rk_target *t) {
    const rk_attention_spec *s = spec(in);
    if (s->wave != t->wave_size)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'wave' = %u, but %s runs %u-lane waves", s->wave, t->name,
                       t->wave_size);
    /* FlashAttention-3's tiles: three consumer warpgroups, 11 k16 slices of P V */
    if ((s->block_m == 192 || s->block_n == 176 || s->warps == 12) && !kn_attn_hopper(s))
        return rk_fail(RK_ERR_INVALID, "attention: knob 'block_m' = %u, 'block_n' = %u, 'warps' = %u: 192 rows, 176 "
                       "keys and 12 warps are path=wgmma tiles (prefill, sm_90a); this kernel takes block_m 16, 32, "
                       "64, 128, 256, block_n 16, 32, 64, 128 and warps 1, 2, 4, 8", s->block_m, s->block_n, s->warps);
    if (s->mode == RK_ATTN_DECODE) return kn_attn_decode_validate(s, t);
    if (s->mode == RK_ATTN_UNIFIED) return kn_attn_unified_validate(s, t);
    if (s->sinks || s->softcap || s->alibi || s->whole_keys || s->reverse_order)
        return rk_fail(RK_ERR_INVALID, "attention: sinks, softcap, alibi, whole_keys and reverse_order are unified "
                       "only (--mode unified)");
    if (s->kv_dtype != RK_ATTN_KV_SAME)
        return rk_fail(RK_ERR_INVALID, "attention: kv_dtype = fp8 is decode only (--mode decode)");
    if (kn_attn_hopper(s)) {
        kn_attn_hplan h;
        return kn_attn_hopper_plan(s, t, &h);
    }
    if (s->exact_softmax)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'exact_softmax' belongs to path=wgmma (sm_90a); the mma "
                       "kernel's softmax is the exact one already");
    if (s->schedule != RK_ATTN_SCHED_PLAIN)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'schedule' = %s belongs to path=wgmma (sm_90a); "
                       "the mma kernel has schedule=plain only", kn_attn_sched_name(s->schedule));
    kn_attn_plan p;
    return kn_attn_plan_make(s, t, &p);
}

static rk_status check_shape(const rk_instance *in, const rk_shape *s) {
    const rk_attention_spec *a = spec(in);
    if (a->mode == RK_ATTN_DECODE) return kn_attn_decode_check_shape(a, s);
    if (a->mode == RK_ATTN_UNIFIED) return kn_attn_unified_check_shape(a, s);
    if (s->dim[DD] != a->head_dim)
        return rk_fail(RK_ERR_INVALID, "attention: the shape's D = %llu, but the instance serves head_dim = %u "
                       "(build with --head-dim %llu, or pass --shape B,Hq,Hkv,Sq,Skv,%u)",
                       (unsigned long long)s->dim[DD], a->head_dim, (unsigned long long)s->dim[DD], a->head_dim);
    if (s->dim[DHQ] % s->dim[DHKV])
        return rk_fail(RK_ERR_INVALID, "attention: Hq = %llu is not a multiple of Hkv = %llu (each KV head serves "
                       "Hq / Hkv query heads: MHA Hkv = Hq, GQA a divisor, MQA 1)", (unsigned long long)s->dim[DHQ],
                       (unsigned long long)s->dim[DHKV]);
    if (s->dim[DB] > 65535 || s->dim[DHQ] > 65535)
        return rk_fail(RK_ERR_INVALID, "attention: B and Hq must each be at most 65535 (grid z and y)");
    /* lengths and cu_seqlens offsets are i32 (element offsets are formed in i64) */
    double rows = a->layout == RK_ATTN_VARLEN ? dm(s, DB) : 1;
    if (rows * dm(s, DSQ) > INT32_MAX || rows * dm(s, DSKV) > INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "attention: Sq and Skv (varlen: B * Sq and B * Skv, the packed rows) must "
                       "each be below 2^31");
    /* path=wgmma: the tensor maps' row coordinates are i32: B * H * S rows (bhsd), B * S (bshd, varlen) */
    double hq = a->layout == RK_ATTN_BHSD ? dm(s, DHQ) : 1, hkv = a->layout == RK_ATTN_BHSD ? dm(s, DHKV) : 1;
    if (kn_attn_hopper(a) && (dm(s, DB) * hq * dm(s, DSQ) > INT32_MAX || dm(s, DB) * hkv * dm(s, DSKV) > INT32_MAX))
        return rk_fail(RK_ERR_INVALID, "attention: path=wgmma addresses Q, K and V as %s rows of TMA maps (i32 "
                       "coordinates): %s must be below 2^31 (path=mma has no such limit)",
                       a->layout == RK_ATTN_BHSD ? "B * H * S" : "B * S",
                       a->layout == RK_ATTN_BHSD ? "B * Hq * Sq and B * Hkv * Skv" : "B * Sq and B * Skv");
    return RK_OK;
}

/* Prefill: (ceil(Sq / block_m), Hq, B) blocks of warps * wave threads;
 * decode: (kv_splits, Hkv, B). */
static void geometry(const rk_instance *in, rk_launch_geom *g) {
    const rk_attention_spec *a = spec(in);
    if (a->mode == RK_ATTN_DECODE) {
        kn_attn_decode_geometry(a, g);
        return;
    }
    if (a->mode == RK_ATTN_UNIFIED) {
        kn_attn_unified_geometry(a, g);
        return;
    }
    g->block[0] = a->warps * a->wave + (kn_attn_hopper(a) && a->schedule != RK_ATTN_SCHED_PLAIN ? 128 : 0);
    kn_geom_cdiv_dim(g, DSQ, a->block_m);
    kn_geom_axis(g);
    kn_geom_dim(g, DHQ);
    kn_geom_axis(g);
    kn_geom_dim(g, DB);
    kn_geom_axis(g);
}

/* Visible (query, key) pairs of one head: causal and window count them
 * (the window at its default bounds; varlen: at the maxima). */
static double pairs_of(const rk_attention_spec *a, int64_t Sq, int64_t Skv, int64_t wl, int64_t wr) {
    if (a->mask == RK_ATTN_MASK_NONE) return (double)Sq * (double)Skv;
    double n = 0;
    for (int64_t i = 0; i < Sq; i++) {
        int64_t lo, hi;
        kn_attn_visible(a->mask, i, Sq, Skv, wl, wr, &lo, &hi);
        n += hi > lo ? (double)(hi - lo) : 0;
    }
    return n;
}
static double pairs(const rk_attention_spec *a, const rk_shape *s) {
    return pairs_of(a, (int64_t)s->dim[DSQ], (int64_t)s->dim[DSKV], (int64_t)scalars[SC_WINDOW_LEFT].def,
                    (int64_t)scalars[SC_WINDOW_RIGHT].def);
}

static void cost(const rk_instance *in, const rk_shape *s, double *bytes, double *flops) {
    const rk_attention_spec *a = spec(in);
    if (a->mode == RK_ATTN_DECODE) {
        kn_attn_decode_cost(a, s, bytes, flops);
        return;
    }
    if (a->mode == RK_ATTN_UNIFIED) {
        kn_attn_unified_cost(a, s, bytes, flops);
        return;
    }
    double B = dm(s, DB), Hq = dm(s, DHQ), Hkv = dm(s, DHKV), D = dm(s, DD);
    *flops = 4.0 * B * Hq * pairs(a, s) * D;
    double eb = rk_tile_elem_bytes(a->dtype);
    *bytes = B * D * eb * (2 * Hq * dm(s, DSQ) + 2 * Hkv * dm(s, DSKV)) + (a->lse ? B * Hq * dm(s, DSQ) * 4 : 0);
}

static void input_range(const rk_instance *in, const rk_kparam *kp, double *lo, double *hi, double *away) {
    (void)in;
    (void)kp;
    *lo = -1.0;
    *hi = 1.0;
    *away = 0;
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    if (spec(in)->mode == RK_ATTN_DECODE) {
        kn_attn_decode_build(in, t, k, p);
        return;
    }
    if (spec(in)->mode == RK_ATTN_UNIFIED) {
        kn_attn_unified_build(in, t, k, p);
        return;
    }
    if (kn_attn_hopper(spec(in))) {
        kn_attn_hopper_build(in, t, k, p);
        return;
    }
    kn_attn_build(in, t, k, p);
}

static const char *note(const rk_instance *in, const rk_target *t) {
    if (in->u.attn.mode != RK_ATTN_PREFILL) return NULL;
    if (t->vendor == RK_VENDOR_NVIDIA && t->sm_version >= 90 && !kn_attn_hopper(&in->u.attn))
        return (t->features & RK_FEAT_SM90A) ? "attention on sm_90a runs the mma.sync kernel here (path=mma, or knobs "
                                               "the TMA + wgmma kernel does not take: docs/attention.md, \"The Hopper "
                                               "path\")"
                                             : "attention on sm_90 runs the mma.sync kernel: the TMA + wgmma kernel "
                                               "(path=wgmma) needs sm_90a";
    return NULL;
}

static void reference(const rk_problem *p, double **want, double **tol) {
    if (p->inst.u.attn.mode == RK_ATTN_DECODE) {
        kn_attn_decode_reference(p, want, tol);
        return;
    }
    if (p->inst.u.attn.mode == RK_ATTN_UNIFIED) {
        kn_attn_unified_reference(p, want, tol);
        return;
    }
    kn_attn_reference(p, want, tol);
}

static void fix_inputs(rk_problem *p) {
    kn_attn_fix_inputs(p);
    if (p->inst.u.attn.mode == RK_ATTN_DECODE) kn_attn_decode_fix_inputs(p);
    if (p->inst.u.attn.mode == RK_ATTN_UNIFIED) kn_attn_unified_fix_inputs(p);
}

static rk_status check_inputs(const rk_problem *p) {
    if (p->inst.u.attn.mode == RK_ATTN_UNIFIED) return kn_attn_unified_check_inputs(p);
    return p->inst.u.attn.mode == RK_ATTN_DECODE ? kn_attn_decode_check_inputs(p) : RK_OK;
}

static void problem_cost(const rk_problem *p, double *bytes, double *flops) {
    if (p->inst.u.attn.mode == RK_ATTN_DECODE) {
        kn_attn_decode_problem_cost(p, bytes, flops);
        return;
    }
    if (p->inst.u.attn.mode == RK_ATTN_UNIFIED) {
        kn_attn_unified_problem_cost(p, bytes, flops);
        return;
    }
    const rk_attention_spec *a = spec(&p->inst);
    const rk_host_buf *cq = kn_buf(p, "cu_seqlens_q"), *ck = kn_buf(p, "cu_seqlens_k");
    if (a->layout != RK_ATTN_VARLEN || !cq || !ck) {
        cost(&p->inst, &p->shape, bytes, flops);
        return;
    }
    /* varlen: every sequence at its own lengths (the window at the problem's bounds) */
    const rk_shape *s = &p->shape;
    double Hq = dm(s, DHQ), Hkv = dm(s, DHKV), D = dm(s, DD), eb = rk_tile_elem_bytes(a->dtype), n = 0, tq = 0, tk = 0;
    int64_t wl = (int64_t)kn_scalar(p, "window_left"), wr = (int64_t)kn_scalar(p, "window_right");
    for (uint64_t b = 0; b < s->dim[DB]; b++) {
        int64_t lq = (int64_t)(kn_get(cq, b + 1) - kn_get(cq, b)), lk = (int64_t)(kn_get(ck, b + 1) - kn_get(ck, b));
        n += pairs_of(a, lq, lk, wl, wr);
        tq += (double)lq, tk += (double)lk;
    }
    *flops = 4.0 * Hq * n * D;
    *bytes = D * eb * (2 * Hq * tq + 2 * Hkv * tk) + (a->lse ? Hq * tq * 4 : 0);
}

const kn_family kn_attention = {
    .name = "attention", .knobs = knobs, .nknobs = RK_COUNTOF(knobs), .dims = dims, .ndims = RK_COUNTOF(dims),
    .scalars = scalars, .nscalars = RK_COUNTOF(scalars), .defaults = defaults, .default_shape = default_shape, .tune = tune, .validate = validate,
    .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build, .cost = cost,
    .reference = reference, .input_range = input_range, .fix_inputs = fix_inputs, .check_inputs = check_inputs,
    .problem_cost = problem_cost, .note = note, .tensormap_box = kn_attn_hopper_tensormap_box,
    .tensormap_view = kn_attn_hopper_tensormap_view,
};
