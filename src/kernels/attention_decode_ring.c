/* rocke — the attention decode kernel's lanes-path KV loop through a ring
 * of `stages` LDS stages filled by tile.async_copy (cp.async on NVIDIA), so
 * the loads of the next stages are in flight while a stage is scored. A
 * stage holds kn_dec_ring_keys keys of K and V (about 16 KB, whatever the
 * page size: several 16-token pages, or a part of a 128-token page); each
 * thread copies exactly the chunks it later reads (key x * slots + slot of
 * the stage, its lane's 16 bytes), so the ring needs no block barrier,
 * only its own wait_group. Layer: kernels. */
#include "attention_decode_int.h"

#define RING_BYTES 16384u   /* K and V bytes of one stage */

bool kn_dec_ring_on(const rk_attention_spec *s) { return s->stages >= 2 && !kn_attn_decode_atoms(s); }

uint32_t kn_dec_ring_keys(const rk_attention_spec *s) {
    uint32_t kvb = rk_tile_elem_bytes(kn_attn_decode_kv_type(s));
    return RING_BYTES / (2 * s->head_dim * kvb);
}

uint32_t kn_dec_ring_bytes(const rk_attention_spec *s) { return s->stages * RING_BYTES; }

typedef struct ring {
    dk *g;
    rk_value smem, t0, t1;
    rk_value own;        /* i32: this thread's chunk of key `slot` in a stage, tid * vec */
    rk_value lane_at;    /* i64: element c * vec of a cache, the address of a copy that is not made */
    uint32_t keys, per;  /* keys of a stage; this thread's keys of a stage */
    uint32_t bytes;      /* of one copy */
} ring;

/* Element (i32) of chunk x of K (kv 0) or V (1) in buffer `buf` (i32):
 * [buf][K, V][key][D]. */
static rk_value chunk_at(ring *r, rk_value buf, uint32_t kv, uint32_t x) {
    rk_kernel *k = r->g->k;
    uint32_t D = r->g->s->head_dim;
    rk_value bsz = c32(k, 2 * r->keys * D);
    rk_value b0 = rk_build_mul(k, buf, bsz);
    rk_value xo = c32(k, (kv * r->keys + x * r->g->g.slots) * D);
    rk_value b1 = rk_build_add(k, b0, xo);
    return rk_build_add(k, b1, r->own);
}

#define RING_PAGES 8u   /* pages of a stage at most: 128 keys (D 64, fp8) of 16-token pages */

/* The pages of this thread's keys of stage n (keys t0 + n * keys + [0,
 * keys)): t0 is a whole number of pages and slots divides the page, so key x
 * * slots + slot lies in page (first + x * slots) / P, page group x * slots /
 * P of the stage (0 when a stage is part of a page). id[p]: group p's page
 * (kn_dec_page_id, i32, so a carried lookup costs one register); a page
 * past the split reads block-table entry 0, which every row has. */
static uint32_t page_groups(const ring *r) { return (r->per - 1) * r->g->g.slots / r->g->piece + 1; }

static void lookup(ring *r, rk_value n, rk_value *id) {
    dk *g = r->g;
    rk_kernel *k = g->k;
    rk_value kv = c32(k, r->keys), pcv = c32(k, g->piece), zero = c32(k, 0);
    rk_value no = rk_build_mul(k, n, kv);
    rk_value first = rk_build_add(k, r->t0, no);
    rk_value pg0 = rk_build_udiv(k, first, pcv);
    for (uint32_t pi = 0; pi < page_groups(r); pi++) {
        rk_value po = c32(k, pi);
        rk_value pg = rk_build_add(k, pg0, po);
        rk_value pk = rk_build_mul(k, pg, pcv);
        rk_value used = rk_build_cmp(k, "lt", pk, r->t1);
        rk_value pgc = rk_build_select(k, used, pg, zero);
        id[pi] = kn_dec_page_id(g, pgc);
    }
}

