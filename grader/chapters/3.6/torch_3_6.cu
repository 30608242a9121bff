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
 * Calls up to 1 MiB take a low-latency path of this file's own (ll_allreduce_kernel, below),
 * larger ones chapter 3.3's ring. float32 only (3.3's allreduce sums floats). Errors are Python
 * exceptions with a sentence. */
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
#define TORCH_LL_DEFAULT (1 << 20) /* bytes: calls up to this size take the LL path (below) */

/* Small calls: NCCL's "low-latency" protocol. Each float travels with the call's number in one
 * 8-byte store into every peer's landing area, through nvshmem_ptr; a peer polls its own memory
 * until every word carries the number, then sums the n copies in PE order (the same bits on
 * every PE). No fence, no separate flag: one NVLink crossing where the one-shot path of 3.3 has
 * a put, a system fence, a flag and a quiet. Odd and even calls use two areas, so a PE one call
 * ahead never overwrites words a peer is still reading. Twice the bytes on the link, so only
 * for small calls: on two H200s it beat 3.3's one shot at every size up to 1 MiB (7.0 against
 * 10.4 us at 4 KiB, 8.8 against 11.8 at 256 KiB, 13.0 against 15.0 at 1 MiB, on the GPU), the
 * default threshold; the study prints both (tshmem_ll, tshmem_3.3). */
#define TORCH_LL_MAX (1 << 20) /* bytes: the largest call _ll may send this way */
#define TORCH_LL_WORDS (TORCH_LL_MAX / 4)
#define TORCH_LL_THREADS 256
static unsigned long long *ll_area; /* symmetric: [2][n_pes][TORCH_LL_WORDS] */
static uint32_t ll_seq;
static size_t ll_max; /* bytes: calls up to this size take the LL path (0: never) */

__global__ void ll_allreduce_kernel(float *data, unsigned long long *area, size_t count,
                                    uint32_t seq)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x, par = seq & 1;
    if (i >= count)
        return;
    float v = data[i];
    unsigned long long word = (unsigned long long)seq << 32 | __float_as_uint(v);
    unsigned long long *mine = area + (par * n + me) * TORCH_LL_WORDS + i;
    for (int k = 1; k < n; k++)
        *(volatile unsigned long long *)nvshmem_ptr(mine, (me + k) % n) = word;
    float sum = 0;
    for (int p = 0; p < n; p++) {
        if (p == me) {
            sum += v;
            continue;
        }
        volatile unsigned long long *w = area + (par * n + p) * TORCH_LL_WORDS + i;
        unsigned long long got;
        while ((uint32_t)((got = *w) >> 32) != seq)
            ;
        sum += __uint_as_float((uint32_t)got);
    }
    data[i] = sum;
}

/* The allreduce of `count` floats at `data` on `st`: LL up to ll_max, else chapter 3.3's. */
static void allreduce_on(float *data, size_t count, cudaStream_t st)
{
    if (count && count * sizeof(float) <= ll_max && nvshmem_n_pes() > 1) {
        /* After 2^32 - 1 calls the numbers would come round again, and a word last written
         * 2^32 calls ago would pass for new: every PE (all reach this call) clears first. */
        if (ll_seq == UINT32_MAX) {
            size_t bytes = 2 * (size_t)nvshmem_n_pes() * TORCH_LL_WORDS * sizeof *ll_area;
            TG_CUDA(cudaDeviceSynchronize());
            nvshmem_barrier_all();
            TG_CUDA(cudaMemset(ll_area, 0, bytes));
            TG_CUDA(cudaDeviceSynchronize());
            nvshmem_barrier_all();
            ll_seq = 0;
        }
        uint32_t seq = ++ll_seq;
        unsigned blocks = (unsigned)((count + TORCH_LL_THREADS - 1) / TORCH_LL_THREADS);
        ll_allreduce_kernel<<<blocks, TORCH_LL_THREADS, 0, st>>>(data, ll_area, count, seq);
        TG_CUDA(cudaGetLastError());
        return;
    }
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
    ll_seq = 0;
    ll_max = TORCH_LL_DEFAULT;
    for (int p = 0; p < n; p++)
        if (!nvshmem_ptr(ll_area, p))
            ll_max = 0; /* a peer not reachable by stores (another node): 3.3's paths only */
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
    ll_area = NULL;
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

/* _tune(ctas, threads[, min_chunk]): the most blocks an allreduce uses, their size and the
 * least floats of a chunk (the study compares them); every PE must pass the same. */
static PyObject *py_tune(PyObject *, PyObject *args)
{
    int ctas, threads;
    long long min_chunk = 0;
    NEED_LIVE("_tune");
    if (!PyArg_ParseTuple(args, "ii|L", &ctas, &threads, &min_chunk))
        return NULL;
    if (min_chunk < 0)
        return fail(PyExc_ValueError, "tshmem_cuda._tune: min_chunk = %lld floats: give 0 (keep "
                    "it) or more.", min_chunk);
    if (ctas < 1 || ctas > TG_AR_MAX_CTAS || threads < 32 || threads > 1024 || threads % 32)
        return fail(PyExc_ValueError, "tshmem_cuda._tune: %d blocks of %d threads: 1 to %d "
                    "blocks of 32 to 1024 threads (a multiple of 32).", ctas, threads,
                    TG_AR_MAX_CTAS);
    TG_CUDA(cudaDeviceSynchronize()); /* no allreduce is running with the old grid */
    ar.ctas = ctas;
    ar.threads = threads;
    if (min_chunk)
        ar.min_chunk = (size_t)min_chunk;
    Py_RETURN_NONE;
}

/* _ll(max_bytes): calls up to max_bytes (at most TORCH_LL_MAX; 0: none) take the LL path. */
static PyObject *py_ll(PyObject *, PyObject *args)
{
    long long bytes;
    NEED_LIVE("_ll");
    if (!PyArg_ParseTuple(args, "L", &bytes))
        return NULL;
    if (bytes < 0 || bytes > TORCH_LL_MAX)
        return fail(PyExc_ValueError, "tshmem_cuda._ll: %lld bytes: give 0 (off) to %d.", bytes,
                    TORCH_LL_MAX);
    for (int p = 0; bytes && p < nvshmem_n_pes(); p++)
        if (!nvshmem_ptr(ll_area, p))
            return fail(PyExc_ValueError, "tshmem_cuda._ll: PE %d cannot store into PE %d's "
                        "memory (nvshmem_ptr is NULL): the LL path needs every peer on NVLink.",
                        nvshmem_my_pe(), p);
    TG_CUDA(cudaDeviceSynchronize());
    ll_max = (size_t)bytes;
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
    {"_tune", py_tune, METH_VARARGS, "_tune(ctas, threads[, min_chunk]): the allreduce's grid"},
    {"_ll", py_ll, METH_VARARGS, "_ll(max_bytes): the largest call of the LL path (0: off)"},
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
