/* tshmem_tp.h: tensor parallelism, Megatron-style, on tshmem (chapter 3.5).
 *
 * A transformer's MLP block, y = x + W2 gelu(W1 x + b1) + b2, with x and y rows of `hidden`
 * floats and an inner width of `ffn` floats, is split over the PEs of a team along ffn: team
 * PE k holds rows first .. first + cols - 1 of W1 (ffn x hidden) and b1 (the first linear is
 * column-parallel: each PE computes its own slice of the inner activation, no communication),
 * and the same columns of W2 (hidden x ffn) (the second linear is row-parallel: each PE computes
 * a partial y from its slice, and an allreduce over the team adds them). b2 and the residual
 * are added once, after the sum. The backward pass mirrors it: one allreduce of the partial
 * input gradients. The block's arithmetic (week3/3.5-tensor-parallel/block.c) is provided, with
 * a single-process run of the whole block to check against; what you write is the split, the
 * two allreduces, the teams of a TP x DP grid and the data-parallel gradient sum
 * (week3/3.5-tensor-parallel/tp.c and grid.c). The public names are in tshmem.h, section 3.5.
 */
#ifndef TSHMEM_TP_H
#define TSHMEM_TP_H

#include <stddef.h>
#include <stdint.h>

#include "tshmem.h"

/* The block, or one PE's shard of it. The single-process block is the shard with first = 0,
 * cols = ffn. */
struct tshmem_tp_mlp {
    int hidden, ffn;  /* the whole block's sizes */
    int first, cols;  /* this shard: inner units first .. first + cols - 1 */
    int max_rows;
    unsigned seed;
    /* Parameters. W1 is cols x hidden (row j is the block's row first + j); W2 is hidden x
     * cols (row o holds the block's W2[o][first .. first + cols - 1]). b2 is whole on every
     * PE of the team. */
    float *W1, *b1, *W2, *b2;
    /* Gradients, the same shapes, one after the other in `grads` (n_grads floats, in the order
     * gW1, gb1, gW2, gb2), so that one allreduce over a data-parallel team sums them all. The
     * backward pass adds into them (several micro-batches accumulate); zero them per step. */
    float *grads, *gW1, *gb1, *gW2, *gb2;
    size_t n_grads;
    int grads_owned; /* grads came from tshmem_tp_mlp_init's calloc (freed with the model) */
    /* The last forward, kept for the backward: its rows, its input, and this shard's inner
     * activation before (z) and after (a) the GELU, rows x cols each. */
    int rows;
    float *x, *z, *a;
    float *dz; /* the backward's work space, rows x cols */
};

/* Provided (block.c). */
/* The shard [first, first + cols) of the block drawn from seed: every number is a hash of
 * (seed, what, index in the whole block), so any PE can make any shard. grads: NULL (private,
 * allocated here) or n_grads floats of the caller's (tshmem_tp_create passes symmetric ones). */
void   tshmem_tp_mlp_init(struct tshmem_tp_mlp *m, int hidden, int ffn, int first, int cols,
                          int max_rows, unsigned seed, float *grads);
void   tshmem_tp_mlp_free(struct tshmem_tp_mlp *m);
size_t tshmem_tp_mlp_count(int hidden, int cols); /* n_grads of a shard of cols inner units */
void   tshmem_tp_mlp_zero_grad(struct tshmem_tp_mlp *m);
void   tshmem_tp_mlp_sgd(struct tshmem_tp_mlp *m, float lr); /* every parameter -= lr x grad */
/* The pieces of a forward and a backward, on the shard: */
/* z = W1 x + b1, a = gelu(z), for this shard's units; keeps x, z, a for the backward. */
void   tshmem_tp_mlp_column_forward(struct tshmem_tp_mlp *m, const float *x, int rows);
/* y_part[r][o] = sum over this shard's units j, in order, of W2[o][j] a[r][j]: this shard's
 * share of W2 a, without b2 and without the residual. */
void   tshmem_tp_mlp_row_forward(const struct tshmem_tp_mlp *m, float *y_part);
/* y += x + b2, once per row, after the partial sums have been added. */
void   tshmem_tp_mlp_finish_forward(const struct tshmem_tp_mlp *m, float *y);
/* gb2 += dy, gW2 += dy a^T (this shard's columns), dz = (W2^T dy) gelu'(z). */
void   tshmem_tp_mlp_row_backward(struct tshmem_tp_mlp *m, const float *dy);
/* gW1 += dz x^T, gb1 += dz, dx_part = W1^T dz: this shard's share of the input gradient,
 * without the residual's dy. */
void   tshmem_tp_mlp_column_backward(struct tshmem_tp_mlp *m, float *dx_part);
/* dx += dy, the residual's share, once, after the partial sums have been added. */
void   tshmem_tp_mlp_finish_backward(const struct tshmem_tp_mlp *m, const float *dy, float *dx);
/* The single-process block: the same pieces on the whole block (first = 0, cols = ffn). */
void   tshmem_tp_reference_forward(struct tshmem_tp_mlp *whole, const float *x, int rows,
                                   float *y);
void   tshmem_tp_reference_backward(struct tshmem_tp_mlp *whole, const float *dy, float *dx);

#define TSHMEM_TP_MAGIC 0x74656e736f727470ull /* "tensortp": a live tshmem_tp_t */

struct tshmem_tp {
    uint64_t magic;
    tshmem_team_t team;
    int rank, size;          /* my team PE number (-1 outside the team), the TP degree */
    struct tshmem_tp_mlp mlp; /* my shard (empty outside the team) */
    /* Symmetric, max_rows x hidden floats each: the partial sums the two allreduces add. */
    float *y_part, *dx_part;
    float *grads;            /* symmetric: the shard's gradients (max over the team's shards) */
    int64_t *check;          /* symmetric, 4 words: tshmem_tp_dp_sync's test of its team */
    tshmem_team_t dp_checked; /* the last data-parallel team found to hold this shard */
    int pending;             /* a forward ran whose backward has not */
    /* What the block has done since it was created (the tests and the benchmark read these). */
    uint64_t fwd_calls, bwd_calls;
    uint64_t allreduce_calls;  /* tensor-parallel allreduces (f and g), not the DP sums */
    uint64_t allreduce_bytes;  /* their payload, bytes */
    double allreduce_s;        /* seconds spent in them */
};

#endif /* TSHMEM_TP_H */
