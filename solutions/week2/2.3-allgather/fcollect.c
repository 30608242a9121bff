/* fcollect.c: allgather, tshmem_fcollectmem: every PE's block lands in every PE's dest.
 *
 * Chapter 2.3. dest holds n blocks of nbytes, block i from team PE i. Three algorithms, each
 * callable on its own through tshmem_fcollectmem_algo:
 *   ring    n - 1 steps; in each, every PE forwards to its successor the block it received in
 *           the step before. n - 1 hops of latency; every link carries n - 1 blocks.
 *   direct  every PE puts its block into every peer's dest and signals: one hop.
 *   hybrid  direct inside each node; a ring of node leaders across nodes; each member pulls
 *           from its leader what the leader received. On one node it is direct.
 *   oneshot (TSHMEM_ALGO_ONESHOT) for small blocks on one node: every PE copies its block into
 *           its own stage and publishes it; every PE reads every peer's stage. Nobody writes
 *           into anyone else's memory: no credits, no contended flag lines, one hop.
 *
 * The rule all three keep, so that calls may follow each other with no barrier: a PE writes
 * into a peer's dest only after that peer has said "I am in this call" (a credit), and a PE
 * leaves a call only once everything meant for its dest has arrived and nobody reads its
 * memory any more. So every write into your dest happens while you are inside the call.
 */
#define TSHMEM_CHAPTER "2.3"
#include <stdint.h>
#include <string.h>

#include "tshmem_internal.h"

#define tag    tshmem_collect_tag
#define CREDIT TSHMEM_COLLECT_CREDIT
#define DATA   TSHMEM_COLLECT_DATA
#define DONE   TSHMEM_COLLECT_DONE

static void fcollect_ring(const struct tshmem_collect_call *call, char *dest, const char *source,
                          size_t nbytes)
{
    /* BEGIN SOLUTION (Ring): credit your predecessor, then n - 1 steps of put-with-signal to your successor, forwarding the block that just arrived */
    int n = call->n, me = call->me;
    int next = tshmem_collect_pe(call, (me + 1) % n),
        prev = tshmem_collect_pe(call, (me + n - 1) % n);
    struct tshmem_coll_flags *f = call->flags;
    /* Credit: my predecessor is the only PE that writes into my dest; from now on it may. */
    tshmem_signal_op(&f->ring_ack.value, tag(call->seq, CREDIT), TSHMEM_SIGNAL_SET, prev);
    char *mine = dest + (size_t)me * nbytes;
    if (source != mine)
        memcpy(mine, source, nbytes);
    /* ... and I may write into my successor's once it has said so. */
    tshmem_signal_wait_until(&f->ring_ack.value, TSHMEM_CMP_GE, tag(call->seq, CREDIT));
    for (int s = 0; s < n - 1; s++) {
        /* Step s forwards block me - s: my own at first, then the one that arrived in step s-1
         * (the predecessor signalled s for it). A block has the same offset in every dest. */
        size_t at = (size_t)((me - s + n) % n) * nbytes;
        if (s > 0)
            tshmem_signal_wait_until(&f->ring_data.value, TSHMEM_CMP_GE,
                                     tag(call->seq, (uint64_t)s));
        tshmem_putmem_signal(dest + at, dest + at, nbytes, &f->ring_data.value,
                             tag(call->seq, (uint64_t)s + 1), TSHMEM_SIGNAL_SET, next);
    }
    /* The last block (my successor's) arrives in the predecessor's last step. Only then has
     * every write into my dest for this call happened: now I may leave. */
    tshmem_signal_wait_until(&f->ring_data.value, TSHMEM_CMP_GE, tag(call->seq, (uint64_t)n - 1));
    /* END SOLUTION */
}

/* BEGIN SOLUTION (Direct push): helpers: the direct algorithm among any set of team PEs */
/* Team PE number k of a set: group[k], or k itself when the set is the whole team. */
static int member_at(const int *group, int k)
{
    return group ? group[k] : k;
}

/* Direct push among `count` team PEs (group, or the whole team if group is NULL): credits to
 * all, my block to each as soon as its credit is here, then wait for every block. */
