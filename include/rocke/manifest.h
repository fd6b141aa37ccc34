/* rocke — manifest v1 (`ck.dsl.example.manifest/v1`): one JSON file next to
 * a kernel artifact describing how to launch it, written atomically and read
 * strictly (upstream manifests too: `hsaco`, "ptr<f16, global>" types); plus
 * the small strict JSON reader/writer it is built on. Layer: manifest.
 * Fields: docs/manifest.md. */
#ifndef ROCKE_MANIFEST_H
#define ROCKE_MANIFEST_H

#include "rocke/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================= */
/* JSON (RFC 8259, strict): UTF-8 validated, escapes incl. surrogate pairs,
 * no comments, no trailing commas, no duplicate keys, no \u0000, nesting at
 * most RK_JSON_MAX_DEPTH, numbers must be finite. */
#define RK_JSON_MAX_DEPTH 64

typedef enum rk_json_kind {
    RK_JSON_NULL = 0, RK_JSON_BOOL, RK_JSON_NUMBER, RK_JSON_STRING, RK_JSON_ARRAY, RK_JSON_OBJECT
} rk_json_kind;

typedef struct rk_json rk_json;
struct rk_json {
    rk_json_kind kind;
    bool b;
    double num;
    bool is_int;          /* NUMBER written without fraction/exponent and within int64 */
    int64_t i;
    char *str;            /* STRING (NUL-terminated, no embedded NUL) */
    uint32_t n, cap;      /* ARRAY / OBJECT entries */
    rk_json **items;
    char **keys;          /* OBJECT keys, insertion order */
};

/* Parse; on failure NULL with "json: line L, column C: what" in the message. */
rk_json *rk_json_parse(const char *text, size_t len);
void rk_json_free(rk_json *j);
/* Member of an object (NULL when absent or j is not an object). */
const rk_json *rk_json_get(const rk_json *j, const char *key);

rk_json *rk_json_null(void);
rk_json *rk_json_bool(bool b);
rk_json *rk_json_num(double v);
rk_json *rk_json_int(int64_t v);
rk_json *rk_json_str(const char *s);
rk_json *rk_json_array(void);
rk_json *rk_json_object(void);
/* Append (arrays) or set (objects: replaces an existing key). Take ownership
 * of v; false on OOM (v is freed). */
bool rk_json_push(rk_json *arr, rk_json *v);
bool rk_json_set(rk_json *obj, const char *key, rk_json *v);

/* Text: pretty = 2-space indent, keys in insertion order; NULL on OOM or a
 * non-finite number (message set). Free with rk_string_free (ir.h). */
char *rk_json_write(const rk_json *j, bool pretty);

/* ======================================================================= */
#define RK_MANIFEST_SCHEMA "ck.dsl.example.manifest/v1"
#define RK_MANIFEST_MAX_ARGS 32
#define RK_MANIFEST_MAX_SPEC 32
#define RK_MANIFEST_MAX_DIMS 12

typedef struct rk_manifest_arg {
    char name[64];
    char type[48];         /* as written: "ptr<f16, global>", "ptr<f16,global>", "i32", "f32", "i64", "tensormap" */
    uint32_t size_bytes;   /* 8 for pointers and i64, 4 for i32/f32, 128 for a tensor map */
} rk_manifest_arg;

/* rocke: a shape variant, another manifest in the same folder serving the
 * launch shapes whose named dimensions all lie in [lo, hi] (docs/manifest.md). */
#define RK_MANIFEST_MAX_VARIANTS 64   /* the message in manifest.c read_variants says 64 */
#define RK_MANIFEST_VARIANT_DIMS 4
typedef struct rk_manifest_variant {
    char manifest[64];                                 /* "manifest.split.json" */
    uint32_t ndims;
    char dim[RK_MANIFEST_VARIANT_DIMS][24];
    uint64_t lo[RK_MANIFEST_VARIANT_DIMS], hi[RK_MANIFEST_VARIANT_DIMS];
} rk_manifest_variant;

