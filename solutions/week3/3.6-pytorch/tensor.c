/* tensor.c: torch tensors whose storage is the symmetric heap, handed over through DLPack.
 *
 * Chapter 3.6. tshmem.zeros(shape) is tshmem_calloc seen from PyTorch: every PE makes the same
 * call, gets the same offset into its slice, and wraps that memory, without a copy, in a
 * DLManagedTensor that torch.utils.dlpack.from_dlpack turns into a torch.Tensor. The heap
 * memory is never freed behind the program's back: a tensor that goes out of scope only gives
 * back its small DLPack descriptor (the deleter), because tshmem_free is collective and a
 * garbage collector runs at different moments on different PEs. tshmem.free(t) is the
 * collective release, and the module keeps a list of its live allocations so that a freed or
 * foreign tensor is a ValueError with a sentence instead of a corrupted heap.
 */
#define TSHMEM_CHAPTER "3.6"
#include <string.h>

#include "pymod.h"

static struct pymod_alloc *allocs; /* the live allocations, newest first */

struct pymod_alloc *pymod_find(const char *p, size_t bytes)
{
    for (struct pymod_alloc *a = allocs; a; a = a->next)
        if (p >= a->base && p + bytes <= a->base + a->bytes)
            return a;
    return NULL;
}

/* Provided: whether p is inside this PE's user heap at all. */
static int on_heap(const char *p)
{
    const char *heap = tshmem_g.slice + TSHMEM_RESERVED_BYTES;
    return p >= heap && p < heap + tshmem_g.heap_bytes;
}

int pymod_check_heap(const char *func, const struct pymod_tensor *info)
{
    size_t bytes = (size_t)(info->numel * info->elem_bytes);
    if (bytes == 0 || pymod_find(info->data, bytes)) /* an empty tensor owns no memory */
        return 0;
    PyErr_Format(PyExc_ValueError,
                 on_heap(info->data)
                     ? "tshmem.%s: PE %d: this tensor (at %p) points into the symmetric heap "
                       "but into no live allocation: it was freed by tshmem.free. Allocate a "
                       "new one with tshmem.zeros."
                     : "tshmem.%s: PE %d: this tensor (at %p) is not on the symmetric heap: "
                       "only tensors made by tshmem.zeros or tshmem.empty (or views of them) "
                       "can be used here.",
                 func, tshmem_my_pe(), (void *)info->data);
    return -1;
}

void pymod_free_all(void)
{
    while (allocs) {
        struct pymod_alloc *next = allocs->next;
        free(allocs);
        allocs = next;
    }
}

/* ---- DLPack ------------------------------------------------------------------------------- */
/* The descriptor and the arrays it points to, in one malloc block: one free() releases it. */
struct pymod_dl {
    DLManagedTensor managed;
    int64_t shape[PYMOD_MAX_DIMS], strides[PYMOD_MAX_DIMS];
};

/* BEGIN SOLUTION (Handing memory to PyTorch): the deleter the consumer calls when the last tensor on this memory is gone (free the descriptor, never the heap memory), and the capsule destructor (call the deleter only if nobody consumed the capsule) */
static void dl_deleter(DLManagedTensor *self)
{
    free(self->manager_ctx); /* == self: the struct pymod_dl that holds it */
}

static void capsule_destructor(PyObject *capsule)
{
    /* A consumer renames the capsule "used_dltensor" and owns the descriptor from then on.
     * Still named "dltensor": nobody took it (an error between creation and from_dlpack). */
    if (PyCapsule_IsValid(capsule, "dltensor")) {
        DLManagedTensor *m = PyCapsule_GetPointer(capsule, "dltensor");
        if (m && m->deleter)
            m->deleter(m);
    }
}
/* END SOLUTION */

/* A "dltensor" capsule describing ndim dimensions of memory at data; strides NULL: row-major. */
static PyObject *make_capsule(void *data, DLDataType dl, int ndim, const int64_t *shape,
                              const int64_t *strides)
{
    struct pymod_dl *d = calloc(1, sizeof *d);
    if (!d)
        return PyErr_NoMemory();
    /* BEGIN SOLUTION (Handing memory to PyTorch): fill the DLTensor (data, CPU device 0, ndim, dtype, shape, strides in elements, byte offset 0), point manager_ctx and deleter, and wrap it in a capsule named "dltensor" with the destructor */
    DLTensor *t = &d->managed.dl_tensor;
    t->data = data;
    t->device = (DLDevice){DL_CPU, 0};
    t->ndim = ndim;
    t->dtype = dl;
    t->shape = d->shape;
    t->strides = d->strides;
    t->byte_offset = 0;
    int64_t step = 1;
    for (int i = ndim - 1; i >= 0; i--) { /* row-major strides unless the caller gave some */
        d->shape[i] = shape[i];
        d->strides[i] = strides ? strides[i] : step;
        step *= shape[i] > 0 ? shape[i] : 1;
    }
    d->managed.manager_ctx = d;
    d->managed.deleter = dl_deleter;
    PyObject *capsule = PyCapsule_New(&d->managed, "dltensor", capsule_destructor);
    if (!capsule)
        free(d);
    return capsule;
    /* END SOLUTION */
}

/* ---- zeros / empty ------------------------------------------------------------------------- */
/* Provided: the shape tuple into dims[], and the tensor's bytes (overflow-checked). An empty
 * tensor (a 0 in the shape) has 0 bytes. */
