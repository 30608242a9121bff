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

/* TODO (chapter 1.5, "Sequence numbers, not resets"): counters of this PE's calls, hops and chunks so far */

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
    (void)which; (void)seq;
    TSHMEM_TODO("Credits: when may I write into my neighbour?", "tell prev that this PE entered call seq");
}

static inline void take_credit(int which, uint64_t seq)
{
    (void)which; (void)seq;
    TSHMEM_TODO("Credits: when may I write into my neighbour?", "wait until next has entered call seq");
}

void tshmem_ring_shift(void *dest, const void *source, size_t nbytes)
{
    tshmem_require_live(__func__);
    /* The call is open: the ring words are the runtime's own until it returns. Your dest is
     * not: one in the reserved area stops here (tshmem_check_symmetric would let it through). */
    TSHMEM_COLLECTIVE(TSHMEM_FN_RING_SHIFT, TSHMEM_TEAM_WORLD, nbytes, 0, 0);
    tshmem_refuse_reserved(__func__, "dest", dest, nbytes);
    (void)source;
    TSHMEM_TODO("Ring shift", "check dest; put source into next's dest (after its credit), then a barrier");
}

void tshmem_ring_broadcast(void *dest, const void *source, size_t nbytes, int pe_root)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_RING_BROADCAST, TSHMEM_TEAM_WORLD, nbytes, pe_root, 0);
    tshmem_refuse_reserved(__func__, "dest", dest, nbytes);
    (void)source;
    TSHMEM_TODO("Ring broadcast", "check pe_root and dest; root puts to next with a signal; each PE waits, then forwards unless next is the root");
}

uint64_t tshmem_ring_token(int laps)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_RING_TOKEN, TSHMEM_TEAM_WORLD, laps, 0, 0);
    TSHMEM_TODO("The token", "check laps; PE 0 starts; each PE waits for the count, adds one, passes it on; laps * n hops");
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
    (void)source;
    TSHMEM_TODO("Pipelined broadcast", "check pe_root and dest; cut the message into chunks; forward chunk c while prev still sends chunk c + 1");
}
