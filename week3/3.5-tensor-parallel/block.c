/* block.c: a transformer's MLP block, its pieces on one shard, and the single-process block.
 *
 * Provided: you do not need to edit this file; tp.c calls it. The block maps each row x of
 * `hidden` floats to y = x + W2 gelu(W1 x + b1) + b2, with an inner width of `ffn` units. A
 * shard holds inner units first .. first + cols - 1: those rows of W1 and b1, those columns of
 * W2, and the whole b2.
 *
 * Every sum runs in a fixed order, and the single-process block runs the same functions on
 * the whole block (first = 0, cols = ffn). So every number whose sum does not cross the split
 * is the same bits on a shard as in the single-process block: z and a (sums over hidden), the
 * weight gradients (sums over rows), the inner gradient dz (a sum over hidden). Only the two
 * sums over ffn, W2 a in the forward and W1^T dz in the backward, are split between the PEs:
 * those are the two allreduces, and their results differ from the single-process sums by
 * rounding alone (the bound is in the book, section "How close is close").
 */
#define TSHMEM_CHAPTER "3.5"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tshmem_internal.h"
#include "tshmem_tp.h"

static uint64_t mix(uint64_t z) /* splitmix64 */
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1) from (seed, what, index in the whole block). */
static float noise(unsigned seed, uint64_t what, uint64_t index)
{
    uint64_t h = mix(mix((uint64_t)seed ^ what << 40) ^ index);
    return (float)((double)(h >> 11) * 0x1p-52 - 1.0);
}

static float *floats(size_t n)
{
    float *p = calloc(n ? n : 1, sizeof(float));
    if (!p)
        tshmem_fail("tshmem_tp_mlp_init", "out of private memory for %zu floats.", n);
    return p;
}

/* GELU, the tanh form GPT-2 and Megatron-LM use, and its derivative. */
static const float GELU_C = 0.7978845608f; /* sqrt(2 / pi) */
static float gelu(float z)
{
    return 0.5f * z * (1.0f + tanhf(GELU_C * (z + 0.044715f * z * z * z)));
}

static float gelu_grad(float z)
{
    float t = tanhf(GELU_C * (z + 0.044715f * z * z * z));
    return 0.5f * (1.0f + t) + 0.5f * z * (1.0f - t * t) * GELU_C * (1.0f + 0.134145f * z * z);
}

size_t tshmem_tp_mlp_count(int hidden, int cols)
{
    return 2 * (size_t)cols * (size_t)hidden + (size_t)cols + (size_t)hidden;
}

void tshmem_tp_mlp_init(struct tshmem_tp_mlp *m, int hidden, int ffn, int first, int cols,
                        int max_rows, unsigned seed, float *grads)
{
    if (hidden < 1 || ffn < 1 || max_rows < 1 || cols < 1 || first < 0 || first + cols > ffn)
        tshmem_fail(__func__, "hidden %d, ffn %d, max_rows %d, shard %d .. %d: the sizes must "
                    "be at least 1 and the shard inside 0 .. ffn - 1.", hidden, ffn, max_rows,
                    first, first + cols - 1);
    memset(m, 0, sizeof *m);
    m->hidden = hidden, m->ffn = ffn, m->first = first, m->cols = cols;
    m->max_rows = max_rows, m->seed = seed;
    size_t h = (size_t)hidden, c = (size_t)cols, f = (size_t)ffn;
    m->W1 = floats(c * h), m->b1 = floats(c), m->W2 = floats(h * c), m->b2 = floats(h);
    float s1 = 1.0f / sqrtf((float)hidden), s2 = 1.0f / sqrtf((float)ffn);
    for (size_t j = 0; j < c; j++) {
        size_t J = (size_t)first + j; /* the unit's number in the whole block */
        for (size_t i = 0; i < h; i++)
            m->W1[j * h + i] = s1 * noise(seed, 1, J * h + i);
        m->b1[j] = 0.1f * noise(seed, 2, J);
        for (size_t o = 0; o < h; o++)
            m->W2[o * c + j] = s2 * noise(seed, 3, o * f + J);
    }
    for (size_t o = 0; o < h; o++)
        m->b2[o] = 0.1f * noise(seed, 4, o);
    m->n_grads = tshmem_tp_mlp_count(hidden, cols);
    m->grads = grads ? grads : floats(m->n_grads);
    m->gW1 = m->grads, m->gb1 = m->gW1 + c * h, m->gW2 = m->gb1 + c, m->gb2 = m->gW2 + h * c;
    if (grads)
        tshmem_tp_mlp_zero_grad(m);
    size_t rows = (size_t)max_rows;
    m->x = floats(rows * h), m->z = floats(rows * c), m->a = floats(rows * c);
    m->dz = floats(rows * c);
    m->grads_owned = grads == NULL;
}

