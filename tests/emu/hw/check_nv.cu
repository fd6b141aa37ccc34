// rocke tests — hardware cross-check of emulator facts on an NVIDIA GPU (not
// built by CMake; run by hand on a GPU machine):
//   gcc -std=c17 -O2 -c src/base/fp8.c src/base/fp.c
//   nvcc -O2 -arch=sm_90 -Iinclude -Isrc tests/emu/hw/check_nv.cu fp8.o fp.o -o check_nv
//   ./check_nv
// Compares (1) cvt.rn.satfinite.{e4m3,e5m2}x2.f32 with rk_f64_to_fp8_nan (the
// canonical NaN style the emulator uses on NVIDIA targets) and the
// fp8 decode with rk_fp8_to_f32, (2) the mma.sync m16n8k16 f16 fragment
// layout and (3) ldmatrix .x4 / .x4.trans with the formulas the emulator
// uses (docs/emulator.md), (4) shfl.sync with widths and (5) how mma.sync
// treats the low bits of tf32 inputs. Prints one line per check and exits
// non-zero on any mismatch.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_fp16.h>

extern "C" {
#include "base/fp.h"
#include "base/fp8.h"
}

__global__ void cvt_kernel(const float *x, uint8_t *e4, uint8_t *e5, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint16_t a, b;
    float v = x[i], z = 0.0f;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(a) : "f"(z), "f"(v));
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(b) : "f"(z), "f"(v));
    e4[i] = (uint8_t)(a & 0xff);
    e5[i] = (uint8_t)(b & 0xff);
}

__global__ void dec_kernel(float *d4, float *d5) {
    int c = threadIdx.x;
    uint16_t in = (uint16_t)c;
    uint32_t r4, r5;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r4) : "h"(in));
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(r5) : "h"(in));
    d4[c] = __half2float(__ushort_as_half((unsigned short)(r4 & 0xffff)));
    d5[c] = __half2float(__ushort_as_half((unsigned short)(r5 & 0xffff)));
}

// A (16x16 f16) row-major, B (16x8) row-major; each lane loads its fragment
// by the PTX formulas and writes D back through them.
__global__ void mma_kernel(const __half *A, const __half *B, const float *C, float *D) {
    int l = threadIdx.x, g = l / 4, t = l % 4;
    uint32_t a[4], b[2];
    float c[4], d[4];
    for (int s = 0; s < 8; s += 2) {
        int row = g + 8 * ((s / 2) % 2), col = 2 * t + 8 * (s / 4);
        __half2 h = __halves2half2(A[row * 16 + col], A[row * 16 + col + 1]);
        a[s / 2] = *(uint32_t *)&h;
    }
    for (int s = 0; s < 4; s += 2) {
        int k0 = 2 * t + 8 * (s / 2);
        __half2 h = __halves2half2(B[k0 * 8 + g], B[(k0 + 1) * 8 + g]);
        b[s / 2] = *(uint32_t *)&h;
    }
    for (int s = 0; s < 4; s++) c[s] = C[(g + 8 * (s / 2)) * 8 + 2 * t + s % 2];
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    for (int s = 0; s < 4; s++) D[(g + 8 * (s / 2)) * 8 + 2 * t + s % 2] = d[s];
}

// ldmatrix x4 from a 16x16 tile in shared memory: lane 8j + r gives row r of
// matrix j (rows 8(j%2).., columns 8(j/2)..).
__global__ void ldm_kernel(const uint16_t *T, uint32_t *O, int trans) {
    __shared__ uint16_t tile[256];
    int l = threadIdx.x;
    for (int i = l; i < 256; i += 32) tile[i] = T[i];
    __syncwarp();
    int j = l / 8, r = l % 8;
    const uint16_t *p = &tile[(8 * (j % 2) + r) * 16 + 8 * (j / 2)];
    uint32_t a = (uint32_t)__cvta_generic_to_shared(p), o0, o1, o2, o3;
    if (trans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(o0), "=r"(o1), "=r"(o2), "=r"(o3) : "r"(a));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(o0), "=r"(o1), "=r"(o2), "=r"(o3) : "r"(a));
    O[l * 4 + 0] = o0; O[l * 4 + 1] = o1; O[l * 4 + 2] = o2; O[l * 4 + 3] = o3;
}

