/* recursive_doubling.c: the recursive-doubling allreduce, with the fix-up for team sizes that
 * are not a power of two.
 *
 * Chapter 2.2. With p = 2^k PEs, round r pairs PE i with PE i XOR 2^r; the two swap their
 * whole partial result and both combine. After k rounds each PE holds the sum of all p. It
 * moves the whole vector every round (k * bytes per PE), so it is for small and middling
 * messages, where k rounds beat the ring's 2(n - 1) steps.
 *
 * Team sizes between powers of two: let p be the largest power of two <= n. The n - p "extra"
 * PEs (team numbers p .. n-1) first hand their source to a "core" PE (extra e to core e - p),
 * sit out the rounds, and receive the core's final result at the end.
 *
 * Where the data lands: the partner puts into this PE's scratch, which is cut into slots: two
 * per round (pieces alternate between them) and one for the extra's data. A partner writes
 * only after it has seen this PE's from[] word say "entered this call".
 *
 * Small calls, those that fit a slot of the team's eager area (cut as the scratch is, from
 * TSHMEM_RD_EAGER_BYTES), land there instead: no other algorithm and no other team uses it, so
 * they send no entry signal, and the partner's data comes with its first message. Across nodes
 * that is one hop per round instead of two.
 */
#define TSHMEM_CHAPTER "2.2"
#include <string.h>

#include "tshmem_internal.h"

int tshmem_allreduce_recursive_doubling(const struct tshmem_reduce_call *c)
{
    (void)c;
    TSHMEM_TODO("Recursive doubling", "fix-up in, log2(p) rounds of put_signal into the partner's scratch slot (or its eager area's, for a call that fits one, with no entry signal) and combine, fix-up out; pieces of one slot");
}
