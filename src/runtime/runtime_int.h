/* rocke — runtime internals: the object structs and the backend table that
 * cuda.c, hip.c and runtime_emu.c fill; device.c, module.c and stream.c check
 * arguments and dispatch through it. Layer: runtime. */
#ifndef ROCKE_RUNTIME_INT_H
#define ROCKE_RUNTIME_INT_H

#include "rocke/runtime.h"
#include "rocke/target.h"
#include "../base/base_int.h"

/* Every object a device hands out sits on one of its intrusive lists so that
 * rk_device_close can free what the caller left open. */
typedef struct rt_link { struct rt_link *prev, *next; } rt_link;

struct rk_device {
    const struct rt_backend *be;
    rk_device_info info;
    char name[256], arch[64], target[32], driver[160];
    char *probe_log;           /* heap, "" when nothing was tried */
    void *impl;                /* backend state */
    rt_link modules, streams, events, graphs;
};

struct rk_function {
    rk_function *next;         /* in the module */
    rk_module *mod;
    void *handle;              /* CUfunction / hipFunction_t / emulator kernel */
    char *name;
    rk_argsig *sig;            /* NULL when the module carried no IR */
    uint32_t max_threads;      /* per block, from the driver (0 = unknown) */
    uint32_t static_smem;      /* bytes */
    uint32_t dyn_smem_set;     /* dynamic shared memory opted into so far */
    uint32_t dyn_smem_min;     /* the kernel's dynamic LDS pool, added to every launch */
    uint32_t cluster[3];       /* blocks per cluster (1, 1, 1: none) */
    bool cooperative;          /* every block resident at once (the IR's attribute, or set) */
};

struct rk_module {
    rt_link link;              /* first: the device's list */
    rk_device *dev;
    void *handle;              /* CUmodule / hipModule_t / emulator state */
    rk_image_kind kind;
    char *target;              /* heap copy or NULL */
    const rk_kernel *kernel;   /* the IR when known (signature, emulator) */
    rk_kernel *owned_kernel;   /* parsed here, freed with the module */
    rk_function *fns;
    uint32_t dyn_smem_min;     /* from the image (0 = compute from the IR on CUDA) */
    uint32_t cluster[3];       /* from the image (0, 0, 0 = from the IR, else none) */
};

struct rk_stream {
    rt_link link;
    rk_device *dev;
    void *handle;
    bool capturing;
    void *capture;             /* backend capture state (emulator) */
};

struct rk_event {
    rt_link link;
    rk_device *dev;
    void *handle;
    double host_ms;            /* emulator: host clock at record */
    bool recorded;
};

struct rk_graph {
    rt_link link;
    rk_device *dev;
    void *graph, *exec;
};

/* A 2-D tiled tensor map, checked by tensormap.c before a backend sees it. */
typedef struct rt_tmap2d {
    rk_devptr base;
    rk_scalar elem;
    uint32_t elem_bytes;
    uint64_t rows, cols, row_stride;   /* elements, elements, bytes */
    uint32_t box_rows, box_cols;
    rk_tensormap_swizzle swizzle;
    /* rk_tensormap_encode_nd: rank 1..5 and the arrays (innermost first; stride[0] unused), the 2-D
     * fields above unused; 0 for rk_tensormap_encode_2d */
    uint32_t rank;
    uint64_t dim[5], stride[5];
    uint32_t box[5], estr[5];
} rt_tmap2d;

