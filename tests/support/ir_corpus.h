/* rocke tests — a corpus of hand-built kernels shared by the IR text tests,
 * the golden runner and the benchmark. Each builder returns a finished
 * kernel (or NULL with the builder's error in rk_error_message()). */
#ifndef ROCKE_TEST_IR_CORPUS_H
#define ROCKE_TEST_IR_CORPUS_H

#include "rocke/ir.h"

rk_kernel *corpus_rowsum(void);       /* the reference's §5.3/§6 example */
rk_kernel *corpus_vector_add(void);   /* params with ABI attrs, guarded store */
rk_kernel *corpus_row_reduce(void);   /* loop-carried value, shuffles */
rk_kernel *corpus_if_else(void);      /* scf.if_else with results */
rk_kernel *corpus_lds_barrier(void);  /* LDS alloc/store/load, barriers, waits */
rk_kernel *corpus_mma(void);          /* a matrix atom in a loop, vector carries */
rk_kernel *corpus_every_attr(void);   /* every attribute kind, repr edge cases, @loc */
rk_kernel *corpus_nested(void);       /* nested and sibling loops reusing %k0 */

typedef struct corpus_entry {
    const char *name;
    rk_kernel *(*build)(void);
    bool golden;                      /* pinned in tests/golden/<name>.ir */
} corpus_entry;

extern const corpus_entry corpus_kernels[];
extern const unsigned corpus_count;

#endif
