/* zero.c: the model state of ZeRO stages 0 (plain data parallelism) to 3: who keeps what.
 *
 * Chapter 3.4. Every stage computes the same thing: the gradient of the mean loss over the
 * global batch, then one optimizer step. What a stage changes is who keeps which part of the
 * model state, and so which collectives the step needs (include/tshmem_zero.h has the table):
 *
 *   stage 0  all of it on every PE; an allreduce of every gradient.
 *   stage 1  the optimizer's moments of my shard only; a reduce-scatter of every gradient after
 *            the backward pass, the optimizer on my shard, an allgather of the parameters.
 *   stage 2  and the gradients: each layer's reduce-scatter as soon as the backward pass has
 *            produced it, through a buffer of one layer.
 *   stage 3  and the parameters: a layer is gathered before the forward pass uses it, and again
 *            before the backward pass does, into one of two buffers; with prefetch the gather
 *            of the next layer runs (2.4's progress thread) while this one computes.
 *
 * This file lays the shards out and allocates what a stage keeps; step.c is the step.
 */
#define TSHMEM_CHAPTER "3.4"
#include <stdlib.h>
#include <string.h>

#include "tshmem_internal.h"
#include "tshmem_zero.h"

/* Where every PE's shard of every layer lies, and the widest padded layer. */
static void layout(struct tshmem_zero *z)
{
    /* BEGIN SOLUTION (The shard layout): for each layer: chunk = ceil(S_l / n), mine = the real elements of my chunk (maybe fewer, maybe 0), soff[l + 1] = soff[l] + chunk; widest = max of n * chunk */
    /* Every PE's chunk of a layer has the same size, padding included: a reduce-scatter and an
     * allgather need equal blocks, and my shards of all layers then sit at the same offsets on
     * every PE (the symmetric shard arrays). */
    z->soff[0] = 0;
    z->widest = 0;
    for (int l = 0; l < z->n_layers; l++) {
        size_t S = z->off[l + 1] - z->off[l], c = (S + (size_t)z->n - 1) / (size_t)z->n;
        size_t first = c * (size_t)z->me;
        z->chunk[l] = c;
        z->mine[l] = first >= S ? 0 : S - first < c ? S - first : c;
        z->soff[l + 1] = z->soff[l] + c;
        if ((size_t)z->n * c > z->widest)
            z->widest = (size_t)z->n * c;
    }
    /* END SOLUTION */
}

/* The model state a stage keeps, allocated with tshmem_zero_alloc (counted) and filled from
 * init (every parameter, 2.4's layout). */
static void allocate(struct tshmem_zero *z, const float *init)
{
    /* BEGIN SOLUTION (What each stage keeps): params (stages 0-2), grads (all, or one layer from stage 2), gshard (stages 1-3), pshard (stage 3), moments (all, or my shards; Adam only), layer buffers (one for stages 1-2, two for stage 3) */
    int st = z->cfg.stage, adam = z->cfg.optim == TSHMEM_OPTIM_ADAM;
    size_t shard = z->soff[z->n_layers];
    if (st <= 2) {
        z->params = tshmem_zero_alloc(z, z->n_params, 0);
        memcpy(z->params, init, z->n_params * sizeof(float));
    }
    /* Stages 0-1 keep every gradient. Layer l's reduce-scatter reads n x chunk[l] floats from
     * off[l]: up to n - 1 past the layer's end, into the next layer or the padding (those sums
     * land in the last PEs' padding, never used). Stages 2-3 keep one layer at a time. */
    z->grads = tshmem_zero_alloc(z, st <= 1 ? z->n_params + (size_t)z->n : z->widest, 1);
    /* The shard of the summed gradient (stages 1-3). Stages 1-2 update their own copy of the
     * parameters in place and reuse gshard, free by then, as the allgather's symmetric source;
     * stage 3 keeps the parameters only as shards. */
    if (st >= 1)
        z->gshard = tshmem_zero_alloc(z, shard, 1);
    if (st == 3) {
        z->pshard = tshmem_zero_alloc(z, shard, 1);
        for (int l = 0; l < z->n_layers; l++)
            memcpy(z->pshard + z->soff[l], init + z->off[l] + z->chunk[l] * (size_t)z->me,
                   z->mine[l] * sizeof(float));
    }
    if (adam) {
        z->m = tshmem_zero_alloc(z, st == 0 ? z->n_params : shard, 0);
        z->v = tshmem_zero_alloc(z, st == 0 ? z->n_params : shard, 0);
    }
    if (st >= 1)
        z->layer[0] = tshmem_zero_alloc(z, z->widest, 1);
    if (st == 3)
        z->layer[1] = tshmem_zero_alloc(z, z->widest, 1);
    /* END SOLUTION */
}