/* Stage n's keys into buffer buf (n % stages), its pages from lookup:
 * this thread's K and V chunks, zeros past the split (no read: the copy's
 * source is then the cache's first key). */
static void issue(ring *r, rk_value n, rk_value buf, const rk_value *id) {
    dk *g = r->g;
    rk_kernel *k = g->k;
    rk_value kv = c32(k, r->keys), pcv = c32(k, g->piece);
    rk_value no = rk_build_mul(k, n, kv);
    rk_value first = rk_build_add(k, r->t0, no);
    rk_value pg0 = rk_build_udiv(k, first, pcv);
    rk_value base[RING_PAGES];
    for (uint32_t pi = 0; pi < page_groups(r); pi++) {
        /* the element of key 0 were the page's keys numbered from 0 */
        rk_value pb = kn_dec_page_first(g, id[pi]);
        rk_value po = c32(k, pi);
        rk_value pg = rk_build_add(k, pg0, po);
        rk_value pk = rk_build_mul(k, pg, pcv);
        rk_value pk64 = i64(k, pk);
        rk_value pko = rk_build_mul(k, pk64, g->kstride);
        base[pi] = rk_build_sub(k, pb, pko);
    }
    for (uint32_t x = 0; x < r->per; x++) {
        rk_value xo = c32(k, x * g->g.slots);
        rk_value kx = rk_build_add(k, first, xo);
        rk_value key = rk_build_add(k, kx, g->slot);
        rk_value valid = rk_build_cmp(k, "lt", key, r->t1);
        rk_value key64 = i64(k, key);
        rk_value ko = rk_build_mul(k, key64, g->kstride);
        rk_value b1 = rk_build_add(k, base[x * g->g.slots / g->piece], ko);
        rk_value at0 = rk_build_add(k, b1, r->lane_at);
        rk_value at = rk_build_select(k, valid, at0, r->lane_at);
        rk_value dk_ = chunk_at(r, buf, 0, x);
        rk_build_async_copy(k, g->K, at, r->smem, dk_, valid, r->bytes);
        rk_value dv = chunk_at(r, buf, 1, x);
        rk_build_async_copy(k, g->V, at, r->smem, dv, valid, r->bytes);
    }
    rk_build_async_commit_group(k);
}

/* Score stage u (landed) from buffer buf (u % stages), KN_DEC_CHUNK keys per update. */
static void consume(ring *r, rk_value u, rk_value buf, kn_dec_state *st) {
    dk *g = r->g;
    rk_kernel *k = g->k;
    rk_value kv = c32(k, r->keys);
    rk_value uo = rk_build_mul(k, u, kv);
    rk_value first = rk_build_add(k, r->t0, uo);
    for (uint32_t x0 = 0; x0 < r->per; x0 += KN_DEC_CHUNK) {
        uint32_t n = r->per - x0 < KN_DEC_CHUNK ? r->per - x0 : KN_DEC_CHUNK;
        rk_value kf[KN_DEC_CHUNK], vf[KN_DEC_CHUNK], j[KN_DEC_CHUNK], valid[KN_DEC_CHUNK];
        for (uint32_t x = 0; x < n; x++) {
            rk_value ka = chunk_at(r, buf, 0, x0 + x);
            rk_value kr = rk_load_smem(k, r->smem, &ka, g->g.vec);
            rk_value va = chunk_at(r, buf, 1, x0 + x);
            rk_value vr = rk_load_smem(k, r->smem, &va, g->g.vec);
            kf[x] = kn_dec_to_f32(g, kr);
            vf[x] = kn_dec_to_f32(g, vr);
            rk_value xo = c32(k, (x0 + x) * g->g.slots);
            rk_value kx = rk_build_add(k, first, xo);
            j[x] = rk_build_add(k, kx, g->slot);
            valid[x] = rk_build_cmp(k, "lt", j[x], r->t1);
        }
        kn_dec_keys_update(g, n, kf, vf, j, valid, st);
    }
}

