/* rocke — the convolution families' tables: conv (2-D: N, C, H, W, K, R,
 * S) and conv3d (N, C, D, H, W, K, T, R, S), channels-last, forward and
 * both gradients as implicit GEMMs on the GEMM plan: knobs (the geometry
 * ones run-time, outside the kernel name), scalars, the heuristic, shape
 * checks, signature, grid and cost. conv_build.c builds, conv_reference.c
 * checks. Layer: kernels. */
#include <stdio.h>

#include "conv_int.h"
#include "gemm_hopper.h"

static const char *const dir_names[] = {"fwd", "dgrad", "wgrad", NULL};
static const char *const algo_names[] = {"igemm", "gemm1x1", "direct", NULL};
/* the GEMM's paths conv takes (RK_GEMM_PATH_MMA, _WGMMA; not stream), then
 * auto: the heuristic's choice */
static const char *const path_names[] = {"mma", "wgmma", "auto", NULL};
enum { CONV_PATH_AUTO = RK_GEMM_PATH_WGMMA + 1 };
static const char *const atom_names[] = {
    "auto",
#define RK_ATOM(id, name, ...) name,
#include "rocke/atoms.def"
    NULL,
};
static const uint32_t legal_tile[] = {16, 32, 64, 128, 256, 0};
static const uint32_t legal_warps[] = {1, 2, 4, 8, 0};   /* 8: path=wgmma, tile M 128 */
static const uint32_t legal_stages[] = {1, 2, 3, 4, 0};
static const uint32_t legal_vec[] = {1, 2, 4, 8, 0};
static const uint32_t legal_group[] = {1, 2, 4, 8, 16, 0};
static const uint32_t legal_wave[] = {32, 64, 0};
/* algo direct's depthwise kernel: value i > 0 is 2^(i-1) (0: off, the small-group kernel) */
static const char *const dw_pix_names[] = {"off", "1", "2", "4", "8", NULL};
static const char *const dw_cvec_names[] = {"off", "1", "2", "4", "8", "16", "32", "64", NULL};
/* load=tma: the GEMM kernel's knobs (the GEMM family's values) */
static const char *const load_names[] = {"copy", "tma", NULL};
static const char *const schedule_names[] = {"plain", "ws", "persistent", "pingpong", NULL};
static const char *const epilogue_names[] = {"direct", "cshuffle", "tma", NULL};
/* load=tma, algo igemm: the pixel box's rows and columns (0: unset) */
static const uint32_t legal_box[] = {0, 1, 2, 4, 8, 16, 32, 64, 128, 0};
static const uint32_t legal_blocks[] = {0, 1, 2, 3, 4, 6, 8, 16, 32, 64, 66, 108, 114, 128, 132, 256, 264, 0};
/* wgrad's splits: 1..16 on path mma (its sum holds every split's partials), 1..32 on wgmma */
static const uint32_t legal_split[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17,
                                       18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 0};

/* The knobs both families share, then the geometry (tag NULL: not in the
 * kernel name; 2-D knobs start at index 1 of the (d, h, w) arrays). */
#define CONV_KNOBS                                                                                              \
    KN_ENUM("direction", "d", u.conv.direction, dir_names, false, "fwd (Y from X, W), dgrad (dX from dY, W), "   \
            "wgrad (dW from dY, X)"),                                                                            \
    KN_ENUM("algo", "al", u.conv.algo, algo_names, true,                                                        \
            "igemm (implicit GEMM, im2col gathered), gemm1x1 (1x1, stride 1, unpadded: a plain GEMM) or direct "  \
            "(fwd, 1..16 channels per group; vec_a output channels per thread; depthwise fwd, dgrad and wgrad: see "  \
            "dw_pix)"),         \
    KN_DTYPE("dtype", "", u.conv.g.dtype, "input and weight element type (f32: algo direct, depthwise dgrad and "    \
             "wgrad only)"),                                                                                     \
    KN_DTYPE("out_dtype", "o", u.conv.g.out_dtype, "output element type"),                                      \
    KN_TUPLE("tile", "t", u.conv.g.tile, 3, legal_tile, true, "block tile of the implicit GEMM, MxNxK"),      \
    KN_TUPLE("warps", "w", u.conv.g.warps, 2, legal_warps, true, "warps per block MxN"),                     \
    KN_ENUM("atom", "a", u.conv.g.atom, atom_names, true, "matrix atom (auto: the target's default)"),       \
    KN_U32("stages", "s", u.conv.g.stages, legal_stages, true, "LDS buffers in flight (2+: async copies)"),  \
    KN_U32("vec_a", "va", u.conv.g.vec_a, legal_vec, true, "elements per access of the GEMM's A (direct: channels)"), \
    KN_U32("vec_b", "vb", u.conv.g.vec_b, legal_vec, true, "elements per global access of the GEMM's B"),   \
    KN_U32("group_m", "g", u.conv.g.group_m, legal_group, true, "grouped-M block order (1: none)"),          \
    KN_U32("wave", "wv", u.conv.g.wave, legal_wave, true, "target wave/warp size (64 CDNA, 32 NVIDIA)"),     \
    KN_U32("split_k", "sk", u.conv.g.split_k, legal_split, true,                                              \
           "wgrad: the N*P*Q reduction cut over grid y (algo direct: grid x), summed in split order through Work"),                      \
    KN_EPI("fuse", u.conv.g.fuse, "fwd epilogue chain, e.g. bias,relu or add (operands in out_dtype)"),       \
    KN_ENUM("path", "p", u.conv.g.path, path_names, true,                                                      \
            "matrix unit: mma (mma.sync/MFMA), wgmma (sm_90a fwd: gathered wgmma) or auto (the heuristic)"),   \
    KN_ENUM_QUIET("dw_pix", "px", u.conv.dw_pix, dw_pix_names, true,                                          \
                  "algo direct, depthwise: outputs per thread, fwd pixels along Q (weights staged in LDS, a sliding " \
                  "window at stride 1), dgrad dX pixels stride_w apart along W, wgrad taps; off: the small-group "    \
                  "kernel (fwd)"),                                            \
    KN_ENUM_QUIET("dw_cvecs", "cv", u.conv.dw_cvecs, dw_cvec_names, true,                                     \
                  "algo direct, depthwise: channel vectors per block of 256 threads (the rest: pixel groups)"), \
    KN_ENUM_QUIET("load", "ld", u.conv.load, load_names, true,                                                 \
            "path=wgmma: copy (the threads fill the stages, cp.async) or tma (algo gemm1x1 fwd/dgrad: the GEMM "  \
            "family's TMA kernel on tensor maps of X, W and Y; C and K multiples of 8, groups 1)"),              \
    KN_ENUM_QUIET("schedule", "sc", u.conv.g.schedule, schedule_names, true,                                   \
            "load=tma: the GEMM kernel's plain, ws, persistent or pingpong schedule"),                          \
    KN_U32_QUIET("blocks", "pb", u.conv.g.blocks, legal_blocks, true,                                          \
            "load=tma, schedule=persistent|pingpong: blocks in the grid (0: the heuristic's SM count)"),        \
    KN_ENUM_QUIET("epilogue", "ep", u.conv.g.epilogue, epilogue_names, true,                                   \
            "load=tma: Y stores direct (from the accumulators) or tma (staged in shared memory, TMA boxes)"),  \
    KN_U32_QUIET("box_p", "bp", u.conv.box_p, legal_box, true,                                                 \
            "load=tma, algo igemm (fwd): output rows of the M tile's pixel box (tile M / (box_p x box_q) images)"), \
    KN_U32_QUIET("box_q", "bq", u.conv.box_q, legal_box, true,                                                 \
            "load=tma, algo igemm (fwd): output columns of the M tile's pixel box")

static const rk_knob conv_knobs[] = {
    CONV_KNOBS,
    KN_TUPLE("stride", NULL, u.conv.stride[1], 2, NULL, false, "run-time: stride HxW"),
    KN_TUPLE("pad", NULL, u.conv.pad[2], 4, NULL, false, "run-time: padding before and after, H0xH1xW0xW1"),
    KN_TUPLE("dilation", NULL, u.conv.dilation[1], 2, NULL, false, "run-time: dilation HxW"),
    KN_U32("groups", NULL, u.conv.groups, NULL, false, "run-time: groups (C and K multiples of it)"),
};
static const rk_knob conv3d_knobs[] = {
    CONV_KNOBS,
    KN_TUPLE("stride", NULL, u.conv.stride, 3, NULL, false, "run-time: stride DxHxW"),
    KN_TUPLE("pad", NULL, u.conv.pad, 6, NULL, false, "run-time: padding before and after, D0xD1xH0xH1xW0xW1"),
    KN_TUPLE("dilation", NULL, u.conv.dilation, 3, NULL, false, "run-time: dilation DxHxW"),
    KN_U32("groups", NULL, u.conv.groups, NULL, false, "run-time: groups (C and K multiples of it)"),
};
enum { CK_DIR, CK_ALGO, CK_DT, CK_ODT, CK_TILE, CK_WARPS, CK_ATOM, CK_STAGES, CK_VA, CK_VB, CK_GROUP, CK_WAVE,
       CK_SPLIT, CK_FUSE, CK_PATH, CK_DWPIX, CK_DWCV, CK_LOAD, CK_SCHED, CK_BLOCKS, CK_EPI, CK_BOXP, CK_BOXQ };

