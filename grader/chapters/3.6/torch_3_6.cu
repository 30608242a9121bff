/* torch_3_6.cu: chapter 3.6's module on GPUs: torch.cuda tensors on the NVSHMEM heap, and
 * chapter 3.3's ring allreduce on them, on PyTorch's streams. Built by tools/gpu-torch into
 * build/gpu/<impl>/python/tshmem_cuda/_tshmem_cuda.so with chapter 3.3's code (the reference or
 * yours); its Python part is the CPU module's, with CUDA streams.
 *
 * What changes from the CPU module (week3/3.6-pytorch): nvshmem_malloc instead of tshmem_calloc,
 * (kDLCUDA, device) in the DLPack descriptor, nvshmem_ptr for peers, and the allreduce is
 * enqueued, not run: allreduce_(t, stream) launches tg_allreduce on PyTorch's current stream,
 * after the kernels that wrote t, and returns at once. allreduce_start(t, compute, comm) makes
 * the communication stream wait for the compute stream (an event), launches there, and records
 * an event that Handle.wait(stream) makes the compute stream wait for: the CPU never blocks.
 * Each call takes the path measured fastest for its size and the number of PEs
 * (torch_3_6_paths.h): a low-latency path (ll_allreduce_kernel, below) or a two-shot path of
 * this file's own, or chapter 3.3's one shot or ring with a grid of its own. float32 only
 * (3.3's allreduce sums floats). Errors are Python exceptions with a sentence. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "tgpu.h"

enum { DL_CUDA = 2, DL_INT = 0, DL_FLOAT = 2 };
typedef struct { int32_t device_type, device_id; } DLDevice;
typedef struct { uint8_t code, bits; uint16_t lanes; } DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#define MAX_DIMS 8
struct dl_block {
    DLManagedTensor managed;
    int64_t shape[MAX_DIMS], strides[MAX_DIMS];
};
struct alloc {
    char *base;
    size_t bytes;
    struct alloc *next;
};

static struct alloc *allocs;
static tg_allreduce_t ar;
static int live, device, mpi_owned; /* mpi_owned: init started MPI, finalize ends it */
static PyObject *f32; /* torch.float32, to compare a tensor's dtype with */
/* Events: one "ready" that _start records and hands to the side stream at once (so it is free
 * again), and a stack of "done" events that _start takes and _wait gives back: a call from a
 * hook then creates and destroys none. */
static cudaEvent_t ready;
static cudaEvent_t *done_free;
static int n_done_free, cap_done_free;

static PyObject *fail(PyObject *kind, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    PyErr_SetString(kind, text);
    return NULL;
}

#define NEED_LIVE(func)                                                                       \
    if (!live)                                                                                \
        return fail(PyExc_RuntimeError, "tshmem_cuda.%s: call tshmem_cuda.init() first.", func)

static void dl_deleter(DLManagedTensor *self)
{
    free(self->manager_ctx); /* the descriptor only: the heap is freed by free(), collectively */
}

static void capsule_destructor(PyObject *capsule)
{
    if (PyCapsule_IsValid(capsule, "dltensor")) { /* never consumed */
        DLManagedTensor *m = (DLManagedTensor *)PyCapsule_GetPointer(capsule, "dltensor");
        m->deleter(m);
    }
}

static PyObject *capsule(void *data, DLDataType dt, int ndim, const int64_t *shape,
                         const int64_t *strides)
{
    struct dl_block *d = (struct dl_block *)calloc(1, sizeof *d);
    if (!d)
        return PyErr_NoMemory();
    DLTensor *t = &d->managed.dl_tensor;
    *t = DLTensor{data, {DL_CUDA, device}, ndim, dt, d->shape, d->strides, 0};
    int64_t step = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        d->shape[i] = shape[i];
        d->strides[i] = strides ? strides[i] : step;
        step *= shape[i] > 0 ? shape[i] : 1;
    }
    d->managed.manager_ctx = d;
    d->managed.deleter = dl_deleter;
    PyObject *c = PyCapsule_New(&d->managed, "dltensor", capsule_destructor);
    if (!c)
        free(d);
    return c;
}

/* The live allocation holding [p, p + bytes), or NULL (an empty range is always fine). */
static struct alloc *find(const char *p, size_t bytes)
{
    for (struct alloc *a = allocs; a; a = a->next)
        if (p >= a->base && p + bytes <= a->base + a->bytes)
            return a;
    return NULL;
}

/* The allreduce's blocks: chapter 3.3's study found 128 blocks of 1024 threads the best on two
 * H200s from 16 MiB up (fewer blocks keep fewer bytes in flight: 32 of 512 threads reached half
 * the link at 64 MiB); smaller calls take fewer blocks anyway (one per 64 KiB of a segment). */
