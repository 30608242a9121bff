/* dispatch.c: tshmem_moe_dispatch: every token's row goes to the PEs that own its experts.
 *
 * Chapter 3.1. Three steps, the shape of DeepEP's normal dispatch:
 *   1. counts  every PE counts its rows per expert and puts the E counts into every team PE's
 *              count box with count_sig[me] = layer. Now every PE knows every PE's counts.
 *   2. layout  from the counts alone, every PE computes where each row lands: a receiver's
 *              buffer is grouped by local expert, each expert's rows by source PE, each
 *              source's rows in token order. A receiver knows its n_rows and src_pe[]; a
 *              sender knows, for each of its rows, the exact row it goes to on its owner.
 *   3. rows    each row is put straight into its place; after each expert's run of rows, a
 *              put-with-signal of their (token, slot) pairs adds the run's length to the
 *              receiver's rows_in; the receiver waits until rows_in reaches its running total.
 *
 * Layers follow each other with no barrier. count_sig[j] = L is also j's grant: j sends it on
 * entering dispatch L, when it no longer reads layer L - 1's recv and back buffers. Nobody
 * writes rows (now) or outputs (in combine L) into j before seeing it. The count boxes are two,
 * used in turn: a PE can be one layer ahead of a peer that still reads its box, never two.
 */
#define TSHMEM_CHAPTER "3.1"
#include <string.h>

#include "tshmem_internal.h"

int tshmem_moe_dispatch(tshmem_moe_t *moe, const float *x, int num_tokens, int top_k,
                        const int *topk_idx, const float *topk_weights, float **recv_x,
                        tshmem_moe_layout_t *layout)
{
    const char *func = __func__;
    tshmem_moe_check(func, moe);
    (void)x; (void)top_k;
    TSHMEM_TODO("Checking a dispatch", "num_tokens within 0 .. max_tokens, top_k as created, no NULL where data is needed, every expert index in -1 .. E - 1 (name the token, the slot and the value)");
    moe->layer++; /* this dispatch's number L: 1, 2, 3, ... alike on every member */
    moe->T = num_tokens;
    if (num_tokens > 0) { /* combine weighs with these */
        memcpy(moe->idx, topk_idx, (size_t)num_tokens * (size_t)moe->k * sizeof(int));
        memcpy(moe->weights, topk_weights, (size_t)num_tokens * (size_t)moe->k * sizeof(float));
    }
    TSHMEM_TODO("Exchanging the counts", "count your rows per expert into your row of box L % 2; put that row into every peer's box with count_sig[me] = L; wait until every count_sig[j] >= L");
    TSHMEM_TODO("The receive layout", "for each local expert, its count (summed over sources) and offset; src_pe of every row, source by source");
    TSHMEM_TODO("Sending the rows", "cursor[e] = where your first row for expert e lands on its owner; per expert, put its rows, fence, then put their (token, slot) pairs into recv_meta with rows_in += the run's length; then wait until rows_in reaches the running total");
    for (int r = 0; r < moe->n_rows; r++) {
        moe->src_token[r] = moe->recv_meta[2 * r];
        moe->src_slot[r] = moe->recv_meta[2 * r + 1];
    }
    moe->dispatched = 1;
    *recv_x = moe->recv;
    *layout = (tshmem_moe_layout_t){
        .n_local_experts = moe->n_local, .first_expert = moe->first_expert,
        .n_rows = moe->n_rows, .expert_count = moe->expert_count,
        .expert_offset = moe->expert_offset, .src_pe = moe->src_pe,
        .src_token = moe->src_token, .src_slot = moe->src_slot,
    };
    return 0;
}