static const rk_dim_decl dims2[] = {
    {"N", 8, "images"}, {"C", 64, "input channels"}, {"H", 56, "input height"}, {"W", 56, "input width"},
    {"K", 64, "output channels"}, {"R", 3, "filter height"}, {"S", 3, "filter width"},
};
static const rk_dim_decl dims3[] = {
    {"N", 2, "images"}, {"C", 32, "input channels"}, {"D", 8, "input depth"}, {"H", 28, "input height"},
    {"W", 28, "input width"}, {"K", 32, "output channels"}, {"T", 3, "filter depth"}, {"R", 3, "filter height"},
    {"S", 3, "filter width"},
};

bool kn_conv_is_3d(const rk_instance *in) { return in->family == RK_FAMILY_CONV3D; }

uint32_t kn_conv_dw_pix(const rk_conv_spec *c) { return c->dw_pix > 0 ? 1u << (c->dw_pix - 1) : 0; }
uint32_t kn_conv_dw_cvecs(const rk_conv_spec *c) { return c->dw_cvecs > 0 ? 1u << (c->dw_cvecs - 1) : 0; }

void kn_conv_geo_of(const rk_instance *in, const rk_shape *s, kn_conv_geo *g) {
    const rk_conv_spec *c = &in->u.conv;
    bool d3 = kn_conv_is_3d(in);
    memset(g, 0, sizeof *g);
    g->nsp = d3 ? 3 : 2;
    /* 2-D: N C H W K R S; 3-D: N C D H W K T R S */
    g->n = s->dim[0];
    g->c = s->dim[1];
    g->in[0] = d3 ? s->dim[2] : 1;
    g->in[1] = s->dim[d3 ? 3 : 2];
    g->in[2] = s->dim[d3 ? 4 : 3];
    g->k = s->dim[d3 ? 5 : 4];
    g->filt[0] = d3 ? s->dim[6] : 1;
    g->filt[1] = s->dim[d3 ? 7 : 5];
    g->filt[2] = s->dim[d3 ? 8 : 6];
    g->groups = c->groups ? c->groups : 1;
    g->cg = g->c / g->groups;
    g->kg = g->k / g->groups;
    for (int i = 0; i < 3; i++) {
        bool used = d3 || i > 0;
        g->stride[i] = used ? c->stride[i] : 1;
        g->dil[i] = used ? c->dilation[i] : 1;
        g->pad0[i] = used ? c->pad[2 * i] : 0;
        g->pad1[i] = used ? c->pad[2 * i + 1] : 0;
        int64_t span = (int64_t)g->in[i] + (int64_t)(g->pad0[i] + g->pad1[i]) -
                       (int64_t)(g->dil[i] * (g->filt[i] - 1)) - 1;
        if (span < 0 || g->stride[i] == 0) {
            g->out[i] = 0;
            g->empty = true;
        } else {
            g->out[i] = (uint64_t)span / g->stride[i] + 1;
        }
    }
}

void kn_conv_gemm_extents(const rk_instance *in, const kn_conv_geo *g, uint64_t *M, uint64_t *N, uint64_t *K) {
    uint64_t taps = g->filt[0] * g->filt[1] * g->filt[2];
    uint64_t opix = g->n * g->out[0] * g->out[1] * g->out[2], ipix = g->n * g->in[0] * g->in[1] * g->in[2];
    switch ((rk_conv_dir)in->u.conv.direction) {
    case RK_CONV_FWD: *M = opix, *N = g->kg, *K = taps * g->cg; return;
    case RK_CONV_DGRAD: *M = ipix, *N = g->cg, *K = g->kg * taps; return;
    case RK_CONV_WGRAD: *M = g->kg, *N = taps * g->cg, *K = opix; return;
    case RK_CONV__COUNT: break;
    }
    *M = *N = *K = 0;
}

rk_gemm_spec kn_conv_gemm_spec(const rk_instance *in) {
    rk_gemm_spec s = in->u.conv.g;
    static const rk_gemm_layout lay[] = {RK_GEMM_RC, RK_GEMM_RR, RK_GEMM_CR};
    s.layout = (unsigned)in->u.conv.direction < RK_CONV__COUNT ? lay[in->u.conv.direction] : RK_GEMM_RC;
    s.split_reduce = RK_GEMM_SPLIT_WORKSPACE;
    s.path = in->u.conv.g.path == RK_GEMM_PATH_WGMMA ? RK_GEMM_PATH_WGMMA : RK_GEMM_PATH_MMA;
    s.xcd = 0;   /* schedule, blocks and epilogue: load=tma's (else plain, 0, direct) */
    return s;
}

static void defaults(rk_instance *in) {
    kn_gemm_defaults(in);
    rk_gemm_spec g = in->u.gemm;
    in->u.conv = (rk_conv_spec){.g = g, .direction = RK_CONV_FWD, .algo = RK_CONV_IGEMM,
                                .stride = {1, 1, 1}, .pad = {1, 1, 1, 1, 1, 1}, .dilation = {1, 1, 1}, .groups = 1};
    in->u.conv.g.tile[0] = in->u.conv.g.tile[1] = 64;
    in->u.conv.g.stages = 2;
    in->u.conv.g.path = RK_GEMM_PATH_MMA;
}

/* ---- derived extents and scalars ---------------------------------------------------------- */
static uint64_t extent(const rk_instance *in, const rk_shape *s, const char *name, size_t len) {
    kn_conv_geo g;
    kn_conv_geo_of(in, s, &g);
    uint64_t M, N, K;
    kn_conv_gemm_extents(in, &g, &M, &N, &K);
    static const char *const names[] = {"O", "P", "Q", "Cg", "G", "GM", "GN"};
    uint64_t v[] = {g.out[0], g.out[1], g.out[2], g.cg, g.groups, M, N};
    for (size_t i = 0; i < RK_COUNTOF(names); i++)
        if (strlen(names[i]) == len && !strncmp(names[i], name, len)) return v[i];
    return 0;
}

#define GEO_SCALAR(fn, expr)                                                     \
    static double fn(const rk_instance *in, const rk_shape *s) {                 \
        kn_conv_geo g;                                                           \
        kn_conv_geo_of(in, s, &g);                                               \
        return (double)(expr);                                                   \
    }
GEO_SCALAR(d_o, g.out[0])
GEO_SCALAR(d_p, g.out[1])
GEO_SCALAR(d_q, g.out[2])
GEO_SCALAR(d_sd, g.stride[0])
GEO_SCALAR(d_sh, g.stride[1])
GEO_SCALAR(d_sw, g.stride[2])
GEO_SCALAR(d_pd, g.pad0[0])
GEO_SCALAR(d_ph, g.pad0[1])
GEO_SCALAR(d_pw, g.pad0[2])
GEO_SCALAR(d_dd, g.dil[0])
GEO_SCALAR(d_dh, g.dil[1])
GEO_SCALAR(d_dw, g.dil[2])
GEO_SCALAR(d_groups, g.groups)
GEO_SCALAR(d_ldd, g.k)

