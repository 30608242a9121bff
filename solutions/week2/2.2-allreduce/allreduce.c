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
    /* BEGIN SOLUTION (Announcing and waiting): store tag(seq, step) into from[me] on every other team PE */
    /* SET with release: each PE writes only its own word, from[me], on the others, and what it
     * did before (its source is ready, or it has finished reading theirs) is seen with it. */
    for (int j = 0; j < c->n; j++)
        if (j != c->me)
            tshmem_signal_op(&c->flags->from[c->me], tshmem_coll_tag(c->seq, step),
                             TSHMEM_SIGNAL_SET, c->t->pes[j]);
    /* END SOLUTION */
}

void tshmem_reduce_wait_all(const struct tshmem_reduce_call *c, uint64_t step)
{
    /* BEGIN SOLUTION (Announcing and waiting): wait until every other team PE's from[j] is at least tag(seq, step) */
    /* GE: a fast PE may already be at a later step of this call, or in the next call. */
    for (int j = 0; j < c->n; j++)
        if (j != c->me)
            tshmem_uint64_wait_until(&c->flags->from[j], TSHMEM_CMP_GE,
                                     tshmem_coll_tag(c->seq, step));
    /* END SOLUTION */
}

/* BEGIN SOLUTION (Checking the call): the number of the next call on each team */
static uint64_t reduce_seq[TSHMEM_MAX_TEAMS];
/* END SOLUTION */

void tshmem_reduce_begin(struct tshmem_reduce_call *c, const char *func, tshmem_team_t team,
                         void *dest, const void *source, size_t count, enum tshmem_dtype dtype,
                         enum tshmem_op op)
{
    tshmem_require_live(func);
    tshmem_check_team(func, team);
    /* BEGIN SOLUTION (Checking the call): check membership, type, operation, sizes and buffers, then fill in c */
    const struct tshmem_team *t = &tshmem_g.teams[team];
    if (t->my_pe < 0)
        tshmem_fail(func, "PE %d is not a member of team %d, so it cannot take part in the "
                    "team's reduction. Call it only on the team's PEs (tshmem_team_my_pe(team) "
                    ">= 0).", tshmem_g.my_pe, team);
    size_t elem = tshmem_dtype_size(dtype);
    if (elem == 0)
        tshmem_fail(func, "dtype %d is not one of TSHMEM_DTYPE_FLOAT, _DOUBLE, _INT64.", (int)dtype);
    if (op != TSHMEM_OP_SUM && op != TSHMEM_OP_MAX)
        tshmem_fail(func, "op %d is neither TSHMEM_OP_SUM nor TSHMEM_OP_MAX.", (int)op);
    if (count > SIZE_MAX / elem)
        tshmem_fail(func, "count %zu elements of %zu bytes overflow a size_t: pass the number "
                    "of elements, not of bytes.", count, elem);
    size_t bytes = count * elem;
    if (bytes > TSHMEM_REDUCE_MAX_BYTES)
        tshmem_fail(func, "count %zu elements of %zu bytes is more than one call takes (2 GiB): "
                    "reduce it in several calls.", count, elem);
    if (t->n_pes > TSHMEM_COLL_MAX_PES)
        tshmem_fail(func, "team %d has %d PEs; the reduction flags have room for %d.", team,
                    t->n_pes, TSHMEM_COLL_MAX_PES);
    if (bytes > 0) {
        const char *d = dest, *s = source, *heap = tshmem_g.slice + TSHMEM_RESERVED_BYTES;
        const char *end = tshmem_g.slice + tshmem_g.slice_bytes;
        if (d < heap || d >= end || s < heap || s >= end)
            tshmem_fail(func, "%s %p is not in the symmetric heap: the team's PEs read and write "
                        "each other's copies of dest and source, so both must come from "
                        "tshmem_malloc (called alike on every PE).", d < heap || d >= end ?
                        "dest" : "source", d < heap || d >= end ? dest : source);
        tshmem_check_symmetric(func, "dest", dest, bytes); /* and the end is in the heap too */
        tshmem_check_symmetric(func, "source", source, bytes);
        if (d != s && d < s + bytes && s < d + bytes)
            tshmem_fail(func, "dest %p and source %p overlap by part of their %zu bytes: pass "
                        "the same buffer (in place) or two separate ones.", dest, source, bytes);
    }
    int on_node = 1;
    for (int j = 0; j < t->n_pes; j++)
        on_node &= tshmem_g.pe_node[t->pes[j]] == tshmem_g.node;
    *c = (struct tshmem_reduce_call){
        .func = func, .team = team, .t = t, .me = t->my_pe, .n = t->n_pes,
        .dest = dest, .source = source, .count = count, .elem = elem, .bytes = bytes,
        .dtype = dtype, .op = op, .on_node = on_node, .seq = ++reduce_seq[team],
        .flags = &tshmem_g.reserved->reduce[team],
    };
    /* END SOLUTION */
}

/* The algorithm for TSHMEM_ALGO_AUTO: a forced algorithm never comes here (reduce, below, runs
 * it as it is), so each algorithm can be checked as soon as it is written. */
static enum tshmem_algo select_algo(const struct tshmem_reduce_call *c)
{
    /* BEGIN SOLUTION (The selector): the crossover table, measured, and the choice it makes */
    /* For teams of up to max_pes PEs: one-shot up to oneshot_max bytes, else recursive doubling up
     * to rd_max bytes, else the bandwidth algorithm: two-shot when the whole team shares this node
     * (direct loads and stores reach every PE), the ring when it spans nodes. Every row was
     * measured with bench_2_2 (each algorithm forced, same run): 2 PEs on a 2-core machine, 8 and
     * 16 PEs on a 32-core one; the crossover sits between the last size where RD wins and the first
     * where two-shot does (book: performance guide, "Crossovers"). One-shot never won: its n - 1
     * loads of every peer's vector cost more than RD's log2 n exchanges even at 8 bytes. */
    static const struct crossover {
        int max_pes;
        size_t oneshot_max, rd_max;
    } crossovers[] = {
        {2, 0, 256},        /* measured: RD ahead up to 128 B, two-shot from 512 B */
        {8, 0, 1024},       /* measured at 8 PEs: RD ahead up to 512 B, two-shot from 2 KiB */
        {1 << 30, 0, 2048}, /* measured at 16 PEs: RD ahead up to 2 KiB, two-shot from 8 KiB */
    };

    /* A team that spans nodes (chapter 2.5): every step of the ring is then a message through the
     * proxies, 2 (n - 1) of them against recursive doubling's log2 n rounds. Measured across two
     * virtual nodes (bench_2_2, each algorithm forced), RD stays ahead up to 32 KiB on 2 and 8 PEs;
     * on 16 PEs no algorithm was steadily ahead up to 8 KiB and RD stalled from 32 KiB, so that row
     * stays as on one node (book/performance.md, "Why the waits and the proxy are tuned as they
     * are"). Where a node holds two PEs or more the hierarchical allreduce may take over
     * (hierarchy_pays, below). */
    static const struct crossover crossovers_offnode[] = {
        {8, 0, 32 << 10},
        {1 << 30, 0, 2048},
    };

    const struct crossover *x = c->on_node ? crossovers : crossovers_offnode;
    while (c->n > x->max_pes)
        x++;
    if (c->bytes <= x->oneshot_max)
        return TSHMEM_ALGO_ONESHOT;
    if (c->bytes <= x->rd_max)
        return TSHMEM_ALGO_RECURSIVE_DOUBLING;
    return c->on_node ? TSHMEM_ALGO_TWO_SHOT : TSHMEM_ALGO_RING;
    /* END SOLUTION */
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
