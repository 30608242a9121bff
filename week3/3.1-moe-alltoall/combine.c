/* combine.c: tshmem_moe_combine: every expert output goes home and is summed with its weight.
 *
 * Chapter 3.1. The inverse of the last dispatch. Row r of expert_out belongs to token
 * src_token[r], slot src_slot[r] of team PE src_pe[r]; it is put into that PE's back buffer at
 * back[token * top_k + slot], one slot per (token, slot) and nobody else's; the last row of a
 * run for one home PE goes with a put-with-signal that adds the run's length to its back_in.
 * The home PE waits until back_in reaches its running total, then sums each
 * token's outputs with the routing weights in slot order, 0 to top_k - 1: the same order every
 * time, whatever order the rows arrived in, so the result is the same bits on every run.
 *
 * May a sender write into a home PE's back buffer now? The home PE reads it only inside its
 * combine; a writer of layer L got the home PE's count_sig L during dispatch L, which the home
 * PE sent after its combine L - 1 had finished reading. And a sender's expert_out may be its
 * recv buffer: nobody writes there until this PE's next dispatch has granted it.
 */
#define TSHMEM_CHAPTER "3.1"
#include <string.h>

#include "tshmem_internal.h"

int tshmem_moe_combine(tshmem_moe_t *moe, const float *expert_out, float *y)
{
    const char *func = __func__;
    tshmem_moe_check(func, moe);
    if (!moe->dispatched)
        tshmem_fail(func, "there is no dispatch to undo: call tshmem_moe_dispatch first (each "
                    "combine undoes the dispatch just before it, once).");
    if (moe->n_rows > 0 && !expert_out)
        tshmem_fail(func, "expert_out is NULL, but this PE received %d rows to send back.",
                    moe->n_rows);
    if (moe->T > 0 && !y)
        tshmem_fail(func, "y is NULL, but this PE dispatched %d tokens.", moe->T);
    moe->dispatched = 0;
    TSHMEM_TODO("Sending the outputs home", "put row r of expert_out into back[token * k + slot] of its home PE; the last row of each run of rows with the same home goes with a put-with-signal that adds the run's length to back_in, after a fence");
    TSHMEM_TODO("The weighted sum", "wait until back_in reaches the running total of your non-empty slots; y[t] = sum over s in slot order of weight * back[t * k + s]");
    return 0;
}
