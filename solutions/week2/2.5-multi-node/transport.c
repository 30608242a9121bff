/* transport.c: the off-node path's machinery (provided): the transport's state, the waits and
 * request messages, the link model's hooks (the model itself is link.c), and the proxy thread:
 * its start, its loop, progress for the threads that wait, and its stop.
 *
 * Chapter 2.5. transport.h describes the protocol; requests.c, the part you write, sends the
 * requests and serves them (tshmem_proxy_serve), called from poll_requests below.
 */
#define TSHMEM_CHAPTER "2.5"
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

struct transport tshmem_net = {.lock = PTHREAD_MUTEX_INITIALIZER,
                               .serve = PTHREAD_MUTEX_INITIALIZER};

/* A PE's doorbell, as a network card's interrupt: `rings` counts the requests posted to the
 * PE, and a thread of the PE that has nothing to do sleeps on it (a futex) instead of napping
 * blind. Its own cache line: senders write it while the PE's threads read it. */
struct tshmem_bell {
    _Alignas(64) _Atomic uint32_t rings;
    _Atomic uint32_t sleepers; /* threads of the PE asleep on rings, or about to be */
    /* When a thread of the PE last looked for requests (ns). On a line of its own: the PE
     * writes it at every look, and sharing the line with `rings` and `sleepers`, which every
     * sender reads, would move that line between the cores at every look and every send. */
    _Alignas(64) _Atomic uint64_t polled;
};

static __thread int rung; /* this thread's last sleep ended with a ring */

static long futex(_Atomic uint32_t *word, int op, uint32_t value, const struct timespec *rel)
{
    return syscall(SYS_futex, (uint32_t *)word, op, value, rel, NULL, 0);
}

/* The doorbells of this machine's PEs: one segment per machine, made by its lowest PE and
 * unlinked as soon as every PE of the machine has mapped it (tshrun removes it after a crash:
 * its name starts like the heap's). Across machines a PE has no bell of ours to ring; nor
 * where the segment could not be made: then every sleep is a nap that ends on its own. */
static void bells_open(void)
{
    int me = tshmem_g.my_pe, n = tshmem_g.n_pes, leader = me;
    MPI_Comm machine;
    MPI_Comm_split_type(tshmem_net.comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &machine);
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, machine);
    int *leaders = malloc(sizeof(int) * (size_t)n);
    tshmem_net.bell_here = calloc((size_t)n, 1);
    if (!leaders || !tshmem_net.bell_here)
        tshmem_fail("tshmem_init", "out of memory for the doorbells of %d PEs.", n);
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, tshmem_net.comm);
    for (int pe = 0; pe < n; pe++)
        tshmem_net.bell_here[pe] = leaders[pe] == leader;
    free(leaders);
    long pid = (long)getpid(); /* names the job when tshrun did not */
    MPI_Bcast(&pid, 1, MPI_LONG, 0, tshmem_net.comm);
    char job[32], name[96];
    const char *id = tshmem_env_str("TSHMEM_JOB_ID");
    if (id && *id)
        snprintf(job, sizeof job, "%s", id);
    else
        snprintf(job, sizeof job, "p%ld", pid);
    for (char *c = job; *c; c++) /* as the heap's segment spells it */
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')
              || *c == '-'))
            *c = '_';
    snprintf(name, sizeof name, "/tshmem-%u-%s-bells%d", (unsigned)getuid(), job, leader);
    size_t bytes = sizeof(struct tshmem_bell) * (size_t)n;
    int fd = -1;
    if (me == leader) {
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd >= 0 && ftruncate(fd, (off_t)bytes) != 0) {
            close(fd);
            shm_unlink(name);
            fd = -1;
        }
    }
    MPI_Barrier(machine);
    if (me != leader)
        fd = shm_open(name, O_RDWR, 0);
    void *at = fd >= 0 ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    MPI_Barrier(machine);
    if (me == leader)
        shm_unlink(name);
    MPI_Comm_free(&machine);
    tshmem_net.bells = at == MAP_FAILED ? NULL : at;
}

static void bells_close(void)
{
    if (tshmem_net.bells)
        munmap(tshmem_net.bells, sizeof(struct tshmem_bell) * (size_t)tshmem_g.n_pes);
    tshmem_net.bells = NULL;
    free(tshmem_net.bell_here);
    tshmem_net.bell_here = NULL;
}

/* When a thread of ours other than the proxy last polled, 0 once it sleeps: in our doorbell,
 * where senders read it, or in tshmem_net.polled when there is none. */