#define CONV_COMMON_SCALARS                                                                       \
    {"N", RK_S_I32, RK_SC_DIM, "N", NULL, 0, "images"}, {"C", RK_S_I32, RK_SC_DIM, "C", NULL, 0, "input channels"}, \
    {"H", RK_S_I32, RK_SC_DIM, "H", NULL, 0, "input height"},                                    \
    {"W", RK_S_I32, RK_SC_DIM, "W", NULL, 0, "input width"},                                     \
    {"K", RK_S_I32, RK_SC_DIM, "K", NULL, 0, "output channels"},                                 \
    {"R", RK_S_I32, RK_SC_DIM, "R", NULL, 0, "filter height"},                                   \
    {"S", RK_S_I32, RK_SC_DIM, "S", NULL, 0, "filter width"},                                    \
    {"P", RK_S_I32, RK_SC_DERIVED, NULL, d_p, 0, "output height"},                               \
    {"Q", RK_S_I32, RK_SC_DERIVED, NULL, d_q, 0, "output width"},                                \
    {"stride_h", RK_S_I32, RK_SC_DERIVED, NULL, d_sh, 0, "stride along H"},                      \
    {"stride_w", RK_S_I32, RK_SC_DERIVED, NULL, d_sw, 0, "stride along W"},                      \
    {"pad_h", RK_S_I32, RK_SC_DERIVED, NULL, d_ph, 0, "padding before H"},                       \
    {"pad_w", RK_S_I32, RK_SC_DERIVED, NULL, d_pw, 0, "padding before W"},                       \
    {"dil_h", RK_S_I32, RK_SC_DERIVED, NULL, d_dh, 0, "dilation along H"},                       \
    {"dil_w", RK_S_I32, RK_SC_DERIVED, NULL, d_dw, 0, "dilation along W"},                       \
    {"groups", RK_S_I32, RK_SC_DERIVED, NULL, d_groups, 0, "groups"},                             \
    {"alpha", RK_S_F32, RK_SC_GIVEN, NULL, NULL, 1.0, "--fuse scale factor"},                    \
    {"alpha1", RK_S_F32, RK_SC_GIVEN, NULL, NULL, 1.0, "second scale factor"},                   \
    {"ldd0", RK_S_I32, RK_SC_DERIVED, NULL, d_ldd, 0, "D0's row pitch (K)"},                     \
    {"ldd1", RK_S_I32, RK_SC_DERIVED, NULL, d_ldd, 0, "D1's row pitch (K)"}
static const rk_scalar_decl scalars2[] = {CONV_COMMON_SCALARS};
static const rk_scalar_decl scalars3[] = {
    CONV_COMMON_SCALARS,
    {"D", RK_S_I32, RK_SC_DIM, "D", NULL, 0, "input depth"},
    {"T", RK_S_I32, RK_SC_DIM, "T", NULL, 0, "filter depth"},
    {"O", RK_S_I32, RK_SC_DERIVED, NULL, d_o, 0, "output depth"},
    {"stride_d", RK_S_I32, RK_SC_DERIVED, NULL, d_sd, 0, "stride along D"},
    {"pad_d", RK_S_I32, RK_SC_DERIVED, NULL, d_pd, 0, "padding before D"},
    {"dil_d", RK_S_I32, RK_SC_DERIVED, NULL, d_dd, 0, "dilation along D"},
};

/* ---- signature -------------------------------------------------------------------------- */
static void signature(const rk_instance *in, rk_ksig *sg) {
    const rk_conv_spec *c = &in->u.conv;
    bool d3 = kn_conv_is_3d(in);
    const char *xl = d3 ? "N,D,H,W,C" : "N,H,W,C", *yl = d3 ? "N,O,P,Q,K" : "N,P,Q,K";
    const char *wl = d3 ? "K,T,R,S,Cg" : "K,R,S,Cg";
    rk_scalar dt = c->g.dtype, odt = c->g.out_dtype;
    switch ((rk_conv_dir)c->direction) {
    case RK_CONV_FWD:
        kn_sig_add(sg, "X", true, dt, RK_KP_IN, xl);
        kn_sig_add(sg, "Wt", true, dt, RK_KP_IN, wl);
        kn_sig_add(sg, "Y", true, odt, RK_KP_OUT, yl);
        break;
    case RK_CONV_DGRAD:
        kn_sig_add(sg, "dY", true, dt, RK_KP_IN, yl);
        kn_sig_add(sg, "Wt", true, dt, RK_KP_IN, wl);
        kn_sig_add(sg, "dX", true, odt, RK_KP_OUT, xl);
        break;
    case RK_CONV_WGRAD:
    case RK_CONV__COUNT:
        kn_sig_add(sg, "dY", true, dt, RK_KP_IN, yl);
        kn_sig_add(sg, "X", true, dt, RK_KP_IN, xl);
        kn_sig_add(sg, "dW", true, odt, RK_KP_OUT, wl);
        break;
    }
    /* the geometry, in one order for both families (3-D adds d first) */
    static const char *const g2[] = {"N", "C", "H", "W", "K", "R", "S", "P", "Q", "stride_h", "stride_w",
                                     "pad_h", "pad_w", "dil_h", "dil_w", "groups"};
    static const char *const g3[] = {"N", "C", "D", "H", "W", "K", "T", "R", "S", "O", "P", "Q", "stride_d",
                                     "stride_h", "stride_w", "pad_d", "pad_h", "pad_w", "dil_d", "dil_h", "dil_w",
                                     "groups"};
    const char *const *gs = d3 ? g3 : g2;
    size_t ng = d3 ? RK_COUNTOF(g3) : RK_COUNTOF(g2);
    for (size_t i = 0; i < ng; i++) kn_sig_add(sg, gs[i], false, RK_S_I32, RK_KP_SCALAR, NULL);
    rk_epi_param ps[RK_EPI_MAX_PARAMS];
    uint32_t n = rk_epi_params(&c->g.fuse, odt, ps);
    static const char *const stat[] = {"Bias", "Bias1", "alpha", "alpha1", "D0", "D1", "ldd0", "ldd1"};
    for (uint32_t i = 0; i < n; i++) {
        const char *nm = NULL;
        for (size_t j = 0; j < RK_COUNTOF(stat); j++)
            if (!strcmp(stat[j], ps[i].name)) nm = stat[j];
        RK_ASSERT(nm, "conv: an epilogue parameter the validator does not allow");
        const char *dims = !ps[i].ptr ? NULL : c->g.fuse.s[ps[i].step].kind == RK_EPI_BIAS ? "K" : yl;
        kn_sig_add(sg, nm, ps[i].ptr, ps[i].type, ps[i].ptr ? RK_KP_IN : RK_KP_SCALAR, dims);
    }
    /* wgrad split-K: split_k slices of every group's dW, then the counters */
#define WS(n) #n ",G,GM,GN"
    static const char *const work_dims[] = {WS(2),  WS(3),  WS(4),  WS(5),  WS(6),  WS(7),  WS(8),  WS(9),
                                            WS(10), WS(11), WS(12), WS(13), WS(14), WS(15), WS(16), WS(17),
                                            WS(18), WS(19), WS(20), WS(21), WS(22), WS(23), WS(24), WS(25),
                                            WS(26), WS(27), WS(28), WS(29), WS(30), WS(31), WS(32), WS(33)};
#undef WS
    _Static_assert(RK_COUNTOF(work_dims) == KN_CONV_WG_SPLIT_MAX, "one Work shape per split count");
    if (c->g.split_k > 1 && c->g.split_k <= KN_CONV_WG_SPLIT_MAX)
        kn_sig_add(sg, "Work", true, RK_S_F32, RK_KP_WORK, work_dims[c->g.split_k - 1]);
    if (kn_conv_tma(in)) kn_conv_tma_signature(in, sg);
    if (kn_conv_box(in)) kn_conv_box_signature(in, sg);
}

/* ---- validation ------------------------------------------------------------------------- */
/* The run-time knobs: checked when building and again for each problem. */
static rk_status geometry_ok(const rk_instance *in, const char *fam) {
    const rk_conv_spec *c = &in->u.conv;
    uint32_t nsp = kn_conv_is_3d(in) ? 3 : 2;
    for (uint32_t i = 3 - nsp; i < 3; i++)
        if (!c->stride[i] || !c->dilation[i])
            return rk_fail(RK_ERR_INVALID, "%s: knobs 'stride' and 'dilation' must be >= 1 along every axis", fam);
    if (!c->groups) return rk_fail(RK_ERR_INVALID, "%s: knob 'groups' must be >= 1", fam);
    return RK_OK;
}

