/* rocke — the convolution families (conv, conv3d), private: the geometry
 * of a problem, the GEMM view of each direction, and the pieces the
 * tables, the builder and the reference share. Layer: kernels. */
#ifndef ROCKE_CONV_INT_H
#define ROCKE_CONV_INT_H

#include "gemm_int.h"

/* A problem's geometry, 3-D throughout: a 2-D problem has D = T = O = 1,
 * stride, dilation 1 and no padding along d. Index 0, 1, 2 = d, h, w. */
typedef struct kn_conv_geo {
    uint32_t nsp;                  /* spatial dimensions of the family: 2 or 3 */
    uint64_t n, c, k, groups, cg, kg;
    uint64_t in[3], filt[3], out[3];
    uint64_t stride[3], pad0[3], pad1[3], dil[3];
    bool empty;                    /* some output extent is < 1 */
} kn_conv_geo;
/* conv.c: the geometry of (instance, shape), output extents included. */
void kn_conv_geo_of(const rk_instance *in, const rk_shape *s, kn_conv_geo *g);
/* conv.c: push output extent i of the launch geometry, (in + pads - dil (f - 1) - 1) / stride + 1 over the
 * shape's dimensions (d3: conv3d's). */
void kn_conv_geom_out(rk_launch_geom *g, const kn_conv_geo *geo, bool d3, int i);
/* The implicit GEMM per group: M x N x K (fwd: pixels x Kg x taps*Cg;
 * dgrad: input pixels x Cg x Kg*taps; wgrad: Kg x taps*Cg x pixels). */
void kn_conv_gemm_extents(const rk_instance *in, const kn_conv_geo *g, uint64_t *M, uint64_t *N, uint64_t *K);
/* The GEMM spec of the instance with the direction's layout (fwd rc, dgrad
 * rr, wgrad cr). */
rk_gemm_spec kn_conv_gemm_spec(const rk_instance *in);
bool kn_conv_is_3d(const rk_instance *in);

/* conv_build.c: the kernel (implicit GEMM, or the direct one); the
 * geometry parameters (signature entries 3..) as index terms, 2-D giving
 * the d axis as constants; *next: the first entry after them. */
typedef struct kn_conv_args {
    rk_ix n, c, k, groups;
    rk_ix in[3], filt[3], out[3], stride[3], pad[3], dil[3];
} kn_conv_args;
kn_conv_args kn_conv_args_of(const rk_instance *in, const rk_value *p, uint32_t *next);
/* The direct kernels' parameters: the geometry (kn_conv_args_of) and the fwd
 * epilogue chain's operands, which follow it. */
kn_conv_args kn_conv_direct_args(const rk_instance *in, const rk_value *p, rk_epi_args *ea);
void kn_conv_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);
/* dgrad's B: W seen as [taps * Kg, Cg] with rows ordered (tap, k), so that
 * A's columns run along dY's channels: row kk is W[kg0 + kk % Kg, kk / Kg].
 * kn_conv_wrows_issue copies its tile at (r0, c0) with copy cp and lanes l
 * into the stage at element `stage` of smem, as rk_tile_copy_issue would. */
typedef struct kn_conv_wrows {
    rk_value W;
    rk_ix rows, cols, taps, cg, kg0;
    rk_fastdiv kg;
} kn_conv_wrows;
void kn_conv_wrows_issue(rk_kernel *k, const kn_conv_wrows *w, const rk_tile_copy *cp, const rk_tile_copy_lanes *l,
                         rk_value r0, rk_value c0, rk_value smem, rk_value stage);

/* conv_direct.c: the direct forward kernel for 1..16 channels per group,
 * one thread per output pixel and vec_a consecutive output channels (vec_a
 * > 1: depthwise, C/g = K/g = 1, channel vectors). */
#define KN_CONV_DIRECT_THREADS 256
#define KN_CONV_DIRECT_MAX_CPG 16
void kn_conv_direct_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);

/* conv_depthwise.c: the depthwise kernel of algo direct (dw_pix not off):
 * 256 threads, dw_cvecs channel vectors by 256 / dw_cvecs groups of dw_pix
 * output pixels along Q; the weights staged in LDS, KN_CONV_DW_TAPS taps
 * (whole filter rows, so S <= KN_CONV_DW_TAPS) at a time. conv.c: the
 * knobs' values (1, 2, 4, 8 pixels; 1 .. 64 vectors; 0 when off). */
#define KN_CONV_DW_TAPS 32u
/* wgrad: at most this many f32 accumulators per thread (dw_pix x vec_a), live through its pixel loop */
#define KN_CONV_DW_WG_ACC 32u
uint32_t kn_conv_dw_pix(const rk_conv_spec *c);
uint32_t kn_conv_dw_cvecs(const rk_conv_spec *c);
void kn_conv_dw_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);
/* conv_depthwise_wgrad.c: direction wgrad of the depthwise kernel (dw_pix: taps per thread; grid x the
 * split_k splits of the pixel range, y the channel blocks, z the tap chunks). */
void kn_conv_dw_wgrad_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);

/* conv_hopper.c: path = wgmma (sm_90a, every direction). check: the spec's
 * rules (algo igemm or gemm1x1, the GEMM Hopper plan, the gathers into the
 * swizzled stages); check_shape: groups > 1 needs the output's channels per
 * group even (fwd K/g, dgrad C/g: paired stores); tune: tile, warps,
 * stages, wgrad's split (those free), plain schedule; build: the kernel
 * from the direction's GEMM view. */
/* wgrad's split-K limits: path mma (the GEMM's workspace sum, every split's partials held at
 * once) and path wgmma (a loop over the slices). */
