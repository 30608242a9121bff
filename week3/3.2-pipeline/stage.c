/* stage.c: one stage of a small model, and the single-process run of all of them.
 *
 * Provided: you do not need to edit this file; schedule.c calls it. Stage s is one layer,
 * y = tanh(W x + b), applied to each of the `rows` samples of a micro-batch. The last stage
 * adds 1/2 |y - target|^2 over the micro-batch, divided by the samples of the whole step
 * (n_micro x rows), to the loss: the gradients are those of the step's mean loss.
 *
 * A forward stashes its input and output until the micro-batch's backward, which needs both:
 * the stash is the memory a schedule costs, and stash_peak is how much it took. Backwards must
 * come in micro-batch order (the oldest stash entry first): then every stage adds its
 * micro-batches' gradients in the same order as the single-process run, and the pipelines
 * reproduce it bit for bit. Every number comes from a hash of (seed, what, index): any PE can
 * compute any stage's weights and any micro-batch's input and target.
 */
#define TSHMEM_CHAPTER "3.2"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tshmem_internal.h"
#include "tshmem_pipe.h"

static uint64_t mix(uint64_t z) /* splitmix64 */
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1) from (seed, a, b, index). */
static float noise(unsigned seed, uint64_t a, uint64_t b, uint64_t index)
{
    uint64_t h = mix(mix(mix((uint64_t)seed ^ a << 40) ^ b) ^ index);
    return (float)((double)(h >> 11) * 0x1p-52 - 1.0);
}

static void *zalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size);
    if (!p)
        tshmem_fail("tshmem_pipe_model_init", "out of private memory for %zu floats.", count);
    return p;
}

void tshmem_pipe_model_init(struct tshmem_pipe_model *m, int stage, int n_stages, int rows,
                            int width, unsigned seed)
{
    if (n_stages < 1 || stage < 0 || stage >= n_stages)
        tshmem_fail(__func__, "stage %d of %d: a stage is 0 .. n_stages - 1.", stage, n_stages);
    if (rows < 1 || width < 1)
        tshmem_fail(__func__, "rows %d, width %d: a micro-batch needs at least one sample of "
                    "one float.", rows, width);
    memset(m, 0, sizeof *m);
    m->stage = stage;
    m->n_stages = n_stages;
    m->rows = rows;
    m->width = width;
    m->act_elems = (size_t)rows * (size_t)width;
    m->seed = seed;
    size_t w = (size_t)width;
    m->W = zalloc(w * w, sizeof(float));
    m->b = zalloc(w, sizeof(float));
    m->gW = zalloc(w * w, sizeof(float));
    m->gb = zalloc(w, sizeof(float));
    /* Large enough that tanh is not linear, small enough that it does not saturate. */
    float scale = 1.5f / sqrtf((float)width);
    for (size_t i = 0; i < w * w; i++)
        m->W[i] = scale * noise(seed, 1, (uint64_t)stage, i);
    for (size_t i = 0; i < w; i++)
        m->b[i] = 0.1f * noise(seed, 2, (uint64_t)stage, i);
    m->x = zalloc(m->act_elems, sizeof(float));
    m->y = zalloc(m->act_elems, sizeof(float));
    m->dy = zalloc(m->act_elems, sizeof(float));
    m->dx = zalloc(m->act_elems, sizeof(float));
    m->dz = zalloc(m->act_elems, sizeof(float));
}

void tshmem_pipe_model_free(struct tshmem_pipe_model *m)
{
    free(m->W), free(m->b), free(m->gW), free(m->gb);
    free(m->x), free(m->y), free(m->dy), free(m->dx), free(m->dz);
    free(m->stash), free(m->stash_mb);
    memset(m, 0, sizeof *m);
}

