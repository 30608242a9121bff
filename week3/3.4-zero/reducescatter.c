/* reducescatter.c: tshmem_TYPE_sum_reducescatter, by direct loads and around a ring.
 *
 * Chapter 3.4. source holds one block of nreduce elements for every team PE; team PE i ends
 * with the sum over the team of everyone's block i. It is the first half of the allreduce of
 * 2.2 (two-shot and ring both begin with it), and the collective ZeRO is made of: each PE
 * keeps only its shard of the summed gradient, so it needs only its block of the sum.
 *
 *   direct  Every PE loads its own block from every peer's source (the shared segment, as
 *           NVLink does) and adds them in team order 0, 1, ..., n-1. One round of "my source
 *           is ready" flags before, one of "I have finished reading yours" after, each PE's
 *           flag published in its own memory for the others to read. Each PE reads (n-1)/n
 *           of the vector once: the least any reduce-scatter moves.
 *   ring    Partial sums travel round the ring through the successor's scratch: in step j,
 *           team PE i sends its partial of block (i - j - 1) mod n to PE i+1, which adds its
 *           own block and passes it on; after n-1 steps PE i holds block i. Block b is added in
 *           the order b+1, b+2, ..., b: fixed, so repeated calls give the same bits, but not
 *           the direct order (the two agree on 1 and 2 PEs only). Each PE talks to one
 *           neighbour only, which is what a ring of network links wants.
 *
 * Both reuse 2.2's machinery: tshmem_reduce_begin numbers the call on the team's reduce
 * sequence and its flags, so reduce-scatters and allreduces interleave freely with no reset.
 */
#define TSHMEM_CHAPTER "3.4"
#include <string.h>

#include "tshmem_internal.h"

#define RS_PIECE (16u << 10) /* bytes added at a time by direct: the partial sum stays in L1 */
#define RS_SLOTS 8           /* ring: chunks in flight between two neighbours, 128 KiB each */

/* Provided: one call, checked. Every team PE describes the same call: the whole source
 * (n x nreduce elements) is the vector that tshmem_reduce_begin sees. */
struct rs_call {
    struct tshmem_reduce_call c; /* c.source: the whole source; c.count: n x nreduce */
    char *dest;                  /* my block of the sum */
    size_t block;                /* bytes per block: nreduce x elem */
};

static void rs_begin(struct rs_call *r, const char *func, tshmem_team_t team, void *dest,
                     const void *source, size_t nreduce, enum tshmem_dtype dtype)
{
    tshmem_require_live(func);
    tshmem_check_team(func, team);
    (void)r; (void)dest; (void)source; (void)nreduce; (void)dtype;
    TSHMEM_TODO("Checking the call", "membership, sizes, both buffers symmetric and big enough, in place refused; then tshmem_reduce_begin on the whole source");
}

/* Direct's flags, pulled rather than pushed on one node: step `step` of the call goes into my
 * own word from[me] in my own slice (nobody else writes it there), and I read every peer's own
 * word where it lies. Each PE writes one line and reads n - 1. Pushed (2.2's announce), each PE
 * writes its word into the same line of every peer's from[], and n - 1 writers queue for each
 * line. Across nodes a peer's word is a network get away: there, 2.2's announce and wait. */
static inline void rs_announce(const struct tshmem_reduce_call *c, uint64_t step)
{
    (void)c; (void)step;
    TSHMEM_TODO("Publishing a step", "on one node (c->on_node), store tag(seq, step) into my own from[me] with release; across nodes, 2.2's announce");
}

static inline void rs_wait_all(const struct tshmem_reduce_call *c, uint64_t step)
{
    (void)c; (void)step;
    TSHMEM_TODO("Publishing a step", "on one node, wait until every other team PE's own from[j], read in its slice (tshmem_ptr), is at least tag(seq, step), with acquire and tshmem_spin_pause; across nodes, 2.2's wait");
}

static int rs_direct(const struct rs_call *r)
{
    (void)r;
    TSHMEM_TODO("Direct", "publish step 0 and wait for all (rs_announce, rs_wait_all); my block of source 0, then add every other PE's in team order, piece by piece; publish step 1 (done reading) and wait");
}

static int rs_ring(const struct rs_call *r)
{
    (void)r;
    TSHMEM_TODO("Ring", "give credits; for every chunk of a block, n-1 steps: send my partial into the successor's scratch slot, receive the predecessor's and add my own block to it");
}

/* The algorithm TSHMEM_ALGO_AUTO runs: every member picks the same, from collective facts. */
static enum tshmem_algo select_algo(const struct rs_call *r)
{
    (void)r;
    TSHMEM_TODO("The selector", "pick direct or ring from your measurements (bench_3_4), on facts every member shares");
}

/* Opens the call (TSHMEM_COLLECTIVE: the team's flags and scratch are the runtime's own until
 * it returns, and every PE's nreduce and dtype are compared), then checks and runs it. */
static int reducescatter(const char *func, enum tshmem_fn fn, tshmem_team_t team, void *dest,
                         const void *source, size_t nreduce, enum tshmem_dtype dtype,
                         enum tshmem_algo algo)
{
    TSHMEM_COLLECTIVE(fn, team, nreduce, dtype, TSHMEM_OP_SUM);
    if (algo != TSHMEM_ALGO_AUTO && algo != TSHMEM_ALGO_DIRECT && algo != TSHMEM_ALGO_RING)
        tshmem_fail(func, "algo %d is not a reduce-scatter algorithm: use TSHMEM_ALGO_AUTO, "
                    "_DIRECT or _RING.", (int)algo);
    struct rs_call r;
    rs_begin(&r, func, team, dest, source, nreduce, dtype);
    if (nreduce == 0)
        return 0; /* nothing to add: no PE needs to hear from another */
    if (algo == TSHMEM_ALGO_AUTO)
        algo = select_algo(&r);
    return algo == TSHMEM_ALGO_RING ? rs_ring(&r) : rs_direct(&r);
}

int tshmem_reducescatter(tshmem_team_t team, void *dest, const void *source, size_t nreduce,
                         enum tshmem_dtype dtype, enum tshmem_algo algo)
{
    return reducescatter(__func__, TSHMEM_FN_REDUCESCATTER, team, dest, source, nreduce, dtype,
                         algo);
}

int tshmem_float_sum_reducescatter(tshmem_team_t team, float *dest, const float *source,
                                   size_t nreduce)
{
    return reducescatter(__func__, TSHMEM_FN_FLOAT_SUM_REDUCESCATTER, team, dest, source,
                         nreduce, TSHMEM_DTYPE_FLOAT, TSHMEM_ALGO_AUTO);
}

int tshmem_double_sum_reducescatter(tshmem_team_t team, double *dest, const double *source,
                                    size_t nreduce)
{
    return reducescatter(__func__, TSHMEM_FN_DOUBLE_SUM_REDUCESCATTER, team, dest, source,
                         nreduce, TSHMEM_DTYPE_DOUBLE, TSHMEM_ALGO_AUTO);
}