void kn_dec_ring_loop(dk *g, rk_value t0, rk_value t1, kn_dec_state *st) {
    rk_kernel *k = g->k;
    const rk_attention_spec *s = g->s;
    uint32_t S = s->stages, D = s->head_dim;
    ring r = {.g = g, .t0 = t0, .t1 = t1, .keys = kn_dec_ring_keys(s)};
    r.per = r.keys / g->g.slots;
    r.bytes = g->g.vec * rk_tile_elem_bytes(kn_attn_decode_kv_type(s));
    RK_ASSERT(r.per * g->g.slots == r.keys && g->piece % g->g.slots == 0,
              "attention decode: a ring stage and a page are whole key slots");
    uint32_t elems = S * 2 * r.keys * D;
    rk_smem_alloc_opts al = {.align = RK_SOME(128)};
    r.smem = rk_build_smem_alloc_ex(k, (rk_type){kn_attn_decode_kv_type(s)}, &elems, 1, &al);
    rk_value vv = c32(k, g->g.vec);
    r.own = rk_build_mul(k, g->tid, vv);
    rk_value lo = rk_build_mul(k, g->c, vv);
    r.lane_at = i64(k, lo);

    /* stages 0 .. S-2 ahead; step u issues stage u + S - 1 (into the buffer
     * step u - 1 read), then waits until stage u has landed. The pages of
     * stage u + S are read from the block table at step u and carried, so
     * their latency hides behind the scoring, not in front of the copies. */
    uint32_t np = page_groups(&r);
    RK_ASSERT(np <= RING_PAGES, "attention decode: the pages of a ring stage");
    rk_value ids[RING_PAGES];
    for (uint32_t n = 0; n + 1 < S; n++) {
        rk_value nv = c32(k, n);
        lookup(&r, nv, ids);
        issue(&r, nv, nv, ids);
    }
    rk_value K1 = c32(k, r.keys - 1), Kv = c32(k, r.keys);
    rk_value span = rk_build_sub(k, t1, t0);
    rk_value su = rk_build_add(k, span, K1);
    rk_value nst = rk_build_udiv(k, su, Kv);
    uint32_t R = g->R, nc = 3 * R;
    rk_value init[3 * MAXR + 1 + RING_PAGES], cur[3 * MAXR + 1 + RING_PAGES], res[3 * MAXR + 1 + RING_PAGES];
    kn_dec_state_pack(st, R, init);
    rk_value zero = c32(k, 0), one = c32(k, 1), ahead = c32(k, S - 1);
    init[nc] = zero;   /* the buffer step u reads (u % S) is carried, so no division by S */
    lookup(&r, ahead, init + nc + 1);
    rk_value u = rk_for_begin(k, zero, nst, one, "stage", nc + 1 + np, init, NULL, cur);
    {
        kn_dec_state in;
        kn_dec_state_unpack(cur, R, &in);
        rk_value buf = cur[nc];
        rk_value nx = rk_build_add(k, u, ahead);
        rk_value first = rk_build_cmp(k, "eq", buf, zero);
        rk_value prev = rk_build_sub(k, buf, one);
        rk_value wbuf = rk_build_select(k, first, ahead, prev);   /* (u + S - 1) % S */
        issue(&r, nx, wbuf, cur + nc + 1);
        rk_value y[3 * MAXR + 1 + RING_PAGES];
        rk_value n2 = rk_build_add(k, nx, one);
        lookup(&r, n2, y + nc + 1);
        rk_build_async_wait_group(k, S - 1);
        consume(&r, u, buf, &in);
        kn_dec_state_pack(&in, R, y);
        rk_value last = rk_build_cmp(k, "eq", buf, ahead);
        rk_value nb = rk_build_add(k, buf, one);
        y[nc] = rk_build_select(k, last, zero, nb);
        rk_for_end(k, y, nc + 1 + np, res);
    }
    kn_dec_state_unpack(res, R, st);
    /* the trailing (zero-filled) stages land before the LDS is reused */
    rk_build_async_wait_group(k, 0);
    rk_build_sync(k);
}
