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
    /* BEGIN SOLUTION (Guard rails): stop with a clear error when called before tshmem_init or after tshmem_finalize */
    if (tshmem_g.finalized)
        tshmem_fail(func, "called after tshmem_finalize. Every tshmem call must come between "
                          "tshmem_init and tshmem_finalize.");
    if (!tshmem_g.initialized)
        tshmem_fail(func, "called before tshmem_init. Call tshmem_init first, once per PE.");
    /* END SOLUTION */
}

/* BEGIN SOLUTION (Nodes): helpers that split the PEs into (virtual) nodes and fill the teams */
/* The PEs that share a machine, cut into virtual nodes of k consecutive PEs when
 * TSHMEM_PES_PER_NODE=k, so that one laptop can play a cluster. */
static MPI_Comm split_nodes(MPI_Comm world, int rank)
{
    MPI_Comm machine, node;
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &machine);
    long k = tshmem_env_int("TSHMEM_PES_PER_NODE");
    if (k == 0)
        return machine;
    int local;
    MPI_Comm_rank(machine, &local);
    MPI_Comm_split(machine, local / (int)k, local, &node);
    MPI_Comm_free(&machine);
    return node;
}

/* Every PE learns every PE's node number and index within its node. Nodes are numbered in the
 * order of their lowest PE, so node 0 holds PE 0. */
static void map_nodes(void)
{
    struct tshmem_state *g = &tshmem_g;
    int local, leader;
    MPI_Comm_rank(g->node_comm, &local);
    leader = g->my_pe; /* the node's lowest world PE: its leader */
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, g->node_comm);

    int *leaders = malloc(sizeof(int) * (size_t)g->n_pes);
    g->pe_local = malloc(sizeof(int) * (size_t)g->n_pes);
    g->pe_node = malloc(sizeof(int) * (size_t)g->n_pes);
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, g->comm);
    MPI_Allgather(&local, 1, MPI_INT, g->pe_local, 1, MPI_INT, g->comm);

    g->n_nodes = 0;
    for (int pe = 0; pe < g->n_pes; pe++) {
        if (leaders[pe] == pe)
            g->n_nodes++;
        int node = 0;
        for (int q = 0; q < leaders[pe]; q++)
            node += (leaders[q] == q);
        g->pe_node[pe] = node;
    }
    g->node = g->pe_node[g->my_pe];
    free(leaders);
}

static void team_fill(struct tshmem_team *team, int node)
{
    struct tshmem_state *g = &tshmem_g;
    team->pes = malloc(sizeof(int) * (size_t)g->n_pes);
    team->n_pes = 0;
    team->my_pe = -1;
    for (int pe = 0; pe < g->n_pes; pe++) {
        if (node >= 0 && g->pe_node[pe] != node)
            continue;
        if (pe == g->my_pe)
            team->my_pe = team->n_pes;
        team->pes[team->n_pes++] = pe;
    }
    team->sync_seq = 0;
}
/* END SOLUTION */