#define TORCH_AR_CTAS 128
#define TORCH_AR_THREADS 1024
#define TORCH_AR_MIN_CHUNK 16384

/* The paths a call can take. Which one, and its grid, depend on the call's size AND on the
 * number of PEs: on two GPUs the LL path wins up to 1 MiB; on four it stores three times the
 * bytes (26.1 us at 1 MiB on four H100s, against NCCL's 20.6), and the two-shot paths win from
 * 256 KiB to 8 MiB (19.2 us at 1 MiB, 34.1 at 4 MiB against 42.8). torch_3_6_paths.h holds
 * the choice as the sweep (tools/gpu-torch --sweep) measured it: each path forced, the fastest
 * kept. */
enum { P_AUTO, P_LL, P_ONESHOT, P_TWOSHOT_LL, P_TWOSHOT, P_RING, P_END };
static const char *const path_names[] = {"auto",       "ll",      "oneshot",
                                         "twoshot_ll", "twoshot", "ring"};
struct choice {
    int pes;          /* measured with this many PEs (a job of n uses the largest pes <= n) */
    size_t max_bytes; /* calls up to this size (0: any size) */
    int path, ctas, threads;
    size_t min_chunk; /* floats (the ring's) */
};
#include "torch_3_6_paths.h"

/* Small calls: NCCL's "low-latency" protocol. Each float travels with the call's number in one
 * 8-byte store into every peer's landing area, through nvshmem_ptr; a peer polls its own memory
 * until every word carries the number, then sums the n copies in PE order (the same bits on
 * every PE). No fence, no separate flag: one NVLink crossing where the one-shot path of 3.3 has
 * a put, a system fence, a flag and a quiet. Odd and even calls use two areas, so a PE one call
 * ahead never overwrites words a peer is still reading. Twice the bytes on the link, times
 * n - 1 peers, so only for small calls: on two H200s it beat 3.3's one shot at every size up to
 * 1 MiB (7.0 against 10.4 us at 4 KiB, 8.8 against 11.8 at 256 KiB, 13.0 against 15.0 at
 * 1 MiB, on the GPU); the study prints each path forced (tshmem_ll, tshmem_3.3, ...). */
#define TORCH_LL_MAX (1 << 20) /* bytes: the largest call the LL path may take */
#define TORCH_LL_WORDS (TORCH_LL_MAX / 4)
#define TORCH_LL_THREADS 256
static unsigned long long *ll_area; /* symmetric: [2][n_pes][TORCH_LL_WORDS] */
static uint32_t ll_seq; /* calls of the LL and two-shot paths so far (they share it) */
static int ll_ok; /* every peer is reachable by stores (nvshmem_ptr): LL and two-shot allowed */

/* Middle calls on several PEs: two shots. The buffer is cut into n segments; each PE sends
 * segment q of its data to PE q (reduce-scatter), PE q sums the n copies of its segment in PE
 * order and sends the sum to every peer (allgather): two crossings where the LL path has one,
 * but each PE sends 2 (n - 1) / n of the buffer where the LL path sends n - 1 buffers (twice
 * over, in LL words). Two kinds: twoshot_ll sends LL words (no flag, no fence; each thread owns
 * one position j of every segment, so no thread waits for another of its own PE); twoshot
 * sends the floats themselves, into the owner's landing area and then straight into every
 * peer's data, and block b raises one flag per peer after a system fence (as 3.3's one shot
 * does). Both grids are kept small enough to be on the GPU all at once (block b of one PE waits
 * for block b of the others). Odd and even calls use separate areas, as in the LL path. */
#define TORCH_TS_MAX (8 << 20) /* bytes: the largest call the two-shot path may take */
#define TORCH_TS_PES 8         /* the most PEs it serves (peer addresses held per thread) */
#define TORCH_TS_BLOCKS 128    /* the most blocks of the twoshot path (flags per PE) */
static unsigned long long *ts_area; /* symmetric: [2 phases][2 parities][n_pes][ts_seg] words */
static float *tsd_area;             /* symmetric: [2 parities][n_pes][ts_seg] floats */
static uint64_t *tsd_flags;         /* symmetric: [2 phases][2 parities][n_pes][TS_BLOCKS] */
static size_t ts_seg;               /* floats of one PE's slot (a multiple of 4) */
static int ts_resident;             /* blocks of TORCH_TS_THREADS the GPU holds at once */

__device__ inline unsigned long long ll_word(uint32_t seq, float v)
{
    return (unsigned long long)seq << 32 | __float_as_uint(v);
}

__device__ inline float ll_wait(const unsigned long long *at, uint32_t seq)
{
    volatile const unsigned long long *w = at;
    unsigned long long got;
    while ((uint32_t)((got = *w) >> 32) != seq)
        ;
    return __uint_as_float((uint32_t)got);
}

