/* rocke — LLVM IR text to an object (AMD) or PTX (NVIDIA) through the
 * libLLVM C API: parse, verify, check triple and datalayout, default<On>
 * with the target machine (the AMDGPU attributor drops unused hidden
 * arguments), emit; and the reply format that carries the outcome out of a
 * worker process (llvm_worker.c). Layer: compile. */
#include <stdio.h>

#include "llvm_int.h"

typedef cc_result result;

static rk_status take_message(result *r, rk_status s, const char *what, char *m) {
    r->status = s;
    rk_buf_printf(&r->msg, "%s%s%s%s", r->msg.len ? "\n" : "", what, m ? ": " : "", m ? m : "");
    return s;
}

static bool copy_buffer(const cc_llvm *L, LLVMMemoryBufferRef mb, cc_blob *dst) {
    size_t n = L->LLVMGetBufferSize(mb);
    dst->data = rk_malloc(n + 1);
    if (!dst->data) return false;
    memcpy(dst->data, L->LLVMGetBufferStart(mb), n);
    dst->data[n] = 0;
    dst->size = n;
    return true;
}

static LLVMCodeGenOptLevel cg_level(uint32_t o) {
    return o == 0 ? LLVMCodeGenLevelNone : o == 1 ? LLVMCodeGenLevelLess
                                         : o == 2 ? LLVMCodeGenLevelDefault : LLVMCodeGenLevelAggressive;
}

/* Datalayout strings equal up to the symbol-mangling component ("m:e"),
 * which only names how symbols are spelled, not how data is laid out. */
static bool same_layout(const char *a, const char *b) {
    for (;;) {
        if (!strncmp(a, "m:", 2)) a += strcspn(a, "-") + (a[strcspn(a, "-")] == '-');
        if (!strncmp(b, "m:", 2)) b += strcspn(b, "-") + (b[strcspn(b, "-")] == '-');
        size_t na = strcspn(a, "-"), nb = strcspn(b, "-");
        if (na != nb || strncmp(a, b, na)) return false;
        a += na;
        b += nb;
        if (!*a || !*b) return !*a && !*b;
        a++;
        b++;
    }
}

/* Check the module against the target machine: triple and datalayout. A
 * datalayout from another LLVM generation (the flavor: e.g. the p8
 * buffer-pointer field) is refused here instead of miscompiling; otherwise
 * the module takes the target machine's layout, as llc does. */
static rk_status check_module(const cc_llvm *L, LLVMModuleRef m, LLVMTargetMachineRef tm, const cc_job *job,
                              result *r) {
    const char *triple = L->LLVMGetTarget(m);
    if (!triple || !*triple) L->LLVMSetTarget(m, job->t->triple);
    else if (strcmp(triple, job->t->triple)) {
        rk_buf_printf(&r->msg, "the LLVM IR targets '%s' but %s needs '%s'", triple, job->t->name, job->t->triple);
        return r->status = RK_ERR_INVALID;
    }
    LLVMTargetDataRef td = L->LLVMCreateTargetDataLayout(tm);
    char *want = L->LLVMCopyStringRepOfTargetData(td);
    const char *have = L->LLVMGetDataLayoutStr(m);
    rk_status s = RK_OK;
    if (have && *have && !same_layout(have, want)) {
        rk_buf_printf(&r->msg,
                      "the LLVM IR datalayout does not match LLVM %u.%u's for %s (wrong LLVM flavor?)\n"
                      "  IR:   %s\n  LLVM: %s", L->major, L->minor, job->t->cpu, have, want);
        s = r->status = RK_ERR_TOOLCHAIN;
    } else {
        L->LLVMSetModuleDataLayout(m, td);
    }
    L->LLVMDisposeMessage(want);
    L->LLVMDisposeTargetData(td);
    if (s == RK_OK && !L->LLVMGetNamedFunction(m, job->kernel)) {
        rk_buf_printf(&r->msg, "the LLVM IR does not define the kernel '%s'", job->kernel);
        s = r->status = RK_ERR_INVALID;
    }
    return s;
}

