/* rocke — the libLLVM function table, resolved with dlsym from a library
 * loaded at run time (the llvm-c headers give only the types). Private to
 * the llvm*.c files. Layer: compile. */
#ifndef ROCKE_LLVM_INT_H
#define ROCKE_LLVM_INT_H

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "compile_int.h"

/* X(name): every libLLVM entry point rocke calls. */
#define CC_LLVM_FNS(X)                                                                              \
    X(LLVMGetVersion) X(LLVMContextCreate) X(LLVMContextDispose)                                   \
    X(LLVMCreateMemoryBufferWithMemoryRangeCopy) X(LLVMParseIRInContext) X(LLVMVerifyModule)       \
    X(LLVMGetTarget) X(LLVMSetTarget) X(LLVMGetDataLayoutStr) X(LLVMSetModuleDataLayout)           \
    X(LLVMGetNamedFunction) X(LLVMCloneModule) X(LLVMDisposeModule) X(LLVMDisposeMessage)          \
    X(LLVMGetTargetFromTriple) X(LLVMCreateTargetMachine) X(LLVMDisposeTargetMachine)              \
    X(LLVMCreateTargetDataLayout) X(LLVMCopyStringRepOfTargetData) X(LLVMDisposeTargetData)        \
    X(LLVMCreatePassBuilderOptions) X(LLVMDisposePassBuilderOptions) X(LLVMRunPasses)              \
    X(LLVMGetErrorMessage) X(LLVMDisposeErrorMessage) X(LLVMTargetMachineEmitToMemoryBuffer)       \
    X(LLVMGetBufferStart) X(LLVMGetBufferSize) X(LLVMDisposeMemoryBuffer)                          \
    X(LLVMContextSetDiagnosticHandler) X(LLVMGetDiagInfoDescription) X(LLVMGetDiagInfoSeverity)

/* The targets rocke initializes: AMDGPU and NVPTX (TargetInfo, Target,
 * TargetMC, AsmPrinter each), plus the AMDGPU assembly parser, which object
 * emission needs for inline asm (NVPTX keeps inline asm as PTX text). */
#define CC_LLVM_INITS(X)                                                                            \
    X(LLVMInitializeAMDGPUTargetInfo) X(LLVMInitializeAMDGPUTarget) X(LLVMInitializeAMDGPUTargetMC) \
    X(LLVMInitializeAMDGPUAsmPrinter) X(LLVMInitializeAMDGPUAsmParser)                              \
    X(LLVMInitializeNVPTXTargetInfo) X(LLVMInitializeNVPTXTarget) X(LLVMInitializeNVPTXTargetMC)    \
    X(LLVMInitializeNVPTXAsmPrinter)

struct cc_llvm {
    char path[RK_PATH_MAX];
    void *handle;
    unsigned major, minor, patch;
#define CC_FIELD(name) __typeof__(&name) name;
    CC_LLVM_FNS(CC_FIELD)
#undef CC_FIELD
};

/* One codegen's outcome, filled in process or decoded from a worker's reply. */
typedef struct cc_result {
    const cc_llvm *L;
    int diag_errors;  /* error diagnostics LLVM reported through our handler */
    rk_status status;
    rk_buf msg;       /* error text */
    cc_blob obj;      /* object or PTX */
    rk_buf isa;       /* AMD assembly when asked */
    bool want_isa;
    double work_ms;   /* time inside codegen (in the worker when not in process) */
    double opt_ms;    /* the part of work_ms in LLVMRunPasses */
} cc_result;

/* llvm_codegen.c */
void cc_result_init(cc_result *r, bool want_isa);
void cc_result_free(cc_result *r);
/* Parse, verify, optimize and emit; never exits the process on an error
 * diagnostic (a fatal error still aborts). */
void cc_codegen(const cc_llvm *L, const cc_job *job, cc_result *r);
/* The reply a worker sends: codegen time, status, message, object, assembly. */
bool cc_reply_encode(const cc_result *r, rk_buf *out);
bool cc_reply_decode(const char *p, size_t n, cc_result *r);

/* llvm_worker.c: long-lived worker processes that run cc_codegen */
void cc_worker_codegen(const cc_llvm *L, const cc_job *job, cc_result *r, double *overhead_ms);

/* llvm_serve.c: the worker process. The environment variable that makes a
 * spawned copy of the program serve (its value: the libLLVM path). */
extern const char cc_worker_env[];
/* send() all of buf without SIGPIPE; false when the peer is gone. */
bool cc_send_full(int fd, const void *buf, size_t n);

#endif
