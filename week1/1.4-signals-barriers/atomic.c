/* atomic.c: 64-bit remote atomics on a peer's symmetric word.
 *
 * Chapter 1.4. On the shared-memory path a remote atomic is a C11 atomic on the peer's copy:
 * the CPU's cache coherence makes a fetch-add from eight PEs at once exact, as NVLink atomics
 * do on a GPU. A PE on another node goes through the off-node path, which applies the same C11
 * atomic in the target's own process, so that one word never sees two kinds of atomicity.
 */
#define TSHMEM_CHAPTER "1.4"
#include "tshmem_internal.h"

/* TODO (chapter 1.4, "Atomics"): one helper that checks, translates and applies any atomic */

uint64_t tshmem_uint64_atomic_fetch(const uint64_t *source, int pe)
{
    (void)source; (void)pe;
    TSHMEM_TODO("Atomics", "read source's twin on pe atomically");
}

void tshmem_uint64_atomic_set(uint64_t *dest, uint64_t value, int pe)
{
    (void)dest; (void)value; (void)pe;
    TSHMEM_TODO("Atomics", "store value into dest's twin on pe atomically");
}

void tshmem_uint64_atomic_add(uint64_t *dest, uint64_t value, int pe)
{
    (void)dest; (void)value; (void)pe;
    TSHMEM_TODO("Atomics", "add value to dest's twin on pe atomically");
}

uint64_t tshmem_uint64_atomic_fetch_add(uint64_t *dest, uint64_t value, int pe)
{
    (void)dest; (void)value; (void)pe;
    TSHMEM_TODO("Atomics", "add value to dest's twin on pe atomically, return the old value");
}

uint64_t tshmem_uint64_atomic_swap(uint64_t *dest, uint64_t value, int pe)
{
    (void)dest; (void)value; (void)pe;
    TSHMEM_TODO("Atomics", "store value into dest's twin on pe, return the old value");
}

uint64_t tshmem_uint64_atomic_compare_swap(uint64_t *dest, uint64_t cond, uint64_t value, int pe)
{
    (void)dest; (void)cond; (void)value; (void)pe;
    TSHMEM_TODO("Atomics", "if dest's twin on pe equals cond, store value; return the old value");
}