static _Atomic uint64_t *polled_word(void)
{
    return tshmem_net.bells ? &tshmem_net.bells[tshmem_g.my_pe].polled : &tshmem_net.polled;
}

#define POLLING_NS 20000u /* a thread that polled this recently is still polling */

/* After a request to pe has been posted: wake pe's sleeping threads, if any. No system call
 * while none sleeps. */
static void bell_ring(int pe)
{
    if (!tshmem_net.bells || !tshmem_net.bell_here[pe])
        return;
    struct tshmem_bell *b = &tshmem_net.bells[pe];
    /* While no thread of pe sleeps, nobody waits on `rings`: leave the line alone. A thread
     * that is about to sleep counts itself among the sleepers and then looks for requests once
     * more (tshmem_offnode_sleep); our request was posted before this fence and our look at the
     * count comes after it, so either we see the sleeper or it sees the request. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&b->sleepers, memory_order_relaxed) == 0)
        return;
    atomic_fetch_add(&b->rings, 1);
    /* A thread of pe that has just looked for requests, and is looking again, takes this one
     * sooner than a sleeper we would wake (and that would then contend with it). */
    if (atomic_load(&b->sleepers) > 0 &&
        tshmem_now_ns() - atomic_load_explicit(&b->polled, memory_order_relaxed) > POLLING_NS)
        futex(&b->rings, FUTEX_WAKE, INT_MAX, NULL);
}

/* The waits of our threads: test the request, back off between tests (tshmem_spin_pause), and
 * say what we wait for after TSHMEM_HANG_WARN seconds. MPI's own blocking calls would spin on a
 * core. */
void tshmem_net_wait_request(MPI_Request *req, const char *func, int pe)
{
    int done = 0;
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) /* most sends of a request: eager, done at once; no wait to set up */
        return;
    struct tshmem_spin spin;
    tshmem_spin_init(&spin, func, NULL);
    spin.warned = 1; /* its message speaks of a heap word; ours names the PE */
    long limit = tshmem_net.hang_warn;
    time_t start = time(NULL);
    int warned = 0;
    for (;;) {
        tshmem_spin_pause(&spin);
        if (rung) {
            /* A ring: the other side has started on what we wait for (it receives our bytes,
             * or answers). MPI moves a message of more than a few KiB in pieces, each needing
             * a call of ours: poll at full speed again before napping. */
            rung = 0;
            spin.spins = 0;
        }
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
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
    int acked = r->op == REQ_QUIET || (r->op == REQ_PUT && (r->sub & PUT_QUIET));
    size_t back = fetch ? 8 : r->op == REQ_GET ? r->nbytes : 0; /* bytes of the answer */
    return tshmem_link_served_due(r->due, r->op == REQ_GET || acked || fetch, back);
}

void tshmem_net_post_request(void *msg, size_t bytes, int pe, MPI_Request *req)
{
    link_stamp(msg);
    MPI_Isend(msg, (int)bytes, MPI_BYTE, pe, TAG_REQ, tshmem_net.comm, req);
    bell_ring(pe);
}

void tshmem_net_send_request(struct request *r, int pe, const char *func)
{
    MPI_Request req;
    tshmem_net_post_request(r, sizeof *r, pe, &req);
    tshmem_net_wait_request(&req, func, pe);
}

void tshmem_net_flush_staged(void)
{
    int pe = atomic_load_explicit(&tshmem_net.staged_pe, memory_order_relaxed);
    if (pe < 0)
        return;
    atomic_store_explicit(&tshmem_net.staged_pe, -1, memory_order_relaxed);
    MPI_Request req;
    tshmem_net_post_request(&tshmem_net.staged,
                            sizeof tshmem_net.staged.r + tshmem_net.staged.r.nbytes, pe, &req);
    tshmem_net_wait_request(&req, "tshmem_putmem", pe);
}

/* A staged put leaves at the latest when a thread of ours waits or the proxy idles: a PE that
 * puts and then computes must not hold its put back until its next call. trylock: a thread
 * inside a tshmem_offnode_* call holds the send lock, and that call sends the put itself. */
static void flush_idle(void)
{
    if (atomic_load_explicit(&tshmem_net.staged_pe, memory_order_relaxed) < 0 ||
        pthread_mutex_trylock(&tshmem_net.lock) != 0)
        return;
    tshmem_net_flush_staged();
    net_unlock();
}

