/* rocke sweep — a run worker's host problem: the inputs and the double
 * reference of one shape, filled once and checked against every config of
 * that shape the worker runs (the configs compute the same function; their
 * knobs change how, not what). The run queue is in shape order, so one held
 * problem is enough; its device copy (cmd_sweep_device.c) is restaged
 * for each config, so the host outputs are not. Layer: tools. */
#include <string.h>
#include <time.h>

#include "sweep_int.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void sw_problem_free(sw_problem *c) {
    if (c->have) {
        rk_problem_free(&c->p);
        rk_problem_ref_free(&c->ref);
    }
    c->have = false;
}

rk_status sw_problem_get(sw_problem *c, const rk_instance *in, const rk_shape *s, uint32_t shape, uint64_t seed,
                         bool *reused, double *ms) {
    double t0 = now_ms();
    *reused = c->have && c->shape == shape && c->seed == seed && !rk_problem_reaim(&c->p, in);
    if (*reused) {
        *ms = now_ms() - t0;
        return RK_OK;
    }
    sw_problem_free(c);   /* one at a time: a big shape's reference is gigabytes */
    rk_status st = rk_problem_init(&c->p, in, s, seed);
    if (st) return st;
    if ((st = rk_problem_reference(&c->p, &c->ref))) {
        rk_problem_free(&c->p);
        return st;
    }
    c->have = true;
    c->shape = shape;
    c->seed = seed;
    c->computed++;
    c->gen++;
    *ms = now_ms() - t0;
    return RK_OK;
}
