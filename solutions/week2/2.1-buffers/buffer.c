/* buffer.c: creating and destroying a communication buffer.
 *
 * Chapter 2.1. A buffer is one symmetric block with the same layout on every PE (see
 * struct tshmem_buffer in tshmem_internal.h): a tail and a head counter per peer, each on its
 * own cache line, and a ring of n_slots slots per sender. Creating it is collective, like the
 * tshmem_malloc underneath: every PE must ask for the same n_slots and slot_bytes, so that
 * every offset inside the block is the same everywhere.
 */
#define TSHMEM_CHAPTER "2.1"
#include <stdlib.h>

#include "tshmem_internal.h"

/* Provided: the check that every buffer call starts with. */
void tshmem_buffer_check(const char *func, const tshmem_buffer_t *buf)
{
    if (buf == NULL)
        tshmem_fail(func, "buf is NULL. Pass the buffer that tshmem_buffer_create returned.");
    if (buf->magic != TSHMEM_BUFFER_MAGIC)
        tshmem_fail(func, "buf %p is not a live buffer: it did not come from "
                    "tshmem_buffer_create, or tshmem_buffer_destroy has freed it.",
                    (const void *)buf);
}

/* BEGIN SOLUTION (Creating and destroying a buffer): helpers: private arrays, and the bytes the layout needs */
static void *private_array(size_t count, size_t size)
{
    void *p = calloc(count, size);
    if (!p)
        tshmem_fail("tshmem_buffer_create", "out of private memory for %zu counters.", count);
    return p;
}

/* The block's size for this layout, or 0 if it does not fit in a size_t. */
static size_t block_bytes(size_t n_pes, size_t n_slots, size_t slot_stride)
{
    size_t counters = 2 * n_pes * sizeof(struct tshmem_flag);
    if (n_slots > SIZE_MAX / slot_stride / n_pes)
        return 0;
    size_t rings = n_pes * n_slots * slot_stride;
    return rings > SIZE_MAX - counters ? 0 : counters + rings;
}
/* END SOLUTION */

tshmem_buffer_t *tshmem_buffer_create(size_t n_slots, size_t slot_bytes)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Creating and destroying a buffer): check the sizes, lay out the counters and rings in one zeroed symmetric block, set up the private counters */
    if (n_slots == 0)
        tshmem_fail(__func__, "n_slots 0: a ring needs at least one slot. Ask for 2 or more, so "
                    "that a sender can fill one slot while its receiver empties another.");
    if (slot_bytes == 0)
        tshmem_fail(__func__, "slot_bytes 0: a slot must hold at least one byte of a message. "
                    "Pick the size of a typical message (a token, a tile), e.g. 4096.");
    tshmem_check_same_size(__func__, n_slots);
    tshmem_check_same_size(__func__, slot_bytes);
    size_t n_pes = (size_t)tshmem_g.n_pes, line = TSHMEM_CACHE_LINE;
    size_t header = sizeof(struct tshmem_slot_header);
    if (slot_bytes > SIZE_MAX / 2)
        tshmem_fail(__func__, "slot_bytes %zu is far too large: make a slot the size of one "
                    "message chunk, e.g. 64K.", slot_bytes);
    /* Header and payload rounded up to cache lines: every header starts a line of its own. */
    size_t stride = (header + slot_bytes + line - 1) / line * line;
    size_t total = block_bytes(n_pes, n_slots, stride);
    char need[32], have[32];
    if (total == 0 || total > tshmem_g.heap_bytes)
        tshmem_fail(__func__, "%zu PEs x %zu slots of %zu bytes need %s of symmetric heap on "
                    "every PE, but the heap has %s. Use fewer or smaller slots, or set "
                    "TSHMEM_SYMMETRIC_SIZE larger.", n_pes, n_slots, slot_bytes,
                    total ? tshmem_bytes_str(total, need, sizeof need) : "more than 16 EiB",
                    tshmem_bytes_str(tshmem_g.heap_bytes, have, sizeof have));
    /* Zeroed: every counter starts at 0. tshmem_calloc zeroes each PE's own copy and then
     * waits for all of them, so no PE can send before every receiver's counters are 0, and
     * a block that an earlier buffer used holds no stale tail that would look like a message. */
    char *block = tshmem_calloc(1, total);
    if (!block)
        tshmem_fail(__func__, "no room for %s in the symmetric heap (see the message above). "
                    "Free other blocks, use fewer or smaller slots, or set "
                    "TSHMEM_SYMMETRIC_SIZE larger.", tshmem_bytes_str(total, need, sizeof need));

    tshmem_buffer_t *buf = private_array(1, sizeof *buf);
    buf->magic = TSHMEM_BUFFER_MAGIC;
    buf->n_slots = n_slots;
    buf->slot_bytes = slot_bytes;
    buf->slot_stride = stride;
    buf->ring_bytes = n_slots * stride;
    buf->n_pes = (int)n_pes;
    buf->block = block;
    buf->tail = (struct tshmem_flag *)block;
    buf->head = buf->tail + n_pes;
    buf->rings = (char *)(buf->head + n_pes);
    buf->sent = private_array(n_pes, sizeof(uint64_t));
    buf->head_seen = private_array(n_pes, sizeof(uint64_t));
    buf->taken = private_array(n_pes, sizeof(uint64_t));
    buf->tail_seen = private_array(n_pes, sizeof(uint64_t));
    buf->reserved = private_array(n_pes, sizeof(size_t));
    buf->staging = private_array(n_pes, sizeof(char *));
    for (size_t pe = 0; pe < n_pes; pe++)
        buf->reserved[pe] = TSHMEM_NO_RESERVE;
    return buf;
    /* END SOLUTION */
}

void tshmem_buffer_destroy(tshmem_buffer_t *buf)
{
    tshmem_require_live(__func__);
    tshmem_buffer_check(__func__, buf);
    /* BEGIN SOLUTION (Creating and destroying a buffer): free the symmetric block (collective) and the private memory */
    for (int pe = 0; pe < buf->n_pes; pe++)
        if (buf->reserved[pe] != TSHMEM_NO_RESERVE)
            tshmem_warn(__func__, "a slot reserved for PE %d was never committed; its message is "
                        "dropped. Call tshmem_buffer_commit after every tshmem_buffer_reserve.",
                        pe);
    if (tshmem_env_flag("TSHMEM_DEBUG")) {
        /* Every PE has sent all it will send once all have arrived here. */
        tshmem_barrier_all();
        for (int pe = 0; pe < buf->n_pes; pe++) {
            uint64_t tail = atomic_load_explicit(tshmem_atomic(&buf->tail[pe].value),
                                                 memory_order_acquire);
            if (tail > buf->taken[pe])
                tshmem_warn(__func__, "%llu slots from PE %d were never received.",
                            (unsigned long long)(tail - buf->taken[pe]), pe);
        }
    }
    /* tshmem_free waits for every PE on entry: once all have called destroy, nobody sends
     * into our rings or returns credits any more, and the block can go back to the heap. */
    tshmem_free(buf->block);
    for (int pe = 0; pe < buf->n_pes; pe++)
        free(buf->staging[pe]);
    free(buf->staging);
    free(buf->reserved);
    free(buf->tail_seen);
    free(buf->taken);
    free(buf->head_seen);
    free(buf->sent);
    buf->magic = 0; /* a later call with this pointer is an error, not a silent reuse */
    free(buf);
    /* END SOLUTION */
}
