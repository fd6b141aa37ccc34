/* rocke — launchers: a KernelLauncher loads its module once and packs
 * arguments by name or position for every call (fenced calls wait for the
 * kernel, unless a no-fence scope is open); a PipelineLauncher chains stages
 * on one stream where only the last may fence. The kernelParams launch path
 * copies argument values at enqueue, so nothing has to be kept alive for
 * unfenced launches. Layer: runtime. */
#include "runtime_int.h"
#include "rocke/compile.h"

struct rk_launcher {
    rk_device *dev;
    rk_module *mod;
    rk_function *fn;
    rk_argsig *sig;            /* owned; NULL = unknown */
    rk_argpack pack;           /* reused by every call */
};

struct rk_pipeline {
    rk_launcher **stages;
    uint32_t n;
};

/* ---- no-fence scope ---------------------------------------------------------------- */
static _Thread_local unsigned no_fence_depth;
void rk_no_fence_begin(void) { no_fence_depth++; }
void rk_no_fence_end(void) {
    if (no_fence_depth) no_fence_depth--;
}
bool rk_no_fence_active(void) { return no_fence_depth != 0; }

/* ---- KernelLauncher ---------------------------------------------------------------- */
static rk_status launcher_finish(rk_device *dev, rk_module *mod, const char *name, rk_launcher **out) {
    rk_function *fn = NULL;
    rk_status s = rk_module_function(mod, name, &fn);
    rk_launcher *l = s == RK_OK ? rk_calloc(1, sizeof *l) : NULL;
    if (s == RK_OK && !l) s = rk_fail(RK_ERR_NOMEM, "out of memory creating a launcher");
    if (s == RK_OK && fn->sig && !(l->sig = rt_argsig_copy(fn->sig)))
        s = rk_fail(RK_ERR_NOMEM, "out of memory creating a launcher");
    if (s != RK_OK) {
        rk_free(l, sizeof *l);
        rk_module_unload(mod);
        return s;
    }
    l->dev = dev;
    l->mod = mod;
    l->fn = fn;
    rk_argpack_init(&l->pack);
    *out = l;
    return RK_OK;
}

rk_status rk_launcher_new(rk_device *dev, const rk_artifact *a, rk_launcher **out) {
    if (!dev || !a || !out) return rk_fail(RK_ERR_INVALID, "rk_launcher_new: NULL device, artifact or out");
    *out = NULL;
    if (!a->kernel_name) return rk_fail(RK_ERR_INVALID, "rk_launcher_new: the artifact has no kernel name");
    rk_module *mod = NULL;
    rk_status s = rk_module_load(dev, a, &mod);
    return s != RK_OK ? s : launcher_finish(dev, mod, a->kernel_name, out);
}

rk_status rk_launcher_new_image(rk_device *dev, const rk_module_image *img, const char *name, rk_launcher **out) {
    if (!dev || !img || !out) return rk_fail(RK_ERR_INVALID, "rk_launcher_new_image: NULL device, image or out");
    *out = NULL;
    if (!name && img->kernel) name = rk_kernel_name(img->kernel);
    if (!name) return rk_fail(RK_ERR_INVALID, "rk_launcher_new_image: no kernel name given");
    rk_module *mod = NULL;
    rk_status s = rk_module_load_image(dev, img, &mod);
    return s != RK_OK ? s : launcher_finish(dev, mod, name, out);
}

void rk_launcher_free(rk_launcher *l) {
    if (!l) return;
    rk_argpack_free(&l->pack);
    rk_argsig_free(l->sig);
    rk_module_unload(l->mod);
    rk_free(l, sizeof *l);
}

rk_status rk_launcher_set_signature(rk_launcher *l, const rk_argsig *s) {
    if (!l || !s) return rk_fail(RK_ERR_INVALID, "rk_launcher_set_signature: NULL launcher or signature");
    rk_argsig *c = rt_argsig_copy(s);
    if (!c) return rk_fail(RK_ERR_NOMEM, "out of memory setting a signature");
    rk_argsig_free(l->sig);
    l->sig = c;
    return RK_OK;
}

