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

/* TODO (chapter 2.1, "Creating and destroying a buffer"): helpers: private arrays, and the bytes the layout needs */

tshmem_buffer_t *tshmem_buffer_create(size_t n_slots, size_t slot_bytes)
{
    tshmem_require_live(__func__);
    (void)n_slots; (void)slot_bytes;
    TSHMEM_TODO("Creating and destroying a buffer", "check the sizes, lay out the counters and rings in one zeroed symmetric block, set up the private counters");
}

void tshmem_buffer_destroy(tshmem_buffer_t *buf)
{
    tshmem_require_live(__func__);
    tshmem_buffer_check(__func__, buf);
    TSHMEM_TODO("Creating and destroying a buffer", "free the symmetric block (collective) and the private memory");
}
