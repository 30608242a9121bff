/* alltoall.c: tshmem_alltoallmem: block j of team PE i's source lands in block i of PE j's dest.
 *
 * Chapter 3.1. The even all-to-all, the exchange that expert parallelism is built on before its
 * blocks become uneven. Every PE sends a different block to every peer, so there is nothing to
 * forward and nothing to combine: each PE puts block j of its source straight into block `me`
 * of PE j's dest, one hop, n - 1 puts per PE, all PEs at once.
 *
 * The one hard part is the same as in chapter 2.3: calls follow each other with no barrier, and
 * the program reads its dest between them. A PE may write into a peer's dest only after that
 * peer has said "I am in this call" (a credit in from[me] on the writer), and it returns only
 * when every block meant for its dest is there. So every write into your dest happens while you
 * are inside the call, never while your program is still reading the previous result.
 *
 * Two algorithms, each callable on its own through tshmem_alltoallmem_algo:
 *   direct   the above: credits, then one put per peer, then wait for every block. Two waits
 *            per call (for the credits, then for the data): for tiny blocks the credit's round
 *            trip is most of the time.
 *   oneshot  (small exchanges, n x nbytes <= TSHMEM_A2A_STAGE_BYTES) every PE copies its whole
 *            source into its own stage and publishes it; every PE pulls block `me` of every
 *            peer's stage into its dest. Nobody writes into anyone else's memory: no credits,
 *            one wait per peer.
 * tshmem_alltoallmem (TSHMEM_ALGO_AUTO) picks one-shot for small exchanges, direct otherwise.
 */
#define TSHMEM_CHAPTER "3.1"
#include <string.h>

#include "tshmem_internal.h"

#define tag    tshmem_collect_tag
#define CREDIT TSHMEM_COLLECT_CREDIT
#define DATA   TSHMEM_COLLECT_DATA

/* BEGIN SOLUTION (Checking the arguments): helpers: how many calls this PE has made on each team */
/* How many alltoallmem calls this PE has made on each team handle. Every member makes the same
 * calls on a team in the same order, so the numbers agree without a word being exchanged. */
static uint64_t calls_on_team[TSHMEM_MAX_TEAMS];
/* END SOLUTION */

/* The selector's crossover (measured with bench_3_1, see the book page): one-shot while the
 * whole exchange fits the stage and the blocks are at most this big. */
#define ONESHOT_MAX_BLOCK 1024

static void alltoall_direct(tshmem_team_t team, void *dest, const void *source, size_t nbytes)
{
    /* BEGIN SOLUTION (All-to-all): credit every peer, copy your own block, put block j into team PE j's dest as soon as its credit is here, wait for every peer's block */
    const struct tshmem_team *t = &tshmem_g.teams[team];
    int n = t->n_pes, me = t->my_pe;
    char *d = dest;
    const char *s = source;
    uint64_t seq = calls_on_team[team]; /* this call's number, counted when it was checked */
    struct tshmem_alltoall_flags *f = &tshmem_g.reserved->alltoall[team];
    /* Credits first: from now on every peer may write into my dest. from[me] on a peer has
     * one writer, me, and only grows: CREDIT, DATA, then the next call's CREDIT. */
    for (int j = 0; j < n; j++)
        if (j != me)
            tshmem_signal_op(&f->from[me], tag(seq, CREDIT), TSHMEM_SIGNAL_SET, t->pes[j]);
    memcpy(d + (size_t)me * nbytes, s + (size_t)me * nbytes, nbytes);
    /* Serve whichever peer is ready, starting after me so that not everybody writes into PE 0
     * first. A late PE delays only its own block. */
    unsigned char served[TSHMEM_COLL_MAX_PES] = {0};
    struct tshmem_spin spin;
    tshmem_spin_init(&spin, "tshmem_alltoallmem", f->from);
    for (int left = n - 1; left > 0;) {
        int progressed = 0;
        for (int step = 1; step < n; step++) {
            int j = (me + step) % n;
            if (served[j] || !tshmem_uint64_test(&f->from[j], TSHMEM_CMP_GE, tag(seq, CREDIT)))
                continue;
            /* The signal's release store makes the block visible before DATA is. */
            tshmem_putmem_signal(d + (size_t)me * nbytes, s + (size_t)j * nbytes, nbytes,
                                 &f->from[me], tag(seq, DATA), TSHMEM_SIGNAL_SET, t->pes[j]);
            served[j] = 1;
            left--;
            progressed = 1;
        }
        if (!progressed)
            tshmem_spin_pause(&spin);
    }
    /* Every block meant for my dest has arrived: only now may I return. */
    for (int j = 0; j < n; j++)
        if (j != me)
            tshmem_signal_wait_until(&f->from[j], TSHMEM_CMP_GE, tag(seq, DATA));
    /* END SOLUTION */
}

