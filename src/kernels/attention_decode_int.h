/* rocke — the attention decode kernel, private: the block's values both
 * score paths share (the lanes in attention_decode_build.c, the matrix
 * atoms in attention_decode_atom.c) and the pieces they share. Layer: kernels. */
#ifndef ROCKE_ATTENTION_DECODE_INT_H
#define ROCKE_ATTENTION_DECODE_INT_H

#include "attention_int.h"

#define MAXR 64   /* kv_rows (the VALU path: 16) */

static inline rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }
static inline rk_value i64(rk_kernel *k, rk_value v) { return rk_build_sext(k, v, RK_T_I64); }

typedef struct dk {
    rk_kernel *k;
    const rk_attention_spec *s;
    kn_decode_geom g;
    uint32_t R, piece;              /* rows; keys per outer loop step (the page size) */
    rk_value tid, slot, c;          /* thread; its key slot; its lane within the key */
    rk_value b, hk, len, Sq, Hq, Hkv, Skv, group;
    rk_value wl, wr;
    rk_value split, nsplit;         /* this block's split; the splits of the run (1 without kv_splits) */
    rk_value row_ok[MAXR], diag[MAXR], hq[MAXR], qi[MAXR];
    rk_value q[MAXR];               /* this lane's slice of every row, f32, times scale * log2(e) */
    rk_value K, V, bt;              /* caches; the block table */
    rk_value kstride;               /* i64 elements between keys of one head (paged: Hkv * D; contiguous: D) */
    rk_value vscale;                /* fp8 caches: V's scale of head hk (f32), folded into 1 / l; else 1 */
} dk;

/* Per row: the running max m (log2 domain), the sum l and this lane's O slice acc (f32). */
typedef struct kn_dec_state { rk_value m[MAXR], l[MAXR], acc[MAXR]; } kn_dec_state;
#define KN_DEC_CHUNK 4u   /* keys of a slot per online-softmax update (the lanes path) */
/* The state as 3 * R loop-carried values (m, then l, then acc) and back. */
static inline void kn_dec_state_pack(const kn_dec_state *st, uint32_t R, rk_value *v) {
    for (uint32_t r = 0; r < R; r++) v[r] = st->m[r], v[R + r] = st->l[r], v[2 * R + r] = st->acc[r];
}
static inline void kn_dec_state_unpack(const rk_value *v, uint32_t R, kn_dec_state *st) {
    for (uint32_t r = 0; r < R; r++) st->m[r] = v[r], st->l[r] = v[R + r], st->acc[r] = v[2 * R + r];
}

/* i1: key j is visible to a row (row_ok: inside the group; diag: its key diagonal) and inside the split (valid). */
rk_value kn_dec_visible(dk *g, rk_value row_ok, rk_value diag, rk_value j, rk_value valid);
/* vec<fp8 x 4n> -> vec<f32 x 4n>, four bytes at a time. */
rk_value kn_dec_fp8_to_f32(rk_kernel *k, rk_value v, uint32_t n);
/* A lane's slice of a key or value (vec cache elements) in f32. */
rk_value kn_dec_to_f32(dk *g, rk_value v);
/* The lanes path's update by n <= KN_DEC_CHUNK keys of this slot: f32 slices
 * kf[x] and vf[x], positions j[x], valid[x] inside the split. */
void kn_dec_keys_update(dk *g, uint32_t n, const rk_value *kf, const rk_value *vf, const rk_value *j,
                        const rk_value *valid, kn_dec_state *st);
/* First element (i64) of piece pg of head hk of this sequence: the page id
 * (i32: the block table's entry, or pg for contiguous caches), then its
 * first element. */
rk_value kn_dec_piece_first(dk *g, rk_value pg);
rk_value kn_dec_page_id(dk *g, rk_value pg);
rk_value kn_dec_page_first(dk *g, rk_value id);
/* The split's keys [t0, t1) (i32, block uniform). */
void kn_dec_split_range(dk *g, rk_value *t0, rk_value *t1);
/* i64 element (b, i, hq, cc * vec) of Q or O. */
rk_value kn_dec_qo_at(dk *g, rk_value hq, rk_value qi, rk_value cc);
/* Row r's query head, token and "inside the group". */
void kn_dec_row_of(dk *g, rk_value r, rk_value *hq, rk_value *qi, rk_value *ok);
/* The merge of nst stored states, O or the split's partial, the split merge. */
void kn_dec_finish(dk *g, const rk_value *p, const kn_attn_dsig *ix, rk_value smem, uint32_t nst);
/* attention_decode_ring.c: the lanes path's KV loop through a ring of
 * `stages` cp.async LDS stages of kn_dec_ring_keys keys (stages >= 2). */
bool kn_dec_ring_on(const rk_attention_spec *s);
uint32_t kn_dec_ring_keys(const rk_attention_spec *s);
uint32_t kn_dec_ring_bytes(const rk_attention_spec *s);
/* st: the state before the split's keys [t0, t1), on return after them; the
 * ring's copies have landed and the block is synchronized (its LDS is free). */
void kn_dec_ring_loop(dk *g, rk_value t0, rk_value t1, kn_dec_state *st);
/* attention_decode_atom.c: the atom path after the block's common values. */
void kn_dec_atom_build(dk *g, const rk_target *t, const rk_value *p, const kn_attn_dsig *ix, rk_value scale_l2);

#endif
