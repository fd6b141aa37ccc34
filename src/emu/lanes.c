/* rocke — cross-lane handlers with the exact semantics of each instruction
 * on the target's wave size: readfirstlane/readlane/writelane, votes,
 * ds_bpermute (inactive source lanes read 0), ds_swizzle (bit-mask and
 * quad-permute modes), DPP row shifts and quad_perm (bound_ctrl: zero fill,
 * else the old value), shuffles with PTX shfl.sync rules, wave reductions,
 * permlane32_swap, v_perm_b32, v_alignbyte, s_wqm and exec-mask ops.
 * Layer: emu. */
#include "emu_int.h"

static uint64_t ld64(const void *p, uint32_t l, uint32_t es) {
    return es == 8 ? ((const uint64_t *)p)[l] : es == 4 ? ((const uint32_t *)p)[l] : ((const uint8_t *)p)[l];
}
static void st64(void *p, uint32_t l, uint32_t es, uint64_t v) {
    if (es == 8) ((uint64_t *)p)[l] = v;
    else if (es == 4) ((uint32_t *)p)[l] = (uint32_t)v;
    else ((uint8_t *)p)[l] = (uint8_t)v;
}

/* readfirstlane: the first active lane's value to every lane (es 4 or 8). */
int emu_h_readfirstlane(emu_wave *w, const emu_ins *in) {
    uint64_t v = ld64(REF(in->a), emu_first_active(w), in->es);
    void *d = REF(in->d);
    for (uint32_t l = 0; l < w->W; l++) st64(d, l, in->es, v);
    return EMU_NEXT;
}

/* readlane(v, lane): lane l reads v[lane[l] mod W] (the lane index is meant to
 * be uniform; per lane it is also what shfl idx does). Source lanes need not
 * be active. */
int emu_h_readlane(emu_wave *w, const emu_ins *in) {
    const uint32_t *v = REF(in->a), *ln = REF(in->b);
    uint32_t *d = REF(in->d);
    for (uint32_t l = 0; l < w->W; l++) d[l] = v[ln[l] & (w->W - 1)];
    return EMU_NEXT;
}

/* writelane(v, lane, passthrough): passthrough everywhere except lane
 * (uniform, from the first active lane) which gets the first active lane's v;
 * v_writelane ignores EXEC. */
int emu_h_writelane(emu_wave *w, const emu_ins *in) {
    const uint32_t *v = REF(in->a), *ln = REF(in->b), *pt = REF(in->c);
    uint32_t *d = REF(in->d), fl = emu_first_active(w);
    memcpy(d, pt, sizeof(uint32_t) * w->W);
    d[ln[fl] & (w->W - 1)] = v[fl];
    return EMU_NEXT;
}

/* ballot: bit l = active lane l with a non-zero predicate (es2 bytes). */
static uint64_t ballot(const emu_wave *w, const emu_ins *in) {
    const void *p = emu_ref(w, in->a);
    uint64_t m = 0;
    for (uint32_t l = 0; l < w->W; l++) m |= (uint64_t)(ld64(p, l, in->es2) != 0) << l;
    return m & w->exec;
}
int emu_h_ballot(emu_wave *w, const emu_ins *in) {
    uint64_t m = ballot(w, in), *d = REF(in->d);
    for (uint32_t l = 0; l < w->W; l++) d[l] = m;
    return EMU_NEXT;
}
/* wave_all (imm 0): every active lane true — compared with exec, not with
 * all ones, so it is right on wave32 and under partial masks; wave_any (imm 1). */
int emu_h_vote(emu_wave *w, const emu_ins *in) {
    uint64_t m = ballot(w, in);
    uint32_t r = in->imm ? m != 0 : m == w->exec, *d = REF(in->d);
    for (uint32_t l = 0; l < w->W; l++) d[l] = r;
    return EMU_NEXT;
}

/* tile.shuffle, PTX shfl.sync rules with W-lane words: imm = mode (0 idx,
 * 1 xor, 2 up, 3 down), imm2 = width. segmask = W - width; for up the clamp
 * is the segment base, else its last lane; a source outside the clamp gives
 * the lane its own value. */
int emu_h_shuffle(emu_wave *w, const emu_ins *in) {
    const uint32_t *v = REF(in->a), *b = REF(in->b);
    uint32_t *d = REF(in->d), W = w->W, seg = W - (uint32_t)in->imm2, lm = W - 1;
    for (uint32_t l = 0; l < W; l++) {
        uint32_t bv = b[l] & lm, minl = l & seg, maxl = in->imm == 2 ? minl : (minl | (lm & ~seg));
        int64_t j;
        bool ok;
        switch (in->imm) {
        case 0: j = minl | (bv & ~seg); ok = j <= maxl; break;
        case 1: j = l ^ bv; ok = j <= maxl; break;
        case 2: j = (int64_t)l - bv; ok = j >= (int64_t)maxl; break;
        default: j = (int64_t)l + bv; ok = j <= maxl; break;
        }
        d[l] = v[ok ? (uint32_t)j : l];
    }
    return EMU_NEXT;
}

