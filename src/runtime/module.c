/* rocke — modules and launches: pick the image a device can run (cubin over
 * PTX on CUDA, HSACO on HIP, IR on the emulator), refuse images built for
 * another device, look kernels up, add the kernel's dynamic LDS pool to each
 * launch and check launch geometry before the driver sees it. Layer: runtime. */
#include <stdio.h>

#include "runtime_int.h"
#include "rocke/lower.h"

const char *rk_image_kind_name(rk_image_kind k) {
    switch (k) {
    case RK_IMAGE_NONE: return "none";
    case RK_IMAGE_HSACO: return "hsaco";
    case RK_IMAGE_PTX: return "ptx";
    case RK_IMAGE_CUBIN: return "cubin";
    case RK_IMAGE_IR: return "ir";
    }
    return "?";
}

static rk_device_kind image_device(rk_image_kind k) {
    switch (k) {
    case RK_IMAGE_HSACO: return RK_DEVICE_HIP;
    case RK_IMAGE_PTX:
    case RK_IMAGE_CUBIN: return RK_DEVICE_CUDA;
    case RK_IMAGE_IR:
    case RK_IMAGE_NONE: return RK_DEVICE_EMU;
    }
    return RK_DEVICE_EMU;
}

static const char *device_phrase(rk_device_kind k) {
    switch (k) {
    case RK_DEVICE_CUDA: return "a CUDA device";
    case RK_DEVICE_HIP: return "a HIP device";
    case RK_DEVICE_EMU: return "the emulator";
    }
    return "?";
}

bool rt_target_fits_kind(const char *target, rk_device_kind k) {
    const rk_target *t = NULL;
    for (const rk_target *const *tp = rk_targets(); *tp; tp++)
        if (!strcmp((*tp)->name, target)) t = *tp;
    if (!t || k == RK_DEVICE_EMU) return true;   /* unknown names are left to the driver */
    return (t->vendor == RK_VENDOR_NVIDIA) == (k == RK_DEVICE_CUDA);
}

/* Can a module built for `target` run on device d? */
static rk_status check_target(rk_device *d, const rk_module_image *img) {
    const char *t = img->target;
    if (!t || !*t) return RK_OK;
    if (!rt_target_fits_kind(t, d->info.kind))
        return rk_fail(RK_ERR_INVALID, "the %s image was built for %s, which %s (%s) cannot run; compile for %s",
                       rk_image_kind_name(img->kind), t, device_phrase(d->info.kind), d->name,
                       d->target[0] ? d->target : "this device's target");
    switch (d->info.kind) {
    case RK_DEVICE_EMU:
        if (strcmp(t, d->target) != 0)
            return rk_fail(RK_ERR_INVALID, "the IR was built for %s but this emulator runs %s (open the device "
                           "as 'emu:%s')", t, d->target, t);
        return RK_OK;
    case RK_DEVICE_HIP: {
        /* the base arch must match exactly: gfx942 code does not run on gfx950 */
        size_t n = strcspn(d->arch, ":");
        if (strlen(t) != n || strncmp(t, d->arch, n) != 0)
            return rk_fail(RK_ERR_INVALID, "the code object was built for %s but the device (%s) is %.*s", t,
                           d->name, (int)n, d->arch);
        return RK_OK;
    }
    case RK_DEVICE_CUDA: {
        /* sm_XYa runs only on X.Y; cubins need the same major; PTX JITs forward */
        unsigned v = 0;
        char suffix = 0;
        if (sscanf(t, "sm_%u%c", &v, &suffix) < 1) return RK_OK;
        int maj = (int)v / 10, min = (int)v % 10, cmaj = d->info.cc_major, cmin = d->info.cc_minor;
        bool ok = suffix == 'a' ? (maj == cmaj && min == cmin)
                  : img->kind == RK_IMAGE_CUBIN ? (maj == cmaj && min <= cmin)
                  : (maj < cmaj || (maj == cmaj && min <= cmin));
        if (!ok)
            return rk_fail(RK_ERR_INVALID, "the %s was built for %s but the device (%s) has compute capability "
                           "%d.%d (target %s)", rk_image_kind_name(img->kind), t, d->name, cmaj, cmin, d->target);
        return RK_OK;
    }
    }
    return RK_OK;
}

