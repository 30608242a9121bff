/* zero_model.c: what the ZeRO stages share: 2.4's model one layer at a time, the optimizer,
 * the counted allocations and the counted collectives.
 *
 * Provided: you do not need to edit this file; zero.c calls it. The forward and backward pass
 * are tshmem_mlp_forward and tshmem_mlp_backward (chapter 2.4) cut into layers, with the same
 * loops in the same order, so that a layer computed from gathered parameters gives the same
 * bits as 2.4's whole-model pass. Every collective of a step goes through the wrappers at the
 * end, which count the bytes this PE sends (as each algorithm sends them) and, for the
 * benchmark's MPI version, call MPI instead.
 */
#define TSHMEM_CHAPTER "3.4"
#include <math.h>
#include <stdlib.h>
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

struct tshmem_zero_config tshmem_zero_default(int stage)
{
    return (struct tshmem_zero_config){.stage = stage, .optim = TSHMEM_OPTIM_ADAM, .lr = 1e-2f,
                                       .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                                       .algo = TSHMEM_ALGO_AUTO, .prefetch = 1};
}

/* ---- Counted allocations ---------------------------------------------------------------- */
float *tshmem_zero_alloc(struct tshmem_zero *z, size_t count, int symmetric)
{
    size_t bytes = count * sizeof(float);
    float *p = symmetric ? tshmem_calloc(count ? count : 1, sizeof(float))
                         : calloc(count ? count : 1, sizeof(float));
    if (!p)
        tshmem_fail("tshmem_zero_init", "PE %d: no room for %zu floats of model state%s.",
                    tshmem_g.my_pe, count,
                    symmetric ? " in the symmetric heap: set TSHMEM_SYMMETRIC_SIZE larger" : "");
    z->state_bytes += bytes;
    z->state_peak = z->state_bytes > z->state_peak ? z->state_bytes : z->state_peak;
    return p;
}

void tshmem_zero_release(struct tshmem_zero *z, float **p, size_t count, int symmetric)
{
    if (*p == NULL)
        return;
    if (symmetric)
        tshmem_free(*p);
    else
        free(*p);
    *p = NULL;
    z->state_bytes -= count * sizeof(float);
}

/* ---- The model, one layer at a time ------------------------------------------------------- */
static void free_work(struct tshmem_zero *z)
{
    for (int l = 0; l <= z->n_layers; l++)
        free(z->act[l]);
    free(z->delta[0]);
    free(z->delta[1]);
    memset(z->act, 0, sizeof z->act);
    z->delta[0] = z->delta[1] = NULL;
    z->cap = 0;
}

void tshmem_zero_begin(struct tshmem_zero *z, const float *x, const int *y, int n)
{
    if (n > z->cap) { /* work space for n samples, kept for later steps */
        int widest = 0;
        for (int l = 0; l <= z->n_layers; l++)
            widest = z->dims[l] > widest ? z->dims[l] : widest;
        free_work(z);
        for (int l = 0; l <= z->n_layers; l++)
            z->act[l] = malloc((size_t)n * (size_t)z->dims[l] * sizeof(float));
        z->delta[0] = malloc((size_t)n * (size_t)widest * sizeof(float));
        z->delta[1] = malloc((size_t)n * (size_t)widest * sizeof(float));
        z->cap = n;
    }
    z->batch = n;
    z->labels = y;
    if (n > 0)
        memcpy(z->act[0], x, (size_t)n * (size_t)z->dims[0] * sizeof(float));
}

/* A gather under way while a layer computes is what prefetch is for: counted here. */
static void note_overlap(struct tshmem_zero *z)
{
    z->prefetched += z->pending[0] >= 0 || z->pending[1] >= 0;
}

void tshmem_zero_forward(struct tshmem_zero *z, int l, const float *Wb)
{
    note_overlap(z);
    int in = z->dims[l], out = z->dims[l + 1];
    const float *W = Wb, *b = Wb + (size_t)out * (size_t)in;
    for (int s = 0; s < z->batch; s++) {
        const float *a = z->act[l] + (size_t)s * (size_t)in;
        float *zo = z->act[l + 1] + (size_t)s * (size_t)out;
        for (int o = 0; o < out; o++) {
            const float *w = W + (size_t)o * (size_t)in;
            float acc = b[o];
            for (int i = 0; i < in; i++)
                acc += w[i] * a[i];
            zo[o] = l + 1 < z->n_layers && acc < 0 ? 0 : acc; /* ReLU but on the logits */
        }
    }
}