static rk_status validate(const rk_instance *in, const rk_target *t) {
    const rk_conv_spec *c = &in->u.conv;
    const char *fam = kn_conv_is_3d(in) ? "conv3d" : "conv";
    if ((unsigned)c->direction >= RK_CONV__COUNT)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'direction' out of range (legal: fwd, dgrad, wgrad)", fam);
    if ((unsigned)c->algo >= RK_CONV_ALGO__COUNT)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'algo' out of range (legal: igemm, gemm1x1, direct)", fam);
    if (c->algo == RK_CONV_DIRECT && c->direction != RK_CONV_FWD && !c->dw_pix)
        return rk_fail(RK_ERR_INVALID, "%s: algo direct computes direction %s on the depthwise kernel only (set "
                       "dw_pix and dw_cvecs, or build with --shape; the small-group kernel is fwd only)", fam,
                       dir_names[c->direction]);
    if ((c->dw_pix || c->dw_cvecs) && c->algo != RK_CONV_DIRECT)
        return rk_fail(RK_ERR_INVALID, "%s: knobs 'dw_pix' and 'dw_cvecs' shape algo direct's depthwise kernel; "
                       "with algo %s leave them off", fam, algo_names[c->algo]);
    if (!c->dw_pix != !c->dw_cvecs)
        return rk_fail(RK_ERR_INVALID, "%s: knobs 'dw_pix' = %s and 'dw_cvecs' = %s go together: both off (the "
                       "small-group kernel) or both set (the depthwise kernel)", fam, dw_pix_names[c->dw_pix],
                       dw_cvec_names[c->dw_cvecs]);
    if (c->g.wave != t->wave_size)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'wave' = %u, but %s runs %u-lane waves", fam, c->g.wave, t->name,
                       t->wave_size);
    rk_status st = geometry_ok(in, fam);
    if (st) return st;
    if (c->g.split_k > 1 && c->direction != RK_CONV_WGRAD)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'split_k' = %u splits the wgrad reduction only (legal here: 1)",
                       fam, c->g.split_k);
    if (c->g.fuse.n && c->direction != RK_CONV_FWD)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'fuse' applies to the forward output only (direction fwd)", fam);
    for (uint32_t i = 0; i < c->g.fuse.n; i++)
        if (c->g.fuse.s[i].kind == RK_EPI_BIAS_ROW)
            return rk_fail(RK_ERR_INVALID, "%s: knob 'fuse': bias_row is not offered (legal: bias, scale, clamp, "
                           "activations, add, mul)", fam);
    rk_epi_param ps[RK_EPI_MAX_PARAMS];
    uint32_t np = rk_epi_params(&c->g.fuse, c->g.out_dtype, ps), nb = 0, nd = 0;
    for (uint32_t i = 0; i < np; i++) {
        nb += ps[i].ptr && c->g.fuse.s[ps[i].step].kind == RK_EPI_BIAS;
        nd += ps[i].ptr && c->g.fuse.s[ps[i].step].kind != RK_EPI_BIAS;
    }
    if (nb > 2 || nd > 2)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'fuse' takes at most 2 bias and 2 add/mul steps", fam);
    if (c->algo == RK_CONV_DIRECT && c->direction != RK_CONV_FWD) {
        /* the depthwise dgrad / wgrad kernels: no matrix unit, no GEMM plan */
        if (c->g.path != RK_GEMM_PATH_MMA)
            return rk_fail(RK_ERR_INVALID, "%s: algo direct uses no matrix unit: knob 'path' must be mma (or auto)",
                           fam);
        uint32_t acc = kn_conv_dw_pix(c) * c->g.vec_a;
        if (c->direction == RK_CONV_WGRAD && acc > KN_CONV_DW_WG_ACC)
            return rk_fail(RK_ERR_INVALID, "%s: depthwise wgrad with dw_pix %u and vec_a %u holds %u f32 accumulators "
                           "per thread, at most %u (they live through the pixel loop: lower dw_pix or vec_a)", fam,
                           kn_conv_dw_pix(c), c->g.vec_a, acc, KN_CONV_DW_WG_ACC);
        return RK_OK;
    }
    if (!kn_dtype_in(kn_dtypes_half, c->g.dtype)) {   /* every kernel from here multiplies 16-bit inputs */
        char legal[64];
        return rk_fail(RK_ERR_INVALID, "%s: knob 'dtype' = %s: direction %s with algo %s takes %s (%s runs on algo "
                       "direct's depthwise dgrad and wgrad kernels only)", fam, kn_dtype_name(c->g.dtype),
                       dir_names[c->direction], algo_names[c->algo], kn_dtype_list_text(kn_dtypes_half, legal,
                       sizeof legal), kn_dtype_name(c->g.dtype));
    }
    if ((unsigned)c->g.path >= CONV_PATH_AUTO)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'path' must be mma or wgmma once built (auto is the heuristic's "
                       "choice: build with --shape, or name the path)", fam);
    st = kn_conv_tma_check(in, t, fam);
    if (st || kn_conv_tma(in) || kn_conv_box(in)) return st;
    if (c->g.path == RK_GEMM_PATH_WGMMA) return kn_conv_hopper_check(in, t, fam);
    if (c->g.split_k > KN_CONV_MMA_SPLIT_MAX)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'split_k' = %u: path=mma splits wgrad at most %u ways (its sum holds "
                       "every split's partials; path=wgmma takes up to %u)", fam, c->g.split_k, KN_CONV_MMA_SPLIT_MAX,
                       KN_CONV_WG_SPLIT_MAX);
    rk_gemm_spec s = kn_conv_gemm_spec(in);
    kn_gemm_plan p;
    st = kn_gemm_plan_make(&s, t, false, &p);
    if (!st) st = kn_gemm_plan_plain(&p);
    if (st) {   /* the GEMM plan's rules, told as this family's (as conv_hopper.c) */
        const char *m = rk_error_message();
        if (!strncmp(m, "gemm: ", 6)) m += 6;
        return rk_fail(st, "%s: %s", fam, m);
    }
    return RK_OK;
}

/* The depthwise kernel's limits: one channel per group, K in whole
 * vectors, filter rows that fit the LDS stage, the grid's extents. */
static rk_status dw_shape_ok(const rk_conv_spec *c, const kn_conv_geo *g, const char *fam) {
    uint32_t vec = c->g.vec_a, pix = kn_conv_dw_pix(c), cv = kn_conv_dw_cvecs(c);
    if (g->cg != 1 || g->kg != 1 || g->k % vec)
        return rk_fail(RK_ERR_INVALID, "%s: algo direct's depthwise kernel (dw_pix %u) needs C/groups = K/groups = 1 "
                       "with K a multiple of vec_a = %u; here C/groups = %llu, K/groups = %llu, K = %llu: build with "
                       "--dw-pix off --dw-cvecs off --vec-a 1 (the small-group kernel), or with --shape", fam, pix, vec,
                       (unsigned long long)g->cg, (unsigned long long)g->kg, (unsigned long long)g->k);
    if (c->direction != RK_CONV_WGRAD && g->filt[2] > KN_CONV_DW_TAPS)
        return rk_fail(RK_ERR_INVALID, "%s: filter width S = %llu: algo direct's depthwise kernel stages whole filter "
                       "rows of at most %u taps in LDS; build with --dw-pix off --dw-cvecs off --vec-a 1", fam,
                       (unsigned long long)g->filt[2], KN_CONV_DW_TAPS);
    uint64_t cblocks = (g->k / vec + cv - 1) / cv;
    uint64_t pgroups = g->n * g->out[0] * g->out[1] * ((g->out[2] + pix - 1) / pix);
    if (c->direction == RK_CONV_DGRAD) {   /* dX pixel groups: rows and columns in residue classes */
        uint64_t per = (g->in[2] + g->stride[2] - 1) / g->stride[2];
        uint64_t rows = g->stride[1] * ((g->in[1] + g->stride[1] - 1) / g->stride[1]);
        pgroups = g->n * g->in[0] * rows * g->stride[2] * ((per + pix - 1) / pix);
    }
    uint64_t pblocks = (pgroups + KN_CONV_DIRECT_THREADS / cv - 1) / (KN_CONV_DIRECT_THREADS / cv);
    if (c->direction == RK_CONV_WGRAD) {   /* (x) splits, (y) channel blocks, (z) tap chunks */
        uint64_t chunks = (g->filt[0] * g->filt[1] * g->filt[2] + pix - 1) / pix;
        if (cblocks > 65535 || chunks > 65535)
            return rk_fail(RK_ERR_INVALID, "%s: depthwise wgrad: a grid of %llu channel blocks x %llu tap chunks is "
                           "larger than 65535 x 65535 (raise dw_cvecs or dw_pix)", fam, (unsigned long long)cblocks,
                           (unsigned long long)chunks);
        return RK_OK;
    }
    if (cblocks > 65535 || pblocks > INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "%s: algo direct's depthwise kernel: a grid of %llu x %llu blocks is larger "
                       "than 2^31 - 1 x 65535 (raise dw_cvecs or dw_pix)", fam, (unsigned long long)pblocks,
                       (unsigned long long)cblocks);
    return RK_OK;
}

