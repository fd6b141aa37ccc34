/* rocke — the compile pipeline: options -> verify (+ passes) -> lower ->
 * toolchain -> cache -> artifact, each stage timed. Stages for AMD:
 * ir -> llir -> object -> hsaco; NVIDIA: ir -> llir -> ptx -> cubin.
 * Layer: compile. */
#include <stdio.h>

#include "compile_int.h"

static char *dup_str(const char *s) {
    char *d = rk_strdup(s);
    if (!d) rk_fail(RK_ERR_NOMEM, "out of memory");
    return d;
}

/* To o->dump_to, else through the diagnostics callback (RK_LOG_DUMP). */
static void dump(const rk_compile_options *o, const char *stage, const rk_artifact *a, const char *text,
                 size_t n) {
    rk_buf b;
    rk_buf_init(&b);
    rk_buf_printf(&b, "; ---- rocke dump: %s (%s, %s) ----\n", stage, a->kernel_name, a->target);
    rk_buf_putn(&b, text, n);
    if (n && text[n - 1] != '\n') rk_buf_putc(&b, '\n');
    rk_buf_printf(&b, "; ---- end %s ----\n", stage);
    if (b.oom) rk_log(RK_LOG_WARNING, "out of memory formatting the %s dump of %s", stage, a->kernel_name);
    else if (o->dump_to) fwrite(b.data, 1, b.len, o->dump_to);
    else rk_log_text(RK_LOG_DUMP, b.data);
    rk_buf_free(&b);
}

/* The flavor: explicit (or ROCKE_LLVM_FLAVOR through the options), else the
 * toolchain's LLVM; an explicit one must match the toolchain, since text for
 * another LLVM is refused (or worse, misread) by it. */
static rk_status pick_flavor(const rk_compile_options *o, cc_toolchain *tc, rk_llvm_flavor *out) {
    rk_status s = cc_toolchain_version(tc);
    if (s != RK_OK && !o->flavor_set) return s;
    if (s != RK_OK) {
        rk_clear_error();
        *out = o->flavor;
        return RK_OK;
    }
    rk_llvm_flavor have = cc_flavor_for_major(tc->major);
    if (o->flavor_set && o->flavor != have)
        return rk_fail(RK_ERR_TOOLCHAIN,
                       "LLVM flavor %s was asked for, but the %s toolchain is LLVM %u (flavor %s); "
                       "drop --flavor / ROCKE_LLVM_FLAVOR or pick a matching toolchain",
                       rk_llvm_flavor_name(o->flavor), rk_toolchain_name(tc->kind), tc->major,
                       rk_llvm_flavor_name(have));
    *out = have;
    return RK_OK;
}

static rk_status run_toolchain(cc_toolchain *tc, const cc_job *job, cc_output *out) {
    switch (tc->kind) {
    case RK_TOOLCHAIN_COMGR: return cc_comgr_compile(tc, job, out);
    case RK_TOOLCHAIN_LLVM: return cc_llvm_compile(tc, job, out);
    case RK_TOOLCHAIN_TOOLS: return cc_tools_compile(tc, job, out);
    case RK_TOOLCHAIN_AUTO:
    case RK_TOOLCHAIN_NONE: break;
    }
    rk_bug("unresolved toolchain");
}

/* The compiler's (or the cache's) output becomes the artifact's. */
static void take_output(rk_artifact *a, cc_output *out, bool amd) {
    a->binary = out->binary.data;
    a->binary_size = out->binary.size;
    a->cubin = out->cubin.data;
    a->cubin_size = out->cubin.size;
    a->isa = out->isa;
    snprintf(a->toolchain, sizeof a->toolchain, "%s", out->toolchain_id);
    a->ms.compile = out->compile_ms;
    a->ms.link = out->link_ms;
    a->ms.fork = out->fork_ms;
    a->kind = amd ? RK_BINARY_HSACO : RK_BINARY_PTX;
}

