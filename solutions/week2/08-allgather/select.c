/* select.c: which algorithm TSHMEM_ALGO_AUTO runs, from measured crossover points.
 *
 * Chapter 2.3. The choice may depend only on what every member of the team knows alike (the
 * operation, the team, nbytes): if two members chose differently, each would wait for signals
 * the other never sends.
 */
#define TSHMEM_CHAPTER "2.3"
#include "tshmem_internal.h"

/* BEGIN SOLUTION (The selector): the crossover table and a helper that tells whether a team spans nodes */
/* The crossover table. The first row that matches the operation, whether the team spans nodes,
 * and has min_pes <= team size and min_bytes <= nbytes wins; put larger thresholds first.
 *
 * Where the rows come from (the book, "The selector", has the numbers): bench_2_3 on 2 PEs,
 * 8 B to 64 MiB, and on 3 and 4 PEs (more PEs than the 2 cores of the course's machine, so
 * only a rough guide). On one node the ring never beat direct beyond the noise, at any size:
 * every byte costs one copy either way, and direct pays one hop of latency where the ring pays
 * n - 1. Across nodes the cost model decides until chapter 2.5 can measure: a direct push
 * sends each block to every PE of another node separately, the hybrid once per node. */
/* clang-format off */
static const struct crossover {
    enum tshmem_collect_op op;
    int across_nodes; /* 1: the team's PEs are on more than one node */
    int min_pes;
    size_t min_bytes; /* per PE for fcollect, the message for broadcast */
    enum tshmem_algo algo;
} crossovers[] = {
    /* op                     across  pes  bytes  algorithm */
    {TSHMEM_COLLECT_FCOLLECT,  0,      1,   256,   TSHMEM_ALGO_DIRECT},
    {TSHMEM_COLLECT_FCOLLECT,  0,      1,   0,     TSHMEM_ALGO_ONESHOT},
    {TSHMEM_COLLECT_FCOLLECT,  1,      1,   0,     TSHMEM_ALGO_HYBRID},
    {TSHMEM_COLLECT_BROADCAST, 0,      1,   0,     TSHMEM_ALGO_DIRECT},
    {TSHMEM_COLLECT_BROADCAST, 1,      1,   0,     TSHMEM_ALGO_HYBRID},
};
/* clang-format on */

/* 1 if the team's PEs are on more than one (virtual) node. */
static int spans_nodes(const struct tshmem_collect_call *call)
{
    int node = tshmem_g.pe_node[tshmem_collect_pe(call, 0)];
    for (int i = 1; i < call->n; i++)
        if (tshmem_g.pe_node[tshmem_collect_pe(call, i)] != node)
            return 1;
    return 0;
}
/* END SOLUTION */

enum tshmem_algo tshmem_collect_select(enum tshmem_collect_op op,
                                       const struct tshmem_collect_call *call, size_t nbytes)
{
    /* BEGIN SOLUTION (The selector): a team wider than the flag area gets the ring; otherwise the first row of the table that matches */
    /* Direct and hybrid keep one from[] word per PE: a wider team can only use the ring. */
    if (call->n > TSHMEM_COLL_MAX_PES)
        return TSHMEM_ALGO_RING;
    int across = spans_nodes(call);
    for (size_t r = 0; r < sizeof crossovers / sizeof crossovers[0]; r++) {
        const struct crossover *c = &crossovers[r];
        if (c->op == op && c->across_nodes == across && call->n >= c->min_pes &&
            nbytes >= c->min_bytes)
            return c->algo;
    }
    return TSHMEM_ALGO_RING; /* correct everywhere, if never the fastest */
    /* END SOLUTION */
}
