/* Chapter 1.3: put and get. */
#define TSHMEM_CHAPTER "1.3"
#include "tshmem_internal.h"

/* TODO (chapter 1.3, "Helpers"): a helper that finds the peer's copy */

void tshmem_putmem(void *dest, const void *source, size_t nbytes,
                   int pe)
{
    tshmem_check_pe(__func__, pe);
    (void)dest; (void)source; (void)nbytes;
    TSHMEM_TODO("Put and get", "copy nbytes from source to dest's twin on pe");
}

int tshmem_heap_create(void)
{
    /* TODO ("The segment"): create and map the node's segment */
    return 0;
}
