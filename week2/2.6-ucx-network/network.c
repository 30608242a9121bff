/* network.c: chapter 2.6's network around the part you write (provided): which network a job
 * takes, the exchange through MPI, the waits, the helper thread that progresses the worker, the
 * link model, and the start and the stop.
 *
 * Chapter 2.6. network.h says what the network does and why; ucx.c, the part you write, opens
 * UCX, connects the PEs and carries the off-node calls of chapters 1.3 and 1.4.
 *
 * Which network: chapter 2.5's tshmem_transport_start asks tshmem_ucx_start first. With
 * TSHMEM_NET=proxy it declines; otherwise it opens UCX (your tshmem_ucx_open). While that is
 * not written (it returns TSHMEM_UCX_NOT_WRITTEN) the job keeps 2.5's proxy, and
 * TSHMEM_NET=ucx stops saying so. Where UCX cannot start on some PE (no transport, no memory)
 * every PE keeps the proxy and the first PE that failed says why, in one sentence; with
 * TSHMEM_NET=ucx the job stops instead. The PEs decide together (an MPI_Allreduce): two
 * networks in one job would never meet.
 */
#define TSHMEM_CHAPTER "2.6"
#define _GNU_SOURCE
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "network.h"

struct tshmem_ucx_state tshmem_ucx = {.lock = PTHREAD_MUTEX_INITIALIZER};
int tshmem_ucx_running;
static MPI_Comm ucx_comm = MPI_COMM_NULL; /* the network's own copy of tshmem_g.comm */

_Noreturn void tshmem_ucx_fail(const char *func, const char *what, int pe, ucs_status_t status)
{
    const char *here = tshmem_ucx.host ? tshmem_ucx.host[tshmem_g.my_pe] : "this machine";
    int lost = status == UCS_ERR_ENDPOINT_TIMEOUT || status == UCS_ERR_CONNECTION_RESET ||
               status == UCS_ERR_UNREACHABLE;
    if (pe >= 0 && tshmem_ucx.host && lost) /* the partner is gone: another network won't help */
        tshmem_fail(func, "%s to PE %d (on host %s, this PE on %s) failed in UCX: %s. PE %d "
                    "has most likely ended or its host cannot be reached: look for its own "
                    "error above, or for what stopped host %s.", what, pe, tshmem_ucx.host[pe],
                    here, ucs_status_string(status), pe, tshmem_ucx.host[pe]);
    if (pe >= 0 && tshmem_ucx.host)
        tshmem_fail(func, "%s to PE %d (on host %s, this PE on %s) failed in UCX: %s. "
                    "TSHMEM_NET=proxy runs the job on chapter 2.5's network instead; "
                    "UCX_LOG_LEVEL=info says more.", what, pe, tshmem_ucx.host[pe], here,
                    ucs_status_string(status));
    tshmem_fail(func, "%s on host %s failed in UCX: %s. TSHMEM_NET=proxy runs the job on "
                "chapter 2.5's network instead; UCX_LOG_LEVEL=info says more.", what, here,
                ucs_status_string(status));
}

/* Progresses the worker until it has nothing more to do; the lock is held. */
static unsigned progress_all(void)
{
    unsigned n = 0, k;
    while ((k = ucp_worker_progress(tshmem_ucx.worker)) > 0)
        n += k;
    return n;
}

void tshmem_ucx_wait(ucs_status_ptr_t ret, const char *func, const char *what, int pe)
{
    if (ret == NULL)
        return; /* done at once */
    if (UCS_PTR_IS_ERR(ret))
        tshmem_ucx_fail(func, what, pe, UCS_PTR_STATUS(ret));
    struct tshmem_spin spin;
    tshmem_spin_init(&spin, func, ret);
    spin.warned = 1; /* not a word of the heap: this wait says itself what it waits for */
    uint64_t started = tshmem_now_ns();
    int told = 0;
    ucs_status_t st;
    for (unsigned long turn = 1; (st = ucp_request_check_status(ret)) == UCS_INPROGRESS; turn++) {
        if (ucp_worker_progress(tshmem_ucx.worker) == 0)
            tshmem_spin_pause(&spin); /* its wait hook finds our lock held, and pauses */
        if (turn % 1024 == 0 && !told && tshmem_g.hang_warn > 0 &&
            tshmem_now_ns() - started >= (uint64_t)tshmem_g.hang_warn * 1000000000u) {
            told = 1;
            if (pe >= 0 && tshmem_ucx.host)
                tshmem_warn(func, "has waited %ld s for UCX to complete %s to PE %d (on host %s). "
                            "Over a transport that needs the target's help, PE %d's worker must "
                            "be progressed: is it still running, in a call of tshmem?",
                            tshmem_g.hang_warn, what, pe, tshmem_ucx.host[pe], pe);
            else
                tshmem_warn(func, "has waited %ld s for UCX to complete %s. Every PE on another "
                            "node must be progressing its worker: is one of them stopped?",
                            tshmem_g.hang_warn, what);
        }
    }
    ucp_request_free(ret);
    if (st != UCS_OK)
        tshmem_ucx_fail(func, what, pe, st);
}