void tshmem_pipe_model_begin(struct tshmem_pipe_model *m, long step, int n_micro)
{
    if (m->stash_count != 0)
        tshmem_fail(__func__, "stage %d starts step %ld with %d micro-batches still stashed: "
                    "the previous step ran a forward without its backward.", m->stage, step,
                    m->stash_count);
    m->step = step;
    m->n_micro = n_micro;
    m->loss = 0;
    m->stash_peak = 0;
}

void tshmem_pipe_model_input(const struct tshmem_pipe_model *m, int mb, float *x)
{
    for (size_t i = 0; i < m->act_elems; i++)
        x[i] = noise(m->seed, 3, (uint64_t)m->step << 20 | (uint64_t)mb, i);
}

static float target(const struct tshmem_pipe_model *m, int mb, size_t i)
{
    return 0.5f * noise(m->seed, 4, (uint64_t)m->step << 20 | (uint64_t)mb, i);
}

/* Simulated compute: a sleep of fixed length, so that the schedule, not the machine's load,
 * decides the timeline (a spin would measure how the PEs share the cores). */
static void work(long us)
{
    if (us <= 0)
        return;
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&t, &t) != 0)
        ;
}

static float *stash_push(struct tshmem_pipe_model *m, int mb)
{
    if (m->stash_count == m->stash_cap) { /* grow, keeping the entries oldest first */
        int cap = m->stash_cap ? 2 * m->stash_cap : 4;
        float *s = zalloc((size_t)cap * 2 * m->act_elems, sizeof(float));
        int *ids = zalloc((size_t)cap, sizeof(int));
        for (int k = 0; k < m->stash_count; k++) {
            int at = (m->stash_first + k) % m->stash_cap;
            memcpy(s + (size_t)k * 2 * m->act_elems, m->stash + (size_t)at * 2 * m->act_elems,
                   2 * m->act_elems * sizeof(float));
            ids[k] = m->stash_mb[at];
        }
        free(m->stash), free(m->stash_mb);
        m->stash = s, m->stash_mb = ids, m->stash_cap = cap, m->stash_first = 0;
    }
    int at = (m->stash_first + m->stash_count) % m->stash_cap;
    m->stash_mb[at] = mb;
    if (++m->stash_count > m->stash_peak)
        m->stash_peak = m->stash_count;
    return m->stash + (size_t)at * 2 * m->act_elems;
}

void tshmem_pipe_model_forward(struct tshmem_pipe_model *m, int mb, const float *x, float *y)
{
    int w = m->width;
    float *entry = stash_push(m, mb);
    memcpy(entry, x, m->act_elems * sizeof(float));
    for (int r = 0; r < m->rows; r++) {
        const float *xr = x + (size_t)r * (size_t)w;
        float *yr = y + (size_t)r * (size_t)w;
        for (int o = 0; o < w; o++) {
            const float *wo = m->W + (size_t)o * (size_t)w;
            float acc = m->b[o];
            for (int i = 0; i < w; i++)
                acc += wo[i] * xr[i];
            yr[o] = tanhf(acc);
        }
    }
    memcpy(entry + m->act_elems, y, m->act_elems * sizeof(float));
    if (m->stage == m->n_stages - 1) {
        double scale = 1.0 / ((double)m->n_micro * m->rows), sum = 0;
        for (size_t i = 0; i < m->act_elems; i++) {
            double e = (double)y[i] - (double)target(m, mb, i);
            sum += e * e;
        }
        m->loss += 0.5 * sum * scale;
    }
    work(m->fwd_us);
}

