/* Chapter 2.1: barriers. */
#define TSHMEM_CHAPTER "2.1"
#include "tshmem_internal.h"

int tshmem_barrier_wait(tshmem_team_t *team, int round, const char *why)
{
    /* "round" in this comment is not a use of the parameter */
    tshmem_check_team(team, "round");
    /* BEGIN SOLUTION (Barriers): arrive at the "sense" barrier \ then wait */
    int sense = arrive(team, round);
    /* END SOLUTION */
    log_reason(why);
	/* BEGIN SOLUTION (Barriers): spin until everyone arrived */
	while (!everyone(team, sense))
	    ;
	return sense;
	/* END SOLUTION, stub: return -1; */
}

void tshmem_quiet(int flags, int rounds)
{
    log_rounds(rounds);
    /* BEGIN SOLUTION (Quiet): wait for "flags" */
    wait_all(flags);
    /* END SOLUTION */
    /* BEGIN SOLUTION (Quiet): drain the queue */
    drain(flags);
    /* END SOLUTION */
}
