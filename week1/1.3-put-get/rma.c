/* rma.c: one-sided put and get, and the two calls that order and complete them.
 *
 * Chapter 1.3. On the shared-memory path a put is a memcpy into the peer's slice and a get is a
 * memcpy out of it: the peer's CPU takes no part, as a GPU's SMs take no part when an NVLink
 * store lands in their memory. A PE on another node goes through the off-node path instead.
 */
#define TSHMEM_CHAPTER "1.3"
#include <string.h>

#include "tshmem_internal.h"

void tshmem_putmem(void *dest, const void *source, size_t nbytes, int pe)
{
    tshmem_require_live(__func__);
    (void)dest; (void)source; (void)nbytes; (void)pe;
    TSHMEM_TODO("Put and get", "check pe and dest, then copy nbytes from source into dest's twin on pe");
}

void tshmem_getmem(void *dest, const void *source, size_t nbytes, int pe)
{
    tshmem_require_live(__func__);
    (void)dest; (void)source; (void)nbytes; (void)pe;
    TSHMEM_TODO("Put and get", "check pe and source, then copy nbytes from source's twin on pe into dest");
}

/* Non-blocking forms may return before the copy is done; quiet completes them. On the
 * shared-memory path a memcpy is done when it returns, so the blocking call is a correct
 * (if unambitious) implementation. The off-node path of chapter 2.5 returns early for real. */
void tshmem_putmem_nbi(void *dest, const void *source, size_t nbytes, int pe)
{
    (void)dest; (void)source; (void)nbytes; (void)pe;
    TSHMEM_TODO("Non-blocking calls", "start the put; it must be complete after tshmem_quiet");
}

void tshmem_getmem_nbi(void *dest, const void *source, size_t nbytes, int pe)
{
    (void)dest; (void)source; (void)nbytes; (void)pe;
    TSHMEM_TODO("Non-blocking calls", "start the get; dest must hold the data after tshmem_quiet");
}

void tshmem_fence(void)
{
    tshmem_require_live(__func__);
    TSHMEM_TODO("Fence and quiet", "order every earlier put to a PE before every later one");
}

void tshmem_quiet(void)
{
    tshmem_require_live(__func__);
    TSHMEM_TODO("Fence and quiet", "complete every outstanding put, get and atomic of this PE");
}