// tile.shuffle (idx, xor, up, down) with a width: CUDA's __shfl_*_sync.
__global__ void shfl_kernel(const int *v, const int *b, int *o, int mode, int width) {
    int l = threadIdx.x, x = v[l], y = b[l], r;
    if (mode == 0) r = __shfl_sync(0xffffffffu, x, y, width);
    else if (mode == 1) r = __shfl_xor_sync(0xffffffffu, x, y, width);
    else if (mode == 2) r = __shfl_up_sync(0xffffffffu, x, (unsigned)y, width);
    else r = __shfl_down_sync(0xffffffffu, x, (unsigned)y, width);
    o[l] = r;
}

// mma.sync m16n8k8 tf32 with A = 1 + 0.75 ulp(tf32) everywhere and B = 1:
// each output is 8 * a' + C where a' is what the unit makes of the f32 input.
__global__ void tf32_kernel(float *D) {
    int l = threadIdx.x;
    float av = 1.0f + 0.75f * 0x1p-10f, bv = 1.0f, d[4];
    uint32_t a = __float_as_uint(av), b = __float_as_uint(bv);
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%4,%4,%4}, {%5,%5}, {%6,%6,%6,%6};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]) : "r"(a), "r"(b), "f"(0.0f));
    for (int s = 0; s < 4; s++) D[l * 4 + s] = d[s];
}

static int failures = 0;
static void report(const char *what, int bad, int total) {
    printf("%-44s %s (%d of %d differ)\n", what, bad ? "MISMATCH" : "ok", bad, total);
    failures += bad != 0;
}

