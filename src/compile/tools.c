/* rocke — the "tools" toolchain (opt + llc as processes) and the two steps
 * the llvm and tools toolchains share: the AMD link (object -> HSACO: the
 * in-process linker, or ld.lld -shared, which has no C API, per
 * ROCKE_LINKER) and ptxas (PTX -> cubin). Tool files go through a private
 * temporary folder that is always removed. Layer: compile. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "compile_int.h"

static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Run a tool that must write `output` (a `kind` file): exiting 0 without
 * it is a failure of its own, not a missing file later (ROCKE_PTXAS=/bin/true). */
static rk_status run_tool(const char *what, const char *const argv[], const char *output, const char *kind) {
    cc_proc p;
    rk_status s = cc_run(argv, &p);
    if (s == RK_OK && (p.exit_code != 0 || p.signal)) s = cc_tool_failed(what, argv, &p);
    else if (s == RK_OK && p.err.len) cc_debug("%s: %.*s", what, (int)p.err.len, p.err.data);
    if (s == RK_OK && access(output, F_OK) != 0) {
        rk_buf cmd;
        rk_buf_init(&cmd);
        cc_cmdline(&cmd, argv);
        s = rk_fail(RK_ERR_TOOLCHAIN, "%s ('%s') exited 0 but produced no %s; is it really %s?\nrerun: %s", what,
                    argv[0], kind, what, rk_buf_cstr(&cmd));
        rk_buf_free(&cmd);
    }
    cc_proc_free(&p);
    return s;
}

/* dir comes from cc_tmpdir, far shorter than RK_PATH_MAX */
static void join(char out[RK_PATH_MAX], const char *dir, const char *name) {
    if (snprintf(out, RK_PATH_MAX, "%s/%s", dir, name) >= RK_PATH_MAX) rk_bug("temporary path too long");
}

rk_status cc_lld_link(const char *lld, const cc_blob *obj, const char *kernel, cc_blob *hsaco) {
    char dir[RK_PATH_MAX], in[RK_PATH_MAX], out[RK_PATH_MAX];
    rk_status s = cc_tmpdir(dir);
    if (s != RK_OK) return s;
    join(in, dir, "kernel.o");
    join(out, dir, "kernel.hsaco");
    s = cc_write_file(in, obj->data, obj->size);
    if (s == RK_OK) {
        const char *argv[] = {lld, "-shared", in, "-o", out, NULL};
        s = run_tool(base_name(lld), argv, out, "code object");
    }
    if (s == RK_OK) s = cc_read_blob(out, hsaco);
    cc_tmpdir_remove(dir);
    if (s == RK_OK) s = cc_check_hsaco(hsaco, kernel);
    if (s != RK_OK) cc_blob_free(hsaco);
    return s;
}

rk_status cc_link_hsaco(const cc_toolchain *tc, const cc_blob *obj, const char *kernel, cc_blob *hsaco,
                        const char **used) {
    *used = "internal linker";
    if (tc->linker != CC_LINK_LLD) {
        rk_status s = cc_amdgpu_link(obj, hsaco);
        if (s == RK_OK) {
            s = cc_check_hsaco(hsaco, kernel);
            if (s != RK_OK) cc_blob_free(hsaco);
            return s;
        }
        if (s != RK_ERR_UNSUPPORTED) return s;
        char why[1024];
        snprintf(why, sizeof why, "%s", rk_error_message());
        if (tc->linker == CC_LINK_INTERNAL)
            return rk_fail(s, "%s; ROCKE_LINKER=internal forbids falling back to ld.lld (use auto or lld)", why);
        if (!tc->lld[0])
            return rk_fail(s, "%s, and no ld.lld was found to fall back on: install lld-22 or set ROCKE_LLD", why);
        cc_debug("%s: falling back to ld.lld", why);
        rk_clear_error();
    }
    *used = base_name(tc->lld);
    return cc_lld_link(tc->lld, obj, kernel, hsaco);
}

rk_status cc_ptxas(const char *ptxas, const cc_blob *ptx, const rk_target *t, const char *kernel, cc_blob *cubin) {
    char dir[RK_PATH_MAX], in[RK_PATH_MAX], out[RK_PATH_MAX], arch[64];
    rk_status s = cc_tmpdir(dir);
    if (s != RK_OK) return s;
    join(in, dir, "kernel.ptx");
    join(out, dir, "kernel.cubin");
    snprintf(arch, sizeof arch, "-arch=%s", t->cpu);
    s = cc_write_file(in, ptx->data, ptx->size);
    if (s == RK_OK) {
        const char *argv[] = {ptxas, arch, in, "-o", out, NULL};
        s = run_tool("ptxas", argv, out, "cubin");
    }
    if (s == RK_OK) s = cc_read_blob(out, cubin);
    cc_tmpdir_remove(dir);
    if (s == RK_OK) s = cc_check_cubin(cubin, kernel);
    if (s != RK_OK) cc_blob_free(cubin);
    return s;
}

