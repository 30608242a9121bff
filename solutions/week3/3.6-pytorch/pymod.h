/* pymod.h: what the three C files of the Python module `tshmem` share (chapter 3.6).
 *
 * The module is the runtime seen from Python: module.c has the calls that only pass through
 * (init, my_pe, barrier_all, ...), tensor.c hands symmetric-heap memory to PyTorch without a
 * copy (DLPack), collective.c runs the allreduce of chapters 2.2 and 2.4 on such tensors.
 * Every error is a Python exception carrying a sentence: a Python program must never be ended
 * by a C-level stop for a mistake it can catch.
 */
#ifndef TSHMEM_PYMOD_H
#define TSHMEM_PYMOD_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "tshmem_internal.h"

/* ---- DLPack: the exchange format for tensors (v0.x ABI, which torch.utils.dlpack reads) -----
 * A DLPack tensor is a plain C struct that describes memory someone else owns: pointer, device,
 * element type, shape and strides. The producer wraps a DLManagedTensor in a PyCapsule named
 * "dltensor"; the consumer (torch.utils.dlpack.from_dlpack) renames the capsule
 * "used_dltensor", keeps the struct, and calls its deleter when the last tensor using the
 * memory is gone. The layouts below are fixed by the DLPack ABI: field order and sizes matter. */
enum { DL_CPU = 1, DL_CUDA = 2 };                       /* DLDeviceType */
enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4 }; /* DLDataTypeCode */

typedef struct {
    int32_t device_type; /* DL_CPU here; DL_CUDA for the GPU twin of this module */
    int32_t device_id;
} DLDevice;

typedef struct {
    uint8_t code;   /* DL_INT, DL_UINT, DL_FLOAT, DL_BFLOAT */
    uint8_t bits;   /* 8, 16, 32, 64 */
    uint16_t lanes; /* 1: one value per element */
} DLDataType;

typedef struct {
    void *data; /* the first byte of the tensor (plus byte_offset) */
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;   /* ndim entries */
    int64_t *strides; /* ndim entries, in elements; NULL means compact row-major */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;                        /* the producer's own data */
    void (*deleter)(struct DLManagedTensor *self); /* called once, by the consumer */
} DLManagedTensor;

#define PYMOD_MAX_DIMS 16

/* ---- Provided by module.c ------------------------------------------------------------------ */
/* 1 when tshmem.init() has run and tshmem.finalize() has not; else raises RuntimeError naming
 * func and returns 0. Every call but init starts with it. */
int pymod_live(const char *func);

/* What the C side needs of a torch.Tensor, read through its Python methods. */
struct pymod_tensor {
    char *data;           /* t.data_ptr(): the first element (storage offset included) */
    int64_t numel;        /* t.numel() */
    int64_t elem_bytes;   /* t.element_size() */
    int contiguous;       /* t.is_contiguous() */
    int ndim;             /* t.dim() */
    int64_t shape[PYMOD_MAX_DIMS], strides[PYMOD_MAX_DIMS]; /* t.shape, t.stride() */
    char dtype[24];       /* str(t.dtype) without "torch.": "float32", "int64", ... */
    DLDataType dl;        /* the DLPack type of dtype */
};
/* Fills *info from t; raises TypeError (naming func) and returns -1 when t is not a CPU tensor
 * or has a type DLPack cannot carry here. */
int pymod_tensor_info(const char *func, PyObject *t, struct pymod_tensor *info);
/* The DLPack type of a dtype name ("float32"); 0 if this module does not carry it. */
int pymod_dl_type(const char *name, DLDataType *dl);

/* ---- tensor.c (chapter 3.6's tasks) -------------------------------------------------------- */
/* One symmetric allocation made by tshmem.zeros / tshmem.empty, in the module's own list. */
struct pymod_alloc {
    char *base;   /* what tshmem_malloc returned: the same offset on every PE */
    size_t bytes; /* what the tensor needs (> 0: an empty tensor has no allocation) */
    struct pymod_alloc *next;
};
/* The live allocation holding [p, p + bytes), or NULL. */
struct pymod_alloc *pymod_find(const char *p, size_t bytes);
/* Raises ValueError naming func and returns -1 unless info's memory lies inside one live
 * allocation (it says whether the tensor is freed memory or not on the heap at all). */
int pymod_check_heap(const char *func, const struct pymod_tensor *info);

PyObject *pymod_alloc_tensor(PyObject *self, PyObject *args); /* _alloc(shape, dtype, zero) */
PyObject *pymod_free(PyObject *self, PyObject *args);         /* free(t) */
PyObject *pymod_peer(PyObject *self, PyObject *args);         /* peer(t, pe) */
void pymod_free_all(void); /* forget every allocation (finalize) */

/* ---- collective.c (chapter 3.6's tasks) ---------------------------------------------------- */
PyObject *pymod_allreduce(PyObject *self, PyObject *args);       /* allreduce_(t) */
PyObject *pymod_allreduce_start(PyObject *self, PyObject *args); /* allreduce_start(t) */
int pymod_add_handle_type(PyObject *module);                     /* tshmem.Handle */
int pymod_handles_in_flight(void); /* started and not yet waited for */

#endif
