/* init.c: start-up and shut-down of tshmem, PE numbers, nodes and the two built-in teams.
 *
 * Chapter 1.1. MPI is the bootstrap, exactly as in NVSHMEM: it starts the processes, numbers
 * them, and tells which of them share a machine. After tshmem_init the shared-memory path of
 * chapters 1.2-1.4 never calls MPI again.
 */
#define TSHMEM_CHAPTER "1.1"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tshmem_internal.h"

void tshmem_require_live(const char *func)
{
    (void)func;
    TSHMEM_TODO("Guard rails", "stop with a clear error when called before tshmem_init or after tshmem_finalize");
}

/* TODO (chapter 1.1, "Nodes"): helpers that split the PEs into (virtual) nodes and fill the teams */

int tshmem_init(void)
{
    if (tshmem_g.initialized || tshmem_g.finalized)
        tshmem_fail(__func__, "called a second time. Call tshmem_init once per PE, before any "
                              "other tshmem call.");
    TSHMEM_TODO("Bootstrap", "start MPI if needed, number the PEs, split them into nodes, fill the WORLD and NODE teams");
    tshmem_env_check(); /* a bad TSHMEM_* value stops here, naming it */
    tshmem_process_setup();
    tshmem_heap_create();
    tshmem_transport_start(); /* chapter 2.5: the proxy thread, when some PE is off-node */
    tshmem_g.initialized = 1;
    if (tshmem_g.debug && tshmem_g.my_pe == 0)
        tshmem_env_print();
    return 0;
}

void tshmem_finalize(void)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_FINALIZE, TSHMEM_TEAM_WORLD, 0, 0, 0);
    tshmem_progress_finalize(); /* 2.4: no request in flight; the progress thread ends */
    tshmem_transport_stop(); /* chapter 2.5: off-node operations done, proxy thread stopped */
    TSHMEM_TODO("Shutting down", "wait for every PE, unmap the heap, free the teams, finalize MPI if we started it");
}

int tshmem_my_pe(void)
{
    tshmem_require_live(__func__);
    TSHMEM_TODO("PE queries", "return this PE's number");
}

int tshmem_n_pes(void)
{
    tshmem_require_live(__func__);
    TSHMEM_TODO("PE queries", "return how many PEs the job has");
}

void tshmem_global_exit(int status)
{
    tshmem_require_live(__func__);
    /* Our own line first: the launcher's report of an abort varies from run to run (Open MPI
     * sometimes prints an internal error in its place), and names no PE. */
    tshmem_warn(__func__, "ending every PE of the job with status %d.", status);
    TSHMEM_TODO("Global exit", "end every PE of the job with this status");
    _exit(status); /* not reached */
}

int tshmem_team_my_pe(tshmem_team_t team)
{
    tshmem_require_live(__func__);
    if (team == TSHMEM_TEAM_INVALID)
        return -1;
    TSHMEM_TODO("Teams", "this PE's number in the team, -1 if not a member");
}

int tshmem_team_n_pes(tshmem_team_t team)
{
    tshmem_require_live(__func__);
    if (team == TSHMEM_TEAM_INVALID)
        return -1;
    TSHMEM_TODO("Teams", "how many PEs the team has");
}

int tshmem_team_translate_pe(tshmem_team_t src, int src_pe, tshmem_team_t dest)
{
    tshmem_require_live(__func__);
    if (src == TSHMEM_TEAM_INVALID || dest == TSHMEM_TEAM_INVALID)
        return -1;
    (void)src_pe;
    TSHMEM_TODO("Teams", "the number in team dest of team src's PE src_pe, -1 if absent");
}