__global__ void ll_allreduce_kernel(float *data, unsigned long long *area, size_t count,
                                    uint32_t seq)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x, par = seq & 1;
    if (i >= count)
        return;
    float v = data[i];
    unsigned long long word = ll_word(seq, v);
    unsigned long long *mine = area + (par * n + me) * TORCH_LL_WORDS + i;
    for (int k = 1; k < n; k++)
        *(volatile unsigned long long *)nvshmem_ptr(mine, (me + k) % n) = word;
    float sum = 0;
    for (int p = 0; p < n; p++)
        sum += p == me ? v : ll_wait(area + (par * n + p) * TORCH_LL_WORDS + i, seq);
    data[i] = sum;
}

__global__ void twoshot_allreduce_kernel(float *data, unsigned long long *area, size_t count,
                                         size_t seg, size_t slot, uint32_t seq)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    size_t par = seq & 1, stride = (size_t)gridDim.x * blockDim.x;
    size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long *rs = area + (0 * 2 + par) * n * slot; /* [n][slot]: partial segments */
    unsigned long long *ag = area + (1 * 2 + par) * n * slot; /* [n][slot]: summed segments */
    volatile unsigned long long *to_rs[TORCH_TS_PES], *to_ag[TORCH_TS_PES];
    for (int q = 0; q < n; q++) {
        to_rs[q] = (volatile unsigned long long *)nvshmem_ptr(rs + me * slot, q);
        to_ag[q] = (volatile unsigned long long *)nvshmem_ptr(ag + me * slot, q);
    }
    size_t mine = (size_t)me * seg, my_len = mine < count ? count - mine : 0;
    my_len = my_len < seg ? my_len : seg;
    /* Reduce-scatter: my part of segment q lands in slot `me` of PE q's first area. */
    for (size_t j = first; j < seg; j += stride)
        for (int k = 1; k < n; k++) {
            int q = (me + k) % n;
            size_t i = (size_t)q * seg + j;
            if (i < count)
                to_rs[q][j] = ll_word(seq, data[i]);
        }
    /* My segment: the n copies in PE order, then the sum to every peer. */
    for (size_t j = first; j < my_len; j += stride) {
        float sum = 0;
        for (int p = 0; p < n; p++)
            sum += p == me ? data[mine + j] : ll_wait(rs + p * slot + j, seq);
        data[mine + j] = sum;
        unsigned long long word = ll_word(seq, sum);
        for (int k = 1; k < n; k++)
            to_ag[(me + k) % n][j] = word;
    }
    /* Allgather: every other segment's sum, from its owner. */
    for (size_t j = first; j < seg; j += stride)
        for (int k = 1; k < n; k++) {
            int p = (me + k) % n;
            size_t i = (size_t)p * seg + j;
            if (i < count)
                data[i] = ll_wait(ag + p * slot + j, seq);
        }
}
#define TORCH_TS_THREADS 512

/* twoshot: block b owns positions [b * per, b * per + per) of every segment. */
__device__ inline void ts_signal(uint64_t *flags, int phase, size_t par, int b, uint64_t seq)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    __syncthreads(); /* every thread's stores of this phase are issued */
    if (threadIdx.x < n - 1) {
        int q = (me + 1 + threadIdx.x) % n;
        __threadfence_system(); /* they are visible on every GPU before the flag */
        uint64_t *f = flags + (((size_t)phase * 2 + par) * n + me) * TORCH_TS_BLOCKS + b;
        *(volatile uint64_t *)nvshmem_ptr(f, q) = seq;
    }
}

__device__ inline void ts_wait(uint64_t *flags, int phase, size_t par, int b, uint64_t seq)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    if (threadIdx.x < n - 1) {
        int p = (me + 1 + threadIdx.x) % n;
        volatile uint64_t *f = flags + (((size_t)phase * 2 + par) * n + p) * TORCH_TS_BLOCKS + b;
        while (*f < seq)
            ;
        __threadfence();
    }
    __syncthreads();
}