static rk_status check_shape(const rk_instance *in, const rk_shape *sh) {
    const rk_conv_spec *c = &in->u.conv;
    const char *fam = kn_conv_is_3d(in) ? "conv3d" : "conv";
    rk_status st = geometry_ok(in, fam);
    if (st) return st;
    kn_conv_geo g;
    kn_conv_geo_of(in, sh, &g);
    if (g.c % g.groups || g.k % g.groups)
        return rk_fail(RK_ERR_INVALID, "%s: C = %llu and K = %llu must both be multiples of groups = %llu", fam,
                       (unsigned long long)g.c, (unsigned long long)g.k, (unsigned long long)g.groups);
    if (g.empty) {
        static const char ax[] = "dhw";
        for (int i = 0; i < 3; i++)
            if (!g.out[i])
                return rk_fail(RK_ERR_INVALID, "%s: the output is empty along %c: input %llu + padding %llu + %llu is "
                               "smaller than the dilated filter %llu (dilation %llu x (%llu - 1) + 1)", fam, ax[i],
                               (unsigned long long)g.in[i], (unsigned long long)g.pad0[i],
                               (unsigned long long)g.pad1[i], (unsigned long long)(g.dil[i] * (g.filt[i] - 1) + 1),
                               (unsigned long long)g.dil[i], (unsigned long long)g.filt[i]);
    }
    uint64_t ximg = g.in[0] * g.in[1] * g.in[2] * g.c, yimg = g.out[0] * g.out[1] * g.out[2] * g.k;
    uint64_t M, N, K;
    kn_conv_gemm_extents(in, &g, &M, &N, &K);
    uint64_t welems = g.k * g.filt[0] * g.filt[1] * g.filt[2] * g.cg;
    if (g.n * ximg > INT32_MAX || g.n * yimg > INT32_MAX || welems > INT32_MAX ||
        M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || g.groups > 65535)
        return rk_fail(RK_ERR_INVALID, "%s: every tensor must hold fewer than 2^31 elements (and groups <= 65535)",
                       fam);
    st = kn_conv_hopper_check_shape(in, &g, fam);
    if (st) return st;
    st = kn_conv_tma_check_shape(in, &g, fam);
    if (st) return st;
    uint64_t tiles = (M + c->g.tile[0] - 1) / c->g.tile[0] * ((N + c->g.tile[1] - 1) / c->g.tile[1]);
    if (tiles > INT32_MAX) return rk_fail(RK_ERR_INVALID, "%s: more output tiles than a grid holds", fam);
    bool one = g.filt[0] * g.filt[1] * g.filt[2] == 1;
    for (int i = 0; i < 3; i++) one = one && g.stride[i] == 1 && !g.pad0[i] && !g.pad1[i];
    if (c->algo == RK_CONV_GEMM1X1 && !one)
        return rk_fail(RK_ERR_INVALID, "%s: algo gemm1x1 reads a 1x1 filter at stride 1 without padding as a plain "
                       "GEMM; this problem needs algo igemm", fam);
    if (c->algo == RK_CONV_DIRECT) {
        if (g.cg > KN_CONV_DIRECT_MAX_CPG || g.kg > KN_CONV_DIRECT_MAX_CPG)
            return rk_fail(RK_ERR_INVALID, "%s: algo direct serves 1..%d channels per group, this problem has C/groups "
                           "= %llu and K/groups = %llu: use algo igemm", fam, KN_CONV_DIRECT_MAX_CPG,
                           (unsigned long long)g.cg, (unsigned long long)g.kg);
        if (c->dw_pix) return dw_shape_ok(c, &g, fam);
        if (c->g.vec_a > 1 && (g.cg != 1 || g.kg != 1 || g.k % c->g.vec_a))
            return rk_fail(RK_ERR_INVALID, "%s: algo direct with vec_a = %u reads channel vectors, which needs a "
                           "depthwise problem (C/groups = K/groups = 1) with K a multiple of %u; here C/groups = %llu, "
                           "K/groups = %llu, K = %llu: build with --vec-a 1", fam, c->g.vec_a, c->g.vec_a,
                           (unsigned long long)g.cg, (unsigned long long)g.kg, (unsigned long long)g.k);
        if (g.n * g.out[0] * g.out[1] * g.out[2] * (g.k / c->g.vec_a) > INT32_MAX - KN_CONV_DIRECT_THREADS)
            return rk_fail(RK_ERR_INVALID, "%s: algo direct: more outputs than a 1-D grid of threads holds", fam);
        return RK_OK;
    }
    /* the contiguous extent of each vector-read operand (direction by direction) */
    static const char *const what[RK_CONV__COUNT][2] = {
        {"C / groups (X is read in vectors of channels)", "R*S*C/groups (W rows are read in vectors)"},
        {"K / groups (dY is read in vectors of channels)", "C / groups (W is read in vectors of channels)"},
        {"K / groups (dY is read in vectors of channels)", "C / groups (X is read in vectors of channels)"},
    };
    uint64_t ea = c->direction == RK_CONV_FWD ? g.cg : g.kg;
    uint64_t eb = c->direction == RK_CONV_FWD ? K : g.cg;
    if (ea % c->g.vec_a)
        return rk_fail(RK_ERR_INVALID, "%s: %s = %llu is not a multiple of vec_a = %u: build with --vec-a %u, or "
                       "with --shape so the heuristic picks it", fam, what[c->direction][0], (unsigned long long)ea,
                       c->g.vec_a, kn_gemm_vec_for(ea));
    if (eb % c->g.vec_b)
        return rk_fail(RK_ERR_INVALID, "%s: %s = %llu is not a multiple of vec_b = %u: build with --vec-b %u, or "
                       "with --shape so the heuristic picks it", fam, what[c->direction][1], (unsigned long long)eb,
                       c->g.vec_b, kn_gemm_vec_for(eb));
    return RK_OK;
}

/* ---- heuristic ------------------------------------------------------------------------------ */
/* The fraction of the threads-copy implicit GEMM's MACs that are the problem's (M, N and K padded to
 * whole tiles). */
static double copy_useful(const rk_conv_spec *c, uint64_t M, uint64_t N, uint64_t K) {
    double f = 1;
    const uint64_t ext[3] = {M, N, K};
    for (int i = 0; i < 3; i++) {
        uint64_t tl = c->g.tile[i] ? c->g.tile[i] : 1;
        f *= (double)ext[i] / (double)((ext[i] + tl - 1) / tl * tl);
    }
    return f;
}

/* wgmma where it applies (sm_90a, every direction of the implicit GEMM) unless the path is
 * named: X gathered in vectors of 4 bytes or more (for 2-byte reads the
 * GEMM measured the gathered mma.sync kernel faster, and conv keeps that
 * rule until it is measured for conv), a problem the plan and the shape
 * rules take; otherwise the mma knobs tuned above stay. */
