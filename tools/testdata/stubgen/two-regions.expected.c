/* Chapter 2.1: barriers. */
#define TSHMEM_CHAPTER "2.1"
#include "tshmem_internal.h"

int tshmem_barrier_wait(tshmem_team_t *team, int round, const char *why)
{
    /* "round" in this comment is not a use of the parameter */
    tshmem_check_team(team, "round");
    (void)round;
    TSHMEM_TODO("Barriers", "arrive at the \"sense\" barrier \\ then wait");
    log_reason(why);
	/* TODO ("Barriers"): spin until everyone arrived */
	return -1;
}

void tshmem_quiet(int flags, int rounds)
{
    log_rounds(rounds);
    (void)flags;
    TSHMEM_TODO("Quiet", "wait for \"flags\"");
    TSHMEM_TODO("Quiet", "drain the queue");
}