static rk_status emit(const cc_llvm *L, LLVMTargetMachineRef tm, LLVMModuleRef m, LLVMCodeGenFileType ft,
                      cc_blob *dst, result *r) {
    char *err = NULL;
    LLVMMemoryBufferRef mb = NULL;
    if (L->LLVMTargetMachineEmitToMemoryBuffer(tm, m, ft, &err, &mb)) {
        take_message(r, RK_ERR_TOOLCHAIN, "LLVM code generation failed", err);
        if (err) L->LLVMDisposeMessage(err);
        return r->status;
    }
    bool ok = copy_buffer(L, mb, dst);
    L->LLVMDisposeMemoryBuffer(mb);
    if (!ok) return take_message(r, RK_ERR_NOMEM, "out of memory copying the LLVM output", NULL);
    return RK_OK;
}

/* LLVM's default handler exit()s on an error diagnostic ("illegal VGPR to
 * SGPR copy"); ours records it and lets the compile end with an error. */
static void on_diagnostic(LLVMDiagnosticInfoRef di, void *ud) {
    result *r = ud;
    LLVMDiagnosticSeverity sev = r->L->LLVMGetDiagInfoSeverity(di);
    if (sev != LLVMDSError && !cc_debug_on()) return;
    char *d = r->L->LLVMGetDiagInfoDescription(di);
    if (sev == LLVMDSError) {
        rk_buf_printf(&r->msg, "%s%s", r->diag_errors++ ? "\n" : "LLVM reported an error: ", d ? d : "?");
    } else {
        cc_debug("LLVM: %s", d ? d : "?");
    }
    if (d) r->L->LLVMDisposeMessage(d);
}

/* The whole compile against libLLVM; every handle is disposed on all paths. */
void cc_codegen(const cc_llvm *L, const cc_job *job, result *r) {
    char *msg = NULL;
    LLVMContextRef ctx = L->LLVMContextCreate();
    r->L = L;
    L->LLVMContextSetDiagnosticHandler(ctx, on_diagnostic, r);
    LLVMModuleRef m = NULL;
    LLVMTargetMachineRef tm = NULL;
    LLVMMemoryBufferRef mb = L->LLVMCreateMemoryBufferWithMemoryRangeCopy(job->ll, job->ll_len, "kernel.ll");
    if (L->LLVMParseIRInContext(ctx, mb, &m, &msg)) { /* consumes mb */
        take_message(r, RK_ERR_PARSE, "LLVM rejected the IR", msg);
        goto out;
    }
    if (msg) { L->LLVMDisposeMessage(msg); msg = NULL; }
    if (L->LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
        take_message(r, RK_ERR_INVALID, "the LLVM IR is not valid", msg);
        goto out;
    }
    if (msg) { L->LLVMDisposeMessage(msg); msg = NULL; }
    LLVMTargetRef target;
    if (L->LLVMGetTargetFromTriple(job->t->triple, &target, &msg)) {
        take_message(r, RK_ERR_TOOLCHAIN, "libLLVM has no target for the triple", msg);
        goto out;
    }
    if (msg) { L->LLVMDisposeMessage(msg); msg = NULL; }
    tm = L->LLVMCreateTargetMachine(target, job->t->triple, job->t->cpu, job->t->llvm_features,
                                    cg_level(job->opt_level), LLVMRelocDefault, LLVMCodeModelDefault);
    if (!tm) {
        take_message(r, RK_ERR_TOOLCHAIN, "libLLVM could not create a target machine", NULL);
        goto out;
    }
    if (check_module(L, m, tm, job, r) != RK_OK) goto out;
    if (job->opt_level > 0) {
        char pipeline[32];
        snprintf(pipeline, sizeof pipeline, "default<O%u>", job->opt_level);
        LLVMPassBuilderOptionsRef pbo = L->LLVMCreatePassBuilderOptions();
        double t0 = cc_now_ms();
        LLVMErrorRef e = L->LLVMRunPasses(m, pipeline, tm, pbo);
        r->opt_ms = cc_now_ms() - t0;
        L->LLVMDisposePassBuilderOptions(pbo);
        if (e) {
            char *em = L->LLVMGetErrorMessage(e);
            take_message(r, RK_ERR_TOOLCHAIN, "the LLVM optimizer failed", em);
            L->LLVMDisposeErrorMessage(em);
            goto out;
        }
    }
    bool amd = job->t->vendor == RK_VENDOR_AMD;
    if (amd && r->want_isa) {
        LLVMModuleRef clone = L->LLVMCloneModule(m); /* codegen changes the module it runs on */
        cc_blob text = {0};
        rk_status s = emit(L, tm, clone, LLVMAssemblyFile, &text, r);
        L->LLVMDisposeModule(clone);
        if (s != RK_OK) goto out;
        rk_buf_putn(&r->isa, (const char *)text.data, text.size);
        cc_blob_free(&text);
    }
    if (emit(L, tm, m, amd ? LLVMObjectFile : LLVMAssemblyFile, &r->obj, r) != RK_OK) goto out;
    r->status = r->diag_errors ? RK_ERR_TOOLCHAIN : RK_OK;
out:
    if (msg) L->LLVMDisposeMessage(msg);
    if (tm) L->LLVMDisposeTargetMachine(tm);
    if (m) L->LLVMDisposeModule(m);
    L->LLVMContextDispose(ctx);
}

