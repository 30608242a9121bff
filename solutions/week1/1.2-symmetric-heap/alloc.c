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

/* BEGIN SOLUTION (The allocator): first-fit over the block list, with splitting and coalescing */
static struct tshmem_block *new_block(size_t offset, size_t size, int used,
                                      struct tshmem_block *next)
{
    struct tshmem_block *b = malloc(sizeof *b);
    if (!b)
        tshmem_fail("tshmem_malloc", "out of private memory for the allocator's bookkeeping.");
    *b = (struct tshmem_block){offset, size, used, next};
    return b;
}

/* The first time: one free block that covers the whole user heap. */
static void heap_start(void)
{
    struct tshmem_state *g = &tshmem_g;
    if (!g->blocks)
        g->blocks = new_block(TSHMEM_RESERVED_BYTES, g->heap_bytes, 0, NULL);
}

/* First fit: the lowest free block that can hold size bytes at an aligned start. It is cut
 * into [gap][taken][rest]; the gap and the rest stay free. */
static void *heap_take(size_t alignment, size_t size)
{
    for (struct tshmem_block *b = tshmem_g.blocks; b; b = b->next) {
        if (b->used)
            continue;
        size_t start = (b->offset + alignment - 1) / alignment * alignment;
        size_t gap = start - b->offset;
        if (gap > b->size || b->size - gap < size)
            continue;
        if (gap) {
            b->next = new_block(start, b->size - gap, 0, b->next);
            b->size = gap;
            b = b->next;
        }
        if (b->size > size) {
            b->next = new_block(b->offset + size, b->size - size, 0, b->next);
            b->size = size;
        }
        b->used = 1;
        return tshmem_g.slice + b->offset;
    }
    return NULL;
}

static void no_room(const char *func, size_t size)
{
    char want[32], big[32], all[32];
    size_t largest = 0;
    for (struct tshmem_block *b = tshmem_g.blocks; b; b = b->next)
        if (!b->used && b->size > largest)
            largest = b->size;
    if (tshmem_g.my_pe == 0)
        tshmem_warn(func, "no room for %s in the symmetric heap (largest free block %s of %s); "
                    "returning NULL. Free something, or set TSHMEM_SYMMETRIC_SIZE larger.",
                    tshmem_bytes_str(size, want, sizeof want),
                    tshmem_bytes_str(largest, big, sizeof big),
                    tshmem_bytes_str(tshmem_g.heap_bytes, all, sizeof all));
}

/* Every public entry point comes here: checks, then the allocation, without the barrier. */
static void *heap_alloc(const char *func, size_t alignment, size_t size)
{
    tshmem_check_same_size(func, size);
    if (alignment == 0 || (alignment & (alignment - 1)))
        tshmem_fail(func, "alignment %zu is not a power of two.", alignment);
    if (alignment > TSHMEM_SLICE_ALIGN)
        tshmem_fail(func, "alignment %zu is larger than the 2 MiB boundary every slice starts on; "
                    "ask for 2 MiB or less.", alignment);
    if (tshmem_g.slice == NULL)
        tshmem_fail(func, "there is no symmetric heap: tshmem_heap_create did not build one.");
    heap_start();
    if (alignment < TSHMEM_HEAP_ALIGN)
        alignment = TSHMEM_HEAP_ALIGN;
    /* Whole 256-byte units keep every block's start aligned. Huge sizes must not wrap. */
    if (size > tshmem_g.heap_bytes) {
        no_room(func, size);
        return NULL;
    }
    size = (size + TSHMEM_HEAP_ALIGN - 1) / TSHMEM_HEAP_ALIGN * TSHMEM_HEAP_ALIGN;
    void *p = heap_take(alignment, size);
    if (!p)
        no_room(func, size);
    return p;
}

/* Merge b with the free blocks after it. */
static void merge_next(struct tshmem_block *b)
{
    while (b->next && !b->next->used && !b->used) {
        struct tshmem_block *dead = b->next;
        b->size += dead->size;
        b->next = dead->next;
        free(dead);
    }
}
/* END SOLUTION */

/* Each call opens with TSHMEM_COLLECTIVE (tshmem_internal.h): it records the call and its size,
 * so that a PE whose allocations differ from its peers' is named (book "Debugging"). */
void *tshmem_malloc(size_t size)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_MALLOC, TSHMEM_TEAM_WORLD, size, TSHMEM_HEAP_ALIGN, 0);
    if (size == 0)
        return NULL;
    /* BEGIN SOLUTION (The allocator): allocate size bytes, 256-byte aligned, then wait for every PE */
    void *p = heap_alloc(__func__, TSHMEM_HEAP_ALIGN, size);
    /* Barrier on exit: no PE may put into the new block before its owner has it. */
    tshmem_boot_barrier(tshmem_g.comm);
    return p;
    /* END SOLUTION */
}

void *tshmem_calloc(size_t count, size_t size)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_CALLOC, TSHMEM_TEAM_WORLD,
                      size && count > SIZE_MAX / size ? SIZE_MAX : count * size,
                      TSHMEM_HEAP_ALIGN, 0);
    if (count == 0 || size == 0)
        return NULL;
    /* BEGIN SOLUTION (The allocator): allocate count * size zeroed bytes (refuse an overflowing product) */
    if (count > SIZE_MAX / size)
        tshmem_fail(__func__, "count %zu times size %zu does not fit in size_t.", count, size);
    void *p = heap_alloc(__func__, TSHMEM_HEAP_ALIGN, count * size);
    if (p)
        memset(p, 0, count * size); /* my own copy; every PE zeroes its own before the barrier */
    tshmem_boot_barrier(tshmem_g.comm);
    return p;
    /* END SOLUTION */
}

void *tshmem_align(size_t alignment, size_t size)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_ALIGN, TSHMEM_TEAM_WORLD, size,
                      alignment < TSHMEM_HEAP_ALIGN ? TSHMEM_HEAP_ALIGN : alignment, 0);
    if (size == 0)
        return NULL;
    /* BEGIN SOLUTION (The allocator): allocate size bytes whose address is a multiple of alignment */
    void *p = heap_alloc(__func__, alignment, size);
    tshmem_boot_barrier(tshmem_g.comm);
    return p;
    /* END SOLUTION */
}

void tshmem_free(void *ptr)
{
    tshmem_require_live(__func__);
    TSHMEM_COLLECTIVE(TSHMEM_FN_FREE, TSHMEM_TEAM_WORLD,
                      ptr ? (uintptr_t)ptr - (uintptr_t)tshmem_g.slice : 0, 0, 0);
    if (ptr == NULL)
        return;
    /* BEGIN SOLUTION (The allocator): wait for every PE, then return the block and merge it with free neighbours */
    /* Barrier on entry: a peer may still be reading or writing this block. */
    tshmem_boot_barrier(tshmem_g.comm);
    struct tshmem_block *prev = NULL, *b = tshmem_g.blocks;
    size_t offset = (size_t)((uintptr_t)ptr - (uintptr_t)tshmem_g.slice);
    while (b && !(b->used && b->offset == offset)) {
        prev = b;
        b = b->next;
    }
    if (!b)
        tshmem_fail(__func__, "%p is not a block that tshmem_malloc returned, or it was freed "
                    "already. Free each symmetric block exactly once, on every PE.", ptr);
    b->used = 0;
    merge_next(b);
    if (prev)
        merge_next(prev);
    /* END SOLUTION */
}