__global__ void twoshot_data_kernel(float *data, float *area, uint64_t *flags, size_t count,
                                    size_t seg, size_t slot, size_t per, uint64_t seq)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), b = blockIdx.x;
    size_t par = seq & 1, lo = (size_t)b * per, hi = lo + per < seg ? lo + per : seg;
    /* Reduce-scatter: my part of segment q lands in slot `me` of PE q's area. */
    for (int k = 1; k < n; k++) {
        int q = (me + k) % n;
        float *to = (float *)nvshmem_ptr(area + (par * n + me) * slot, q);
        for (size_t j = lo + threadIdx.x; j < hi && (size_t)q * seg + j < count; j += blockDim.x)
            to[j] = data[(size_t)q * seg + j];
    }
    ts_signal(flags, 0, par, b, seq);
    ts_wait(flags, 0, par, b, seq);
    /* My segment: the n copies in PE order, into my data and straight into every peer's. */
    float *peer[TORCH_TS_PES];
    for (int q = 0; q < n; q++)
        peer[q] = (float *)nvshmem_ptr(data, q);
    size_t mine = (size_t)me * seg;
    for (size_t j = lo + threadIdx.x; j < hi && mine + j < count; j += blockDim.x) {
        float sum = 0;
        for (int p = 0; p < n; p++)
            sum += p == me ? data[mine + j] : __ldcg(area + (par * n + p) * slot + j);
        data[mine + j] = sum;
        for (int k = 1; k < n; k++)
            peer[(me + k) % n][mine + j] = sum;
    }
    ts_signal(flags, 1, par, b, seq);
    ts_wait(flags, 1, par, b, seq); /* every other segment's sum is in my data */
}

/* The path of a call of `bytes` on n PEs: the forced one, else the table's. */
static int forced = P_AUTO, forced_ctas, forced_threads;
static size_t forced_min_chunk;

static struct choice choose(size_t bytes, int n)
{
    if (forced != P_AUTO)
        return choice{n, 0, forced, forced_ctas, forced_threads, forced_min_chunk};
    int pes = 0;
    for (size_t r = 0; r < sizeof paths / sizeof *paths; r++)
        if (paths[r].pes <= n && paths[r].pes > pes)
            pes = paths[r].pes;
    for (size_t r = 0; r < sizeof paths / sizeof *paths; r++)
        if (paths[r].pes == pes && (paths[r].max_bytes == 0 || bytes <= paths[r].max_bytes))
            return paths[r];
    return choice{n, 0, P_RING, TORCH_AR_CTAS, TORCH_AR_THREADS, TORCH_AR_MIN_CHUNK};
}

/* The LL and two-shot paths' call number; after 2^32 - 1 calls the numbers would come round
 * again, and a word last written 2^32 calls ago would pass for new: every PE (all reach this
 * call) clears both paths' areas first. */
static uint32_t next_seq(void)
{
    if (ll_seq == UINT32_MAX) {
        int n = nvshmem_n_pes();
        TG_CUDA(cudaDeviceSynchronize());
        nvshmem_barrier_all();
        TG_CUDA(cudaMemset(ll_area, 0, 2 * (size_t)n * TORCH_LL_WORDS * sizeof *ll_area));
        TG_CUDA(cudaMemset(ts_area, 0, 4 * (size_t)n * ts_seg * sizeof *ts_area));
        TG_CUDA(cudaMemset(tsd_flags, 0, 4 * (size_t)n * TORCH_TS_BLOCKS * sizeof *tsd_flags));
        TG_CUDA(cudaDeviceSynchronize());
        nvshmem_barrier_all();
        ll_seq = 0;
    }
    return ++ll_seq;
}

/* The allreduce of `count` floats at `data` on `st`, by the path choose() gives. */
static void allreduce_on(float *data, size_t count, cudaStream_t st)
{
    int n = nvshmem_n_pes();
    size_t bytes = count * sizeof(float);
    if (!count || n == 1)
        return;
    struct choice c = choose(bytes, n);
    if (c.path == P_LL && !(ll_ok && bytes <= TORCH_LL_MAX))
        c.path = P_ONESHOT;
    if ((c.path == P_TWOSHOT_LL || c.path == P_TWOSHOT) &&
        !(ll_ok && bytes <= TORCH_TS_MAX && n <= TORCH_TS_PES))
        c.path = P_RING;
    if (c.path == P_ONESHOT && bytes > TG_AR_ONESHOT_MAX)
        c.path = P_RING;
    if (c.path == P_LL) {
        uint32_t seq = next_seq();
        unsigned blocks = (unsigned)((count + TORCH_LL_THREADS - 1) / TORCH_LL_THREADS);
        ll_allreduce_kernel<<<blocks, TORCH_LL_THREADS, 0, st>>>(data, ll_area, count, seq);
        TG_CUDA(cudaGetLastError());
        return;
    }
    if (c.path == P_TWOSHOT) {
        uint32_t seq = next_seq();
        size_t seg = ((count + n - 1) / n + 3) & ~(size_t)3;
        int threads = c.threads ? c.threads : TORCH_TS_THREADS;
        size_t cap = (size_t)(c.ctas ? c.ctas : TORCH_TS_BLOCKS), want;
        if (cap > (size_t)ts_resident * TORCH_TS_THREADS / threads)
            cap = (size_t)ts_resident * TORCH_TS_THREADS / threads; /* on the GPU at once */
        want = (seg + 2 * threads - 1) / (2 * threads); /* about two floats a thread */
        size_t blocks = want < cap ? want : cap;
        blocks = blocks ? blocks : 1;
        size_t per = (seg + blocks - 1) / blocks;
        twoshot_data_kernel<<<(unsigned)blocks, threads, 0, st>>>(data, tsd_area, tsd_flags, count,
                                                                 seg, ts_seg, per, seq);
        TG_CUDA(cudaGetLastError());
        return;
    }
    if (c.path == P_TWOSHOT_LL) {
        uint32_t seq = next_seq();
        size_t seg = (count + n - 1) / n;
        int threads = c.threads ? c.threads : TORCH_TS_THREADS;
        int cap = ts_resident; /* the grid on the GPU at once */
        if (threads != TORCH_TS_THREADS) {
            int sms = 0, per_sm = 0;
            TG_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
            TG_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &per_sm, twoshot_allreduce_kernel, threads, 0));
            cap = sms * (per_sm > 0 ? per_sm : 1);
        }
        if (c.ctas && c.ctas < cap)
            cap = c.ctas;
        size_t want = (seg + threads - 1) / threads;
        unsigned blocks = (unsigned)(want < (size_t)cap ? want : cap);
        twoshot_allreduce_kernel<<<blocks, threads, 0, st>>>(data, ts_area, count, seg, ts_seg,
                                                             seq);
        TG_CUDA(cudaGetLastError());
        return;
    }
    ar.oneshot_max = c.path == P_ONESHOT ? TG_AR_ONESHOT_MAX : 0;
    ar.ctas = c.ctas ? c.ctas : TORCH_AR_CTAS;
    ar.threads = c.threads ? c.threads : TORCH_AR_THREADS;
    ar.min_chunk = c.min_chunk ? c.min_chunk : TORCH_AR_MIN_CHUNK;
    tg_allreduce(&ar, data, count, st);
}