/* Under the link model, a request m (in tshmem_net.taken) that has come from `from`: the one
 * to serve now, or NULL when it is not due yet, or something of its sender is held before it.
 * Then it waits in the link as a copy, a put's bytes with it, received now: the sender's
 * MPI_Isend completes without waiting for the request's time, as a card's DMA would. */
static struct request_msg *link_arrive(struct request_msg *m, int from)
{
    uint64_t due = link_due(&m->r);
    int big_put = m->r.op == REQ_PUT && !(m->r.sub & PUT_INLINE);
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
        bell_ring(from); /* its sender waits for the bytes to leave: they need its help */
        MPI_Recv(to, (int)bytes, MPI_BYTE, from, TAG_DATA, tshmem_net.comm, MPI_STATUS_IGNORE);
        copy->r.sub |= PUT_INLINE;
    } else {
        memcpy(to, m->bytes, bytes);
    }
    tshmem_link_hold(copy, from, due);
    return NULL;
}

/* tshmem_proxy_serve, and the sender's doorbell where it waits: before we receive a put's
 * bytes (MPI moves them with the sender's help), after we have answered (a get's bytes, an
 * atomic's value, an acknowledgement). */
static void serve_rung(const struct request *r, const char *inline_bytes, int from)
{
    int answered = r->op == REQ_GET || r->op == REQ_QUIET ||
                   (r->op == REQ_AMO && r->sub != TSHMEM_AMO_SET && r->sub != TSHMEM_AMO_ADD) ||
                   (r->op == REQ_PUT && (r->sub & PUT_QUIET));
    if (r->op == REQ_PUT && !(r->sub & PUT_INLINE))
        bell_ring(from);
    tshmem_proxy_serve(r, inline_bytes, from);
    if (answered)
        bell_ring(from);
}

/* Takes and serves the requests that have arrived, up to `most`; returns how many. One
 * thread at a time: another that finds the lock taken returns at once (that one serves).
 * Under the link model the requests that have fallen due come first, and every message is
 * taken as it arrives, to wait in the link until it is due (link_arrive). */
static int poll_requests(int most)
{
    if (pthread_mutex_trylock(&tshmem_net.serve) != 0)
        return 0;
    int served = 0, from;
    struct request_msg *m;
    while (tshmem_net.active && served < most && tshmem_net.link_on &&
           (m = tshmem_link_next(&from))) {
        serve_rung(&m->r, (char *)m + offsetof(struct request_msg, bytes), from);
        free(m);
        served++;
    }
    for (int taken = 0; tshmem_net.active && served < most && taken < 64; taken++) {
        /* active: not stopped since the caller looked */
        int flag = 0;
        MPI_Status st;
        /* A receive posted in advance and tested, not a blocking one (Open MPI's blocking calls
         * spin on a core): a request lands in tshmem_net.taken as it arrives, and one test
         * finds it, where a probe and then a receive took two passes through MPI. None is
         * posted once the stop has come. */
        if (!tshmem_net.posted) {
            if (atomic_load_explicit(&tshmem_net.stop, memory_order_acquire))
                break;
            MPI_Irecv(&tshmem_net.taken, (int)sizeof tshmem_net.taken, MPI_BYTE,
                      MPI_ANY_SOURCE, TAG_REQ, tshmem_net.comm, &tshmem_net.recv);
            tshmem_net.posted = 1;
        }
        MPI_Test(&tshmem_net.recv, &flag, &st);
        if (!flag)
            break;
        tshmem_net.posted = 0;
        m = &tshmem_net.taken;
        if (m->r.op == REQ_STOP) {
            /* Our own finalize sent it, after every PE's last request: whichever thread
             * takes it, the proxy ends. */
            atomic_store_explicit(&tshmem_net.stop, 1, memory_order_release);
            break;
        }
        if (m->r.due && !link_arrive(m, st.MPI_SOURCE))
            continue; /* still on the wire */
        serve_rung(&m->r, m->bytes, st.MPI_SOURCE);
        served++;
    }
    pthread_mutex_unlock(&tshmem_net.serve);
    return served;
}

/* Called by every wait loop (tshmem_spin_pause, through offnode_wait_turn below): a thread
 * that waits, most often for a word that a request of another node will set, serves the
 * requests itself. Waking the proxy thread instead costs a scheduler round trip, several
 * microseconds, on every message. */
int tshmem_offnode_progress(void)
{
    if (!tshmem_net.active)
        return 0;
    atomic_store_explicit(polled_word(), now_ns(), memory_order_relaxed);
    flush_idle();
    /* One request: the word this thread waits for may be set by it, and the wait looks again
     * at once. Probing on before it looks would add a trip through MPI's progress engine to
     * every off-node hop. The proxy thread takes a handful. */
    return poll_requests(1);
}

