/* moe.c: the MoE handle: its symmetric buffers, its checks, and which PE owns which expert.
 *
 * Chapter 3.1. Mostly provided: you write tshmem_moe_expert_pe. A handle is DeepEP's Buffer in
 * miniature: made once for a layer's shape, it holds every buffer a dispatch and a combine need,
 * in one tshmem_malloc block sized for the worst case (every row of every PE sent to one PE),
 * so that no call allocates and every PE's buffers sit at the same offsets. The layout of the
 * block is described beside struct tshmem_moe in tshmem_internal.h.
 */
#define TSHMEM_CHAPTER "3.1"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tshmem_internal.h"

/* Rounds up to whole cache lines, so that flags and row buffers start on their own line. */
static size_t lines(size_t bytes)
{
    return (bytes + TSHMEM_CACHE_LINE - 1) / TSHMEM_CACHE_LINE * TSHMEM_CACHE_LINE;
}

/* What each PE passed to tshmem_moe_create, kept in its block so that PE 0 can be compared. */
struct moe_config_box {
    _Alignas(TSHMEM_CACHE_LINE) int32_t team, E, H, k, max_tokens;
};

static void *xcalloc(const char *func, size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        tshmem_fail(func, "out of private memory for the handle's bookkeeping (%zu x %zu bytes).",
                    count, size);
    return p;
}

tshmem_moe_t *tshmem_moe_create(tshmem_team_t team, const tshmem_moe_config_t *config)
{
    const char *func = __func__;
    tshmem_require_live(func);
    tshmem_check_team(func, team);
    if (!config)
        tshmem_fail(func, "config is NULL: pass the layer's num_experts, hidden, top_k and "
                    "max_tokens.");
    const tshmem_moe_config_t c = *config;
    if (c.num_experts < 1 || c.hidden < 1 || c.top_k < 1 || c.max_tokens < 0)
        tshmem_fail(func, "config {num_experts %d, hidden %d, top_k %d, max_tokens %d}: the first "
                    "three must be at least 1 and max_tokens at least 0.", c.num_experts,
                    c.hidden, c.top_k, c.max_tokens);
    if (c.top_k > c.num_experts)
        tshmem_fail(func, "top_k %d is larger than num_experts %d: a token cannot choose more "
                    "experts than there are.", c.top_k, c.num_experts);
    const struct tshmem_team *t = &tshmem_g.teams[team];
    int nw = tshmem_g.n_pes;
    /* The sizes, with every product checked: cap_rows rows of H floats must fit. */
    size_t H = (size_t)c.hidden, k = (size_t)c.top_k, E = (size_t)c.num_experts;
    size_t slots = (size_t)c.max_tokens * k, cap_rows = slots * (size_t)nw;
    if (cap_rows > INT_MAX / 2 || H > SIZE_MAX / sizeof(float) / (cap_rows + slots + 1))
        tshmem_fail(func, "max_tokens %d x top_k %d x %d PEs rows of %d floats is too large to "
                    "address.", c.max_tokens, c.top_k, nw, c.hidden);
    size_t row = H * sizeof(float);
    size_t o_sig = 0, o_rows_in = o_sig + (size_t)nw * sizeof(struct tshmem_flag);
    size_t o_back_in = o_rows_in + sizeof(struct tshmem_flag);
    size_t o_config = o_back_in + sizeof(struct tshmem_flag);
    size_t o_box = o_config + sizeof(struct moe_config_box);
    size_t o_meta = o_box + lines(2 * (size_t)nw * E * sizeof(int32_t));
    size_t o_recv = o_meta + lines(cap_rows * 2 * sizeof(int32_t));
    size_t o_back = o_recv + lines(cap_rows * row);
    size_t total = o_back + lines(slots * row);
    if (total > tshmem_g.heap_bytes) {
        char need[32], have[32];
        tshmem_fail(func, "the handle needs %s of symmetric heap per PE (room to receive every "
                    "row of %d PEs x %d tokens x top_k %d, %d floats each), but the heap has %s. "
                    "Set TSHMEM_SYMMETRIC_SIZE larger, or max_tokens smaller.",
                    tshmem_bytes_str(total, need, sizeof need), nw, c.max_tokens, c.top_k,
                    c.hidden, tshmem_bytes_str(tshmem_g.heap_bytes, have, sizeof have));
    }
    char *block = tshmem_malloc(total); /* collective over every PE: the same size on each */
    /* The block may be memory an earlier handle used: its counters must start at 0 before any
     * peer signals into it, hence the barrier after clearing. */
    memset(block, 0, o_recv);
    struct moe_config_box *box = (struct moe_config_box *)(block + o_config);
    *box = (struct moe_config_box){team, c.num_experts, c.hidden, c.top_k, c.max_tokens};
    tshmem_barrier_all();
    struct moe_config_box zero;
    tshmem_getmem(&zero, box, sizeof zero, 0);
    if (memcmp(&zero, box, sizeof zero) != 0)
        tshmem_fail(func, "this PE passed team %d, {num_experts %d, hidden %d, top_k %d, "
                    "max_tokens %d}, but PE 0 passed team %d, {%d, %d, %d, %d}: every PE must "
                    "create the handle with the same team and config.", team, c.num_experts,
                    c.hidden, c.top_k, c.max_tokens, zero.team, zero.E, zero.H, zero.k,
                    zero.max_tokens);
    tshmem_moe_t *m = xcalloc(func, 1, sizeof *m);
    *m = (struct tshmem_moe){
        .magic = TSHMEM_MOE_MAGIC, .team = team, .t = t, .me = t->my_pe, .n = t->n_pes,
        .E = c.num_experts, .H = c.hidden, .k = c.top_k, .max_tokens = c.max_tokens,
        .cap_rows = cap_rows, .row_bytes = row, .block = block,
        .count_sig = (struct tshmem_flag *)(block + o_sig),
        .rows_in = (struct tshmem_flag *)(block + o_rows_in),
        .back_in = (struct tshmem_flag *)(block + o_back_in),
        .count_box = (int32_t *)(block + o_box), .recv_meta = (int32_t *)(block + o_meta),
        .recv = (float *)(block + o_recv), .back = (float *)(block + o_back),
    };
    if (m->me >= 0) {
        m->first_expert = tshmem_moe_first_expert(m->E, m->n, m->me);
        m->n_local = tshmem_moe_first_expert(m->E, m->n, m->me + 1) - m->first_expert;
    }
    m->idx = xcalloc(func, slots, sizeof(int));
    m->weights = xcalloc(func, slots, sizeof(float));
    m->cursor = xcalloc(func, E, sizeof(int));
    m->expert_count = xcalloc(func, (size_t)m->n_local, sizeof(int));
    m->expert_offset = xcalloc(func, (size_t)m->n_local + 1, sizeof(int));
    m->src_pe = xcalloc(func, cap_rows, sizeof(int));
    m->src_token = xcalloc(func, cap_rows, sizeof(int));
    m->src_slot = xcalloc(func, cap_rows, sizeof(int));
    return m;
}

