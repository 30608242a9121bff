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
    /* BEGIN SOLUTION (Direct pull): every PE copies from the root's source and says DONE; a root in place puts the last nbytes / n into each PE meanwhile; the root leaves after every DONE */
    struct tshmem_coll_flags *f = call->flags;
    int n = call->n;
    size_t tail = nbytes / (size_t)n, head = nbytes - tail;
    if (call->me == root) {
        int share = dest == source && nbytes >= SHARE_MIN;
        /* My source holds this call's data from now until I return. */
        for (int j = 0; j < n; j++)
            if (j != root)
                tshmem_signal_op(&f->from[root], tag(call->seq, share ? PULL_HEAD : PULL_ALL),
                                 TSHMEM_SIGNAL_SET, tshmem_collect_pe(call, j));
        if (!share && dest != source)
            memcpy(dest, source, nbytes); /* while the others copy too */
        for (int j = 0; j < n && share; j++)
            if (j != root) {
                /* A put into j's dest needs j's credit, as always. */
                tshmem_signal_wait_until(&f->from[j], TSHMEM_CMP_GE, tag(call->seq, CREDIT));
                tshmem_putmem_signal(dest + head, source + head, tail, &f->from[root],
                                     tag(call->seq, TAIL_SENT), TSHMEM_SIGNAL_SET,
                                     tshmem_collect_pe(call, j));
            }
        /* Nobody may still read my source when I return: my caller may rewrite it at once. */
        for (int j = 0; j < n; j++)
            if (j != root)
                tshmem_signal_wait_until(&f->from[j], TSHMEM_CMP_GE, tag(call->seq, DONE));
        return;
    }
    /* The root may put into my dest (if it shares the work): it may from now on. */
    tshmem_signal_op(&f->from[call->me], tag(call->seq, CREDIT), TSHMEM_SIGNAL_SET,
                     tshmem_collect_pe(call, root));
    uint64_t said =
        tshmem_signal_wait_until(&f->from[root], TSHMEM_CMP_GE, tag(call->seq, PULL_ALL));
    int share = said >= tag(call->seq, PULL_HEAD);
    tshmem_getmem(dest, source, share ? head : nbytes, tshmem_collect_pe(call, root));
    if (share)
        tshmem_signal_wait_until(&f->from[root], TSHMEM_CMP_GE, tag(call->seq, TAIL_SENT));
    /* Release: my reads of the root's source are complete before the root sees DONE. */
    tshmem_signal_op(&f->from[call->me], tag(call->seq, DONE), TSHMEM_SIGNAL_SET,
                     tshmem_collect_pe(call, root));
    /* END SOLUTION */
}

static void broadcast_ring(const struct tshmem_collect_call *call, char *dest, const char *source,
                           size_t nbytes, int root)
{
    /* BEGIN SOLUTION (Pipelined ring): from the root round the ring in chunks; each PE forwards chunk k as soon as it has it; the PE before the root only receives */
    int n = call->n, me = call->me, pos = (me - root + n) % n; /* 0 is the root */
    int next = tshmem_collect_pe(call, (me + 1) % n),
        prev = tshmem_collect_pe(call, (me + n - 1) % n);
    struct tshmem_coll_flags *f = call->flags;
    size_t chunk = chunk_bytes(nbytes), chunks = (nbytes + chunk - 1) / chunk;
    const char *from = pos == 0 ? source : dest; /* what I forward */
    if (pos > 0)                                 /* my predecessor may write into my dest */
        tshmem_signal_op(&f->ring_ack.value, tag(call->seq, CREDIT), TSHMEM_SIGNAL_SET, prev);
    if (pos == n - 1) {
        /* The last PE forwards nothing: it only waits for the last chunk. */
        tshmem_signal_wait_until(&f->ring_data.value, TSHMEM_CMP_GE, tag(call->seq, chunks));
        return;
    }
    tshmem_signal_wait_until(&f->ring_ack.value, TSHMEM_CMP_GE, tag(call->seq, CREDIT));
    for (size_t k = 0; k < chunks; k++) {
        size_t at = k * chunk, len = nbytes - at < chunk ? nbytes - at : chunk;
        if (pos > 0) /* chunk k is here once the predecessor signalled k + 1 */
            tshmem_signal_wait_until(&f->ring_data.value, TSHMEM_CMP_GE, tag(call->seq, k + 1));
        tshmem_putmem_signal(dest + at, from + at, len, &f->ring_data.value, tag(call->seq, k + 1),
                             TSHMEM_SIGNAL_SET, next);
    }
    /* The root's own copy comes last: the ring should not wait for it. */
    if (pos == 0 && dest != source)
        memcpy(dest, source, nbytes);
    /* END SOLUTION */
}

