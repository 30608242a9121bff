/* tshmem_zero.h: ZeRO, sharded data parallelism, on 2.4's model (chapter 3.4).
 *
 * The multi-layer perceptron of chapter 2.4, trained with Adam (or SGD) on a team, in one of
 * four stages. Every PE computes the gradient of its share of each global batch, as in 2.4;
 * what changes is who keeps which part of the model state:
 *
 *   stage 0  plain data parallelism: every PE keeps all parameters, all gradients and all of
 *            Adam's moments; one allreduce of the gradients per step (2.4).
 *   stage 1  Adam's moments sharded: team PE i keeps the moments of its shard of each layer
 *            only; the gradients are reduce-scattered after the backward pass, each PE updates
 *            its shard, and the parameters are gathered back (an allgather per layer).
 *   stage 2  the gradients sharded too: each layer's gradient is reduce-scattered as soon as
 *            the backward pass has produced it, into a buffer of one layer, and only the shard
 *            is kept.
 *   stage 3  the parameters sharded too: a layer's parameters are gathered just before the
 *            forward (and again the backward) pass uses them and dropped after; with prefetch,
 *            the gather of the next layer runs on 2.4's progress thread meanwhile.
 *
 * The shard of layer l (S_l = dims[l+1] x (dims[l] + 1) parameters) is chunk[l] = ceil(S_l / n)
 * elements: team PE i owns elements [i * chunk[l], (i + 1) * chunk[l]) of the layer (the last
 * ones may own fewer, or none). A PE's shards of every layer lie one after the other in its
 * shard arrays: layer l's from soff[l].
 */
#ifndef TSHMEM_ZERO_H
#define TSHMEM_ZERO_H

#include <stddef.h>

#include "tshmem.h"
#include "tshmem_train.h"

enum tshmem_optim { TSHMEM_OPTIM_SGD, TSHMEM_OPTIM_ADAM };

struct tshmem_zero_config {
    int stage;              /* 0, 1, 2 or 3 */
    enum tshmem_optim optim;
    float lr, beta1, beta2, eps; /* beta1, beta2, eps: Adam's only */
    enum tshmem_algo algo;  /* the reduce-scatter's: AUTO, DIRECT or RING */
    int prefetch;           /* stage 3: gather layer l+1 (l-1 backward) while layer l computes */
    int use_mpi;            /* the benchmark's MPI version of the same stage: MPI_Allreduce,
                             * MPI_Reduce_scatter_block, MPI_Allgather, MPI_Iallgather
                             * (TSHMEM_TEAM_WORLD only) */
};
/* lr 1e-2, betas 0.9 and 0.999, eps 1e-8, Adam, AUTO, prefetch on. */
struct tshmem_zero_config tshmem_zero_default(int stage);

struct tshmem_zero {
    tshmem_team_t team;
    int me, n;                  /* my team PE number, the team's size */
    struct tshmem_zero_config cfg;
    int n_layers;
    int dims[TSHMEM_MLP_MAX_LAYERS + 1];
    size_t off[TSHMEM_MLP_MAX_LAYERS + 1]; /* the whole model's layout, as in 2.4 */
    size_t n_params;
    size_t chunk[TSHMEM_MLP_MAX_LAYERS];   /* every PE's shard of layer l: ceil(S_l / n) */
    size_t mine[TSHMEM_MLP_MAX_LAYERS];    /* elements of it that are real on this PE */
    size_t soff[TSHMEM_MLP_MAX_LAYERS + 1]; /* where my shard of layer l starts */
    size_t widest;              /* max over l of n * chunk[l]: one layer, padded */

    /* The model state (what each stage keeps is the chapter): NULL where a stage has none. */
    float *params;   /* stages 0-2: every parameter, private, 2.4's layout */
    float *grads;    /* stages 0-1: every gradient (+ n floats of padding), symmetric;
                      * stages 2-3: one layer's gradient, widest floats, symmetric */
    float *pshard;   /* stage 3: my shards of the parameters, symmetric */
    float *gshard;   /* stages 1-3: my shards of the summed gradient, symmetric; stages 1-2
                      * then send my updated parameters' shards from it */
    float *m, *v;    /* Adam's moments: every parameter's (stage 0) or my shards' (1-3) */
    float *layer[2]; /* stages 1-2: layer[0] receives one gathered layer; stage 3: the two
                      * buffers a layer is gathered into (widest floats each), symmetric */
    tshmem_request_t req[2]; /* stage 3: the gather under way into layer[0] / layer[1] */
    int pending[2];          /* the layer being gathered into each buffer, -1 for none */
    long t;                  /* optimizer steps taken */

