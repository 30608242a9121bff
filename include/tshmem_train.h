/* tshmem_train.h: data-parallel training of a small model on tshmem (chapter 2.4).
 *
 * A multi-layer perceptron in float32 (ReLU between layers, softmax cross-entropy at the end)
 * learns to tell the arms of a spiral apart, a data set generated in code from a seed. The
 * model (week2/2.4-overlap/mlp.c) is provided; what you write is the data-parallel step
 * (week2/2.4-overlap/ddp.c): each PE computes gradients on its share of the global batch, the
 * gradients are grouped into buckets, and each bucket's allreduce starts as soon as the
 * backward pass has produced it, while the backward pass goes on with the layers below.
 */
#ifndef TSHMEM_TRAIN_H
#define TSHMEM_TRAIN_H

#include <stddef.h>

#include "tshmem.h"

#define TSHMEM_MLP_MAX_LAYERS 8 /* weight layers */

/* Parameters of layer l: W (dims[l+1] x dims[l], row-major), then b (dims[l+1]); the layers
 * lie one after the other, so layers a..b are the contiguous range [off[a], off[b + 1]). The
 * gradients have the same layout. */
struct tshmem_mlp {
    int n_layers;
    int dims[TSHMEM_MLP_MAX_LAYERS + 1]; /* dims[0] inputs, dims[n_layers] classes */
    size_t off[TSHMEM_MLP_MAX_LAYERS + 1];
    size_t n_params;
    float *params;  /* private: every PE keeps its own copy, kept identical by the training */
    float *grads;   /* given by the caller (symmetric for the data-parallel step) */
    /* the last forward pass, for backward */
    int batch, cap;                        /* samples in it; room for */
    float *act[TSHMEM_MLP_MAX_LAYERS + 1]; /* act[0] = inputs, act[l+1] = layer l's output */
    float *delta[2];                       /* backward's work space */
    const int *labels;
};

/* Provided (mlp.c). */
/* Parameters drawn from seed (the same on every PE); grads must hold n_params floats. */
void   tshmem_mlp_init(struct tshmem_mlp *m, int n_layers, const int *dims, unsigned seed,
                       float *grads);
void   tshmem_mlp_free(struct tshmem_mlp *m);
size_t tshmem_mlp_count(int n_layers, const int *dims); /* n_params, before init */
/* Samples first .. first + n - 1 of the endless spiral data set `seed` with dims[0] inputs
 * (2 coordinates, then their products and sines) and n_classes arms. */
void   tshmem_spiral_data(float *x, int *y, long first, int n, int n_inputs, int n_classes,
                          unsigned seed);
/* The forward pass over n samples; returns the sum of their losses. */
double tshmem_mlp_forward(struct tshmem_mlp *m, const float *x, const int *y, int n);
/* grads = scale * (sum over the last forward's samples of d loss / d params). After layer l's
 * gradients are final, calls on_layer(arg, l), for l = n_layers-1 down to 0. */
void   tshmem_mlp_backward(struct tshmem_mlp *m, float scale,
                           void (*on_layer)(void *arg, int layer), void *arg);
void   tshmem_mlp_sgd(struct tshmem_mlp *m, float lr); /* params -= lr * grads */

/* The data-parallel model: one per PE, the same arguments on every PE of the team. */
struct tshmem_ddp {
    struct tshmem_mlp model;
    tshmem_team_t team;
    int overlap;        /* 1: bucketed non-blocking allreduces; 0: one blocking allreduce after
                         * the backward pass */
    size_t bucket_cap;  /* bytes: a bucket takes layers (from the last) until it holds this
                         * much; 0: one bucket per layer */
    int n_buckets;
    int bucket_first[TSHMEM_MLP_MAX_LAYERS], bucket_last[TSHMEM_MLP_MAX_LAYERS]; /* layers */
    tshmem_request_t req[TSHMEM_MLP_MAX_LAYERS];
    /* what the last step did (the tests and the benchmark read these) */
    int started_early;  /* allreduces started before the backward pass of layer 0 began */
    double t_compute, t_wait; /* seconds: forward + backward, then waiting for the gradients */
};
/* Collective over team: the model (grads in the symmetric heap) and its buckets. */
void   tshmem_ddp_init(struct tshmem_ddp *d, tshmem_team_t team, int n_layers, const int *dims,
                       unsigned seed, size_t bucket_cap, int overlap);
void   tshmem_ddp_free(struct tshmem_ddp *d);
/* One step on this PE's n samples of a global batch of global_n: the gradient of the mean
 * loss over the global batch, then SGD. Returns the sum of this PE's losses. */
double tshmem_ddp_step(struct tshmem_ddp *d, const float *x, const int *y, int n, int global_n,
                       float lr);

#endif /* TSHMEM_TRAIN_H */