/* BEGIN SOLUTION (Hybrid): helpers: who leads each node for this root, and a member's pulls */
/* The leader of group h: the root for its own group, the first member for the others. */
static int leader_of(const struct tshmem_collect_nodes *nd, int h, int root)
{
    return nd->group_of[root] == h ? root : nd->member[nd->first[h]];
}

/* A member pulls chunks from its leader as the leader announces them (tag(seq, k): the first k
 * chunks are there), as many at a time as are there, then says DONE. */
static void member_pull(const struct tshmem_collect_call *call, char *dest, const char *from,
                        size_t nbytes, int leader)
{
    struct tshmem_coll_flags *f = call->flags;
    size_t chunk = chunk_bytes(nbytes), chunks = (nbytes + chunk - 1) / chunk, got = 0;
    while (got < chunks) {
        uint64_t v =
            tshmem_signal_wait_until(&f->from[leader], TSHMEM_CMP_GE, tag(call->seq, got + 1));
        size_t have = (size_t)(v - tag(call->seq, 0)); /* the leader is still in this call */
        if (have > chunks)
            have = chunks;
        size_t at = got * chunk, end = have * chunk < nbytes ? have * chunk : nbytes;
        tshmem_getmem(dest + at, from + at, end - at, tshmem_collect_pe(call, leader));
        got = have;
    }
    tshmem_signal_op(&f->from[call->me], tag(call->seq, DONE), TSHMEM_SIGNAL_SET,
                     tshmem_collect_pe(call, leader));
}

/* The leader of group g tells its members (all but itself) that `step` chunks are there. */
static void tell_members(const struct tshmem_collect_call *call,
                         const struct tshmem_collect_nodes *nd, uint64_t step)
{
    int g = nd->my_group;
    for (int k = nd->first[g]; k < nd->first[g + 1]; k++)
        if (nd->member[k] != call->me)
            tshmem_signal_op(&call->flags->from[call->me], tag(call->seq, step), TSHMEM_SIGNAL_SET,
                             tshmem_collect_pe(call, nd->member[k]));
}

/* A leader's part: receive chunks from the previous leader (unless it is the root), announce
 * each to its members, forward it to the next leader (unless it is the last), then wait for
 * its members' DONE. */
static void leader_chain(const struct tshmem_collect_call *call,
                         const struct tshmem_collect_nodes *nd, char *dest, const char *source,
                         size_t nbytes, int root)
{
    struct tshmem_coll_flags *f = call->flags;
    int g = nd->my_group, m = nd->n_groups, pos = (g - nd->group_of[root] + m) % m;
    int prev = leader_of(nd, (g + m - 1) % m, root), next = leader_of(nd, (g + 1) % m, root);
    size_t chunk = chunk_bytes(nbytes), chunks = (nbytes + chunk - 1) / chunk;
    const char *from = pos == 0 ? source : dest; /* what my members pull and I forward */
    if (pos > 0)                                 /* the previous leader may write into my dest */
        tshmem_signal_op(&f->from[call->me], tag(call->seq, CREDIT), TSHMEM_SIGNAL_SET,
                         tshmem_collect_pe(call, prev));
    else /* the root: every chunk is there already */
        tell_members(call, nd, chunks);
    if (pos < m - 1)
        tshmem_signal_wait_until(&f->from[next], TSHMEM_CMP_GE, tag(call->seq, CREDIT));
    for (size_t k = 0; k < chunks && m > 1; k++) {
        size_t at = k * chunk, len = nbytes - at < chunk ? nbytes - at : chunk;
        if (pos > 0) {
            tshmem_signal_wait_until(&f->from[prev], TSHMEM_CMP_GE, tag(call->seq, k + 1));
            tell_members(call, nd, k + 1);
        }
        if (pos < m - 1)
            tshmem_putmem_signal(dest + at, from + at, len, &f->from[call->me],
                                 tag(call->seq, k + 1), TSHMEM_SIGNAL_SET,
                                 tshmem_collect_pe(call, next));
    }
    if (pos == 0 && dest != source)
        memcpy(dest, source, nbytes);
    /* My members read my memory (the root's source, another leader's dest) until DONE. */
    for (int k = nd->first[g]; k < nd->first[g + 1]; k++)
        if (nd->member[k] != call->me)
            tshmem_signal_wait_until(&f->from[nd->member[k]], TSHMEM_CMP_GE, tag(call->seq, DONE));
}
/* END SOLUTION */

