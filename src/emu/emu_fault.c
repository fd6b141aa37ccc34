/* rocke — TEST ONLY: the planted miscompile behind rk_emu_options.test_fault
 * (off unless set), which rocke run --check-emu must catch and name.
 * Layer: emu. */
#include <errno.h>
#include <stdlib.h>

#include "emu_int.h"

/* "PARAM:INDEX" -> the parameter name (into name) and the element index. */
static rk_status parse(const char *spec, char name[RK_NAME_MAX], uint64_t *index) {
    const char *colon = strrchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : 0;
    char *end = NULL;
    errno = 0;
    unsigned long long v = colon && colon[1] >= '0' && colon[1] <= '9' ? strtoull(colon + 1, &end, 10) : 0;
    if (!colon || !n || n >= RK_NAME_MAX || !end || *end || errno)
        return rk_fail(RK_ERR_INVALID, "test fault '%s' is not PARAM:INDEX (a pointer parameter of the kernel and "
                       "an element index, e.g. Y:17)", spec);
    memcpy(name, spec, n);
    name[n] = '\0';
    *index = v;
    return RK_OK;
}

rk_status emu_fault_check(const char *spec) {
    char name[RK_NAME_MAX];
    uint64_t index;
    return parse(spec, name, &index);
}

rk_status emu_fault_apply(rk_emu *e, const rk_kernel *k, void *const *args) {
    char name[RK_NAME_MAX];
    uint64_t index;
    rk_status st = parse(e->fault, name, &index);
    if (st) return st;
    uint32_t np = rk_kernel_nparams(k);
    for (uint32_t i = 0; i < np; i++) {
        const rk_param *p = rk_kernel_param(k, i);
        if (strcmp(p->name, name)) continue;
        rk_scalar s = rk_type_scalar(rk_type_elem(k, p->type));
        uint32_t bits = rk_scalar_bits(s);
        if (rk_type_kind_of(k, p->type) != RK_TK_PTR || bits < 8)
            return rk_fail(RK_ERR_INVALID, "test fault '%s': parameter %s of kernel '%s' is not a pointer to "
                           "bytes-sized elements", e->fault, name, rk_kernel_name(k));
        uint64_t addr;
        memcpy(&addr, args[i], sizeof addr);
        size_t have = 0;
        uint8_t *host = rk_emu_host(e, addr, &have);
        size_t esz = bits / 8;
        if (!host || index >= have / esz)
            return rk_fail(RK_ERR_INVALID, "test fault '%s': element %llu is past the %zu elements of %s", e->fault,
                           (unsigned long long)index, host ? have / esz : 0, name);
        /* little-endian: the top mantissa bit of a float, bit 0 of an integer */
        int mant = s == RK_S_F16 ? 9 : s == RK_S_BF16 ? 6 : s == RK_S_F32 ? 22 : s == RK_S_F64 ? 51
                 : rk_scalar_is_f8(s) ? (s == RK_S_FP8E4M3 || s == RK_S_FP8E4M3FNUZ ? 2 : 1) : 0;
        host[index * esz + (size_t)mant / 8] ^= (uint8_t)(1u << (mant % 8));
        return RK_OK;
    }
    return rk_fail(RK_ERR_INVALID, "test fault '%s': kernel '%s' has no parameter %s", e->fault, rk_kernel_name(k),
                   name);
}