const rk_argsig *rk_launcher_signature(const rk_launcher *l) { return l ? l->sig : NULL; }
rk_function *rk_launcher_function(rk_launcher *l) { return l ? l->fn : NULL; }

static void geometry(const uint32_t in[3], uint32_t out[3]) {
    for (int i = 0; i < 3; i++) out[i] = in[i] ? in[i] : 1;
}

rk_status rk_launcher_call(rk_launcher *l, const rk_launch_config *cfg, const rk_arg *args, uint32_t n) {
    if (!l || !cfg) return rk_fail(RK_ERR_INVALID, "rk_launcher_call: NULL launcher or config");
    if (!l->sig)
        return rk_fail(RK_ERR_INVALID, "kernel '%s': its argument signature is unknown (the module carried no rocke "
                       "IR); give one with rk_launcher_set_signature", l->fn->name);
    rk_status s = rk_args_pack(l->sig, args, n, &l->pack);
    if (s != RK_OK) return rt_fail_prefix(s, "kernel '%s'", l->fn->name);
    uint32_t g[3], b[3];
    geometry(cfg->grid, g);
    geometry(cfg->block, b);
    s = rk_launch(l->fn, g, b, cfg->dyn_smem, cfg->stream, l->pack.params);
    if (s != RK_OK || !cfg->fence || rk_no_fence_active()) return s;
    s = rk_stream_synchronize(l->dev, cfg->stream);
    return s != RK_OK ? rt_fail_prefix(s, "kernel '%s' (fenced launch)", l->fn->name) : RK_OK;
}

/* ---- PipelineLauncher ------------------------------------------------------------------ */
rk_status rk_pipeline_new(rk_launcher *const *stages, uint32_t n, rk_pipeline **out) {
    if (!out || !stages || !n) return rk_fail(RK_ERR_INVALID, "rk_pipeline_new: no stages");
    *out = NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (!stages[i]) return rk_fail(RK_ERR_INVALID, "rk_pipeline_new: stage %u is NULL", i);
        if (stages[i]->dev != stages[0]->dev)
            return rk_fail(RK_ERR_INVALID, "rk_pipeline_new: stage %u ('%s') runs on another device than stage 0", i,
                           stages[i]->fn->name);
    }
    rk_pipeline *p = rk_calloc(1, sizeof *p);
    if (p) p->stages = rk_malloc(n * sizeof *p->stages);
    if (!p || !p->stages) {
        rk_free(p, sizeof *p);
        return rk_fail(RK_ERR_NOMEM, "out of memory creating a pipeline");
    }
    memcpy(p->stages, stages, n * sizeof *p->stages);
    p->n = n;
    *out = p;
    return RK_OK;
}

void rk_pipeline_free(rk_pipeline *p) {
    if (!p) return;
    rk_free(p->stages, p->n * sizeof *p->stages);
    rk_free(p, sizeof *p);
}

rk_status rk_pipeline_call(rk_pipeline *p, const rk_launch_config *cfgs, const rk_arg *const *args,
                           const uint32_t *nargs, uint32_t nstages, rk_stream *s, uint32_t *launches) {
    if (launches) *launches = 0;
    if (!p || !cfgs || !args || !nargs)
        return rk_fail(RK_ERR_INVALID, "rk_pipeline_call: NULL pipeline, configs or arguments");
    if (nstages != p->n)
        return rk_fail(RK_ERR_INVALID, "the pipeline has %u stages but %u configs and argument lists were given", p->n,
                       nstages);
    for (uint32_t i = 0; i < p->n; i++) {
        /* one stream orders the stages; a fence before the last would only stall */
        rk_launch_config c = cfgs[i];
        c.stream = s;
        c.fence = cfgs[i].fence && i + 1 == p->n;
        rk_status st = rk_launcher_call(p->stages[i], &c, args[i], nargs[i]);
        if (st != RK_OK) return rt_fail_prefix(st, "pipeline stage %u of %u", i + 1, p->n);
        if (launches) (*launches)++;
    }
    return RK_OK;
}
