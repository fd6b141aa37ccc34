/* rocke — status names, the per-thread last-error message, invariant aborts.
 * Layer: base. */
#include <stdio.h>
#include <stdlib.h>

#include "base_int.h"

static _Thread_local char last_error[4096];

const char *rk_status_name(rk_status s) {
    switch (s) {
    case RK_OK: return "ok";
    case RK_ERR_INVALID: return "invalid";
    case RK_ERR_PARSE: return "parse";
    case RK_ERR_VERIFY: return "verify";
    case RK_ERR_NOMEM: return "out of memory";
    case RK_ERR_IO: return "io";
    case RK_ERR_UNSUPPORTED: return "unsupported";
    case RK_ERR_TOOLCHAIN: return "toolchain";
    case RK_ERR_DEVICE: return "device";
    case RK_ERR_NOT_FOUND: return "not found";
    }
    return "unknown";
}

const char *rk_error_message(void) { return last_error; }

void rk_clear_error(void) { last_error[0] = '\0'; }

rk_status rk_vfail(rk_status s, const char *fmt, va_list ap) {
    /* format aside first: callers may pass rk_error_message() as an argument */
    char tmp[sizeof last_error];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    memcpy(last_error, tmp, sizeof tmp);
    return s;
}

rk_status rk_fail(rk_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rk_vfail(s, fmt, ap);
    va_end(ap);
    return s;
}

_Noreturn void rk_bug_at(const char *file, int line, const char *why) {
    char msg[1024];
    snprintf(msg, sizeof msg, "internal error at %s:%d: %s", file, line, why);
    /* with no callback the process would die without a word: the one write
     * to stderr the library makes */
    if (!rk_log_text(RK_LOG_BUG, msg)) fprintf(stderr, "rocke: %s\n", msg);
    abort();
}