/* A detached request's end (under the lock: callbacks run inside ucp_worker_progress). */
static void detached_done(void *request, ucs_status_t status, void *user_data)
{
    (void)user_data;
    if (status != UCS_OK && tshmem_ucx.failed == UCS_OK)
        tshmem_ucx.failed = status;
    ucp_request_free(request);
}

ucp_request_param_t tshmem_ucx_detached_param(void)
{
    return (ucp_request_param_t){.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
                                 .cb.send = detached_done};
}

void tshmem_ucx_detach(ucs_status_ptr_t ret, const char *func, const char *what, int pe)
{
    if (UCS_PTR_IS_ERR(ret))
        tshmem_ucx_fail(func, what, pe, UCS_PTR_STATUS(ret));
    /* NULL: done already; a request: detached_done frees it. */
}

void tshmem_ucx_link_wait(size_t bytes, int answered, size_t back)
{
    if (!tshmem_ucx.link_on)
        return;
    uint64_t due = tshmem_link_served_due(tshmem_link_stamp(bytes), answered, back);
    /* The lock is not held while the wire's time passes: our worker goes on serving the
     * others (the helper thread, a wait of ours). */
    pthread_mutex_unlock(&tshmem_ucx.lock);
    tshmem_link_sleep_until(due);
    pthread_mutex_lock(&tshmem_ucx.lock);
}

void **tshmem_ucx_allgather(const void *mine, size_t len)
{
    int n = tshmem_g.n_pes;
    int my_len = (int)len, *lens = malloc(sizeof *lens * (size_t)n),
        *at = malloc(sizeof *at * (size_t)n);
    void **all = malloc(sizeof *all * (size_t)n);
    if (!lens || !at || !all)
        tshmem_fail("tshmem_init", "out of memory for the network's exchange of %d PEs.", n);
    MPI_Allgather(&my_len, 1, MPI_INT, lens, 1, MPI_INT, ucx_comm);
    int total = 0;
    for (int pe = 0; pe < n; pe++) {
        at[pe] = total;
        total += lens[pe];
    }
    char *buf = malloc(total ? (size_t)total : 1);
    if (!buf)
        tshmem_fail("tshmem_init", "out of memory for the network's exchange of %d bytes.", total);
    MPI_Allgatherv(mine, my_len, MPI_BYTE, buf, lens, at, MPI_BYTE, ucx_comm);
    for (int pe = 0; pe < n; pe++)
        all[pe] = buf + at[pe];
    free(lens);
    free(at);
    return all;
}

/* An MPI barrier that keeps our worker progressing: a PE still waiting for UCX may need us. */
static void barrier_progress(const char *func)
{
    MPI_Request req;
    MPI_Ibarrier(ucx_comm, &req);
    struct tshmem_spin spin;
    tshmem_spin_init(&spin, func, &req);
    for (int done = 0;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        if (!tshmem_ucx.worker || progress_all() == 0)
            tshmem_spin_pause(&spin);
    }
}