#define KN_CONV_MMA_SPLIT_MAX 16u
#define KN_CONV_WG_SPLIT_MAX 32u
typedef struct kn_conv_hopper_free { bool tile, stages, split; } kn_conv_hopper_free;
typedef struct kn_conv_hopper_io {
    const kn_gemm_io *io;           /* the direction's GEMM view (pointers moved to the group) */
    const rk_tile_im2col *view;     /* the im2col view (X, or dgrad's dY); NULL: plain matrices (gemm1x1) */
    const rk_value *epi;            /* the chain's operands, moved to the group */
    uint32_t nepi;
    rk_value work, groups;          /* wgrad split-K: Work and the group count (i32) */
    const kn_conv_wrows *wrows;     /* dgrad: W's rows in (tap, k) order; NULL otherwise */
    const rk_value *maps;           /* load=tma (1x1 wgrad): A's and B's tensor maps; NULL: the threads copy */
} kn_conv_hopper_io;
/* The GEMM Hopper plan (*pl) of the conv problem's GEMM (*s, split 1: wgrad's
 * split is conv_hopper.c's own), its refusal told as fam's. */
rk_status kn_conv_hopper_plan_check(const rk_instance *in, const rk_target *t, const char *fam, rk_gemm_spec *s,
                                    kn_gemm_plan *pl);
rk_status kn_conv_hopper_check(const rk_instance *in, const rk_target *t, const char *fam);
rk_status kn_conv_hopper_check_shape(const rk_instance *in, const kn_conv_geo *g, const char *fam);
void kn_conv_hopper_tune(rk_conv_spec *c, const rk_target *t, const kn_conv_geo *g, uint64_t M, uint64_t N,
                         uint64_t K, const kn_conv_hopper_free *free_knobs);
void kn_conv_hopper_build(rk_kernel *k, const rk_instance *in, const rk_target *t, const kn_conv_hopper_io *io);

/* conv_tma.c: load = tma, 1x1 with TMA operands: fwd and dgrad as the GEMM
 * family's Hopper kernel, wgrad on kn_conv_hopper_build with io->maps.
 * kn_conv_tma: the instance takes it (path wgmma, algo gemm1x1, load tma).
 * check: the knob rules (with load=copy: the GEMM-only knobs at their
 * defaults; wgrad: schedule plain, epilogue direct); check_shape: groups 1
 * and the GEMM's shape rules; fits: a problem the heuristic gives it
 * (groups 1, vec 8: C and K multiples of 8, TMA's 16-byte rows); tune
 * (fwd, dgrad): tile, stages, schedule, blocks, epilogue (those free);
 * signature: the maps (the direction's A and B, with epilogue=tma its C)
 * after every other entry; box: a map's box and swizzle; build: the fwd /
 * dgrad kernel. */
typedef struct kn_conv_tma_free { bool tile, stages, schedule, blocks, epilogue, vec_a, vec_b; } kn_conv_tma_free;
bool kn_conv_tma(const rk_instance *in);
rk_status kn_conv_tma_check(const rk_instance *in, const rk_target *t, const char *fam);
rk_status kn_conv_tma_check_shape(const rk_instance *in, const kn_conv_geo *g, const char *fam);
bool kn_conv_tma_fits(const rk_instance *in, const kn_conv_geo *g);
void kn_conv_tma_tune(rk_conv_spec *c, const rk_target *t, uint64_t M, uint64_t N, uint64_t K,
                      const kn_conv_tma_free *fr);
void kn_conv_tma_signature(const rk_instance *in, rk_ksig *sg);
void kn_conv_tma_box(const rk_instance *in, const rk_kparam *kp, uint32_t *box_rows, uint32_t *box_cols,
                     uint32_t *swizzle_bytes);
void kn_conv_tma_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);

/* conv_box.c: load = tma, algo igemm, 2-D fwd, groups 1: the pixel-box kernel (X by 4-D TMA boxes of
 * tile M output pixels per tap, W by 4-D boxes of one tap; the GEMM's Hopper kernel on its hooks).
 * kn_conv_box: the instance takes it; box_n: images of the box (tile M / (box_p box_q); 0 when that
 * does not divide); check: the knob rules; check_shape: groups 1, C a multiple of 8, the strides TMA
 * traverses; fits: a problem the heuristic gives it; tune: tile, box, schedule, blocks, stages (those
 * free); useful: the fraction of its MACs that are the problem's (padding of C, boxes, N); signature: X_map, Wt_map after every other entry; tensormap: the maps' 4-D descriptions;
 * geometry: the grid; build: the kernel. */
typedef struct kn_conv_box_free { bool tile, stages, schedule, blocks, epilogue, vec_a, vec_b, box; } kn_conv_box_free;
bool kn_conv_box(const rk_instance *in);
uint32_t kn_conv_box_n(const rk_conv_spec *c);
rk_status kn_conv_box_check(const rk_instance *in, const rk_target *t, const char *fam);
rk_status kn_conv_box_check_shape(const rk_instance *in, const kn_conv_geo *g, const char *fam);
bool kn_conv_box_fits(const rk_instance *in, const kn_conv_geo *g);
void kn_conv_box_tune(rk_conv_spec *c, const rk_target *t, const kn_conv_geo *g, uint64_t N, const kn_conv_box_free *fr);
double kn_conv_box_useful(const rk_conv_spec *c, const kn_conv_geo *g, uint64_t N);
void kn_conv_box_signature(const rk_instance *in, rk_ksig *sg);
bool kn_conv_box_tensormap(const rk_problem *p, const rk_kparam *kp, rk_problem_tmap_nd *out);
void kn_conv_box_geometry(const rk_instance *in, rk_launch_geom *g, const kn_conv_geo *geo);
void kn_conv_box_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);

/* conv_reference.c: a direct convolution in double, every direction. */
void kn_conv_reference(const rk_problem *p, double **want, double **tol);

#endif