void rk_module_unload(rk_module *m) {
    if (!m) return;
    for (rk_function *f = m->fns, *next; f; f = next) {
        next = f->next;
        rk_argsig_free(f->sig);
        rk_free(f->name, strlen(f->name) + 1);
        rk_free(f, sizeof *f);
    }
    if (m->handle) m->dev->be->module_unload(m);
    if (m->owned_kernel) rk_kernel_free(m->owned_kernel);
    if (m->target) rk_free(m->target, strlen(m->target) + 1);
    rt_list_del(&m->link);
    rk_free(m, sizeof *m);
}

rk_status rk_module_load_image(rk_device *d, const rk_module_image *img, rk_module **out) {
    if (!d || !img || !out) return rk_fail(RK_ERR_INVALID, "rk_module_load_image: NULL device, image or out");
    *out = NULL;
    if (img->kind == RK_IMAGE_NONE || (img->kind != RK_IMAGE_IR && (!img->data || !img->size)) ||
        (img->kind == RK_IMAGE_IR && !img->kernel && (!img->data || !img->size)))
        return rk_fail(RK_ERR_INVALID, "rk_module_load_image: the %s image is empty", rk_image_kind_name(img->kind));
    rk_device_kind want = image_device(img->kind);
    if (want != d->info.kind)
        return rk_fail(RK_ERR_INVALID, "cannot load the %s image on %s (%s): %s needs %s",
                       rk_image_kind_name(img->kind), device_phrase(d->info.kind), d->name,
                       rk_image_kind_name(img->kind), device_phrase(want));
    rk_status s = check_target(d, img);
    if (s != RK_OK) return s;
    rk_module *m = rk_calloc(1, sizeof *m);
    if (!m) return rk_fail(RK_ERR_NOMEM, "out of memory loading a module");
    rt_list_init(&m->link);
    m->dev = d;
    m->kind = img->kind;
    m->kernel = img->kernel;
    m->dyn_smem_min = img->dyn_smem_min;
    memcpy(m->cluster, img->cluster_dims, sizeof m->cluster);
    if (img->target && !(m->target = rk_strdup(img->target))) {
        rk_free(m, sizeof *m);
        return rk_fail(RK_ERR_NOMEM, "out of memory loading a module");
    }
    rt_list_add(&d->modules, &m->link);
    if (img->kind == RK_IMAGE_IR && !img->kernel) {
        s = rk_parse(img->data, img->size, &m->owned_kernel);
        if (s != RK_OK) {
            rk_module_unload(m);
            return rt_fail_prefix(s, "parsing the module's IR");
        }
        m->kernel = m->owned_kernel;
        if (img->target) {
            /* the IR may name its target too; both must agree with the device */
            const char *kt = rk_attrs_str(rk_kernel_attrs(m->kernel), "target");
            if (kt && strcmp(kt, img->target) != 0) {
                rk_module_unload(m);
                return rk_fail(RK_ERR_INVALID, "the IR says target %s but the image says %s", kt, img->target);
            }
        }
    }
    s = d->be->module_load(m, img);
    if (s != RK_OK) {
        rk_module_unload(m);
        return s;
    }
    *out = m;
    return RK_OK;
}

rk_status rk_module_load(rk_device *d, const rk_artifact *a, rk_module **out) {
    if (!d || !a || !out) return rk_fail(RK_ERR_INVALID, "rk_module_load: NULL device, artifact or out");
    *out = NULL;
    rk_module_image img;
    rk_kernel *parsed = NULL;
    rk_status s = rt_artifact_image(a, d->info.kind, &img, &parsed);
    if (s != RK_OK) return s;
    s = rk_module_load_image(d, &img, out);
    if (s != RK_OK) {
        if (parsed) rk_kernel_free(parsed);
        return s;
    }
    /* a binary module still keeps the IR for argument signatures */
    if (parsed) {
        (*out)->owned_kernel = parsed;
        if (!(*out)->kernel) (*out)->kernel = parsed;
    }
    return RK_OK;
}