/* Everything tshmem_ucx_open and _connect made, released; also after a partial start. */
static void ucx_release(void)
{
    int n = tshmem_g.n_pes;
    for (int pe = 0; tshmem_ucx.ep && pe < n; pe++) {
        if (tshmem_ucx.rkey && tshmem_ucx.rkey[pe])
            ucp_rkey_destroy(tshmem_ucx.rkey[pe]);
        if (!tshmem_ucx.ep[pe])
            continue;
        /* Flush mode: the peer hears of the close. Every PE closes at once, progressing. */
        ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = 0};
        ucs_status_ptr_t r = ucp_ep_close_nbx(tshmem_ucx.ep[pe], &p);
        if (r && !UCS_PTR_IS_ERR(r)) {
            while (ucp_request_check_status(r) == UCS_INPROGRESS)
                if (ucp_worker_progress(tshmem_ucx.worker) == 0)
                    sched_yield();
            ucp_request_free(r);
        }
    }
    if (tshmem_ucx.worker)
        barrier_progress("tshmem_finalize"); /* no peer still closes its endpoint to us */
    free(tshmem_ucx.ep);
    free(tshmem_ucx.rkey);
    free(tshmem_ucx.base);
    tshmem_ucx.ep = NULL;
    tshmem_ucx.rkey = NULL;
    tshmem_ucx.base = NULL;
    if (tshmem_ucx.address)
        ucp_worker_release_address(tshmem_ucx.worker, tshmem_ucx.address);
    if (tshmem_ucx.rkey_buf)
        ucp_rkey_buffer_release(tshmem_ucx.rkey_buf);
    if (tshmem_ucx.memh)
        ucp_mem_unmap(tshmem_ucx.context, tshmem_ucx.memh);
    if (tshmem_ucx.worker)
        ucp_worker_destroy(tshmem_ucx.worker);
    if (tshmem_ucx.context)
        ucp_cleanup(tshmem_ucx.context);
    tshmem_ucx.address = NULL;
    tshmem_ucx.rkey_buf = NULL;
    tshmem_ucx.memh = NULL;
    tshmem_ucx.worker = NULL;
    tshmem_ucx.context = NULL;
}

/* Whether a transfer to another node needs a thread of its target: yes where an endpoint's
 * put or atomic lanes run on a transport that UCX emulates in software (TCP, UD), or where it
 * has no put (rma) or no atomic (amo) lane at all: those operations then travel as active
 * messages that the target's worker applies. That is the case between processes of one host
 * here: UCX's shared-memory transports (sysv, posix) carry atomics and messages but cannot
 * write into memory that they did not allocate, such as our slice.
 * No for RDMA (rc, dc verbs) and one host's memory transports (cma, knem, xpmem, posix, sysv). */
static int needs_target_help(void)
{
    static const char *const hardware[] = {"rc_verbs", "rc_mlx5", "dc_mlx5", "cma", "knem",
                                           "xpmem", "posix", "sysv", "self", NULL};
    const char *forced = tshmem_env_str("TSHMEM_UCX_HELPER");
    if (forced && *forced)
        return strcmp(forced, "0") != 0;
    for (int pe = 0; pe < tshmem_g.n_pes; pe++) {
        if (!tshmem_ucx.ep[pe])
            continue;
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f)
            return 1;
        ucp_ep_print_info(tshmem_ucx.ep[pe], f);
        fclose(f);
        if (tshmem_g.debug && tshmem_g.my_pe == 0)
            fprintf(stderr, "tshmem: PE 0: UCX's endpoint to PE %d:\n%s", pe, text);
        int help = 0, rma = 0, amo = 0;
        for (char *line = strtok(text, "\n"); line && !help; line = strtok(NULL, "\n")) {
            char *lane = strstr(line, "lane[");
            if (!lane || (!strstr(line, " rma") && !strstr(line, " amo")))
                continue;
            rma |= strstr(line, " rma") != NULL;
            amo |= strstr(line, " amo") != NULL;
            char *tl = strchr(lane, ':');
            tl = tl ? strchr(tl + 1, ':') : NULL; /* "lane[1]:  2:tcp/lo.0 md[..." */
            int hw = 0;
            for (int i = 0; tl && hardware[i]; i++)
                hw |= strncmp(tl + 1, hardware[i], strlen(hardware[i])) == 0;
            help = !hw;
        }
        free(text);
        if (help || !rma || !amo) /* no lane does it: UCX emulates it with active messages */
            return 1;
    }
    return 0;
}

/* One turn of any wait of this PE (1.4's wait hook): progress the worker, if no other thread
 * of ours is in UCX. Our own operations leave (a request UCX queued, a connection still being
 * made), and where the transport needs the target's help a PE that waits for a signal applies
 * the put that sets it itself. */
static _Atomic uint64_t waited_ns; /* when a wait of this PE last progressed the worker */

static int ucx_wait_turn(unsigned long turn)
{
    (void)turn;
    atomic_store_explicit(&waited_ns, tshmem_now_ns(), memory_order_relaxed);
    if (pthread_mutex_trylock(&tshmem_ucx.lock) != 0)
        return 0;
    unsigned n = progress_all();
    pthread_mutex_unlock(&tshmem_ucx.lock);
    return n > 0;
}

