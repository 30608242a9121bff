/* channel.c: sending and receiving through a buffer: slots, tails, credits and chunks.
 *
 * Chapter 2.1. A message from PE s to PE r travels through ring[s] in r's memory. s fills slot
 * number sent[r] (a header, then the payload) and moves tail[s] on r with a release store; r
 * waits for that tail with acquire loads, copies the slot out, and gives the slot back by
 * storing how many slots it has emptied into head[r] on s: a credit. s never runs more than
 * n_slots slots ahead of r's credits, which is the flow control. Every counter has one writer
 * and only grows, and every PE waits only on words in its own memory.
 */
#define TSHMEM_CHAPTER "2.1"
#include <stdlib.h>
#include <string.h>

#include "tshmem_internal.h"

/* TODO (chapter 2.1, "Sending"): helpers: a slot's address, waiting for a credit, filling and publishing a slot */

void tshmem_buffer_send(tshmem_buffer_t *buf, int pe, const void *msg, size_t nbytes)
{
    tshmem_require_live(__func__);
    tshmem_buffer_check(__func__, buf);
    (void)pe; (void)msg; (void)nbytes;
    TSHMEM_TODO("Sending", "check pe and msg, then send the message in slot-sized chunks, waiting for a credit before each");
}

/* TODO (chapter 2.1, "Receiving"): helpers: waiting for a slot, checking its header, giving it back */

size_t tshmem_buffer_recv(tshmem_buffer_t *buf, int pe, void *msg, size_t max_bytes)
{
    tshmem_require_live(__func__);
    tshmem_buffer_check(__func__, buf);
    (void)pe; (void)msg; (void)max_bytes;
    TSHMEM_TODO("Receiving", "wait for the message's first slot, check its size against max_bytes, copy every chunk out and give each slot back");
}

int tshmem_buffer_poll(tshmem_buffer_t *buf, int pe)
{
    tshmem_require_live(__func__);
    tshmem_buffer_check(__func__, buf);
    (void)pe;
    TSHMEM_TODO("Receiving", "1 if the first slot of pe's next message has arrived: at most one acquire load, never wait");
}

void *tshmem_buffer_reserve(tshmem_buffer_t *buf, int pe, size_t nbytes)
{
    tshmem_require_live(__func__);
    tshmem_buffer_check(__func__, buf);
    (void)pe; (void)nbytes;
    TSHMEM_TODO("Zero copy", "check nbytes and that no reserve to pe is open, wait for a credit, return the address of the slot's payload on pe");
}

void tshmem_buffer_commit(tshmem_buffer_t *buf, int pe)
{
    tshmem_require_live(__func__);
    tshmem_buffer_check(__func__, buf);
    (void)pe;
    TSHMEM_TODO("Zero copy", "check that a reserve to pe is open, then publish the slot as a one-slot message");
}
