/* transport.c: the off-node path: a proxy thread per PE that serves requests sent over MPI.
 *
 * Chapter 2.5. A PE on another (virtual) node shares no memory with us, so tshmem_heap_peer
 * answers NULL for it and the calls of chapters 1.3 and 1.4 come here (tshmem_offnode_*).
 * Each such call becomes a request message to the target PE, where a progress thread, the
 * proxy, applies it to its own slice with the same C11 atomics as the shared-memory path, so
 * that a word is never updated by two atomicity domains. NVSHMEM does the same for
 * InfiniBand with its proxy thread (IBRC).
 *
 *   put     header to the target's proxy (TAG_REQ), then the bytes (TAG_DATA), in chunks;
 *           up to INLINE_BYTES the bytes ride in the header's own message
 *   signal  header; the proxy stores or adds with release order
 *   amo     header; the proxy applies it and, for a fetching one, replies the old value
 *   get     header; the proxy replies the bytes, chunk by chunk (TAG_REPLY)
 *   quiet   a QUIET header to every PE we sent to since the last quiet; the proxy answers
 *           (TAG_ACK) once it reaches it, so everything sent before it has been applied
 *
 * Order: MPI never lets two messages of one sender, tag and communicator overtake each other,
 * and one proxy thread applies a sender's requests one after another, so requests to one PE
 * are applied in the order they were made. That is all tshmem_fence asks of the off-node path.
 *
 * Who serves: the proxy thread when the program computes, and any thread of ours that waits
 * (tshmem_spin_pause calls tshmem_offnode_progress): a PE waiting for a signal takes the
 * request that sets it itself, without waiting for its proxy to be scheduled. One thread at a
 * time serves (net.serve), so one sender's requests are still applied in order. The rule
 * that follows: post every message of a call (a put's bytes, a get's receives) before waiting
 * for any. Two PEs that each wait inside a put to the other may each be serving the other's
 * request, and neither gets back to posting what the other's serve waits for.
 *
 * Provided here: the state, the thread's start, loop and stop, progress, and the message
 * helpers. You write the sender side (tshmem_offnode_*) and what the proxy does with a request
 * (serve).
 */
#define TSHMEM_CHAPTER "2.5"
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tshmem_internal.h"

/* Bytes per data message: big enough to run at the wire's bandwidth, small enough that MPI's
 * int count never overflows and that one sender's large put does not keep a proxy busy for
 * long while others wait. */
#define CHUNK_BYTES ((size_t)1 << 20)

enum { TAG_REQ = 1, TAG_DATA = 2, TAG_REPLY = 3, TAG_ACK = 4 };
enum { REQ_PUT, REQ_GET, REQ_SIGNAL, REQ_AMO, REQ_QUIET, REQ_STOP };
enum { PUT_INLINE = 1 }; /* a PUT's sub: its bytes came in the request's message */

/* One request, as it travels. Addresses travel as offsets from the start of a slice: the
 * symmetric heap puts a word at the same offset in every PE's slice. */
struct request {
    uint32_t op;     /* REQ_* */
    uint32_t sub;    /* the tshmem_amo of an AMO, the sig_op of a SIGNAL, PUT_INLINE */
    uint64_t offset; /* target bytes or word, from the start of the target's slice */
    uint64_t nbytes; /* PUT, GET: bytes that follow (PUT) or are asked for (GET) */
    uint64_t value;  /* SIGNAL, AMO: the operand */
    uint64_t cond;   /* AMO compare-and-swap: the expected value */
    uint64_t due;    /* the link model's arrival time (ns, CLOCK_MONOTONIC); 0 without it */
};

/* A put up to this size travels in one message, header and bytes together: one message
 * instead of two, for a copy of at most this much on each side. Open MPI sends messages up
 * to 4 KiB eagerly over shared memory, so header and bytes stay below its eager limit. */
#define INLINE_BYTES ((size_t)4096 - sizeof(struct request))

/* A request with its inline bytes, as the proxy receives it. */
struct request_msg {
    struct request r;
    char bytes[INLINE_BYTES];
};