void tshmem_tp_mlp_free(struct tshmem_tp_mlp *m)
{
    free(m->W1), free(m->b1), free(m->W2), free(m->b2);
    if (m->grads_owned)
        free(m->grads);
    free(m->x), free(m->z), free(m->a), free(m->dz);
    memset(m, 0, sizeof *m);
}

void tshmem_tp_mlp_zero_grad(struct tshmem_tp_mlp *m)
{
    memset(m->grads, 0, m->n_grads * sizeof(float));
}

void tshmem_tp_mlp_sgd(struct tshmem_tp_mlp *m, float lr)
{
    size_t c = (size_t)m->cols, h = (size_t)m->hidden;
    float *p[4] = {m->W1, m->b1, m->W2, m->b2}, *g[4] = {m->gW1, m->gb1, m->gW2, m->gb2};
    size_t n[4] = {c * h, c, h * c, h};
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < n[k]; i++)
            p[k][i] -= lr * g[k][i];
}

/* Y[r][o] = sum over i = 0, 1, ..., in - 1 of W[o][i] X[r][i]: for every element the same
 * sum in the same order, whatever rows there are. Four rows at a time only so that four
 * independent sums keep the core busy (one sum waits for each addition before the next). */
static void dots(const float *W, size_t out, size_t in, const float *X, size_t rows, float *Y)
{
    size_t r = 0;
    for (; r + 4 <= rows; r += 4) {
        const float *x0 = X + r * in, *x1 = x0 + in, *x2 = x1 + in, *x3 = x2 + in;
        for (size_t o = 0; o < out; o++) {
            const float *w = W + o * in;
            float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
            for (size_t i = 0; i < in; i++) {
                a0 += w[i] * x0[i];
                a1 += w[i] * x1[i];
                a2 += w[i] * x2[i];
                a3 += w[i] * x3[i];
            }
            Y[r * out + o] = a0, Y[(r + 1) * out + o] = a1;
            Y[(r + 2) * out + o] = a2, Y[(r + 3) * out + o] = a3;
        }
    }
    for (; r < rows; r++)
        for (size_t o = 0; o < out; o++) {
            const float *w = W + o * in, *x = X + r * in;
            float acc = 0;
            for (size_t i = 0; i < in; i++)
                acc += w[i] * x[i];
            Y[r * out + o] = acc;
        }
}

void tshmem_tp_mlp_column_forward(struct tshmem_tp_mlp *m, const float *x, int rows)
{
    if (rows < 0 || rows > m->max_rows)
        tshmem_fail(__func__, "rows = %d: this block takes 0 .. %d rows (max_rows).", rows,
                    m->max_rows);
    size_t h = (size_t)m->hidden, c = (size_t)m->cols;
    m->rows = rows;
    memcpy(m->x, x, (size_t)rows * h * sizeof(float));
    dots(m->W1, c, h, m->x, (size_t)rows, m->z); /* sums over hidden: never split */
    for (size_t r = 0; r < (size_t)rows; r++)
        for (size_t j = 0; j < c; j++) {
            float z = m->z[r * c + j] + m->b1[j];
            m->z[r * c + j] = z;
            m->a[r * c + j] = gelu(z);
        }
}