void tshmem_zero_init(struct tshmem_zero *z, tshmem_team_t team, int n_layers, const int *dims,
                      unsigned seed, const struct tshmem_zero_config *cfg)
{
    const char *func = __func__;
    tshmem_require_live(func);
    tshmem_check_team(func, team);
    if (tshmem_team_my_pe(team) < 0)
        tshmem_fail(func, "PE %d is not a member of team %d, so it holds no shard of the model. "
                    "Create the model only on the team's PEs (tshmem_team_my_pe(team) >= 0).",
                    tshmem_g.my_pe, team);
    if (cfg == NULL || cfg->stage < 0 || cfg->stage > 3)
        tshmem_fail(func, "PE %d: stage %d is not a ZeRO stage: pass 0 (plain data parallelism), "
                    "1, 2 or 3 in the config.", tshmem_g.my_pe, cfg ? cfg->stage : -1);
    if (cfg->use_mpi && team != TSHMEM_TEAM_WORLD)
        tshmem_fail(func, "PE %d: the MPI version (use_mpi) runs on TSHMEM_TEAM_WORLD only, not "
                    "on team %d.", tshmem_g.my_pe, team);
    /* The parameters exactly as 2.4's model draws them. */
    struct tshmem_mlp init;
    tshmem_mlp_init(&init, n_layers, dims, seed, NULL);
    memset(z, 0, sizeof *z);
    *z = (struct tshmem_zero){.team = team, .me = tshmem_team_my_pe(team),
                              .n = tshmem_team_n_pes(team), .cfg = *cfg, .n_layers = n_layers,
                              .n_params = init.n_params, .pending = {-1, -1}};
    for (int l = 0; l <= n_layers; l++) {
        z->dims[l] = dims[l];
        z->off[l] = init.off[l];
    }
    layout(z);
    allocate(z, init.params);
    tshmem_mlp_free(&init);
}

void tshmem_zero_free(struct tshmem_zero *z)
{
    /* Symmetric blocks are freed in the same order on every PE (tshmem_free is collective). */
    tshmem_zero_release(z, &z->layer[1], z->widest, 1);
    tshmem_zero_release(z, &z->layer[0], z->widest, 1);
    tshmem_zero_release(z, &z->gshard, z->soff[z->n_layers], 1);
    tshmem_zero_release(z, &z->pshard, z->soff[z->n_layers], 1);
    tshmem_zero_release(z, &z->grads, z->cfg.stage <= 1 ? z->n_params + (size_t)z->n : z->widest,
                        1);
    size_t moments = z->cfg.stage == 0 ? z->n_params : z->soff[z->n_layers];
    tshmem_zero_release(z, &z->m, moments, 0);
    tshmem_zero_release(z, &z->v, moments, 0);
    tshmem_zero_release(z, &z->params, z->n_params, 0);
    tshmem_zero_mpi_free(z);
    for (int l = 0; l <= z->n_layers; l++)
        free(z->act[l]);
    free(z->delta[0]);
    free(z->delta[1]);
}

size_t tshmem_zero_shard(const struct tshmem_zero *z, int layer, int pe, size_t *first)
{
    if (layer < 0 || layer >= z->n_layers)
        tshmem_fail(__func__, "PE %d asked for the shard of layer %d, but the model has layers "
                    "0 .. %d.", tshmem_g.my_pe, layer, z->n_layers - 1);
    if (pe < 0 || pe >= z->n)
        tshmem_fail(__func__, "PE %d asked for the shard of team PE %d, but team %d has PEs 0 .. "
                    "%d: pass a PE number in the team (tshmem_team_translate_pe turns a world "
                    "number into it).", tshmem_g.my_pe, pe, z->team, z->n - 1);
    size_t S = z->off[layer + 1] - z->off[layer], c = z->chunk[layer], lo = c * (size_t)pe;
    if (first)
        *first = lo < S ? lo : S;
    return lo >= S ? 0 : S - lo < c ? S - lo : c;
}