/* Across a modeled link, the pause turns of a wait before its first nap; each turn also looks
 * for arrived requests. With fewer, every wait in a chain of hops (2.4's non-blocking allreduce
 * has several per chunk) ended in a nap, and a loaded machine makes a nap last several times
 * what it asked for (book/performance.md, "Why the waits and the proxy are tuned as they
 * are"). */
#define LINK_PAUSES 200

/* Chapter 1.4's wait hook while the transport runs (tshmem_wait_hook): one turn of any wait of
 * this PE. The word we wait for may be set by a request that arrives by message: take it
 * ourselves (tshmem_offnode_progress) rather than wait for the proxy thread to be scheduled.
 * Across a modeled link (TSHMEM_LINK, link.c) a wait then naps instead of yielding, as a
 * thread that waits for a network card sleeps: a thread that yields beside busy ones gets its
 * core back only after their time slices. A long wait's look (TSHMEM_WAIT_LONG) only serves. */
static int offnode_wait_turn(unsigned long turn)
{
    if (tshmem_offnode_progress() > 0)
        return 1; /* it served a request: the word may be set now, look at once */
    if (!tshmem_net.link_on || turn == TSHMEM_WAIT_LONG)
        return 0; /* pause as on one node */
    if (turn < LINK_PAUSES)
        tshmem_cpu_pause();
    else
        tshmem_link_nap(turn - LINK_PAUSES);
    return 1;
}

/* A sleep of a thread of ours that has nothing to do until a request comes (the idle proxy,
 * a wait across the link): until a request is posted to us (our doorbell rings), the first
 * request held on the link falls due, or most_ns have passed. A request posted before the
 * thread counted itself among the sleepers is taken instead. */
void tshmem_offnode_sleep(uint64_t most_ns)
{
    tshmem_precise_sleeps();
    struct tshmem_bell *b = tshmem_net.bells ? &tshmem_net.bells[tshmem_g.my_pe] : NULL;
    uint32_t seen = 0;
    if (b) {
        atomic_fetch_add(&b->sleepers, 1);
        atomic_store_explicit(&b->polled, 0, memory_order_relaxed); /* not polling: ring me */
        seen = atomic_load(&b->rings);
        if (poll_requests(1) > 0) {
            atomic_fetch_sub(&b->sleepers, 1);
            return;
        }
    }
    /* A request already due that we could not take: another thread of ours serves, and
     * this one sleeps the whole time. */
    uint64_t t = now_ns(), due = tshmem_link_next_due();
    uint64_t until = due > t && due < t + most_ns ? due : t + most_ns;
    if (b) {
        struct timespec rel = {(time_t)((until - t) / 1000000000u),
                               (long)((until - t) % 1000000000u)};
        /* At once if it rang since `seen`; 0 when woken by a ring. */
        if (futex(&b->rings, FUTEX_WAIT, seen, &rel) == 0 || atomic_load(&b->rings) != seen)
            rung = 1;
    } else {
        tshmem_link_sleep_until(until);
    }
    if (b)
        atomic_fetch_sub(&b->sleepers, 1);
}

/* The proxy's idle back-off. After a request it keeps polling, giving its core away between
 * polls, for SPIN_NS: the next request of a burst (a put's signal, the next ping) is taken at
 * once. Then it sleeps, longer and longer up to 200 us, so that an idle proxy costs a few
 * thousand wake-ups a second, not a core; a request posted to us ends the sleep at once (the
 * doorbell). While another thread of ours polls (it waits in tshmem), that thread serves, and
 * the proxy sleeps: senders see it polling and do not ring. */
