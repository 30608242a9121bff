/* lora_serve.c: the serving loop: batches of requests, each for one LoRA adapter, served on a
 * base model whose adapters come through the cache of lora_cache.c.
 *
 * Chapter 3.8. A request is one row x of `hidden` floats run through `layers` layers, each
 * x <- x W_l + (x A_l) B_l: the base weights W_l are the same for every request (every PE
 * holds them), the adapter (A_l, B_l for every layer) is the request's. A batch groups its
 * requests by adapter (as Punica's and S-LoRA's batches do), switches each adapter in once
 * (pin it: zero-copy where tshmem_ptr reaches its home, a copy otherwise; on a miss, load its
 * file and insert it), computes the group's rows and unpins. Every row's arithmetic is
 * tshmem_lora_linear's, in one fixed order, so a request's output is the same bits whichever
 * batch, group or PE serves it: the one-process reference (tshmem_lora_reference, which reads
 * the adapter from its file) checks the loop bit for bit.
 *
 * Everything but the switch is provided: the adapter's format and files, the arithmetic, the
 * Zipf draw, the server's buffers.
 */
#define TSHMEM_CHAPTER "3.8"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tshmem_internal.h"
#include "tshmem_lora_cache.h"

/* ---- Provided: adapters, files, arithmetic --------------------------------------------------- */
size_t tshmem_lora_adapter_bytes(int hidden, int rank, int layers)
{
    return (size_t)layers * 2 * (size_t)hidden * (size_t)rank * sizeof(float);
}

static float hashed(unsigned seed, unsigned what, int id, size_t i)
{
    uint64_t z = ((uint64_t)seed << 40) ^ ((uint64_t)what << 56) ^ ((uint64_t)(unsigned)id << 24) ^ i;
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)((double)(z >> 11) * 0x1p-53 - 0.5);
}

void tshmem_lora_adapter_fill(float *blob, int hidden, int rank, int layers, unsigned seed,
                              int id, int version)
{
    size_t n = tshmem_lora_adapter_bytes(hidden, rank, layers) / sizeof(float);
    float scale = 0.05f * (float)version;
    for (size_t i = 0; i < n; i++)
        blob[i] = scale * hashed(seed, 1, id, i);
}

void tshmem_lora_base_fill(float *W, int hidden, int layers, unsigned seed)
{
    size_t n = (size_t)layers * (size_t)hidden * (size_t)hidden;
    float scale = 1.0f / sqrtf((float)hidden);
    for (size_t i = 0; i < n; i++)
        W[i] = scale * hashed(seed, 2, 0, i);
}

