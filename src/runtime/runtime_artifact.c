/* rocke — from a compiled artifact to the image a device runs: the cubin (or
 * else the PTX) on CUDA, the HSACO on HIP, the IR text on the emulator. The
 * IR text also gives binary modules their kernel signature. Layer: runtime. */
#include "runtime_int.h"
#include "rocke/compile.h"

static const char *binary_name(const rk_artifact *a) {
    return a->kind == RK_BINARY_HSACO ? "an AMD code object (hsaco)" : "PTX";
}

rk_status rt_artifact_image(const rk_artifact *a, rk_device_kind k, rk_module_image *img, rk_kernel **parsed) {
    *img = (rk_module_image){.target = a->target, .dyn_smem_min = a->dyn_smem_min};
    *parsed = NULL;
    switch (k) {
    case RK_DEVICE_CUDA:
        if (a->cubin && a->cubin_size) {
            img->kind = RK_IMAGE_CUBIN;
            img->data = a->cubin;
            img->size = a->cubin_size;
        } else if (a->kind == RK_BINARY_PTX && a->binary && a->binary_size) {
            img->kind = RK_IMAGE_PTX;
            img->data = a->binary;
            img->size = a->binary_size;
        } else {
            return rk_fail(RK_ERR_INVALID, "artifact '%s' holds %s for %s; a CUDA device needs PTX or a cubin "
                           "(compile for an sm_ target)", a->kernel_name ? a->kernel_name : "?", binary_name(a),
                           a->target ? a->target : "an unknown target");
        }
        break;
    case RK_DEVICE_HIP:
        if (a->kind != RK_BINARY_HSACO || !a->binary || !a->binary_size)
            return rk_fail(RK_ERR_INVALID, "artifact '%s' holds %s for %s; a HIP device needs an AMD code object "
                           "(compile for a gfx target)", a->kernel_name ? a->kernel_name : "?", binary_name(a),
                           a->target ? a->target : "an unknown target");
        img->kind = RK_IMAGE_HSACO;
        img->data = a->binary;
        img->size = a->binary_size;
        break;
    case RK_DEVICE_EMU:
        if (!a->ir_text)
            return rk_fail(RK_ERR_INVALID, "artifact '%s' has no rocke IR text (it was compiled from LLVM IR), "
                           "which the emulator needs", a->kernel_name ? a->kernel_name : "?");
        /* module load parses it */
        img->kind = RK_IMAGE_IR;
        img->data = a->ir_text;
        img->size = strlen(a->ir_text);
        return RK_OK;
    }
    /* the signature of a binary module: best effort, the binary alone still loads */
    if (a->ir_text && rk_parse(a->ir_text, strlen(a->ir_text), parsed) != RK_OK) *parsed = NULL;
    return RK_OK;
}