void tshmem_moe_destroy(tshmem_moe_t *moe)
{
    const char *func = __func__;
    tshmem_require_live(func);
    if (!moe || moe->magic != TSHMEM_MOE_MAGIC)
        tshmem_fail(func, "%p is not a live handle from tshmem_moe_create (destroyed twice?).",
                    (void *)moe);
    /* tshmem_free waits for every PE first: by then every member has left its last combine,
     * and every word that anyone was to write into this block has been written. */
    tshmem_free(moe->block);
    free(moe->idx), free(moe->weights), free(moe->cursor), free(moe->expert_count);
    free(moe->expert_offset), free(moe->src_pe), free(moe->src_token), free(moe->src_slot);
    moe->magic = 0;
    free(moe);
}

void tshmem_moe_check(const char *func, const tshmem_moe_t *moe)
{
    tshmem_require_live(func);
    if (!moe || moe->magic != TSHMEM_MOE_MAGIC)
        tshmem_fail(func, "%p is not a live handle from tshmem_moe_create (destroyed, or never "
                    "created).", (const void *)moe);
    if (moe->me < 0)
        tshmem_fail(func, "this PE is not a member of the handle's team %d: only its %d members "
                    "dispatch and combine.", moe->team, moe->n);
}

int tshmem_moe_expert_pe(const tshmem_moe_t *moe, int expert)
{
    tshmem_require_live(__func__);
    if (!moe || moe->magic != TSHMEM_MOE_MAGIC)
        tshmem_fail(__func__, "%p is not a live handle from tshmem_moe_create.",
                    (const void *)moe);
    if (expert < 0 || expert >= moe->E)
        tshmem_fail(__func__, "expert %d is out of range: the handle has experts 0 .. %d.",
                    expert, moe->E - 1);
    /* BEGIN SOLUTION (Expert placement): the team PE p with first(p) <= expert < first(p + 1), where first(p) = p * E / n */
    /* first(p) = floor(p E / n) <= e  <=>  p E < (e + 1) n  <=>  p <= ((e + 1) n - 1) / E. The
     * owner is the largest such p. */
    return (int)((((int64_t)expert + 1) * moe->n - 1) / moe->E);
    /* END SOLUTION */
}
