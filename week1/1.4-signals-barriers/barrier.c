/* barrier.c: barriers built from signals: the dissemination algorithm.
 *
 * Chapter 1.4. In round r of a team of n PEs, team PE i signals team PE (i + 2^r) mod n and
 * waits for the signal of team PE (i - 2^r) mod n. After ceil(log2 n) rounds every PE has heard,
 * directly or through others, from every PE. Each round's flag has exactly one writer, and the
 * value written is the barrier's sequence number, which only grows: flags are never reset, so
 * a fast PE entering the next barrier cannot be confused with a slow one leaving this one.
 */
#define TSHMEM_CHAPTER "1.4"
#include "tshmem_internal.h"

int tshmem_team_sync(tshmem_team_t team)
{
    tshmem_require_live(__func__);
    tshmem_check_team(__func__, team);
    /* The call is open (tshmem_internal.h, TSHMEM_COLLECTIVE): signals and waits on the team's
     * flags in the reserved area are the runtime's own from here to the return. */
    TSHMEM_COLLECTIVE(TSHMEM_FN_TEAM_SYNC, team, 0, 0, 0);
    TSHMEM_TODO("The dissemination barrier", "signal and wait in ceil(log2 n) rounds on this team's sequence-numbered flags");
}

int tshmem_barrier(tshmem_team_t team)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_BARRIER, team, 0, 0, 0);
    TSHMEM_TODO("Barrier = quiet + sync", "complete this PE's operations, then sync the team");
}

void tshmem_sync_all(void)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_SYNC_ALL, TSHMEM_TEAM_WORLD, 0, 0, 0);
    TSHMEM_TODO("Barrier = quiet + sync", "sync the world team; completes nothing");
}

void tshmem_barrier_all(void)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_BARRIER_ALL, TSHMEM_TEAM_WORLD, 0, 0, 0);
    TSHMEM_TODO("Barrier = quiet + sync", "complete this PE's operations, then sync every PE");
}
