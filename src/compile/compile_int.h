/* rocke — compile layer internals: toolchain records, the three back ends,
 * process spawning, the cache and symbol checks, grouped by file.
 * Layer: compile. */
#ifndef ROCKE_COMPILE_INT_H
#define ROCKE_COMPILE_INT_H

#include "rocke/compile.h"
#include "../base/base_int.h"

/* A heap byte block (rk_malloc); data may be NULL when size is 0. */
typedef struct cc_blob { uint8_t *data; size_t size; } cc_blob;
void cc_blob_free(cc_blob *b);

double cc_now_ms(void);                 /* monotonic clock */
bool cc_debug_on(void);                 /* ROCKE_DEBUG=1 */
void cc_debug(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* ---- proc.c: external tools -------------------------------------------------- */
typedef struct cc_proc {
    int exit_code;     /* -1 when killed by a signal */
    int signal;        /* 0 unless killed */
    rk_buf out, err;   /* captured stdout / stderr */
} cc_proc;
/* Run argv[0] (a full path) with no stdin, capturing stdout and stderr. Fails
 * only when the process cannot be started; the exit status is in *p. */
rk_status cc_run(const char *const argv[], cc_proc *p);
void cc_proc_free(cc_proc *p);
/* Read two pipes to EOF (stdout into out, stderr into err). */
void cc_drain(int fo, int fe, rk_buf *out, rk_buf *err);
/* Fail with the tool's exit code, stderr and the command line to rerun. */
rk_status cc_tool_failed(const char *what, const char *const argv[], const cc_proc *p);
/* The shell-quoted command line. */
void cc_cmdline(rk_buf *b, const char *const argv[]);
/* Lookup results: an override (environment variable) that is set but
 * unusable is an error of its own, never silently replaced by another file. */
typedef enum cc_found { CC_ABSENT, CC_FOUND, CC_BAD_OVERRIDE } cc_found;
/* Find an executable: the env variable (a path) when set, else each name on
 * PATH, then each name in each of dirs. Appends what was tried to `tried`. */
cc_found cc_find_tool(const char *env, const char *const names[], const char *const dirs[],
                      char out[RK_PATH_MAX], rk_buf *tried);
/* The useful part of a compiler's stderr: from the first line up to LLVM's
 * "PLEASE submit a bug report" / "Stack dump:" trailer, at most ~2000 bytes. */
void cc_error_excerpt(rk_buf *dst, const char *err, size_t n);
/* A fresh private folder under $TMPDIR (or /tmp); removed with cc_tmpdir_remove. */
rk_status cc_tmpdir(char out[RK_PATH_MAX]);
void cc_tmpdir_remove(const char *dir);
/* Create a new file (never one that exists: temporaries) holding data. */
rk_status cc_write_file(const char *path, const void *data, size_t n);
/* A tool's output file, bounded like every input (rk_read_regular_file). */
rk_status cc_read_blob(const char *path, cc_blob *out);
/* True when the file starts with the ELF magic. */
bool cc_is_elf_file(const char *path);

/* ---- toolchain.c: choosing a toolchain ------------------------------------- */
/* The AMD link step of the llvm and tools toolchains (ROCKE_LINKER): the
 * in-process linker falling back to ld.lld on objects it does not handle,
 * the in-process linker only, or ld.lld only. */
typedef enum cc_linker { CC_LINK_AUTO = 0, CC_LINK_INTERNAL, CC_LINK_LLD } cc_linker;
typedef struct cc_toolchain {
    rk_toolchain kind;           /* COMGR, LLVM or TOOLS (never AUTO) */
    cc_linker linker;            /* AMD llvm/tools only; lld[] is empty when ld.lld was not found */
    char lib[RK_PATH_MAX];       /* libLLVM / libamd_comgr */
    char opt[RK_PATH_MAX], llc[RK_PATH_MAX], lld[RK_PATH_MAX], ptxas[RK_PATH_MAX];
    unsigned major, minor, patch; /* LLVM version (0 = not known yet) */
    char identity[2048];         /* paths + sizes + mtimes: part of the cache key */
    bool bad_override;           /* set when resolving failed on an override that is set but unusable */
} cc_toolchain;
/* Pick the toolchain for `want` and target t (AUTO: comgr, llvm, tools). Cheap:
 * finds and stats files, loads nothing unless the version cannot be told
 * from a file name. The message of a failure lists everything tried; a
 * failure caused by a bad override sets out->bad_override. */
rk_status cc_toolchain_resolve(rk_toolchain want, const rk_target *t, cc_toolchain *out);
/* Make sure the LLVM version is known (loads the library or runs llc --version). */
rk_status cc_toolchain_version(cc_toolchain *tc);
rk_llvm_flavor cc_flavor_for_major(unsigned major);

/* A compile request shared by the back ends. */
typedef struct cc_job {
    const char *ll;
    size_t ll_len;
    const char *kernel;
    const rk_target *t;
    uint32_t opt_level;
    bool want_isa;
    bool inprocess;
} cc_job;
typedef struct cc_output {
    cc_blob binary;            /* HSACO, or PTX text with a trailing NUL not counted */
    cc_blob cubin;
    char *isa;                 /* rk_malloc'd, NUL-terminated */
    char toolchain_id[160];
    double compile_ms, link_ms, fork_ms;
    double opt_ms;             /* the part of compile_ms in LLVM's optimizer (0: not told apart) */
} cc_output;
void cc_output_free(cc_output *o);

/* ---- options.c: name lists --------------------------------------------------- */
typedef struct cc_name_bit { const char *name; uint32_t bit; } cc_name_bit;
/* "a,b,c" into the OR of their bits; an unknown name fails, naming `what`
 * and listing the legal names. */
rk_status cc_names_parse(const char *s, const cc_name_bit *names, unsigned n, const char *what, uint32_t *out);

/* ---- compile_dump.c: stage log and --dump-after files -------------------------- */
void cc_stage(rk_artifact *a, const char *name, double ms);   /* append a row to a->stages */
/* The kernel as ckdsl.ir v1 into o->dump_dir as NN-STAGE.ir. */
rk_status cc_dump_kernel(const rk_compile_options *o, uint32_t order, const char *stage, const rk_kernel *k);
/* 31-isa.s (AMD, when a->isa) or 31-ptx.ptx, and 32-sass.sass for a cubin when a disassembler is found. */
rk_status cc_dump_codegen(const rk_compile_options *o, const rk_artifact *a);

/* ---- cache_note.c: why a kernel was compiled again ---------------------------- */
/* On a cache miss: compare the key's parts with the last compile of a
 * kernel of this name stored in the cache folder, fill note with the
 * parts that changed ("" when none is known), and remember this compile's. */
void cc_recompile_note(const char *cache_dir, const char *ll, size_t ll_len, const char *kernel,
                       const rk_target *t, const cc_toolchain *tc, const rk_compile_options *o,
                       rk_llvm_flavor flavor, char *note, size_t cap);

/* ---- llvm.c / llvm_codegen.c: libLLVM through dlopen ------------------------- */
typedef struct cc_llvm cc_llvm;
/* Load (once per path, thread-safe) and initialize the AMDGPU and NVPTX targets. */
rk_status cc_llvm_load(const char *path, const cc_llvm **out);
void cc_llvm_version(const cc_llvm *L, unsigned *maj, unsigned *min, unsigned *patch);
/* LLVM IR -> object (AMD) or PTX (NVIDIA), plus AMD assembly when asked. Runs
 * in a worker process unless job->inprocess. */
rk_status cc_llvm_codegen(const cc_llvm *L, const cc_job *job, cc_blob *obj, char **isa, double *fork_ms,
                          double *opt_ms);
rk_status cc_llvm_compile(cc_toolchain *tc, const cc_job *job, cc_output *out);

/* ---- comgr.c ----------------------------------------------------------------- */
/* Find and load libamd_comgr in the documented order; fills tc->lib. */
cc_found cc_comgr_find(cc_toolchain *tc, rk_buf *tried);
rk_status cc_comgr_compile(cc_toolchain *tc, const cc_job *job, cc_output *out);

/* ---- amdgpu_link.c: the in-process linker --------------------------------------- */
/* Relocatable AMDGPU object (one kernel, as LLVM's codegen writes it) -> the
 * HSACO `ld.lld -shared` writes, in memory. RK_ERR_UNSUPPORTED (message names
 * what) for any object shape it does not reproduce exactly, RK_ERR_INVALID for
 * a damaged or non-AMDGPU object. The .comment section names this linker. */
rk_status cc_amdgpu_link(const cc_blob *obj, cc_blob *hsaco);
/* The same with another .comment text (tests pass ld.lld's to compare whole files). */
rk_status cc_amdgpu_link_as(const cc_blob *obj, const char *comment, cc_blob *hsaco);
extern const char cc_amdgpu_link_comment[];
/* "internal-vN": bumped whenever the output for an object changes (cache key). */
extern const char cc_amdgpu_link_id[];

/* ---- tools.c: opt + llc as processes, ld.lld and ptxas --------------------------- */
rk_status cc_tools_compile(cc_toolchain *tc, const cc_job *job, cc_output *out);
/* Relocatable object -> HSACO with ld.lld -shared. */
rk_status cc_lld_link(const char *lld, const cc_blob *obj, const char *kernel, cc_blob *hsaco);
/* Relocatable object -> HSACO with the linker tc->linker picks; checks the
 * HSACO defines the kernel. *used names the linker that ran (static text). */
rk_status cc_link_hsaco(const cc_toolchain *tc, const cc_blob *obj, const char *kernel, cc_blob *hsaco,
                        const char **used);
/* PTX -> cubin with ptxas -arch=<cpu>; checks the cubin defines the kernel. */
rk_status cc_ptxas(const char *ptxas, const cc_blob *ptx, const rk_target *t, const char *kernel, cc_blob *cubin);
/* Version of an LLVM tool from `tool --version` ("LLVM version 22.1.8"). */
rk_status cc_tool_llvm_version(const char *tool, unsigned *maj, unsigned *min, unsigned *patch);

/* ---- symbols.c: the output defines exactly the expected kernel ------------------ */
rk_status cc_check_hsaco(const cc_blob *hsaco, const char *kernel);
rk_status cc_check_ptx(const cc_blob *ptx, const char *kernel);
rk_status cc_check_cubin(const cc_blob *cubin, const char *kernel);
/* All of the above that apply to t: run on every output, cache hit or miss. */
rk_status cc_check_output(const cc_output *out, const rk_target *t, const char *kernel);

/* ---- cache.c ------------------------------------------------------------------- */
typedef struct cc_key { uint8_t b[16]; } cc_key;
void cc_key_hex(const cc_key *k, char hex[33]);
/* Key over the LLVM IR, kernel name, target, toolchain identity and options. */
/* The key of (head, kernel, target, toolchain identity or NULL, LLVM IR): the
 * cache's full key and the ship key both hash their fields through it. */
cc_key cc_key_hash(const char *head, const char *kernel, const rk_target *t, const char *identity, const char *ll,
                   size_t ll_len);
cc_key cc_cache_key(const char *ll, size_t ll_len, const char *kernel, const rk_target *t, const cc_toolchain *tc,
                    const rk_compile_options *o, rk_llvm_flavor flavor);
/* A hit fills binary, cubin and toolchain_id; false on miss (a corrupt entry
 * is reported at debug level and removed). */
bool cc_cache_get(const char *dir, const cc_key *k, cc_output *out);
/* Remove the entry of k, reporting why at debug level. */
void cc_cache_drop(const char *dir, const cc_key *k, const char *why);
/* Store atomically; failures are reported at debug level only. */
void cc_cache_put(const char *dir, const cc_key *k, const cc_output *in);
/* The entry file of key k under dir. */
/* false when the entry's path would not fit RK_PATH_MAX (a too long cache_dir) */
bool cc_cache_path(const char *dir, const cc_key *k, char out[RK_PATH_MAX]);
/* mkdir -p of a path we may write in place (it is restored); false on failure. */
bool cc_mkdirs(char *path);

/* ---- cache_ship.c: the index a machine without a compiler reads ------------------ */
/* The key without the toolchain identity (and flavor): what a machine with
 * no LLVM can compute. */
cc_key cc_ship_key(const char *ll, size_t ll_len, const char *kernel, const rk_target *t,
                   const rk_compile_options *o);
/* Record that `entry` (produced by the toolchain `identity`) serves `ship`. */
void cc_ship_put(const char *dir, const cc_key *ship, const cc_key *entry, const char *identity);
bool cc_ship_present(const char *dir, const cc_key *ship);
/* The entry the ship index names for `ship` (its key in *entry), read like cc_cache_get. */
bool cc_ship_get(const char *dir, const cc_key *ship, cc_key *entry, cc_output *out);

/* ---- options.c -------------------------------------------------------------------- */
rk_status cc_options_validate(const rk_compile_options *o, const rk_target *t);

#endif