/* The helper thread: progresses the worker while the program computes (while the program waits
 * in tshmem, its wait does it, and the helper naps aside_ns at a time, below). After some work
 * it keeps looking, giving its core away between looks, for SPIN_NS; then it sleeps on the
 * worker's event descriptor (UCP_FEATURE_WAKEUP), which wakes it as soon as something arrives,
 * as a card's interrupt would. Without one (a context made without that feature) it sleeps
 * longer and longer, up to 200 us, so that an idle PE costs a few thousand wake-ups a second. */
#define SPIN_NS 50000u

/* How long the helper naps while a wait of the program progresses the worker. Where this host
 * has a core for each PE's thread and its helper, 20 us: the helper takes over soon after the
 * wait ends. Where the threads outnumber the cores (8 PEs on 2), each of those wake-ups takes a
 * core from a waiting PE, and the helper preempts (it is woken by the event descriptor): 1 ms.
 * On two cores, 2 PEs on two virtual nodes over TCP (book/2.6, "Why the helper naps"), the
 * put_signal ping-pong took 48-63 us at 8 B, 132-167 us at 32 KiB and 1.2-1.9 ms at 512 KiB
 * with 1 ms, against 66-420 us, 470-850 us and 5.3-7.2 ms with 20 us; 200 us was between. */
static long aside_ns = 20000;

static void helper_nap_choose(void)
{
    int here = 0, cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        cores = CPU_COUNT(&set); /* the cores this PE may run on */
    for (int pe = 0; pe < tshmem_g.n_pes; pe++)
        here += !tshmem_ucx.host || strcmp(tshmem_ucx.host[pe],
                                           tshmem_ucx.host[tshmem_g.my_pe]) == 0;
    aside_ns = cores >= 2 * here ? 20000 : 1000000;
}

