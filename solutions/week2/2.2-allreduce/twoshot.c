/* twoshot.c: the two-shot allreduce: each PE reduces one block of all sources and writes it
 * into every PE's dest.
 *
 * Chapter 2.2. The bandwidth algorithm of a node where every PE can load and store every
 * other PE's memory (NVLink, or here the shared segment). The vector is cut into n blocks;
 * PE i combines block i of all n sources (direct loads, in team order) and stores the result
 * into block i of all n dests. That is a reduce-scatter by direct loads and an allgather by
 * direct stores, done in one pass, with no scratch and no staging copy: each PE reads
 * `bytes` and writes `bytes`, and the n PEs share the arithmetic.
 *
 * Synchronization is two exchanges of flags: "I have entered" (my source is ready, my dest may
 * be written) and "I am done" (I have finished reading your source and writing your dest).
 * A PE returns only after everyone's "done", because after that the caller owns both buffers.
 */
#define TSHMEM_CHAPTER "2.2"
#include <string.h>

#include "tshmem_internal.h"

#define TWOSHOT_BLOCK (16u << 10) /* bytes combined at a time: the partial result stays in L1 */

int tshmem_allreduce_twoshot(const struct tshmem_reduce_call *c)
{
    /* BEGIN SOLUTION (Two-shot): announce and wait; combine my block of all sources into a local buffer piece by piece; put each piece into every dest; announce done and wait */
    _Alignas(64) char acc[TWOSHOT_BLOCK], bounce[2][TWOSHOT_BLOCK];
    /* My block: bytes [lo, hi). Blocks are whole cache lines (the last may end early, the
     * last few may be empty), so that no two PEs ever store into one line of a dest. */
    size_t line = TSHMEM_CACHE_LINE, per = (c->bytes + (size_t)c->n - 1) / (size_t)c->n;
    per = (per + line - 1) / line * line;
    size_t lo = per * (size_t)c->me, hi = lo + per;
    lo = lo < c->bytes ? lo : c->bytes;
    hi = hi < c->bytes ? hi : c->bytes;
    tshmem_reduce_announce(c, 0); /* step 0: my source is ready and my dest may be written */
    tshmem_reduce_wait_all(c, 0);
    for (size_t off = lo; off < hi; off += TWOSHOT_BLOCK) {
        size_t len = hi - off < TWOSHOT_BLOCK ? hi - off : TWOSHOT_BLOCK;
        const char *at = c->source + off;
        const void *first = tshmem_reduce_peek(c, 0, at, len, bounce[0]);
        if (c->n == 1)
            memcpy(acc, first, len);
        else
            tshmem_reduce_local3(c->dtype, c->op, acc, first,
                                 tshmem_reduce_peek(c, 1, at, len, bounce[1]), len / c->elem);
        for (int j = 2; j < c->n; j++)
            tshmem_reduce_local(c->dtype, c->op, acc,
                                tshmem_reduce_peek(c, j, at, len, bounce[0]), len / c->elem);
        /* Start with the next PE so that the n PEs do not all store into PE 0 at once. */
        for (int k = 1; k <= c->n; k++)
            tshmem_putmem(c->dest + off, acc, len, c->t->pes[(c->me + k) % c->n]);
    }
    tshmem_reduce_announce(c, 1); /* step 1: done with your source and your dest */
    tshmem_reduce_wait_all(c, 1);
    return 0;
    /* END SOLUTION */
}
