/* Chapter 3.2: collectives. */
#define  TSHMEM_CHAPTER   "3.2"
#include "tshmem_internal.h"

typedef void (*reduce_fn)(void *, const void *, size_t);

static int
apply_all(void (*cb)(int pe, void *ctx),
          void *ctx /* passed to cb */, const int pes[],
          size_t npes, int scratch[TSHMEM_MAX_PES + 1],
          ...)
{
    int npes_seen = 0;
    scratch[0] = 0;
    (void)cb; (void)ctx; (void)pes; (void)npes;
    TSHMEM_TODO("Collectives", "call cb once for each PE in pes");
    return npes_seen;
}

int tshmem_apply_all(int *scratch)
{
    return apply_all(0, 0, 0, 0, scratch);
}

void
tshmem_fence(void)
{
    TSHMEM_TODO("Ordering", "order puts to each PE");
}

/* TODO (chapter 3.2, "Reductions"): a sum reducer with the reduce_fn signature */