static PyObject *py_init(PyObject *, PyObject *args)
{
    long long cap = 16 << 20;
    if (!PyArg_ParseTuple(args, "|L", &cap))
        return NULL;
    if (live)
        return fail(PyExc_RuntimeError, "tshmem_cuda.init: already initialized.");
    int up = 0;
    MPI_Initialized(&up);
    if (!up)
        MPI_Init(NULL, NULL);
    mpi_owned = !up;
    tg_init();
    TG_CUDA(cudaGetDevice(&device));
    tg_allreduce_create(&ar, (size_t)cap, TORCH_AR_CTAS, TORCH_AR_THREADS);
    int n = nvshmem_n_pes();
    size_t words = 2 * (size_t)n * TORCH_LL_WORDS;
    ll_area = (unsigned long long *)tg_malloc(words * sizeof *ll_area);
    TG_CUDA(cudaMemset(ll_area, 0, words * sizeof *ll_area));
    ts_seg = ((TORCH_TS_MAX / sizeof(float) + n - 1) / n + 3) & ~(size_t)3;
    ts_area = (unsigned long long *)tg_malloc(4 * (size_t)n * ts_seg * sizeof *ts_area);
    TG_CUDA(cudaMemset(ts_area, 0, 4 * (size_t)n * ts_seg * sizeof *ts_area));
    tsd_area = (float *)tg_malloc(2 * (size_t)n * ts_seg * sizeof *tsd_area);
    tsd_flags = (uint64_t *)tg_malloc(4 * (size_t)n * TORCH_TS_BLOCKS * sizeof *tsd_flags);
    TG_CUDA(cudaMemset(tsd_flags, 0, 4 * (size_t)n * TORCH_TS_BLOCKS * sizeof *tsd_flags));
    int sms = 0, per_sm = 0;
    TG_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    TG_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, twoshot_allreduce_kernel,
                                                          TORCH_TS_THREADS, 0));
    ts_resident = sms * (per_sm > 0 ? per_sm : 1);
    ll_seq = 0;
    forced = P_AUTO;
    ll_ok = 1;
    for (int p = 0; p < n; p++)
        if (!nvshmem_ptr(ll_area, p))
            ll_ok = 0; /* a peer not reachable by stores (another node): 3.3's paths only */
    TG_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all(); /* every landing area is zero before anyone stores */
    if (!ready)
        TG_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    if (!f32) {
        PyObject *torch = PyImport_ImportModule("torch");
        f32 = torch ? PyObject_GetAttrString(torch, "float32") : NULL;
        Py_XDECREF(torch);
        if (!f32)
            return NULL;
    }
    live = 1;
    Py_RETURN_NONE;
}

