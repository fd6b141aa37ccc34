/* rocke aot — what the command (cmd_aot.c) hands the writer of the C files
 * (cmd_aot_emit.c): one kernel built for several targets. Layer: tools. */
#ifndef ROCKE_CMD_AOT_H
#define ROCKE_CMD_AOT_H

#include "rocke/rocke.h"
#include "base/base_int.h"

enum { AOT_MAX_TARGETS = 8 };

typedef struct aot_object {
    const rk_target *t;
    rk_artifact *a;          /* PTX (+ cubin) or HSACO, and the IR text */
    rk_launch_geom geom;     /* family kernels: the launch geometry */
} aot_object;

typedef struct aot_unit {
    char name[64];           /* the C prefix: NAME_launch, NAME.h */
    bool family;             /* geometry from the family; else the caller gives grid and block */
    char what[256];          /* one line for the file headers */
    uint32_t ndims;
    const char *dims[RK_SHAPE_MAX_DIMS];
    rk_argsig *sig;          /* the kernel's parameters (the same on every target) */
    aot_object obj[AOT_MAX_TARGETS];
    uint32_t nobj;
} aot_unit;

/* NAME.h and NAME.c as text (rk_buf; false on out of memory). */
bool aot_emit_header(const aot_unit *u, rk_buf *out);
bool aot_emit_source(const aot_unit *u, rk_buf *out);

#endif
