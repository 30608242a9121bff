/* hierarchical.c: allreduce for a team that spans nodes, in three phases.
 *
 * Chapter 2.5. Inside a node the shared-memory path is cheap; between nodes every message
 * goes through a proxy thread and costs tens of microseconds. So:
 *   1. node phase:    the team's PEs of each node reduce among themselves (shared memory);
 *   2. leaders phase: one PE per node, its leader, allreduces the node results across nodes
 *                     (the only off-node traffic: n_nodes PEs instead of n);
 *   3. node broadcast: each leader hands the result to the PEs of its node.
 * The phases are the 2.2 and 2.3 collectives on two teams split from the caller's: the PEs of
 * the team on my node, and the leaders. They are made at the first hierarchical call on a team
 * and kept for the next ones (a split is collective and costs a few MPI round trips).
 */
#define TSHMEM_CHAPTER "2.5"
#include "tshmem_internal.h"

static struct {
    int made;
    tshmem_team_t node;    /* the team's PEs on my node */
    tshmem_team_t leaders; /* the first team PE of every node; TSHMEM_TEAM_INVALID if not me */
} sub[TSHMEM_MAX_TEAMS];

void tshmem_allreduce_hierarchical_forget(tshmem_team_t team)
{
    if (!sub[team].made)
        return;
    if (sub[team].node != TSHMEM_TEAM_NODE)
        tshmem_team_destroy(sub[team].node);
    tshmem_team_destroy(sub[team].leaders);
    sub[team].made = 0;
}

int tshmem_allreduce_hierarchical(const struct tshmem_reduce_call *c)
{
    (void)c;
    TSHMEM_TODO("Hierarchical allreduce", "make (once) the node and leaders teams of c->team, then reduce on the node, allreduce among leaders, broadcast on the node");
}
