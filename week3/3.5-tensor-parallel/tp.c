/* tp.c: an MLP block split over a team, Megatron-style: column-parallel, then row-parallel.
 *
 * Chapter 3.5. The block y = x + W2 gelu(W1 x + b1) + b2 is cut along its inner width ffn:
 * team PE k holds inner units first_k .. first_k + cols_k - 1, that is those rows of W1 and
 * b1 and those columns of W2. Every team PE takes the same input x.
 *
 *   forward:  f (identity: x is already on every PE), z = W1_k x + b1_k and a = gelu(z) on my
 *             units alone (column-parallel: no communication), y_k = W2_k a (row-parallel: my
 *             share of the sum over the units), g = allreduce over the team: y = sum_k y_k,
 *             then b2 and the residual x, once.
 *   backward: g's backward (identity: dy is already on every PE), the weight gradients of my
 *             units and dz on my units alone, dx_k = W1_k^T dz (my share of the sum over the
 *             units), f's backward = allreduce: dx = sum_k dx_k, then the residual's dy, once.
 *
 * One allreduce of rows x hidden floats each way, and nothing else crosses between the PEs.
 * Adding b2 or the residual before the allreduce would add it t times.
 *
 * The split of ffn over t PEs: ffn / t units each, and the first ffn % t PEs one more (the
 * sizes differ by one at most; Megatron-LM refuses sizes that do not divide, this block takes
 * them). Every PE needs at least one unit.
 */
#define TSHMEM_CHAPTER "3.5"
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tshmem_internal.h"
#include "tshmem_tp.h"

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Provided: the check every call on a block starts with. */
static void tp_check(const char *func, const tshmem_tp_t *tp)
{
    tshmem_require_live(func);
    if (tp == NULL)
        tshmem_fail(func, "PE %d passed tp = NULL: pass the block that tshmem_tp_create "
                    "returned.", tshmem_g.my_pe);
    if (tp->magic != TSHMEM_TP_MAGIC)
        tshmem_fail(func, "PE %d passed %p, which is not a live block: it did not come from "
                    "tshmem_tp_create, or tshmem_tp_destroy has freed it.", tshmem_g.my_pe,
                    (const void *)tp);
}

/* Provided: after tp_check, for the calls that compute: this PE must hold a shard. */
static void member_check(const char *func, const tshmem_tp_t *tp)
{
    if (tp->rank < 0)
        tshmem_fail(func, "PE %d is not a member of the block's team (team %d): it holds the "
                    "block only to destroy it. Call %s on the team's PEs.", tshmem_g.my_pe,
                    tp->team, func);
}

/* Provided: an allreduce of count floats of the symmetric buffer buf over the block's team, in
 * place, counted and timed (the tests check that each pass runs exactly one). */
static inline void tp_allreduce(tshmem_tp_t *tp, float *buf, size_t count)
{
    double t0 = now();
    tshmem_float_sum_reduce(tp->team, buf, buf, count);
    tp->allreduce_s += now() - t0;
    tp->allreduce_calls++;
    tp->allreduce_bytes += count * sizeof(float);
}

/* The units of team PE k of t out of n: returns their count, *first the first one. */
static inline int split(int n, int t, int k, int *first)
{
    (void)n; (void)t; (void)k; (void)first;
    TSHMEM_TODO("Splitting the units", "n / t units each; the first n % t PEs one more");
}

/* Provided: every PE must pass the same config; MPI agrees on it (create is collective over
 * the whole job), and on the largest shard, which sizes the symmetric gradient block. */