/* ds_bpermute(addr, data): r[l] = data[(addr[l] >> 2) mod W] when that lane is
 * active, else 0; es = 4 or 8 (the b64 form is two dword permutes). */
int emu_h_bpermute(emu_wave *w, const emu_ins *in) {
    const uint32_t *ad = REF(in->a);
    const void *v = REF(in->b);
    void *d = REF(in->d);
    memset(d, 0, (size_t)w->W * in->es);
    FOR_ACTIVE(w, l) {
        uint32_t s = (ad[l] >> 2) & (w->W - 1);
        st64(d, (uint32_t)l, in->es, emu_active(w, s) ? ld64(v, s, in->es) : 0);
    }
    return EMU_NEXT;
}

/* ds_swizzle offset decode (AMD ISA pseudocode of DS_SWIZZLE_B32, gfx9+),
 * every mode inside 32-lane groups (the group bits of l are kept):
 *   0xe000+ FFT: mask = off[4:0], src = (rev5(l) >> popcount(mask)) | (l & mask)
 *   0xc000+ rotate: r = off[9:5], negated when off[10]; mask = off[4:0],
 *           src = ((l & mask) | ((l + r) & ~mask)) mod 32
 *   0x8000+ quad permute: lane i of each group of four reads lane off[2i+1:2i]
 *   else    bit masks: and = off[4:0], or = off[9:5], xor = off[14:10],
 *           src = ((l & and) | or) ^ xor */
static uint32_t reverse5(uint32_t x) {
    uint32_t r = 0;
    for (uint32_t b = 0; b < 5; b++) r |= ((x >> b) & 1u) << (4 - b);
    return r;
}

static uint32_t popcount5(uint32_t x) {
    uint32_t n = 0;
    for (x &= 31u; x; x &= x - 1) n++;
    return n;
}

static uint32_t swizzle_src(uint32_t off, uint32_t l) {
    uint32_t i = l & 31u, mask = off & 31u;
    if (off >= 0xe000u) return (reverse5(i) >> popcount5(mask)) | (i & mask);
    if (off >= 0xc000u) {
        uint32_t r = (off >> 5) & 31u;
        if (off & 0x400u) r = (32u - r) & 31u;
        return ((i & mask) | ((i + r) & ~mask)) & 31u;
    }
    if (off & 0x8000u) return (i & ~3u) | ((off >> (2 * (i & 3u))) & 3u);
    return ((i & mask) | ((off >> 5) & 31u)) ^ ((off >> 10) & 31u);
}

void emu_swizzle_map(uint32_t off, uint32_t W, int *src) {
    for (uint32_t l = 0; l < W; l++) src[l] = (int)((l & ~31u) | swizzle_src(off & 0xffffu, l));
}

/* Lane permutes through a map (aux: int per lane, -1 = no source). ds_swizzle
 * (imm 0): an inactive or missing source reads 0. DPP (imm 1): an inactive or
 * missing source gives 0 with bound_ctrl (imm2 = 1), else the lane keeps its
 * old value (update.dpp is called with old = src). */
static int permute(emu_wave *w, const emu_ins *in) {
    const int *map = in->aux;
    const uint32_t *v = REF(in->a);
    uint32_t *d = REF(in->d);
    for (uint32_t l = 0; l < w->W; l++) {
        int s = map[l];
        bool ok = s >= 0 && emu_active(w, (uint32_t)s);
        d[l] = ok ? v[s] : in->imm == 0 || in->imm2 ? 0u : v[l];
    }
    return EMU_NEXT;
}
int emu_h_swizzle(emu_wave *w, const emu_ins *in) { return permute(w, in); }
int emu_h_dpp(emu_wave *w, const emu_ins *in) { return permute(w, in); }

/* wave_reduce over the active lanes, result in every lane. imm: 0 umin,
 * 1 umax, 2 min, 3 max, 4 add, 5 sub (0 - sum, as LLVM's wave.reduce.sub),
 * 6 and, 7 or, 8 xor. */
int emu_h_wave_reduce(emu_wave *w, const emu_ins *in) {
    const uint32_t *v = REF(in->a);
    uint32_t *d = REF(in->d);
    static const uint32_t ident[] = {UINT32_MAX, 0, (uint32_t)INT32_MAX, (uint32_t)INT32_MIN, 0, 0, UINT32_MAX, 0, 0};
    uint32_t acc = ident[in->imm];
    FOR_ACTIVE(w, l) {
        uint32_t x = v[l];
        switch (in->imm) {
        case 0: acc = x < acc ? x : acc; break;
        case 1: acc = x > acc ? x : acc; break;
        case 2: acc = (int32_t)x < (int32_t)acc ? x : acc; break;
        case 3: acc = (int32_t)x > (int32_t)acc ? x : acc; break;
        case 4: acc += x; break;
        case 5: acc -= x; break;
        case 6: acc &= x; break;
        case 7: acc |= x; break;
        default: acc ^= x; break;
        }
    }
    for (uint32_t l = 0; l < w->W; l++) d[l] = acc;
    return EMU_NEXT;
}

