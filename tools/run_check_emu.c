/* rocke run --check-emu — the problem's inputs once more on the emulator,
 * every output compared with the device's element by element (bit for bit or
 * within rk_emu_tolerance_of's bound). Layer: tools. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "run_side.h"

static int fail(const char *what) {
    fprintf(stderr, "rocke run: --check-emu: %s: %s\n", what, rk_error_message());
    return 1;
}

int run_check_emu(const rk_problem *p, const rk_kernel *k, const char *target, const rk_emu_options *eo,
                  const uint32_t grid[3], const uint32_t block[3], void *const *init, void *const *dev_out) {
    rk_emu_tolerance tol;
    if (rk_emu_tolerance_of(k, rk_problem_dim(p, "K"), &tol)) return fail("the tolerance");
    run_side s = {0};
    rk_device_opts o = {.which = "emu", .emu_target = target, .quiet = true, .emu_options = eo};
    int rc = 1;
    uint8_t *emu_out = NULL;
    if (rk_device_open_opts(&o, &s.dev)) { rc = fail("opening the emulator"); goto out; }
    rk_module_image img = {.kind = RK_IMAGE_IR, .kernel = k, .target = target};
    if (rk_module_load_image(s.dev, &img, &s.mod) || rk_module_function(s.mod, rk_kernel_name(k), &s.fn)) {
        rc = fail("loading the IR");
        goto out;
    }
    if (!run_side_upload(&s, p, init)) { rc = fail("the inputs"); goto out; }
    if (rk_launch(s.fn, grid, block, 0, NULL, s.args) || rk_device_synchronize(s.dev)) {
        rc = fail("the emulator's run");
        goto out;
    }
    if (tol.exact) printf("check-emu: bit-exact expected (%s)\n", tol.why);
    else
        printf("check-emu: within %u ulps of f32 at each tensor's largest value expected (%s)\n",
               tol.approx_ulps + tol.order_ulps, tol.why);
    uint64_t bad_total = 0;
    for (uint32_t i = 0; i < p->sig.n; i++) {
        const rk_kparam *kp = &p->sig.p[i];
        if (!run_side_is_output(kp)) continue;
        const rk_host_buf *b = &p->buf[i];
        free(emu_out);
        if (!(emu_out = malloc(b->bytes ? b->bytes : 1))) {
            fprintf(stderr, "rocke run: --check-emu: out of memory\n");
            goto out;
        }
        if (rk_mem_copy_dtoh(s.dev, emu_out, s.dptr[i], b->bytes)) { rc = fail("reading the emulator's output"); goto out; }
        rk_emu_diff d;
        if (rk_emu_compare(&tol, kp->type, dev_out[i], emu_out, b->count, &d)) { rc = fail(kp->name); goto out; }
        if (!d.count) {
            printf("check-emu %s: %" PRIu64 " elements agree (max |diff| %.6g)\n", kp->name, d.total, d.max_abs_diff);
            continue;
        }
        char where[160];
        run_side_element_name(p, i, d.first, where, sizeof where);
        char bound[48];
        if (d.bound > 0) snprintf(bound, sizeof bound, "allowed %.3g", d.bound);
        else snprintf(bound, sizeof bound, "bit-exact expected");
        printf("check-emu %s: first difference at %s: device %.9g, emulator %.9g (%s); %" PRIu64 " of %" PRIu64
               " elements differ\n", kp->name, where, d.got, d.want, bound, d.count, d.total);
        bad_total += d.count;
    }
    printf("check-emu: %s\n", bad_total ? "FAIL: the device and the emulator disagree" : "PASS");
    rc = bad_total ? 1 : 0;
out:
    free(emu_out);
    run_side_free(&s);
    return rc;
}
