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

/* Each call opens with TSHMEM_COLLECTIVE (tshmem_internal.h): it records the call and its size,
 * so that a PE whose allocations differ from its peers' is named (book "Debugging"). */
void *tshmem_malloc(size_t size)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_MALLOC, TSHMEM_TEAM_WORLD, size, TSHMEM_HEAP_ALIGN, 0);
    if (size == 0)
        return NULL;
    TSHMEM_TODO("The allocator", "allocate size bytes, 256-byte aligned, then wait for every PE");
}

void *tshmem_calloc(size_t count, size_t size)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_CALLOC, TSHMEM_TEAM_WORLD,
                      size && count > SIZE_MAX / size ? SIZE_MAX : count * size,
                      TSHMEM_HEAP_ALIGN, 0);
    if (count == 0 || size == 0)
        return NULL;
    TSHMEM_TODO("The allocator", "allocate count * size zeroed bytes (refuse an overflowing product)");
}

void *tshmem_align(size_t alignment, size_t size)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_ALIGN, TSHMEM_TEAM_WORLD, size,
                      alignment < TSHMEM_HEAP_ALIGN ? TSHMEM_HEAP_ALIGN : alignment, 0);
    if (size == 0)
        return NULL;
    TSHMEM_TODO("The allocator", "allocate size bytes whose address is a multiple of alignment");
}

void tshmem_free(void *ptr)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_FREE, TSHMEM_TEAM_WORLD,
                      ptr ? (uintptr_t)ptr - (uintptr_t)tshmem_g.slice : 0, 0, 0);
    if (ptr == NULL)
        return;
    TSHMEM_TODO("The allocator", "wait for every PE, then return the block and merge it with free neighbours");
}
