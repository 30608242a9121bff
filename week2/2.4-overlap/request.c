/* request.c: non-blocking collectives: requests, the progress thread, test and wait.
 *
 * Chapter 2.4. tshmem_allreduce_nb checks the call on the program's thread, numbers it, puts a
 * request on a queue and returns (tshmem_fcollectmem_nb too: chapter 3.4 writes what its
 * request does). One progress thread per PE takes requests off the queue in
 * the order they were started and carries each out (nb_allreduce.c). Because every PE starts
 * its non-blocking collectives in the same order, every PE's progress thread runs the same
 * call at the same time, which is all a collective needs. The program learns of completion
 * through tshmem_test (a look) or tshmem_wait (a sleep until the thread says "done").
 *
 * Two threads now share this file's state: the queue, the pool of requests and their `done`
 * bits are read and written under one mutex; the thread sleeps on a condition variable while
 * the queue is empty, and the program sleeps on another while it waits. Neither ever spins on
 * the other. The chunks, flags and landing zone of the algorithm are touched by the progress
 * thread alone.
 */
#define TSHMEM_CHAPTER "2.4"
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "tshmem_internal.h"

/* Provided: the state the program's thread and the progress thread share. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t work;  /* signalled when a request is queued or the thread must stop */
    pthread_cond_t done;  /* broadcast when a request is done */
    struct tshmem_request *head, *tail; /* queued, not yet taken by the thread */
    int started;          /* the thread runs */
    int running;          /* a request taken off the queue is being carried out */
    int stop;             /* tshmem_finalize asks it to end */
    int polling;          /* the thread looks at the queue by itself every POLL_NS (see
                           * progress_main): a small request needs no wake-up */
    pthread_t thread;
    struct tshmem_request pool[TSHMEM_MAX_REQUESTS];
    int in_use;           /* requests handed out and not yet completed by test or wait */
    uint64_t n_started;   /* every non-blocking collective this PE ever started */
    uint64_t next_chunk[TSHMEM_MAX_TEAMS]; /* the next chunk number of each team (progress
                                            * thread side: numbered at start, used by it) */
} nb = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .work = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
};

uint64_t tshmem_nb_started(void)
{
    return nb.n_started;
}

/* Provided: a handle the program passed in, checked: it must point at a request of the pool
 * that is in use. A handle that was already completed was set to NULL by test or wait. */
static struct tshmem_request *request_check(const char *func, tshmem_request_t *req)
{
    if (req == NULL)
        tshmem_fail(func, "PE %d passed req = NULL: pass the address of a tshmem_request_t that "
                    "a non-blocking collective filled in.", tshmem_g.my_pe);
    struct tshmem_request *r = *req;
    if (r == NULL)
        tshmem_fail(func, "PE %d passed a request that is TSHMEM_REQUEST_NULL: it was already "
                    "completed by tshmem_wait or tshmem_test (which set it to NULL), or never "
                    "started. Wait for each request once.", tshmem_g.my_pe);
    /* Addresses compared as integers: a pointer from elsewhere is not part of the pool array. */
    uintptr_t at = (uintptr_t)r, first = (uintptr_t)nb.pool;
    if (at < first || at >= first + sizeof nb.pool || (at - first) % sizeof *r != 0 ||
        r->magic != TSHMEM_REQUEST_MAGIC)
        tshmem_fail(func, "PE %d passed %p, which is not a request in flight: it was completed "
                    "already (through a copy of the handle) or never came from "
                    "tshmem_allreduce_nb.", tshmem_g.my_pe, (void *)r);
    return r;
}

static void *progress_main(void *arg);

/* Requests up to GRACE_BYTES are left GRACE_NS to the program's tshmem_wait before the
 * progress thread takes them; while requests keep coming (one in the last ACTIVE_NS), the
 * thread looks at the queue every POLL_NS by itself, so that the start of a small one wakes
 * nobody (see request_queue and progress_main). */
#define GRACE_BYTES ((size_t)16 << 10)
#define GRACE_NS 50000
#define POLL_NS 1000000
#define ACTIVE_NS 50000000

/* Provided: hands r back to the pool. Called with the lock held. */
static void request_release(struct tshmem_request *r)
{
    r->magic = 0;
    nb.in_use--;
}

