/* rocke run — one device's copy of a problem (buffers, tensor maps, launch
 * arguments) and the --check-emu comparison against the emulator. Shared by
 * cmd_run.c, run_side.c and run_check_emu.c. Layer: tools. */
#ifndef ROCKE_RUN_SIDE_H
#define ROCKE_RUN_SIDE_H

#include "rocke/rocke.h"
#include "rocke/kernels.h"

typedef struct run_side {
    rk_device *dev;
    rk_module *mod;
    rk_function *fn;
    rk_devptr dptr[RK_KSIG_MAX];
    unsigned char maps[RK_KSIG_MAX][RK_TENSORMAP_BYTES];   /* tensormap entries, encoded on this device */
    rk_scalar_value sv[RK_KSIG_MAX];
    void *args[RK_KSIG_MAX];
} run_side;

/* Allocate every pointer parameter on s->dev, copy init[i] (the host
 * buffers as they were before any launch) into it, encode the tensor maps
 * and fill s->args. false: message set. */
bool run_side_upload(run_side *s, const rk_problem *p, void *const *init);
/* Free the buffers, the module and the device. */
void run_side_free(run_side *s);
/* Is signature entry i something the kernel writes (compared after a run)? */
bool run_side_is_output(const rk_kparam *kp);
/* "Y[3,17]" for flat element index i of signature entry `entry`, from its
 * layout (rk_kparam.dims); "Y[i]" when the layout does not cover the buffer. */
void run_side_element_name(const rk_problem *p, uint32_t entry, uint64_t i, char *buf, size_t n);

/* --check-emu: the same inputs on the emulator for the manifest's target
 * (options eo, which may carry the test-only fault), compared with dev_out
 * (the device's outputs after one launch, per signature entry). Prints one
 * line per output and a summary; returns 0 when everything agrees, 1 on a
 * difference or an error. */
int run_check_emu(const rk_problem *p, const rk_kernel *k, const char *target, const rk_emu_options *eo,
                  const uint32_t grid[3], const uint32_t block[3], void *const *init, void *const *dev_out);

/* run_unified.c: attention --mode unified. A batch of n sequences, each lq
 * new query tokens over lk keys (the context including them), from
 * "Q1:K1,Q2:K2,..." or "random:N" (a mixed batch drawn from seed: prefill
 * chunks of page_size - 1, page_size + 1 and about 200 tokens, decodes of 1
 * and 2, contexts up to about 1000 keys before them). */
typedef struct run_batch { uint32_t n; uint64_t *lq, *lk; } run_batch;
bool run_batch_parse(const char *text, uint64_t seed, uint32_t page_size, run_batch *out);
void run_batch_free(run_batch *b);
/* The problem's shape for a batch: Hq, Hkv, D from "Hq,Hkv,D" (NULL: from
 * base), B = n, Sq = the total query tokens, Skv = the longest KV length. */
bool run_batch_shape(const run_batch *b, const char *text, const rk_shape *base, rk_shape *out);
/* A manifest with row variants (block_m 64 and 16): the one serving batch b
 * of shape sh cheapest (rk_attention_unified_pick) replaces m, and line
 * gets the choice and every candidate's row units ("" without variants or
 * a batch). */
rk_status run_batch_pick_rows(const char *dir, rk_manifest *m, const run_batch *b, const rk_shape *sh, char *line,
                              size_t n);
/* Is `text` the three-number Hq,Hkv,D form of a unified --shape? */
bool run_batch_short_shape(const char *text);

#endif
