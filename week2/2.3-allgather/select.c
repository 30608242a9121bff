/* select.c: which algorithm TSHMEM_ALGO_AUTO runs, from measured crossover points.
 *
 * Chapter 2.3. The choice may depend only on what every member of the team knows alike (the
 * operation, the team, nbytes): if two members chose differently, each would wait for signals
 * the other never sends.
 */
#define TSHMEM_CHAPTER "2.3"
#include "tshmem_internal.h"

/* TODO (chapter 2.3, "The selector"): the crossover table and a helper that tells whether a team spans nodes */

enum tshmem_algo tshmem_collect_select(enum tshmem_collect_op op,
                                       const struct tshmem_collect_call *call, size_t nbytes)
{
    (void)op; (void)call; (void)nbytes;
    TSHMEM_TODO("The selector", "a team wider than the flag area gets the ring; otherwise the first row of the table that matches");
}