static void push_among(const struct tshmem_collect_call *call, char *dest, const char *source,
                       size_t nbytes, const int *group, int count)
{
    struct tshmem_coll_flags *f = call->flags;
    int me = call->me;
    char *mine = dest + (size_t)me * nbytes;
    unsigned char served[TSHMEM_COLL_MAX_PES];
    memset(served, 0, sizeof served);
    /* Credits first, so that nobody waits for us while we copy. from[me] on a peer has one
     * writer, me, and only grows: CREDIT, then DATA, then the next call's. */
    for (int k = 0; k < count; k++)
        if (member_at(group, k) != me)
            tshmem_signal_op(&f->from[me], tag(call->seq, CREDIT), TSHMEM_SIGNAL_SET,
                             tshmem_collect_pe(call, member_at(group, k)));
    if (source != mine)
        memcpy(mine, source, nbytes);
    /* Serve whichever peer is ready: a PE that arrives late delays only its own block. */
    struct tshmem_spin spin;
    tshmem_spin_init(&spin, call->func, f->from);
    for (int left = count - 1; left > 0;) {
        int progressed = 0;
        for (int k = 0; k < count; k++) {
            int j = member_at(group, k);
            if (j == me || served[k] ||
                !tshmem_uint64_test(&f->from[j], TSHMEM_CMP_GE, tag(call->seq, CREDIT)))
                continue;
            tshmem_putmem_signal(mine, mine, nbytes, &f->from[me], tag(call->seq, DATA),
                                 TSHMEM_SIGNAL_SET, tshmem_collect_pe(call, j));
            served[k] = 1;
            left--;
            progressed = 1;
        }
        if (!progressed)
            tshmem_spin_pause(&spin);
    }
    for (int k = 0; k < count; k++)
        if (member_at(group, k) != me)
            tshmem_signal_wait_until(&f->from[member_at(group, k)], TSHMEM_CMP_GE,
                                     tag(call->seq, DATA));
}
/* END SOLUTION */

static void fcollect_direct(const struct tshmem_collect_call *call, char *dest, const char *source,
                            size_t nbytes)
{
    /* BEGIN SOLUTION (Direct push): credit every peer, put your block into every peer's dest with a signal, wait for every block */
    push_among(call, dest, source, nbytes, NULL, call->n);
    /* END SOLUTION */
}

/* BEGIN SOLUTION (Hybrid): helpers: moving one node group's blocks, the leaders' ring */
/* Puts (or gets) the blocks of group h to (from) the same place on world PE pe. A group's
 * blocks are runs of consecutive team PEs, and a run is one contiguous piece of dest. */
static void move_group(const struct tshmem_collect_nodes *nd, int h, char *dest, size_t nbytes,
                       int pe, int get)
{
    const int *m = &nd->member[nd->first[h]];
    int count = nd->first[h + 1] - nd->first[h];
    for (int a = 0, b; a < count; a = b) {
        for (b = a + 1; b < count && m[b] == m[b - 1] + 1; b++)
            ;
        char *at = dest + (size_t)m[a] * nbytes;
        if (get)
            tshmem_getmem(at, at, (size_t)(b - a) * nbytes, pe);
        else
            tshmem_putmem(at, at, (size_t)(b - a) * nbytes, pe);
    }
}

/* The leader of group g tells its members (all but itself) that step `step` has happened. */
static void tell_members(const struct tshmem_collect_call *call,
                         const struct tshmem_collect_nodes *nd, int g, uint64_t step)
{
    for (int k = nd->first[g]; k < nd->first[g + 1]; k++)
        if (nd->member[k] != call->me)
            tshmem_signal_op(&call->flags->from[call->me], tag(call->seq, step), TSHMEM_SIGNAL_SET,
                             tshmem_collect_pe(call, nd->member[k]));
}

/* A leader's part across nodes: m - 1 ring steps among leaders. In step s it sends group
 * g - s (its own first) to the next leader; after receiving group g - s it lets its members
 * pull it (step DATA + s on from[me]). Then it waits until no member reads its dest. */
static void leader_ring(const struct tshmem_collect_call *call,
                        const struct tshmem_collect_nodes *nd, char *dest, size_t nbytes)
{
    struct tshmem_coll_flags *f = call->flags;
    int g = nd->my_group, m = nd->n_groups;
    int next = nd->member[nd->first[(g + 1) % m]], prev = nd->member[nd->first[(g + m - 1) % m]];
    tshmem_signal_wait_until(&f->from[next], TSHMEM_CMP_GE, tag(call->seq, CREDIT));
    for (int s = 0; s < m; s++) {
        if (s > 0) {
            /* Group g - s arrived (the previous leader signalled DATA + s - 1 for it). */
            tshmem_signal_wait_until(&f->from[prev], TSHMEM_CMP_GE,
                                     tag(call->seq, DATA + (uint64_t)s - 1));
            tell_members(call, nd, g, DATA + (uint64_t)s);
        }
        if (s == m - 1)
            break;
        move_group(nd, (g - s + m) % m, dest, nbytes, tshmem_collect_pe(call, next), 0);
        /* Several puts, one signal: the fence keeps every put ahead of it (on the node the
         * signal's release would do; across nodes, in chapter 2.5, the fence is what does). */
        tshmem_fence();
        tshmem_signal_op(&f->from[call->me], tag(call->seq, DATA + (uint64_t)s), TSHMEM_SIGNAL_SET,
                         tshmem_collect_pe(call, next));
    }
    for (int k = nd->first[g]; k < nd->first[g + 1]; k++)
        if (nd->member[k] != call->me)
            tshmem_signal_wait_until(&f->from[nd->member[k]], TSHMEM_CMP_GE, tag(call->seq, DONE));
}
/* END SOLUTION */

