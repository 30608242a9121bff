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
static inline size_t lines(size_t bytes)
{
    return (bytes + TSHMEM_CACHE_LINE - 1) / TSHMEM_CACHE_LINE * TSHMEM_CACHE_LINE;
}

/* What each PE passed to tshmem_moe_create (compared with PE 0's before the block is allocated),
 * kept in its block. */
struct moe_config_box {
    _Alignas(TSHMEM_CACHE_LINE) int32_t E, H, k, max_tokens;
};

static void *xcalloc(const char *func, size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        tshmem_fail(func, "out of private memory for the handle's bookkeeping (%zu x %zu bytes).",
                    count, size);
    return p;
}

/* Where each part of a handle's block starts (bytes from the block's start), and its sizes. */
struct moe_parts {
    size_t sig, rows_in, back_in, config, box, meta, recv, back; /* offsets, in this order */
    size_t total;    /* the whole block */
    size_t cap_rows; /* rows the recv buffer holds: world PEs x max_tokens x top_k */
    size_t slots;    /* max_tokens x top_k: the back buffer's rows */
    size_t row;      /* bytes per row: hidden floats */
};

/* The block of a handle for config c on a job of nw PEs: every part sized for the worst case,
 * each starting on a cache line. Stops if it is too large to address or for the heap. */
static void moe_parts(const char *func, const tshmem_moe_config_t *c, int nw, struct moe_parts *o)
{
    (void)func; (void)c; (void)nw; (void)o;
    TSHMEM_TODO("Sizing the buffers", "the worst case is every row of every PE sent to one PE: cap_rows = nw x max_tokens x top_k rows; lay out count_sig[nw], rows_in, back_in, the config box, count_box[2][nw][E], recv_meta[cap_rows][2], recv[cap_rows][H], back[slots][H]; stop if the heap cannot hold it");
}

tshmem_moe_t *tshmem_moe_create(tshmem_team_t team, const tshmem_moe_config_t *config)
{
    const char *func = __func__;
    tshmem_require_live(func);
    if (team != TSHMEM_TEAM_INVALID) /* INVALID: this PE is outside the team (a split's answer) */
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
    const struct tshmem_team *t = team == TSHMEM_TEAM_INVALID ? NULL : &tshmem_g.teams[team];
    int nw = tshmem_g.n_pes;
    struct moe_parts o;
    moe_parts(func, &c, nw, &o);
    /* The configs must agree before the block is allocated: its size comes from them, and
     * tshmem_malloc stops a job whose PEs ask for different sizes (naming the sizes, not the
     * configs). PE 0's config travels on the bootstrap's communicator, as malloc's barrier does. */
    struct moe_config_box mine = {c.num_experts, c.hidden, c.top_k, c.max_tokens}, zero = mine;
    MPI_Bcast(&zero, (int)sizeof zero, MPI_BYTE, 0, tshmem_g.comm);
    if (zero.E != mine.E || zero.H != mine.H || zero.k != mine.k ||
        zero.max_tokens != mine.max_tokens)
        tshmem_fail(func, "this PE passed {num_experts %d, hidden %d, top_k %d, max_tokens %d}, "
                    "but PE 0 passed {%d, %d, %d, %d}: every PE must create the handle with the "
                    "same config.", c.num_experts, c.hidden, c.top_k, c.max_tokens, zero.E,
                    zero.H, zero.k, zero.max_tokens);
    char *block = tshmem_malloc(o.total); /* collective over every PE: the same size on each */
    /* The block may be memory an earlier handle used: its counters must start at 0 before any
     * peer signals into it, hence the barrier after clearing. */
    memset(block, 0, o.recv);
    struct moe_config_box *box = (struct moe_config_box *)(block + o.config);
    *box = mine; /* the handle's config, in its block for a debugger to see */
    tshmem_barrier_all();
    tshmem_moe_t *m = xcalloc(func, 1, sizeof *m);
    *m = (struct tshmem_moe){
        .magic = TSHMEM_MOE_MAGIC, .team = team, .t = t, .me = t ? t->my_pe : -1,
        .n = t ? t->n_pes : 0,
        .E = c.num_experts, .H = c.hidden, .k = c.top_k, .max_tokens = c.max_tokens,
        .cap_rows = o.cap_rows, .row_bytes = o.row, .block = block,
        .count_sig = (struct tshmem_flag *)(block + o.sig),
        .rows_in = (struct tshmem_flag *)(block + o.rows_in),
        .back_in = (struct tshmem_flag *)(block + o.back_in),
        .count_box = (int32_t *)(block + o.box), .recv_meta = (int32_t *)(block + o.meta),
        .recv = (float *)(block + o.recv), .back = (float *)(block + o.back),
    };
    if (m->me >= 0) {
        m->first_expert = tshmem_moe_first_expert(m->E, m->n, m->me);
        m->n_local = tshmem_moe_first_expert(m->E, m->n, m->me + 1) - m->first_expert;
    }
    m->idx = xcalloc(func, o.slots, sizeof(int));
    m->weights = xcalloc(func, o.slots, sizeof(float));
    m->cursor = xcalloc(func, (size_t)c.num_experts, sizeof(int));
    m->start = xcalloc(func, (size_t)c.num_experts, sizeof(int));
    m->order = xcalloc(func, o.slots, sizeof(int));
    m->meta_out = xcalloc(func, 2 * o.slots, sizeof(int32_t));
    m->expert_count = xcalloc(func, (size_t)m->n_local, sizeof(int));
    m->expert_offset = xcalloc(func, (size_t)m->n_local + 1, sizeof(int));
    m->src_pe = xcalloc(func, o.cap_rows, sizeof(int));
    m->src_token = xcalloc(func, o.cap_rows, sizeof(int));
    m->src_slot = xcalloc(func, o.cap_rows, sizeof(int));
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
    free(moe->start), free(moe->order), free(moe->meta_out);
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
        tshmem_fail(func, "this PE created the handle outside its team (TSHMEM_TEAM_INVALID): it "
                    "may only destroy it; the team's members dispatch and combine.");
}

int tshmem_moe_expert_pe(const tshmem_moe_t *moe, int expert)
{
    tshmem_moe_check(__func__, moe);
    if (expert < 0 || expert >= moe->E)
        tshmem_fail(__func__, "expert %d is out of range: the handle has experts 0 .. %d.",
                    expert, moe->E - 1);
    TSHMEM_TODO("Expert placement", "the team PE p with first(p) <= expert < first(p + 1), where first(p) = p * E / n");
}
