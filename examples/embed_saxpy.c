/* rocke example — embeds librocke: builds y[i] = a * x[i] + y[i] with the
 * typed builders, lowers it to LLVM IR for a GPU target, runs it on the CPU
 * emulator and checks every element against host math. Layer: examples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rocke/rocke.h>

static int fail(const char *what) {
    fprintf(stderr, "embed_saxpy: %s: %s\n", what, rk_error_message());
    return 1;
}

/* saxpy(x, y, a, n): one thread per element, guarded by i < n. */
static rk_kernel *build_saxpy(void) {
    rk_kernel *k = rk_kernel_new("saxpy");
    if (!k) return NULL;
    rk_value x = rk_add_param(k, "x", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value y = rk_add_param(k, "y", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value a = rk_add_param(k, "a", RK_T_F32, NULL);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value bid = rk_build_block_id(k, 0);
    rk_value bdim = rk_build_block_dim(k, 0);
    rk_value base = rk_build_mul(k, bid, bdim);
    rk_value i = rk_build_add(k, base, tid);
    rk_value in_range = rk_build_cmp(k, "lt", i, n);
    rk_if_begin(k, in_range);
    rk_value xi = rk_load_global(k, x, i, 1);
    rk_value yi = rk_load_global(k, y, i, 1);
    rk_value r = rk_build_fma(k, a, xi, yi);
    rk_store_global(k, y, i, r);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    if (rk_kernel_finish(k) != RK_OK) {
        fprintf(stderr, "embed_saxpy: build: %s\n", rk_builder_error(k));
        rk_kernel_free(k);
        return NULL;
    }
    return k;
}

int main(int argc, char **argv) {
    const char *target_name = argc > 1 ? argv[1] : "gfx942";
    const rk_target *t = rk_target_find(target_name);
    if (!t) return fail("target");
    rk_kernel *k = build_saxpy();
    if (!k) return 1;

    char *ll = NULL;
    if (rk_lower_llvm(k, t, RK_LLVM22, &ll) != RK_OK) {
        rk_kernel_free(k);
        return fail("lower");
    }
    printf("lowered saxpy for %s: %zu bytes of LLVM IR\n", target_name, strlen(ll));
    rk_string_free(ll);

    enum { N = 1000, BLOCK = 128 };   /* not a multiple of BLOCK: the guard matters */
    float *xs = malloc(N * sizeof *xs), *ys = malloc(N * sizeof *ys), *want = malloc(N * sizeof *want);
    const float alpha = 1.75f;
    srand(12345);
    for (int j = 0; j < N; j++) {
        xs[j] = (float)rand() / (float)RAND_MAX - 0.5f;
        ys[j] = (float)rand() / (float)RAND_MAX - 0.5f;
        want[j] = (float)fma((double)alpha, (double)xs[j], (double)ys[j]);
    }

    int rc = 1;
    rk_emu *emu = rk_emu_new(t, NULL);
    uint64_t dx = 0, dy = 0;
    if (!emu) goto out;
    if (rk_emu_register(emu, xs, N * sizeof *xs, "x", &dx) != RK_OK ||
        rk_emu_register(emu, ys, N * sizeof *ys, "y", &dy) != RK_OK) {
        fail("register");
        goto out;
    }
    int32_t n = N;
    float a = alpha;
    void *args[] = {&dx, &dy, &a, &n};
    const uint32_t grid[3] = {(N + BLOCK - 1) / BLOCK, 1, 1}, block[3] = {BLOCK, 1, 1};
    if (rk_emu_launch(emu, k, grid, block, 0, args) != RK_OK) {
        fail("launch");
        goto out;
    }
    int bad = 0;
    for (int j = 0; j < N; j++) {
        if (ys[j] != want[j]) {
            if (!bad) fprintf(stderr, "embed_saxpy: y[%d] = %a, want %a\n", j, (double)ys[j], (double)want[j]);
            bad++;
        }
    }
    if (bad) {
        fprintf(stderr, "embed_saxpy: %d of %d elements differ\n", bad, N);
    } else {
        printf("saxpy on the %s emulator: %d elements match\n", target_name, N);
        rc = 0;
    }
out:
    if (emu) rk_emu_free(emu);
    rk_kernel_free(k);
    free(xs);
    free(ys);
    free(want);
    return rc;
}