static void fcollect_hybrid(const struct tshmem_collect_call *call, char *dest, const char *source,
                            size_t nbytes)
{
    /* BEGIN SOLUTION (Hybrid): direct push inside the node, then a ring of node leaders; members pull each group their leader announces */
    struct tshmem_collect_nodes nd;
    tshmem_collect_nodes(call, &nd);
    int g = nd.my_group, m = nd.n_groups, leader = nd.member[nd.first[g]];
    /* A leader's credit to the previous leader goes out before anything else, like all
     * credits: the earlier it is there, the less anyone waits. */
    if (m > 1 && call->me == leader)
        tshmem_signal_op(&call->flags->from[call->me], tag(call->seq, CREDIT), TSHMEM_SIGNAL_SET,
                         tshmem_collect_pe(call, nd.member[nd.first[(g + m - 1) % m]]));
    push_among(call, dest, source, nbytes, &nd.member[nd.first[g]], nd.first[g + 1] - nd.first[g]);
    if (m == 1)
        return;
    if (call->me == leader) {
        leader_ring(call, &nd, dest, nbytes);
        return;
    }
    /* A member: the s-th foreign group is group g - s, announced as DATA + s. Pull it from the
     * leader's dest, the same offsets as in ours, then say DONE: the leader may leave. */
    for (int s = 1; s < m; s++) {
        tshmem_signal_wait_until(&call->flags->from[leader], TSHMEM_CMP_GE,
                                 tag(call->seq, DATA + (uint64_t)s));
        move_group(&nd, (g - s + m) % m, dest, nbytes, tshmem_collect_pe(call, leader), 1);
    }
    tshmem_signal_op(&call->flags->from[call->me], tag(call->seq, DONE), TSHMEM_SIGNAL_SET,
                     tshmem_collect_pe(call, leader));
    /* END SOLUTION */
}

/* BEGIN SOLUTION (One-shot pull): helpers: how many stage pieces this PE has published on each team */
/* How many stage pieces this PE has published on each team. Every member publishes the same
 * pieces in the same order (nbytes is alike), so the counters agree without a word. */
static uint64_t pieces_on_team[TSHMEM_MAX_TEAMS];
/* END SOLUTION */

/* Piece k goes through stage k % 2. A PE overwrites stage k % 2 with piece k + 2 only after it
 * has read every peer's piece k + 1; a peer publishes k + 1 only after reading everybody's
 * piece k. So no reader can still be inside the stage that is overwritten: a PE never waits for
 * its readers, and it may leave the call as soon as it holds every block. */
static void fcollect_oneshot(const struct tshmem_collect_call *call, char *dest, const char *source,
                             size_t nbytes)
{
    /* BEGIN SOLUTION (One-shot pull): piece by piece: copy into your stage k % 2, publish tag(k, DATA) with release, copy every peer's stage into your dest once it shows that tag */
    int n = call->n, me = call->me;
    struct tshmem_stage *stages = tshmem_g.reserved->stage[call->team];
    char *mine = dest + (size_t)me * nbytes;
    for (size_t off = 0; off < nbytes; off += TSHMEM_STAGE_BYTES) {
        size_t len = nbytes - off < TSHMEM_STAGE_BYTES ? nbytes - off : TSHMEM_STAGE_BYTES;
        uint64_t k = ++pieces_on_team[call->team], ready = tag(k, DATA);
        struct tshmem_stage *st = &stages[k % 2];
        memcpy(st->data, source + off, len);
        /* Release: a peer that sees `ready` sees the bytes before it. */
        atomic_store_explicit(tshmem_atomic(&st->ready.value), ready, memory_order_release);
        if (source != mine)
            memcpy(mine + off, source + off, len);
        /* Read the peers from my successor on, so that not everybody queues at PE 0. */
        for (int s = 1; s < n; s++) {
            int j = (me + s) % n;
            struct tshmem_stage *peer = tshmem_ptr(st, tshmem_collect_pe(call, j));
            struct tshmem_spin spin;
            tshmem_spin_init(&spin, call->func, &peer->ready.value);
            while (atomic_load_explicit(tshmem_atomic(&peer->ready.value), memory_order_acquire) <
                   ready)
                tshmem_spin_pause(&spin);
            memcpy(dest + (size_t)j * nbytes + off, peer->data, len);
        }
    }
    /* END SOLUTION */
}

