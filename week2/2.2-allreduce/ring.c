/* ring.c: the ring allreduce: a reduce-scatter around the ring, then an allgather.
 *
 * Chapter 2.2. The vector is cut into n blocks. In reduce-scatter step j (j = 0 .. n-2) PE i
 * sends its partial result of block (i - j) mod n to PE i+1 and combines the partial of block
 * (i - j - 1) mod n that PE i-1 sent it with its own source. After n-1 steps PE i holds the
 * full result of block (i + 1) mod n. The allgather then passes the finished blocks around
 * the ring n-1 times. Every PE sends and receives 2(n-1)/n of the vector, whatever n is: the
 * least any allreduce can move over a ring of links, which is why NCCL uses it for large
 * messages.
 *
 * Each block goes in K chunks through the successor's scratch, cut into RING_SLOTS slots:
 *   ring_data (on the receiver, written by its predecessor): chunks delivered, tag(seq, k)
 *   ring_ack  (on the sender, written by its successor):    chunks consumed,  tag(seq, k)
 * Chunk k goes into slot k % RING_SLOTS once ring_ack says chunk k - RING_SLOTS was consumed;
 * at entry each PE gives its predecessor the first credits with ring_ack = tag(seq, 0). The
 * allgather puts finished chunks straight into the successor's dest, once the successor has
 * consumed every reduce-scatter chunk (and so has read its dest for the last time).
 */
#define TSHMEM_CHAPTER "2.2"
#include <string.h>

#include "tshmem_internal.h"

#define RING_SLOTS 8 /* chunks in flight between two neighbours: 128 KiB each */

/* TODO (chapter 2.2, "Ring: reduce-scatter then allgather"): where block b and its chunk i lie */

int tshmem_allreduce_ring(const struct tshmem_reduce_call *c)
{
    (void)c;
    TSHMEM_TODO("Ring: reduce-scatter then allgather", "give credits, n-1 reduce-scatter steps of K chunks through the successor's scratch, then n-1 allgather steps into its dest");
}
