/* rocke — split-K for the GEMM families: K cut into split_k ranges of whole
 * K tiles over grid y. Atomic: every split adds its f32 accumulators into a
 * zeroed f32 C. Workspace: every split stores its f32 partial tile into its
 * slice of Work; the last split of a tile to arrive (an f32 counter per tile
 * in Work's last slice) sums the slices in split order, so the result does
 * not depend on arrival order, applies the epilogue once and resets the
 * counter for the next launch. One kernel either way. Layer: kernels. */
#include "gemm_int.h"

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }
static rk_value i64(rk_kernel *k, rk_value v) { return rk_build_sext(k, v, RK_T_I64); }

rk_status kn_gemm_split_validate(const rk_gemm_spec *s) {
    if (s->split_k < 1 || s->split_k > 16)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'split_k' must be 1..16, got %u", s->split_k);
    if ((unsigned)s->split_reduce > RK_GEMM_SPLIT_ATOMIC)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'split_reduce' must be workspace or atomic");
    if (s->split_k == 1 || s->split_reduce != RK_GEMM_SPLIT_ATOMIC) return RK_OK;
    if (s->out_dtype != RK_S_F32)
        return rk_fail(RK_ERR_INVALID, "gemm: split_reduce = atomic adds f32 partials into C, so out_dtype must be "
                       "f32 (got %s); use split_reduce = workspace for f16 or bf16 output", kn_dtype_name(s->out_dtype));
    if (s->fuse.n)
        return rk_fail(RK_ERR_INVALID, "gemm: split_reduce = atomic cannot apply --fuse (the chain must run once, "
                       "after the whole sum); use split_reduce = workspace");
    return RK_OK;
}

/* Work's layout: split_k slices of C's extent, then the counter slice. */
#define WD(n) #n ",M,N"
#define WB(n) #n ",batch,M,N"
static const char *const work_dims[2][16] = {
    {WD(2), WD(3), WD(4), WD(5), WD(6), WD(7), WD(8), WD(9), WD(10), WD(11), WD(12), WD(13), WD(14), WD(15), WD(16),
     WD(17)},
    {WB(2), WB(3), WB(4), WB(5), WB(6), WB(7), WB(8), WB(9), WB(10), WB(11), WB(12), WB(13), WB(14), WB(15), WB(16),
     WB(17)},
};

void kn_gemm_split_signature(const rk_gemm_spec *s, rk_ksig *sg, bool batched) {
    if (s->split_k < 2 || s->split_k > 16 || s->split_reduce != RK_GEMM_SPLIT_WORKSPACE) return;
    kn_sig_add(sg, "Work", true, RK_S_F32, RK_KP_WORK, work_dims[batched][s->split_k - 1]);
}

void kn_gemm_split_range(rk_kernel *k, const rk_gemm_spec *s, rk_value ktiles, rk_value *kbase, rk_value *count) {
    rk_value S = c32(k, s->split_k), one = c32(k, 1), zero = c32(k, 0);
    rk_value up = rk_build_add(k, ktiles, S);
    rk_value up1 = rk_build_sub(k, up, one);
    rk_value per = rk_build_udiv(k, up1, S);
    rk_value sid = rk_build_block_id(k, 1);
    *kbase = rk_build_mul(k, sid, per);
    rk_value end = rk_build_add(k, *kbase, per);
    rk_value endc = rk_build_umin(k, end, ktiles);
    rk_value n = rk_build_sub(k, endc, *kbase);
    *count = rk_build_smax(k, n, zero);
}

/* Row and column of a slot, and whether it is inside C. */
static rk_value slot(rk_kernel *k, const kn_gemm_plan *pl, const kn_gemm_split_io *io, uint32_t i, uint32_t j,
                     uint32_t sl, rk_value *row, rk_value *col) {
    kn_gemm_acc_coord(k, pl, io->lane, io->r0, io->c0, i, j, sl, row, col);
    rk_value rin = rk_build_cmp(k, "lt", *row, io->M);
    rk_value cin = rk_build_cmp(k, "lt", *col, io->N);
    return rk_build_and(k, rin, cin);
}

/* i64 index of (row, col) in slice `s` of Work. */
static rk_value work_at(rk_kernel *k, const kn_gemm_split_io *io, rk_value s, rk_value row, rk_value col) {
    rk_value sb = rk_build_mul(k, s, io->batch);
    rk_value plane = rk_build_add(k, sb, io->z);
    rk_value p64 = i64(k, plane), m64 = i64(k, io->M);
    rk_value pm = rk_build_mul(k, p64, m64);
    rk_value r64 = i64(k, row);
    rk_value rr = rk_build_add(k, pm, r64);
    rk_value n64 = i64(k, io->N);
    rk_value rn = rk_build_mul(k, rr, n64);
    rk_value c64 = i64(k, col);
    return rk_build_add(k, rn, c64);
}

/* The tile's counter: element (z * tiles + tile) of the last slice (from
 * the slice's start: z * tiles < batch * M * N however small C is). */
static rk_value counter_at(rk_kernel *k, const rk_gemm_spec *s, const kn_gemm_split_io *io) {
    rk_value last = c32(k, s->split_k);
    rk_value sb = rk_build_mul(k, last, io->batch);
    rk_value p64 = i64(k, sb), m64 = i64(k, io->M), n64 = i64(k, io->N);
    rk_value pm = rk_build_mul(k, p64, m64);
    rk_value base = rk_build_mul(k, pm, n64);
    rk_value zt = rk_build_mul(k, io->z, io->tiles);
    rk_value id = rk_build_add(k, zt, io->tile);
    rk_value id64 = i64(k, id);
    return rk_build_add(k, base, id64);
}

