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
    /* BEGIN SOLUTION (Hierarchical allreduce): make (once) the node and leaders teams of c->team, then reduce on the node, allreduce among leaders, broadcast on the node */
    if (!sub[c->team].made) {
        /* My node's group of this team, and whether I am its first PE (its leader). */
        int lead = 1;
        for (int j = 0; j < c->me; j++)
            lead &= tshmem_g.pe_node[c->t->pes[j]] != tshmem_g.node;
        /* On WORLD the node groups are TSHMEM_TEAM_NODE itself: no handle spent. */
        sub[c->team].node = c->team == TSHMEM_TEAM_WORLD
                                ? TSHMEM_TEAM_NODE
                                : tshmem_team_split_color(c->func, c->team, tshmem_g.node, c->me);
        sub[c->team].leaders = tshmem_team_split_color(c->func, c->team, lead ? 0 : -1, c->me);
        sub[c->team].made = 1;
    }
    tshmem_team_t node = sub[c->team].node, leaders = sub[c->team].leaders;
    /* 1. Every PE of the node ends with the node's result in dest. Only the leader needs it;
     * the others receive the final result over it in phase 3. */
    tshmem_allreduce(node, c->dest, c->source, c->count, c->dtype, c->op, TSHMEM_ALGO_AUTO);
    /* 2. One PE per node: the selector sees one PE on each node and picks a flat algorithm. */
    if (leaders != TSHMEM_TEAM_INVALID)
        tshmem_allreduce(leaders, c->dest, c->dest, c->count, c->dtype, c->op, TSHMEM_ALGO_AUTO);
    /* 3. The leader is team PE 0 of its node team (a split keeps the parent's order). */
    tshmem_broadcastmem(node, c->dest, c->dest, c->bytes, 0);
    return 0;
    /* END SOLUTION */
}