/* permlane32_swap(lo, hi): v_permlane32_swap exchanges lanes 32..63 of lo
 * with lanes 0..31 of hi; d = new lo, args[0] = new hi (EXEC ignored). */
int emu_h_permlane32_swap(emu_wave *w, const emu_ins *in) {
    const uint32_t *lo = REF(in->a), *hi = REF(in->b);
    uint32_t *r0 = REF(in->d), *r1 = REF(in->args[0]);
    for (uint32_t l = 0; l < 32; l++) {
        r0[l] = lo[l];
        r0[l + 32] = hi[l];
        r1[l] = lo[l + 32];
        r1[l + 32] = hi[l + 32];
    }
    return EMU_NEXT;
}

/* v_perm_b32(S0 = a, S1 = b, sel): bytes 0-3 of {S0,S1} are S1, 4-7 are S0;
 * result byte k from selector byte k: 0..7 that byte, 8 / 9 / 10 / 11 the
 * sign of byte 1 / 3 / 5 / 7 spread to 8 bits, 12 gives 0x00, 13..255 0xff.
 * sel is register c, or imm when c is UINT32_MAX (tile.byte_perm). */
static uint32_t perm(uint32_t s0, uint32_t s1, uint32_t sel) {
    uint64_t x = ((uint64_t)s0 << 32) | s1;
    uint32_t r = 0;
    for (int k = 0; k < 4; k++) {
        uint32_t s = (sel >> (8 * k)) & 0xffu, b;
        if (s < 8) b = (uint32_t)(x >> (8 * s)) & 0xffu;
        else if (s < 12) b = ((x >> (8 * (2 * (s - 8) + 1) + 7)) & 1u) ? 0xffu : 0u;
        else b = s == 12 ? 0u : 0xffu;
        r |= b << (8 * k);
    }
    return r;
}
int emu_h_perm_b32(emu_wave *w, const emu_ins *in) {
    const uint32_t *a = REF(in->a), *b = REF(in->b);
    const uint32_t *s = in->c == UINT32_MAX ? NULL : REF(in->c);
    uint32_t *d = REF(in->d);
    for (uint32_t l = 0; l < w->W; l++) d[l] = perm(a[l], b[l], s ? s[l] : (uint32_t)in->imm);
    return EMU_NEXT;
}

/* v_alignbyte_b32: ({a, b} >> (8 * (c & 3)))[31:0]. */
int emu_h_alignbyte(emu_wave *w, const emu_ins *in) {
    const uint32_t *a = REF(in->a), *b = REF(in->b), *c = REF(in->c);
    uint32_t *d = REF(in->d);
    for (uint32_t l = 0; l < w->W; l++) d[l] = (uint32_t)((((uint64_t)a[l] << 32) | b[l]) >> (8 * (c[l] & 3u)));
    return EMU_NEXT;
}

/* s_wqm: every 4-bit group with any bit set becomes all ones (es 4 or 8). */
int emu_h_wqm(emu_wave *w, const emu_ins *in) {
    const void *a = REF(in->a);
    void *d = REF(in->d);
    for (uint32_t l = 0; l < w->W; l++) {
        uint64_t v = ld64(a, l, in->es), r = 0;
        for (int q = 0; q < 16; q++)
            if ((v >> (4 * q)) & 0xfu) r |= 0xfull << (4 * q);
        st64(d, l, in->es, r);
    }
    return EMU_NEXT;
}

/* Exec-mask ops (the mask operand is scalar: the first active lane's).
 * imm: 0 s_and_saveexec (exec &= m, result old exec), 1 s_or_saveexec
 * (exec |= m), 2 exec_xor (result exec ^ m, exec unchanged), 3 exec_or
 * (exec |= m, no result). Lanes that do not exist or have returned stay off. */
int emu_h_exec(emu_wave *w, const emu_ins *in) {
    uint64_t m = ((const uint64_t *)REF(in->a))[emu_first_active(w)], old = w->exec, r = old;
    switch (in->imm) {
    case 0: w->exec = old & m; break;
    case 1: w->exec = (old | m) & w->alive; break;
    case 2: r = old ^ m; break;
    default: w->exec = (old | m) & w->alive; break;
    }
    if (in->imm != 3) {
        uint64_t *d = REF(in->d);
        for (uint32_t l = 0; l < w->W; l++) d[l] = r;
    }
    return EMU_NEXT;
}
