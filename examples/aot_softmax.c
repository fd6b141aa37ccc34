/* rocke example — an application shipping a precompiled kernel: it links
 * aot_softmax.c, written by
 *   rocke aot softmax --dtype f32 --targets sm_90a,gfx942,gfx950 -o DIR --name aot_softmax
 * and needs no LLVM and no compiler at run time. It runs a row softmax on
 * fresh random rows (an odd shape, so the tails are exercised) and checks
 * every element against host math in double. Built with
 * -DAOT_SOFTMAX_WITH_EMULATOR and librocke, it also runs where no GPU is.
 * `aot_softmax --load-only` stops after printing what would run.
 * Layer: examples. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aot_softmax.h"

static int fail(const char *what, int rc) {
    fprintf(stderr, "aot_softmax: %s: %s (code %d)\n", what, aot_softmax_error(), rc);
    return rc;
}

int main(int argc, char **argv) {
    bool load_only = argc > 1 && !strcmp(argv[1], "--load-only");
    const int M = 37, N = 1000;   /* rows, row length: neither a power of two */
    aot_softmax_stream *s = NULL;
    int rc = aot_softmax_load(&s, NULL);
    if (rc) return fail("load", rc);
    printf("aot_softmax: running on %s\n", aot_softmax_device(s));
    if (load_only) {
        aot_softmax_unload(s);
        return 0;
    }
    size_t bytes = (size_t)M * N * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes);
    if (!x || !y) return 1;
    unsigned seed = (unsigned)time(NULL);
    srand(seed);
    for (int i = 0; i < M * N; i++) x[i] = (float)(8.0 * rand() / RAND_MAX - 4.0);
    aot_softmax_devptr dx = 0, dy = 0;
    if ((rc = aot_softmax_alloc(s, bytes, &dx)) || (rc = aot_softmax_alloc(s, bytes, &dy)) ||
        (rc = aot_softmax_copy_in(s, dx, x, bytes)) || (rc = aot_softmax_launch(s, dx, dy, M, N, M, N)) ||
        (rc = aot_softmax_sync(s)) || (rc = aot_softmax_copy_out(s, y, dy, bytes)))
        return fail("run", rc);
    double worst = 0;
    for (int r = 0; r < M; r++) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < N; c++) mx = fmax(mx, x[r * N + c]);
        for (int c = 0; c < N; c++) sum += exp(x[r * N + c] - mx);
        for (int c = 0; c < N; c++) {
            double want = exp(x[r * N + c] - mx) / sum;
            worst = fmax(worst, fabs(y[r * N + c] - want) / want);
        }
    }
    aot_softmax_free(s, dx);
    aot_softmax_free(s, dy);
    aot_softmax_unload(s);
    free(x);
    free(y);
    bool ok = worst < 1e-5;
    printf("aot_softmax: %d x %d, seed %u, max relative error %.3g: %s\n", M, N, seed, worst, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