/* Every accumulator inside C: into Work's slice *sid (workspace), or added
 * into C (sid NULL: atomic). */
static void put_partials(rk_kernel *k, const kn_gemm_plan *pl, const kn_gemm_split_io *io, const rk_value *acc,
                         const rk_value *sid) {
    for (uint32_t i = 0; i < pl->mi; i++)
        for (uint32_t j = 0; j < pl->ni; j++)
            for (uint32_t sl = 0; sl < pl->atom->c_len; sl++) {
                rk_value row, col;
                rk_value ok = slot(k, pl, io, i, j, sl, &row, &col);
                rk_value x = rk_build_vextract(k, acc[i * pl->ni + j], sl);
                rk_if_begin(k, ok);
                if (sid) {
                    rk_value at = work_at(k, io, *sid, row, col);
                    rk_store_global(k, io->dst, at, x);
                } else {
                    rk_value r64 = i64(k, row), l64 = i64(k, io->ldc);
                    rk_value c64 = i64(k, col);
                    rk_value ro = rk_build_mul(k, r64, l64);
                    rk_value at = rk_build_add(k, ro, c64);
                    rk_build_global_atomic(k, "fadd", io->dst, at, x);
                }
                rk_if_end(k, NULL, 0);
            }
}

void kn_gemm_split_atomic(rk_kernel *k, const kn_gemm_plan *pl, const kn_gemm_split_io *io, const rk_value *acc) {
    put_partials(k, pl, io, acc, NULL);
}

rk_value kn_gemm_split_publish(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s,
                               const kn_gemm_split_io *io, const rk_value *acc) {
    rk_value sid = rk_build_block_id(k, 1);
    put_partials(k, pl, io, acc, &sid);
    rk_value at = counter_at(k, s, io);
    return rk_tile_arrive_last(k, io->tid, io->dst, at, s->split_k);
}

/* Slice `sp` (i32) of Work at this lane's slots, added to base (or, base
 * NULL, as is) into out; tmpl gives the fragments' types. */
static void add_slice(rk_kernel *k, const kn_gemm_plan *pl, const kn_gemm_split_io *io, rk_value sp,
                      const rk_value *tmpl, const rk_value *base, rk_value *out) {
    rk_value zero = c32(k, 0);
    for (uint32_t i = 0; i < pl->mi; i++)
        for (uint32_t j = 0; j < pl->ni; j++) {
            rk_value d = tmpl[i * pl->ni + j];
            for (uint32_t sl = 0; sl < pl->atom->c_len; sl++) {
                rk_value row, col;
                rk_value ok = slot(k, pl, io, i, j, sl, &row, &col);
                /* outside C: read (0, 0) instead; the epilogue stores nothing there */
                rk_value r = rk_build_select(k, ok, row, zero);
                rk_value c = rk_build_select(k, ok, col, zero);
                rk_value at = work_at(k, io, sp, r, c);
                rk_value v = rk_load_global(k, io->dst, at, 1);
                if (base) {
                    rk_value was = rk_build_vextract(k, base[i * pl->ni + j], sl);
                    v = rk_build_fadd(k, was, v);
                }
                d = rk_build_vinsert(k, d, v, sl);
            }
            out[i * pl->ni + j] = d;
        }
}

void kn_gemm_split_gather(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s, const kn_gemm_split_io *io,
                          const rk_value *acc, rk_value *sum) {
    /* slice 0, then slices 1 .. S-1 added in order by a device loop: one
     * slice's loads in flight at a time (unrolled, every slice's loads were
     * hoisted together and set the kernel's register count) */
    uint32_t n = pl->mi * pl->ni;
    rk_value zero = c32(k, 0);
    rk_value head[192], cur[192], next[192];
    add_slice(k, pl, io, zero, acc, NULL, head);
    rk_value lo = c32(k, 1), hi = c32(k, s->split_k), step = c32(k, 1);
    rk_value sp = rk_for_begin(k, lo, hi, step, "split", n, head, NULL, cur);
    add_slice(k, pl, io, sp, cur, cur, next);
    rk_for_end(k, next, n, sum);
    /* every split has arrived: reset the tile's counter for the next launch */
    rk_value first = rk_build_cmp(k, "eq", io->tid, zero);
    rk_if_begin(k, first);
    rk_value at = counter_at(k, s, io);
    rk_value zf = rk_const_f32(k, 0.0f);
    rk_store_global(k, io->dst, at, zf);
    rk_if_end(k, NULL, 0);
}

uint32_t kn_gemm_tune_split(const rk_gemm_spec *s, const rk_target *t, uint64_t M, uint64_t N, uint64_t K,
                            uint64_t batch) {
    if (s->split_reduce == RK_GEMM_SPLIT_ATOMIC && (s->out_dtype != RK_S_F32 || s->fuse.n)) return 1;
    uint64_t blocks = (M + s->tile[0] - 1) / s->tile[0] * ((N + s->tile[1] - 1) / s->tile[1]) * batch;
    uint64_t ktiles = (K + s->tile[2] - 1) / s->tile[2];
    /* decode shapes stream the weights: two blocks per unit keep more bytes in flight */
    uint64_t want = (uint64_t)t->compute_units * (M <= 64 ? 2 : 1);
    if (blocks >= want) return 1;
    uint64_t split = (want + blocks - 1) / blocks;
    if (split > ktiles / 4) split = ktiles / 4;
    if (split > 16) split = 16;
    return split < 2 ? 1 : (uint32_t)split;
}
