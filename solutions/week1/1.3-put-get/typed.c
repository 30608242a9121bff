/* typed.c: the typed forms of put and get, tshmem_int_p, tshmem_double_get and the rest.
 *
 * Provided: you do not need to edit this file. Each is a thin wrapper over the byte-oriented
 * calls you write in rma.c, generated once per type by the macro below.
 */
#include "tshmem_internal.h"

#define TSHMEM_TYPED_DEFINE(NAME, T)                                                          \
    void tshmem_##NAME##_p(T *dest, T value, int pe)                                          \
    {                                                                                         \
        tshmem_putmem(dest, &value, sizeof value, pe);                                        \
    }                                                                                         \
    T tshmem_##NAME##_g(const T *source, int pe)                                              \
    {                                                                                         \
        T value;                                                                              \
        tshmem_getmem(&value, source, sizeof value, pe);                                      \
        return value;                                                                         \
    }                                                                                         \
    void tshmem_##NAME##_put(T *dest, const T *source, size_t nelems, int pe)                 \
    {                                                                                         \
        tshmem_putmem(dest, source, nelems * sizeof(T), pe);                                  \
    }                                                                                         \
    void tshmem_##NAME##_get(T *dest, const T *source, size_t nelems, int pe)                 \
    {                                                                                         \
        tshmem_getmem(dest, source, nelems * sizeof(T), pe);                                  \
    }                                                                                         \
    void tshmem_##NAME##_put_nbi(T *dest, const T *source, size_t nelems, int pe)             \
    {                                                                                         \
        tshmem_putmem_nbi(dest, source, nelems * sizeof(T), pe);                              \
    }                                                                                         \
    void tshmem_##NAME##_get_nbi(T *dest, const T *source, size_t nelems, int pe)             \
    {                                                                                         \
        tshmem_getmem_nbi(dest, source, nelems * sizeof(T), pe);                              \
    }

TSHMEM_FOR_EACH_TYPE(TSHMEM_TYPED_DEFINE)