void tshmem_pipe_model_backward(struct tshmem_pipe_model *m, int mb, const float *dy, float *dx)
{
    if (m->stash_count == 0)
        tshmem_fail(__func__, "stage %d: backward of micro-batch %d, but no forward is stashed. "
                    "Run each micro-batch's forward before its backward.", m->stage, mb);
    if (m->stash_mb[m->stash_first] != mb)
        tshmem_fail(__func__, "stage %d: backward of micro-batch %d, but the oldest stashed "
                    "forward is micro-batch %d. Run the backwards in micro-batch order (0, 1, "
                    "2, ...), the order the single-process run adds the gradients in.",
                    m->stage, mb, m->stash_mb[m->stash_first]);
    if (dy == NULL && m->stage != m->n_stages - 1)
        tshmem_fail(__func__, "stage %d of %d: dy is NULL, but only the last stage takes its "
                    "gradient from the loss: pass the gradient received from stage %d.",
                    m->stage, m->n_stages, m->stage + 1);
    int w = m->width;
    const float *entry = m->stash + (size_t)m->stash_first * 2 * m->act_elems;
    const float *x = entry, *y = entry + m->act_elems;
    float scale = (float)(1.0 / ((double)m->n_micro * m->rows));
    float *dz = m->dz;
    for (size_t i = 0; i < m->act_elems; i++) {
        float g = dy ? dy[i] : (y[i] - target(m, mb, i)) * scale; /* d loss / d y */
        dz[i] = g * (1.0f - y[i] * y[i]);                          /* through tanh */
    }
    for (int r = 0; r < m->rows; r++) { /* gW += dz x^T, gb += dz: rows in order */
        const float *xr = x + (size_t)r * (size_t)w, *dzr = dz + (size_t)r * (size_t)w;
        for (int o = 0; o < w; o++) {
            float *g = m->gW + (size_t)o * (size_t)w;
            for (int i = 0; i < w; i++)
                g[i] += dzr[o] * xr[i];
            m->gb[o] += dzr[o];
        }
    }
    if (dx)
        for (int r = 0; r < m->rows; r++) { /* dx = W^T dz */
            const float *dzr = dz + (size_t)r * (size_t)w;
            float *dxr = dx + (size_t)r * (size_t)w;
            for (int i = 0; i < w; i++)
                dxr[i] = 0;
            for (int o = 0; o < w; o++) {
                const float *wo = m->W + (size_t)o * (size_t)w;
                for (int i = 0; i < w; i++)
                    dxr[i] += wo[i] * dzr[o];
            }
        }
    m->stash_first = (m->stash_first + 1) % m->stash_cap;
    m->stash_count--;
    work(m->bwd_us);
}

void tshmem_pipe_model_zero_grad(struct tshmem_pipe_model *m)
{
    size_t w = (size_t)m->width;
    memset(m->gW, 0, w * w * sizeof(float));
    memset(m->gb, 0, w * sizeof(float));
}

void tshmem_pipe_model_sgd(struct tshmem_pipe_model *m, float lr)
{
    size_t w = (size_t)m->width;
    for (size_t i = 0; i < w * w; i++)
        m->W[i] -= lr * m->gW[i];
    for (size_t i = 0; i < w; i++)
        m->b[i] -= lr * m->gb[i];
}

double tshmem_pipe_reference_step(struct tshmem_pipe_model *stages, int n_stages, long step,
                                  int n_micro)
{
    for (int s = 0; s < n_stages; s++)
        tshmem_pipe_model_begin(&stages[s], step, n_micro);
    for (int mb = 0; mb < n_micro; mb++) {
        tshmem_pipe_model_input(&stages[0], mb, stages[0].x);
        for (int s = 0; s < n_stages; s++) {
            tshmem_pipe_model_forward(&stages[s], mb, stages[s].x, stages[s].y);
            if (s + 1 < n_stages)
                memcpy(stages[s + 1].x, stages[s].y, stages[s].act_elems * sizeof(float));
        }
        for (int s = n_stages - 1; s >= 0; s--) {
            int last = s == n_stages - 1;
            if (!last)
                memcpy(stages[s].dy, stages[s + 1].dx, stages[s].act_elems * sizeof(float));
            tshmem_pipe_model_backward(&stages[s], mb, last ? NULL : stages[s].dy,
                                       s > 0 ? stages[s].dx : NULL);
        }
    }
    return stages[n_stages - 1].loss;
}