int tshmem_fcollectmem_algo(tshmem_team_t team, void *dest, const void *source, size_t nbytes,
                            enum tshmem_algo algo)
{
    /* The call is open (TSHMEM_COLLECTIVE): its flags and stages in the reserved area are the
     * runtime's own until it returns, and every PE's nbytes is compared. */
    TSHMEM_COLLECTIVE(algo == TSHMEM_ALGO_AUTO ? TSHMEM_FN_FCOLLECTMEM : TSHMEM_FN_FCOLLECTMEM_ALGO,
                      team, nbytes, 0, 0);
    struct tshmem_collect_call call;
    /* BEGIN SOLUTION (Checking the arguments): begin the call; check dest, source and algo; let the selector resolve AUTO; finish here when there is nothing to send */
    const char *func = algo == TSHMEM_ALGO_AUTO ? "tshmem_fcollectmem" : __func__;
    tshmem_collect_begin(&call, func, team);
    char *d = dest;
    const char *s = source;
    if (nbytes > SIZE_MAX / (size_t)call.n)
        tshmem_fail(func, "nbytes %zu times the team's %d PEs does not fit in size_t.", nbytes,
                    call.n);
    size_t total = nbytes * (size_t)call.n;
    if (nbytes > 0) /* with nothing to move, NULL (tshmem_malloc(0)) is fine */
        tshmem_collect_check_room(func, "dest", dest, total);
    if (nbytes > 0 && source == NULL)
        tshmem_fail(func, "source is NULL but nbytes is %zu.", nbytes);
    /* In place means: my block already sits at its place in dest (MPI_IN_PLACE's meaning). Any
     * other overlap would let a peer's block overwrite my source before I have sent it. */
    int in_place = s == d + (size_t)call.me * nbytes;
    if (!in_place && nbytes > 0 && s < d + total && d < s + nbytes)
        tshmem_fail(func,
                    "source %p overlaps dest %p (%zu bytes): pass a separate source, or "
                    "source = dest + my team PE number x nbytes to gather in place.",
                    source, dest, total);
    if (algo == TSHMEM_ALGO_AUTO)
        algo = tshmem_collect_select(TSHMEM_COLLECT_FCOLLECT, &call, nbytes);
    if (algo != TSHMEM_ALGO_RING && algo != TSHMEM_ALGO_DIRECT && algo != TSHMEM_ALGO_HYBRID &&
        algo != TSHMEM_ALGO_ONESHOT)
        tshmem_fail(func,
                    "algo %d is not an fcollect algorithm: use TSHMEM_ALGO_AUTO, _RING, "
                    "_DIRECT, _HYBRID or _ONESHOT.",
                    (int)algo);
    /* One-shot reads the peers' stages with plain loads: they must share this node. */
    for (int j = 0; algo == TSHMEM_ALGO_ONESHOT && j < call.n; j++)
        if (!tshmem_ptr(tshmem_g.reserved->stage, tshmem_collect_pe(&call, j)))
            tshmem_fail(func,
                        "TSHMEM_ALGO_ONESHOT reads every team PE's memory directly, but world PE "
                        "%d is on another node: use TSHMEM_ALGO_AUTO or _HYBRID for this team.",
                        tshmem_collect_pe(&call, j));
    /* Direct and hybrid keep one from[] word per team PE in the reserved area. */
    if (algo != TSHMEM_ALGO_RING && call.n > TSHMEM_COLL_MAX_PES)
        tshmem_fail(func, "team %d has %d PEs; only TSHMEM_ALGO_RING handles more than %d.", team,
                    call.n, TSHMEM_COLL_MAX_PES);
    if (nbytes == 0)
        return 0; /* every member returns here alike: nbytes is the same on all of them */
    if (call.n == 1) {
        if (!in_place)
            memcpy(d, s, nbytes);
        return 0;
    }
    /* END SOLUTION */
    if (algo == TSHMEM_ALGO_RING)
        fcollect_ring(&call, dest, source, nbytes);
    else if (algo == TSHMEM_ALGO_DIRECT)
        fcollect_direct(&call, dest, source, nbytes);
    else if (algo == TSHMEM_ALGO_ONESHOT)
        fcollect_oneshot(&call, dest, source, nbytes);
    else
        fcollect_hybrid(&call, dest, source, nbytes);
    return 0;
}

int tshmem_fcollectmem(tshmem_team_t team, void *dest, const void *source, size_t nbytes)
{
    return tshmem_fcollectmem_algo(team, dest, source, nbytes, TSHMEM_ALGO_AUTO);
}