static struct {
    int active;              /* a proxy thread runs: some PE is on another node */
    MPI_Comm comm;           /* the transport's own communicator (a copy of tshmem_g.comm) */
    pthread_t thread;
    unsigned char *pending;  /* pending[pe]: we sent pe something that quiet must confirm */
    int n_pending;           /* how many pending[] are set */
    pthread_mutex_t lock;    /* one of this PE's threads at a time sends (see net_lock) */
    pthread_mutex_t serve;   /* one of this PE's threads at a time takes requests */
    _Atomic uint64_t polled; /* when another thread than the proxy last polled (ns) */
    atomic_int stop;         /* REQ_STOP was taken: the proxy thread ends */
    struct request_msg taken; /* under the serve lock: the request being taken */
} net = {.lock = PTHREAD_MUTEX_INITIALIZER, .serve = PTHREAD_MUTEX_INITIALIZER};

/* The program's thread and chapter 2.4's progress thread may both reach another node at the
 * same time. A PUT header and its bytes, a request and its reply, quiet's QUIETs and their
 * acknowledgements must not interleave with the other thread's, so each tshmem_offnode_* call
 * holds this lock from its first message to its last. The proxy thread never takes it: it
 * answers other PEs whatever our own threads are doing. */
static inline void net_lock(void) { pthread_mutex_lock(&net.lock); }
static inline void net_unlock(void) { pthread_mutex_unlock(&net.lock); }

static inline uint64_t offset_of(const char *func, const void *addr)
{
    const char *p = addr;
    if (p < tshmem_g.slice || p >= tshmem_g.slice + tshmem_g.slice_bytes)
        tshmem_fail(func, "address %p is not in this PE's symmetric heap.", addr);
    return (uint64_t)(p - tshmem_g.slice);
}

/* The proxy's view of [offset, offset + nbytes) in its own slice; stops on a bad request. */
static inline char *local_bytes(uint64_t offset, uint64_t nbytes, int from)
{
    if (offset > tshmem_g.slice_bytes || nbytes > tshmem_g.slice_bytes - offset)
        tshmem_fail("proxy", "PE %d asked for %llu bytes at heap offset %llu, outside this "
                    "PE's slice of %zu bytes: do both PEs run with the same "
                    "TSHMEM_SYMMETRIC_SIZE?", from, (unsigned long long)nbytes,
                    (unsigned long long)offset, tshmem_g.slice_bytes);
    return tshmem_g.slice + offset;
}

/* The main thread's waits: test the request, back off between tests (tshmem_spin_pause), and
 * say what we wait for after TSHMEM_HANG_WARN seconds. MPI's own blocking calls would spin on a
 * core. `pe` is the PE whose answer we wait for, or -1 for every PE. */
static void wait_request(MPI_Request *req, const char *func, int pe)
{
    struct tshmem_spin spin;
    tshmem_spin_init(&spin, func, NULL);
    spin.warned = 1; /* its message speaks of a heap word; ours names the PE */
    long limit = tshmem_env_int("TSHMEM_HANG_WARN");
    time_t start = time(NULL);
    int warned = 0;
    for (;;) {
        int done = 0;
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        tshmem_spin_pause(&spin);
        if (!warned && limit > 0 && (spin.spins & 1023) == 0 && time(NULL) - start >= limit) {
            warned = 1;
            if (pe >= 0)
                tshmem_warn(func, "has waited %ld s for PE %d (node %d) to answer through its "
                            "proxy thread. Is that PE stopped, or stuck in a long call that "
                            "keeps its proxy from running?", limit, pe, tshmem_g.pe_node[pe]);
            else
                tshmem_warn(func, "has waited %ld s for every PE to call tshmem_finalize. Does "
                            "some PE skip it, or wait for something that never comes?", limit);
        }
    }
}

static inline void send_bytes(const void *buf, size_t nbytes, int pe, int tag, const char *func)
{
    MPI_Request req;
    MPI_Isend(buf, (int)nbytes, MPI_BYTE, pe, tag, net.comm, &req);
    wait_request(&req, func, pe);
}

static inline void recv_bytes(void *buf, size_t nbytes, int pe, int tag, const char *func)
{
    MPI_Request req;
    MPI_Irecv(buf, (int)nbytes, MPI_BYTE, pe, tag, net.comm, &req);
    wait_request(&req, func, pe);
}