#define SPIN_NS 50000u
static void idle_pause(uint64_t last_request, unsigned *sleeps)
{
    uint64_t t = now_ns();
    uint64_t polled = atomic_load_explicit(polled_word(), memory_order_relaxed);
    if (tshmem_net.link_on && (tshmem_link_next_due() || t - last_request < SPIN_NS)) {
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
    tshmem_offnode_sleep((uint64_t)us * 1000); /* a request wakes it at once (its doorbell) */
}

static void *proxy_main(void *arg)
{
    (void)arg;
    uint64_t last = now_ns();
    unsigned sleeps = 0;
    while (!atomic_load_explicit(&tshmem_net.stop, memory_order_acquire)) {
        if (poll_requests(16) > 0) {
            last = now_ns();
            /* A burst goes on: look again soon. Unless a thread of ours polls: it takes the
             * burst, and a proxy that napped 1, 2, 4 us beside it would win a request now and
             * then, start over at 1 us, and keep racing it for MPI's lock. */
            if (last - atomic_load_explicit(polled_word(), memory_order_relaxed) > POLLING_NS)
                sleeps = 0;
        } else {
            flush_idle();
            idle_pause(last, &sleeps);
        }
    }
    return NULL;
}

/* A PE that leaves main without tshmem_finalize would leave its peers waiting for it there,
 * and its proxy would no longer answer their requests. Say so, and end the job. */
static void exit_check(void)
{
    if (tshmem_net.active && tshmem_g.initialized) {
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
    if (tshmem_ucx_start())
        return; /* chapter 2.6's network carries the off-node calls (TSHMEM_NET) */
    int level;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE)
        tshmem_fail("tshmem_init", "this job has %d nodes, and the off-node transport needs "
                    "MPI_THREAD_MULTIPLE (its proxy thread calls MPI beside the program), but "
                    "MPI gave thread level %d. If the program initializes MPI itself, use "
                    "MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided).",
                    tshmem_g.n_nodes, level);
    MPI_Comm_dup(tshmem_g.comm, &tshmem_net.comm);
    bells_open();
    tshmem_net.pending = calloc((size_t)tshmem_g.n_pes, 1);
    tshmem_net.n_pending = 0;
    tshmem_net.hang_warn = tshmem_env_int("TSHMEM_HANG_WARN");
    atomic_store(&tshmem_net.staged_pe, -1);
    atomic_store(&tshmem_net.stop, 0);
    tshmem_link_setup(tshmem_g.n_pes);
    tshmem_net.link_on = tshmem_link_on();
    const char *transport = tshmem_env_str("TSHMEM_TRANSPORT");
    tshmem_net.tcp = transport && strcmp(transport, "tcp") == 0;
    /* Before the thread starts: pthread_create orders every write above before the proxy's
     * first read, where a store after it would race with the proxy's reads of
     * tshmem_net.active. */
    tshmem_net.active = 1;
    /* Every wait of ours serves from now on. Release: a thread that finds the hook
     * (tshmem_spin_pause loads it with acquire) finds every field above written. */
    atomic_store_explicit(&tshmem_wait_hook, offnode_wait_turn, memory_order_release);
    if (tshmem_thread_start(&tshmem_net.thread, proxy_main, NULL, "tshmem-proxy",
                            TSHMEM_THREAD_DEFERS) != 0)
        tshmem_fail("tshmem_init", "could not start the proxy thread (out of threads?).");
    static int registered;
    if (!registered && atexit(exit_check) == 0)
        registered = 1;
}

void tshmem_transport_stop(void)
{
    tshmem_teams_release();
    tshmem_ucx_stop(); /* chapter 2.6's network, if it ran */
    if (!tshmem_net.active)
        return;
    /* Complete what we sent, then wait until every PE has done the same: after that no PE
     * will send a request again, and each proxy may stop. Our proxy goes on serving the
     * others while we wait. */
    tshmem_offnode_quiet();
    MPI_Request all;
    MPI_Ibarrier(tshmem_net.comm, &all);
    tshmem_net_wait_request(&all, "tshmem_finalize", -1);
    struct request stop = {.op = REQ_STOP};
    tshmem_net_send_request(&stop, tshmem_g.my_pe, "tshmem_finalize");
    pthread_join(tshmem_net.thread, NULL);
    /* Under the serve lock: a thread of ours that polls sees the transport stopped before
     * its communicator goes. */
    pthread_mutex_lock(&tshmem_net.serve);
    tshmem_net.active = 0;
    /* No request comes any more: waits pause as on one node. Relaxed: no other thread of ours
     * runs now (the proxy has ended, and 2.4's progress thread before tshmem_finalize came
     * here). */
    atomic_store_explicit(&tshmem_wait_hook, NULL, memory_order_relaxed);
    if (tshmem_net.posted) { /* posted before the stop came, by a thread that waited */
        MPI_Cancel(&tshmem_net.recv);
        MPI_Wait(&tshmem_net.recv, MPI_STATUS_IGNORE);
        tshmem_net.posted = 0;
    }
    pthread_mutex_unlock(&tshmem_net.serve);
    MPI_Comm_free(&tshmem_net.comm);
    bells_close();
    free(tshmem_net.pending);
    tshmem_net.pending = NULL;
}