static inline int agree(const char *func, const tshmem_tp_config_t *c, int cols)
{
    long long mine[5] = {c->hidden, c->ffn, c->max_rows, (long long)c->seed, cols};
    long long hi[5], lo[5];
    MPI_Allreduce(mine, hi, 5, MPI_LONG_LONG, MPI_MAX, tshmem_g.comm);
    MPI_Allreduce(mine, lo, 5, MPI_LONG_LONG, MPI_MIN, tshmem_g.comm);
    for (int i = 0; i < 4; i++)
        if (hi[i] != lo[i])
            tshmem_fail(func, "PE %d passed hidden %d, ffn %d, max_rows %d, seed %u, but other "
                        "PEs passed other values (%s from %lld to %lld): every PE of the job "
                        "must pass the same config.", tshmem_g.my_pe, c->hidden, c->ffn,
                        c->max_rows, c->seed,
                        (const char *[]){"hidden", "ffn", "max_rows", "seed"}[i], lo[i], hi[i]);
    return (int)hi[4];
}

tshmem_tp_t *tshmem_tp_create(tshmem_team_t team, const tshmem_tp_config_t *config)
{
    const char *func = __func__;
    tshmem_require_live(func);
    (void)team; (void)config;
    TSHMEM_TODO("Creating the block", "check the team (TSHMEM_TEAM_INVALID: not a member) and the config, a sentence for each bad value; agree(); the symmetric y_part, dx_part and grads; my shard's model");
}

void tshmem_tp_destroy(tshmem_tp_t *tp)
{
    tp_check(__func__, tp);
    /* tshmem_free waits for every PE first: nobody is still reducing into these buffers. */
    tshmem_free(tp->check);
    tshmem_free(tp->grads);
    tshmem_free(tp->dx_part);
    tshmem_free(tp->y_part);
    if (tp->rank >= 0)
        tshmem_tp_mlp_free(&tp->mlp);
    tp->magic = 0;
    free(tp);
}

int tshmem_tp_rank(const tshmem_tp_t *tp)
{
    tp_check(__func__, tp);
    return tp->rank;
}

int tshmem_tp_shard(const tshmem_tp_t *tp, int team_pe, int *first)
{
    tp_check(__func__, tp);
    member_check(__func__, tp);
    (void)team_pe; (void)first;
    TSHMEM_TODO("Splitting the units", "a sentence for a team PE outside 0 .. size - 1, then split()");
}

/* Provided: the arguments of a pass. */
static void pass_check(const char *func, const tshmem_tp_t *tp, const void *in, const void *out)
{
    tp_check(func, tp);
    member_check(func, tp);
    if (in == NULL || out == NULL)
        tshmem_fail(func, "PE %d (team PE %d) passed a NULL %s: pass rows x hidden floats.",
                    tshmem_g.my_pe, tp->rank, in == NULL ? "input" : "output");
}

void tshmem_tp_forward(tshmem_tp_t *tp, const float *x, int rows, float *y)
{
    pass_check(__func__, tp, x, y);
    if (rows < 0 || rows > tp->mlp.max_rows)
        tshmem_fail(__func__, "PE %d passed rows = %d: this block takes 0 .. %d rows (its "
                    "max_rows).", tshmem_g.my_pe, rows, tp->mlp.max_rows);
    TSHMEM_TODO("Forward: f, then g", "column-parallel on my units, row-parallel into the symmetric y_part, g = one tp_allreduce, copy into y, then b2 and the residual once");
    tp->fwd_calls++;
    tp->pending = 1;
}

void tshmem_tp_backward(tshmem_tp_t *tp, const float *dy, float *dx)
{
    pass_check(__func__, tp, dy, dx);
    if (!tp->pending)
        tshmem_fail(__func__, "PE %d: a backward with no forward before it (%llu forwards, "
                    "%llu backwards so far): each backward needs the activations of the "
                    "forward just before it.", tshmem_g.my_pe, (unsigned long long)tp->fwd_calls,
                    (unsigned long long)tp->bwd_calls);
    TSHMEM_TODO("Backward: g, then f", "my weight gradients and dz, my share of dx into the symmetric dx_part, f's backward = one tp_allreduce, copy into dx, then the residual's dy once");
    tp->bwd_calls++;
    tp->pending = 0;
}