/* The link model (TSHMEM_LINK="1.25GB/s,5us", link.c): a request is stamped with the time a
 * network card would deliver it, header and a put's bytes; the target serves it then, or, if
 * it is answered, when its answer would be back. */
#define now_ns tshmem_now_ns

static void link_stamp(struct request *r)
{
    if (r->op != REQ_STOP)
        r->due = tshmem_link_stamp(sizeof *r + (r->op == REQ_PUT ? r->nbytes : 0));
}

static uint64_t link_due(const struct request *r)
{
    int fetch = r->op == REQ_AMO && r->sub != TSHMEM_AMO_SET && r->sub != TSHMEM_AMO_ADD;
    return tshmem_link_served_due(r->due, r->op == REQ_GET || r->op == REQ_QUIET || fetch,
                                  r->op == REQ_GET ? r->nbytes : fetch ? 8 : 0);
}

/* Posts a request message to pe's proxy: a struct request, followed by inline bytes if any
 * (`bytes` in all). The link model stamps it; `msg` must live until `req` completes. */
static void post_request(void *msg, size_t bytes, int pe, MPI_Request *req)
{
    link_stamp(msg);
    MPI_Isend(msg, (int)bytes, MPI_BYTE, pe, TAG_REQ, net.comm, req);
}

static void send_request(struct request *r, int pe, const char *func)
{
    MPI_Request req;
    post_request(r, sizeof *r, pe, &req);
    wait_request(&req, func, pe);
}

/* pe has requests of ours that only a quiet confirms. */
static inline void mark_pending(int pe)
{
    if (!net.pending[pe]) {
        net.pending[pe] = 1;
        net.n_pending++;
    }
}

/* A reply from pe came after everything we sent it before: nothing is pending there. */
static inline void clear_pending(int pe)
{
    if (net.pending[pe]) {
        net.pending[pe] = 0;
        net.n_pending--;
    }
}

_Noreturn static void no_transport(const char *func, int pe)
{
    tshmem_fail(func, "PE %d is on node %d and this PE is on node %d, but the off-node "
                "transport is not running (tshmem_transport_start found every PE on one node).",
                pe, tshmem_g.pe_node[pe], tshmem_g.node);
}

void tshmem_offnode_put(void *dest, const void *source, size_t nbytes, int pe)
{
    if (!net.active)
        no_transport("tshmem_putmem", pe);
    net_lock();
    (void)dest; (void)source; (void)nbytes;
    TSHMEM_TODO("Remote put", "send a PUT header and then the bytes to pe's proxy, one chunk at a time; mark pe pending");
    net_unlock();
}

void tshmem_offnode_get(void *dest, const void *source, size_t nbytes, int pe)
{
    if (!net.active)
        no_transport("tshmem_getmem", pe);
    net_lock();
    (void)dest; (void)source; (void)nbytes;
    TSHMEM_TODO("Remote get", "ask pe's proxy for the bytes with one GET request and receive them chunk by chunk into dest");
    net_unlock();
}

void tshmem_offnode_signal(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    if (!net.active)
        no_transport("tshmem_signal_op", pe);
    net_lock();
    (void)sig_addr; (void)signal; (void)sig_op;
    TSHMEM_TODO("Remote signal and atomics", "send a SIGNAL request; the proxy applies it after every earlier request of ours");
    net_unlock();
}

uint64_t tshmem_offnode_amo(enum tshmem_amo op, uint64_t *dest, uint64_t value, uint64_t cond,
                            int pe)
{
    if (!net.active)
        no_transport("tshmem_uint64_atomic", pe);
    uint64_t old = 0;
    net_lock();
    (void)op; (void)dest; (void)value; (void)cond;
    TSHMEM_TODO("Remote signal and atomics", "send an AMO request; for a fetching one wait for the proxy's reply");
    net_unlock();
    return old;
}

void tshmem_offnode_quiet(void)
{
    if (!net.active)
        return; /* every PE on one node: nothing can be pending */
    net_lock();
    if (net.n_pending == 0) { /* nothing sent off-node since the last quiet */
        net_unlock();
        return;
    }
    TSHMEM_TODO("Quiet: waiting for acknowledgements", "send QUIET to every pending PE, then wait for all their acknowledgements");
    net_unlock();
}

