/* rocke — compiling kernels: LLVM IR text to HSACO (AMD) or PTX/cubin
 * (NVIDIA) through comgr, libLLVM in process or external tools, with a
 * content-addressed cache and per-stage timings. Layer: compile (uses lower). */
#ifndef ROCKE_COMPILE_H
#define ROCKE_COMPILE_H

#include <stdio.h>

#include "rocke/ir.h"
#include "rocke/target.h"
#include "rocke/lower.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which compiler turns LLVM IR into a code object. AUTO tries comgr, then
 * libLLVM in process, then the external tools (NVIDIA: libLLVM, then tools).
 * When none is usable (or NONE), rk_compile serves the kernel from the
 * cache's ship index (docs/compile.md §6b) or fails naming how to warm it. */
typedef enum rk_toolchain {
    RK_TOOLCHAIN_AUTO,
    RK_TOOLCHAIN_COMGR,   /* libamd_comgr (ROCm 6/7), AMD only */
    RK_TOOLCHAIN_LLVM,    /* libLLVM via dlopen (+ ld.lld for AMD) */
    RK_TOOLCHAIN_TOOLS,   /* opt + llc (+ ld.lld) as processes */
    RK_TOOLCHAIN_NONE     /* compile nothing: kernels come from the cache only (a machine without LLVM) */
} rk_toolchain;

const char *rk_toolchain_name(rk_toolchain tc);                 /* "auto", "comgr", ... */
rk_status rk_toolchain_parse(const char *s, rk_toolchain *out); /* message lists the legal names */

/* Stages that can be dumped (--dump=llir,isa,ptx). */
enum {
    RK_DUMP_LLIR = 1u << 0,   /* the LLVM IR text that is compiled */
    RK_DUMP_ISA = 1u << 1,    /* AMDGPU assembly (forces a compile: not cached) */
    RK_DUMP_PTX = 1u << 2     /* PTX text */
};
/* Parse "llir,isa,ptx" into RK_DUMP_* bits; the message lists the legal names. */
rk_status rk_dump_parse(const char *s, uint32_t *out);

#define RK_PATH_MAX 1024

/* Stages --dump-after can name: each writes a file into the dump folder whose
 * name starts with its place in the pipeline (rk_dump_write), so `ls` lists
 * them in order. The IR files are ckdsl.ir v1 (rk_parse reads them back). */
enum {
    RK_AFTER_PARSE = 1u << 0,   /* 00-parse.ir: the kernel as read (written by the caller that parsed) */
    RK_AFTER_VERIFY = 1u << 1,  /* 01-verify.ir: the kernel that verified for the target */
    RK_AFTER_FOLD = 1u << 2,    /* NN-fold.R.ir, NN-cse.R.ir, NN-dce.R.ir: after each pass of round R */
    RK_AFTER_CSE = 1u << 3,     /*   (with run_passes; NN = 2 + 3 (R - 1) + pass) */
    RK_AFTER_DCE = 1u << 4,
    RK_AFTER_LOWER = 1u << 5,   /* 30-lower.ll: the LLVM IR that is compiled */
    RK_AFTER_CODEGEN = 1u << 6, /* 31-isa.s (AMD) or 31-ptx.ptx, and 32-sass.sass when ptxas made a cubin and
                                 * cuobjdump or nvdisasm is found (ROCKE_CUOBJDUMP, PATH, /usr/local/cuda/bin) */
    RK_AFTER_ALL = (1u << 7) - 1
};
/* Parse "verify,fold,lower" or "all" into RK_AFTER_* bits; the message lists
 * the legal names. */
rk_status rk_dump_after_parse(const char *s, uint32_t *out);
/* Write DIR/NN-STAGE.EXT (NN two digits: `order`), whole or not at all. */
rk_status rk_dump_write(const char *dir, uint32_t order, const char *stage, const char *ext, const char *text,
                        size_t n);
/* Where each stage's file goes in the order (rk_dump_write's `order`). */
enum { RK_DUMP_ORDER_PARSE = 0, RK_DUMP_ORDER_VERIFY = 1, RK_DUMP_ORDER_PASSES = 2, RK_DUMP_ORDER_LOWER = 30,
       RK_DUMP_ORDER_CODEGEN = 31, RK_DUMP_ORDER_SASS = 32 };

/* One options struct: filled with defaults (and environment overrides) by
 * rk_compile_options_default, changed by the caller, validated once when a
 * compile starts and read-only after that. */