    /* The forward pass's work space (private), as 2.4's model keeps it. */
    int batch, cap;
    float *act[TSHMEM_MLP_MAX_LAYERS + 1];
    float *delta[2];
    const int *labels;

    /* Measured (the tests and the benchmark read these). */
    size_t state_bytes;  /* bytes of model state allocated now (params, grads, moments,
                          * shards, gathered layers), counted by tshmem_zero_alloc */
    size_t state_peak;   /* the most there ever was */
    size_t comm_bytes;   /* last step: bytes this PE sent, as the collectives' algorithms send */
    int prefetched;      /* last step: layers computed while a gather was under way */
    double t_step, t_comm; /* last step: seconds in all, and in blocking collectives */
    void *mpi;           /* the MPI version's communicator and requests */
};

/* Collective over team (and over TSHMEM_TEAM_WORLD when cfg.use_mpi): parameters drawn from
 * seed, the same as tshmem_mlp_init's. */
void   tshmem_zero_init(struct tshmem_zero *z, tshmem_team_t team, int n_layers, const int *dims,
                        unsigned seed, const struct tshmem_zero_config *cfg);
void   tshmem_zero_free(struct tshmem_zero *z);
/* One step on this PE's n samples of a global batch of global_n: the gradient of the mean loss
 * over the global batch, then the optimizer. Returns the sum of this PE's losses. */
double tshmem_zero_step(struct tshmem_zero *z, const float *x, const int *y, int n, int global_n);
/* Collective: every parameter, gathered into out (n_params floats, 2.4's layout). */
void   tshmem_zero_params(struct tshmem_zero *z, float *out);
/* Team PE pe's shard of layer `layer`: returns how many real elements it holds; *first (if
 * not NULL) says where they start in the layer. Stops for a layer or PE outside the model/team. */
size_t tshmem_zero_shard(const struct tshmem_zero *z, int layer, int pe, size_t *first);

/* ---- Provided (week3/3.4-zero/zero_model.c) ------------------------------------------------- */
/* Model state memory, counted: symmetric blocks come from tshmem_malloc (collective). */
float *tshmem_zero_alloc(struct tshmem_zero *z, size_t count, int symmetric);
void   tshmem_zero_release(struct tshmem_zero *z, float **p, size_t count, int symmetric);
/* The forward and backward pass, one layer at a time, given that layer's parameters Wb (W then
 * b, 2.4's layout): the same arithmetic in the same order as tshmem_mlp_forward/backward. */
void   tshmem_zero_begin(struct tshmem_zero *z, const float *x, const int *y, int n);
void   tshmem_zero_forward(struct tshmem_zero *z, int l, const float *Wb);
/* The sum of the batch's losses, and d loss / d logits times scale (1 / global_n). */
double tshmem_zero_loss(struct tshmem_zero *z, float scale);
void   tshmem_zero_backward(struct tshmem_zero *z, int l, const float *Wb, float *g);
/* The optimizer on count elements: p, m, v updated from g (SGD leaves m, v alone). */
void   tshmem_zero_optimize(struct tshmem_zero *z, float *p, const float *g, float *m, float *v,
                            size_t count);
/* The collectives of a step, counted into comm_bytes and timed into t_comm; with use_mpi they
 * are MPI's. reduce_scatter: my block of count floats; allgather: count floats of mine into
 * n * count; allreduce: in place, team order. */
void   tshmem_zero_reduce_scatter(struct tshmem_zero *z, float *dest, const float *src,
                                  size_t count);
void   tshmem_zero_allgather(struct tshmem_zero *z, float *dest, const float *src, size_t count);
void   tshmem_zero_allreduce(struct tshmem_zero *z, float *buf, size_t count);
/* Stage 3's gather of layer l into buffer b (0 or 1): started (tshmem_fcollectmem_nb, 2.4's
 * progress thread: every PE's shard of the layer, in team order, into the buffer; with use_mpi,
 * MPI_Iallgather), and awaited: returns the layer's parameters. (Gathering by an allreduce of a
 * buffer that holds my shard and -0.0 elsewhere also works, at twice the bytes: bonus task 1.) */
void   tshmem_zero_gather_start(struct tshmem_zero *z, int l, int b);
const float *tshmem_zero_gather_wait(struct tshmem_zero *z, int b);
void   tshmem_zero_mpi_free(struct tshmem_zero *z); /* the MPI version's communicator */

#endif /* TSHMEM_ZERO_H */
