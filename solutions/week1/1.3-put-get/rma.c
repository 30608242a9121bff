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
    /* BEGIN SOLUTION (Put and get): check pe and dest, then copy nbytes from source into dest's twin on pe */
    tshmem_check_pe(__func__, pe);
    tshmem_check_symmetric(__func__, "dest", dest, nbytes);
    if (nbytes == 0)
        return;
    void *peer = tshmem_heap_peer(dest, pe);
    if (peer)
        memcpy(peer, source, nbytes);
    else
        tshmem_offnode_put(dest, source, nbytes, pe);
    /* END SOLUTION */
}

void tshmem_getmem(void *dest, const void *source, size_t nbytes, int pe)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Put and get): check pe and source, then copy nbytes from source's twin on pe into dest */
    tshmem_check_pe(__func__, pe);
    tshmem_check_symmetric(__func__, "source", source, nbytes);
    if (nbytes == 0)
        return;
    const void *peer = tshmem_heap_peer(source, pe);
    if (peer)
        memcpy(dest, peer, nbytes);
    else
        tshmem_offnode_get(dest, source, nbytes, pe);
    /* END SOLUTION */
}

/* Non-blocking forms may return before the copy is done; quiet completes them. On the
 * shared-memory path a memcpy is done when it returns, so the blocking call is a correct
 * (if unambitious) implementation. The off-node path of chapter 2.5 returns early for real. */
void tshmem_putmem_nbi(void *dest, const void *source, size_t nbytes, int pe)
{
    /* BEGIN SOLUTION (Non-blocking calls): start the put; it must be complete after tshmem_quiet */
    tshmem_putmem(dest, source, nbytes, pe);
    /* END SOLUTION */
}

void tshmem_getmem_nbi(void *dest, const void *source, size_t nbytes, int pe)
{
    /* BEGIN SOLUTION (Non-blocking calls): start the get; dest must hold the data after tshmem_quiet */
    tshmem_getmem(dest, source, nbytes, pe);
    /* END SOLUTION */
}

void tshmem_fence(void)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Fence and quiet): order every earlier put to a PE before every later one */
    /* Our stores into a peer's slice are plain stores: a release fence keeps the earlier ones
     * from being reordered after the later ones (a compiler or a weakly ordered CPU such as
     * Arm may do that otherwise). The off-node path keeps per-target order by itself. */
    atomic_thread_fence(memory_order_release);
    /* END SOLUTION */
}

void tshmem_quiet(void)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Fence and quiet): complete every outstanding put, get and atomic of this PE */
    /* Full fence: every store we made is visible before anything we do next, and every load
     * of a get has finished. Then wait for the off-node path's acknowledgements. */
    atomic_thread_fence(memory_order_seq_cst);
    tshmem_offnode_quiet();
    /* END SOLUTION */
}