static PyObject *py_finalize(PyObject *, PyObject *)
{
    NEED_LIVE("finalize");
    TG_CUDA(cudaDeviceSynchronize());
    tg_allreduce_destroy(&ar);
    nvshmem_free(ll_area);
    nvshmem_free(ts_area);
    nvshmem_free(tsd_area);
    nvshmem_free(tsd_flags);
    ll_area = NULL;
    ts_area = NULL;
    tsd_area = NULL;
    tsd_flags = NULL;
    while (n_done_free)
        TG_CUDA(cudaEventDestroy(done_free[--n_done_free]));
    while (allocs) {
        struct alloc *n = allocs->next;
        nvshmem_free(allocs->base);
        free(allocs);
        allocs = n;
    }
    tg_finalize();
    if (mpi_owned)
        MPI_Finalize(); /* mpirun counts a process that ends without it as a failure */
    live = 0;
    Py_RETURN_NONE;
}

static PyObject *py_my_pe(PyObject *, PyObject *)
{
    NEED_LIVE("my_pe");
    return PyLong_FromLong(nvshmem_my_pe());
}

static PyObject *py_n_pes(PyObject *, PyObject *)
{
    NEED_LIVE("n_pes");
    return PyLong_FromLong(nvshmem_n_pes());
}

static PyObject *py_barrier_all(PyObject *, PyObject *)
{
    NEED_LIVE("barrier_all");
    TG_CUDA(cudaDeviceSynchronize()); /* every kernel that writes the heap is done */
    nvshmem_barrier_all();
    Py_RETURN_NONE;
}

/* _alloc(shape, code, bits, zero): a "dltensor" capsule on a new symmetric block. */
static PyObject *py_alloc(PyObject *, PyObject *args)
{
    PyObject *shape;
    int code, bits, zero;
    NEED_LIVE("zeros");
    if (!PyArg_ParseTuple(args, "Oiip", &shape, &code, &bits, &zero))
        return NULL;
    int64_t dims[MAX_DIMS];
    Py_ssize_t ndim = PySequence_Size(shape);
    if (ndim < 0 || ndim > MAX_DIMS)
        return fail(PyExc_ValueError, "tshmem_cuda.zeros: a shape of at most %d dims.", MAX_DIMS);
    size_t bytes = (size_t)bits / 8;
    for (Py_ssize_t i = 0; i < ndim; i++) {
        PyObject *o = PySequence_GetItem(shape, i);
        dims[i] = o ? PyLong_AsLongLong(o) : -1;
        Py_XDECREF(o);
        if (dims[i] < 0)
            return PyErr_Occurred() ? NULL
                                    : fail(PyExc_ValueError, "tshmem_cuda.zeros: sizes >= 0.");
        bytes *= (size_t)dims[i];
    }
    char *base = NULL;
    if (bytes > 0) {
        base = (char *)nvshmem_malloc(bytes); /* collective, same offset on every PE */
        if (!base)
            return fail(PyExc_MemoryError, "tshmem_cuda.zeros: PE %d: no room for %zu bytes on "
                        "the NVSHMEM heap; raise NVSHMEM_SYMMETRIC_SIZE.", nvshmem_my_pe(), bytes);
        if (zero)
            TG_CUDA(cudaMemset(base, 0, bytes)); /* on the legacy stream: before any later use */
        struct alloc *a = (struct alloc *)malloc(sizeof *a);
        *a = alloc{base, bytes, allocs};
        allocs = a;
    }
    return capsule(base, DLDataType{(uint8_t)code, (uint8_t)bits, 1}, (int)ndim, dims, NULL);
}

/* The data pointer and byte size of a torch tensor (through its methods). */
static int tensor_span(PyObject *t, char **data, size_t *bytes, int *contiguous)
{
    PyObject *p = PyObject_CallMethod(t, "data_ptr", NULL);
    PyObject *n = PyObject_CallMethod(t, "numel", NULL);
    PyObject *e = PyObject_CallMethod(t, "element_size", NULL);
    PyObject *c = PyObject_CallMethod(t, "is_contiguous", NULL);
    int ok = p && n && e && c;
    if (ok) {
        *data = (char *)PyLong_AsVoidPtr(p);
        *bytes = (size_t)PyLong_AsLongLong(n) * (size_t)PyLong_AsLongLong(e);
        *contiguous = PyObject_IsTrue(c);
    }
    Py_XDECREF(p), Py_XDECREF(n), Py_XDECREF(e), Py_XDECREF(c);
    if (!ok && !PyErr_Occurred())
        fail(PyExc_TypeError, "tshmem_cuda: expected a torch.Tensor.");
    return ok ? 0 : -1;
}

static PyObject *py_free(PyObject *, PyObject *args)
{
    PyObject *t;
    char *data;
    size_t bytes;
    int contiguous;
    NEED_LIVE("free");
    if (!PyArg_ParseTuple(args, "O", &t) || tensor_span(t, &data, &bytes, &contiguous))
        return NULL;
    if (bytes == 0)
        Py_RETURN_NONE;
    struct alloc **at = &allocs;
    while (*at && (*at)->base != data)
        at = &(*at)->next;
    if (!*at)
        return fail(PyExc_ValueError, "tshmem_cuda.free: PE %d: this tensor does not start a live "
                    "allocation of zeros/empty (freed already, a view, or not symmetric).",
                    nvshmem_my_pe());
    struct alloc *a = *at;
    *at = a->next;
    TG_CUDA(cudaDeviceSynchronize()); /* no kernel may still use the block */
    nvshmem_free(a->base);
    free(a);
    Py_RETURN_NONE;
}

