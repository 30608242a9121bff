/* ring.c: the first programs on your own runtime: a shift, a broadcast and a token on a ring.
 *
 * Chapter 1.5. PE i talks only to its neighbours: it sends to next = (i + 1) % n and receives
 * from prev = (i - 1 + n) % n. Everything here is built from chapter 1.3-1.4 calls on
 * TSHMEM_TEAM_WORLD and from a few words of the reserved area, tshmem_g.reserved->ring[]:
 *
 *   ring[RING_*_CREDIT]      written by next: "I entered call seq, you may write into my dest"
 *   ring[RING_BCAST_DATA]    written by prev: "call seq's data is here"
 *   ring[RING_TOKEN]         written by prev: the token's hop count
 *   ring[RING_PIPE_DATA]     written by prev: chunks delivered so far
 *
 * Every word has one writer and only grows, so no call ever resets one: a call waits for
 * "at least" the value it expects, and a neighbour that is already one call ahead is harmless.
 */
#define TSHMEM_CHAPTER "1.5"
#include <string.h>

#include "tshmem_internal.h"

enum {
    RING_SHIFT_CREDIT, RING_BCAST_CREDIT, RING_PIPE_CREDIT, /* written by next */
    RING_BCAST_DATA, RING_TOKEN, RING_PIPE_DATA              /* written by prev */
};

#define RING_DEFAULT_CHUNK (64u << 10) /* fits in L2 next to its neighbour's chunk */

/* BEGIN SOLUTION (Sequence numbers, not resets): counters of this PE's calls, hops and chunks so far */
/* How many times this PE has entered each call: the sequence numbers its flags carry. Every PE
 * makes the same calls in the same order, so the counters agree across PEs. */
static uint64_t shift_calls, bcast_calls, token_hops, pipe_calls, pipe_chunks;
/* END SOLUTION */

static inline uint64_t *ring_word(int which)
{
    return &tshmem_g.reserved->ring[which].value;
}

static inline int ring_next(void)
{
    return (tshmem_g.my_pe + 1) % tshmem_g.n_pes;
}

static inline int ring_prev(void)
{
    return (tshmem_g.my_pe + tshmem_g.n_pes - 1) % tshmem_g.n_pes;
}

static inline void check_root(const char *func, int pe_root)
{
    if (pe_root < 0 || pe_root >= tshmem_g.n_pes)
        tshmem_fail(func, "pe_root %d is out of range: this job has PEs 0 to %d; every PE must "
                    "pass the same root.", pe_root, tshmem_g.n_pes - 1);
}

/* Credits: before writing into next's dest for call `seq`, wait until next has entered that
 * call (so it no longer reads what the previous call left there); on entry, tell prev the same.
 */
static inline void give_credit(int which, uint64_t seq)
{
    /* BEGIN SOLUTION (Credits: when may I write into my neighbour?): tell prev that this PE entered call seq */
    /* Release: everything this PE did in earlier calls (reading its dest) comes before it. */
    tshmem_signal_op(ring_word(which), seq, TSHMEM_SIGNAL_SET, ring_prev());
    /* END SOLUTION */
}

static inline void take_credit(int which, uint64_t seq)
{
    /* BEGIN SOLUTION (Credits: when may I write into my neighbour?): wait until next has entered call seq */
    /* Acquire: next's reads of its dest in the previous call happened before its credit. */
    tshmem_uint64_wait_until(ring_word(which), TSHMEM_CMP_GE, seq);
    /* END SOLUTION */
}

void tshmem_ring_shift(void *dest, const void *source, size_t nbytes)
{
    tshmem_require_live(__func__);
    /* The call is open: the ring words are the runtime's own until it returns. Your dest is
     * not: one in the reserved area stops here (tshmem_check_symmetric would let it through). */
    TSHMEM_COLLECTIVE(TSHMEM_FN_RING_SHIFT, TSHMEM_TEAM_WORLD, nbytes, 0, 0);
    tshmem_refuse_reserved(__func__, "dest", dest, nbytes);
    /* BEGIN SOLUTION (Ring shift): check dest; put source into next's dest (after its credit), then a barrier */
    tshmem_check_symmetric(__func__, "dest", dest, nbytes);
    uint64_t seq = ++shift_calls;
    give_credit(RING_SHIFT_CREDIT, seq);
    take_credit(RING_SHIFT_CREDIT, seq);
    tshmem_putmem(dest, source, nbytes, ring_next());
    /* The barrier completes the put (quiet) and waits for prev's put into our dest. */
    tshmem_barrier_all();
    /* END SOLUTION */
}

