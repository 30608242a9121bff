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
    (void)c;
    TSHMEM_TODO("One-shot", "announce, wait for everyone, combine all n sources block by block in team order, then wait until nobody reads our source");
}
