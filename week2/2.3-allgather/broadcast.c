/* broadcast.c: tshmem_broadcastmem: the root's source lands in every PE's dest, the root's too.
 *
 * Chapter 2.3. Three algorithms, each callable on its own through tshmem_broadcastmem_algo:
 *   direct  every PE copies the data from the root's source (a pull): one hop, and the n - 1
 *           copies run on n - 1 PEs at once instead of one after another on the root; a
 *           root with nothing to copy for itself puts a share into each PE meanwhile.
 *   ring    a pipelined, chunked ring from the root: chunk k moves on from a PE as soon as it
 *           arrived, so the last PE finishes about (n - 2) chunks after the first.
 *   hybrid  a pipelined ring of node leaders (the root leads its own node) across nodes;
 *           inside each node the members pull from their leader. On one node it is direct.
 *
 * Buffer safety as in fcollect.c: a PE writes into a peer's dest only after that peer's
 * credit; a PE whose memory others read (the root's source, a leader's dest) leaves only when
 * every reader has said DONE.
 */
#define TSHMEM_CHAPTER "2.3"
#include <stdint.h>
#include <string.h>

#include "tshmem_internal.h"

#define tag    tshmem_collect_tag
#define CREDIT TSHMEM_COLLECT_CREDIT
#define DATA   TSHMEM_COLLECT_DATA
#define DONE   TSHMEM_COLLECT_DONE

/* The pipeline's chunk: big enough that a chunk's copy dwarfs its signal, small enough that
 * the ring fills quickly. A starting point from the cost model, not a measured optimum (the
 * book's bonus 4 tunes it). */
#define CHUNK_MIN     ((size_t)64 << 10)
#define CHUNK_MAX     ((size_t)1 << 20)
#define CHUNKS_WANTED 8

static inline size_t chunk_bytes(size_t nbytes)
{
    size_t c = nbytes / CHUNKS_WANTED;
    return c < CHUNK_MIN ? CHUNK_MIN : c > CHUNK_MAX ? CHUNK_MAX : c;
}

/* The direct broadcast's steps on the root's word from[root] of a receiver. */
enum {
    PULL_ALL = DATA,      /* "my source is ready: copy all of it" */
    PULL_HEAD = DATA + 1, /* "copy all but the last nbytes / n: I am putting those in myself" */
    TAIL_SENT = DATA + 2  /* "the last nbytes / n are in your dest" */
};
/* A root in place has nothing to copy for itself: from this size on it puts a share of each
 * receiver's copy while the receivers pull the rest, so that n cores copy instead of n - 1.
 * Measured with bench_2_3 on 2 PEs: no gain at 2 KiB, a quarter less time at 8 KiB. */
#define SHARE_MIN ((size_t)4 << 10)

static void broadcast_direct(const struct tshmem_collect_call *call, char *dest, const char *source,
                             size_t nbytes, int root)
{
    (void)call; (void)dest; (void)source; (void)nbytes; (void)root;
    TSHMEM_TODO("Direct pull", "every PE copies from the root's source and says DONE; a root in place puts the last nbytes / n into each PE meanwhile; the root leaves after every DONE");
}

static void broadcast_ring(const struct tshmem_collect_call *call, char *dest, const char *source,
                           size_t nbytes, int root)
{
    (void)call; (void)dest; (void)source; (void)nbytes; (void)root;
    TSHMEM_TODO("Pipelined ring", "from the root round the ring in chunks; each PE forwards chunk k as soon as it has it; the PE before the root only receives");
}

/* TODO (chapter 2.3, "Hybrid"): helpers: who leads each node for this root, and a member's pulls */

static void broadcast_hybrid(const struct tshmem_collect_call *call, char *dest, const char *source,
                             size_t nbytes, int root)
{
    (void)call; (void)dest; (void)source; (void)nbytes; (void)root;
    TSHMEM_TODO("Hybrid", "leaders (the root for its node) pass chunks along a ring of nodes; members pull from their leader");
}

int tshmem_broadcastmem_algo(tshmem_team_t team, void *dest, const void *source, size_t nbytes,
                             int pe_root, enum tshmem_algo algo)
{
    /* The call is open (TSHMEM_COLLECTIVE): every PE's nbytes and pe_root are compared. */
    TSHMEM_COLLECTIVE(algo == TSHMEM_ALGO_AUTO ? TSHMEM_FN_BROADCASTMEM
                                               : TSHMEM_FN_BROADCASTMEM_ALGO,
                      team, nbytes, pe_root, 0);
    struct tshmem_collect_call call;
    TSHMEM_TODO("Checking the arguments", "begin the call; check the root, dest, the root's source and algo; let the selector resolve AUTO; finish here when there is nothing to send");
    if (algo == TSHMEM_ALGO_RING)
        broadcast_ring(&call, dest, source, nbytes, pe_root);
    else if (algo == TSHMEM_ALGO_DIRECT)
        broadcast_direct(&call, dest, source, nbytes, pe_root);
    else
        broadcast_hybrid(&call, dest, source, nbytes, pe_root);
    return 0;
}

int tshmem_broadcastmem(tshmem_team_t team, void *dest, const void *source, size_t nbytes,
                        int pe_root)
{
    return tshmem_broadcastmem_algo(team, dest, source, nbytes, pe_root, TSHMEM_ALGO_AUTO);
}
