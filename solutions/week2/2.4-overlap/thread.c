/* thread.c: how the runtime starts a helper thread: its name, its cores, how it takes a core.
 *
 * Provided: you do not need to edit this file; request.c calls it. This chapter's progress
 * thread is the runtime's first helper thread, and every later one starts here too: chapter
 * 2.5's proxy and chapter 3.2's copy helper. Start yours with tshmem_thread_start, not
 * pthread_create (tshmem_internal.h says which thread takes which policy, and why).
 *
 * Open MPI binds each of 1 or 2 PEs to one core, and a thread inherits its creator's binding.
 * A helper on its program's core gets that core only when the program's time slice ends, while
 * the program computes or spins in a blocking MPI call: a proxy that must answer a request, or
 * a progress thread that must carry a collective on, would wait milliseconds for it. So where
 * the PE is bound to one core, the thread may run on every online core. And a woken thread
 * takes the core at once from the thread running there (wake-up preemption), unless it is
 * SCHED_BATCH, an ordinary policy that needs no privilege: a thread whose wake-ups mostly find
 * nothing to do (the proxy's naps), or find the program about to do the work itself (2.4's
 * thread, woken by a start), defers. The measurements behind both: book/performance.md, "Why
 * the waits and the proxy are tuned as they are".
 */
#define _GNU_SOURCE /* CPU_SET, sched_getcpu, pthread_attr_setaffinity_np, SCHED_BATCH */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "tshmem_internal.h"

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
