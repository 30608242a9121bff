/* step.c: one ZeRO training step: forward, backward with the gradients' reduce-scatter, the
 * optimizer on my shard, and the parameters gathered back (stages 1-2) or on demand (stage 3).
 *
 * Chapter 3.4. The optimizer works element by element, and the direct reduce-scatter adds in
 * team order as 2.4's allreduce does, so every stage ends each step with the same bits as
 * stage 0 (and, with SGD, as 2.4's tshmem_ddp_step). Every collective goes through the counted
 * wrappers of zero_model.c: tshmem_zero_reduce_scatter, _allgather, _allreduce, and stage 3's
 * tshmem_zero_gather_start / _wait, which run on 2.4's progress thread.
 */
#define TSHMEM_CHAPTER "3.4"
#include <string.h>
#include <time.h>

#include "tshmem_internal.h"
#include "tshmem_zero.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Stage 3's forward pass: layer l's parameters gathered into buffer l % 2 just before use. */
static void forward_sharded(struct tshmem_zero *z)
{
    /* BEGIN SOLUTION (Stage 3: gather, compute, drop): start layer 0's gather; for each layer: with prefetch, start the next layer's gather first, wait for this one, compute; without, wait, compute, then start the next */
    int L = z->n_layers;
    tshmem_zero_gather_start(z, 0, 0);
    for (int l = 0; l < L; l++) {
        /* Buffer (l + 1) % 2 held layer l - 1, whose forward is done: it may be overwritten. */
        if (z->cfg.prefetch && l + 1 < L)
            tshmem_zero_gather_start(z, l + 1, (l + 1) % 2);
        const float *Wb = tshmem_zero_gather_wait(z, l % 2);
        tshmem_zero_forward(z, l, Wb);
        if (!z->cfg.prefetch && l + 1 < L)
            tshmem_zero_gather_start(z, l + 1, (l + 1) % 2);
    }
    /* END SOLUTION */
}

/* Stage 3's backward pass: gathered again, from the last layer down, into buffer (L-1-l) % 2;
 * each layer's gradient reduce-scattered into my shard as soon as it is computed. */
static void backward_sharded(struct tshmem_zero *z)
{
    /* BEGIN SOLUTION (Stage 3: gather, compute, drop): the same from the last layer down: gather (prefetching l - 1), backward into the one-layer grads, reduce-scatter it into gshard + soff[l] */
    int L = z->n_layers;
    tshmem_zero_gather_start(z, L - 1, 0);
    for (int l = L - 1; l >= 0; l--) {
        int b = (L - 1 - l) % 2;
        if (z->cfg.prefetch && l > 0)
            tshmem_zero_gather_start(z, l - 1, 1 - b);
        const float *Wb = tshmem_zero_gather_wait(z, b);
        tshmem_zero_backward(z, l, Wb, z->grads);
        /* Blocking, while the next gather may be in flight: it uses the reduce flags, the
         * gather 2.4's own (the two never share a word). */
        tshmem_zero_reduce_scatter(z, z->gshard + z->soff[l], z->grads, z->chunk[l]);
        if (!z->cfg.prefetch && l > 0)
            tshmem_zero_gather_start(z, l - 1, 1 - b);
    }
    /* END SOLUTION */
}

/* Stages 0-2: every PE holds every parameter; what differs is where the gradients go. */
static void backward_replicated(struct tshmem_zero *z)
{
    /* BEGIN SOLUTION (Gradients: allreduce or reduce-scatter): stage 0: backward of every layer into grads + off[l], then one allreduce; stage 1: the same, then a reduce-scatter per layer (from grads + off[l]); stage 2: each layer into the one-layer grads and reduce-scattered at once */
    int L = z->n_layers, st = z->cfg.stage;
    for (int l = L - 1; l >= 0; l--) {
        const float *Wb = z->params + z->off[l];
        if (st == 2) { /* the layer's gradient is final: keep my shard of the sum, drop it */
            tshmem_zero_backward(z, l, Wb, z->grads);
            tshmem_zero_reduce_scatter(z, z->gshard + z->soff[l], z->grads, z->chunk[l]);
        } else {
            tshmem_zero_backward(z, l, Wb, z->grads + z->off[l]);
        }
    }
    if (st == 0)
        tshmem_zero_allreduce(z, z->grads, z->n_params);
    if (st == 1)
        for (int l = 0; l < L; l++)
            tshmem_zero_reduce_scatter(z, z->gshard + z->soff[l], z->grads + z->off[l],
                                       z->chunk[l]);
    /* END SOLUTION */
}

/* The optimizer on what this PE owns, then (stages 1-2) every PE's shards gathered back. */
static void update(struct tshmem_zero *z)
{
    /* BEGIN SOLUTION (The optimizer on my shard): stage 0: every parameter; stages 1-3: for each layer, my mine[l] elements: the parameters (stage 3: pshard + soff[l]; stages 1-2: params + off[l] + my first element), gshard, m, v at soff[l]; stages 1-2: copy the new shard into gshard, allgather each layer into layer[0], copy its S_l floats into params + off[l] */
    if (z->cfg.stage == 0) {
        tshmem_zero_optimize(z, z->params, z->grads, z->m, z->v, z->n_params);
        return;
    }
    for (int l = 0; l < z->n_layers; l++) {
        size_t o = z->soff[l];
        float *p = z->cfg.stage == 3 ? z->pshard + o
                                     : z->params + z->off[l] + z->chunk[l] * (size_t)z->me;
        tshmem_zero_optimize(z, p, z->gshard + o, z->m ? z->m + o : NULL,
                             z->v ? z->v + o : NULL, z->mine[l]);
        if (z->cfg.stage < 3) /* gshard is spent: it carries my new shard to the others */
            memcpy(z->gshard + o, p, z->mine[l] * sizeof(float));
    }
    if (z->cfg.stage == 3)
        return; /* the next step gathers what it needs */
    for (int l = 0; l < z->n_layers; l++) {
        tshmem_zero_allgather(z, z->layer[0], z->gshard + z->soff[l], z->chunk[l]);
        memcpy(z->params + z->off[l], z->layer[0], (z->off[l + 1] - z->off[l]) * sizeof(float));
    }
    /* END SOLUTION */
}

double tshmem_zero_step(struct tshmem_zero *z, const float *x, const int *y, int n, int global_n)
{
    double t0 = now();
    z->comm_bytes = 0;
    z->t_comm = 0;
    z->prefetched = 0;
    tshmem_zero_begin(z, x, y, n);
    if (z->cfg.stage == 3)
        forward_sharded(z);
    else
        for (int l = 0; l < z->n_layers; l++)
            tshmem_zero_forward(z, l, z->params + z->off[l]);
    /* Each PE's gradient is already divided by the global batch: the team's sum is the mean. */
    double loss = tshmem_zero_loss(z, 1.0f / (float)global_n);
    if (z->cfg.stage == 3)
        backward_sharded(z);
    else
        backward_replicated(z);
    z->t++;
    update(z);
    z->t_step = now() - t0;
    return loss;
}

void tshmem_zero_params(struct tshmem_zero *z, float *out)
{
    if (z->cfg.stage < 3) {
        memcpy(out, z->params, z->n_params * sizeof(float));
        return;
    }
    for (int l = 0; l < z->n_layers; l++) {
        tshmem_zero_allgather(z, z->layer[0], z->pshard + z->soff[l], z->chunk[l]);
        memcpy(out + z->off[l], z->layer[0], (z->off[l + 1] - z->off[l]) * sizeof(float));
    }
}