/* _peer(t, pe, shape, strides, code, bits): the capsule of t as PE pe holds it, or None. */
static PyObject *py_peer(PyObject *, PyObject *args)
{
    PyObject *t, *shape, *strides;
    int pe, code, bits;
    char *data;
    size_t bytes;
    int contiguous;
    NEED_LIVE("peer");
    if (!PyArg_ParseTuple(args, "OiOOii", &t, &pe, &shape, &strides, &code, &bits) ||
        tensor_span(t, &data, &bytes, &contiguous))
        return NULL;
    if (pe < 0 || pe >= nvshmem_n_pes())
        return fail(PyExc_ValueError, "tshmem_cuda.peer: pe %d: this job has PEs 0 to %d.", pe,
                    nvshmem_n_pes() - 1);
    if (bytes && !find(data, bytes))
        return fail(PyExc_ValueError, "tshmem_cuda.peer: PE %d: the tensor is not on a live "
                    "symmetric allocation.", nvshmem_my_pe());
    void *there = bytes ? nvshmem_ptr(data, pe) : NULL;
    if (bytes && !there)
        Py_RETURN_NONE; /* not reachable by loads and stores (another node) */
    int64_t dims[MAX_DIMS], st[MAX_DIMS];
    Py_ssize_t ndim = PySequence_Size(shape);
    for (Py_ssize_t i = 0; i < ndim && i < MAX_DIMS; i++) {
        PyObject *a = PySequence_GetItem(shape, i), *b = PySequence_GetItem(strides, i);
        dims[i] = PyLong_AsLongLong(a);
        st[i] = PyLong_AsLongLong(b);
        Py_XDECREF(a), Py_XDECREF(b);
    }
    return capsule(there, DLDataType{(uint8_t)code, (uint8_t)bits, 1}, (int)ndim, dims, st);
}

/* The checks of both allreduce calls: a contiguous float32 range of a live allocation. */
static int reducible(const char *func, PyObject *t, char **data, size_t *count)
{
    size_t bytes;
    int contiguous;
    if (tensor_span(t, data, &bytes, &contiguous))
        return -1;
    PyObject *dt = PyObject_GetAttrString(t, "dtype");
    int is_f32 = dt == f32;
    Py_XDECREF(dt);
    if (!is_f32 || !contiguous) {
        fail(is_f32 ? PyExc_ValueError : PyExc_TypeError, "tshmem_cuda.%s: a contiguous "
             "float32 tensor, please (chapter 3.3's allreduce sums floats).", func);
        return -1;
    }
    *count = bytes / 4;
    if (*count > ar.cap) {
        fail(PyExc_ValueError, "tshmem_cuda.%s: %zu floats, more than the %zu that init(cap) "
             "prepared for.", func, *count, ar.cap);
        return -1;
    }
    if (bytes && !find(*data, bytes)) {
        fail(PyExc_ValueError, "tshmem_cuda.%s: PE %d: the tensor is not on a live symmetric "
             "allocation (tshmem_cuda.zeros).", func, nvshmem_my_pe());
        return -1;
    }
    return 0;
}

/* _force(path[, ctas, threads, min_chunk]): every call takes this path ("auto": the table of
 * torch_3_6_paths.h again), the ring with this grid (0: the default), for the study's sweeps;
 * every PE must pass the same. A path a call cannot take (LL above 1 MiB, a peer not on NVLink)
 * falls back as in the table: LL to 3.3's one shot, the one shot and two shots to the ring. */
static PyObject *py_force(PyObject *, PyObject *args)
{
    const char *name;
    int ctas = 0, threads = 0;
    long long min_chunk = 0;
    NEED_LIVE("_force");
    if (!PyArg_ParseTuple(args, "s|iiL", &name, &ctas, &threads, &min_chunk))
        return NULL;
    int path = P_END;
    for (int p = 0; p < P_END; p++)
        if (!strcmp(name, path_names[p]))
            path = p;
    if (path == P_END)
        return fail(PyExc_ValueError, "tshmem_cuda._force: path \"%s\": give auto, ll, oneshot, "
                    "twoshot_ll, twoshot or ring.", name);
    if (min_chunk < 0)
        return fail(PyExc_ValueError, "tshmem_cuda._force: min_chunk = %lld floats: give 0 (the "
                    "default) or more.", min_chunk);
    if (ctas < 0 || ctas > TG_AR_MAX_CTAS || threads < 0 || threads > 1024 || threads % 32)
        return fail(PyExc_ValueError, "tshmem_cuda._force: %d blocks of %d threads: 0 (the "
                    "default) or 1 to %d blocks of 32 to 1024 threads (a multiple of 32).", ctas,
                    threads, TG_AR_MAX_CTAS);
    TG_CUDA(cudaDeviceSynchronize()); /* no allreduce is running with the old choice */
    forced = path;
    forced_ctas = ctas;
    forced_threads = threads;
    forced_min_chunk = (size_t)min_chunk;
    Py_RETURN_NONE;
}