/* The dynamic shared memory f's code needs before any the caller asks for.
 * Only CUDA has it: the NVPTX lowering declares an LDS pool over 48 KiB as
 * dynamic shared memory, while HIP and the emulator allocate the pool with
 * the kernel. The image's figure wins when larger; the IR (when the module
 * has it) is laid out again exactly as the lowering did. */
static uint32_t dyn_pool_of(const rk_function *f) {
    const rk_module *m = f->mod;
    uint32_t n = m->dyn_smem_min;
    if (m->dev->info.kind != RK_DEVICE_CUDA) return 0;
    if (!m->kernel || strcmp(rk_kernel_name(m->kernel), f->name) != 0) return n;
    const char *tn = m->target ? m->target : rk_attrs_str(rk_kernel_attrs(m->kernel), "target");
    const rk_target *t = rk_target_find(tn ? tn : m->dev->target);
    uint32_t pool = 0;
    /* best effort: a kernel the lowering refuses was not built by rocke, and
     * the image's own figure stands */
    if (t && rk_lower_dyn_smem_bytes(m->kernel, t, &pool) != RK_OK) pool = 0;
    rk_clear_error();
    return pool > n ? pool : n;
}

/* The image's cluster dims when it gave them, else the IR's (when the
 * module holds this kernel), else none. */
static void cluster_of(rk_function *f) {
    const rk_module *m = f->mod;
    if (m->cluster[0] && m->cluster[1] && m->cluster[2]) {
        memcpy(f->cluster, m->cluster, sizeof f->cluster);
        return;
    }
    f->cluster[0] = f->cluster[1] = f->cluster[2] = 1;
    if (m->kernel && !strcmp(rk_kernel_name(m->kernel), f->name)) rk_kernel_cluster_dims(m->kernel, f->cluster);
}

rk_status rk_module_function(rk_module *m, const char *name, rk_function **out) {
    if (!m || !name || !out) return rk_fail(RK_ERR_INVALID, "rk_module_function: NULL module, name or out");
    *out = NULL;
    for (rk_function *f = m->fns; f; f = f->next)
        if (!strcmp(f->name, name)) {
            *out = f;
            return RK_OK;
        }
    rk_function *f = rk_calloc(1, sizeof *f);
    if (!f || !(f->name = rk_strdup(name))) {
        rk_free(f, sizeof *f);
        return rk_fail(RK_ERR_NOMEM, "out of memory looking up a kernel");
    }
    f->mod = m;
    rk_status s = m->dev->be->function(f);
    /* the signature is known when the module carried IR; a kernel taking
     * vectors or buffer resources has none (rk_launch with raw args works) */
    if (s == RK_OK && m->kernel && !strcmp(rk_kernel_name(m->kernel), name) &&
        rk_argsig_from_kernel(m->kernel, &f->sig) != RK_OK)
        f->sig = NULL;
    if (s == RK_OK) f->dyn_smem_min = dyn_pool_of(f);
    if (s == RK_OK) cluster_of(f);
    if (s == RK_OK && m->kernel && !strcmp(rk_kernel_name(m->kernel), name)) f->cooperative = rk_kernel_cooperative(m->kernel);
    if (s != RK_OK) {
        if (s == RK_ERR_NOT_FOUND && m->kernel)
            rt_fail_prefix(s, "the module holds '%s'", rk_kernel_name(m->kernel));
        rk_argsig_free(f->sig);
        rk_free(f->name, strlen(f->name) + 1);
        rk_free(f, sizeof *f);
        return s;
    }
    f->next = m->fns;
    m->fns = f;
    *out = f;
    return RK_OK;
}

const char *rk_function_name(const rk_function *f) { return f ? f->name : ""; }
uint32_t rk_function_dyn_smem_min(const rk_function *f) { return f ? f->dyn_smem_min : 0; }
rk_device *rk_function_device(const rk_function *f) { return f ? f->mod->dev : NULL; }
void rk_function_cluster_dims(const rk_function *f, uint32_t out[3]) {
    for (int i = 0; i < 3; i++) out[i] = f ? f->cluster[i] : 1;
}

