/* spin.c: how a PE waits for a word that another PE will write.
 *
 * Provided: you do not need to edit this file; call tshmem_spin_pause in every wait loop.
 * A GPU thread spinning on a flag costs little; a process spinning on a core that another PE
 * needs can stall the whole job, and tests run 8 PEs on 2 cores. So a wait spins briefly with
 * the CPU's pause hint, then gives its core away with sched_yield, and after a long wait
 * sleeps a little each turn. After TSHMEM_HANG_WARN seconds it says what it is waiting for.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "tshmem_internal.h"

#define SPIN_PAUSES 64       /* pause-hint spins before the first sched_yield */
/* Across a modeled link (TSHMEM_LINK), pause turns before the first nap: each turn also looks
 * for arrived messages, and 200 of them last about 100 us. With 8, every wait in a chain of
 * hops (2.4's non-blocking allreduce has several per call) ended in a nap that this kind of
 * machine makes last 60-80 us or more: a 64 KiB allreduce across a link of 1000 GB/s and no
 * latency took 890 us, against 36 us with 200 and 34 us with no link model at all. */
#define LINK_PAUSES 200
#define YIELDS_BEFORE_SLEEP 20000

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

void tshmem_spin_init(struct tshmem_spin *spin, const char *func, const void *addr)
{
    *spin = (struct tshmem_spin){0, 0.0, func, addr, 0};
}

__attribute__((noinline)) static void maybe_warn(struct tshmem_spin *spin)
{
    tshmem_offnode_progress();
    long limit = tshmem_env_int("TSHMEM_HANG_WARN");
    if (spin->started == 0.0) {
        spin->started = now();
        return;
    }
    if (spin->warned || limit == 0 || now() - spin->started < (double)limit)
        return;
    spin->warned = 1;
    long offset = tshmem_g.slice ? (long)((const char *)spin->addr - tshmem_g.slice) : -1;
    tshmem_warn(spin->func, "has waited %ld s for the word at heap offset %ld (%p) to change. "
                "Is a PE missing the call that writes it, or waiting for us in turn?",
                limit, offset, spin->addr);
}

/* The first turns of a wait. Across nodes (chapter 2.5), the word we wait for is set by a
 * request that arrives by message: take it ourselves (tshmem_offnode_progress) rather than
 * wait for the proxy thread to be scheduled. Across a modeled link (TSHMEM_LINK, link.c) a
 * wait naps instead of yielding, as a thread that waits for a network card sleeps: a thread
 * that yields beside busy ones gets its core back only after their time slices. */
__attribute__((noinline)) static void short_pause(unsigned long n)
{
    if (tshmem_offnode_progress() > 0)
        return; /* it served a request: the word may be set now, look at once */
    int link = tshmem_link_on();
    if (n < (link ? LINK_PAUSES : SPIN_PAUSES))
        cpu_pause();
    else if (link)
        tshmem_link_nap(n - LINK_PAUSES);
    else
        sched_yield();
}

void tshmem_spin_pause(struct tshmem_spin *spin)
{
    /* Only tail calls and one rare call here: the function keeps no frame, so a hang report
     * (book "Debugging") names the wait that called it, not this helper. */
    unsigned long n = ++spin->spins;
    if (n < YIELDS_BEFORE_SLEEP) {
        short_pause(n);
        return;
    }
    /* A long wait: stop burning a core that a working PE could use. Requests from other
     * nodes are taken once in 64 turns here; the proxy thread serves meanwhile. */
    if (n % 64 == 0)
        maybe_warn(spin);
    usleep(50);
}

/* Where a PE's helper threads run, and how they take a core (tshmem_internal.h says which
 * thread gets what). Open MPI binds each of 1 or 2 PEs to one core, and a thread inherits its
 * creator's binding: a proxy that must answer a request while the program computes, or spins in
 * a blocking MPI call, on that same core got the core only when the program's time slice ended,
 * 4 ms later (an off-node put_signal + quiet whose target had gone on to MPI_Barrier took 4.0
 * ms, against 32 us with the proxy free to use the other core). And a woken thread takes the
 * core at once from the thread running there (wake-up preemption) unless it is SCHED_BATCH, an
 * ordinary policy that needs no privilege: the proxy's naps preempted program threads that were
 * serving requests themselves (16 PEs on 16 cores, the flat off-node allreduce of 8 B: 11-15
 * us, 3.3 us as SCHED_BATCH), and 2.4's thread, woken by a start, preempted the program that was
 * about to run the request itself (the performance guide has the numbers). */
int tshmem_thread_start(pthread_t *thread, void *(*main)(void *), void *arg, const char *name,
                        int policy)
{
    pthread_attr_t attr;
    cpu_set_t cpus;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int here = sched_getcpu(), placed = 0, one_core = 0;
    pthread_attr_init(&attr);
    if (online > 1 && sched_getaffinity(0, sizeof cpus, &cpus) == 0) {
        one_core = CPU_COUNT(&cpus) == 1;
        if (one_core) /* bound to one core: every online core instead */
            for (long i = 0; i < online && i < CPU_SETSIZE; i++)
                CPU_SET((int)i, &cpus);
        if ((policy & TSHMEM_THREAD_OFF_MY_CORE) && here >= 0)
            CPU_CLR(here, &cpus);
        if (one_core || (policy & TSHMEM_THREAD_OFF_MY_CORE))
            placed = pthread_attr_setaffinity_np(&attr, sizeof cpus, &cpus) == 0;
    }
    int rc = pthread_create(thread, &attr, main, arg);
    if (rc != 0 && placed) /* a container may refuse cores it does not give us: stay, then */
        rc = pthread_create(thread, NULL, main, arg);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        return rc;
    if (name)
        pthread_setname_np(*thread, name);
    int how = policy & ~TSHMEM_THREAD_OFF_MY_CORE;
    if (how == TSHMEM_THREAD_DEFERS || (how == TSHMEM_THREAD_DEFERS_BOUND && one_core)) {
        struct sched_param normal = {0};
        pthread_setschedparam(*thread, SCHED_BATCH, &normal); /* refused: it preempts, as before */
    }
    return 0;
}