/* allreduce_(t, stream): enqueued on `stream` (torch.cuda.current_stream().cuda_stream). */
static PyObject *py_allreduce(PyObject *, PyObject *args)
{
    PyObject *t;
    unsigned long long stream;
    char *data;
    size_t count;
    NEED_LIVE("allreduce_");
    if (!PyArg_ParseTuple(args, "OK", &t, &stream) || reducible("allreduce_", t, &data, &count))
        return NULL;
    allreduce_on((float *)data, count, (cudaStream_t)stream);
    Py_INCREF(t);
    return t;
}

/* _start(t, compute, comm) -> an event (as an int) that comm records after the sum. */
static PyObject *py_start(PyObject *, PyObject *args)
{
    PyObject *t;
    unsigned long long compute, comm;
    char *data;
    size_t count;
    NEED_LIVE("allreduce_start");
    if (!PyArg_ParseTuple(args, "OKK", &t, &compute, &comm) ||
        reducible("allreduce_start", t, &data, &count))
        return NULL;
    cudaEvent_t done;
    if (n_done_free)
        done = done_free[--n_done_free];
    else
        TG_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    TG_CUDA(cudaEventRecord(ready, (cudaStream_t)compute)); /* the gradients are written */
    TG_CUDA(cudaStreamWaitEvent((cudaStream_t)comm, ready, 0)); /* ready is free again */
    allreduce_on((float *)data, count, (cudaStream_t)comm);
    TG_CUDA(cudaEventRecord(done, (cudaStream_t)comm));
    return PyLong_FromVoidPtr((void *)done);
}

/* _wait(event, stream): the stream waits for the event (the CPU does not), then it is freed. */
static PyObject *py_wait(PyObject *, PyObject *args)
{
    PyObject *ev;
    unsigned long long stream;
    if (!PyArg_ParseTuple(args, "OK", &ev, &stream))
        return NULL;
    cudaEvent_t done = (cudaEvent_t)PyLong_AsVoidPtr(ev);
    if (!done && PyErr_Occurred())
        return NULL;
    TG_CUDA(cudaStreamWaitEvent((cudaStream_t)stream, done, 0));
    /* The stream took the event's state: it may be recorded again; keep it for the next call. */
    if (n_done_free == cap_done_free) {
        int cap = cap_done_free ? 2 * cap_done_free : 64;
        cudaEvent_t *more = (cudaEvent_t *)realloc(done_free, cap * sizeof *more);
        if (!more) {
            TG_CUDA(cudaEventDestroy(done));
            Py_RETURN_NONE;
        }
        done_free = more;
        cap_done_free = cap;
    }
    done_free[n_done_free++] = done;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"init", py_init, METH_VARARGS, "init(cap=16M floats): MPI, NVSHMEM, the allreduce."},
    {"finalize", py_finalize, METH_NOARGS, "finalize()"},
    {"my_pe", py_my_pe, METH_NOARGS, "my_pe()"},
    {"n_pes", py_n_pes, METH_NOARGS, "n_pes()"},
    {"barrier_all", py_barrier_all, METH_NOARGS, "barrier_all(): device idle, then all PEs."},
    {"_alloc", py_alloc, METH_VARARGS, "_alloc(shape, code, bits, zero) -> capsule"},
    {"free", py_free, METH_VARARGS, "free(t) (collective)"},
    {"_peer", py_peer, METH_VARARGS, "_peer(t, pe, shape, strides, code, bits)"},
    {"_allreduce", py_allreduce, METH_VARARGS, "_allreduce(t, stream)"},
    {"_force", py_force, METH_VARARGS, "_force(path[, ctas, threads, min_chunk]): the path of "
     "every call (auto: the table)"},
    {"_start", py_start, METH_VARARGS, "_start(t, compute_stream, comm_stream) -> event"},
    {"_wait", py_wait, METH_VARARGS, "_wait(event, stream)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_tshmem_cuda",
                                        "tshmem's PyTorch module on GPUs (NVSHMEM).", -1, methods};

PyMODINIT_FUNC PyInit__tshmem_cuda(void)
{
    return PyModule_Create(&module_def);
}
