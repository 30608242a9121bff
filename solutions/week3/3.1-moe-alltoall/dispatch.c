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
    /* BEGIN SOLUTION (Checking a dispatch): num_tokens within 0 .. max_tokens, top_k as created, no NULL where data is needed, every expert index in -1 .. E - 1 (name the token, the slot and the value) */
    if (num_tokens < 0 || num_tokens > moe->max_tokens)
        tshmem_fail(func, "num_tokens %d is out of range: the handle was created for 0 .. %d "
                    "tokens per PE (max_tokens). Split the batch, or create the handle with a "
                    "larger max_tokens.", num_tokens, moe->max_tokens);
    if (top_k != moe->k)
        tshmem_fail(func, "top_k %d does not match the handle's top_k %d: topk_idx and "
                    "topk_weights must have %d columns.", top_k, moe->k, moe->k);
    if (!recv_x || !layout)
        tshmem_fail(func, "recv_x and layout must not be NULL: they receive the result.");
    if (num_tokens > 0 && (!x || !topk_idx || !topk_weights))
        tshmem_fail(func, "x, topk_idx or topk_weights is NULL, with num_tokens %d.", num_tokens);
    for (int t = 0; t < num_tokens; t++)
        for (int s = 0; s < top_k; s++) {
            int e = topk_idx[(size_t)t * top_k + s];
            if (e < -1 || e >= moe->E)
                tshmem_fail(func, "token %d, top-k slot %d: expert %d is out of range: this "
                            "layer has experts 0 .. %d (-1 marks an empty slot).", t, s, e,
                            moe->E - 1);
        }
    /* END SOLUTION */
    moe->layer++; /* this dispatch's number L: 1, 2, 3, ... alike on every member */
    moe->T = num_tokens;
    if (num_tokens > 0) { /* combine weighs with these */
        memcpy(moe->idx, topk_idx, (size_t)num_tokens * (size_t)moe->k * sizeof(int));
        memcpy(moe->weights, topk_weights, (size_t)num_tokens * (size_t)moe->k * sizeof(float));
    }
    /* BEGIN SOLUTION (Exchanging the counts): count your rows per expert into your row of box L % 2; put that row into every peer's box with count_sig[me] = L; wait until every count_sig[j] >= L */
    int n = moe->n, me = moe->me, E = moe->E, k = moe->k;
    const int *pes = moe->t->pes;
    uint64_t L = moe->layer;
    /* count_box[L % 2][j][e]: the same offset on every PE. */
    int32_t *box = moe->count_box + (size_t)(L % 2) * (size_t)n * (size_t)E;
    int32_t *mine = box + (size_t)me * (size_t)E;
    memset(mine, 0, (size_t)E * sizeof(int32_t));
    for (size_t i = 0; i < (size_t)num_tokens * (size_t)k; i++)
        if (topk_idx[i] >= 0)
            mine[topk_idx[i]]++;
    /* Each peer gets my counts and, with them, my grant: I am done with layer L - 1. The put's
     * signal is a release store, so a peer that sees L sees the counts. My own box row is in
     * place already; my own count_sig[me] says so. */
    for (int step = 1; step < n; step++) {
        int j = (me + step) % n;
        tshmem_putmem_signal(mine, mine, (size_t)E * sizeof(int32_t), &moe->count_sig[me].value,
                             L, TSHMEM_SIGNAL_SET, pes[j]);
    }
    tshmem_signal_op(&moe->count_sig[me].value, L, TSHMEM_SIGNAL_SET, pes[me]);
    for (int j = 0; j < n; j++)
        tshmem_signal_wait_until(&moe->count_sig[j].value, TSHMEM_CMP_GE, L);
    /* END SOLUTION */
    /* BEGIN SOLUTION (The receive layout): for each local expert, its count (summed over sources) and offset; src_pe of every row, source by source */
    int rows = 0;
    for (int l = 0; l < moe->n_local; l++) {
        int e = moe->first_expert + l;
        moe->expert_offset[l] = rows;
        for (int j = 0; j < n; j++)
            for (int c = 0; c < box[(size_t)j * E + e]; c++)
                moe->src_pe[rows++] = j;
        moe->expert_count[l] = rows - moe->expert_offset[l];
    }
    moe->expert_offset[moe->n_local] = rows;
    moe->n_rows = rows;
    /* END SOLUTION */
    /* BEGIN SOLUTION (Sending the rows): cursor[e] = where your first row for expert e lands on its owner; per expert, put its rows, fence, then put their (token, slot) pairs into recv_meta with rows_in += the run's length; then wait until rows_in reaches the running total */
    /* On the owner p of expert e, e's rows start after those of p's experts before e, and mine
     * after those of the sources before me. */
    for (int p = 0; p < n; p++) {
        int at = 0;
        int first = tshmem_moe_first_expert(E, n, p), end = tshmem_moe_first_expert(E, n, p + 1);
        for (int e = first; e < end; e++) {
            int before_me = 0, all = 0;
            for (int j = 0; j < n; j++) {
                all += box[(size_t)j * E + e];
                before_me += j < me ? box[(size_t)j * E + e] : 0;
            }
            moe->cursor[e] = at + before_me;
            at += all;
        }
    }
    /* My rows grouped by expert, each expert's in token and slot order (a counting sort of
     * the (token, slot) pairs): the order the receiver expects them in. */
    int *order = moe->order, at = 0;
    for (int e = 0; e < E; e++)
        moe->start[e] = at, at += mine[e];
    for (int i = 0; i < num_tokens * k; i++)
        if (topk_idx[i] >= 0)
            order[moe->start[topk_idx[i]]++] = i;
    /* One run per expert: its rows are contiguous in the owner's buffer, from cursor[e]. The
     * rows go with plain puts, then the run's (token, slot) pairs with a put-with-signal that
     * adds the run's length to the owner's rows_in. The fence keeps the rows ahead of that
     * signal on every path (on the node the signal's release store would do; across nodes the
     * fence is the promise). One signal per run, not per row: few atomics on a contended word. */
    at = 0;
    for (int e = 0; e < E; e++) {
        if (mine[e] == 0)
            continue;
        int pe = pes[tshmem_moe_expert_pe(moe, e)];
        size_t r0 = (size_t)moe->cursor[e];
        for (int i = 0; i < mine[e]; i++, at++) {
            int t = order[at] / k, s = order[at] % k;
            tshmem_putmem(moe->recv + (r0 + (size_t)i) * (size_t)moe->H,
                          x + (size_t)t * (size_t)moe->H, moe->row_bytes, pe);
            moe->meta_out[2 * i] = t, moe->meta_out[2 * i + 1] = s;
        }
        tshmem_fence();
        tshmem_putmem_signal(moe->recv_meta + 2 * r0, moe->meta_out,
                             (size_t)mine[e] * 2 * sizeof(int32_t), &moe->rows_in->value,
                             (uint64_t)mine[e], TSHMEM_SIGNAL_ADD, pe);
    }
    /* rows_in counts every row ever received: wait for this layer's on top of the others'. No
     * row of the next layer can come early: its senders wait for my next count_sig. */
    moe->rows_expected += (uint64_t)rows;
    tshmem_signal_wait_until(&moe->rows_in->value, TSHMEM_CMP_GE, moe->rows_expected);
    /* END SOLUTION */
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