typedef struct rk_compile_options {
    uint32_t opt_level;          /* 0..3 (default 3): IR optimizer and codegen level */
    rk_toolchain toolchain;      /* default AUTO; env ROCKE_TOOLCHAIN */
    bool flavor_set;             /* false: ROCKE_LLVM_FLAVOR, else from the toolchain found */
    rk_llvm_flavor flavor;
    bool cache;                  /* default true; env ROCKE_CACHE=0 turns it off */
    char cache_dir[RK_PATH_MAX]; /* env ROCKE_CACHE_DIR, else $XDG_CACHE_HOME/rocke or ~/.cache/rocke */
    bool run_passes;             /* fold/CSE/DCE on a copy of the kernel before lowering */
    uint32_t dump;               /* RK_DUMP_* */
    FILE *dump_to;               /* NULL = the diagnostics callback (RK_LOG_DUMP; the CLI: stderr) */
    bool inprocess;              /* libLLVM codegen in this process instead of a worker
                                    process (saves the IPC and the worker's start, but an LLVM
                                    fatal error aborts the caller); env ROCKE_COMPILE_INPROCESS=1 */
    double build_ms;             /* time the caller spent building the kernel (reported only) */
    uint32_t dump_after;         /* RK_AFTER_* stages to write into dump_dir (0 = none) */
    char dump_dir[RK_PATH_MAX];  /* the folder for dump_after's files (created if missing) */
} rk_compile_options;

/* Defaults for target t with the environment applied. Fails (message names
 * the variable and the legal values) when an environment value is malformed. */
rk_status rk_compile_options_default(const rk_target *t, rk_compile_options *o);

typedef enum rk_binary_kind {
    RK_BINARY_HSACO,  /* AMD code object (ELF) */
    RK_BINARY_PTX     /* PTX text (NUL-terminated; size excludes the NUL) */
} rk_binary_kind;

/* Per-stage wall-clock milliseconds (0 = stage did not run). */
typedef struct rk_stage_times {
    double build;     /* kernel construction, when the caller reported it */
    double passes;    /* verify + optional IR passes */
    double lower;     /* rocke IR -> LLVM IR text */
    double compile;   /* LLVM IR -> object / PTX (incl. child-process overhead) */
    double link;      /* object -> HSACO (ld.lld or comgr link), PTX -> cubin (ptxas) */
    double total;     /* all of the above plus cache look-up/store */
    double fork;      /* part of `compile` outside the worker's codegen: IPC (+ the worker's
                         start when this compile started it); 0 in process */
} rk_stage_times;

/* One row of an artifact's stage log: "verify", "fold.1", "lower", "llvm-opt",
 * "codegen", "link", "cache" ... and its wall-clock milliseconds. */
typedef struct rk_stage_entry {
    char name[24];
    double ms;
} rk_stage_entry;
#define RK_STAGES_MAX 40

typedef struct rk_artifact {
    char *kernel_name;
    char *ir_text;            /* ckdsl.ir v1 (NULL for LLVM IR inputs) */
    char *llvm_ir;            /* the LLVM IR text that was compiled */
    rk_binary_kind kind;
    uint8_t *binary;          /* HSACO bytes or PTX text */
    size_t binary_size;
    uint8_t *cubin;           /* NVIDIA, when ptxas was found (else NULL) */
    size_t cubin_size;
    char *isa;                /* AMDGPU assembly when RK_DUMP_ISA was asked (else NULL) */
    const char *target;       /* target name (static) */
    char toolchain[160];      /* "llvm-22.1.8 in-process", "comgr 2.8 (ROCm 7.0.0)", ... */
    rk_llvm_flavor flavor;
    rk_stage_times ms;
    bool cache_hit;
    char cache_key[33];       /* XXH3-128 hex ("" when the cache was off) */
    /* Dynamic shared memory every launch needs (rk_lower_info.dyn_smem_min:
     * an NVIDIA LDS pool over 48 KiB); the runtime adds it. 0 for LLVM IR
     * inputs (rk_compile_llvm_ir), which carry no rocke kernel. */
    uint32_t dyn_smem_min;
    /* Every stage in pipeline order with its time (finer than `ms`: each IR
     * pass of each round, LLVM's optimizer apart from codegen where the
     * toolchain tells them apart; a cache hit is one "cache" row). */
    uint32_t nstages;
    rk_stage_entry stages[RK_STAGES_MAX];
    /* A cache miss for a kernel whose name was compiled before with another
     * key: which parts of the key changed, "IR hash", "target", "options",
     * "compiler version" (comma-separated); "" otherwise (a hit, a new kernel,
     * the cache off). */
    char recompile_note[128];
} rk_artifact;

/* Kernel -> verified (+ optional passes) -> LLVM IR -> code object. `o` may be
 * NULL (defaults for t). */
rk_status rk_compile(const rk_kernel *k, const rk_target *t, const rk_compile_options *o, rk_artifact **out);
/* LLVM IR text (a .ll file) -> code object. kernel_name must be the kernel
 * symbol the IR defines. */
rk_status rk_compile_llvm_ir(const char *ll, const char *kernel_name, const rk_target *t,
                             const rk_compile_options *o, rk_artifact **out);
void rk_artifact_free(rk_artifact *a);
/* Write DIR/NAME.ll and DIR/NAME.hsaco (NVIDIA: NAME.ptx and NAME.cubin when
 * present), each atomically; on failure nothing new is left in DIR. */
rk_status rk_artifact_write(const rk_artifact *a, const char *dir);

/* sizeof(rk_artifact) for "rk_artifact", 0 for other names: for bindings
 * that mirror the struct. */
size_t rk_compile_struct_size(const char *name);

#ifdef __cplusplus
}
#endif
#endif