/* One device backend. Arguments arrive checked (non-NULL, same device). */
typedef struct rt_backend {
    rk_device_kind kind;
    void (*close)(rk_device *d);
    rk_status (*synchronize)(rk_device *d);
    rk_status (*mem_alloc)(rk_device *d, size_t n, rk_devptr *out);
    rk_status (*mem_free)(rk_device *d, rk_devptr p);
    rk_status (*htod)(rk_device *d, rk_devptr dst, const void *src, size_t n);
    rk_status (*dtoh)(rk_device *d, void *dst, rk_devptr src, size_t n);
    rk_status (*dtod)(rk_device *d, rk_devptr dst, rk_devptr src, size_t n, rk_stream *s);
    rk_status (*memset)(rk_device *d, rk_devptr dst, uint8_t byte, size_t n, rk_stream *s);
    rk_status (*mem_name)(rk_device *d, rk_devptr p, const char *name);   /* may be NULL */
    /* img->kind already matches the device; sets m->handle */
    rk_status (*module_load)(rk_module *m, const rk_module_image *img);
    void (*module_unload)(rk_module *m);
    /* fills f->handle, max_threads, static_smem from f->mod and f->name */
    rk_status (*function)(rk_function *f);
    rk_status (*launch)(rk_function *f, const uint32_t grid[3], const uint32_t block[3], uint32_t dyn_smem,
                        rk_stream *s, void **args);
    rk_status (*stream_create)(rk_stream *s);
    void (*stream_destroy)(rk_stream *s);
    rk_status (*stream_sync)(rk_device *d, rk_stream *s);
    rk_status (*event_create)(rk_event *e);
    void (*event_destroy)(rk_event *e);
    rk_status (*event_record)(rk_event *e, rk_stream *s);
    rk_status (*event_sync)(rk_event *e);
    rk_status (*event_query)(rk_event *e, bool *done);
    rk_status (*event_elapsed)(rk_event *a, rk_event *b, double *ms);
    rk_status (*capture_begin)(rk_stream *s);
    rk_status (*capture_end)(rk_stream *s, rk_graph *g);   /* fills g->graph, g->exec */
    rk_status (*graph_launch)(rk_graph *g, rk_stream *s);
    void (*graph_destroy)(rk_graph *g);
    /* Encode t into out[128]; NULL where tensor maps do not exist. */
    rk_status (*tensormap_encode)(rk_device *d, const rt_tmap2d *t, void *out);
} rt_backend;

/* ---- backends: open device `index`. On failure the message says what was
 * tried and why (one line, no "rocke:" prefix); d is left for the caller. --- */
rk_status rt_cuda_open(rk_device *d, int index);
rk_status rt_hip_open(rk_device *d, int index);
rk_status rt_emu_open(rk_device *d, const rk_target *t, const rk_emu_options *opt);   /* opt NULL = defaults */
/* The library the backend tries first, for the auto notice ("libcuda.so.1"). */
const char *rt_cuda_lib_name(void);
const char *rt_hip_lib_name(void);

/* ---- runtime_util.c --------------------------------------------------------------- */
void rt_list_init(rt_link *l);
void rt_list_add(rt_link *l, rt_link *n);
void rt_list_del(rt_link *n);
/* Prefix the current error message: "<prefix>: <message>". Returns s. */
rk_status rt_fail_prefix(rk_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Milliseconds on a monotonic host clock. */
double rt_host_ms(void);
/* Strip "<lib>: " from a dlerror() text when it repeats the library name. */
const char *rt_dlerror_reason(const char *lib, const char *err);

/* ---- device.c ------------------------------------------------------------------- */
/* Point the info strings at the device's buffers. */
void rt_device_finish_info(rk_device *d);

/* ---- module.c ---------------------------------------------------------------- */
/* The rocke target's vendor matching a device kind (emu accepts any). */
bool rt_target_fits_kind(const char *target, rk_device_kind k);

/* ---- runtime_artifact.c ----------------------------------------------------------- */
/* The image of artifact a that a device of kind k runs, pointing into a. When
 * the artifact carries IR text it is parsed into *parsed (the caller owns it)
 * so that binary modules still know their kernel's signature. */
rk_status rt_artifact_image(const rk_artifact *a, rk_device_kind k, rk_module_image *img, rk_kernel **parsed);

/* ---- args.c --------------------------------------------------------------------- */
rk_argsig *rt_argsig_copy(const rk_argsig *s);

#endif