/* The loss, and the backward pass's start: delta[0] = scale * (softmax - one-hot). */
static double loss_and_top(struct tshmem_zero *z, float scale)
{
    int L = z->n_layers, k = z->dims[L];
    double loss = 0;
    for (int s = 0; s < z->batch; s++) {
        const float *zl = z->act[L] + (size_t)s * (size_t)k;
        float *ds = z->delta[0] + (size_t)s * (size_t)k;
        float mx = zl[0];
        for (int c = 1; c < k; c++)
            mx = zl[c] > mx ? zl[c] : mx;
        double sum = 0;
        for (int c = 0; c < k; c++)
            sum += exp((double)(zl[c] - mx));
        loss += log(sum) + mx - zl[z->labels[s]];
        for (int c = 0; c < k; c++)
            ds[c] = scale * (float)(exp((double)(zl[c] - mx)) / sum - (c == z->labels[s]));
    }
    return loss;
}

double tshmem_zero_loss(struct tshmem_zero *z, float scale)
{
    return loss_and_top(z, scale);
}

void tshmem_zero_backward(struct tshmem_zero *z, int l, const float *Wb, float *g)
{
    note_overlap(z);
    int in = z->dims[l], out = z->dims[l + 1], n = z->batch;
    float *d = z->delta[(z->n_layers - 1 - l) % 2], *dprev = z->delta[(z->n_layers - l) % 2];
    float *gb = g + (size_t)out * (size_t)in;
    memset(g, 0, (size_t)out * ((size_t)in + 1) * sizeof(float));
    for (int s = 0; s < n; s++) { /* gW += d a^T, gb += d: summed in sample order */
        const float *a = z->act[l] + (size_t)s * (size_t)in, *ds = d + (size_t)s * (size_t)out;
        for (int o = 0; o < out; o++) {
            float *gw = g + (size_t)o * (size_t)in;
            for (int i = 0; i < in; i++)
                gw[i] += ds[o] * a[i];
            gb[o] += ds[o];
        }
    }
    if (l == 0)
        return;
    for (int s = 0; s < n; s++) { /* d for the layer below: W^T d, through its ReLU */
        const float *ds = d + (size_t)s * (size_t)out, *a = z->act[l] + (size_t)s * (size_t)in;
        float *dp = dprev + (size_t)s * (size_t)in;
        for (int i = 0; i < in; i++)
            dp[i] = 0;
        for (int o = 0; o < out; o++) {
            const float *w = Wb + (size_t)o * (size_t)in;
            for (int i = 0; i < in; i++)
                dp[i] += w[i] * ds[o];
        }
        for (int i = 0; i < in; i++)
            dp[i] = a[i] > 0 ? dp[i] : 0;
    }
}

void tshmem_zero_optimize(struct tshmem_zero *z, float *p, const float *g, float *m, float *v,
                          size_t count)
{
    const struct tshmem_zero_config *c = &z->cfg;
    if (c->optim == TSHMEM_OPTIM_SGD) { /* 2.4's tshmem_mlp_sgd, bit for bit */
        for (size_t i = 0; i < count; i++)
            p[i] -= c->lr * g[i];
        return;
    }
    /* Adam, element by element: the same bits for an element whoever owns it. z->t was
     * advanced by the step before this call. */
    float c1 = 1.0f - powf(c->beta1, (float)z->t), c2 = 1.0f - powf(c->beta2, (float)z->t);
    for (size_t i = 0; i < count; i++) {
        m[i] = c->beta1 * m[i] + (1.0f - c->beta1) * g[i];
        v[i] = c->beta2 * v[i] + (1.0f - c->beta2) * g[i] * g[i];
        p[i] -= c->lr * (m[i] / c1) / (sqrtf(v[i] / c2) + c->eps);
    }
}

/* ---- The collectives of a step, counted ---------------------------------------------------- */
/* The MPI version (cfg.use_mpi): a duplicate of MPI_COMM_WORLD and stage 3's two requests. */
struct zero_mpi {
    MPI_Comm comm;
    MPI_Request req[2];
};