void tshmem_ring_broadcast(void *dest, const void *source, size_t nbytes, int pe_root)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_RING_BROADCAST, TSHMEM_TEAM_WORLD, nbytes, pe_root, 0);
    tshmem_refuse_reserved(__func__, "dest", dest, nbytes);
    /* BEGIN SOLUTION (Ring broadcast): check pe_root and dest; root puts to next with a signal; each PE waits, then forwards unless next is the root */
    check_root(__func__, pe_root);
    tshmem_check_symmetric(__func__, "dest", dest, nbytes);
    int me = tshmem_g.my_pe, next = ring_next();
    uint64_t seq = ++bcast_calls;
    uint64_t *data = ring_word(RING_BCAST_DATA);
    if (me != pe_root) {
        give_credit(RING_BCAST_CREDIT, seq);
        /* Acquire: seeing seq means seeing the bytes prev put before it. */
        tshmem_signal_wait_until(data, TSHMEM_CMP_GE, seq);
    }
    if (next != pe_root) {
        take_credit(RING_BCAST_CREDIT, seq);
        /* Store and forward: the whole message, then its signal. The root sends straight from
         * source, so next can start forwarding while the root fills its own dest. */
        tshmem_putmem_signal(dest, me == pe_root ? source : dest, nbytes, data, seq,
                             TSHMEM_SIGNAL_SET, next);
    }
    if (me == pe_root && dest != source)
        memmove(dest, source, nbytes); /* the root's own dest gets the data too */
    /* END SOLUTION */
}

uint64_t tshmem_ring_token(int laps)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_RING_TOKEN, TSHMEM_TEAM_WORLD, laps, 0, 0);
    /* BEGIN SOLUTION (The token): check laps; PE 0 starts; each PE waits for the count, adds one, passes it on; laps * n hops */
    if (laps < 0)
        tshmem_fail(__func__, "laps is %d; pass 0 or more (every PE the same).", laps);
    int me = tshmem_g.my_pe, n = tshmem_g.n_pes;
    uint64_t base = token_hops, hops = (uint64_t)laps * (uint64_t)n, seen = base;
    uint64_t *token = ring_word(RING_TOKEN);
    token_hops += hops;
    if (hops == 0)
        return 0;
    if (me == 0) /* hop 1 */
        tshmem_signal_op(token, base + 1, TSHMEM_SIGNAL_SET, ring_next());
    /* This PE receives hop me, me + n, me + 2n, ... (PE 0: n, 2n, ..., the last hop). */
    for (uint64_t hop = me == 0 ? (uint64_t)n : (uint64_t)me; hop <= hops; hop += (uint64_t)n) {
        seen = tshmem_signal_wait_until(token, TSHMEM_CMP_GE, base + hop);
        if (hop < hops)
            tshmem_signal_op(token, base + hop + 1, TSHMEM_SIGNAL_SET, ring_next());
    }
    return seen - base;
    /* END SOLUTION */
}

void tshmem_ring_broadcast_pipelined(void *dest, const void *source, size_t nbytes, int pe_root,
                                     size_t chunk_bytes)
{
    tshmem_require_live(__func__);
    if (chunk_bytes == 0)
        chunk_bytes = RING_DEFAULT_CHUNK;
    TSHMEM_COLLECTIVE(TSHMEM_FN_RING_BROADCAST_PIPELINED, TSHMEM_TEAM_WORLD, nbytes, pe_root,
                      chunk_bytes);
    tshmem_refuse_reserved(__func__, "dest", dest, nbytes);
    /* BEGIN SOLUTION (Pipelined broadcast): check pe_root and dest; cut the message into chunks; forward chunk c while prev still sends chunk c + 1 */
    check_root(__func__, pe_root);
    tshmem_check_symmetric(__func__, "dest", dest, nbytes);
    int me = tshmem_g.my_pe, next = ring_next();
    uint64_t seq = ++pipe_calls, base = pipe_chunks;
    size_t chunks = (nbytes + chunk_bytes - 1) / chunk_bytes;
    uint64_t *data = ring_word(RING_PIPE_DATA);
    pipe_chunks += chunks;
    if (me != pe_root)
        give_credit(RING_PIPE_CREDIT, seq);
    if (next != pe_root)
        take_credit(RING_PIPE_CREDIT, seq);
    char *d = dest;
    const char *s = me == pe_root ? source : dest; /* what this PE forwards from */
    for (size_t c = 0; c < chunks; c++) {
        size_t off = c * chunk_bytes, len = nbytes - off < chunk_bytes ? nbytes - off : chunk_bytes;
        if (me != pe_root)
            tshmem_signal_wait_until(data, TSHMEM_CMP_GE, base + c + 1);
        /* The signal counts chunks: next may forward chunk c while we send chunk c + 1. */
        if (next != pe_root)
            tshmem_putmem_signal_nbi(d + off, s + off, len, data, base + c + 1, TSHMEM_SIGNAL_SET,
                                     next);
        if (me == pe_root && d != s)
            memmove(d + off, s + off, len); /* the root's own dest, chunk by chunk */
    }
    tshmem_quiet();
    /* END SOLUTION */
}