/* No compiler found (none installed, or toolchain none): the kernel comes
 * from the cache's ship index or not at all. k is the kernel to lower (each
 * flavor in turn, the explicit one only when set), or NULL when a->llvm_ir
 * is the input. The message names the kernel, the target, the cache and how
 * to warm it, then why nothing can compile here. */
static rk_status from_ship_index(rk_artifact *a, const rk_kernel *k, const rk_target *t,
                                 const rk_compile_options *o, double t_start) {
    char why[1024];
    snprintf(why, sizeof why, "%s", rk_error_message());
    rk_clear_error();
    if (!o->cache || !o->cache_dir[0])
        return rk_fail(RK_ERR_TOOLCHAIN, "%s (the cache is off, so no compiled kernel can be served either)", why);
    rk_llvm_flavor flavors[] = {RK_LLVM22, RK_LLVM23, RK_LLVM20};
    unsigned nf = k ? RK_COUNTOF(flavors) : 1;
    if (o->flavor_set) {
        flavors[0] = o->flavor;
        nf = 1;
    }
    for (unsigned i = 0; i < nf; i++) {
        if (k) {
            double t1 = cc_now_ms();
            char *ll = NULL;
            rk_lower_info info;
            rk_status s = rk_lower_llvm_ex(k, t, flavors[i], &ll, &info);
            if (s != RK_OK) return s;
            rk_free(a->llvm_ir, a->llvm_ir ? strlen(a->llvm_ir) + 1 : 0);
            a->llvm_ir = rk_strdup(ll);
            rk_string_free(ll);
            if (!a->llvm_ir) return rk_fail(RK_ERR_NOMEM, "out of memory");
            a->dyn_smem_min = info.dyn_smem_min;
            a->ms.lower = cc_now_ms() - t1;
            cc_stage(a, "lower", a->ms.lower);
        }
        a->flavor = o->flavor_set ? o->flavor : flavors[i];
        double t1 = cc_now_ms();
        cc_key ship = cc_ship_key(a->llvm_ir, strlen(a->llvm_ir), a->kernel_name, t, o), entry;
        cc_output out;
        memset(&out, 0, sizeof out);
        if (cc_ship_get(o->cache_dir, &ship, &entry, &out)) {
            if (cc_check_output(&out, t, a->kernel_name) == RK_OK) {
                take_output(a, &out, t->vendor == RK_VENDOR_AMD);
                cc_key_hex(&entry, a->cache_key);
                a->cache_hit = true;
                cc_stage(a, "cache (ship index)", cc_now_ms() - t1);
                a->ms.total = cc_now_ms() - t_start + a->ms.build;
                return RK_OK;
            }
            cc_debug("cache: the shipped entry for '%s' fails its checks: %s", a->kernel_name, rk_error_message());
            rk_clear_error();
            cc_output_free(&out);
        }
    }
    return rk_fail(RK_ERR_TOOLCHAIN, "kernel '%s' for %s is not in the cache %s and this machine cannot compile it: "
                   "warm the cache on a machine with LLVM 22 (python -m rocke warm --target %s --cache DIR "
                   "--script FILE | --list FILE; or any rocke compile with ROCKE_CACHE_DIR=DIR) and set "
                   "ROCKE_CACHE_DIR=DIR here. Why no compiler: %s",
                   a->kernel_name, t->name, o->cache_dir, t->name, why);
}

