/* pe_reduce.h: what the reduction tests (2.2, 2.4) share: four kinds of element and op, source
 * values that make every sum exact whatever the order of the additions, and a team made by hand
 * (these chapters come before 2.5's tshmem_team_split_strided). */
#ifndef PE_REDUCE_H
#define PE_REDUCE_H

#include <stdint.h>

#include <stdlib.h>

#include "tshmem.h"
#include "tshmem_internal.h" /* white box: the runtime's team table */

enum kind { FLOAT_SUM, DOUBLE_SUM, INT64_SUM, FLOAT_MAX, N_KINDS };
static const char *kind_name[] = {"float sum", "double sum", "int64 sum", "float max"};
static const enum tshmem_dtype kind_dtype[] = {TSHMEM_DTYPE_FLOAT, TSHMEM_DTYPE_DOUBLE,
                                               TSHMEM_DTYPE_INT64, TSHMEM_DTYPE_FLOAT};
static const enum tshmem_op kind_op[] = {TSHMEM_OP_SUM, TSHMEM_OP_SUM, TSHMEM_OP_SUM,
                                         TSHMEM_OP_MAX};

static inline size_t kind_size(enum kind k)
{
    return k == FLOAT_SUM || k == FLOAT_MAX ? sizeof(float) : 8;
}

/* Element i of world PE pe's source in call `salt`: integer-valued, so that every sum is
 * exact whatever the order of the additions, and different for every PE, index and call. */
static inline int64_t base(int pe, size_t i, unsigned salt)
{
    return (int64_t)((i * 37u + (unsigned)pe * 101u + salt * 13u) % 2001u) - 1000;
}

static inline void fill(enum kind k, void *buf, size_t count, int pe, unsigned salt)
{
    for (size_t i = 0; i < count; i++) {
        int64_t b = base(pe, i, salt);
        switch (k) {
        case FLOAT_SUM: ((float *)buf)[i] = (float)b; break;
        case DOUBLE_SUM: ((double *)buf)[i] = (double)b * 0.25 + pe * 65536.0; break;
        case INT64_SUM: ((int64_t *)buf)[i] = b * 1000000007LL + ((int64_t)pe << 40); break;
        case FLOAT_MAX:
            ((float *)buf)[i] = (float)((int64_t)((i * 7919u + (unsigned)pe * 104729u + salt) %
                                                  100003u) - 50000);
            break;
        default: break;
        }
    }
}

/* A team made by hand, as tshmem_team_split_strided would make it: `size` world PEs from
 * `start`, `stride` apart. White box: the runtime's team table (chapter 1.1). */
static inline tshmem_team_t team_by_hand(int start, int stride, int size)
{
    enum { HANDLE = 5 };
    struct tshmem_team *t = &tshmem_g.teams[HANDLE];
    int n = tshmem_n_pes();
    t->pes = malloc(sizeof(int) * (size_t)n);
    t->n_pes = 0;
    t->my_pe = -1;
    t->sync_seq = 0;
    for (int pe = start; pe < n && t->n_pes < size; pe += stride) {
        if (pe == tshmem_my_pe())
            t->my_pe = t->n_pes;
        t->pes[t->n_pes++] = pe;
    }
    return HANDLE;
}

#endif
