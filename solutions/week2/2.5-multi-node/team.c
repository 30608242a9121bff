/* team.c: new teams from a split of an existing one, and their end.
 *
 * Chapter 2.5. tshmem_team_split_strided (OpenSHMEM's shmem_team_split_strided, NVSHMEM's
 * nvshmem_team_split_strided) makes the teams a hierarchical collective needs: the PEs of one
 * node, and one leader per node. A split is collective over the parent team and, like the
 * bootstrap, uses MPI: every team keeps an MPI communicator of its members, on which its
 * later splits agree.
 *
 * Handles. A team handle indexes tshmem_g.teams and the reserved flag areas (sync, reduce,
 * collect), and the collectives keep a call counter per handle. Those words only ever grow, so
 * a handle is never given out twice in a job: a new team gets the lowest handle that no PE of
 * the parent has used yet, and the members of two teams that share a handle are always
 * disjoint. A job has TSHMEM_MAX_TEAMS - 2 split teams in all.
 */
#define TSHMEM_CHAPTER "2.5"
#include <stdlib.h>
#include <string.h>

#include "tshmem_internal.h"

static MPI_Comm comms[TSHMEM_MAX_TEAMS]; /* the members' communicator of each split team */

/* BEGIN SOLUTION (Splitting a team): what this PE knows of the handles given out so far */
static unsigned used = 0x3; /* bit t: handle t was given out to some team (WORLD, NODE) */
/* END SOLUTION */

/* The communicator of a team's members, on which its splits agree. */
static inline MPI_Comm team_comm(tshmem_team_t team)
{
    if (team == TSHMEM_TEAM_WORLD)
        return tshmem_g.comm;
    if (team == TSHMEM_TEAM_NODE)
        return tshmem_g.node_comm;
    return comms[team];
}

tshmem_team_t tshmem_team_split_color(const char *func, tshmem_team_t parent, int color, int key)
{
    tshmem_require_live(func);
    tshmem_check_team(func, parent);
    if (tshmem_g.teams[parent].my_pe < 0)
        tshmem_fail(func, "PE %d is not a member of the parent team %d: a split is collective "
                    "over the parent's PEs only.", tshmem_g.my_pe, parent);
    /* BEGIN SOLUTION (Splitting a team): agree on a handle no parent PE has used, split the parent's communicator, fill in the new team */
    MPI_Comm pc = team_comm(parent);
    unsigned all = 0;
    MPI_Allreduce(&used, &all, 1, MPI_UNSIGNED, MPI_BOR, pc);
    int slot = 2;
    while (slot < TSHMEM_MAX_TEAMS && (all & (1u << slot)))
        slot++;
    if (slot == TSHMEM_MAX_TEAMS)
        tshmem_fail(func, "no team handle left: a job has %d teams in all (WORLD, NODE and %d "
                    "from splits), and a destroyed team's handle is not reused. Split once and "
                    "keep the team, rather than splitting in a loop.", TSHMEM_MAX_TEAMS,
                    TSHMEM_MAX_TEAMS - 2);
    used = all | 1u << slot; /* every parent PE marks it, member or not: they stay in step */
    MPI_Comm nc;
    MPI_Comm_split(pc, color < 0 ? MPI_UNDEFINED : color, key, &nc);
    if (nc == MPI_COMM_NULL)
        return TSHMEM_TEAM_INVALID;
    struct tshmem_team *t = &tshmem_g.teams[slot];
    MPI_Comm_size(nc, &t->n_pes);
    MPI_Comm_rank(nc, &t->my_pe);
    t->pes = malloc(sizeof(int) * (size_t)t->n_pes);
    MPI_Allgather(&tshmem_g.my_pe, 1, MPI_INT, t->pes, 1, MPI_INT, nc);
    t->sync_seq = 0;
    comms[slot] = nc;
    return slot;
    /* END SOLUTION */
}

int tshmem_team_split_strided(tshmem_team_t parent, int start, int stride, int size,
                              const tshmem_team_config_t *config, long config_mask,
                              tshmem_team_t *new_team)
{
    const char *func = __func__;
    tshmem_require_live(func);
    tshmem_check_team(func, parent);
    /* A collective over the parent (TSHMEM_COLLECTIVE): every parent PE's start, stride and size
     * are compared when the split is done, and on entry under TSHMEM_DEBUG=1. */
    TSHMEM_COLLECTIVE(TSHMEM_FN_TEAM_SPLIT_STRIDED, parent, start, stride, size);
    if (!new_team)
        tshmem_fail(func, "new_team is NULL: pass the address of a tshmem_team_t to receive "
                    "the new team.");
    if (config_mask != 0 && !config)
        tshmem_fail(func, "config_mask is %ld but config is NULL: pass a config, or mask 0.",
                    config_mask);
    /* BEGIN SOLUTION (Splitting a team): check start, stride and size against the parent, then split with "member or not" as the colour and the parent index as the key */
    int n = tshmem_g.teams[parent].n_pes, me = tshmem_g.teams[parent].my_pe;
    if (size < 1 || start < 0 || start >= n || (size > 1 && stride < 1) ||
        (size > 1 && (long)start + (long)(size - 1) * stride >= n))
        tshmem_fail(func, "start %d, stride %d, size %d do not fit the parent team %d of %d PEs: "
                    "the members are parent PEs start, start + stride, ..., start + (size - 1) "
                    "* stride, each from 0 to %d, with size >= 1 and stride >= 1.", start,
                    stride, size, parent, n, n - 1);
    int offset = me - start;
    int member = offset >= 0 && (size == 1 ? offset == 0
                                           : offset % stride == 0 && offset / stride < size);
    *new_team = tshmem_team_split_color(func, parent, member ? 0 : -1, me);
    return 0;
    /* END SOLUTION */
}

void tshmem_team_destroy(tshmem_team_t team)
{
    tshmem_require_live(__func__);
    if (team == TSHMEM_TEAM_INVALID)
        return;
    tshmem_check_team(__func__, team);
    if (team == TSHMEM_TEAM_WORLD || team == TSHMEM_TEAM_NODE)
        tshmem_fail(__func__, "team %d is %s, which lives as long as the job: destroy only "
                    "teams that a split returned.", team,
                    team == TSHMEM_TEAM_WORLD ? "TSHMEM_TEAM_WORLD" : "TSHMEM_TEAM_NODE");
    if (tshmem_g.teams[team].my_pe < 0)
        tshmem_fail(__func__, "PE %d is not a member of team %d.", tshmem_g.my_pe, team);
    TSHMEM_COLLECTIVE(TSHMEM_FN_TEAM_DESTROY, team, 0, 0, 0);
    tshmem_allreduce_hierarchical_forget(team);
    /* Collective: nobody leaves while a member may still write into this team's flags. */
    tshmem_quiet();
    MPI_Barrier(comms[team]);
    MPI_Comm_free(&comms[team]);
    free(tshmem_g.teams[team].pes);
    memset(&tshmem_g.teams[team], 0, sizeof tshmem_g.teams[team]);
}

void tshmem_teams_release(void)
{
    for (int t = 2; t < TSHMEM_MAX_TEAMS; t++)
        if (comms[t] != MPI_COMM_NULL && comms[t] != NULL)
            MPI_Comm_free(&comms[t]);
}
