/* grid.c: tensor parallelism inside a node, data parallelism across: the teams of a 2D grid,
 * and the data-parallel sum of a shard's gradients.
 *
 * Chapter 3.5. With N PEs and a tensor-parallel degree t, lay the PEs out in rows of t:
 *
 *          TP team (x axis)
 *          PE 0  PE 1  ...  PE t-1        <- node 0: one block split t ways
 *          PE t  PE t+1 ... PE 2t-1       <- node 1: another copy of the same block
 *          ...
 *   DP team (y axis): PE 0, t, 2t, ...: the PEs that hold the same shard.
 *
 * Neighbouring PEs share a node, so the tensor-parallel allreduces (two per layer and pass, on
 * the critical path) stay on the fast links; the data-parallel sum (once per step, overlappable)
 * crosses nodes (chapter 2.5's transport). Megatron-LM builds its groups the same way: its
 * tensor-model-parallel groups are consecutive ranks, its data-parallel groups strided ones.
 */
#define TSHMEM_CHAPTER "3.5"
#include <stdlib.h>

#include "tshmem_internal.h"
#include "tshmem_tp.h"

int tshmem_team_split_2d(tshmem_team_t parent, int xrange,
                         const tshmem_team_config_t *xaxis_config, long xaxis_mask,
                         tshmem_team_t *xaxis_team, const tshmem_team_config_t *yaxis_config,
                         long yaxis_mask, tshmem_team_t *yaxis_team)
{
    const char *func = __func__;
    tshmem_require_live(func);
    tshmem_check_team(func, parent);
    if (!xaxis_team || !yaxis_team)
        tshmem_fail(func, "PE %d passed %s = NULL: pass the addresses of two tshmem_team_t to "
                    "receive the teams.", tshmem_g.my_pe, !xaxis_team ? "xaxis_team"
                                                                      : "yaxis_team");
    if ((xaxis_mask != 0 && !xaxis_config) || (yaxis_mask != 0 && !yaxis_config))
        tshmem_fail(func, "PE %d passed a config mask but no config: pass a config, or mask 0.",
                    tshmem_g.my_pe);
    /* BEGIN SOLUTION (The grid's teams): check xrange against the parent's size; then two colour splits of the parent: my row (parent index / xrange), my column (parent index % xrange), each numbered by parent index */
    int n = tshmem_g.teams[parent].n_pes, me = tshmem_g.teams[parent].my_pe;
    if (xrange < 1 || xrange > n)
        tshmem_fail(func, "PE %d passed xrange = %d for parent team %d of %d PEs: a row holds 1 "
                    "to %d PEs.", tshmem_g.my_pe, xrange, parent, n, n);
    /* One split gives every row its team, under one handle (the rows are disjoint). */
    *xaxis_team = tshmem_team_split_color(func, parent, me / xrange, me);
    *yaxis_team = tshmem_team_split_color(func, parent, me % xrange, me);
    return 0;
    /* END SOLUTION */
}

/* Stops, on every member of dp_team, unless all of them hold the same shard. */
static void dp_team_check(const char *func, tshmem_tp_t *tp, tshmem_team_t dp_team)
{
    /* BEGIN SOLUTION (The data-parallel sum): no PE of dp_team but me in my TP team; then, once per team, sum (first, first^2, cols, cols^2) over it: all equal iff the sums are d x mine */
    const struct tshmem_team *dp = &tshmem_g.teams[dp_team], *tpt = &tshmem_g.teams[tp->team];
    for (int i = 0; i < dp->n_pes; i++)
        for (int k = 0; k < tpt->n_pes; k++)
            if (dp->pes[i] == tpt->pes[k] && dp->pes[i] != tshmem_g.my_pe)
                tshmem_fail(func, "PE %d: the data-parallel team %d contains PE %d, which is in "
                            "this PE's tensor-parallel team and holds another shard. Pass the "
                            "team of the PEs that hold the same shard (tshmem_team_split_2d's "
                            "y-axis team).", tshmem_g.my_pe, dp_team, dp->pes[i]);
    if (tp->dp_checked == dp_team)
        return;
    /* The sums of a and a^2 over d members equal d a and d a^2 only if every one is a. */
    int64_t f = tp->mlp.first, c = tp->mlp.cols, d = dp->n_pes;
    int64_t mine[4] = {f, f * f, c, c * c};
    for (int i = 0; i < 4; i++)
        tp->check[i] = mine[i];
    tshmem_int64_sum_reduce(dp_team, tp->check, tp->check, 4);
    for (int i = 0; i < 4; i++)
        if (tp->check[i] != d * mine[i])
            tshmem_fail(func, "PE %d holds units %d .. %d, but other PEs of the data-parallel "
                        "team %d hold other shards: its members must hold the same shard (the "
                        "same tensor-parallel rank). Pass tshmem_team_split_2d's y-axis team.",
                        tshmem_g.my_pe, tp->mlp.first, tp->mlp.first + tp->mlp.cols - 1,
                        dp_team);
    tp->dp_checked = dp_team;
    /* END SOLUTION */
}

void tshmem_tp_dp_sync(tshmem_tp_t *tp, tshmem_team_t dp_team)
{
    const char *func = __func__;
    tshmem_require_live(func);
    if (tp == NULL || tp->magic != TSHMEM_TP_MAGIC)
        tshmem_fail(func, "PE %d passed %p, which is not a live block: pass what "
                    "tshmem_tp_create returned.", tshmem_g.my_pe, (void *)tp);
    if (tp->rank < 0)
        tshmem_fail(func, "PE %d is not a member of the block's team: it holds no shard to "
                    "sum.", tshmem_g.my_pe);
    tshmem_check_team(func, dp_team);
    if (tshmem_g.teams[dp_team].my_pe < 0)
        tshmem_fail(func, "PE %d is not a member of the data-parallel team %d: pass the team "
                    "this PE belongs to.", tshmem_g.my_pe, dp_team);
    dp_team_check(func, tp, dp_team);
    /* BEGIN SOLUTION (The data-parallel sum): one allreduce of the shard's gradients (symmetric, n_grads floats) over dp_team, in place */
    tshmem_float_sum_reduce(dp_team, tp->mlp.grads, tp->mlp.grads, tp->mlp.n_grads);
    /* END SOLUTION */
}