/* Provided: starts the progress thread, once. Called with the lock held. Started lazily: a
 * program that never calls a non-blocking collective pays nothing for it. */
static void progress_start(void)
{
    if (nb.started)
        return;
    if (tshmem_thread_start(&nb.thread, progress_main, NULL, "tshmem-progress",
                            TSHMEM_THREAD_DEFERS_BOUND) != 0)
        tshmem_fail("tshmem_allreduce_nb", "PE %d could not start its progress thread; check "
                    "the process and thread limits (ulimit -u).", tshmem_g.my_pe);
    nb.started = 1;
}

/* Puts a checked request on the queue, starting the progress thread at the first one. */
static void request_queue(struct tshmem_request *r)
{
    pthread_mutex_lock(&nb.lock);
    progress_start();
    (void)r;
    TSHMEM_TODO("The progress thread", "append r to the queue (head, tail, next) and wake the thread");
    pthread_mutex_unlock(&nb.lock);
}

/* Takes the request at the head of the queue and carries it out, without the lock while it
 * runs (the program may start, test or wait meanwhile). Called with the lock held, by the
 * progress thread or by a program thread that waits (tshmem_wait). */
static inline void run_head(void)
{
    TSHMEM_TODO("The progress thread", "take the head request off the queue, run it without the lock (nb.running set meanwhile), then mark it done, wake the waiters, and wake the thread if more is queued");
}

/* TODO (chapter 2.4, "The progress thread"): optional: helpers for the timed sleeps of GRACE_NS and POLL_NS */

static void *progress_main(void *arg)
{
    (void)arg;
    TSHMEM_TODO("The progress thread", "sleep while the queue is empty, run requests in queue order, mark each done");
}

/* Gives a checked call of `kind` a request of the pool and its n_chunks chunk numbers on its
 * team (an allreduce: one per chunk of its vector; an fcollect: one), in start order. */
static struct tshmem_request *request_start(const char *func, const struct tshmem_reduce_call *c,
                                            size_t n_chunks, enum tshmem_nb_kind kind)
{
    struct tshmem_request *r = NULL;
    (void)func; (void)c; (void)n_chunks; (void)kind;
    TSHMEM_TODO("Requests", "take a free request r of the pool (stop if none), give the call its chunk numbers on the team, fill r in (done at once if it has no chunk)");
    return r;
}

/* Provided: the start and the end every non-blocking call shares, around request_start. */
static void request_begin(const char *func, tshmem_request_t *req)
{
    if (req == NULL)
        tshmem_fail(func, "PE %d passed req = NULL: pass the address of a tshmem_request_t to "
                    "receive the request.", tshmem_g.my_pe);
    *req = TSHMEM_REQUEST_NULL;
    nb.n_started++;
}

static int request_end(struct tshmem_request *r, tshmem_request_t *req)
{
    const struct tshmem_reduce_call *c = &r->call;
    r->bytes = r->kind == TSHMEM_NB_FCOLLECT ? (size_t)c->n * c->bytes : c->bytes;
    if (r->n_chunks > 0)
        request_queue(r); /* nothing to move: done already, no PE needs another */
    *req = r;
    return 0;
}

int tshmem_allreduce_nb(tshmem_team_t team, void *dest, const void *source, size_t count,
                        enum tshmem_dtype dtype, enum tshmem_op op, tshmem_request_t *req)
{
    /* Recorded as the team's next collective call (TSHMEM_COLLECTIVE): every PE starts the same
     * ones in the same order. The progress thread's work is marked in nb_allreduce.c. */
    TSHMEM_COLLECTIVE(TSHMEM_FN_ALLREDUCE_NB, team, count, dtype, op);
    request_begin(__func__, req);
    struct tshmem_reduce_call call;
    size_t n_chunks = 0;
    (void)dest; (void)source;
    TSHMEM_TODO("Requests", "check the call as 2.2 does and count its chunks on the team (none for count 0)");
    return request_end(request_start(__func__, &call, n_chunks, TSHMEM_NB_ALLREDUCE), req);
}

/* Provided: the checks of 2.3's tshmem_fcollectmem, then one chunk number. What the progress
 * thread does with it is chapter 3.4's (tshmem_nb_fcollect_run). */
