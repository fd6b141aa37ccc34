/* rocke — the diagnostics callback: warnings, notes, debug lines and dumps
 * go to the embedder's function, never to stdout/stderr. Layer: base. */
#include <pthread.h>
#include <stdio.h>

#include "base_int.h"

/* Read and written under the lock, so a callback set on one thread is seen
 * whole (function and its ud) by another; the callback runs outside it. */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static rk_log_fn log_fn;
static void *log_ud;

void rk_set_log_callback(rk_log_fn fn, void *ud) {
    pthread_mutex_lock(&log_mu);
    log_fn = fn;
    log_ud = fn ? ud : NULL;
    pthread_mutex_unlock(&log_mu);
}

static rk_log_fn current(void **ud) {
    pthread_mutex_lock(&log_mu);
    rk_log_fn fn = log_fn;
    *ud = log_ud;
    pthread_mutex_unlock(&log_mu);
    return fn;
}

const char *rk_log_level_name(rk_log_level level) {
    switch (level) {
    case RK_LOG_DEBUG: return "debug";
    case RK_LOG_NOTE: return "note";
    case RK_LOG_WARNING: return "warning";
    case RK_LOG_DUMP: return "dump";
    case RK_LOG_BUG: return "internal error";
    }
    return "unknown";
}

bool rk_log_enabled(void) {
    void *ud;
    return current(&ud) != NULL;
}

bool rk_log_text(rk_log_level level, const char *text) {
    void *ud;
    rk_log_fn fn = current(&ud);
    if (fn) fn(ud, level, text);
    return fn != NULL;
}

void rk_log(rk_log_level level, const char *fmt, ...) {
    void *ud;
    rk_log_fn fn = current(&ud);
    if (!fn) return;
    char msg[2048];   /* one line; longer ones are cut */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fn(ud, level, msg);
}
