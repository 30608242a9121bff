/* mlp.c: a small multi-layer perceptron and the spiral data set it learns.
 *
 * Provided: you do not need to edit this file; ddp.c calls it. The model is plain float32 C
 * with no library: layer l computes z = W a + b, then ReLU for every layer but the last, whose
 * outputs go through softmax into the cross-entropy loss. The backward pass walks the layers
 * from the last to the first and calls a hook as soon as a layer's gradients are final: that
 * is the moment a data-parallel trainer may start sending them.
 *
 * Every random number comes from a hash of (seed, index), so the parameters and every sample
 * are the same whichever PE computes them and in whichever order.
 */
#define TSHMEM_CHAPTER "2.4"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tshmem_internal.h"
#include "tshmem_train.h"

/* splitmix64: a good 64-bit hash of a counter. */
static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A uniform number in [0, 1) from (seed, stream, index). */
static double uniform(unsigned seed, uint64_t stream, uint64_t index)
{
    return (double)(mix(mix((uint64_t)seed << 32 ^ stream) ^ index) >> 11) * 0x1p-53;
}

size_t tshmem_mlp_count(int n_layers, const int *dims)
{
    size_t n = 0;
    for (int l = 0; l < n_layers; l++)
        n += (size_t)dims[l + 1] * ((size_t)dims[l] + 1);
    return n;
}

void tshmem_mlp_init(struct tshmem_mlp *m, int n_layers, const int *dims, unsigned seed,
                     float *grads)
{
    if (n_layers < 1 || n_layers > TSHMEM_MLP_MAX_LAYERS)
        tshmem_fail(__func__, "n_layers %d is not in 1 .. %d.", n_layers, TSHMEM_MLP_MAX_LAYERS);
    for (int l = 0; l <= n_layers; l++)
        if (dims[l] < 1)
            tshmem_fail(__func__, "dims[%d] = %d: every layer needs at least one unit.", l,
                        dims[l]);
    memset(m, 0, sizeof *m);
    m->n_layers = n_layers;
    for (int l = 0; l <= n_layers; l++)
        m->dims[l] = dims[l];
    for (int l = 0; l < n_layers; l++)
        m->off[l + 1] = m->off[l] + (size_t)dims[l + 1] * ((size_t)dims[l] + 1);
    m->n_params = m->off[n_layers];
    m->params = malloc(m->n_params * sizeof(float));
    if (!m->params)
        tshmem_fail(__func__, "no memory for %zu parameters.", m->n_params);
    m->grads = grads;
    /* He initialization: uniform in +-sqrt(6 / fan_in) for W, zero for b. */
    for (int l = 0; l < n_layers; l++) {
        size_t nw = (size_t)dims[l + 1] * (size_t)dims[l];
        float bound = (float)sqrt(6.0 / dims[l]);
        for (size_t i = 0; i < nw; i++)
            m->params[m->off[l] + i] = bound * (float)(2 * uniform(seed, 1, m->off[l] + i) - 1);
        memset(m->params + m->off[l] + nw, 0, (size_t)dims[l + 1] * sizeof(float));
    }
}

static void free_batch(struct tshmem_mlp *m)
{
    for (int l = 0; l <= m->n_layers; l++)
        free(m->act[l]);
    free(m->delta[0]);
    free(m->delta[1]);
    memset(m->act, 0, sizeof m->act);
    m->delta[0] = m->delta[1] = NULL;
    m->cap = 0;
}

void tshmem_mlp_free(struct tshmem_mlp *m)
{
    free_batch(m);
    free(m->params);
    m->params = NULL;
}

void tshmem_spiral_data(float *x, int *y, long first, int n, int n_inputs, int n_classes,
                        unsigned seed)
{
    const double pi = 3.14159265358979323846;
    for (int s = 0; s < n; s++) {
        uint64_t g = (uint64_t)(first + s);
        int cls = (int)(mix((uint64_t)seed ^ g * 0x2545f4914f6cdd1dull) % (uint64_t)n_classes);
        double t = uniform(seed, 2, g);                    /* how far along its arm */
        double angle = 2 * pi * cls / n_classes + 3.0 * t + 0.25 * (uniform(seed, 3, g) - 0.5);
        double px = t * cos(angle), py = t * sin(angle);
        float *row = x + (size_t)s * (size_t)n_inputs;
        for (int i = 0; i < n_inputs; i++) /* more inputs: features of the two coordinates */
            row[i] = (float)(i == 0 ? px : i == 1 ? py : sin((i / 2) * (i % 2 ? px : py) * 3));
        y[s] = cls;
    }
}