/* BEGIN SOLUTION (One-shot pull): helpers: how many one-shot calls this PE has made on each team */
/* How many one-shot calls this PE has made on each team: call k uses stage k % 2 and publishes
 * ready = k. It counts one-shot calls only (not every call): the argument below is about the
 * calls that go through the stages. Every member runs the same algorithm on the same call, so
 * the counters agree. */
static uint64_t oneshots_on_team[TSHMEM_MAX_TEAMS];
/* END SOLUTION */

/* Why no credits are needed. One-shot call k writes my stage k % 2; the next write into it is
 * call k + 2. Before that I finished call k + 1, which needs every peer's stage to show k + 1,
 * and a peer publishes k + 1 only after it has finished call k, that is after it has read its
 * block out of my stage k % 2. So when I overwrite a stage, nobody can still be reading it:
 * a PE never waits for its readers, and it may leave as soon as it holds every block. A direct
 * call in between changes nothing (it does not touch the stages or the count). */
static void alltoall_oneshot(tshmem_team_t team, void *dest, const void *source, size_t nbytes)
{
    /* BEGIN SOLUTION (One-shot pull): copy your whole source into your stage k % 2, publish ready = k with release; for every peer wait for its stage to show k, copy block `me` of it into block j of dest (getmem off the node) */
    const struct tshmem_team *t = &tshmem_g.teams[team];
    int n = t->n_pes, me = t->my_pe;
    char *d = dest;
    const char *s = source;
    uint64_t k = ++oneshots_on_team[team];
    struct tshmem_a2a_stage *st = &tshmem_g.reserved->alltoall_stage[team][k % 2];
    memcpy(st->data, s, (size_t)n * nbytes);
    /* Release: a peer that sees k sees the bytes before it. */
    atomic_store_explicit(tshmem_atomic(&st->ready.value), k, memory_order_release);
    memcpy(d + (size_t)me * nbytes, s + (size_t)me * nbytes, nbytes);
    /* Read the peers from my successor on, so that not everybody queues at PE 0 first. */
    for (int step = 1; step < n; step++) {
        int j = (me + step) % n, pe = t->pes[j];
        const char *block = st->data + (size_t)me * nbytes;
        struct tshmem_a2a_stage *peer = tshmem_ptr(st, pe);
        struct tshmem_spin spin;
        tshmem_spin_init(&spin, "tshmem_alltoallmem",
                         peer ? &peer->ready.value : &st->ready.value);
        if (peer) { /* on this node: load the flag, then the bytes, straight from its slice */
            while (atomic_load_explicit(tshmem_atomic(&peer->ready.value), memory_order_acquire) <
                   k)
                tshmem_spin_pause(&spin);
            memcpy(d + (size_t)j * nbytes, peer->data + (size_t)me * nbytes, nbytes);
        } else { /* on another node: fetch the flag until it shows k, then get the block */
            while (tshmem_uint64_atomic_fetch(&st->ready.value, pe) < k)
                tshmem_spin_pause(&spin);
            tshmem_getmem(d + (size_t)j * nbytes, block, nbytes, pe);
        }
    }
    /* END SOLUTION */
}

