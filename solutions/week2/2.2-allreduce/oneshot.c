/* oneshot.c: the one-shot allreduce: every PE reads every PE's source and combines them all.
 *
 * Chapter 2.2. The algorithm for small messages. Each PE says it has entered the call (its
 * source is ready), waits until every other PE has said so, then loads the n sources straight
 * out of their slices (tshmem_ptr: on a node they are plain memory, as NVLink peer memory is on
 * a GPU) and combines them in team order 0, 1, ..., n-1. Every PE does the whole reduction, so
 * every PE reads n * bytes; what it saves is steps: one exchange of flags and no waiting on any
 * chain of partial results. Because every PE combines in the same order, every PE gets the
 * same bits.
 *
 * Before returning, a PE waits until every other PE has finished reading its source: the
 * caller may overwrite the source as soon as the call returns. In place (dest == source) the
 * result cannot go straight into dest, which the others are still reading: it goes into this
 * PE's scratch and is copied over once they are done, one scratch-sized piece at a time.
 */
#define TSHMEM_CHAPTER "2.2"
#include <string.h>

#include "tshmem_internal.h"

#define ONESHOT_BLOCK (8u << 10) /* bytes combined at a time: the partial result stays in L1 */

int tshmem_allreduce_oneshot(const struct tshmem_reduce_call *c)
{
    /* BEGIN SOLUTION (One-shot): announce, wait for everyone, combine all n sources block by block in team order, then wait until nobody reads our source */
    _Alignas(64) char bounce[2][ONESHOT_BLOCK]; /* off-node sources land here (chapter 2.5) */
    char *scratch = tshmem_g.reserved->scratch;
    int in_place = c->dest == c->source;
    tshmem_reduce_announce(c, 0); /* step 0: my source is ready */
    tshmem_reduce_wait_all(c, 0);
    uint64_t step = 0;
    for (size_t off = 0; off < c->bytes; off += TSHMEM_SCRATCH_BYTES) {
        size_t len = c->bytes - off < TSHMEM_SCRATCH_BYTES ? c->bytes - off : TSHMEM_SCRATCH_BYTES;
        char *out = in_place ? scratch : c->dest + off;
        for (size_t b = 0; b < len; b += ONESHOT_BLOCK) {
            size_t blen = len - b < ONESHOT_BLOCK ? len - b : ONESHOT_BLOCK;
            const char *at = c->source + off + b;
            const void *first = tshmem_reduce_peek(c, 0, at, blen, bounce[0]);
            if (c->n == 1) {
                memcpy(out + b, first, blen);
                continue;
            }
            /* Team order on every PE: ((s0 + s1) + s2) + ... gives every PE the same bits. */
            const void *second = tshmem_reduce_peek(c, 1, at, blen, bounce[1]);
            tshmem_reduce_local3(c->dtype, c->op, out + b, first, second, blen / c->elem);
            for (int j = 2; j < c->n; j++)
                tshmem_reduce_local(c->dtype, c->op, out + b,
                                    tshmem_reduce_peek(c, j, at, blen, bounce[0]),
                                    blen / c->elem);
        }
        /* Step q + 1: I have read piece q of every source. Once all have, my source's piece q
         * is mine again, and in place I may overwrite it with the result. */
        tshmem_reduce_announce(c, ++step);
        tshmem_reduce_wait_all(c, step);
        if (in_place)
            memcpy(c->dest + off, scratch, len);
    }
    return 0;
    /* END SOLUTION */
}
