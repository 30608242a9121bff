/* alloc.c: the symmetric heap allocator, tshmem_malloc and friends.
 *
 * Chapter 1.2. There is no shared allocator: every PE runs the same deterministic first-fit
 * allocator over its own slice. Because every PE makes the same calls in the same order (the
 * calls are collective), every PE picks the same offset, and that is what makes an address
 * symmetric.
 */
#define TSHMEM_CHAPTER "1.2"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tshmem_internal.h"

/* TODO (chapter 1.2, "The allocator"): first-fit over the block list, with splitting and coalescing */

void *tshmem_malloc(size_t size)
{
    tshmem_require_live(__func__);
    if (size == 0)
        return NULL;
    TSHMEM_TODO("The allocator", "allocate size bytes, 256-byte aligned, then wait for every PE");
}

void *tshmem_calloc(size_t count, size_t size)
{
    tshmem_require_live(__func__);
    if (count == 0 || size == 0)
        return NULL;
    TSHMEM_TODO("The allocator", "allocate count * size zeroed bytes (refuse an overflowing product)");
}

void *tshmem_align(size_t alignment, size_t size)
{
    tshmem_require_live(__func__);
    if (size == 0)
        return NULL;
    (void)alignment;
    TSHMEM_TODO("The allocator", "allocate size bytes whose address is a multiple of alignment");
}

void tshmem_free(void *ptr)
{
    tshmem_require_live(__func__);
    if (ptr == NULL)
        return;
    TSHMEM_TODO("The allocator", "wait for every PE, then return the block and merge it with free neighbours");
}