static void tune_path(rk_instance *in, const rk_target *t, const kn_conv_geo *g, uint64_t M, uint64_t N, uint64_t K,
                      uint64_t locked, bool path_free) {
    rk_conv_spec *c = &in->u.conv;
    if (path_free) {
        bool fits = (t->features & RK_FEAT_SM90A) && c->algo != RK_CONV_DIRECT;
        fits = fits && c->g.vec_a >= 2 && c->g.vec_b >= 2 && !(locked >> CK_ATOM & 1 && c->g.atom);
        if (!fits) return;
    } else if (c->g.path != RK_GEMM_PATH_WGMMA) {
        return;
    }
    rk_conv_spec before = *c;
    c->g.path = RK_GEMM_PATH_WGMMA;
    bool tile_free = !(locked >> CK_TILE & 1);
    if (tile_free || !(locked >> CK_WARPS & 1)) c->g.atom = 0;
    kn_conv_hopper_free fr = {.tile = tile_free, .stages = !(locked >> CK_STAGES & 1),
                              .split = !(locked >> CK_SPLIT & 1)};
    kn_conv_hopper_tune(c, t, g, M, N, K, &fr);
    /* the GEMM-only knobs at their defaults unless load=tma takes them */
    if (!(locked >> CK_SCHED & 1)) c->g.schedule = RK_GEMM_SCHED_PLAIN;
    if (!(locked >> CK_BLOCKS & 1)) c->g.blocks = 0;
    if (!(locked >> CK_EPI & 1)) c->g.epilogue = RK_GEMM_EPI_DIRECT;
    rk_conv_spec copy = *c;
    bool load_free = !(locked >> CK_LOAD & 1);
    /* H200, session 8 (N32 C64 56² K256 1x1 bf16, TFLOP/s; cuDNN fwd 144.9, wgrad 110.6): fwd through the
     * GEMM's TMA kernel 125.8 (copy 58.7), dgrad 135.6 (copy 119.1); wgrad on TMA 49.7 against its
     * copying kernel's 71.0, so wgrad keeps copy unless load=tma is asked for */
    if (load_free && c->direction != RK_CONV_WGRAD && kn_conv_tma_fits(in, g)) c->load = RK_CONV_LOAD_TMA;
    if (kn_conv_tma(in)) {
        kn_conv_tma_free tf = {.tile = tile_free, .stages = fr.stages, .schedule = !(locked >> CK_SCHED & 1),
                               .blocks = !(locked >> CK_BLOCKS & 1), .epilogue = !(locked >> CK_EPI & 1),
                               .vec_a = !(locked >> CK_VA & 1), .vec_b = !(locked >> CK_VB & 1)};
        kn_conv_tma_tune(c, t, M, N, K, &tf);
        /* knobs locked where TMA cannot take them: the copying kernel instead */
        if (load_free && (kn_conv_tma_check(in, t, "conv") || kn_conv_tma_check_shape(in, g, "conv"))) *c = copy;
    }
    /* the forward's implicit GEMM: the pixel-box kernel (X by TMA boxes, warp-specialized) where it applies
     * (docs/conv.md, "The pixel-box forward": its cost reasoning; not measured yet) */
    if (load_free && kn_conv_box_fits(in, g)) c->load = RK_CONV_LOAD_TMA;
    if (kn_conv_box(in)) {
        kn_conv_box_free bf = {.tile = tile_free, .stages = fr.stages, .schedule = !(locked >> CK_SCHED & 1),
                               .blocks = !(locked >> CK_BLOCKS & 1), .epilogue = !(locked >> CK_EPI & 1),
                               .vec_a = !(locked >> CK_VA & 1), .vec_b = !(locked >> CK_VB & 1),
                               .box = !(locked >> CK_BOXP & 1) && !(locked >> CK_BOXQ & 1)};
        kn_conv_box_tune(c, t, g, N, &bf);
        if (load_free && (kn_conv_tma_check(in, t, "conv") || kn_conv_tma_check_shape(in, g, "conv"))) *c = copy;
        /* H200, session 12 (bf16, box / threads-copy TFLOP/s): 334.6 / 183.9 at N32 C256 14², 128.5 / 112.5
         * at N8 C64 56², 87.1 / 72.4 at N16 C128 28² stride 2 — no padding in either — but 21.7 / 38.4 at
         * N7 C72 17x19 K136, where the box kernel's reduction runs C = 72 as two 64-channel blocks (0.56)
         * and its boxes cover 0.78 of their pixels. So the box kernel only where its useful fraction of
         * MACs is at least 7/8 of the copy kernel's (its smallest measured gain was 1.14x). */
        if (load_free && kn_conv_box(in) && kn_conv_box_useful(c, g, N) < 0.875 * copy_useful(&copy, M, N, K)) *c = copy;
    }
    /* wgrad's copying wgmma kernel against the mma one, H200 bf16 TFLOP/s (wgmma / mma, wgmma's tile N),
     * sessions 13-14. C/groups a multiple of tile N: 53.8 / 28.1 at N8 C64 56² (64), 162.1 / 99.2 at
     * N32 C256 14² (128), 38.8 / 28.1 at N16 C128 28² stride 2 (64), 149.4 / 135.1 at N16 C384 14² K256
     * (128), 84.6 / 76.2 at N8 C192 28² K192 (64), 126.6 / 100.8 at N8 C192 28² K256 (64), 65.2 / 52.8
     * at N8 C320 15² K136 (64). Not: 10.9 / 15.7 at N7 C72 17x19 K136 (64), 1.0 / 1.9 at N5 C48 13x11
     * K40 (64), 17.2 / 33.8 at N4 C96 31² K200 (128; 32.0 at 64), 69.7 / 100.4 at N8 C192 28² K256 (128),
     * 52.8 / 76.2 at N8 C192 28² K192 (128), 32.9 / 52.8 at N8 C320 15² K136 (128). So wgmma only where
     * every B tile's columns are one filter tap's channels (kn_conv_hopper_tune keeps a free tile N to
     * a divisor of C/groups where 64 is one). */
    if (path_free && c->direction == RK_CONV_WGRAD && !kn_conv_tma(in) && !kn_conv_box(in) &&
        g->cg % c->g.tile[1]) {
        *c = before;
        return;
    }
    /* an explicit path=wgmma keeps its knobs even where they do not apply: validation says why */
    bool bad = kn_conv_tma(in) || kn_conv_box(in)
                   ? kn_conv_tma_check(in, t, "conv") || kn_conv_tma_check_shape(in, g, "conv")
                   : kn_conv_hopper_check(in, t, "conv") || kn_conv_hopper_check_shape(in, g, "conv");
    if (path_free && bad) *c = before;
}

/* algo direct, depthwise: channel vectors per block the largest power of two
 * dividing K / vec up to 32 (no channel tail; a warp's reads of one pixel
 * span up to 512 bytes), then the most pixels per thread (8, 4, 2, 1; at
 * most 32 accumulators) that waste at most a quarter of Q in the tail and
 * still give every compute unit 1024 threads. Other problems: off. */
/* wgrad: dw_pix is taps per thread (the most of 8, 4, 2, 1 with at most
 * KN_CONV_DW_WG_ACC accumulators, no more than the filter's taps rounded up
 * to a power of two); channel vectors halved from the above until the
 * channel blocks x tap chunks x 32 splits give every compute unit 4
 * blocks (no lower than 64 bytes of a pixel's channels per block); the splits then 4 blocks per unit, at most 32 and at most one
 * per 16 pixels of every pixel lane. */
static void tune_dw_wgrad(rk_conv_spec *c, const rk_target *t, const kn_conv_geo *g, uint64_t locked) {
    uint32_t vec = c->g.vec_a ? c->g.vec_a : 1;
    uint64_t taps = g->filt[0] * g->filt[1] * g->filt[2], pixels = g->n * g->out[0] * g->out[1] * g->out[2];
    if (!(locked >> CK_DWPIX & 1)) {
        int i = 4;
        while (i > 1 && ((1u << (i - 1)) * vec > KN_CONV_DW_WG_ACC || (1u << (i - 2)) >= taps)) i--;
        c->dw_pix = i;
    }
    uint64_t pix = kn_conv_dw_pix(c), chunks = (taps + pix - 1) / pix, want = 4ull * t->compute_units;
    uint64_t nv = g->k / vec ? g->k / vec : 1;
    /* halving keeps a pixel's channels in a block at 64 bytes or more (two 32-byte sectors) */
    uint64_t eb = rk_tile_elem_bytes(c->g.dtype);
    if (!(locked >> CK_DWCV & 1))
        while (c->dw_cvecs > 1 && kn_conv_dw_cvecs(c) * vec * eb >= 128 &&
               (nv + kn_conv_dw_cvecs(c) - 1) / kn_conv_dw_cvecs(c) * chunks * 32 < want)
            c->dw_cvecs--;
    if (locked >> CK_SPLIT & 1) return;
    uint64_t cv = kn_conv_dw_cvecs(c), blocks = (nv + cv - 1) / cv * chunks;
    uint64_t sk = (want + blocks - 1) / blocks, lanes = KN_CONV_DIRECT_THREADS / cv;
    uint64_t most = pixels / (lanes * 16);
    if (sk > most) sk = most;
    if (sk > KN_CONV_WG_SPLIT_MAX) sk = KN_CONV_WG_SPLIT_MAX;
    c->g.split_k = sk ? (uint32_t)sk : 1;
}

static void tune_dw(rk_conv_spec *c, const rk_target *t, const kn_conv_geo *g, bool dwise, uint64_t locked) {
    uint32_t vec = c->g.vec_a ? c->g.vec_a : 1;
    uint64_t nv = g->k / vec ? g->k / vec : 1;
    if (!(locked >> CK_DWCV & 1)) {
        int cv = 1;
        while (cv < 6 && nv % (1u << cv) == 0) cv++;
        c->dw_cvecs = dwise ? cv : 0;
    }
    if (dwise && c->direction == RK_CONV_WGRAD) {
        tune_dw_wgrad(c, t, g, locked);
        return;
    }
    if (locked >> CK_DWPIX & 1) return;
    c->dw_pix = 0;
    if (!dwise) return;
    /* the written row: fwd Q; dgrad ceil(W / stride) per residue class, stride of them a row */
    uint64_t q = g->out[2], rows = g->n * g->out[0] * g->out[1], classes = 1;
    if (c->direction == RK_CONV_DGRAD) {
        classes = g->stride[2];
        q = (g->in[2] + classes - 1) / classes;
        rows = g->n * g->in[0] * g->stride[1] * ((g->in[1] + g->stride[1] - 1) / g->stride[1]);
    }
    for (int i = 4; i >= 1; i--) {
        uint64_t pix = 1u << (i - 1), qg = (q + pix - 1) / pix;
        bool fits = pix * vec <= 32 && 4 * (qg * pix - q) <= q;
        fits = fits && rows * classes * qg * nv >= (uint64_t)t->compute_units * 1024;
        if (fits || i == 1) {
            c->dw_pix = i;
            break;
        }
    }
}

