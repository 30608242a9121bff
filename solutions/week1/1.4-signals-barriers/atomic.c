/* atomic.c: 64-bit remote atomics on a peer's symmetric word.
 *
 * Chapter 1.4. On the shared-memory path a remote atomic is a C11 atomic on the peer's copy:
 * the CPU's cache coherence makes a fetch-add from eight PEs at once exact, as NVLink atomics
 * do on a GPU. A PE on another node goes through the off-node path, which applies the same C11
 * atomic in the target's own process, so that one word never sees two kinds of atomicity.
 */
#define TSHMEM_CHAPTER "1.4"
#include "tshmem_internal.h"

/* BEGIN SOLUTION (Atomics): one helper that checks, translates and applies any atomic */
/* Memory order: a fetch reads with acquire, a set stores with release, and the read-modify-
 * write forms use acq_rel, so that an atomic can publish data or learn of it like a signal. */
static uint64_t amo(const char *func, enum tshmem_amo op, uint64_t *dest, uint64_t value,
                    uint64_t cond, int pe)
{
    tshmem_require_live(func);
    tshmem_check_pe(func, pe);
    tshmem_check_word(func, "dest", dest);
    uint64_t *peer = tshmem_heap_peer(dest, pe);
    if (!peer)
        return tshmem_offnode_amo(op, dest, value, cond, pe);
    _Atomic uint64_t *word = tshmem_atomic(peer);
    switch (op) {
    case TSHMEM_AMO_FETCH:
        return atomic_load_explicit(word, memory_order_acquire);
    case TSHMEM_AMO_SET:
        atomic_store_explicit(word, value, memory_order_release);
        return 0;
    case TSHMEM_AMO_ADD:
    case TSHMEM_AMO_FETCH_ADD:
        return atomic_fetch_add_explicit(word, value, memory_order_acq_rel);
    case TSHMEM_AMO_SWAP:
        return atomic_exchange_explicit(word, value, memory_order_acq_rel);
    case TSHMEM_AMO_COMPARE_SWAP:
        /* On failure `cond` receives the current value, which is what we return either way. */
        atomic_compare_exchange_strong_explicit(word, &cond, value, memory_order_acq_rel,
                                                memory_order_acquire);
        return cond;
    }
    return 0;
}
/* END SOLUTION */

uint64_t tshmem_uint64_atomic_fetch(const uint64_t *source, int pe)
{
    /* BEGIN SOLUTION (Atomics): read source's twin on pe atomically */
    return amo(__func__, TSHMEM_AMO_FETCH, (uint64_t *)(uintptr_t)source, 0, 0, pe);
    /* END SOLUTION */
}

void tshmem_uint64_atomic_set(uint64_t *dest, uint64_t value, int pe)
{
    /* BEGIN SOLUTION (Atomics): store value into dest's twin on pe atomically */
    amo(__func__, TSHMEM_AMO_SET, dest, value, 0, pe);
    /* END SOLUTION */
}

void tshmem_uint64_atomic_add(uint64_t *dest, uint64_t value, int pe)
{
    /* BEGIN SOLUTION (Atomics): add value to dest's twin on pe atomically */
    amo(__func__, TSHMEM_AMO_ADD, dest, value, 0, pe);
    /* END SOLUTION */
}

uint64_t tshmem_uint64_atomic_fetch_add(uint64_t *dest, uint64_t value, int pe)
{
    /* BEGIN SOLUTION (Atomics): add value to dest's twin on pe atomically, return the old value */
    return amo(__func__, TSHMEM_AMO_FETCH_ADD, dest, value, 0, pe);
    /* END SOLUTION */
}

uint64_t tshmem_uint64_atomic_swap(uint64_t *dest, uint64_t value, int pe)
{
    /* BEGIN SOLUTION (Atomics): store value into dest's twin on pe, return the old value */
    return amo(__func__, TSHMEM_AMO_SWAP, dest, value, 0, pe);
    /* END SOLUTION */
}

uint64_t tshmem_uint64_atomic_compare_swap(uint64_t *dest, uint64_t cond, uint64_t value, int pe)
{
    /* BEGIN SOLUTION (Atomics): if dest's twin on pe equals cond, store value; return the old value */
    return amo(__func__, TSHMEM_AMO_COMPARE_SWAP, dest, value, cond, pe);
    /* END SOLUTION */
}
