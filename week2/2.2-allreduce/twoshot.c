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
    (void)c;
    TSHMEM_TODO("Two-shot", "announce and wait; combine my block of all sources into a local buffer piece by piece; put each piece into every dest; announce done and wait");
}