bool rk_function_cooperative(const rk_function *f) { return f && f->cooperative; }

rk_status rk_function_set_cooperative(rk_function *f, bool on) {
    if (!f) return rk_fail(RK_ERR_INVALID, "rk_function_set_cooperative: NULL function");
    f->cooperative = on;
    return RK_OK;
}

rk_status rk_launch(rk_function *f, const uint32_t grid[3], const uint32_t block[3], uint32_t dyn_smem,
                    rk_stream *s, void **args) {
    if (!f || !grid || !block) return rk_fail(RK_ERR_INVALID, "rk_launch: NULL function, grid or block");
    rk_device *d = f->mod->dev;
    if (s && s->dev != d) return rk_fail(RK_ERR_INVALID, "rk_launch '%s': the stream belongs to another device", f->name);
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (!grid[0] || !grid[1] || !grid[2] || !threads)
        return rk_fail(RK_ERR_INVALID, "rk_launch '%s': empty launch (grid %ux%ux%u, block %ux%ux%u)", f->name,
                       grid[0], grid[1], grid[2], block[0], block[1], block[2]);
    uint32_t limit = f->max_threads ? f->max_threads : d->info.max_threads_per_block;
    if (limit && threads > limit)
        return rk_fail(RK_ERR_INVALID, "rk_launch '%s': a block of %llu threads (%ux%ux%u) exceeds the limit of %u "
                       "for this kernel on %s", f->name, (unsigned long long)threads, block[0], block[1], block[2],
                       limit, d->name);
    for (int i = 0; i < 3; i++)
        if (grid[i] % f->cluster[i])
            return rk_fail(RK_ERR_INVALID, "rk_launch '%s': grid.%c = %u is not a multiple of the kernel's cluster_dims "
                           "%c = %u (cluster_dims [%u, %u, %u]: the grid is made of whole clusters)", f->name, "xyz"[i],
                           grid[i], "xyz"[i], f->cluster[i], f->cluster[0], f->cluster[1], f->cluster[2]);
    if (f->cluster[0] * f->cluster[1] * f->cluster[2] > 1 && d->info.kind == RK_DEVICE_HIP)
        return rk_fail(RK_ERR_UNSUPPORTED, "rk_launch '%s': cluster_dims [%u, %u, %u] needs thread-block clusters "
                       "(CUDA sm_90+ or the emulator); %s has none", f->name, f->cluster[0], f->cluster[1],
                       f->cluster[2], d->name);
    if (f->cooperative && d->info.kind == RK_DEVICE_HIP)
        return rk_fail(RK_ERR_UNSUPPORTED, "rk_launch '%s': the kernel is cooperative (its blocks wait for each other); "
                       "cooperative launches run on CUDA and the emulator, not yet on HIP (%s)", f->name, d->name);
    /* the kernel's pool sits at the start of the dynamic window, the caller's bytes after it */
    uint64_t dyn = (uint64_t)f->dyn_smem_min + dyn_smem, smem = dyn + f->static_smem;
    if ((d->info.smem_per_block_optin && smem > d->info.smem_per_block_optin) || dyn > UINT32_MAX) {
        char pool[96] = "";
        if (f->dyn_smem_min)
            snprintf(pool, sizeof pool, ": the kernel's %u-byte LDS pool + %u asked for", f->dyn_smem_min, dyn_smem);
        return rk_fail(RK_ERR_INVALID, "rk_launch '%s': %llu bytes of shared memory (%u static + %llu dynamic%s) "
                       "exceed the %llu bytes a block may use on %s", f->name, (unsigned long long)smem,
                       f->static_smem, (unsigned long long)dyn, pool,
                       (unsigned long long)d->info.smem_per_block_optin, d->name);
    }
    if (f->sig && rk_argsig_count(f->sig) && !args)
        return rk_fail(RK_ERR_INVALID, "rk_launch '%s': the kernel takes %u arguments but args is NULL", f->name,
                       rk_argsig_count(f->sig));
    return d->be->launch(f, grid, block, (uint32_t)dyn, s, args);
}
