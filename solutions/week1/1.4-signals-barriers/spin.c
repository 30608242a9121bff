/* spin.c: how a PE waits for a word that another PE will write.
 *
 * Provided: you do not need to edit this file; call tshmem_spin_pause in every wait loop.
 * A GPU thread spinning on a flag costs little; a process spinning on a core that another PE
 * needs can stall the whole job, and tests run 8 PEs on 2 cores. So a wait spins briefly with
 * the CPU's pause hint, then gives its core away with sched_yield, and after a long wait
 * sleeps a little each turn. After TSHMEM_HANG_WARN seconds it says what it is waiting for
 * (inside a collective: which call, and which PEs have not entered it).
 * A later chapter may give every turn more to do (tshmem_wait_hook, below).
 */
#define _GNU_SOURCE /* usleep */
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "tshmem_internal.h"

/* How long each phase of a wait lasts, in turns. The reasons for these two numbers, and what
 * other values did: book/performance.md, "Why the waits and the proxy are tuned as they are". */
#define SPIN_PAUSES 64       /* pause-hint spins before the first sched_yield */
#define YIELDS_BEFORE_SLEEP 20000

/* What a wait does besides looking at its word, set by a later chapter while it needs it
 * (chapter 2.5, while some PE is on another node: serve the requests that arrive by message,
 * and pause its own way across a modeled link). NULL until then: a wait on one node pays one
 * load for it and no call.
 *
 * A pointer that the chapter sets at start-up, not a call to a function that week 1 would have
 * to know, nor a weak default that the chapter's file overrides: which of two definitions a
 * static library links depends on which of its objects the link pulls in, and a pointer is
 * the same in every build, learner's, reference or stub. */
tshmem_wait_hook_fn *_Atomic tshmem_wait_hook;

/* The hook, if any. Acquire, paired with the release store of the chapter that sets it: a
 * thread that finds the hook also finds the state that the hook reads, written before it. On
 * x86 and ARM this load costs what a plain one does. */
static inline tshmem_wait_hook_fn *wait_hook(void)
{
    return atomic_load_explicit(&tshmem_wait_hook, memory_order_acquire);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tshmem_spin_init(struct tshmem_spin *spin, const char *func, const void *addr)
{
    *spin = (struct tshmem_spin){0, 0.0, func, addr, 0};
}

/* A long wait's look around, once in 64 sleeps. Inside a collective call, calls.c compares the
 * team's records (a PE in the same call with other arguments, or in another collective, stops
 * the job at once) and, after TSHMEM_HANG_WARN seconds, says which call waits, for whose word,
 * and which PEs have not entered it. Elsewhere (a program's own wait) the warning names the
 * word's heap offset. */
__attribute__((noinline)) static void maybe_warn(struct tshmem_spin *spin)
{
    tshmem_wait_hook_fn *hook = wait_hook();
    if (hook)
        hook(TSHMEM_WAIT_LONG);
    long limit = tshmem_g.hang_warn;
    if (spin->started == 0.0) {
        spin->started = now();
        tshmem_call_check_wait(spin->addr, 0, 0);
        return;
    }
    int due = !spin->warned && limit != 0 && now() - spin->started >= (double)limit;
    if (tshmem_call_check_wait(spin->addr, limit, due)) {
        spin->warned |= due;
        return;
    }
    if (!due)
        return;
    spin->warned = 1;
    long offset = tshmem_g.slice ? (long)((const char *)spin->addr - tshmem_g.slice) : -1;
    tshmem_warn(spin->func, "has waited %ld s for the word at heap offset %ld (%p) to change. "
                "Is a PE missing the call that writes it, or waiting for us in turn?",
                limit, offset, spin->addr);
}

/* The first turns of a wait: the hook's, if it takes the turn, else a pause hint, then a
 * yield. */
__attribute__((noinline)) static void short_pause(unsigned long n)
{
    tshmem_wait_hook_fn *hook = wait_hook();
    if (hook && hook(n))
        return;
    if (n < SPIN_PAUSES)
        tshmem_cpu_pause();
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
    /* A long wait: stop burning a core that a working PE could use. The hook has a look once
     * in 64 turns here (chapter 2.5: its proxy thread serves meanwhile). */
    if (n % 64 == 0)
        maybe_warn(spin);
    usleep(50);
}
