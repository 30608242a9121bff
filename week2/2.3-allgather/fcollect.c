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
    (void)call; (void)dest; (void)source; (void)nbytes;
    TSHMEM_TODO("Ring", "credit your predecessor, then n - 1 steps of put-with-signal to your successor, forwarding the block that just arrived");
}

/* TODO (chapter 2.3, "Direct push"): helpers: the direct algorithm among any set of team PEs */

static void fcollect_direct(const struct tshmem_collect_call *call, char *dest, const char *source,
                            size_t nbytes)
{
    (void)call; (void)dest; (void)source; (void)nbytes;
    TSHMEM_TODO("Direct push", "credit every peer, put your block into every peer's dest with a signal, wait for every block");
}

/* TODO (chapter 2.3, "Hybrid"): helpers: moving one node group's blocks, the leaders' ring */

static void fcollect_hybrid(const struct tshmem_collect_call *call, char *dest, const char *source,
                            size_t nbytes)
{
    (void)call; (void)dest; (void)source; (void)nbytes;
    TSHMEM_TODO("Hybrid", "direct push inside the node, then a ring of node leaders; members pull each group their leader announces");
}

/* TODO (chapter 2.3, "One-shot pull"): helpers: how many stage pieces this PE has published on each team */

/* Piece k goes through stage k % 2. A PE overwrites stage k % 2 with piece k + 2 only after it
 * has read every peer's piece k + 1; a peer publishes k + 1 only after reading everybody's
 * piece k. So no reader can still be inside the stage that is overwritten: a PE never waits for
 * its readers, and it may leave the call as soon as it holds every block. */
static void fcollect_oneshot(const struct tshmem_collect_call *call, char *dest, const char *source,
                             size_t nbytes)
{
    (void)call; (void)dest; (void)source; (void)nbytes;
    TSHMEM_TODO("One-shot pull", "piece by piece: copy into your stage k % 2, publish tag(k, DATA) with release, copy every peer's stage into your dest once it shows that tag");
}

int tshmem_fcollectmem_algo(tshmem_team_t team, void *dest, const void *source, size_t nbytes,
                            enum tshmem_algo algo)
{
    /* The call is open (TSHMEM_COLLECTIVE): its flags and stages in the reserved area are the
     * runtime's own until it returns, and every PE's nbytes is compared. */
    TSHMEM_COLLECTIVE(algo == TSHMEM_ALGO_AUTO ? TSHMEM_FN_FCOLLECTMEM : TSHMEM_FN_FCOLLECTMEM_ALGO,
                      team, nbytes, 0, 0);
    struct tshmem_collect_call call;
    TSHMEM_TODO("Checking the arguments", "begin the call; check dest, source and algo; let the selector resolve AUTO; finish here when there is nothing to send");
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