/* What the proxy does with one request from PE `from`. It runs on the proxy thread (or a
 * waiting thread of ours, see progress), one request at a time, in the order each sender sent
 * them. A PUT of up to INLINE_BYTES came with its bytes: `inline_bytes` points to them. */
static void serve(const struct request *r, const char *inline_bytes, int from)
{
    (void)r; (void)inline_bytes; (void)from;
    TSHMEM_TODO("The proxy thread", "apply a PUT, GET, SIGNAL, AMO or QUIET request to this PE's slice with C11 atomics, and answer where the sender waits");
}

/* Under the link model, a request m (in net.taken) that has come from `from`: the one to serve
 * now, or NULL when it is not due yet, or something of its sender is held before it. Then it
 * waits in the link as a copy, a put's bytes with it, received now: the sender's MPI_Isend
 * completes without waiting for the request's time, as a card's DMA would. */
static struct request_msg *link_arrive(struct request_msg *m, int from)
{
    uint64_t due = link_due(&m->r);
    int big_put = m->r.op == REQ_PUT && m->r.sub != PUT_INLINE;
    if (due <= now_ns() && !tshmem_link_holds(from))
        return m;
    size_t bytes = m->r.op == REQ_PUT ? m->r.nbytes : 0;
    struct request_msg *copy = malloc(offsetof(struct request_msg, bytes) + bytes);
    if (!copy)
        tshmem_fail("proxy", "out of memory for a request of %zu bytes from PE %d on the link.",
                    bytes, from);
    char *to = (char *)copy + offsetof(struct request_msg, bytes);
    copy->r = m->r;
    if (big_put) { /* its bytes are the next TAG_DATA message from `from` */
        MPI_Recv(to, (int)bytes, MPI_BYTE, from, TAG_DATA, net.comm, MPI_STATUS_IGNORE);
        copy->r.sub = PUT_INLINE;
    } else {
        memcpy(to, m->bytes, bytes);
    }
    tshmem_link_hold(copy, from, due);
    return NULL;
}

/* Takes and serves the requests that have arrived, up to a handful; returns how many. One
 * thread at a time: another that finds the lock taken returns at once (that one serves).
 * Under the link model the requests that have fallen due come first, and every message is
 * taken as it arrives, to wait in the link until it is due (link_arrive). */
