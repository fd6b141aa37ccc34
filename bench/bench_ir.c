/* rocke bench — IR throughput: build a kernel of ~100,000 ops, then verify,
 * serialize, parse, canonicalize and print it; ops/s per phase, best of RUNS
 * by wall clock (CPU time and minor page faults of that run beside it: on a
 * VM, first touch of fresh memory can cost more than the work). Usage:
 * bench_ir [OPS] [RUNS]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "rocke/ir.h"

typedef struct stamp { double wall, cpu; long faults; } stamp;

/* Wall and process CPU time (on a shared machine the two differ a lot), and
 * minor page faults so far. */
static stamp now(void) {
    struct timespec w, c;
    struct rusage u;
    clock_gettime(CLOCK_MONOTONIC, &w);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    getrusage(RUSAGE_SELF, &u);
    return (stamp){(double)w.tv_sec + (double)w.tv_nsec * 1e-9, (double)c.tv_sec + (double)c.tv_nsec * 1e-9,
                   u.ru_minflt};
}

/* A mix like real kernels: index math, loads, float math, compares and
 * stores, in loops with carries of 40-odd ops each. */
static rk_kernel *build(uint64_t target_ops) {
    rk_kernel *k = rk_kernel_new("bench");
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    const rk_param_abi ro = {.noalias = true, .readonly = true};
    rk_value A = rk_add_param(k, "A", pf, &ro);
    rk_value B = rk_add_param(k, "B", pf, NULL);
    rk_value N = rk_add_param(k, "N", RK_T_I32, NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value c0 = rk_const_i32(k, 0);
    rk_value c1 = rk_const_i32(k, 1);
    rk_value scale = rk_const_f32(k, 0.5f);
    rk_value acc = rk_const_f32(k, 0.0f);
    uint64_t ops = 7;
    while (ops < target_ops) {
        rk_value carry, out;
        rk_value iv = rk_for_begin(k, c0, N, c1, NULL, 1, &acc, NULL, &carry);
        rk_value a = carry;
        for (int i = 0; i < 4; i++) {
            rk_value off = rk_const_i32(k, i * 64);
            rk_value idx = rk_build_add(k, iv, off);
            rk_value j = rk_build_add(k, idx, tid);
            rk_value x = rk_load_global(k, A, j, 1);
            rk_value y = rk_build_fmul(k, x, scale);
            rk_value in = rk_build_cmp(k, "lt", j, N);
            rk_value z = rk_build_fma(k, y, scale, a);
            a = rk_build_select(k, in, z, a);
            rk_store_global(k, B, j, y);
        }
        rk_value s = rk_build_fadd(k, a, carry);
        rk_for_end(k, &s, 1, &out);
        acc = out;
        ops += 4 * 9 + 3;
    }
    rk_store_global(k, B, tid, acc);
    if (rk_kernel_finish(k) != RK_OK) {
        fprintf(stderr, "bench_ir: build failed: %s\n", rk_error_message());
        exit(1);
    }
    return k;
}

typedef struct phase { const char *name; double best, cpu; long faults; } phase;

static void record(phase *p, stamp a, stamp b) {
    if (b.wall - a.wall < p->best) {
        p->best = b.wall - a.wall;
        p->cpu = b.cpu - a.cpu;
        p->faults = b.faults - a.faults;
    }
}

static void report(const phase *p, uint64_t ops, size_t bytes) {
    printf("  %-12s %8.2f ms  %7.2f M ops/s", p->name, p->best * 1e3, (double)ops / p->best * 1e-6);
    printf("  (cpu %8.2f ms, %6ld faults)", p->cpu * 1e3, p->faults);
    if (bytes) printf("  %7.1f MB/s", (double)bytes / p->best * 1e-6);
    printf("\n");
}

int main(int argc, char **argv) {
    uint64_t want = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (want < 100 || runs < 1) {
        fprintf(stderr, "usage: bench_ir [OPS >= 100] [RUNS >= 1]\n");
        return 2;
    }
    phase build_p = {"build", 1e9, 0, 0}, verify_p = {"verify", 1e9, 0, 0}, ser_p = {"serialize", 1e9, 0, 0},
          parse_p = {"parse", 1e9, 0, 0}, canon_p = {"canonicalize", 1e9, 0, 0}, print_p = {"print", 1e9, 0, 0};
    uint64_t ops = 0;
    size_t bytes = 0;
    for (int r = 0; r < runs; r++) {
        stamp t0 = now();
        rk_kernel *k = build(want);
        stamp t1 = now();
        ops = rk_kernel_op_count(k);
        rk_diags d;
        rk_diags_init(&d);
        rk_status vs = rk_verify(k, NULL, &d);
        stamp t2 = now();
        if (vs != RK_OK) {
            rk_diags_print(&d, stderr, "bench");
            return 1;
        }
        rk_diags_free(&d);
        char *text = rk_serialize(k);
        stamp t3 = now();
        bytes = strlen(text);
        rk_kernel *k2;
        if (rk_parse(text, bytes, &k2) != RK_OK) {
            fprintf(stderr, "bench_ir: parse failed: %s\n", rk_error_message());
            return 1;
        }
        stamp t4 = now();
        char *canon;
        if (rk_canonicalize(text, bytes, &canon) != RK_OK) return 1;
        stamp t5 = now();
        char *dump = rk_print(k2);
        stamp t6 = now();
        if (rk_kernel_op_count(k2) != ops) {
            fprintf(stderr, "bench_ir: parsed kernel has a different op count\n");
            return 1;
        }
        record(&build_p, t0, t1);
        record(&verify_p, t1, t2);
        record(&ser_p, t2, t3);
        record(&parse_p, t3, t4);
        record(&canon_p, t4, t5);
        record(&print_p, t5, t6);
        rk_string_free(text);
        rk_string_free(canon);
        rk_string_free(dump);
        rk_kernel_free(k);
        rk_kernel_free(k2);
    }
    printf("bench_ir: %llu ops, %zu bytes of ckdsl.ir v1, best of %d runs\n", (unsigned long long)ops, bytes, runs);
    report(&build_p, ops, 0);
    report(&verify_p, ops, 0);
    report(&ser_p, ops, bytes);
    report(&parse_p, ops, bytes);
    report(&canon_p, ops, bytes);
    report(&print_p, ops, 0);
    return 0;
}
