/* rocke — runtime helpers shared by the backends and the front end: object
 * lists, error prefixes, the host clock, dlopen error text. Layer: runtime. */
#include <stdio.h>
#include <time.h>

#include "runtime_int.h"

void rt_list_init(rt_link *l) { l->prev = l->next = l; }
void rt_list_add(rt_link *l, rt_link *n) {
    n->prev = l->prev;
    n->next = l;
    l->prev->next = n;
    l->prev = n;
}
void rt_list_del(rt_link *n) {
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = n;
}

rk_status rt_fail_prefix(rk_status s, const char *fmt, ...) {
    /* the message is formatted into the same thread buffer it reads: copy first */
    char old[4096], pre[1024];
    snprintf(old, sizeof old, "%s", rk_error_message());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    return rk_fail(s, "%s: %s", pre, old);
}

double rt_host_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

const char *rt_dlerror_reason(const char *lib, const char *err) {
    if (!err) return "unknown dlopen failure";
    size_t n = strlen(lib);
    if (strncmp(err, lib, n) == 0 && err[n] == ':' && err[n + 1] == ' ') return err + n + 2;
    return err;
}