static int poll_requests(void)
{
    if (pthread_mutex_trylock(&net.serve) != 0)
        return 0;
    int served = 0, from;
    struct request_msg *m;
    while (net.active && served < 16 && tshmem_link_on() && (m = tshmem_link_next(&from))) {
        serve(&m->r, (char *)m + offsetof(struct request_msg, bytes), from);
        free(m);
        served++;
    }
    for (int taken = 0; net.active && served < 16 && taken < 64; taken++) {
        /* active: not stopped since the caller looked */
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        /* Probe, not a blocking receive: Open MPI's blocking calls spin on a core. */
        MPI_Improbe(MPI_ANY_SOURCE, TAG_REQ, net.comm, &flag, &msg, &st);
        if (!flag)
            break;
        m = &net.taken;
        MPI_Mrecv(m, (int)sizeof *m, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        if (m->r.op == REQ_STOP) {
            /* Our own finalize sent it, after every PE's last request: whichever thread
             * takes it, the proxy ends. */
            atomic_store_explicit(&net.stop, 1, memory_order_release);
            break;
        }
        if (m->r.due && !link_arrive(m, st.MPI_SOURCE))
            continue; /* still on the wire */
        serve(&m->r, m->bytes, st.MPI_SOURCE);
        served++;
    }
    pthread_mutex_unlock(&net.serve);
    return served;
}

/* Called by every wait loop (tshmem_spin_pause): a thread that waits, most often for a word
 * that a request of another node will set, serves the requests itself. Waking the proxy
 * thread instead costs a scheduler round trip, several microseconds, on every message. */
void tshmem_offnode_progress(void)
{
    if (!net.active)
        return;
    atomic_store_explicit(&net.polled, now_ns(), memory_order_relaxed);
    poll_requests();
}

/* The proxy's idle back-off. After a request it keeps polling, giving its core away between
 * polls, for SPIN_NS: the next request of a burst (a put's signal, the next ping) is taken at
 * once. Then it sleeps, longer and longer up to 200 us, so that an idle proxy costs a few
 * thousand wake-ups a second, not a core. While another thread of ours polls (it waits in
 * tshmem), that thread serves, and the proxy sleeps. */
#define SPIN_NS 50000u
static void idle_pause(uint64_t last_request, unsigned *sleeps)
{
    uint64_t t = now_ns();
    uint64_t polled = atomic_load_explicit(&net.polled, memory_order_relaxed);
    if (tshmem_link_on() && (tshmem_link_next_due() || t - last_request < SPIN_NS)) {
        /* The card's receiving side, while requests are on the wire or a burst goes on: wake
         * when the first falls due, and look for new messages between naps that grow from
         * 20 us (tshmem_link_nap). A yield would wait out the time slices of busy threads. */
        tshmem_link_nap(16 * (unsigned long)(*sleeps)++);
        return;
    }
    if (t - last_request < SPIN_NS && t - polled > SPIN_NS) {
        *sleeps = 0;
        sched_yield();
        return;
    }
    long us = *sleeps >= 8 ? 200 : 1L << *sleeps;
    ++*sleeps;
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static void *proxy_main(void *arg)
{
    (void)arg;
    uint64_t last = now_ns();
    unsigned sleeps = 0;
    while (!atomic_load_explicit(&net.stop, memory_order_acquire)) {
        if (poll_requests() > 0) {
            last = now_ns();
            sleeps = 0;
        } else {
            idle_pause(last, &sleeps);
        }
    }
    return NULL;
}

/* A PE that leaves main without tshmem_finalize would leave its peers waiting for it there,
 * and its proxy would no longer answer their requests. Say so, and end the job. */
static void exit_check(void)
{
    if (net.active && tshmem_g.initialized) {
        tshmem_warn("exit", "this PE ended without calling tshmem_finalize, and PEs on other "
                    "nodes reach its memory through its proxy thread, which ends with it. Call "
                    "tshmem_finalize on every PE before leaving main.");
        _exit(TSHMEM_EXIT_ERROR);
    }
}

void tshmem_transport_start(void)
{
    if (tshmem_g.n_nodes <= 1)
        return; /* every PE on this node: the shared-memory path reaches them all */
    int level;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE)
        tshmem_fail("tshmem_init", "this job has %d nodes, and the off-node transport needs "
                    "MPI_THREAD_MULTIPLE (its proxy thread calls MPI beside the program), but "
                    "MPI gave thread level %d. If the program initializes MPI itself, use "
                    "MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided).",
                    tshmem_g.n_nodes, level);
    MPI_Comm_dup(tshmem_g.comm, &net.comm);
    net.pending = calloc((size_t)tshmem_g.n_pes, 1);
    net.n_pending = 0;
    atomic_store(&net.stop, 0);
    tshmem_link_setup(tshmem_g.n_pes);
    if (pthread_create(&net.thread, NULL, proxy_main, NULL) != 0)
        tshmem_fail("tshmem_init", "could not start the proxy thread (out of threads?).");
    static int registered;
    if (!registered && atexit(exit_check) == 0)
        registered = 1;
    net.active = 1;
}

void tshmem_transport_stop(void)
{
    tshmem_teams_release();
    if (!net.active)
        return;
    /* Complete what we sent, then wait until every PE has done the same: after that no PE
     * will send a request again, and each proxy may stop. Our proxy goes on serving the
     * others while we wait. */
    tshmem_offnode_quiet();
    MPI_Request all;
    MPI_Ibarrier(net.comm, &all);
    wait_request(&all, "tshmem_finalize", -1);
    struct request stop = {.op = REQ_STOP};
    send_request(&stop, tshmem_g.my_pe, "tshmem_finalize");
    pthread_join(net.thread, NULL);
    /* Under the serve lock: a thread of ours that polls sees the transport stopped before
     * its communicator goes. */
    pthread_mutex_lock(&net.serve);
    net.active = 0;
    pthread_mutex_unlock(&net.serve);
    MPI_Comm_free(&net.comm);
    free(net.pending);
    net.pending = NULL;
}