int tshmem_lora_adapter_path(char *buf, size_t len, const char *dir, int id)
{
    int n = snprintf(buf, len, "%s/adapter-%d.bin", dir, id);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int tshmem_lora_adapter_write(const char *dir, int id, const float *blob, size_t bytes)
{
    char path[4096];
    if (tshmem_lora_adapter_path(path, sizeof path, dir, id) != 0)
        return errno = ENAMETOOLONG, -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    const char *p = (const char *)blob;
    for (size_t done = 0; done < bytes;) {
        ssize_t w = write(fd, p + done, bytes - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    return close(fd);
}

long tshmem_lora_adapter_read(const char *dir, int id, void *buf, size_t bytes)
{
    char path[4096];
    if (tshmem_lora_adapter_path(path, sizeof path, dir, id) != 0)
        return errno = ENAMETOOLONG, -1;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    size_t done = 0;
    for (;;) {
        if (done == bytes) /* full: one more byte would mean the file is too long */
            break;
        ssize_t r = read(fd, (char *)buf + done, bytes - done);
        if (r < 0) {
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    close(fd);
    return (long)done;
}

void tshmem_lora_linear(const float *x, int rows, int hidden, const float *W, const float *A,
                        const float *B, int rank, float *tmp, float *y)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * hidden;
        float *tr = tmp + (size_t)r * rank, *yr = y + (size_t)r * hidden;
        for (int k = 0; k < rank; k++)
            tr[k] = 0;
        for (int j = 0; j < hidden; j++) /* x A */
            for (int k = 0; k < rank; k++)
                tr[k] += xr[j] * A[(size_t)j * rank + k];
        for (int o = 0; o < hidden; o++)
            yr[o] = 0;
        for (int j = 0; j < hidden; j++) /* x W */
            for (int o = 0; o < hidden; o++)
                yr[o] += xr[j] * W[(size_t)j * hidden + o];
        for (int k = 0; k < rank; k++) /* + (x A) B */
            for (int o = 0; o < hidden; o++)
                yr[o] += tr[k] * B[(size_t)k * hidden + o];
    }
}

int tshmem_lora_zipf(uint64_t *state, int n, double s)
{
    /* Inverse of the cumulative weights 1 / (k + 1)^s, by a linear walk (n is small). */
    double total = 0;
    for (int k = 0; k < n; k++)
        total += 1.0 / pow(k + 1, s);
    uint64_t x = *state ? *state : 88172645463325252ull;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    *state = x;
    double u = (double)(x >> 11) * 0x1p-53 * total, acc = 0;
    for (int k = 0; k < n; k++) {
        acc += 1.0 / pow(k + 1, s);
        if (u < acc)
            return k;
    }
    return n - 1;
}

/* Runs rows x (in place in cur, rows x hidden) through every layer with the adapter at blob. */
static void forward(const tshmem_lora_server_config_t *c, const float *W, const float *blob,
                    float *cur, float *next, float *tmp, int rows)
{
    size_t hr = (size_t)c->hidden * (size_t)c->rank;
    for (int l = 0; l < c->layers; l++) {
        const float *A = blob + (size_t)l * 2 * hr, *B = A + hr;
        tshmem_lora_linear(cur, rows, c->hidden, W + (size_t)l * c->hidden * c->hidden, A, B,
                           c->rank, tmp, next);
        memcpy(cur, next, (size_t)rows * c->hidden * sizeof(float));
    }
}

int tshmem_lora_reference(const tshmem_lora_server_config_t *c, const float *W, int adapter,
                          const float *x, float *y)
{
    size_t bytes = tshmem_lora_adapter_bytes(c->hidden, c->rank, c->layers);
    float *blob = malloc(bytes), *next = malloc((size_t)c->hidden * sizeof(float));
    float *tmp = malloc((size_t)c->rank * sizeof(float));
    long got = blob ? tshmem_lora_adapter_read(c->dir, adapter, blob, bytes) : -1;
    int ok = got == (long)bytes && next && tmp;
    if (ok) {
        memcpy(y, x, (size_t)c->hidden * sizeof(float));
        forward(c, W, blob, y, next, tmp, 1);
    }
    free(blob), free(next), free(tmp);
    return ok ? 0 : -1;
}

tshmem_lora_server_t *tshmem_lora_server_create(tshmem_lora_cache_t *cache,
                                                const tshmem_lora_server_config_t *cfg)
{
    const char *func = __func__;
    tshmem_require_live(func);
    if (cache == NULL || cfg == NULL || cfg->dir == NULL)
        tshmem_fail(func, "PE %d passed a NULL cache, config or dir.", tshmem_g.my_pe);
    if (cfg->hidden < 1 || cfg->rank < 1 || cfg->layers < 1 || cfg->n_adapters < 1 ||
        cfg->max_rows < 1)
        tshmem_fail(func, "PE %d passed hidden %d, rank %d, layers %d, n_adapters %d, max_rows "
                    "%d: each must be at least 1.", tshmem_g.my_pe, cfg->hidden, cfg->rank,
                    cfg->layers, cfg->n_adapters, cfg->max_rows);
    tshmem_lora_server_t *s = calloc(1, sizeof *s);
    if (!s)
        tshmem_fail(func, "PE %d: out of private memory.", tshmem_g.my_pe);
    s->cfg = *cfg;
    s->cache = cache;
    /* One handle per tenant: the server acts for whichever tenant a request names. */
    s->n_tenants = tshmem_lora_cache_n_tenants(cache);
    s->tenants = calloc((size_t)s->n_tenants, sizeof *s->tenants);
    s->tenant_requests = calloc((size_t)s->n_tenants, sizeof *s->tenant_requests);
    if (!s->tenants || !s->tenant_requests)
        tshmem_fail(func, "PE %d: out of private memory.", tshmem_g.my_pe);
    for (int t = 0; t < s->n_tenants; t++)
        s->tenants[t] = tshmem_lora_tenant_open(cache, t);
    size_t h = (size_t)cfg->hidden, rows = (size_t)cfg->max_rows;
    s->W = malloc((size_t)cfg->layers * h * h * sizeof(float));
    s->x = malloc(rows * h * sizeof(float));
    s->y = malloc(rows * h * sizeof(float));
    s->tmp = malloc(rows * (size_t)cfg->rank * sizeof(float));
    s->staging = malloc(tshmem_lora_adapter_bytes(cfg->hidden, cfg->rank, cfg->layers));
    s->order = malloc(rows * sizeof(int));
    if (!s->W || !s->x || !s->y || !s->tmp || !s->staging || !s->order)
        tshmem_fail(func, "PE %d: out of private memory for the server's buffers.",
                    tshmem_g.my_pe);
    tshmem_lora_base_fill(s->W, cfg->hidden, cfg->layers, cfg->seed);
    return s;
}

void tshmem_lora_server_destroy(tshmem_lora_server_t *s)
{
    if (!s)
        return;
    for (int t = 0; t < s->n_tenants; t++)
        tshmem_lora_tenant_close(s->tenants[t]);
    free(s->tenants), free(s->tenant_requests);
    free(s->W), free(s->x), free(s->y), free(s->tmp), free(s->staging), free(s->order);
    free(s);
}

/* Provided: a batch's requests grouped by adapter, in the order each adapter first appears:
 * order[] lists request numbers group after group; returns the number of groups, and
 * group_end[g] where group g ends in order[]. */
static int group_by_adapter(const int *adapter, int n, int *order, int *group_end)
{
    int groups = 0, placed = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = adapter[j] == adapter[i];
        if (seen)
            continue;
        for (int j = i; j < n; j++)
            if (adapter[j] == adapter[i])
                order[placed++] = j;
        group_end[groups++] = placed;
    }
    return groups;
}

/* The adapter's bytes for a group: pinned in the cache (*pinned = 1; zero-copy where ref.data
 * is set, else read into the staging buffer), or loaded from its file into the staging buffer
 * when the cache refused it (*pinned = 0). NULL if the adapter is in neither. */
static const float *switch_in(tshmem_lora_server_t *s, int a, tshmem_lora_ref_t *ref,
                              int *pinned)
{
    *pinned = 0;
    (void)s; (void)a; (void)ref;
    TSHMEM_TODO("The serving loop: switching adapters", "pin the key; on a miss read the adapter's file into staging and insert it (EEXIST: another PE came first), then pin again; a refused insert serves from staging; pinned: zero-copy from ref->data, or tshmem_lora_cache_read into staging (refused: unpin, then NULL)");
}

int tshmem_lora_serve_batch(tshmem_lora_server_t *s, const int *adapter, int n, const float *x,
                            float *y)
{
    const char *func = __func__;
    tshmem_require_live(func);
    if (s == NULL || (n > 0 && (adapter == NULL || x == NULL || y == NULL)))
        tshmem_fail(func, "PE %d passed a NULL server, adapter list, x or y.", tshmem_g.my_pe);
    const tshmem_lora_server_config_t *c = &s->cfg;
    if (n < 0 || n > c->max_rows)
        tshmem_fail(func, "PE %d passed n = %d requests: this server takes 0 .. %d (its "
                    "max_rows).", tshmem_g.my_pe, n, c->max_rows);
    for (int i = 0; i < n; i++)
        if (adapter[i] < 0 || adapter[i] >= c->n_adapters)
            tshmem_fail(func, "PE %d: request %d asks for adapter %d: this server has adapters "
                        "0 .. %d.", tshmem_g.my_pe, i, adapter[i], c->n_adapters - 1);
    int group_end[n > 0 ? n : 1];
    int groups = group_by_adapter(adapter, n, s->order, group_end);
    size_t h = (size_t)c->hidden;
    for (int g = 0, from = 0; g < groups; from = group_end[g++]) {
        int a = adapter[s->order[from]], rows = group_end[g] - from, pinned = 0;
        tshmem_lora_ref_t ref;
        const float *blob = switch_in(s, a, &ref, &pinned);
        if (blob == NULL)
            return -1;
        for (int r = 0; r < rows; r++)
            memcpy(s->x + r * h, x + (size_t)s->order[from + r] * h, h * sizeof(float));
        forward(c, s->W, blob, s->x, s->y, s->tmp, rows);
        for (int r = 0; r < rows; r++)
            memcpy(y + (size_t)s->order[from + r] * h, s->x + r * h, h * sizeof(float));
        if (pinned)
            tshmem_lora_cache_unpin(s->tenants[a % s->n_tenants], &ref);
        s->tenant_requests[a % s->n_tenants] += (uint64_t)rows;
    }
    s->batches++;
    s->requests += (uint64_t)n;
    return 0;
}