static void tune(rk_instance *in, const rk_target *t, const rk_shape *sh, uint64_t locked) {
    rk_conv_spec *c = &in->u.conv;
    kn_conv_geo g;
    kn_conv_geo_of(in, sh, &g);
    bool one = g.filt[0] * g.filt[1] * g.filt[2] == 1;
    for (int i = 0; i < 3; i++) one = one && g.stride[i] == 1 && !g.pad0[i] && !g.pad1[i];
    bool few = g.cg <= KN_CONV_DIRECT_MAX_CPG && g.kg <= KN_CONV_DIRECT_MAX_CPG;
    few = few && g.c % g.groups == 0 && g.k % g.groups == 0 && g.groups > 1;
    /* dgrad and wgrad: depthwise only (dgrad's filter rows must fit the LDS stage) */
    bool dw_grad = g.cg == 1 && g.kg == 1 && (c->direction == RK_CONV_WGRAD || g.filt[2] <= KN_CONV_DW_TAPS);
    few = few && (c->direction == RK_CONV_FWD || dw_grad);
    if (!(locked >> CK_ALGO & 1)) c->algo = one ? RK_CONV_GEMM1X1 : few ? RK_CONV_DIRECT : RK_CONV_IGEMM;
    bool path_free = !(locked >> CK_PATH & 1) || c->g.path == CONV_PATH_AUTO;
    if (!(locked >> CK_LOAD & 1)) c->load = RK_CONV_LOAD_COPY;   /* tune_path gives tma where it fits */
    /* load=tma asked for: path=wgmma as if named (validation says why where it cannot apply) */
    bool tma_asked = locked >> CK_LOAD & 1 && c->load == RK_CONV_LOAD_TMA;
    if (path_free && tma_asked) path_free = false, c->g.path = RK_GEMM_PATH_WGMMA;
    if (path_free || c->algo == RK_CONV_DIRECT) c->g.path = RK_GEMM_PATH_MMA;
    if (c->algo == RK_CONV_DIRECT) {
        /* channel vectors for depthwise, one channel otherwise */
        bool dwise = g.cg == 1 && g.kg == 1;
        if (!(locked >> CK_VA & 1)) c->g.vec_a = dwise ? kn_gemm_vec_for(g.k) : 1;
        if (!(locked >> CK_WAVE & 1)) c->g.wave = t->wave_size;
        if (!(locked >> CK_SPLIT & 1)) c->g.split_k = 1;
        /* dgrad / wgrad: only the depthwise kernel takes them */
        tune_dw(c, t, &g, dwise || c->direction != RK_CONV_FWD, locked);
        return;
    }
    if (!(locked >> CK_DWPIX & 1)) c->dw_pix = 0;
    if (!(locked >> CK_DWCV & 1)) c->dw_cvecs = 0;
    if (!(locked >> CK_WAVE & 1)) c->g.wave = t->wave_size;
    uint64_t M, N, K;
    kn_conv_gemm_extents(in, &g, &M, &N, &K);
    uint64_t ea = c->direction == RK_CONV_FWD ? g.cg : g.kg, eb = c->direction == RK_CONV_FWD ? K : g.cg;
    if (!(locked >> CK_VA & 1)) c->g.vec_a = kn_gemm_vec_for(ea);
    if (!(locked >> CK_VB & 1)) c->g.vec_b = kn_gemm_vec_for(eb);
    /* the largest tile that still gives every unit a block */
    static const uint32_t cand[][5] = {{128, 128, 32, 2, 2}, {128, 64, 32, 2, 2}, {64, 64, 32, 2, 2},
                                       {64, 32, 32, 2, 1}, {32, 32, 32, 1, 1}};
    size_t pick = RK_COUNTOF(cand) - 1;
    for (size_t i = 0; i < RK_COUNTOF(cand); i++) {
        uint64_t blocks = (M + cand[i][0] - 1) / cand[i][0] * ((N + cand[i][1] - 1) / cand[i][1]) * g.groups;
        if (blocks >= t->compute_units) { pick = i; break; }
    }
    if (!(locked >> CK_TILE & 1))
        for (int i = 0; i < 3; i++) c->g.tile[i] = cand[pick][i];
    if (!(locked >> CK_WARPS & 1)) {
        c->g.warps[0] = cand[pick][3];
        c->g.warps[1] = cand[pick][4];
    }
    if (t->wave_size == 64 && !(locked >> CK_TILE & 1) && !(locked >> CK_WARPS & 1) && c->g.tile[0] < 64) {
        /* MFMA atoms are 32 wide: keep at least one per warp */
        c->g.tile[0] = c->g.tile[1] = 64;
        c->g.warps[0] = c->g.warps[1] = 2;
    }
    if (!(locked >> CK_STAGES & 1)) c->g.stages = t->vendor == RK_VENDOR_AMD ? 2 : (K > 2 * c->g.tile[2] ? 3 : 2);
    if (!(locked >> CK_GROUP & 1)) c->g.group_m = 8;
    /* wgrad splits its long reduction, at most 4 ways: the workspace gather holds every split's
     * partials at once (gfx950, N8 56x56 C=K=64: 96 VGPRs at 4, 302 at 16) */
    if (!(locked >> CK_SPLIT & 1)) {
        uint32_t sk = c->direction == RK_CONV_WGRAD ? kn_gemm_tune_split(&c->g, t, M, N, K, g.groups) : 1;
        c->g.split_k = sk > 4 ? 4 : sk;
    }
    tune_path(in, t, &g, M, N, K, locked, path_free);
}

/* ---- launch and cost --------------------------------------------------------------------------- */
/* Shape dimension indices of an axis (i: 0 depth, 1 height, 2 width). */
static uint32_t dim_in(bool d3, int i) { return d3 ? 2 + (uint32_t)i : 1 + (uint32_t)i; }
static uint32_t dim_filt(bool d3, int i) { return d3 ? 6 + (uint32_t)i : 4 + (uint32_t)i; }

/* Push output extent i: (in + pads - dil (f - 1) - 1) / stride + 1, computed
 * as (in + pads + dil - dil f - 1) / stride + 1 (empty outputs are refused
 * before a launch). */
void kn_conv_geom_out(rk_launch_geom *g, const kn_conv_geo *geo, bool d3, int i) {
    kn_geom_dim(g, dim_in(d3, i));
    kn_geom_const(g, geo->pad0[i] + geo->pad1[i] + geo->dil[i]);
    kn_geom_op(g, RK_GEOM_ADD);
    kn_geom_dim(g, dim_filt(d3, i));
    kn_geom_const(g, geo->dil[i]);
    kn_geom_op(g, RK_GEOM_MUL);
    kn_geom_op(g, RK_GEOM_SUB);
    kn_geom_const(g, 1);
    kn_geom_op(g, RK_GEOM_SUB);
    kn_geom_const(g, geo->stride[i]);
    kn_geom_op(g, RK_GEOM_DIV);
    kn_geom_const(g, 1);
    kn_geom_op(g, RK_GEOM_ADD);
}

/* Push N times the output (or, input: the input) extents. */
static void geom_pixels(rk_launch_geom *g, const kn_conv_geo *geo, bool d3, bool input) {
    kn_geom_dim(g, 0);
    for (int i = d3 ? 0 : 1; i < 3; i++) {
        if (input) kn_geom_dim(g, dim_in(d3, i));
        else kn_conv_geom_out(g, geo, d3, i);
        kn_geom_op(g, RK_GEOM_MUL);
    }
}

/* Push dimension `dim` / groups (channels per group). */
static void geom_per_group(rk_launch_geom *g, uint32_t dim, uint64_t groups) {
    kn_geom_dim(g, dim);
    kn_geom_const(g, groups);
    kn_geom_op(g, RK_GEOM_DIV);
}

/* Push the filter taps (R S, or T R S). */
static void geom_taps(rk_launch_geom *g, bool d3) {
    kn_geom_dim(g, dim_filt(d3, 1));
    kn_geom_dim(g, dim_filt(d3, 2));
    kn_geom_op(g, RK_GEOM_MUL);
    if (d3) {
        kn_geom_dim(g, dim_filt(d3, 0));
        kn_geom_op(g, RK_GEOM_MUL);
    }
}

/* Push the filter taps times the channels per group. */
static void geom_taps_cg(rk_launch_geom *g, bool d3, uint64_t groups) {
    geom_taps(g, d3);
    geom_per_group(g, 1, groups);
    kn_geom_op(g, RK_GEOM_MUL);
}

