/* tshmem_pipe.h: pipeline-parallel training of a small model on tshmem (chapter 3.2).
 *
 * A model of n_stages layers is cut into stages, one layer per stage, stage s on team PE s.
 * Every layer maps a micro-batch of `rows` samples of `width` floats to the same shape:
 * y = tanh(W x + b). The last stage compares its output with a target and adds the squared
 * error to the loss. The model (week3/3.2-pipeline/stage.c) is provided, with a single-process
 * run of the same layers to check against. What you write is the handoff between stages
 * (week3/3.2-pipeline/handoff.c) and the two schedules (week3/3.2-pipeline/schedule.c); their
 * public names are declared in tshmem.h, section 3.2.
 */
#ifndef TSHMEM_PIPE_H
#define TSHMEM_PIPE_H

#include <stddef.h>
#include <stdint.h>

#include "tshmem.h"

/* What a stage tells the world about its handoffs: one cache line in the pipe's symmetric
 * block, written only by the PE it belongs to (atomic stores), read by anyone with
 * tshmem_uint64_atomic_fetch. The tests watch a neighbour through it. */
struct tshmem_pipe_counters {
    _Alignas(64) uint64_t fwd_sent;  /* micro-batches sent forward since the pipe was created */
    uint64_t fwd_received;           /* received from the stage before */
    uint64_t bwd_sent;               /* gradients sent backward */
    uint64_t bwd_received;           /* received from the stage after */
    uint64_t fwd_sending;            /* the number of the forward send under way, 0 if none */
    uint64_t bwd_sending;            /* the same backward */
    uint64_t fwd_ahead_max;          /* the most forward micro-batches ever in flight to the
                                      * next stage (sent, not yet credited): at most n_slots */
    uint64_t bwd_ahead_max;          /* the same for gradients to the stage before */
};

/* One direction of one stage's handoffs. "Mine" are the slots where this PE receives; the
 * sender writes into its twin on the receiver, the same address (symmetric). */
struct tshmem_pipe_dir {
    int to_pe;          /* the world PE this direction sends to, -1 at the end of the line */
    int from_pe;        /* the world PE that sends to me, -1 at the start of the line */
    float *slots;       /* n_slots slots of act_elems floats: my receiving slots */
    uint64_t *arrived;  /* written by from_pe: the number of the last micro-batch it put into
                         * my slots (SET; it only grows) */
    uint64_t *credit;   /* written by to_pe: the number of the last micro-batch it has read
                         * out of its slots, so that I may reuse that slot (SET; only grows) */
    uint64_t sent;      /* private: micro-batches I sent in this direction */
    uint64_t received;  /* private: micro-batches I received in this direction */
    uint64_t released;  /* private: of those, how many slots I have given back (credited); a
                         * zero-copy receive holds slots received - released .. received */
};

#define TSHMEM_PIPE_MAGIC 0x706970656c696e65ull /* "pipeline": a live tshmem_pipe_t */

struct tshmem_pipe {
    uint64_t magic;           /* TSHMEM_PIPE_MAGIC while the pipe lives */
    tshmem_team_t team;
    int stage, n_stages;      /* my team PE number, the team's size */
    size_t act_elems;         /* floats per micro-batch */
    int n_slots;
    size_t slot_elems;        /* act_elems rounded up to whole cache lines: the slots' stride */
    void *block;              /* the symmetric block: counters, flags, slots */
    struct tshmem_pipe_counters *counters; /* in the block: mine (the same address on a peer is
                                            * that peer's) */
    struct tshmem_pipe_dir fwd; /* activations: to stage + 1, from stage - 1 */
    struct tshmem_pipe_dir bwd; /* gradients: to stage - 1, from stage + 1 */
};

/* One stage of the model, on its PE (or one of several in the single-process run). */
struct tshmem_pipe_model {
    int stage, n_stages;
    int rows, width;        /* a micro-batch: rows samples of width floats */
    size_t act_elems;       /* rows * width */
    unsigned seed;
    float *W, *b;           /* width x width (row-major: W[o * width + i]), then width */
    float *gW, *gb;         /* gradients, accumulated over micro-batches in micro-batch order */
    long fwd_us, bwd_us;    /* simulated compute: each forward (backward) also sleeps this long */
    long step;              /* the step under way (tshmem_pipe_model_begin) */
    int n_micro;
    double loss;            /* last stage: the losses of this step's forwards, summed in order */
    /* the stash: input and output of each forward whose backward has not run, oldest first */
    float *stash;           /* stash_cap entries of 2 * act_elems floats (x, then y) */
    int *stash_mb;          /* the micro-batch of each entry */
    int stash_first, stash_count, stash_cap;
    int stash_peak;         /* the most entries held at once during this step */
    /* work space for the schedules: act_elems floats each */
    float *x, *y, *dy, *dx;
    float *dz;              /* the backward's own work space */
};

/* Provided (stage.c). */
void   tshmem_pipe_model_init(struct tshmem_pipe_model *m, int stage, int n_stages, int rows,
                              int width, unsigned seed);
void   tshmem_pipe_model_free(struct tshmem_pipe_model *m);
/* Starts a step of n_micro micro-batches: stops unless the stash is empty; loss and
 * stash_peak start from 0 (the gradients do not: tshmem_pipe_model_zero_grad). */
void   tshmem_pipe_model_begin(struct tshmem_pipe_model *m, long step, int n_micro);
/* Stage 0: the input of micro-batch mb of the step under way, into x (act_elems floats). */
void   tshmem_pipe_model_input(const struct tshmem_pipe_model *m, int mb, float *x);
/* y = tanh(W x + b) for every row; stashes x and y for the backward. On the last stage, adds
 * micro-batch mb's loss to m->loss. */
void   tshmem_pipe_model_forward(struct tshmem_pipe_model *m, int mb, const float *x, float *y);
/* The backward of micro-batch mb, which must be the oldest in the stash: accumulates the
 * weights' gradients and writes the gradient with respect to the input into dx (NULL on stage
 * 0: nobody needs it). dy is the gradient with respect to the output (NULL on the last stage:
 * it comes from the loss). */
void   tshmem_pipe_model_backward(struct tshmem_pipe_model *m, int mb, const float *dy,
                                  float *dx);
void   tshmem_pipe_model_zero_grad(struct tshmem_pipe_model *m);
void   tshmem_pipe_model_sgd(struct tshmem_pipe_model *m, float lr); /* W -= lr gW, b -= lr gb */
/* The single-process run: the same step through stages[0 .. n_stages-1], all in this process,
 * one micro-batch at a time (forward through every stage, then backward). Accumulates each
 * stage's gradients in micro-batch order, as the pipelines do; returns the summed loss. */
double tshmem_pipe_reference_step(struct tshmem_pipe_model *stages, int n_stages, long step,
                                  int n_micro);

/* What both schedules are made of (schedule.c): one micro-batch's forward on this stage, from
 * its input (made on stage 0, received from stage s - 1 elsewhere) to sending its output to
 * stage s + 1; and its backward, from its gradient (the loss on the last stage, received from
 * stage s + 1 elsewhere) to sending the input's gradient to stage s - 1. Call them between
 * tshmem_pipe_model_begin and the end of the step, with the pipe and model of the schedules. */
void   tshmem_pipe_forward_step(tshmem_pipe_t *pipe, struct tshmem_pipe_model *model, int mb);
void   tshmem_pipe_backward_step(tshmem_pipe_t *pipe, struct tshmem_pipe_model *model, int mb);

#endif /* TSHMEM_PIPE_H */