/* LLVM IR in a->llvm_ir -> binary, through the cache. */
static rk_status compile_llir(rk_artifact *a, const rk_target *t, const rk_compile_options *o, cc_toolchain *tc,
                              double t_start) {
    bool amd = t->vendor == RK_VENDOR_AMD;
    size_t ll_len = strlen(a->llvm_ir);
    if (o->dump & RK_DUMP_LLIR) dump(o, "llir", a, a->llvm_ir, ll_len);
    if ((o->dump_after & RK_AFTER_LOWER)) {
        rk_status s = rk_dump_write(o->dump_dir, RK_DUMP_ORDER_LOWER, "lower", "ll", a->llvm_ir, ll_len);
        if (s != RK_OK) return s;
    }
    /* the ISA dumps need the compiler's assembly */
    bool want_isa = (o->dump & RK_DUMP_ISA) || (amd && (o->dump_after & RK_AFTER_CODEGEN));
    cc_job job = {.ll = a->llvm_ir, .ll_len = ll_len, .kernel = a->kernel_name, .t = t,
                  .opt_level = o->opt_level, .want_isa = want_isa, .inprocess = o->inprocess};
    cc_output out;
    memset(&out, 0, sizeof out);
    bool use_cache = o->cache && o->cache_dir[0];
    double t_key = cc_now_ms();
    cc_key key;
    if (use_cache) {
        key = cc_cache_key(a->llvm_ir, ll_len, a->kernel_name, t, tc, o, a->flavor);
        cc_key_hex(&key, a->cache_key);
        /* an ISA dump needs the compiler's assembly, which is not cached */
        if (!job.want_isa && cc_cache_get(o->cache_dir, &key, &out)) {
            /* a hit passes the same output checks as a miss; one that fails
             * (planted, or left by an older rocke) is removed and rebuilt */
            if (cc_check_output(&out, t, job.kernel) == RK_OK) {
                a->cache_hit = true;
                /* an entry stored before the ship index existed gets its index line now */
                cc_key ship = cc_ship_key(a->llvm_ir, ll_len, a->kernel_name, t, o);
                if (!cc_ship_present(o->cache_dir, &ship)) cc_ship_put(o->cache_dir, &ship, &key, out.toolchain_id);
            } else {
                cc_cache_drop(o->cache_dir, &key, rk_error_message());
                rk_clear_error();
                cc_output_free(&out);
                memset(&out, 0, sizeof out);
            }
        }
    }
    double t_look = cc_now_ms() - t_key;
    if (!a->cache_hit) {
        rk_status s = run_toolchain(tc, &job, &out);
        if (s == RK_OK) s = cc_check_output(&out, t, job.kernel);
        if (s != RK_OK) {
            cc_output_free(&out);
            return s;
        }
        if (use_cache) {
            cc_cache_put(o->cache_dir, &key, &out);
            cc_key ship = cc_ship_key(a->llvm_ir, ll_len, a->kernel_name, t, o);
            cc_ship_put(o->cache_dir, &ship, &key, out.toolchain_id);
            cc_recompile_note(o->cache_dir, a->llvm_ir, ll_len, a->kernel_name, t, tc, o, a->flavor,
                              a->recompile_note, sizeof a->recompile_note);
        }
        if (out.fork_ms > 0) cc_stage(a, "worker IPC", out.fork_ms);
        if (out.opt_ms > 0) cc_stage(a, "llvm-opt", out.opt_ms);
        double cg = out.compile_ms - out.opt_ms - out.fork_ms;
        cc_stage(a, out.opt_ms > 0 ? "codegen" : "llvm (opt+codegen)", cg > 0 ? cg : 0);
        cc_stage(a, amd ? "link" : out.cubin.size ? "ptxas" : "ptx check", out.link_ms);
    } else {
        cc_stage(a, "cache", t_look);
    }
    take_output(a, &out, amd);
    if (a->isa && (o->dump & RK_DUMP_ISA)) dump(o, "isa", a, a->isa, strlen(a->isa));
    if (!amd && (o->dump & RK_DUMP_PTX)) dump(o, "ptx", a, (const char *)a->binary, a->binary_size);
    a->ms.total = cc_now_ms() - t_start + a->ms.build;
    return (o->dump_after & RK_AFTER_CODEGEN) ? cc_dump_codegen(o, a) : RK_OK;
}

