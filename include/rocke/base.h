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
 * otherwise behaves like realloc. Every allocation librocke makes goes
 * through it, so tests can inject failures (libraries it loads or links --
 * libLLVM, comgr, the GPU drivers, libelf -- allocate on their own). Pass
 * NULL to restore the default (libc). Process-wide: set it before any other
 * rocke call and do not change it while rocke memory is alive (a block must
 * be freed by the allocator that made it); docs/embedding.md. */
typedef void *(*rk_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);
void rk_set_allocator(rk_alloc_fn fn, void *ud);

/* Diagnostics that are not errors: warnings (a cache folder that cannot be
 * used), notes (auto fell back to the emulator), debug lines ($ROCKE_DEBUG),
 * IR dumps asked for without a FILE, and the message of an internal error
 * just before the abort. librocke never writes to stdout or stderr itself:
 * each goes to the callback, or is dropped when none is set (an internal
 * error then goes to stderr, since the process is about to die). msg is one
 * line without a trailing newline (a dump: many lines), valid during the
 * call; the callback may run on any thread that calls rocke, at the same
 * time on several (it must be thread-safe), and must not call rocke. The
 * rocke CLI prints them to stderr as "rocke: warning: ...". Process-wide;
 * NULL removes it. */
typedef enum rk_log_level {
    RK_LOG_DEBUG = 0, RK_LOG_NOTE, RK_LOG_WARNING, RK_LOG_DUMP, RK_LOG_BUG
} rk_log_level;
typedef void (*rk_log_fn)(void *ud, rk_log_level level, const char *msg);
void rk_set_log_callback(rk_log_fn fn, void *ud);
const char *rk_log_level_name(rk_log_level level);   /* "debug" "note" "warning" "dump" "internal error" */

#ifdef __cplusplus
}
#endif
#endif
