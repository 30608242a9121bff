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

/* BEGIN SOLUTION (Ring: reduce-scatter then allgather): where block b and its chunk i lie */
struct ring_span {
    size_t lo, len; /* bytes from the start of the vector */
};

/* Chunk i of K of block b: blocks differ by at most one element, chunks of a block too. */
static struct ring_span ring_chunk(const struct tshmem_reduce_call *c, int b, size_t i, size_t K)
{
    size_t n = (size_t)c->n, per = c->count / n, rest = c->count % n, ub = (size_t)b;
    size_t block_lo = ub * per + (ub < rest ? ub : rest), block_len = per + (ub < rest);
    size_t lo = block_lo + i * block_len / K, hi = block_lo + (i + 1) * block_len / K;
    return (struct ring_span){lo * c->elem, (hi - lo) * c->elem};
}
/* END SOLUTION */

int tshmem_allreduce_ring(const struct tshmem_reduce_call *c)
{
    /* BEGIN SOLUTION (Ring: reduce-scatter then allgather): give credits, n-1 reduce-scatter steps of K chunks through the successor's scratch, then n-1 allgather steps into its dest */
    int n = c->n, me = c->me;
    if (n == 1) {
        if (c->dest != c->source)
            memcpy(c->dest, c->source, c->bytes);
        return 0;
    }
    struct tshmem_coll_flags *f = c->flags;
    char *scratch = tshmem_g.reserved->scratch;
    size_t slot = TSHMEM_SCRATCH_BYTES / RING_SLOTS, slot_elems = slot / c->elem;
    size_t max_block = (c->count + (size_t)n - 1) / (size_t)n;
    size_t K = (max_block + slot_elems - 1) / slot_elems; /* chunks per block */
    if (K == 0)
        K = 1;
    int succ = c->t->pes[(me + 1) % n], pred = c->t->pes[(me + n - 1) % n];
    uint64_t k = 0; /* chunks sent so far = chunks received so far */

    /* My scratch is free: my predecessor may fill the first RING_SLOTS slots. */
    tshmem_signal_op(&f->ring_ack.value, tshmem_coll_tag(c->seq, 0), TSHMEM_SIGNAL_SET, pred);
    for (int j = 0; j < n - 1; j++) {
        int send = ((me - j) % n + n) % n, recv = ((me - j - 1) % n + n) % n;
        for (size_t i = 0; i < K; i++, k++) {
            char *slot_at = scratch + (k % RING_SLOTS) * slot;
            struct ring_span s = ring_chunk(c, send, i, K), r = ring_chunk(c, recv, i, K);
            /* Send: my partial of this chunk (step 0: my source) into the successor's slot,
             * once the chunk that used the slot before has been consumed. */
            uint64_t need = k >= RING_SLOTS ? k - RING_SLOTS + 1 : 0;
            tshmem_uint64_wait_until(&f->ring_ack.value, TSHMEM_CMP_GE,
                                     tshmem_coll_tag(c->seq, need));
            tshmem_putmem_signal(slot_at, (j == 0 ? c->source : c->dest) + s.lo, s.len,
                                 &f->ring_data.value, tshmem_coll_tag(c->seq, k + 1),
                                 TSHMEM_SIGNAL_SET, succ);
            /* Receive: the predecessor's partial, plus my source, into my dest. */
            tshmem_uint64_wait_until(&f->ring_data.value, TSHMEM_CMP_GE,
                                     tshmem_coll_tag(c->seq, k + 1));
            tshmem_reduce_local3(c->dtype, c->op, c->dest + r.lo, c->source + r.lo, slot_at,
                                 r.len / c->elem);
            tshmem_signal_op(&f->ring_ack.value, tshmem_coll_tag(c->seq, k + 1),
                             TSHMEM_SIGNAL_SET, pred);
        }
    }
    /* Block (me + 1) mod n of my dest is final. Before writing the successor's dest, wait
     * until it has consumed all k reduce-scatter chunks: it sends chunk k before it consumes
     * chunk k, so by then it has read its dest for partial results for the last time. (The
     * dependencies around the ring imply it already, see book 2.2, question 1: the wait says
     * it where it matters, and costs nothing once the ring runs in step.) */
    tshmem_uint64_wait_until(&f->ring_ack.value, TSHMEM_CMP_GE, tshmem_coll_tag(c->seq, k));
    for (int j = 0; j < n - 1; j++) {
        int send = ((me + 1 - j) % n + n) % n; /* I receive block (me - j) mod n in turn */
        for (size_t i = 0; i < K; i++, k++) {
            struct ring_span s = ring_chunk(c, send, i, K);
            tshmem_putmem_signal(c->dest + s.lo, c->dest + s.lo, s.len, &f->ring_data.value,
                                 tshmem_coll_tag(c->seq, k + 1), TSHMEM_SIGNAL_SET, succ);
            tshmem_uint64_wait_until(&f->ring_data.value, TSHMEM_CMP_GE,
                                     tshmem_coll_tag(c->seq, k + 1));
        }
    }
    return 0;
    /* END SOLUTION */
}