int tshmem_init(void)
{
    if (tshmem_g.initialized || tshmem_g.finalized)
        tshmem_fail(__func__, "called a second time. Call tshmem_init once per PE, before any "
                              "other tshmem call.");
    /* BEGIN SOLUTION (Bootstrap): start MPI if needed, number the PEs, split them into nodes, fill the WORLD and NODE teams */
    int mpi_ready, provided;
    MPI_Initialized(&mpi_ready);
    if (!mpi_ready) {
        /* MULTIPLE: chapter 2.5 adds a progress thread that calls MPI beside the program. */
        MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
        tshmem_g.mpi_owned = 1;
    }
    /* A private communicator: the program's own MPI traffic never mixes with ours. */
    MPI_Comm_dup(MPI_COMM_WORLD, &tshmem_g.comm);
    MPI_Comm_rank(tshmem_g.comm, &tshmem_g.my_pe);
    MPI_Comm_size(tshmem_g.comm, &tshmem_g.n_pes);
    tshmem_g.node_comm = split_nodes(tshmem_g.comm, tshmem_g.my_pe);
    map_nodes();
    team_fill(&tshmem_g.teams[TSHMEM_TEAM_WORLD], -1);
    team_fill(&tshmem_g.teams[TSHMEM_TEAM_NODE], tshmem_g.node);
    /* END SOLUTION */
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
    /* BEGIN SOLUTION (Shutting down): wait for every PE, unmap the heap, free the teams, finalize MPI if we started it */
    /* No PE may leave while another could still read or write its slice. */
    tshmem_boot_barrier(tshmem_g.comm);
    tshmem_heap_destroy();
    for (int t = 0; t < TSHMEM_MAX_TEAMS; t++) {
        free(tshmem_g.teams[t].pes);
        memset(&tshmem_g.teams[t], 0, sizeof tshmem_g.teams[t]);
    }
    free(tshmem_g.pe_node);
    free(tshmem_g.pe_local);
    tshmem_g.pe_node = tshmem_g.pe_local = NULL;
    MPI_Comm_free(&tshmem_g.node_comm);
    MPI_Comm_free(&tshmem_g.comm);
    tshmem_g.initialized = 0;
    tshmem_g.finalized = 1;
    if (tshmem_g.mpi_owned)
        MPI_Finalize();
    /* END SOLUTION */
}

int tshmem_my_pe(void)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (PE queries): return this PE's number */
    return tshmem_g.my_pe;
    /* END SOLUTION */
}

int tshmem_n_pes(void)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (PE queries): return how many PEs the job has */
    return tshmem_g.n_pes;
    /* END SOLUTION */
}

void tshmem_global_exit(int status)
{
    tshmem_require_live(__func__);
    /* Our own line first: the launcher's report of an abort varies from run to run (Open MPI
     * sometimes prints an internal error in its place), and names no PE. */
    tshmem_warn(__func__, "ending every PE of the job with status %d.", status);
    /* BEGIN SOLUTION (Global exit): end every PE of the job with this status */
    fflush(stdout);
    fflush(stderr);
    /* MPI_Abort is the one call that reaches PEs that are busy elsewhere: the launcher kills
     * every process of the job and exits with this status. */
    MPI_Abort(tshmem_g.comm, status);
    /* END SOLUTION */
    _exit(status); /* not reached */
}

int tshmem_team_my_pe(tshmem_team_t team)
{
    tshmem_require_live(__func__);
    if (team == TSHMEM_TEAM_INVALID)
        return -1;
    /* BEGIN SOLUTION (Teams): this PE's number in the team, -1 if not a member */
    tshmem_check_team(__func__, team);
    return tshmem_g.teams[team].my_pe;
    /* END SOLUTION */
}

int tshmem_team_n_pes(tshmem_team_t team)
{
    tshmem_require_live(__func__);
    if (team == TSHMEM_TEAM_INVALID)
        return -1;
    /* BEGIN SOLUTION (Teams): how many PEs the team has */
    tshmem_check_team(__func__, team);
    return tshmem_g.teams[team].n_pes;
    /* END SOLUTION */
}

int tshmem_team_translate_pe(tshmem_team_t src, int src_pe, tshmem_team_t dest)
{
    tshmem_require_live(__func__);
    if (src == TSHMEM_TEAM_INVALID || dest == TSHMEM_TEAM_INVALID)
        return -1;
    /* BEGIN SOLUTION (Teams): the number in team dest of team src's PE src_pe, -1 if absent */
    tshmem_check_team(__func__, src);
    tshmem_check_team(__func__, dest);
    const struct tshmem_team *from = &tshmem_g.teams[src], *to = &tshmem_g.teams[dest];
    if (src_pe < 0 || src_pe >= from->n_pes)
        return -1;
    int world = from->pes[src_pe];
    for (int i = 0; i < to->n_pes; i++)
        if (to->pes[i] == world)
            return i;
    return -1;
    /* END SOLUTION */
}
