/* collective.c: the allreduce of chapter 2.2 and the requests of chapter 2.4 on torch tensors.
 *
 * Chapter 3.6. tshmem.allreduce_(t) sums t over all PEs in place (the trailing underscore is
 * PyTorch's mark of an in-place operation). tshmem.allreduce_start(t) starts the same sum on
 * 2.4's progress thread and returns a Handle at once; handle.wait() blocks until the sum is in
 * t. Until then t belongs to the collective: reading or writing it races with the PEs that
 * are adding into it. The Handle keeps a reference to t, so the tensor's memory cannot go away
 * while a request is in flight even if the program drops every other reference.
 *
 * While this PE waits, the GIL is released: another Python thread of this process (a data
 * loader, say) can run, and nothing in the runtime calls back into Python.
 */
#define TSHMEM_CHAPTER "3.6"
#include <string.h>

#include "pymod.h"

static int in_flight; /* handles started and not yet waited for, on this PE */

int pymod_handles_in_flight(void)
{
    return in_flight;
}

/* Provided: the checks both calls share. 0, or -1 with the exception set; *dtype is the
 * runtime's element type for the tensor's dtype. */
static int reducible(const char *func, PyObject *t, struct pymod_tensor *info,
                     enum tshmem_dtype *dtype)
{
    if (!pymod_live(func) || pymod_tensor_info(func, t, info) != 0)
        return -1;
    if (strcmp(info->dtype, "float32") && strcmp(info->dtype, "float64")) {
        PyErr_Format(PyExc_TypeError, "tshmem.%s: PE %d passed a tensor of dtype %s; the sum "
                     "is defined here for float32 and float64 tensors (convert with .float()).",
                     func, tshmem_my_pe(), info->dtype);
        return -1;
    }
    if (!info->contiguous) {
        PyErr_Format(PyExc_ValueError, "tshmem.%s: PE %d passed a non-contiguous tensor; the "
                     "runtime sums one run of elements. Reduce the tensor it is a view of, or "
                     "a contiguous slice.", func, tshmem_my_pe());
        return -1;
    }
    *dtype = info->dl.bits == 32 ? TSHMEM_DTYPE_FLOAT : TSHMEM_DTYPE_DOUBLE;
    return pymod_check_heap(func, info);
}

PyObject *pymod_allreduce(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *t;
    struct pymod_tensor info;
    enum tshmem_dtype dtype;
    if (!PyArg_ParseTuple(args, "O", &t) || reducible("allreduce_", t, &info, &dtype) != 0)
        return NULL;
    if (info.numel == 0) /* nothing to sum, on every PE: no call at all */
        return Py_NewRef(t);
    /* BEGIN SOLUTION (The allreduce on a tensor): sum the tensor's elements in place over TSHMEM_TEAM_WORLD with chapter 2.2's tshmem_allreduce (the selector's algorithm), with the GIL released while this PE waits; a RuntimeError if it fails */
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = tshmem_allreduce(TSHMEM_TEAM_WORLD, info.data, info.data,
                                                 (size_t)info.numel, dtype, TSHMEM_OP_SUM,
                                                 TSHMEM_ALGO_AUTO);
    Py_END_ALLOW_THREADS if (rc != 0) return PyErr_Format(
        PyExc_RuntimeError, "tshmem.allreduce_: PE %d: tshmem_allreduce returned %d.",
        tshmem_my_pe(), rc);
    Py_INCREF(t);
    return t; /* like torch's in-place calls: the same tensor, for chaining */
    /* END SOLUTION */
}

/* ---- tshmem.Handle ------------------------------------------------------------------------ */
typedef struct {
    PyObject_HEAD tshmem_request_t req; /* TSHMEM_REQUEST_NULL once complete */
    PyObject *tensor;                   /* kept alive while the request is in flight */
} Handle;

static int handle_finish(Handle *h)
{
    int rc = 0;
    /* BEGIN SOLUTION (Handles): wait for the request with the GIL released (a second wait returns at once), count it off, and let go of the tensor */
    if (h->req != TSHMEM_REQUEST_NULL) {
        Py_BEGIN_ALLOW_THREADS rc = tshmem_wait(&h->req);
        Py_END_ALLOW_THREADS in_flight--;
    }
    Py_CLEAR(h->tensor);
    /* END SOLUTION */
    return rc;
}

static PyObject *handle_wait(PyObject *self, PyObject *args)
{
    (void)args;
    int rc = handle_finish((Handle *)self);
    if (rc != 0)
        return PyErr_Format(PyExc_RuntimeError, "Handle.wait: PE %d: tshmem_wait returned %d.",
                            tshmem_my_pe(), rc);
    Py_RETURN_NONE;
}

static PyObject *handle_done(PyObject *self, PyObject *args)
{
    (void)args;
    return PyBool_FromLong(((Handle *)self)->req == TSHMEM_REQUEST_NULL);
}

/* A handle dropped without wait(): the request still writes into the tensor, so finish it
 * here rather than leave the runtime with a request nobody will ever complete. */
static void handle_dealloc(PyObject *self)
{
    handle_finish((Handle *)self);
    Py_TYPE(self)->tp_free(self);
}

static PyMethodDef handle_methods[] = {
    {"wait", handle_wait, METH_NOARGS, "wait(): until the sum is in the tensor."},
    {"is_completed", handle_done, METH_NOARGS, "is_completed() -> True once wait() returned."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject handle_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tshmem.Handle",
    .tp_basicsize = sizeof(Handle),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A started allreduce; wait() completes it.",
    .tp_methods = handle_methods,
    .tp_dealloc = handle_dealloc,
};

int pymod_add_handle_type(PyObject *module)
{
    if (PyType_Ready(&handle_type) < 0)
        return -1;
    Py_INCREF(&handle_type);
    return PyModule_AddObject(module, "Handle", (PyObject *)&handle_type);
}

PyObject *pymod_allreduce_start(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *t;
    struct pymod_tensor info;
    enum tshmem_dtype dtype;
    if (!PyArg_ParseTuple(args, "O", &t) || reducible("allreduce_start", t, &info, &dtype) != 0)
        return NULL;
    if (in_flight >= TSHMEM_MAX_REQUESTS)
        return PyErr_Format(PyExc_RuntimeError, "tshmem.allreduce_start: PE %d already has %d "
                            "handles in flight, the most the runtime keeps; wait() for some "
                            "first.", tshmem_my_pe(), in_flight);
    Handle *h = PyObject_New(Handle, &handle_type);
    if (!h)
        return NULL;
    h->req = TSHMEM_REQUEST_NULL;
    h->tensor = NULL;
    if (info.numel == 0) /* nothing to sum: a handle that is complete already */
        return (PyObject *)h;
    /* BEGIN SOLUTION (Handles): start chapter 2.4's tshmem_allreduce_nb in place on the tensor, keep a reference to the tensor in the handle, count the request in flight */
    int rc = tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, info.data, info.data, (size_t)info.numel,
                                 dtype, TSHMEM_OP_SUM, &h->req);
    if (rc != 0) {
        Py_DECREF(h);
        return PyErr_Format(PyExc_RuntimeError, "tshmem.allreduce_start: PE %d: "
                            "tshmem_allreduce_nb returned %d.", tshmem_my_pe(), rc);
    }
    if (h->req != TSHMEM_REQUEST_NULL)
        in_flight++;
    Py_INCREF(t);
    h->tensor = t;
    /* END SOLUTION */
    return (PyObject *)h;
}
