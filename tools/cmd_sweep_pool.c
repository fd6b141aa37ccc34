/* rocke sweep — the worker pool: forked processes sharing one queue. The
 * parent hands each idle worker the next item ("ITEM\n") and reads back one
 * line ("ITEM\tTEXT\n"); a worker that dies (a killed process, a lost
 * device) has its item re-queued once, and is started again if it had
 * answered since its last start (a device that is gone fails to open: that
 * worker stays down). Layer: tools. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweep_int.h"

typedef struct worker {
    int to, from;          /* parent's ends */
    bool alive, busy, stopping;   /* stopping: said it ends after its last answer */
    uint32_t pos;          /* queue position of the item in flight */
    uint32_t answered;     /* lines since it was (re)started */
    rk_buf in;             /* bytes read, not yet a whole line */
} worker;

static bool write_all(int fd, const char *s, size_t n) {
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        s += w;
        n -= (size_t)w;
    }
    return true;
}

static _Noreturn void child_main(sw_pool *p, uint32_t w, int in, int out) {
    FILE *f = fdopen(in, "r");
    char req[64];
    /* the first item before opening: the worker may prepare its host side
     * while the device opens; no item, nothing to open */
    bool have = f && fgets(req, sizeof req, f);
    if (!have) _exit(0);
    char err[512] = "";
    void *ctx = p->open(p->ud, w, (uint32_t)strtoul(req, NULL, 10), err, sizeof err);
    if (!ctx) {
        char line[600];
        int n = snprintf(line, sizeof line, "!\t%s\n", err[0] ? err : "could not start");
        write_all(out, line, (size_t)n);
        _exit(3);
    }
    rk_buf line;
    rk_buf_init(&line);
    for (; have; have = fgets(req, sizeof req, f) != NULL) {
        uint32_t item = (uint32_t)strtoul(req, NULL, 10);
        rk_buf_reset(&line);
        rk_buf_printf(&line, "%u\t?\t", item);
        bool more = p->job(p->ud, ctx, w, item, &line);
        /* 'r': ready for the next item; 's': stopping, send nothing more */
        line.data[strcspn(line.data, "?")] = more ? 'r' : 's';
        rk_buf_putc(&line, '\n');
        if (line.oom || !write_all(out, line.data, line.len) || !more) break;
    }
    rk_buf_free(&line);
    p->close(p->ud, ctx);
    _exit(0);
}

static void write_pids(const sw_pool *p) {
    rk_buf b;
    rk_buf_init(&b);
    rk_buf_puts(&b, "{\"workers\": [");
    for (uint32_t w = 0; w < p->nworkers; w++)
        rk_buf_printf(&b, "%s{\"index\": %u, \"pid\": %d, \"device\": \"%s\"}", w ? ", " : "", w, (int)p->pid[w],
                      p->name[w]);
    rk_buf_puts(&b, "]}\n");
    rk_write_file_atomic(p->pid_file, b.data, b.len);
    rk_buf_free(&b);
}