typedef struct rk_manifest {
    /* shared fields (runtime_and_tools §7.1) */
    char kind[64];               /* "softmax_bf16" */
    char kernel_name[256];
    char binary[300];            /* file next to manifest.json ("hsaco" in upstream manifests) */
    char binary_kind[16];        /* "hsaco", "ptx", "cubin", or "ir" (ckdsl.ir text: emulator only,
                                    when no code object could be built); upstream: "hsaco" implied */
    uint64_t binary_bytes;       /* size of `binary` (0 = not recorded) */
    char binary_hash[40];        /* "xxh3-64:<16 hex>" ("" = not recorded) */
    char target[32];             /* "gfx950", "sm_90" ("" in upstream manifests) */
    char ir[300];                /* ckdsl.ir v1 file for the emulator ("" = none) */
    char llvm[300];              /* the .ll file ("" = none) */
    uint32_t threads_per_block;
    uint32_t dyn_smem_min;       /* rocke: dynamic shared memory every launch needs (an NVIDIA LDS pool
                                    over 48 KiB; rk_artifact.dyn_smem_min); 0 = none / absent */
    uint32_t cluster_dims[3];    /* rocke: blocks per thread-block cluster (kernel attribute cluster_dims),
                                    written when more than one; absent (older manifests) = 0, 0, 0: 1, 1, 1 */
    rk_manifest_arg args[RK_MANIFEST_MAX_ARGS];
    uint32_t nargs;
    bool sig_has_bytes;
    bool cooperative;            /* rocke: every block resident at once (kernel attribute cooperative): launch
                                    cooperatively; absent (older manifests) = false. Sits in sig_has_bytes's
                                    padding, so bindings that mirror the struct keep their layout */
    uint32_t warmup_iters, timed_iters;   /* defaults 5, 100 */
    struct { double build, passes, lower, compile, link, total; } timing_ms;
    char notes[256];
    char engine_version[32], engine_build_id[64];
    char codegen_policy_key[64];         /* "default" */
    /* simple-op fields (§7.2) */
    char op[32], dtype[16];
    uint64_t default_shape[RK_MANIFEST_MAX_DIMS];
    uint32_t ndefault_shape;
    /* rocke: the dimension names of default_shape, in order ("M", "N");
     * all "" when absent (upstream manifests: positional) */
    char default_shape_dims[RK_MANIFEST_MAX_DIMS][24];
    uint64_t elems_per_block;            /* 0 = absent */
    int is_binary;                       /* -1 absent, 0, 1 */
    uint32_t block_m, block_n;           /* 0 = absent */
    uint32_t grid_explicit[3];           /* all 0 = absent */
    double eps;                          /* has_eps */
    bool has_eps;
    /* rocke: the instance, so `rocke run` can rebuild references and check shapes */
    char family[32];
    struct { char key[32], value[128]; } spec[RK_MANIFEST_MAX_SPEC];   /* value: a fused chain can be long */
    uint32_t nspec;
    /* rocke: shape variants, tried in order before this manifest's own kernel */
    rk_manifest_variant variants[RK_MANIFEST_MAX_VARIANTS];
    uint32_t nvariants;
} rk_manifest;

/* sizeof(rk_manifest), for bindings that mirror the struct. */
size_t rk_manifest_struct_size(void);
/* Zeroed manifest with the v1 defaults (iters 5/100, policy "default", ...). */
void rk_manifest_init(rk_manifest *m);
/* Parse and validate; errors name the field and what is expected. */
rk_status rk_manifest_parse(const char *text, size_t len, rk_manifest *out);
rk_status rk_manifest_read(const char *path, rk_manifest *out);
/* Text of the manifest (pretty JSON, fixed field order); NULL on OOM. */
char *rk_manifest_text(const rk_manifest *m);
/* Write DIR/manifest.json atomically. */
rk_status rk_manifest_write(const rk_manifest *m, const char *dir);
/* Write DIR/file (a plain file name) atomically: a variant's manifest. */
rk_status rk_manifest_write_as(const rk_manifest *m, const char *dir, const char *file);
/* A variant range's dimension is a name ("N": the extent in [lo, hi]) or a
 * name and a modulus ("N%8": the extent mod 8 in [lo, hi], hi < 8): the
 * name into base (n bytes) and the modulus into *mod (0: none). RK_OK, or
 * RK_ERR_INVALID naming the problem for a malformed one. */
rk_status rk_manifest_dim_parse(const char *dim, char *base, size_t n, uint64_t *mod);
/* The variant serving a launch shape (names[i] has extent ext[i]): the
 * first whose every range holds; NULL: this manifest's own kernel. */
const rk_manifest_variant *rk_manifest_pick(const rk_manifest *m, const char *const *names, const uint64_t *ext,
                                            uint32_t n);
/* Add an args_signature entry; false when full. */
bool rk_manifest_add_arg(rk_manifest *m, const char *name, const char *type, uint32_t size_bytes);
/* Add a spec knob; false when full. */
bool rk_manifest_add_spec(rk_manifest *m, const char *key, const char *value);
const char *rk_manifest_spec(const rk_manifest *m, const char *key);   /* NULL if absent */

/* "xxh3-64:<16 hex>" of bytes / of a file. */
void rk_manifest_hash(const void *data, size_t n, char out[40]);
/* Check DIR/binary against binary_bytes and binary_hash (when recorded), its
 * binary_kind against the target's vendor (hsaco: gfx*; ptx, cubin: sm_*; ir:
 * any), the bytes against binary_kind (an AMDGPU ELF whose EF_AMDGPU_MACH is
 * the target's, PTX text whose .target is the target, an EM_CUDA ELF,
 * ckdsl.ir text) and that they define kernel_name; a mismatch names the
 * file, what the manifest says and what the file holds. */
rk_status rk_manifest_check_binary(const rk_manifest *m, const char *dir);

#ifdef __cplusplus
}
#endif
#endif
