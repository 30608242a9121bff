/* module.c: the C extension module tshmem._tshmem: its method table, the calls that only pass
 * through to the runtime, and the reading of a torch.Tensor from C.
 *
 * Chapter 3.6 (provided). The module is loaded into a Python process that tools/tshrun started
 * as one PE: tshmem.init() is tshmem_init(), and MPI starts inside Python. Every call but init
 * first checks that the runtime is live, so that a call in the wrong order is a RuntimeError
 * with a sentence, not the runtime's stop of the whole job.
 */
#define TSHMEM_CHAPTER "3.6"
#include <string.h>

#include "pymod.h"

static int live;     /* between init() and finalize() */
static int finished; /* finalize() has run: the runtime cannot start again in this process */

int pymod_live(const char *func)
{
    if (live)
        return 1;
    PyErr_Format(PyExc_RuntimeError,
                 "tshmem.%s: %s: call tshmem.init() first, once, at the start of the program.",
                 func, finished ? "tshmem.finalize() has already run" : "tshmem is not initialized");
    return 0;
}

static PyObject *py_init(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    if (live || finished)
        return PyErr_Format(PyExc_RuntimeError,
                            "tshmem.init: %s; call it once per program.",
                            live ? "tshmem is already initialized" : "tshmem.finalize() has run");
    if (tshmem_init() != 0)
        return PyErr_Format(PyExc_RuntimeError, "tshmem.init: tshmem_init failed (see the "
                            "message above); start the program with tools/tshrun -np N.");
    live = 1;
    Py_RETURN_NONE;
}

static PyObject *py_finalize(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    if (!pymod_live("finalize"))
        return NULL;
    if (pymod_handles_in_flight() > 0)
        return PyErr_Format(PyExc_RuntimeError,
                            "tshmem.finalize: PE %d still has %d allreduce_start handle(s) not "
                            "waited for; call .wait() on each before finalize.",
                            tshmem_my_pe(), pymod_handles_in_flight());
    live = 0;
    finished = 1;
    pymod_free_all();
    tshmem_finalize();
    Py_RETURN_NONE;
}

static PyObject *py_my_pe(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return pymod_live("my_pe") ? PyLong_FromLong(tshmem_my_pe()) : NULL;
}

static PyObject *py_n_pes(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return pymod_live("n_pes") ? PyLong_FromLong(tshmem_n_pes()) : NULL;
}

static PyObject *py_barrier_all(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    if (!pymod_live("barrier_all"))
        return NULL;
    /* Other Python threads may run while this PE waits for the others. */
    Py_BEGIN_ALLOW_THREADS tshmem_barrier_all();
    Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

/* ---- Reading a torch.Tensor from C ------------------------------------------------------- */
static const struct {
    const char *name;
    DLDataType dl;
} dtypes[] = {
    {"float32", {DL_FLOAT, 32, 1}}, {"float64", {DL_FLOAT, 64, 1}},
    {"float16", {DL_FLOAT, 16, 1}}, {"bfloat16", {DL_BFLOAT, 16, 1}},
    {"int8", {DL_INT, 8, 1}},       {"int16", {DL_INT, 16, 1}},
    {"int32", {DL_INT, 32, 1}},     {"int64", {DL_INT, 64, 1}},
    {"uint8", {DL_UINT, 8, 1}},
};

/* The DLPack type of a dtype name ("float32"); 0 if DLPack cannot carry it here. */
static int dl_type(const char *name, DLDataType *dl)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (!strcmp(dtypes[i].name, name)) {
            *dl = dtypes[i].dl;
            return 1;
        }
    return 0;
}

/* An integer attribute or method result of t, e.g. call_int(t, "numel", &v). */
static int call_int(PyObject *t, const char *method, int64_t *out)
{
    PyObject *r = PyObject_CallMethod(t, method, NULL);
    if (!r)
        return -1;
    *out = (int64_t)PyLong_AsLongLong(r);
    Py_DECREF(r);
    return PyErr_Occurred() ? -1 : 0;
}