int tshmem_fcollectmem_nb(tshmem_team_t team, void *dest, const void *source, size_t nbytes,
                          tshmem_request_t *req)
{
    const char *func = __func__;
    TSHMEM_COLLECTIVE(TSHMEM_FN_FCOLLECTMEM_NB, team, nbytes, 0, 0);
    request_begin(func, req);
    struct tshmem_collect_call cc;
    tshmem_collect_begin(&cc, func, team); /* live, team, member; its number is skipped alike */
    if (nbytes > SIZE_MAX / (size_t)cc.n)
        tshmem_fail(func, "PE %d: nbytes %zu times the team's %d PEs does not fit in size_t.",
                    tshmem_g.my_pe, nbytes, cc.n);
    size_t total = nbytes * (size_t)cc.n;
    const char *d = dest, *s = source;
    if (nbytes > 0) {
        tshmem_collect_check_room(func, "dest", dest, total);
        if (source == NULL)
            tshmem_fail(func, "PE %d: source is NULL but nbytes is %zu.", tshmem_g.my_pe,
                        nbytes);
        if (s != d + (size_t)cc.me * nbytes && s < d + total && d < s + nbytes)
            tshmem_fail(func, "PE %d: source %p overlaps dest %p (%zu bytes): pass a separate "
                        "source, or your block's own place in dest (dest + %d x nbytes).",
                        tshmem_g.my_pe, source, dest, total, cc.me);
    }
    struct tshmem_reduce_call call = {.func = func, .team = team, .t = cc.t, .me = cc.me,
                                      .n = cc.n, .dest = dest, .source = source,
                                      .count = nbytes, .elem = 1, .bytes = nbytes};
    return request_end(request_start(func, &call, nbytes > 0, TSHMEM_NB_FCOLLECT), req);
}

int tshmem_test(tshmem_request_t *req, int *done)
{
    tshmem_require_live(__func__);
    struct tshmem_request *r = request_check(__func__, req);
    if (done == NULL)
        tshmem_fail(__func__, "PE %d passed done = NULL: pass the address of an int.",
                    tshmem_g.my_pe);
    pthread_mutex_lock(&nb.lock);
    TSHMEM_TODO("Testing and waiting", "set *done to whether the progress thread has finished r (the lock is held)");
    if (*done)
        request_release(r);
    pthread_mutex_unlock(&nb.lock);
    if (*done)
        *req = TSHMEM_REQUEST_NULL;
    return 0;
}

int tshmem_wait(tshmem_request_t *req)
{
    tshmem_require_live(__func__);
    struct tshmem_request *r = request_check(__func__, req);
    pthread_mutex_lock(&nb.lock);
    TSHMEM_TODO("Testing and waiting", "sleep (never spin) until the progress thread has finished r (the lock is held)");
    request_release(r);
    pthread_mutex_unlock(&nb.lock);
    *req = TSHMEM_REQUEST_NULL;
    return 0;
}

int tshmem_waitall(tshmem_request_t *reqs, size_t n)
{
    tshmem_require_live(__func__);
    if (reqs == NULL && n > 0)
        tshmem_fail(__func__, "PE %d passed reqs = NULL with n = %zu.", tshmem_g.my_pe, n);
    for (size_t i = 0; i < n; i++)
        if (reqs[i] != TSHMEM_REQUEST_NULL)
            tshmem_wait(&reqs[i]);
    return 0;
}

/* Provided: the finalize hook. No request may be in flight (its peers would wait forever for
 * this PE's part); then the thread is told to stop and joined. */
void tshmem_progress_finalize(void)
{
    pthread_mutex_lock(&nb.lock);
    int in_use = nb.in_use, started = nb.started;
    pthread_mutex_unlock(&nb.lock);
    if (in_use > 0)
        tshmem_fail("tshmem_finalize", "PE %d still has %d non-blocking request%s in flight: "
                    "call tshmem_wait (or tshmem_waitall) on every request before "
                    "tshmem_finalize.", tshmem_g.my_pe, in_use, in_use == 1 ? "" : "s");
    if (!started)
        return;
    pthread_mutex_lock(&nb.lock);
    nb.stop = 1;
    pthread_cond_signal(&nb.work);
    pthread_mutex_unlock(&nb.lock);
    pthread_join(nb.thread, NULL);
    nb.started = nb.stop = 0;
}