static int read_shape(PyObject *shape, int64_t *dims, int *ndim, size_t elem, size_t *bytes)
{
    PyObject *fast = PySequence_Fast(shape, "tshmem.zeros: shape must be a tuple of ints");
    if (!fast)
        return -1;
    *ndim = (int)PySequence_Fast_GET_SIZE(fast);
    size_t total = elem;
    int bad = *ndim > PYMOD_MAX_DIMS;
    for (int i = 0; i < *ndim && !bad; i++) {
        dims[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
        bad = PyErr_Occurred() || dims[i] < 0 ||
              (dims[i] > 0 && total > SIZE_MAX / (size_t)dims[i]);
        total *= bad ? 1 : (size_t)dims[i];
    }
    Py_DECREF(fast);
    if (bad && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "tshmem.zeros: a shape of at most %d dimensions, each a "
                     "size >= 0 whose product fits in memory.", PYMOD_MAX_DIMS);
    *bytes = total;
    return bad ? -1 : 0;
}

PyObject *pymod_alloc_tensor(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *shape;
    const char *dtype;
    int zero;
    int64_t dims[PYMOD_MAX_DIMS];
    int ndim;
    size_t bytes;
    DLDataType dl;
    if (!PyArg_ParseTuple(args, "Osp", &shape, &dtype, &zero) || !pymod_live("zeros"))
        return NULL;
    if (!pymod_dl_type(dtype, &dl))
        return PyErr_Format(PyExc_TypeError, "tshmem.zeros: dtype %s is not supported; use "
                            "float32, float64, float16, bfloat16 or an integer type.", dtype);
    if (read_shape(shape, dims, &ndim, dl.bits / 8, &bytes) != 0)
        return NULL;
    char *base = NULL; /* an empty tensor owns no memory: tshmem_malloc(0) is NULL everywhere */
    /* BEGIN SOLUTION (Tensors on the heap): unless bytes is 0, allocate collectively (zeroed before the exit barrier for zeros), a clear MemoryError when the heap is full, and record the allocation in the list */
    if (bytes == 0)
        return make_capsule(NULL, dl, ndim, dims, NULL);
    /* calloc zeroes before its exit barrier: a peer that writes into my copy right after
     * zeros() returns can never have its data wiped by my memset. */
    size_t want = bytes;
    base = zero ? tshmem_calloc(1, want) : tshmem_malloc(want);
    if (!base)
        return PyErr_Format(PyExc_MemoryError,
                            "tshmem.zeros: PE %d: no room for %zu bytes on the symmetric heap "
                            "(%zu bytes in all); free tensors you no longer need or start with "
                            "a larger TSHMEM_SYMMETRIC_SIZE.", tshmem_my_pe(), want,
                            tshmem_g.heap_bytes);
    struct pymod_alloc *a = malloc(sizeof *a);
    if (!a)
        return PyErr_NoMemory();
    *a = (struct pymod_alloc){base, want, allocs};
    allocs = a;
    /* END SOLUTION */
    return make_capsule(base, dl, ndim, dims, NULL);
}

PyObject *pymod_free(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *t;
    struct pymod_tensor info;
    if (!PyArg_ParseTuple(args, "O", &t) || !pymod_live("free") ||
        pymod_tensor_info("free", t, &info) != 0)
        return NULL;
    /* BEGIN SOLUTION (Freeing): find the allocation that starts exactly at the tensor (a view into one, freed memory, a foreign tensor: each a ValueError with a sentence), take it off the list, then tshmem_free it; an empty tensor has nothing to free */
    if (pymod_check_heap("free", &info) != 0)
        return NULL;
    if (info.numel == 0) /* like tshmem_free(NULL): nothing, on every PE */
        Py_RETURN_NONE;
    struct pymod_alloc **at = &allocs;
    while (*at && (*at)->base != info.data)
        at = &(*at)->next;
    if (!*at)
        return PyErr_Format(PyExc_ValueError,
                            "tshmem.free: PE %d: this tensor is a view into a symmetric tensor, "
                            "not the tensor itself; free the tensor that tshmem.zeros or "
                            "tshmem.empty returned.", tshmem_my_pe());
    struct pymod_alloc *a = *at;
    *at = a->next;
    /* Collective: every PE frees the same allocation in the same order (barrier inside). */
    tshmem_free(a->base);
    free(a);
    Py_RETURN_NONE;
    /* END SOLUTION */
}

PyObject *pymod_peer(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *t;
    int pe;
    struct pymod_tensor info;
    if (!PyArg_ParseTuple(args, "Oi", &t, &pe) || !pymod_live("peer") ||
        pymod_tensor_info("peer", t, &info) != 0)
        return NULL;
    if (pe < 0 || pe >= tshmem_n_pes())
        return PyErr_Format(PyExc_ValueError, "tshmem.peer: PE %d asked for pe %d, but this "
                            "job has %d PEs, numbered 0 to %d.", tshmem_my_pe(), pe,
                            tshmem_n_pes(), tshmem_n_pes() - 1);
    if (info.numel == 0) /* nothing to point at: an empty tensor of the same shape */
        return make_capsule(NULL, info.dl, info.ndim, info.shape, info.strides);
    void *there = NULL;
    /* BEGIN SOLUTION (Peer views): check that the tensor is on a live allocation (a ValueError otherwise), then ask tshmem_ptr for its twin on pe */
    if (pymod_check_heap("peer", &info) != 0)
        return NULL;
    there = tshmem_ptr(info.data, pe);
    /* END SOLUTION */
    if (!there)
        Py_RETURN_NONE; /* another node: only puts and gets reach it */
    /* The same shape and strides (in elements) on the peer's copy of the same bytes. */
    return make_capsule(there, info.dl, info.ndim, info.shape, info.strides);
}
