/* rocke fuzz — what the binary-input targets share: a broken property stops
 * loudly (libFuzzer then saves the input), and inputs are run from an
 * exact-size heap copy so any read past the end is caught. */
#ifndef ROCKE_FUZZ_CHECK_H
#define ROCKE_FUZZ_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RK_FUZZ_CHECK(target, cond)                                                             \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "%s: %s:%d: check failed: %s\n", target, __FILE__, __LINE__, #cond); \
            abort();                                                                            \
        }                                                                                       \
    } while (0)

static inline uint8_t *rk_fuzz_copy(const uint8_t *data, size_t size) {
    uint8_t *copy = malloc(size ? size : 1);
    if (copy && size) memcpy(copy, data, size);
    return copy;
}

#endif
