/* rocke — the launch-geometry evaluator: self-contained C17 (stdint only).
 * librocke includes it (rk_instance_grid) and `rocke aot` copies this text
 * into every launcher it writes, so both size a launch by the same code.
 * Layer: kernels. */
#ifndef RK_GEOM_EVAL_H
#define RK_GEOM_EVAL_H
#include <stdint.h>

/* A word of a geometry program: the op in bits 0..7, its argument above. */
enum { RK_GEOM_DIM = 1, RK_GEOM_CONST, RK_GEOM_ADD, RK_GEOM_MUL, RK_GEOM_DIV, RK_GEOM_CDIV, RK_GEOM_AXIS, RK_GEOM_SUB, RK_GEOM_MIN };
#define RK_GEOM_WORD(op, arg) ((uint64_t)(arg) << 8 | (uint64_t)(op))

/* Run code[0..n) over the problem's dimensions: DIM i pushes dims[i], CONST c
 * pushes c; ADD, MUL (both saturating), SUB (0 below 0), MIN, DIV (rounding
 * down) and CDIV (rounding up) pop b, then a, and push a op b (a division by
 * 0 gives 0);
 * AXIS pops the next grid axis, clamped to 1..2^31-1. Axes not set are 1.
 * Returns 0, or -1 for a malformed program (stack, dimension or axis out of
 * range, an unknown op). */
static inline int rk_geom_run(const uint64_t *code, uint32_t n, const uint64_t *dims, uint32_t ndims,
                              uint32_t grid[3]) {
    uint64_t st[16];
    uint32_t sp = 0, axis = 0;
    grid[0] = grid[1] = grid[2] = 1;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t op = code[i] & 0xffu, arg = code[i] >> 8;
        if (op == RK_GEOM_DIM || op == RK_GEOM_CONST) {
            if (sp == 16 || (op == RK_GEOM_DIM && arg >= ndims)) return -1;
            st[sp++] = op == RK_GEOM_DIM ? dims[arg] : arg;
        } else if (op == RK_GEOM_AXIS) {
            if (sp == 0 || axis == 3) return -1;
            uint64_t v = st[--sp];
            grid[axis++] = (uint32_t)(v < 1 ? 1 : v > INT32_MAX ? INT32_MAX : v);
        } else {
            if (sp < 2) return -1;
            uint64_t b = st[--sp], a = st[sp - 1], r;
            if (op == RK_GEOM_ADD) r = a + b < a ? UINT64_MAX : a + b;
            else if (op == RK_GEOM_SUB) r = a > b ? a - b : 0;
            else if (op == RK_GEOM_MIN) r = a < b ? a : b;
            else if (op == RK_GEOM_MUL) r = b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
            else if (op == RK_GEOM_DIV) r = b ? a / b : 0;
            else if (op == RK_GEOM_CDIV) r = b ? a / b + (a % b != 0) : 0;
            else return -1;
            st[sp - 1] = r;
        }
    }
    return sp == 0 ? 0 : -1;
}
#endif