double tshmem_mlp_forward(struct tshmem_mlp *m, const float *x, const int *y, int n)
{
    int widest = 0;
    for (int l = 0; l <= m->n_layers; l++)
        widest = m->dims[l] > widest ? m->dims[l] : widest;
    if (n > m->cap) { /* work space for n samples, kept for later calls */
        free_batch(m);
        for (int l = 0; l <= m->n_layers; l++)
            m->act[l] = malloc((size_t)n * (size_t)m->dims[l] * sizeof(float));
        m->delta[0] = malloc((size_t)n * (size_t)widest * sizeof(float));
        m->delta[1] = malloc((size_t)n * (size_t)widest * sizeof(float));
        m->cap = n;
    }
    m->batch = n;
    m->labels = y;
    if (n > 0)
        memcpy(m->act[0], x, (size_t)n * (size_t)m->dims[0] * sizeof(float));
    for (int l = 0; l < m->n_layers; l++) {
        int in = m->dims[l], out = m->dims[l + 1];
        const float *W = m->params + m->off[l], *b = W + (size_t)out * (size_t)in;
        for (int s = 0; s < n; s++) {
            const float *a = m->act[l] + (size_t)s * (size_t)in;
            float *z = m->act[l + 1] + (size_t)s * (size_t)out;
            for (int o = 0; o < out; o++) {
                const float *w = W + (size_t)o * (size_t)in;
                float acc = b[o];
                for (int i = 0; i < in; i++)
                    acc += w[i] * a[i];
                z[o] = l + 1 < m->n_layers && acc < 0 ? 0 : acc; /* ReLU but on the logits */
            }
        }
    }
    /* Softmax cross-entropy: loss = log(sum exp z) - z[label], with the max taken out. */
    double loss = 0;
    int k = m->dims[m->n_layers];
    for (int s = 0; s < n; s++) {
        const float *z = m->act[m->n_layers] + (size_t)s * (size_t)k;
        float mx = z[0];
        for (int c = 1; c < k; c++)
            mx = z[c] > mx ? z[c] : mx;
        double sum = 0;
        int c = 0;
        do /* at least the max itself: sum >= 1 */
            sum += exp((double)(z[c] - mx));
        while (++c < k);
        loss += log(sum) + mx - z[y[s]];
    }
    return loss;
}

void tshmem_mlp_backward(struct tshmem_mlp *m, float scale, void (*on_layer)(void *arg, int layer),
                         void *arg)
{
    int L = m->n_layers, n = m->batch, k = m->dims[L];
    float *d = m->delta[0], *dprev = m->delta[1];
    /* d loss / d logits = softmax - one-hot, times scale. */
    for (int s = 0; s < n; s++) {
        const float *z = m->act[L] + (size_t)s * (size_t)k;
        float *ds = d + (size_t)s * (size_t)k;
        float mx = z[0];
        for (int c = 1; c < k; c++)
            mx = z[c] > mx ? z[c] : mx;
        double sum = 0;
        for (int c = 0; c < k; c++)
            sum += exp((double)(z[c] - mx));
        for (int c = 0; c < k; c++)
            ds[c] = scale * (float)(exp((double)(z[c] - mx)) / sum - (c == m->labels[s]));
    }
    for (int l = L - 1; l >= 0; l--) {
        int in = m->dims[l], out = m->dims[l + 1];
        const float *W = m->params + m->off[l];
        float *gW = m->grads + m->off[l], *gb = gW + (size_t)out * (size_t)in;
        memset(gW, 0, (size_t)out * ((size_t)in + 1) * sizeof(float));
        for (int s = 0; s < n; s++) { /* gW += d a^T, gb += d: summed in sample order */
            const float *a = m->act[l] + (size_t)s * (size_t)in;
            const float *ds = d + (size_t)s * (size_t)out;
            for (int o = 0; o < out; o++) {
                float *g = gW + (size_t)o * (size_t)in;
                for (int i = 0; i < in; i++)
                    g[i] += ds[o] * a[i];
                gb[o] += ds[o];
            }
        }
        if (on_layer)
            on_layer(arg, l); /* layer l's gradients are final */
        if (l == 0)
            break;
        for (int s = 0; s < n; s++) { /* d for the layer below: W^T d, through its ReLU */
            const float *ds = d + (size_t)s * (size_t)out;
            const float *a = m->act[l] + (size_t)s * (size_t)in;
            float *dp = dprev + (size_t)s * (size_t)in;
            for (int i = 0; i < in; i++)
                dp[i] = 0;
            for (int o = 0; o < out; o++) {
                const float *w = W + (size_t)o * (size_t)in;
                for (int i = 0; i < in; i++)
                    dp[i] += w[i] * ds[o];
            }
            for (int i = 0; i < in; i++)
                dp[i] = a[i] > 0 ? dp[i] : 0;
        }
        float *t = d;
        d = dprev;
        dprev = t;
    }
}

void tshmem_mlp_sgd(struct tshmem_mlp *m, float lr)
{
    for (size_t i = 0; i < m->n_params; i++)
        m->params[i] -= lr * m->grads[i];
}
