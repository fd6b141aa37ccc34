/* rocke — launch geometry as data: the helpers family hooks write their grid
 * programs with, and the evaluation behind rk_instance_grid (the evaluator
 * itself is geom_eval.h, shared with the launchers `rocke aot` writes).
 * Layer: kernels. */
#include "kern_int.h"

static void put(rk_launch_geom *g, int op, uint64_t arg) {
    RK_ASSERT(g->n < RK_GEOM_MAX, "launch geometry program longer than RK_GEOM_MAX");
    g->code[g->n++] = RK_GEOM_WORD(op, arg);
}

void kn_geom_dim(rk_launch_geom *g, uint32_t dim) { put(g, RK_GEOM_DIM, dim); }
void kn_geom_const(rk_launch_geom *g, uint64_t c) { put(g, RK_GEOM_CONST, c); }
void kn_geom_op(rk_launch_geom *g, int op) { put(g, op, 0); }
void kn_geom_axis(rk_launch_geom *g) { put(g, RK_GEOM_AXIS, 0); }

void kn_geom_cdiv_dim(rk_launch_geom *g, uint32_t dim, uint64_t c) {
    kn_geom_dim(g, dim);
    kn_geom_const(g, c);
    kn_geom_op(g, RK_GEOM_CDIV);
}

rk_status rk_launch_geom_eval(const rk_launch_geom *g, const uint64_t *dims, uint32_t ndims, uint32_t grid[3],
                              uint32_t block[3]) {
    grid[0] = grid[1] = grid[2] = 1;
    for (int i = 0; i < 3; i++) block[i] = g->block[i] ? g->block[i] : 1;
    if (g->n > RK_GEOM_MAX || rk_geom_run(g->code, g->n, dims, ndims, grid))
        return rk_fail(RK_ERR_INVALID, "malformed launch geometry program (%u words over %u dimensions)", g->n,
                       ndims);
    return RK_OK;
}