static rk_status start(const rk_target *t, const rk_compile_options *o, rk_compile_options *opts,
                       rk_artifact **out) {
    *out = NULL;
    if (!t) return rk_fail(RK_ERR_INVALID, "no target (legal: %s)", rk_target_names());
    if (o) *opts = *o;
    else if (rk_compile_options_default(t, opts) != RK_OK) return RK_ERR_INVALID;
    rk_status s = cc_options_validate(opts, t);
    if (s != RK_OK) return s;
    rk_artifact *a = rk_calloc(1, sizeof *a);
    if (!a) return rk_fail(RK_ERR_NOMEM, "out of memory");
    a->target = t->name;
    a->kind = t->vendor == RK_VENDOR_AMD ? RK_BINARY_HSACO : RK_BINARY_PTX;
    a->ms.build = opts->build_ms;
    *out = a;
    return RK_OK;
}

static rk_status finish(rk_status s, rk_artifact *a, rk_artifact **out) {
    if (s != RK_OK) {
        rk_artifact_free(a);
        *out = NULL;
    } else {
        *out = a;
    }
    return s;
}

rk_status rk_compile_llvm_ir(const char *ll, const char *kernel_name, const rk_target *t,
                             const rk_compile_options *o, rk_artifact **out) {
    double t0 = cc_now_ms();
    rk_compile_options opts;
    rk_artifact *a;
    if (!out) return rk_fail(RK_ERR_INVALID, "rk_compile_llvm_ir: NULL output");
    rk_status s = start(t, o, &opts, &a);
    if (s != RK_OK) return s;
    if (!ll || !kernel_name || !*kernel_name)
        return finish(rk_fail(RK_ERR_INVALID, "rk_compile_llvm_ir: no LLVM IR or no kernel name"), a, out);
    if (!(a->kernel_name = dup_str(kernel_name)) || !(a->llvm_ir = dup_str(ll))) return finish(RK_ERR_NOMEM, a, out);
    cc_toolchain tc;
    s = cc_toolchain_resolve(opts.toolchain, t, &tc);
    if (s == RK_ERR_TOOLCHAIN && !tc.bad_override) return finish(from_ship_index(a, NULL, t, &opts, t0), a, out);
    if (s == RK_OK) s = pick_flavor(&opts, &tc, &a->flavor);
    if (s == RK_OK) s = compile_llir(a, t, &opts, &tc, t0);
    return finish(s, a, out);
}

/* After each IR pass: its time in the stage log, its dump when asked. */
typedef struct pass_watch {
    const rk_compile_options *o;
    rk_artifact *a;
    double t;              /* when the pass began */
    rk_status st;          /* the first dump failure */
} pass_watch;

static void after_pass(void *ud, const char *pass, uint32_t round, const rk_kernel *k) {
    pass_watch *w = ud;
    char name[24];
    snprintf(name, sizeof name, "%s.%u", pass, round);
    cc_stage(w->a, name, cc_now_ms() - w->t);
    uint32_t bit = !strcmp(pass, "fold") ? RK_AFTER_FOLD : !strcmp(pass, "cse") ? RK_AFTER_CSE : RK_AFTER_DCE;
    uint32_t nth = bit == RK_AFTER_FOLD ? 0 : bit == RK_AFTER_CSE ? 1 : 2;
    if ((w->o->dump_after & bit) && w->st == RK_OK)
        w->st = cc_dump_kernel(w->o, RK_DUMP_ORDER_PASSES + 3 * (round - 1) + nth, name, k);
    w->t = cc_now_ms();
}

/* Verify against the target and, when asked, run the passes on a copy
 * (serialize -> parse: the round trip is exact), so k stays untouched. */