/* ---- the reply: codegen ms (double), then status, message, object and
 * assembly, each length-prefixed (u64, host order: same machine) ---------- */
static void put_u64(rk_buf *b, uint64_t v) { rk_buf_putn(b, (const char *)&v, sizeof v); }

void cc_result_init(result *r, bool want_isa) {
    memset(r, 0, sizeof *r);
    r->status = RK_ERR_TOOLCHAIN;
    rk_buf_init(&r->msg);
    rk_buf_init(&r->isa);
    r->want_isa = want_isa;
}

void cc_result_free(result *r) {
    rk_buf_free(&r->msg);
    rk_buf_free(&r->isa);
    cc_blob_free(&r->obj);
}

bool cc_reply_encode(const result *r, rk_buf *b) {
    rk_buf_putn(b, (const char *)&r->work_ms, sizeof r->work_ms);
    rk_buf_putn(b, (const char *)&r->opt_ms, sizeof r->opt_ms);
    put_u64(b, (uint64_t)r->status);
    put_u64(b, r->msg.len);
    rk_buf_putn(b, r->msg.data ? r->msg.data : "", r->msg.len);
    put_u64(b, r->obj.size);
    rk_buf_putn(b, r->obj.data ? (const char *)r->obj.data : "", r->obj.size);
    put_u64(b, r->isa.len);
    rk_buf_putn(b, r->isa.data ? r->isa.data : "", r->isa.len);
    return !b->oom;
}

static bool get_u64(const char **p, const char *end, uint64_t *v) {
    if ((size_t)(end - *p) < sizeof *v) return false;
    memcpy(v, *p, sizeof *v);
    *p += sizeof *v;
    return true;
}

bool cc_reply_decode(const char *p, size_t len, result *r) {
    const char *end = p + len;
    uint64_t st, n;
    if (!p || len < sizeof r->work_ms + sizeof r->opt_ms) return false;
    memcpy(&r->work_ms, p, sizeof r->work_ms);
    p += sizeof r->work_ms;
    memcpy(&r->opt_ms, p, sizeof r->opt_ms);
    p += sizeof r->opt_ms;
    if (!get_u64(&p, end, &st) || !get_u64(&p, end, &n) || n > (uint64_t)(end - p)) return false;
    r->status = (rk_status)st;
    rk_buf_putn(&r->msg, p, (size_t)n);
    p += n;
    if (!get_u64(&p, end, &n) || n > (uint64_t)(end - p)) return false;
    if (!(r->obj.data = rk_malloc((size_t)n + 1))) return false;
    memcpy(r->obj.data, p, (size_t)n);
    r->obj.data[n] = 0;
    r->obj.size = (size_t)n;
    p += n;
    if (!get_u64(&p, end, &n) || n > (uint64_t)(end - p)) return false;
    rk_buf_putn(&r->isa, p, (size_t)n);
    return true;
}

rk_status cc_llvm_codegen(const cc_llvm *L, const cc_job *job, cc_blob *obj, char **isa, double *fork_ms,
                          double *opt_ms) {
    result r;
    cc_result_init(&r, isa != NULL);
    *fork_ms = 0;
    if (job->inprocess) cc_codegen(L, job, &r);
    else cc_worker_codegen(L, job, &r, fork_ms);
    rk_status s = r.status;
    *opt_ms = r.opt_ms;
    if (s != RK_OK) {
        rk_fail(s, "%s", r.msg.len ? rk_buf_cstr(&r.msg) : "LLVM failed");
    } else {
        *obj = r.obj;
        r.obj.data = NULL;
        r.obj.size = 0;
        if (isa) *isa = rk_buf_take(&r.isa);
    }
    cc_result_free(&r);
    return s;
}