static void *helper_main(void *arg)
{
    (void)arg;
    uint64_t last = tshmem_now_ns();
    unsigned sleeps = 0;
    tshmem_precise_sleeps();
    while (!atomic_load_explicit(&tshmem_ucx.stop, memory_order_acquire)) {
        /* A wait of the program progresses the worker already, at every turn: step aside, so
         * that the two do not take turns with the lock (and, on a busy machine, with the
         * core that the other PEs need). */
        if (tshmem_now_ns() - atomic_load_explicit(&waited_ns, memory_order_relaxed) <
            (uint64_t)aside_ns) {
            struct timespec ts = {0, aside_ns};
            nanosleep(&ts, NULL);
            continue;
        }
        if (pthread_mutex_trylock(&tshmem_ucx.lock) == 0) {
            unsigned n = progress_all();
            pthread_mutex_unlock(&tshmem_ucx.lock);
            if (n > 0) {
                last = tshmem_now_ns();
                sleeps = 0;
                continue;
            }
        }
        if (tshmem_now_ns() - last < SPIN_NS) {
            sched_yield();
            continue;
        }
        if (tshmem_ucx.efd >= 0) {
            /* Asleep on the worker's event descriptor until something arrives for it (10 ms at
             * most, to see the stop). Armed under the lock; UCS_ERR_BUSY: events are waiting,
             * progress first. Another thread in UCX: it progresses, nap. */
            if (pthread_mutex_trylock(&tshmem_ucx.lock) != 0) {
                struct timespec ts = {0, 20000};
                nanosleep(&ts, NULL);
                continue;
            }
            ucs_status_t st = ucp_worker_arm(tshmem_ucx.worker);
            pthread_mutex_unlock(&tshmem_ucx.lock);
            if (st == UCS_OK) {
                struct pollfd pfd = {.fd = tshmem_ucx.efd, .events = POLLIN};
                poll(&pfd, 1, 10);
            }
            continue;
        }
        long us = sleeps >= 8 ? 200 : 1L << sleeps;
        sleeps++;
        struct timespec ts = {0, us * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void exit_check(void)
{
    if (tshmem_ucx_running && tshmem_g.initialized) {
        tshmem_warn("exit", "this PE ended without calling tshmem_finalize, and PEs on other "
                    "nodes reach its memory through its UCX worker, which ends with it. Call "
                    "tshmem_finalize on every PE before leaving main.");
        _exit(TSHMEM_EXIT_ERROR);
    }
}

/* Every PE's code: 0 started, 1 not written, 2 UCX failed; the worst wins. */
static int agree(int code)
{
    int worst = code;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, ucx_comm);
    return worst;
}

/* The job keeps the proxy: say why (once), or stop where UCX was asked for. */
static int decline(int worst, int asked, ucs_status_t mine, const char *step)
{
    int me_failed = mine != UCS_OK && mine != TSHMEM_UCX_NOT_WRITTEN;
    /* The lowest PE that failed speaks for the job. */
    int first = me_failed ? tshmem_g.my_pe : tshmem_g.n_pes;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, ucx_comm);
    ucx_release();
    free(tshmem_ucx.host);
    tshmem_ucx.host = NULL;
    MPI_Comm_free(&ucx_comm);
    if (worst == 1) {
        if (asked)
            tshmem_fail("tshmem_init", "TSHMEM_NET=ucx, but chapter 2.6's %s is not written yet "
                        "(week2/2.6-ucx-network/ucx.c): write it (book/2.6-ucx-network.md), or "
                        "leave TSHMEM_NET unset to run on chapter 2.5's proxy.", step);
        return 0;
    }
    if (me_failed && (asked || first == tshmem_g.my_pe)) {
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        if (asked)
            tshmem_fail("tshmem_init", "TSHMEM_NET=ucx, but UCX could not start on host %s "
                        "(%s: %s): unset TSHMEM_NET to fall back to chapter 2.5's proxy.",
                        host, step, ucs_status_string(mine));
        tshmem_warn("tshmem_init", "UCX could not start on host %s (%s: %s), so this job "
                    "runs on chapter 2.5's proxy network.", host, step, ucs_status_string(mine));
    }
    if (asked && !me_failed)
        tshmem_fail("tshmem_init", "TSHMEM_NET=ucx, but UCX could not start on PE %d (its "
                    "message says why).", first);
    return 0;
}

int tshmem_ucx_start(void)
{
    const char *net = tshmem_env_str("TSHMEM_NET");
    if (net && *net && strcmp(net, "ucx") != 0 && strcmp(net, "proxy") != 0)
        tshmem_fail("tshmem_init", "TSHMEM_NET='%s' is not a network: write ucx (chapter 2.6, "
                    "the default where it is written) or proxy (chapter 2.5).", net);
    if (net && strcmp(net, "proxy") == 0)
        return 0;
    int asked = net && *net;
    /* The UCX of Debian 12 (1.13) is the one this network is checked on. On UCX 1.16, over TCP
     * with a second interface beside lo, a get right after a put missed the put, and at 4 PEs a
     * node on shared memory a fetching atomic to a PE busy with puts did not come back (the
     * page's "Beyond this machine"): on any other version the job keeps the proxy unless
     * TSHMEM_NET=ucx asks for UCX. */
    unsigned major, minor, release;
    ucp_get_version(&major, &minor, &release);
    if (!asked && (major != 1 || minor != 13)) {
        if (tshmem_g.my_pe == 0)
            tshmem_warn("tshmem_init", "UCX %u.%u is not a version chapter 2.6's network is "
                        "checked on (Debian 12's 1.13), so this job runs on chapter 2.5's proxy "
                        "network; TSHMEM_NET=ucx runs it on UCX anyway (book/2.6-ucx-network.md, "
                        "\"Beyond this machine\").", major, minor);
        return 0;
    }
    int n = tshmem_g.n_pes;
    MPI_Comm_dup(tshmem_g.comm, &ucx_comm);
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    tshmem_ucx.host = malloc(64 * (size_t)n);
    tshmem_ucx.ep = calloc((size_t)n, sizeof *tshmem_ucx.ep);
    tshmem_ucx.rkey = calloc((size_t)n, sizeof *tshmem_ucx.rkey);
    tshmem_ucx.base = calloc((size_t)n, sizeof *tshmem_ucx.base);
    if (!tshmem_ucx.host || !tshmem_ucx.ep || !tshmem_ucx.rkey || !tshmem_ucx.base)
        tshmem_fail("tshmem_init", "out of memory for the network's tables of %d PEs.", n);
    MPI_Allgather(host, 64, MPI_CHAR, tshmem_ucx.host, 64, MPI_CHAR, ucx_comm);

    /* UCX's TCP transport carries a put as active messages of TX_SEG_SIZE bytes, each applied
     * by the target: 8 KiB by default, 64 per put of 512 KiB. With 64 KiB, a put_signal
     * ping-pong over TCP took 0.72 ms at 512 KiB and 1.6 ms at 1 MiB, against 1.7-1.9 and
     * 5.4-6.0 ms, and the same at 2 KiB and below (book/2.6, "Why the helper naps"). Set before
     * UCX reads its configuration; a UCX_TCP_TX_SEG_SIZE of the user's wins, and the
     * benchmark's ucx_perftest, started from this process, runs with the same. */
    setenv("UCX_TCP_TX_SEG_SIZE", "64K", 0);
    const char *transport = tshmem_env_str("TSHMEM_TRANSPORT");
    ucs_status_t st = tshmem_ucx_open(transport && strcmp(transport, "tcp") == 0);
    int worst = agree(st == UCS_OK ? 0 : st == TSHMEM_UCX_NOT_WRITTEN ? 1 : 2);
    if (worst)
        return decline(worst, asked, st, "tshmem_ucx_open");

    void **addresses = tshmem_ucx_allgather(tshmem_ucx.address, tshmem_ucx.address_len);
    void **rkeys = tshmem_ucx_allgather(tshmem_ucx.rkey_buf, tshmem_ucx.rkey_len);
    uint64_t mine = (uint64_t)(uintptr_t)tshmem_g.slice;
    MPI_Allgather(&mine, 1, MPI_UINT64_T, tshmem_ucx.base, 1, MPI_UINT64_T, ucx_comm);
    int bad_pe = -1;
    st = tshmem_ucx_connect(addresses, rkeys, &bad_pe);
    free(addresses[0]);
    free(addresses);
    free(rkeys[0]);
    free(rkeys);
    worst = agree(st == UCS_OK ? 0 : st == TSHMEM_UCX_NOT_WRITTEN ? 1 : 2);
    if (worst)
        return decline(worst, asked, st, "tshmem_ucx_connect");
    barrier_progress("tshmem_init"); /* every endpoint exists before the first put */

    tshmem_link_setup(n);
    tshmem_ucx.link_on = tshmem_link_on();
    tshmem_ucx.unordered = 0;
    tshmem_ucx.failed = UCS_OK;
    tshmem_ucx.helper = needs_target_help();
    tshmem_ucx.efd = -1;
    if (tshmem_ucx.helper && ucp_worker_get_efd(tshmem_ucx.worker, &tshmem_ucx.efd) != UCS_OK)
        tshmem_ucx.efd = -1; /* no UCP_FEATURE_WAKEUP: the helper naps instead */
    atomic_store(&tshmem_ucx.stop, 0);
    tshmem_ucx_running = 1;
    if (tshmem_g.debug && tshmem_g.my_pe == 0)
        tshmem_warn("tshmem_init", "the network is UCX (chapter 2.6); its transports %s the "
                    "target's help, %s.", tshmem_ucx.helper ? "need" : "do not need",
                    tshmem_ucx.helper ? "so a helper thread progresses each worker"
                                      : "so no helper thread runs");
    /* Every wait progresses the worker: a PE's own posted operations (a signal, an atomic
     * nobody waits for) may need it to leave, whatever the transport. */
    atomic_store_explicit(&tshmem_wait_hook, ucx_wait_turn, memory_order_release);
    if (tshmem_ucx.helper) {
        helper_nap_choose();
        /* Woken by the event descriptor, the helper has work each time: it takes a core at
         * once. Napping blind, most wake-ups find nothing: it defers to busy threads. */
        if (tshmem_thread_start(&tshmem_ucx.thread, helper_main, NULL, "tshmem-ucx",
                                tshmem_ucx.efd >= 0 ? TSHMEM_THREAD_PREEMPTS
                                                    : TSHMEM_THREAD_DEFERS) != 0)
            tshmem_fail("tshmem_init", "could not start the network's helper thread (out of "
                        "threads?).");
    }
    static int registered;
    if (!registered && atexit(exit_check) == 0)
        registered = 1;
    return 1;
}

void tshmem_ucx_stop(void)
{
    if (!tshmem_ucx_running)
        return;
    tshmem_offnode_quiet(); /* ours complete at their targets */
    pthread_mutex_lock(&tshmem_ucx.lock);
    barrier_progress("tshmem_finalize"); /* and everyone's: no PE puts to us any more */
    pthread_mutex_unlock(&tshmem_ucx.lock);
    if (tshmem_ucx.helper) {
        atomic_store_explicit(&tshmem_ucx.stop, 1, memory_order_release);
        pthread_join(tshmem_ucx.thread, NULL);
    }
    atomic_store_explicit(&tshmem_wait_hook, NULL, memory_order_relaxed);
    tshmem_ucx_running = 0;
    ucx_release();
    free(tshmem_ucx.host);
    tshmem_ucx.host = NULL;
    MPI_Comm_free(&ucx_comm);
}
