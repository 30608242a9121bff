/* ddp.c: data-parallel training with gradient buckets whose allreduce overlaps the backward pass.
 *
 * Chapter 2.4. Every PE holds the whole model and a share of each global batch. After its
 * backward pass a PE holds the gradient of its share; the sum over the team's PEs, divided by
 * the global batch, is the gradient of the whole batch, so after one allreduce every PE takes
 * the same SGD step and the copies stay identical.
 *
 * The backward pass produces the gradients from the last layer to the first. A bucket is a run
 * of consecutive layers, gathered from the last one until it holds bucket_cap bytes; as soon as
 * the backward pass finishes a bucket's lowest layer, the bucket's allreduce starts
 * (tshmem_allreduce_nb, in place on the gradients) and runs on the progress thread while the
 * backward pass goes on below. Before the optimizer step the trainer waits for every bucket.
 */
#define TSHMEM_CHAPTER "2.4"
#include <time.h>

#include "tshmem_internal.h"
#include "tshmem_train.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Groups the layers into buckets, from the last layer down. */
static void make_buckets(struct tshmem_ddp *d)
{
    /* BEGIN SOLUTION (Buckets): walk the layers from the last down; close a bucket once it holds bucket_cap bytes (each layer its own bucket for 0); fill bucket_first, bucket_last, n_buckets */
    /* Bucket 0 is the one the backward pass finishes first. Its layers are [first, last], a
     * contiguous range of the gradients, so one allreduce covers it. */
    const struct tshmem_mlp *m = &d->model;
    d->n_buckets = 0;
    int last = m->n_layers - 1;
    for (int l = m->n_layers - 1; l >= 0; l--) {
        size_t bytes = (m->off[last + 1] - m->off[l]) * sizeof(float);
        if (bytes >= d->bucket_cap || l == 0) {
            d->bucket_first[d->n_buckets] = l;
            d->bucket_last[d->n_buckets] = last;
            d->n_buckets++;
            last = l - 1;
        }
    }
    /* END SOLUTION */
}

void tshmem_ddp_init(struct tshmem_ddp *d, tshmem_team_t team, int n_layers, const int *dims,
                     unsigned seed, size_t bucket_cap, int overlap)
{
    tshmem_check_team(__func__, team);
    *d = (struct tshmem_ddp){.team = team, .overlap = overlap, .bucket_cap = bucket_cap};
    /* The gradients are what the team's PEs combine: symmetric, like every allreduce buffer. */
    float *grads = tshmem_malloc(tshmem_mlp_count(n_layers, dims) * sizeof(float));
    tshmem_mlp_init(&d->model, n_layers, dims, seed, grads);
    for (int b = 0; b < TSHMEM_MLP_MAX_LAYERS; b++)
        d->req[b] = TSHMEM_REQUEST_NULL;
    make_buckets(d);
}

void tshmem_ddp_free(struct tshmem_ddp *d)
{
    tshmem_free(d->model.grads);
    tshmem_mlp_free(&d->model);
}

/* The backward pass's hook: layer `layer`'s gradients are final. */
static void bucket_ready(struct tshmem_ddp *d, int layer)
{
    /* BEGIN SOLUTION (Overlap): if this layer is the lowest of a bucket (and overlap is on), start that bucket's allreduce, in place on its range of the gradients */
    if (!d->overlap)
        return;
    const struct tshmem_mlp *m = &d->model;
    for (int b = 0; b < d->n_buckets; b++)
        if (d->bucket_first[b] == layer) {
            float *g = m->grads + m->off[layer];
            size_t count = m->off[d->bucket_last[b] + 1] - m->off[layer];
            tshmem_allreduce_nb(d->team, g, g, count, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM,
                                &d->req[b]);
        }
    /* END SOLUTION */
}

/* Provided: what the backward pass calls; it counts the allreduces under way before the
 * backward pass of layer 0 begins (the tests check that they do not all wait for the end). */
struct step_state {
    struct tshmem_ddp *d;
    uint64_t started_before;
};

static void on_layer(void *arg, int layer)
{
    struct step_state *st = arg;
    bucket_ready(st->d, layer);
    if (layer == 1)
        st->d->started_early = (int)(tshmem_nb_started() - st->started_before);
}

double tshmem_ddp_step(struct tshmem_ddp *d, const float *x, const int *y, int n, int global_n,
                       float lr)
{
    struct tshmem_mlp *m = &d->model;
    double t0 = now();
    double loss = tshmem_mlp_forward(m, x, y, n);
    /* Each PE's gradient is already divided by the global batch: the team's sum is the mean. */
    struct step_state st = {.d = d, .started_before = tshmem_nb_started()};
    d->started_early = 0;
    tshmem_mlp_backward(m, 1.0f / (float)global_n, on_layer, &st);
    double t1 = now();
    /* BEGIN SOLUTION (Overlap): with overlap, wait for every bucket; without, one blocking allreduce of all the gradients */
    if (d->overlap)
        tshmem_waitall(d->req, (size_t)d->n_buckets);
    else
        tshmem_float_sum_reduce(d->team, m->grads, m->grads, m->n_params);
    /* END SOLUTION */
    d->t_compute = t1 - t0;
    d->t_wait = now() - t1;
    tshmem_mlp_sgd(m, lr);
    return loss;
}
