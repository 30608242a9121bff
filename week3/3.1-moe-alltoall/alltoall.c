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

/* TODO (chapter 3.1, "Checking the arguments"): helpers: how many calls this PE has made on each team */

/* The selector's crossover (measured with bench_3_1, see the book page): one-shot while the
 * whole exchange fits the stage and the blocks are at most this big. */
#define ONESHOT_MAX_BLOCK 1024

static void alltoall_direct(tshmem_team_t team, void *dest, const void *source, size_t nbytes)
{
    (void)team; (void)dest; (void)source; (void)nbytes;
    TSHMEM_TODO("All-to-all", "credit every peer, copy your own block, put block j into team PE j's dest as soon as its credit is here, wait for every peer's block");
}

/* TODO (chapter 3.1, "One-shot pull"): helpers: how many one-shot calls this PE has made on each team */

/* Why no credits are needed. One-shot call k writes my stage k % 2; the next write into it is
 * call k + 2. Before that I finished call k + 1, which needs every peer's stage to show k + 1,
 * and a peer publishes k + 1 only after it has finished call k, that is after it has read its
 * block out of my stage k % 2. So when I overwrite a stage, nobody can still be reading it:
 * a PE never waits for its readers, and it may leave as soon as it holds every block. A direct
 * call in between changes nothing (it does not touch the stages or the count). */
static void alltoall_oneshot(tshmem_team_t team, void *dest, const void *source, size_t nbytes)
{
    (void)team; (void)dest; (void)source; (void)nbytes;
    TSHMEM_TODO("One-shot pull", "copy your whole source into your stage k % 2, publish ready = k with release; for every peer wait for its stage to show k, copy block `me` of it into block j of dest (getmem off the node)");
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
    TSHMEM_TODO("Checking the arguments", "number the call; check the team size, the sizes, dest and source (symmetric, room for n blocks, no overlap); a team of one copies");
    TSHMEM_TODO("One-shot pull", "the selector: one-shot when the whole exchange fits the stage and the blocks are small, direct otherwise");
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