void tshmem_tp_mlp_row_forward(const struct tshmem_tp_mlp *m, float *y_part)
{
    /* Sums over this shard's units: the split ones. */
    dots(m->W2, (size_t)m->hidden, (size_t)m->cols, m->a, (size_t)m->rows, y_part);
}

void tshmem_tp_mlp_finish_forward(const struct tshmem_tp_mlp *m, float *y)
{
    size_t h = (size_t)m->hidden;
    for (size_t r = 0; r < (size_t)m->rows; r++)
        for (size_t o = 0; o < h; o++)
            y[r * h + o] = y[r * h + o] + m->b2[o] + m->x[r * h + o];
}

void tshmem_tp_mlp_row_backward(struct tshmem_tp_mlp *m, const float *dy)
{
    size_t h = (size_t)m->hidden, c = (size_t)m->cols;
    for (size_t r = 0; r < (size_t)m->rows; r++) { /* gradients: sums over rows, in order */
        const float *dyr = dy + r * h, *ar = m->a + r * c;
        for (size_t o = 0; o < h; o++) {
            float *g = m->gW2 + o * c;
            for (size_t j = 0; j < c; j++)
                g[j] += dyr[o] * ar[j];
            m->gb2[o] += dyr[o];
        }
    }
    for (size_t r = 0; r < (size_t)m->rows; r++) { /* dz = (W2^T dy) gelu'(z): over hidden */
        const float *dyr = dy + r * h;
        float *dzr = m->dz + r * c;
        for (size_t j = 0; j < c; j++)
            dzr[j] = 0;
        for (size_t o = 0; o < h; o++) {
            const float *w = m->W2 + o * c;
            for (size_t j = 0; j < c; j++)
                dzr[j] += w[j] * dyr[o];
        }
        for (size_t j = 0; j < c; j++)
            dzr[j] *= gelu_grad(m->z[r * c + j]);
    }
}

void tshmem_tp_mlp_column_backward(struct tshmem_tp_mlp *m, float *dx_part)
{
    size_t h = (size_t)m->hidden, c = (size_t)m->cols;
    for (size_t r = 0; r < (size_t)m->rows; r++) {
        const float *dzr = m->dz + r * c, *xr = m->x + r * h;
        float *dxr = dx_part + r * h;
        for (size_t j = 0; j < c; j++) {
            float *g = m->gW1 + j * h;
            for (size_t i = 0; i < h; i++)
                g[i] += dzr[j] * xr[i];
            m->gb1[j] += dzr[j];
        }
        for (size_t i = 0; i < h; i++)
            dxr[i] = 0;
        for (size_t j = 0; j < c; j++) { /* W1^T dz: a sum over this shard's units, split */
            const float *w = m->W1 + j * h;
            for (size_t i = 0; i < h; i++)
                dxr[i] += w[i] * dzr[j];
        }
    }
}

void tshmem_tp_mlp_finish_backward(const struct tshmem_tp_mlp *m, const float *dy, float *dx)
{
    size_t n = (size_t)m->rows * (size_t)m->hidden;
    for (size_t i = 0; i < n; i++)
        dx[i] = dx[i] + dy[i];
}

void tshmem_tp_reference_forward(struct tshmem_tp_mlp *whole, const float *x, int rows, float *y)
{
    if (whole->first != 0 || whole->cols != whole->ffn)
        tshmem_fail(__func__, "the model holds units %d .. %d of %d: the single-process block "
                    "needs all of them (first 0, cols = ffn).", whole->first,
                    whole->first + whole->cols - 1, whole->ffn);
    tshmem_tp_mlp_column_forward(whole, x, rows);
    tshmem_tp_mlp_row_forward(whole, y);
    tshmem_tp_mlp_finish_forward(whole, y);
}

void tshmem_tp_reference_backward(struct tshmem_tp_mlp *whole, const float *dy, float *dx)
{
    tshmem_tp_mlp_row_backward(whole, dy);
    tshmem_tp_mlp_column_backward(whole, dx);
    tshmem_tp_mlp_finish_backward(whole, dy, dx);
}