static void broadcast_hybrid(const struct tshmem_collect_call *call, char *dest, const char *source,
                             size_t nbytes, int root)
{
    /* BEGIN SOLUTION (Hybrid): leaders (the root for its node) pass chunks along a ring of nodes; members pull from their leader */
    struct tshmem_collect_nodes nd;
    tshmem_collect_nodes(call, &nd);
    int leader = leader_of(&nd, nd.my_group, root);
    if (call->me == leader)
        leader_chain(call, &nd, dest, source, nbytes, root);
    else
        member_pull(call, dest, leader == root ? source : dest, nbytes, leader);
    /* END SOLUTION */
}

int tshmem_broadcastmem_algo(tshmem_team_t team, void *dest, const void *source, size_t nbytes,
                             int pe_root, enum tshmem_algo algo)
{
    /* The call is open (TSHMEM_COLLECTIVE): every PE's nbytes and pe_root are compared. */
    TSHMEM_COLLECTIVE(algo == TSHMEM_ALGO_AUTO ? TSHMEM_FN_BROADCASTMEM
                                               : TSHMEM_FN_BROADCASTMEM_ALGO,
                      team, nbytes, pe_root, 0);
    struct tshmem_collect_call call;
    /* BEGIN SOLUTION (Checking the arguments): begin the call; check the root, dest, the root's source and algo; let the selector resolve AUTO; finish here when there is nothing to send */
    const char *func = algo == TSHMEM_ALGO_AUTO ? "tshmem_broadcastmem" : __func__;
    tshmem_collect_begin(&call, func, team);
    if (pe_root < 0 || pe_root >= call.n)
        tshmem_fail(func,
                    "pe_root %d is out of range: team %d has %d PEs, numbered 0 to %d. "
                    "pe_root is a PE number in the team, not in TSHMEM_TEAM_WORLD.",
                    pe_root, team, call.n, call.n - 1);
    char *d = dest;
    const char *s = source;
    if (nbytes > 0) /* with nothing to move, NULL (tshmem_malloc(0)) is fine */
        tshmem_collect_check_room(func, "dest", dest, nbytes);
    if (nbytes > 0 && call.me == pe_root) {
        /* The others read the root's source: it must be symmetric, and all there. */
        tshmem_collect_check_room(func, "source", source, nbytes);
        if (d != s && s < d + nbytes && d < s + nbytes)
            tshmem_fail(func,
                        "source %p overlaps dest %p (%zu bytes) on the root: pass the same "
                        "address for both (in place), or two separate buffers.",
                        source, dest, nbytes);
    }
    if (algo == TSHMEM_ALGO_AUTO)
        algo = tshmem_collect_select(TSHMEM_COLLECT_BROADCAST, &call, nbytes);
    if (algo != TSHMEM_ALGO_RING && algo != TSHMEM_ALGO_DIRECT && algo != TSHMEM_ALGO_HYBRID)
        tshmem_fail(func,
                    "algo %d is not a broadcast algorithm: use TSHMEM_ALGO_AUTO, _RING, "
                    "_DIRECT or _HYBRID.",
                    (int)algo);
    /* Direct and hybrid keep one from[] word per team PE in the reserved area. */
    if (algo != TSHMEM_ALGO_RING && call.n > TSHMEM_COLL_MAX_PES)
        tshmem_fail(func, "team %d has %d PEs; only TSHMEM_ALGO_RING handles more than %d.", team,
                    call.n, TSHMEM_COLL_MAX_PES);
    if (nbytes == 0)
        return 0;
    if (call.n == 1) {
        if (d != s)
            memcpy(d, s, nbytes);
        return 0;
    }
    /* END SOLUTION */
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