rk_status cc_tool_llvm_version(const char *tool, unsigned *maj, unsigned *min, unsigned *patch) {
    const char *argv[] = {tool, "--version", NULL};
    cc_proc p;
    rk_status s = cc_run(argv, &p);
    if (s != RK_OK) return s;
    const char *v = p.out.data ? strstr(p.out.data, "LLVM version ") : NULL;
    if (p.exit_code != 0 || !v || sscanf(v + 13, "%u.%u.%u", maj, min, patch) != 3)
        s = rk_fail(RK_ERR_TOOLCHAIN, "cannot tell the LLVM version of '%s' (no 'LLVM version X.Y.Z' in --version)",
                    tool);
    cc_proc_free(&p);
    return s;
}

/* opt (the IR optimizer with the target's passes) then llc, like the
 * in-process path; -O0 skips opt. */
rk_status cc_tools_compile(cc_toolchain *tc, const cc_job *job, cc_output *out) {
    const rk_target *t = job->t;
    bool amd = t->vendor == RK_VENDOR_AMD;
    char dir[RK_PATH_MAX], in[RK_PATH_MAX], bc[RK_PATH_MAX], obj[RK_PATH_MAX], isa[RK_PATH_MAX];
    char triple[128], cpu[96], attr[160], olevel[8], passes[32];
    rk_status s = cc_tmpdir(dir);
    if (s != RK_OK) return s;
    join(in, dir, "kernel.ll");
    join(bc, dir, "kernel.opt.bc");
    join(obj, dir, amd ? "kernel.o" : "kernel.ptx");
    join(isa, dir, "kernel.s");
    snprintf(triple, sizeof triple, "-mtriple=%s", t->triple);
    snprintf(cpu, sizeof cpu, "-mcpu=%s", t->cpu);
    snprintf(attr, sizeof attr, "-mattr=%s", t->llvm_features);
    snprintf(olevel, sizeof olevel, "-O%u", job->opt_level);
    snprintf(passes, sizeof passes, "-passes=default<O%u>", job->opt_level);
    bool has_attr = t->llvm_features && *t->llvm_features;
    double t0 = cc_now_ms();
    s = cc_write_file(in, job->ll, job->ll_len);
    const char *src = in;
    if (s == RK_OK && job->opt_level > 0) {
        const char *argv[] = {tc->opt, triple, cpu, passes, in, "-o", bc, has_attr ? attr : NULL, NULL};
        double t1 = cc_now_ms();
        s = run_tool(base_name(tc->opt), argv, bc, "bitcode");
        out->opt_ms = cc_now_ms() - t1;
        src = bc;
    }
    if (s == RK_OK) {
        /* -asm-verbose=false: PTX byte-identical to the in-process emitter's */
        const char *argv[] = {tc->llc, olevel, triple, cpu, amd ? "-filetype=obj" : "-filetype=asm",
                              "-asm-verbose=false", src, "-o", obj, has_attr ? attr : NULL, NULL};
        s = run_tool(base_name(tc->llc), argv, obj, amd ? "object file" : "PTX");
    }
    if (s == RK_OK && amd && job->want_isa) {
        const char *argv[] = {tc->llc, olevel, triple, cpu, "-filetype=asm", "-asm-verbose=false", src, "-o", isa,
                              has_attr ? attr : NULL, NULL};
        cc_blob text = {0};
        s = run_tool(base_name(tc->llc), argv, isa, "assembly");
        if (s == RK_OK) s = cc_read_blob(isa, &text);
        if (s == RK_OK) out->isa = (char *)text.data; /* NUL-terminated, freed with strlen+1 */
    }
    cc_blob o = {0};
    if (s == RK_OK) s = cc_read_blob(obj, &o);
    cc_tmpdir_remove(dir);
    out->compile_ms = cc_now_ms() - t0;
    if (s != RK_OK) return s;
    const char *last = amd ? "" : tc->ptxas[0] ? "ptxas" : "";
    t0 = cc_now_ms();
    if (amd) {
        s = cc_link_hsaco(tc, &o, job->kernel, &out->binary, &last);
        cc_blob_free(&o);
    } else {
        out->binary = o;
        s = cc_check_ptx(&out->binary, job->kernel);
        if (s == RK_OK && tc->ptxas[0]) s = cc_ptxas(tc->ptxas, &out->binary, t, job->kernel, &out->cubin);
    }
    out->link_ms = cc_now_ms() - t0;
    snprintf(out->toolchain_id, sizeof out->toolchain_id, "%.40s%s%.40s%s%.40s",
             job->opt_level ? base_name(tc->opt) : "", job->opt_level ? " + " : "", base_name(tc->llc),
             *last ? " + " : "", last);
    return s;
}
