/* segment.c: the node's shared-memory segment, each PE's slice of it, and address translation.
 *
 * Chapter 1.2. The segment plays the part of NVLink peer memory: every PE of a node maps the
 * same POSIX shared-memory object, so a store into a peer's slice is a plain store. Symmetric
 * means that an object lives at the same offset in every PE's slice; tshmem_ptr turns "my copy"
 * into "PE pe's copy" by swapping the slice.
 */
#define TSHMEM_CHAPTER "1.2"
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "tshmem_internal.h"

/* TODO (chapter 1.2, "The segment"): helpers that name, size, create and map the segment */

void tshmem_heap_create(void)
{
    /* TODO ("The segment"): create the node's segment (leader), map it on every PE of the node, unlink it, find this PE's slice */
    return;
}

void tshmem_heap_destroy(void)
{
    /* TODO ("The segment"): unmap the segment and forget the heap */
    return;
}

void *tshmem_heap_peer(const void *addr, int pe)
{
    (void)addr; (void)pe;
    TSHMEM_TODO("Translating addresses", "addr's twin in PE pe's slice, NULL if pe is on another node");
}

void *tshmem_ptr(const void *dest, int pe)
{
    tshmem_require_live(__func__);
    (void)dest; (void)pe;
    TSHMEM_TODO("Translating addresses", "check pe and dest, then return dest's twin on pe (NULL off-node)");
}

int tshmem_addr_accessible(const void *addr, int pe)
{
    tshmem_require_live(__func__);
    (void)addr; (void)pe;
    TSHMEM_TODO("Translating addresses", "1 if addr is in the symmetric heap (the slice after the reserved area) and pe is a PE of the job");
}