static void exit_text(int status, char *buf, size_t n) {
    if (WIFSIGNALED(status)) snprintf(buf, n, "killed by signal %d", WTERMSIG(status));
    else snprintf(buf, n, "exited with status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* Fork worker w; false when it cannot be started. */
static bool spawn(sw_pool *p, worker *wk, uint32_t w) {
    int down[2], up[2];
    if (pipe(down)) return false;
    if (pipe(up)) { close(down[0]); close(down[1]); return false; }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        for (uint32_t j = 0; j < p->nworkers; j++)   /* the other workers' pipes are not ours */
            if (j != w && wk[j].alive) { close(wk[j].to); close(wk[j].from); }
        close(down[1]);
        close(up[0]);
        child_main(p, w, down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    if (pid < 0) { close(down[1]); close(up[0]); return false; }
    p->pid[w] = pid;
    rk_buf_free(&wk[w].in);
    wk[w] = (worker){.to = down[1], .from = up[0], .alive = true};
    rk_buf_init(&wk[w].in);
    return true;
}

typedef struct queue {
    uint32_t *pos;       /* positions into items[], FIFO */
    uint32_t head, tail;
    uint8_t *tries;      /* per position */
} queue;

/* A worker ended: its item (if any) goes back once, else it is lost. */
static void worker_ended(sw_pool *p, worker *wk, uint32_t w, const uint32_t *items, queue *q, const char *cmd) {
    int status = 0;
    waitpid(p->pid[w], &status, 0);
    char why[64];
    exit_text(status, why, sizeof why);
    wk->alive = false;
    close(wk->to);
    close(wk->from);
    if (!wk->busy) {
        if (!WIFEXITED(status) || WEXITSTATUS(status))
            fprintf(stderr, "\nrocke %s: worker %u (%s, pid %d) %s\n", cmd, w, p->name[w], (int)p->pid[w], why);
        return;
    }
    wk->busy = false;
    uint32_t item = items[wk->pos];
    if (q->tries[wk->pos]++ < 1) {
        q->pos[q->tail++] = wk->pos;
        fprintf(stderr, "\nrocke %s: worker %u (%s, pid %d) %s running item %u: re-queued\n", cmd, w, p->name[w],
                (int)p->pid[w], why, item);
        return;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "lost twice: worker %u (%s) %s running it", w, p->name[w], why);
    fprintf(stderr, "\nrocke %s: item %u %s: marked failed\n", cmd, item, msg);
    p->lost(p->ud, item, msg);
}

/* Complete lines read from worker w. */
static void take_lines(sw_pool *p, worker *wk, uint32_t w, const uint32_t *items, const char *cmd) {
    char *start = wk->in.data;
    for (char *nl; wk->in.len && (nl = memchr(start, '\n', wk->in.len - (size_t)(start - wk->in.data)));) {
        *nl = 0;
        if (start[0] == '!') {
            fprintf(stderr, "\nrocke %s: worker %u (%s) could not start: %s\n", cmd, w, p->name[w],
                    start[1] ? start + 2 : "");
        } else if (wk->busy) {
            char *tab = strchr(start, '\t');
            wk->busy = false;
            wk->answered++;
            wk->stopping = tab && tab[1] == 's';
            p->done(p->ud, items[wk->pos], w, tab && tab[1] && tab[2] ? tab + 3 : "");
        }
        start = nl + 1;
    }
    size_t rest = wk->in.len - (size_t)(start - wk->in.data);
    memmove(wk->in.data, start, rest);
    wk->in.len = rest;
}

bool sw_pool_run(sw_pool *p, const uint32_t *items, uint32_t n, const char *cmd) {
    if (!n) return true;
    signal(SIGPIPE, SIG_IGN);   /* a dead worker's pipe gives EPIPE, not the end of the sweep */
    fflush(NULL);
    worker wk[SW_MAX_WORKERS] = {0};
    queue q = {.pos = calloc(2 * (size_t)n, sizeof *q.pos), .tries = calloc(n, 1)};
    if (!q.pos || !q.tries) { free(q.pos); free(q.tries); return false; }
    for (uint32_t i = 0; i < n; i++) q.pos[q.tail++] = i;
    uint32_t alive = 0;
    for (uint32_t w = 0; w < p->nworkers; w++) alive += spawn(p, wk, w);
    if (p->pid_file) write_pids(p);
    uint32_t busy = 0;
    while (alive && (q.head < q.tail || busy)) {
        for (uint32_t w = 0; w < p->nworkers && q.head < q.tail; w++) {
            if (!wk[w].alive || wk[w].busy || wk[w].stopping) continue;
            char req[32];
            int len = snprintf(req, sizeof req, "%u\n", items[q.pos[q.head]]);
            wk[w].pos = q.pos[q.head++];
            wk[w].busy = true;
            /* a worker that died meanwhile fails this write; its closed pipe tells the reader below */
            (void)write_all(wk[w].to, req, (size_t)len);
        }
        struct pollfd pf[SW_MAX_WORKERS];
        uint32_t map[SW_MAX_WORKERS], np = 0;
        for (uint32_t w = 0; w < p->nworkers; w++)
            if (wk[w].alive) { pf[np] = (struct pollfd){.fd = wk[w].from, .events = POLLIN}; map[np++] = w; }
        int r = poll(pf, np, 250);
        if (p->tick) p->tick(p->ud);
        for (uint32_t i = 0; r > 0 && i < np; i++) {
            if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            uint32_t w = map[i];
            char buf[65536];
            ssize_t got = read(wk[w].from, buf, sizeof buf);
            if (got > 0) {
                rk_buf_putn(&wk[w].in, buf, (size_t)got);
                take_lines(p, &wk[w], w, items, cmd);
            } else if (got == 0 || errno != EINTR) {
                bool answered = wk[w].answered > 0;
                worker_ended(p, &wk[w], w, items, &q, cmd);
                /* it had worked: start it again (a device that is gone fails to open, and stays down) */
                if (answered && q.head < q.tail && spawn(p, wk, w)) {
                    fprintf(stderr, "rocke %s: worker %u (%s) started again, pid %d\n", cmd, w, p->name[w],
                            (int)p->pid[w]);
                    if (p->pid_file) write_pids(p);
                } else {
                    alive--;
                }
            }
        }
        busy = 0;
        for (uint32_t w = 0; w < p->nworkers; w++) busy += wk[w].alive && wk[w].busy;
    }
    /* no worker left: what remains is lost */
    for (; q.head < q.tail; q.head++) p->lost(p->ud, items[q.pos[q.head]], "no worker left to run it");
    for (uint32_t w = 0; w < p->nworkers; w++) {
        if (wk[w].alive) {
            close(wk[w].to);   /* end of input: the worker closes its device and exits */
            int status;
            waitpid(p->pid[w], &status, 0);
            close(wk[w].from);
        }
        rk_buf_free(&wk[w].in);
    }
    if (p->tick) p->tick(p->ud);
    free(q.pos);
    free(q.tries);
    return true;
}