/* Grid: the direct kernel one thread per output vector of channels; implicit
 * GEMM (x) the tiles of one group's M x N, (y) the K splits, (z) the groups.
 * The run-time geometry (stride, padding, dilation, groups) enters as
 * constants of the program. */
static void geometry(const rk_instance *in, rk_launch_geom *g) {
    const rk_conv_spec *c = &in->u.conv;
    bool d3 = kn_conv_is_3d(in);
    rk_shape probe = {.rank = d3 ? 9 : 7};
    for (uint32_t i = 0; i < probe.rank; i++) probe.dim[i] = 1;
    kn_conv_geo geo;   /* the knobs' stride, padding, dilation, groups (extents unused) */
    kn_conv_geo_of(in, &probe, &geo);
    uint32_t dk = d3 ? 5 : 4;
    if (c->algo == RK_CONV_DIRECT && c->dw_pix) {
        /* depthwise: (x) pixel groups / (256 / dw_cvecs), (y) channel vectors / dw_cvecs; dgrad's
         * groups: stride_w residue classes of ceil(ceil(W / stride_w) / pix) a row; wgrad: (x) the
         * splits, (z) chunks of dw_pix taps */
        uint32_t pix = kn_conv_dw_pix(c), cv = kn_conv_dw_cvecs(c) ? kn_conv_dw_cvecs(c) : 1;
        bool dg = c->direction == RK_CONV_DGRAD, wg = c->direction == RK_CONV_WGRAD;
        g->block[0] = KN_CONV_DIRECT_THREADS;
        if (wg) {
            kn_geom_const(g, c->g.split_k ? c->g.split_k : 1);
        } else {
            kn_geom_dim(g, 0);
            for (int i = d3 ? 0 : 1; i < 2; i++) {
                if (dg) kn_geom_dim(g, dim_in(d3, i));
                else kn_conv_geom_out(g, &geo, d3, i);
                if (dg && i == 1) {   /* H in stride_h classes of ceil(H / stride_h) rows */
                    kn_geom_const(g, geo.stride[1]);
                    kn_geom_op(g, RK_GEOM_CDIV);
                    kn_geom_const(g, geo.stride[1]);
                    kn_geom_op(g, RK_GEOM_MUL);
                }
                kn_geom_op(g, RK_GEOM_MUL);
            }
            if (dg) {
                kn_geom_dim(g, dim_in(d3, 2));
                kn_geom_const(g, geo.stride[2]);
                kn_geom_op(g, RK_GEOM_CDIV);
            } else {
                kn_conv_geom_out(g, &geo, d3, 2);
            }
            kn_geom_const(g, pix);
            kn_geom_op(g, RK_GEOM_CDIV);
            if (dg) {
                kn_geom_const(g, geo.stride[2]);
                kn_geom_op(g, RK_GEOM_MUL);
            }
            kn_geom_op(g, RK_GEOM_MUL);
            kn_geom_const(g, KN_CONV_DIRECT_THREADS / cv);
            kn_geom_op(g, RK_GEOM_CDIV);
        }
        kn_geom_axis(g);
        kn_geom_dim(g, dk);
        kn_geom_const(g, c->g.vec_a ? c->g.vec_a : 1);
        kn_geom_op(g, RK_GEOM_DIV);
        kn_geom_const(g, cv);
        kn_geom_op(g, RK_GEOM_CDIV);
        kn_geom_axis(g);
        if (wg) {
            geom_taps(g, d3);
            kn_geom_const(g, pix);
            kn_geom_op(g, RK_GEOM_CDIV);
            kn_geom_axis(g);
        }
        return;
    }
    if (c->algo == RK_CONV_DIRECT) {
        g->block[0] = KN_CONV_DIRECT_THREADS;
        geom_pixels(g, &geo, d3, false);
        kn_geom_dim(g, dk);
        kn_geom_const(g, c->g.vec_a ? c->g.vec_a : 1);
        kn_geom_op(g, RK_GEOM_DIV);
        kn_geom_op(g, RK_GEOM_MUL);
        kn_geom_const(g, KN_CONV_DIRECT_THREADS);
        kn_geom_op(g, RK_GEOM_CDIV);
        kn_geom_axis(g);
        return;
    }
    bool tma = kn_conv_tma(in);
    g->block[0] = c->g.warps[0] * c->g.warps[1] * c->g.wave +
                  (tma || kn_conv_box(in) ? kn_gemm_hopper_extra_threads(&c->g) : 0);
    if (kn_conv_box(in)) {
        kn_conv_box_geometry(in, g, &geo);
        return;
    }
    switch ((rk_conv_dir)c->direction) {
    case RK_CONV_FWD:    /* pixels x Kg */
        geom_pixels(g, &geo, d3, false);
        kn_geom_const(g, c->g.tile[0]);
        kn_geom_op(g, RK_GEOM_CDIV);
        geom_per_group(g, dk, geo.groups);
        break;
    case RK_CONV_DGRAD:  /* input pixels x Cg */
        geom_pixels(g, &geo, d3, true);
        kn_geom_const(g, c->g.tile[0]);
        kn_geom_op(g, RK_GEOM_CDIV);
        geom_per_group(g, 1, geo.groups);
        break;
    case RK_CONV_WGRAD:  /* Kg x taps * Cg */
    case RK_CONV__COUNT:
        geom_per_group(g, dk, geo.groups);
        kn_geom_const(g, c->g.tile[0]);
        kn_geom_op(g, RK_GEOM_CDIV);
        geom_taps_cg(g, d3, geo.groups);
        break;
    }
    kn_geom_const(g, c->g.tile[1]);
    kn_geom_op(g, RK_GEOM_CDIV);
    kn_geom_op(g, RK_GEOM_MUL);
    if (tma && kn_gemm_hopper_walks(&c->g)) {
        /* the GEMM's persistent grid: at most `blocks`, each walking tiles */
        kn_geom_const(g, c->g.blocks);
        kn_geom_op(g, RK_GEOM_MIN);
    }
    kn_geom_axis(g);
    kn_geom_const(g, c->g.split_k);
    kn_geom_axis(g);
    kn_geom_const(g, geo.groups);
    kn_geom_axis(g);
}

static void cost(const rk_instance *in, const rk_shape *sh, double *bytes, double *flops) {
    const rk_conv_spec *c = &in->u.conv;
    kn_conv_geo g;
    kn_conv_geo_of(in, sh, &g);
    double x = (double)(g.n * g.in[0] * g.in[1] * g.in[2] * g.c);
    double y = (double)(g.n * g.out[0] * g.out[1] * g.out[2] * g.k);
    double w = (double)(g.k * g.filt[0] * g.filt[1] * g.filt[2] * g.cg);
    /* 2 N O P Q K T R S C / groups, whichever direction */
    *flops = 2.0 * y * (double)(g.filt[0] * g.filt[1] * g.filt[2] * g.cg);
    double ib = rk_tile_elem_bytes(c->g.dtype), ob = rk_tile_elem_bytes(c->g.out_dtype);
    switch ((rk_conv_dir)c->direction) {
    case RK_CONV_FWD: *bytes = (x + w) * ib + y * ob; return;
    case RK_CONV_DGRAD: *bytes = (y + w) * ib + x * ob; return;
    case RK_CONV_WGRAD: case RK_CONV__COUNT: *bytes = (y + x) * ib + w * ob; return;
    }
}

static void input_range(const rk_instance *in, const rk_kparam *kp, double *lo, double *hi, double *away) {
    (void)in;
    (void)kp;
    *lo = -1.0;
    *hi = 1.0;
    *away = 0;
}

const kn_family kn_conv = {
    .name = "conv", .knobs = conv_knobs, .nknobs = RK_COUNTOF(conv_knobs), .dims = dims2, .ndims = 7,
    .scalars = scalars2, .nscalars = RK_COUNTOF(scalars2), .defaults = defaults, .tune = tune,
    .validate = validate, .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = kn_conv_build,
    .cost = cost, .reference = kn_conv_reference, .input_range = input_range, .extent = extent,
    .tensormap_box = kn_conv_tma_box, .tensormap_nd = kn_conv_box_tensormap,
};

const kn_family kn_conv3d = {
    .name = "conv3d", .knobs = conv3d_knobs, .nknobs = RK_COUNTOF(conv3d_knobs), .dims = dims3, .ndims = 9,
    .scalars = scalars3, .nscalars = RK_COUNTOF(scalars3), .defaults = defaults, .tune = tune,
    .validate = validate, .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = kn_conv_build,
    .cost = cost, .reference = kn_conv_reference, .input_range = input_range, .extent = extent,
    .tensormap_box = kn_conv_tma_box,
};