int main() {
    // (1) fp8 encode over every grid point, midpoint and neighbour, specials, randoms
    std::vector<float> xs;
    for (int f = 0; f < 2; f++)
        for (int c = 0; c < 128; c++) {
            float v = rk_fp8_to_f32((uint8_t)c, f ? RK_FP8_E5M2 : RK_FP8_E4M3);
            if (!std::isfinite(v)) continue;
            float nv = rk_fp8_to_f32((uint8_t)(c + 1), f ? RK_FP8_E5M2 : RK_FP8_E4M3);
            for (int s = -1; s <= 1; s += 2) {
                xs.push_back(s * v);
                if (std::isfinite(nv)) {
                    float mid = (v + nv) / 2;
                    xs.push_back(s * mid);
                    xs.push_back(s * nextafterf(mid, 0));
                    xs.push_back(s * nextafterf(mid, INFINITY));
                }
            }
        }
    const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e30f, -1e30f, 1e-30f, -1e-30f, 464.0f, 470.0f,
                        65536.0f, 61440.0f, 57344.0f, 1e-45f};
    for (float v : sp) xs.push_back(v);
    uint32_t st = 12345;
    for (int i = 0; i < 200000; i++) {
        st = st * 1664525u + 1013904223u;
        xs.push_back(ldexpf((float)(st >> 8) / (1 << 24) - 0.5f, (int)(st % 40) - 20));
    }
    int n = (int)xs.size();
    float *dx;
    uint8_t *d4, *d5;
    cudaMalloc(&dx, n * 4);
    cudaMalloc(&d4, n);
    cudaMalloc(&d5, n);
    cudaMemcpy(dx, xs.data(), n * 4, cudaMemcpyHostToDevice);
    cvt_kernel<<<(n + 255) / 256, 256>>>(dx, d4, d5, n);
    std::vector<uint8_t> h4(n), h5(n);
    cudaMemcpy(h4.data(), d4, n, cudaMemcpyDeviceToHost);
    cudaMemcpy(h5.data(), d5, n, cudaMemcpyDeviceToHost);
    int b4 = 0, b5 = 0;
    for (int i = 0; i < n; i++) {
        uint8_t w4 = rk_f64_to_fp8_nan(xs[i], RK_FP8_E4M3, RK_FP8_NAN_CANONICAL);
        uint8_t w5 = rk_f64_to_fp8_nan(xs[i], RK_FP8_E5M2, RK_FP8_NAN_CANONICAL);
        if (h4[i] != w4 && b4++ < 5) printf("  e4m3 %.9g: gpu 0x%02x emu 0x%02x\n", xs[i], h4[i], w4);
        if (h5[i] != w5 && b5++ < 5) printf("  e5m2 %.9g: gpu 0x%02x emu 0x%02x\n", xs[i], h5[i], w5);
    }
    report("cvt.rn.satfinite.e4m3x2.f32 vs rk_f64_to_fp8_nan", b4, n);
    report("cvt.rn.satfinite.e5m2x2.f32 vs rk_f64_to_fp8_nan", b5, n);

    // decode of all 256 codes (through f16, exact for both formats)
    float *g4, *g5;
    cudaMalloc(&g4, 1024);
    cudaMalloc(&g5, 1024);
    dec_kernel<<<1, 256>>>(g4, g5);
    float r4[256], r5[256];
    cudaMemcpy(r4, g4, 1024, cudaMemcpyDeviceToHost);
    cudaMemcpy(r5, g5, 1024, cudaMemcpyDeviceToHost);
    int bd = 0;
    for (int c = 0; c < 256; c++) {
        float w4 = rk_fp8_to_f32((uint8_t)c, RK_FP8_E4M3), w5 = rk_fp8_to_f32((uint8_t)c, RK_FP8_E5M2);
        bool ok4 = (std::isnan(w4) && std::isnan(r4[c])) || memcmp(&w4, &r4[c], 4) == 0;
        bool ok5 = (std::isnan(w5) && std::isnan(r5[c])) || memcmp(&w5, &r5[c], 4) == 0;
        if ((!ok4 || !ok5) && bd++ < 5) printf("  code 0x%02x: gpu %g/%g emu %g/%g\n", c, r4[c], r5[c], w4, w5);
    }
    report("fp8 decode (256 codes, e4m3 and e5m2)", bd, 256);

    // (2) mma.sync m16n8k16 against a host product in double
    std::vector<__half> A(256), B(128);
    std::vector<float> C(128), D(128);
    std::vector<double> fa(256), fb(128);
    for (int i = 0; i < 256; i++) { fa[i] = ((int)(i * 7 % 9) - 4) / 8.0; A[i] = __float2half((float)fa[i]); }
    for (int i = 0; i < 128; i++) { fb[i] = ((int)(i * 5 % 9) - 4) / 8.0; B[i] = __float2half((float)fb[i]); C[i] = (float)(i % 5) - 2; }
    __half *dA, *dB;
    float *dC, *dD;
    cudaMalloc(&dA, 512); cudaMalloc(&dB, 256); cudaMalloc(&dC, 512); cudaMalloc(&dD, 512);
    cudaMemcpy(dA, A.data(), 512, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B.data(), 256, cudaMemcpyHostToDevice);
    cudaMemcpy(dC, C.data(), 512, cudaMemcpyHostToDevice);
    mma_kernel<<<1, 32>>>(dA, dB, dC, dD);
    cudaMemcpy(D.data(), dD, 512, cudaMemcpyDeviceToHost);
    int bm = 0;
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 8; c++) {
            double w = C[r * 8 + c];
            for (int k = 0; k < 16; k++) w += fa[r * 16 + k] * fb[k * 8 + c];
            if (D[r * 8 + c] != (float)w && bm++ < 5) printf("  D[%d][%d]: gpu %g want %g\n", r, c, D[r * 8 + c], w);
        }
    report("mma.sync m16n8k16 f16 fragment layout", bm, 128);

    // (3) ldmatrix x4 and x4.trans
    uint16_t tile[256];
    for (int i = 0; i < 256; i++) tile[i] = (uint16_t)(i + 1);
    uint16_t *dT;
    uint32_t *dO, O[128];
    cudaMalloc(&dT, 512);
    cudaMalloc(&dO, 512);
    cudaMemcpy(dT, tile, 512, cudaMemcpyHostToDevice);
    for (int tr = 0; tr < 2; tr++) {
        ldm_kernel<<<1, 32>>>(dT, dO, tr);
        cudaMemcpy(O, dO, 512, cudaMemcpyDeviceToHost);
        int bl = 0;
        for (int l = 0; l < 32; l++)
            for (int m = 0; m < 4; m++) {
                int r0 = 8 * (m % 2), c0 = 8 * (m / 2);
                int ra = tr ? 2 * (l % 4) : l / 4, ca = tr ? l / 4 : 2 * (l % 4);
                int rb = tr ? ra + 1 : ra, cb = tr ? ca : ca + 1;
                uint32_t w = tile[(r0 + ra) * 16 + c0 + ca] | ((uint32_t)tile[(r0 + rb) * 16 + c0 + cb] << 16);
                if (O[l * 4 + m] != w && bl++ < 5) printf("  lane %d reg %d: gpu 0x%08x want 0x%08x\n", l, m, O[l * 4 + m], w);
            }
        report(tr ? "ldmatrix.x4.trans layout" : "ldmatrix.x4 layout", bl, 128);
    }
    // (4) shuffles: PTX shfl.sync rules (docs/emulator.md), own value when out of range
    int hv[32], hb[32], ho[32], *dv, *db, *dout;
    cudaMalloc(&dv, 128); cudaMalloc(&db, 128); cudaMalloc(&dout, 128);
    int bs = 0, ts = 0;
    for (int mode = 0; mode < 4; mode++)
        for (int w = 2; w <= 32; w *= 2)
            for (int rep = 0; rep < 4; rep++) {
                for (int l = 0; l < 32; l++) {
                    st = st * 1664525u + 1013904223u;
                    hv[l] = (int)st;
                    hb[l] = (int)((st >> 16) % (mode == 0 ? 64 : (unsigned)w + 3));
                }
                cudaMemcpy(dv, hv, 128, cudaMemcpyHostToDevice);
                cudaMemcpy(db, hb, 128, cudaMemcpyHostToDevice);
                shfl_kernel<<<1, 32>>>(dv, db, dout, mode, w);
                cudaMemcpy(ho, dout, 128, cudaMemcpyDeviceToHost);
                for (int l = 0; l < 32; l++) {
                    int seg = 32 - w, bv = hb[l] & 31, minl = l & seg, maxl = mode == 2 ? minl : (minl | (31 & ~seg)), j;
                    bool ok;
                    if (mode == 0) { j = minl | (bv & ~seg); ok = j <= maxl; }
                    else if (mode == 1) { j = l ^ bv; ok = j <= maxl; }
                    else if (mode == 2) { j = l - bv; ok = j >= maxl; }
                    else { j = l + bv; ok = j <= maxl; }
                    int want = hv[ok ? j : l];
                    ts++;
                    if (ho[l] != want && bs++ < 5) printf("  shfl mode %d width %d lane %d b %d: gpu %d want %d\n", mode, w, l, hb[l], ho[l], want);
                }
            }
    report("shfl.sync idx/bfly/up/down with widths", bs, ts);

    // (5) tf32: truncated (8.0) or rounded (8 + 8 ulp) inputs?
    float *dt32, t32[128];
    cudaMalloc(&dt32, 512);
    tf32_kernel<<<1, 32>>>(dt32);
    cudaMemcpy(t32, dt32, 512, cudaMemcpyDeviceToHost);
    int bt = 0;
    for (int i = 0; i < 128; i++) bt += t32[i] != 8.0f;
    printf("  tf32 input 1 + 0.75 ulp: D = %.9g (8 = low 13 bits dropped, 8.0078125 = rounded)\n", t32[0]);
    report("mma.sync tf32 drops the low 13 input bits", bt, 128);

    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("CUDA error: %s\n", cudaGetErrorString(e)); return 2; }
    return failures ? 1 : 0;
}
