/* rocke — status codes, the last-error message and the allocation hook.
 * Layer: base (used by every other layer). */
#ifndef ROCKE_BASE_H
#define ROCKE_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RK_VERSION_MAJOR 0
#define RK_VERSION_MINOR 1
#define RK_VERSION_STRING "0.1.0"

/* Every fallible call returns one of these and, when not RK_OK, leaves a
 * message naming the problem in rk_error_message() (per thread). */
typedef enum rk_status {
    RK_OK = 0,
    RK_ERR_INVALID,     /* bad argument, spec field, flag or shape */
    RK_ERR_PARSE,       /* malformed text (IR, JSON, numbers) */
    RK_ERR_VERIFY,      /* IR failed verification */
    RK_ERR_NOMEM,       /* allocation failed */
    RK_ERR_IO,          /* file system */
    RK_ERR_UNSUPPORTED, /* legal input this target/toolchain cannot do */
    RK_ERR_TOOLCHAIN,   /* compiler/linker missing or failed */
    RK_ERR_DEVICE,      /* driver or emulator failure at run time */
    RK_ERR_NOT_FOUND    /* named thing does not exist */
} rk_status;

const char *rk_status_name(rk_status s);

/* The message of the last failure on this thread ("" when none). */
const char *rk_error_message(void);

/* Record a failure: sets the thread's message and returns `s`. */
rk_status rk_fail(rk_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void rk_clear_error(void);

/* Allocation hook (Lua's lua_Alloc shape): nsize == 0 frees and returns NULL;
 * otherwise behaves like realloc. Every allocation in librocke goes through it,
 * so tests can inject failures. Pass NULL to restore the default (libc). */
typedef void *(*rk_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);
void rk_set_allocator(rk_alloc_fn fn, void *ud);

#ifdef __cplusplus
}
#endif
#endif
