/* fcollect_nb.c: stage 3's true allgather, a second kind of 2.4 request.
 *
 * Chapter 3.4. tshmem_fcollectmem_nb (request.c, provided) checks the call as 2.3's fcollect
 * does, gives it one chunk number k on its team and queues it; 2.4's progress thread brings it
 * here. Each PE puts its block straight into its place in every team PE's dest, with a signal:
 * (n - 1) blocks sent per PE, where an allreduce of the whole buffer sends twice that, and
 * nothing is added, so any bytes come through unchanged.
 *
 * It uses 2.4's flag words of the team, whose numbers every kind of request shares in start
 * order:
 *   grant[i]   "team PE i has started call k: you may write into its dest". A PE's dest is
 *              its own until then (stage 3's next layer buffer is still being read).
 *   gather[i]  "team PE i's block of call k is in your dest".
 * A grant of k is only ever sent from inside call k or later, never ahead of it (2.4's
 * allreduce grants no chunk beyond its own last one), so "at least k" is safe to wait for.
 * 2.4's landing buffers and piece[] words are not touched.
 */
#define TSHMEM_CHAPTER "3.4"
#include <string.h>

#include "tshmem_internal.h"

void tshmem_nb_fcollect_run(const struct tshmem_request *req)
{
    (void)req;
    TSHMEM_TODO("A true allgather", "k = the call's chunk number (req->call.seq), the flags tshmem_g.reserved->nb[team]; grant k to every other team PE; copy my block to its own place in my dest; for each other team PE j, from my successor on: wait for j's grant, put my block into j's dest at my place with signal gather[me] = k; then wait until every other PE's gather word is at least k");
}