static rk_status prepare(const rk_kernel *k, const rk_target *t, const rk_compile_options *o, rk_artifact *a,
                         rk_kernel **copy) {
    *copy = NULL;
    double t0 = cc_now_ms();
    rk_diags d;
    rk_diags_init(&d);
    rk_status s = rk_target_verify(k, t, &d);
    if (s != RK_OK || d.nerrors) {
        char *text = rk_diags_text(&d);
        size_t n = text ? strlen(text) : 0;
        while (n && text[n - 1] == '\n') n--;
        s = rk_fail(RK_ERR_VERIFY, "kernel '%s' is not valid for %s:\n%.*s", rk_kernel_name(k), t->name, (int)n,
                    text ? text : "");
        rk_string_free(text);
    }
    rk_diags_free(&d);
    cc_stage(a, "verify", cc_now_ms() - t0);
    if (s == RK_OK && (o->dump_after & RK_AFTER_VERIFY))
        s = cc_dump_kernel(o, RK_DUMP_ORDER_VERIFY, "verify", k);
    if (s != RK_OK || !o->run_passes) return s;
    char *txt = rk_serialize(k);
    if (!txt) return rk_fail(RK_ERR_NOMEM, "out of memory serializing '%s'", rk_kernel_name(k));
    pass_watch w = {.o = o, .a = a, .t = cc_now_ms()};
    s = rk_parse(txt, strlen(txt), copy);
    rk_string_free(txt);
    if (s == RK_OK) s = rk_optimize_observe(*copy, 0, NULL, after_pass, &w);
    if (s == RK_OK) s = w.st;
    if (s != RK_OK && *copy) {
        rk_kernel_free(*copy);
        *copy = NULL;
    }
    return s;
}

rk_status rk_compile(const rk_kernel *k, const rk_target *t, const rk_compile_options *o, rk_artifact **out) {
    double t0 = cc_now_ms();
    rk_compile_options opts;
    rk_artifact *a;
    if (!out) return rk_fail(RK_ERR_INVALID, "rk_compile: NULL output");
    if (!k) return rk_fail(RK_ERR_INVALID, "rk_compile: NULL kernel");
    rk_status s = start(t, o, &opts, &a);
    if (s != RK_OK) return s;
    if (!(a->kernel_name = dup_str(rk_kernel_name(k)))) return finish(RK_ERR_NOMEM, a, out);
    rk_kernel *copy = NULL;
    double t1 = cc_now_ms();
    s = prepare(k, t, &opts, a, &copy);
    const rk_kernel *use = copy ? copy : k;
    a->ms.passes = cc_now_ms() - t1;
    if (s == RK_OK && !(a->ir_text = rk_serialize(use))) s = rk_fail(RK_ERR_NOMEM, "out of memory");
    cc_toolchain tc;
    if (s == RK_OK) {
        s = cc_toolchain_resolve(opts.toolchain, t, &tc);
        if (s == RK_ERR_TOOLCHAIN && !tc.bad_override) {   /* a bad override is the user's to fix */
            s = from_ship_index(a, use, t, &opts, t0);
            if (copy) rk_kernel_free(copy);
            return finish(s, a, out);
        }
    }
    if (s == RK_OK) s = pick_flavor(&opts, &tc, &a->flavor);
    if (s == RK_OK) {
        t1 = cc_now_ms();
        char *ll = NULL;
        rk_lower_info info;
        s = rk_lower_llvm_ex(use, t, a->flavor, &ll, &info);
        a->dyn_smem_min = info.dyn_smem_min;
        a->ms.lower = cc_now_ms() - t1;
        cc_stage(a, "lower", a->ms.lower);
        if (s == RK_OK) {
            a->llvm_ir = dup_str(ll); /* ours are freed with rk_free; the lowering's with rk_string_free */
            rk_string_free(ll);
            if (!a->llvm_ir) s = RK_ERR_NOMEM;
        }
    }
    if (copy) rk_kernel_free(copy);
    if (s == RK_OK) s = compile_llir(a, t, &opts, &tc, t0);
    return finish(s, a, out);
}