static struct zero_mpi *mpi_of(struct tshmem_zero *z)
{
    if (!z->mpi) {
        if (z->team != TSHMEM_TEAM_WORLD)
            tshmem_fail("tshmem_zero_init", "PE %d: the MPI version (use_mpi) runs on "
                        "TSHMEM_TEAM_WORLD only, not on team %d.", tshmem_g.my_pe, z->team);
        struct zero_mpi *m = calloc(1, sizeof *m);
        MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
        m->req[0] = m->req[1] = MPI_REQUEST_NULL;
        z->mpi = m;
    }
    return z->mpi;
}

void tshmem_zero_mpi_free(struct tshmem_zero *z)
{
    struct zero_mpi *m = z->mpi;
    if (m) {
        MPI_Comm_free(&m->comm);
        free(m);
        z->mpi = NULL;
    }
}

void tshmem_zero_reduce_scatter(struct tshmem_zero *z, float *dest, const float *src,
                                size_t count)
{
    double t0 = now();
    if (z->cfg.use_mpi)
        MPI_Reduce_scatter_block(src, dest, (int)count, MPI_FLOAT, MPI_SUM, mpi_of(z)->comm);
    else
        tshmem_reducescatter(z->team, dest, src, count, TSHMEM_DTYPE_FLOAT, z->cfg.algo);
    z->comm_bytes += (size_t)(z->n - 1) * count * sizeof(float); /* n-1 blocks come to me */
    z->t_comm += now() - t0;
}

void tshmem_zero_allgather(struct tshmem_zero *z, float *dest, const float *src, size_t count)
{
    double t0 = now();
    if (z->cfg.use_mpi)
        MPI_Allgather(src, (int)count, MPI_FLOAT, dest, (int)count, MPI_FLOAT, mpi_of(z)->comm);
    else
        tshmem_fcollectmem(z->team, dest, src, count * sizeof(float));
    z->comm_bytes += (size_t)(z->n - 1) * count * sizeof(float); /* my block to n-1 PEs */
    z->t_comm += now() - t0;
}

void tshmem_zero_allreduce(struct tshmem_zero *z, float *buf, size_t count)
{
    double t0 = now();
    if (z->cfg.use_mpi)
        MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, mpi_of(z)->comm);
    else /* two-shot adds in team order, as 2.4's non-blocking allreduce does */
        tshmem_allreduce(z->team, buf, buf, count, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM,
                         z->n > 1 ? TSHMEM_ALGO_TWO_SHOT : TSHMEM_ALGO_AUTO);
    /* reduce-scatter then allgather: (n-1)/n of the vector twice */
    z->comm_bytes += 2 * (size_t)(z->n - 1) * count * sizeof(float) / (size_t)z->n;
    z->t_comm += now() - t0;
}

void tshmem_zero_gather_start(struct tshmem_zero *z, int l, int b)
{
    size_t c = z->chunk[l];
    float *buf = z->layer[b], *mine = z->pshard + z->soff[l];
    z->pending[b] = l;
    if (z->cfg.use_mpi) {
        struct zero_mpi *m = mpi_of(z);
        MPI_Iallgather(mine, (int)c, MPI_FLOAT, buf, (int)c, MPI_FLOAT, m->comm, &m->req[b]);
    } else { /* a true allgather on 2.4's progress thread (fcollect_nb.c) */
        tshmem_fcollectmem_nb(z->team, buf, mine, c * sizeof(float), &z->req[b]);
    }
    z->comm_bytes += (size_t)(z->n - 1) * c * sizeof(float); /* my block to n - 1 PEs */
}

const float *tshmem_zero_gather_wait(struct tshmem_zero *z, int b)
{
    if (z->pending[b] < 0)
        tshmem_fail("tshmem_zero_step", "PE %d waits for a gather into buffer %d, but none was "
                    "started there: start layer l's gather (tshmem_zero_gather_start) before "
                    "you wait for it.", tshmem_g.my_pe, b);
    double t0 = now();
    if (z->cfg.use_mpi)
        MPI_Wait(&mpi_of(z)->req[b], MPI_STATUS_IGNORE);
    else
        tshmem_wait(&z->req[b]);
    z->t_comm += now() - t0;
    z->pending[b] = -1;
    return z->layer[b];
}
