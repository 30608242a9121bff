/* combine.c: the arithmetic of a reduction: out[i] = a[i] (op) b[i].
 *
 * Provided: you do not need to edit this file; call tshmem_reduce_local (inout (op)= in) and
 * tshmem_reduce_local3 (out = a (op) b) from your algorithms.
 *
 * An allreduce spends its time moving bytes and combining them, and on a CPU the combining is
 * only cheap if the compiler turns it into vector instructions (addps adds 4 floats at once).
 * Two habits make that happen at -O2:
 *   - one loop per (type, op, form), with `restrict` pointers: the compiler may assume the
 *     arrays do not overlap, so it can load, combine and store several elements at once;
 *   - an inner loop of a fixed 16 elements: GCC's -O2 only vectorizes a loop whose vector form
 *     replaces it entirely, which a fixed trip count guarantees. The few elements left over go
 *     through a plain loop.
 * The operands always combine as a (op) b in that order, so two PEs that combine the same two
 * vectors get the same bits.
 */
#define TSHMEM_CHAPTER "2.2"
#include "tshmem_internal.h"

#define LANES 16 /* elements per vectorized step: 64 bytes of float, 128 of double or int64 */

#define SUM(x, y) ((x) + (y))
#define MAX(x, y) ((x) < (y) ? (y) : (x))

/* Three loops per (type, op): o = a (op) b with o distinct, a (op)= b, and b = a (op) b. */
#define COMBINE(NAME, T, EXPR)                                                                \
    static void NAME##_3(T *restrict o, const T *restrict a, const T *restrict b, size_t n)   \
    {                                                                                         \
        size_t i = 0;                                                                         \
        for (; i + LANES <= n; i += LANES) {                                                  \
            T *restrict x = o + i;                                                            \
            const T *restrict y = a + i, *restrict z = b + i;                                 \
            for (int k = 0; k < LANES; k++)                                                   \
                x[k] = EXPR(y[k], z[k]);                                                      \
        }                                                                                     \
        for (; i < n; i++)                                                                    \
            o[i] = EXPR(a[i], b[i]);                                                          \
    }                                                                                         \
    static void NAME##_a(T *restrict a, const T *restrict b, size_t n)                        \
    {                                                                                         \
        size_t i = 0;                                                                         \
        for (; i + LANES <= n; i += LANES) {                                                  \
            T *restrict x = a + i;                                                            \
            const T *restrict y = b + i;                                                      \
            for (int k = 0; k < LANES; k++)                                                   \
                x[k] = EXPR(x[k], y[k]);                                                      \
        }                                                                                     \
        for (; i < n; i++)                                                                    \
            a[i] = EXPR(a[i], b[i]);                                                          \
    }                                                                                         \
    static void NAME##_b(const T *restrict a, T *restrict b, size_t n)                        \
    {                                                                                         \
        size_t i = 0;                                                                         \
        for (; i + LANES <= n; i += LANES) {                                                  \
            const T *restrict x = a + i;                                                      \
            T *restrict y = b + i;                                                            \
            for (int k = 0; k < LANES; k++)                                                   \
                y[k] = EXPR(x[k], y[k]);                                                      \
        }                                                                                     \
        for (; i < n; i++)                                                                    \
            b[i] = EXPR(a[i], b[i]);                                                          \
    }                                                                                         \
    static void NAME(void *o, const void *a, const void *b, size_t n)                         \
    {                                                                                         \
        if (o == a)                                                                           \
            NAME##_a(o, b, n);                                                                \
        else if (o == b)                                                                      \
            NAME##_b(a, o, n);                                                                \
        else                                                                                  \
            NAME##_3(o, a, b, n);                                                             \
    }

COMBINE(sum_float, float, SUM)
COMBINE(sum_double, double, SUM)
COMBINE(sum_int64, int64_t, SUM)
COMBINE(max_float, float, MAX)
COMBINE(max_double, double, MAX)
COMBINE(max_int64, int64_t, MAX)

size_t tshmem_dtype_size(enum tshmem_dtype dtype)
{
    switch (dtype) {
    case TSHMEM_DTYPE_FLOAT: return sizeof(float);
    case TSHMEM_DTYPE_DOUBLE: return sizeof(double);
    case TSHMEM_DTYPE_INT64: return sizeof(int64_t);
    }
    return 0; /* not a dtype: the caller reports it */
}

void tshmem_reduce_local3(enum tshmem_dtype dtype, enum tshmem_op op, void *out, const void *a,
                          const void *b, size_t count)
{
    if (count == 0)
        return;
    int sum = op == TSHMEM_OP_SUM;
    switch (dtype) {
    case TSHMEM_DTYPE_FLOAT:
        (sum ? sum_float : max_float)(out, a, b, count);
        break;
    case TSHMEM_DTYPE_DOUBLE:
        (sum ? sum_double : max_double)(out, a, b, count);
        break;
    case TSHMEM_DTYPE_INT64:
        (sum ? sum_int64 : max_int64)(out, a, b, count);
        break;
    }
}

void tshmem_reduce_local(enum tshmem_dtype dtype, enum tshmem_op op, void *inout, const void *in,
                         size_t count)
{
    tshmem_reduce_local3(dtype, op, inout, inout, in, count);
}
