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
 * Where the rows come from (the performance guide, "Crossovers", has the tables): bench_2_3,
 * every algorithm forced in the same run, on 2 PEs (a 2-core machine) and on 8 and 16 PEs (a
 * 32-core one). On one node:
 *   fcollect   one-shot wins while blocks are small: up to 4 KiB per PE on 8 PEs, 8 KiB on
 *              16 (2 to 7x direct: nobody writes into a peer's memory); at 16 KiB per PE on
 *              8 PEs direct push won 3 runs of 4; the ring from 32 KiB to 256 KiB per PE (one
 *              neighbour per PE keeps the caches and the memory system calm); direct from
 *              512 KiB per PE. On 2 PEs one-shot wins up to 128 B per PE.
 *   broadcast  direct (everyone pulls from the root) up to 2 KiB and from 2 MiB; in between the
 *              hybrid's chunked pulls from the root (on one node its leader) win by 20-50%
 *              on 8 and 16 PEs. Not measured on 3-7 PEs: those take the 2-PE rows.
 * Across nodes the cost model decides until chapter 2.5 can measure: a direct push sends each
 * block to every PE of another node separately, the hybrid once per node. */
/* clang-format off */
static const struct crossover {
    enum tshmem_collect_op op;
    int across_nodes; /* 1: the team's PEs are on more than one node */
    int min_pes;
    size_t min_bytes; /* per PE for fcollect, the message for broadcast */
    enum tshmem_algo algo;
} crossovers[] = {
    /* op                     across  pes  bytes       algorithm */
    {TSHMEM_COLLECT_FCOLLECT,  0,      8,   512 << 10,  TSHMEM_ALGO_DIRECT},
    {TSHMEM_COLLECT_FCOLLECT,  0,      8,   32 << 10,   TSHMEM_ALGO_RING},
    {TSHMEM_COLLECT_FCOLLECT,  0,      8,   16 << 10,   TSHMEM_ALGO_DIRECT},
    {TSHMEM_COLLECT_FCOLLECT,  0,      8,   0,          TSHMEM_ALGO_ONESHOT},
    {TSHMEM_COLLECT_FCOLLECT,  0,      1,   256,        TSHMEM_ALGO_DIRECT},
    {TSHMEM_COLLECT_FCOLLECT,  0,      1,   0,          TSHMEM_ALGO_ONESHOT},
    {TSHMEM_COLLECT_FCOLLECT,  1,      1,   0,          TSHMEM_ALGO_HYBRID},
    {TSHMEM_COLLECT_BROADCAST, 0,      8,   2 << 20,    TSHMEM_ALGO_DIRECT},
    {TSHMEM_COLLECT_BROADCAST, 0,      8,   8 << 10,    TSHMEM_ALGO_HYBRID},
    {TSHMEM_COLLECT_BROADCAST, 0,      1,   0,          TSHMEM_ALGO_DIRECT},
    {TSHMEM_COLLECT_BROADCAST, 1,      1,   0,          TSHMEM_ALGO_HYBRID},
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
