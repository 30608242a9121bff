/* allreduce.c: the public reductions, the checks every call goes through, and the selector.
 *
 * Chapter 2.2. tshmem_float_sum_reduce and its siblings are one function, tshmem_allreduce,
 * with the data type and operation filled in and the algorithm left to the selector. A call
 * is checked and described once (struct tshmem_reduce_call), then handed to one of the
 * algorithms of this folder: oneshot.c, recursive_doubling.c, ring.c and twoshot.c.
 *
 * What every algorithm promises, so that calls can follow each other on any team with no
 * reset in between:
 *   - it writes into a peer's memory (scratch or dest) or reads a peer's source only after
 *     that peer has said, in this call, that it has entered the call (recursive doubling's
 *     small calls excepted: they land in memory of their own team's, used by turns);
 *   - when it returns, no PE will touch this PE's memory for this call any more.
 */
#define TSHMEM_CHAPTER "2.2"
#include <string.h>

#include "tshmem_internal.h"

const void *tshmem_reduce_peek(const struct tshmem_reduce_call *c, int j, const void *addr,
                               size_t len, void *bounce)
{
    int pe = c->t->pes[j];
    const void *p = tshmem_ptr(addr, pe);
    if (p)
        return p; /* on this node: load straight from the peer's slice, no copy */
    tshmem_getmem(bounce, addr, len, pe);
    return bounce;
}

void tshmem_reduce_announce(const struct tshmem_reduce_call *c, uint64_t step)
{
    (void)c; (void)step;
    TSHMEM_TODO("Announcing and waiting", "store tag(seq, step) into from[me] on every other team PE");
}

void tshmem_reduce_wait_all(const struct tshmem_reduce_call *c, uint64_t step)
{
    (void)c; (void)step;
    TSHMEM_TODO("Announcing and waiting", "wait until every other team PE's from[j] is at least tag(seq, step)");
}

/* TODO (chapter 2.2, "Checking the call"): the number of the next call on each team */

void tshmem_reduce_begin(struct tshmem_reduce_call *c, const char *func, tshmem_team_t team,
                         void *dest, const void *source, size_t count, enum tshmem_dtype dtype,
                         enum tshmem_op op)
{
    tshmem_require_live(func);
    tshmem_check_team(func, team);
    (void)c; (void)dest; (void)source; (void)count; (void)dtype; (void)op;
    TSHMEM_TODO("Checking the call", "check membership, type, operation, sizes and buffers, then fill in c");
}

/* The algorithm for TSHMEM_ALGO_AUTO: a forced algorithm never comes here (reduce, below, runs
 * it as it is), so each algorithm can be checked as soon as it is written. */
static enum tshmem_algo select_algo(const struct tshmem_reduce_call *c)
{
    (void)c;
    TSHMEM_TODO("The selector", "the crossover table, measured, and the choice it makes");
}

/* Provided (chapter 2.5): 1 if the team spans nodes, some node holds two or more of its PEs,
 * and the hierarchy pays. Then AUTO runs the hierarchical allreduce, which keeps most of the
 * bytes on the shared-memory path and sends one PE per node across. It pays from 1 KiB: below,
 * the flat recursive doubling lands in its eager area with no entry signal, but above every
 * flat round across nodes waits for an entry signal through the proxies, where the hierarchy's
 * leaders (one per node, a small team) stay on the eager path. And it pays at every size when a
 * node holds 4 or more of the team's PEs: the flat rounds of many PEs across nodes then take a
 * different time in each run. The figures, flat against hierarchical on each layout:
 * book/performance.md, "Why the waits and the proxy are tuned as they are". */
#define HIERARCHY_MIN_BYTES ((size_t)1 << 10)
#define HIERARCHY_ALWAYS_PES 4
static int hierarchy_pays(const struct tshmem_reduce_call *c)
{
    /* The most PEs of this team on one node, per team handle (a handle's members never change). */
    static int most_on_a_node[TSHMEM_MAX_TEAMS];
    if (c->on_node)
        return 0;
    int *most = &most_on_a_node[c->team];
    if (*most == 0) /* the team's first call: count once */
        for (int j = 0; j < c->n; j++) {
            int here = 0;
            for (int k = 0; k < c->n; k++)
                here += tshmem_g.pe_node[c->t->pes[k]] == tshmem_g.pe_node[c->t->pes[j]];
            *most = here > *most ? here : *most;
        }
    if (*most < 2)
        return 0; /* one PE per node: nothing to gain */
    return c->bytes >= HIERARCHY_MIN_BYTES || *most >= HIERARCHY_ALWAYS_PES;
}