int tshmem_alltoallmem_algo(tshmem_team_t team, void *dest, const void *source, size_t nbytes,
                            enum tshmem_algo algo)
{
    const char *func = algo == TSHMEM_ALGO_AUTO ? "tshmem_alltoallmem" : __func__;
    tshmem_require_live(func);
    tshmem_check_team(func, team);
    /* The call is open (TSHMEM_COLLECTIVE): the team's flags and stages in the reserved area are
     * the runtime's own until it returns, and every PE's nbytes is compared. */
    TSHMEM_COLLECTIVE(algo == TSHMEM_ALGO_AUTO ? TSHMEM_FN_ALLTOALLMEM : TSHMEM_FN_ALLTOALLMEM_ALGO,
                      team, nbytes, 0, 0);
    const struct tshmem_team *t = &tshmem_g.teams[team];
    if (t->my_pe < 0)
        tshmem_fail(func, "this PE is not a member of team %d: only its %d members may call a "
                    "collective on it.", team, t->n_pes);
    /* BEGIN SOLUTION (Checking the arguments): number the call; check the team size, the sizes, dest and source (symmetric, room for n blocks, no overlap); a team of one copies */
    int n = t->n_pes;
    char *d = dest;
    const char *s = source;
    ++calls_on_team[team];
    if (n > TSHMEM_COLL_MAX_PES)
        tshmem_fail(func, "team %d has %d PEs; tshmem_alltoallmem keeps one flag word per PE and "
                    "handles at most %d.", team, n, TSHMEM_COLL_MAX_PES);
    if (nbytes > SIZE_MAX / (size_t)n)
        tshmem_fail(func, "nbytes %zu times the team's %d PEs does not fit in size_t.", nbytes, n);
    size_t total = nbytes * (size_t)n;
    if (algo != TSHMEM_ALGO_AUTO && algo != TSHMEM_ALGO_DIRECT && algo != TSHMEM_ALGO_ONESHOT)
        tshmem_fail(func, "algo %d is not an all-to-all algorithm: use TSHMEM_ALGO_AUTO, _DIRECT "
                    "or _ONESHOT.", (int)algo);
    if (algo == TSHMEM_ALGO_ONESHOT && total > TSHMEM_A2A_STAGE_BYTES)
        tshmem_fail(func, "TSHMEM_ALGO_ONESHOT stages the whole source, %zu bytes (nbytes %zu x "
                    "%d PEs), but a stage holds %d: use TSHMEM_ALGO_AUTO or _DIRECT.", total,
                    nbytes, n, TSHMEM_A2A_STAGE_BYTES);
    if (nbytes == 0)
        return 0; /* every member returns here alike: nbytes is the same on all of them */
    tshmem_collect_check_room(func, "dest", dest, total);
    /* source must be symmetric too (API.md), though only this PE reads it: a source that is
     * not is almost always a private buffer passed by mistake for dest's partner. */
    tshmem_collect_check_room(func, "source", source, total);
    if (s < d + total && d < s + total)
        tshmem_fail(func, "source %p overlaps dest %p (%zu bytes each): an all-to-all cannot "
                    "run in place, because a peer's block would overwrite a block of yours that "
                    "you have not sent yet. Pass separate buffers.", source, dest, total);
    if (n == 1) {
        memcpy(d, s, nbytes);
        return 0;
    }
    /* END SOLUTION */
    /* BEGIN SOLUTION (One-shot pull): the selector: one-shot when the whole exchange fits the stage and the blocks are small, direct otherwise */
    /* The choice depends on n and nbytes only, which every member has alike. */
    if (algo == TSHMEM_ALGO_AUTO)
        algo = total <= TSHMEM_A2A_STAGE_BYTES && nbytes <= ONESHOT_MAX_BLOCK
                   ? TSHMEM_ALGO_ONESHOT
                   : TSHMEM_ALGO_DIRECT;
    /* END SOLUTION */
    if (algo == TSHMEM_ALGO_ONESHOT)
        alltoall_oneshot(team, dest, source, nbytes);
    else
        alltoall_direct(team, dest, source, nbytes);
    return 0;
}

int tshmem_alltoallmem(tshmem_team_t team, void *dest, const void *source, size_t nbytes)
{
    return tshmem_alltoallmem_algo(team, dest, source, nbytes, TSHMEM_ALGO_AUTO);
}