/* A tuple-like of ints (t.shape, t.stride()) into out[0 .. n-1]. */
static int int_list(PyObject *seq, int64_t *out, int n)
{
    PyObject *fast = seq ? PySequence_Fast(seq, "expected a sequence of ints") : NULL;
    if (!fast)
        return -1;
    for (int i = 0; i < n && i < (int)PySequence_Fast_GET_SIZE(fast); i++)
        out[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
    Py_DECREF(fast);
    return PyErr_Occurred() ? -1 : 0;
}

int pymod_tensor_info(const char *func, PyObject *t, struct pymod_tensor *info)
{
    memset(info, 0, sizeof *info);
    PyObject *device = PyObject_GetAttrString(t, "device");
    PyObject *dev_s = device ? PyObject_Str(device) : NULL;
    const char *dev = dev_s ? PyUnicode_AsUTF8(dev_s) : NULL;
    int cpu = dev && !strcmp(dev, "cpu");
    Py_XDECREF(dev_s);
    Py_XDECREF(device);
    if (!dev || !PyObject_HasAttrString(t, "data_ptr")) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "tshmem.%s: expected a torch.Tensor, got %s.", func,
                     Py_TYPE(t)->tp_name);
        return -1;
    }
    if (!cpu) {
        PyErr_Format(PyExc_TypeError, "tshmem.%s: the tensor is on %s; this module's tensors "
                     "live on the CPU (the symmetric heap in /dev/shm).", func, dev);
        return -1;
    }
    int64_t contiguous = 0, ndim = 0, data = 0;
    PyObject *dtype = PyObject_GetAttrString(t, "dtype");
    PyObject *dtype_s = dtype ? PyObject_Str(dtype) : NULL;
    const char *name = dtype_s ? PyUnicode_AsUTF8(dtype_s) : NULL;
    if (name)
        snprintf(info->dtype, sizeof info->dtype, "%s", strncmp(name, "torch.", 6) ? name : name + 6);
    Py_XDECREF(dtype_s);
    Py_XDECREF(dtype);
    PyObject *shape = PyObject_GetAttrString(t, "shape");
    PyObject *stride = PyObject_CallMethod(t, "stride", NULL);
    int bad = !name || call_int(t, "data_ptr", &data) || call_int(t, "numel", &info->numel) ||
              call_int(t, "element_size", &info->elem_bytes) ||
              call_int(t, "is_contiguous", &contiguous) || call_int(t, "dim", &ndim) ||
              ndim > PYMOD_MAX_DIMS || int_list(shape, info->shape, (int)ndim) ||
              int_list(stride, info->strides, (int)ndim);
    Py_XDECREF(shape);
    Py_XDECREF(stride);
    if (bad) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "tshmem.%s: a tensor of more than %d dimensions.",
                         func, PYMOD_MAX_DIMS);
        return -1;
    }
    info->data = (char *)(uintptr_t)data;
    info->contiguous = (int)contiguous;
    info->ndim = (int)ndim;
    if (!dl_type(info->dtype, &info->dl)) {
        PyErr_Format(PyExc_TypeError, "tshmem.%s: dtype %s is not supported; use float32, "
                     "float64, float16, bfloat16 or an integer type.", func, info->dtype);
        return -1;
    }
    return 0;
}

/* _alloc's dtype argument is a name ("float32"); tensor.c asks here for its DLPack type. */
int pymod_dl_type(const char *name, DLDataType *dl)
{
    return dl_type(name, dl);
}

static PyMethodDef methods[] = {
    {"init", py_init, METH_NOARGS, "init(): start the runtime on this PE (collective)."},
    {"finalize", py_finalize, METH_NOARGS, "finalize(): stop it (collective)."},
    {"my_pe", py_my_pe, METH_NOARGS, "my_pe() -> this PE's number."},
    {"n_pes", py_n_pes, METH_NOARGS, "n_pes() -> the number of PEs."},
    {"barrier_all", py_barrier_all, METH_NOARGS, "barrier_all(): quiet, then all PEs meet."},
    {"_alloc", pymod_alloc_tensor, METH_VARARGS,
     "_alloc(shape, dtype_name, zero) -> a DLPack capsule of a new symmetric tensor."},
    {"free", pymod_free, METH_VARARGS, "free(t): release a tensor of zeros/empty (collective)."},
    {"_peer", pymod_peer, METH_VARARGS, "_peer(t, pe) -> a capsule of t as PE pe holds it, or None."},
    {"allreduce_", pymod_allreduce, METH_VARARGS, "allreduce_(t): in-place sum over all PEs."},
    {"allreduce_start", pymod_allreduce_start, METH_VARARGS,
     "allreduce_start(t) -> Handle: start the in-place sum; handle.wait() completes it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_tshmem",
    .m_doc = "tshmem's runtime for PyTorch: tensors on the symmetric heap and collectives on them.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__tshmem(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m && pymod_add_handle_type(m) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