/* Opens the call (its flags and scratch in the reserved area are the runtime's own until it
 * returns, and every PE's count, dtype and op are compared: TSHMEM_COLLECTIVE), checks and
 * describes it, then runs `algo` (or the selector's choice for AUTO). */
static int reduce(const char *func, enum tshmem_fn fn, tshmem_team_t team, void *dest,
                  const void *source, size_t count, enum tshmem_dtype dtype, enum tshmem_op op,
                  enum tshmem_algo algo)
{
    TSHMEM_COLLECTIVE(fn, team, count, dtype, op);
    struct tshmem_reduce_call c;
    tshmem_reduce_begin(&c, func, team, dest, source, count, dtype, op);
    /* Chapter 2.5 (provided): a team across nodes, reduced node by node. */
    if (algo == TSHMEM_ALGO_HIERARCHICAL || (algo == TSHMEM_ALGO_AUTO && hierarchy_pays(&c)))
        return c.count == 0 ? 0 : tshmem_allreduce_hierarchical(&c);
    /* Provided: an unknown algo is refused; a forced one runs as it is, AUTO as select_algo
       chooses. */
    int (*const run[])(const struct tshmem_reduce_call *) = {
        [TSHMEM_ALGO_ONESHOT] = tshmem_allreduce_oneshot,
        [TSHMEM_ALGO_RECURSIVE_DOUBLING] = tshmem_allreduce_recursive_doubling,
        [TSHMEM_ALGO_RING] = tshmem_allreduce_ring,
        [TSHMEM_ALGO_TWO_SHOT] = tshmem_allreduce_twoshot,
    };
    if (algo != TSHMEM_ALGO_AUTO &&
        ((unsigned)algo >= sizeof run / sizeof run[0] || run[algo] == NULL))
        tshmem_fail(func, "algo %d is not an allreduce algorithm: use TSHMEM_ALGO_AUTO, _ONESHOT, "
                    "_RECURSIVE_DOUBLING, _RING, _TWO_SHOT or _HIERARCHICAL.", (int)algo);
    if (c.count == 0)
        return 0; /* nothing to combine: no PE needs to hear from another */
    return run[algo == TSHMEM_ALGO_AUTO ? select_algo(&c) : algo](&c);
}

int tshmem_allreduce(tshmem_team_t team, void *dest, const void *source, size_t count,
                     enum tshmem_dtype dtype, enum tshmem_op op, enum tshmem_algo algo)
{
    return reduce(__func__, TSHMEM_FN_ALLREDUCE, team, dest, source, count, dtype, op, algo);
}

int tshmem_float_sum_reduce(tshmem_team_t team, float *dest, const float *source, size_t nreduce)
{
    return reduce(__func__, TSHMEM_FN_FLOAT_SUM_REDUCE, team, dest, source, nreduce,
                  TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM, TSHMEM_ALGO_AUTO);
}

int tshmem_double_sum_reduce(tshmem_team_t team, double *dest, const double *source,
                             size_t nreduce)
{
    return reduce(__func__, TSHMEM_FN_DOUBLE_SUM_REDUCE, team, dest, source, nreduce,
                  TSHMEM_DTYPE_DOUBLE, TSHMEM_OP_SUM, TSHMEM_ALGO_AUTO);
}

int tshmem_int64_sum_reduce(tshmem_team_t team, int64_t *dest, const int64_t *source,
                            size_t nreduce)
{
    return reduce(__func__, TSHMEM_FN_INT64_SUM_REDUCE, team, dest, source, nreduce,
                  TSHMEM_DTYPE_INT64, TSHMEM_OP_SUM, TSHMEM_ALGO_AUTO);
}

int tshmem_float_max_reduce(tshmem_team_t team, float *dest, const float *source, size_t nreduce)
{
    return reduce(__func__, TSHMEM_FN_FLOAT_MAX_REDUCE, team, dest, source, nreduce,
                  TSHMEM_DTYPE_FLOAT, TSHMEM_OP_MAX, TSHMEM_ALGO_AUTO);
}
