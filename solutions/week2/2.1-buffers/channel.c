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

/* BEGIN SOLUTION (Sending): helpers: a slot's address, waiting for a credit, filling and publishing a slot */
/* Slot number k (counted since the buffer was created) of the ring that `sender` fills, as an
 * address in this PE's own copy of the block: the slot itself when this PE is the receiver,
 * the symmetric twin of the receiver's slot when it is the sender. */
static char *slot_at(const tshmem_buffer_t *buf, int sender, uint64_t k)
{
    return buf->rings + (size_t)sender * buf->ring_bytes +
           (size_t)(k % buf->n_slots) * buf->slot_stride;
}

/* Waits until pe has given back enough slots that this PE may fill one more of pe's ring. */
static void wait_for_credit(const char *func, tshmem_buffer_t *buf, int pe)
{
    if (buf->sent[pe] - buf->head_seen[pe] < buf->n_slots)
        return; /* the credits seen last time still cover this slot */
    _Atomic uint64_t *credits = tshmem_atomic(&buf->head[pe].value);
    struct tshmem_spin spin;
    tshmem_spin_init(&spin, func, &buf->head[pe].value);
    /* Acquire: pe read the slot we are about to overwrite before it released this credit, so
     * its reads happen before our writes. Without it we could overwrite a slot still in use. */
    while ((buf->head_seen[pe] = atomic_load_explicit(credits, memory_order_acquire)) +
               buf->n_slots <= buf->sent[pe]) {
        if (pe == tshmem_g.my_pe)
            tshmem_fail(func, "PE %d sends to itself, and its ring to itself is full (%zu slots "
                        "of %zu bytes): only this PE can empty it, so the send would wait "
                        "forever. Receive from PE %d first, or create the buffer with more or "
                        "larger slots.", pe, buf->n_slots, buf->slot_bytes, pe);
        tshmem_spin_pause(&spin);
    }
}

/* Fills the next slot of pe's ring (the header, and put_bytes of payload unless the caller
 * wrote it in place) and moves our tail on pe past it. */
static void publish(tshmem_buffer_t *buf, int pe, const struct tshmem_slot_header *h,
                    const void *payload, size_t put_bytes)
{
    int me = tshmem_g.my_pe;
    char *slot = slot_at(buf, me, buf->sent[pe]);
    tshmem_putmem(slot, h, sizeof *h, pe);
    /* The header is a put of its own: fence orders it before the put-with-signal below, as
     * put_signal only promises that its own data arrives before its signal. */
    tshmem_fence();
    /* The tail counts slots and has one writer (us), so SET the new count. Its release makes
     * the header and the payload visible to pe before pe can see the tail move. */
    buf->sent[pe]++;
    tshmem_putmem_signal(slot + sizeof *h, payload, put_bytes, &buf->tail[me].value,
                         buf->sent[pe], TSHMEM_SIGNAL_SET, pe);
}
/* END SOLUTION */

void tshmem_buffer_send(tshmem_buffer_t *buf, int pe, const void *msg, size_t nbytes)
{
    tshmem_require_live(__func__);
    tshmem_buffer_check(__func__, buf);
    /* BEGIN SOLUTION (Sending): check pe and msg, then send the message in slot-sized chunks, waiting for a credit before each */
    tshmem_check_pe(__func__, pe);
    if (msg == NULL && nbytes > 0)
        tshmem_fail(__func__, "msg is NULL but nbytes is %zu. Pass the message's address.", nbytes);
    if (buf->reserved[pe] != TSHMEM_NO_RESERVE)
        tshmem_fail(__func__, "a slot reserved for PE %d is not committed yet, and messages to a "
                    "PE go out in order. Call tshmem_buffer_commit(buf, %d) first.", pe, pe);
    const char *bytes = msg;
    size_t done = 0;
    uint64_t chunk = 0;
    do { /* at least once: an empty message still takes one slot */
        size_t len = nbytes - done < buf->slot_bytes ? nbytes - done : buf->slot_bytes;
        wait_for_credit(__func__, buf, pe);
        struct tshmem_slot_header h = {.bytes = len, .msg_bytes = nbytes, .chunk = chunk,
                                       .last = done + len == nbytes};
        publish(buf, pe, &h, len ? bytes + done : msg, len);
        done += len;
        chunk++;
    } while (done < nbytes);
    /* END SOLUTION */
}

/* BEGIN SOLUTION (Receiving): helpers: waiting for a slot, checking its header, giving it back */
/* Waits until the next slot of pe's ring in this PE's memory has arrived. */
static void wait_for_slot(const char *func, tshmem_buffer_t *buf, int pe)
{
    if (buf->tail_seen[pe] > buf->taken[pe])
        return; /* an earlier acquire load already saw this slot arrive */
    _Atomic uint64_t *tail = tshmem_atomic(&buf->tail[pe].value);
    struct tshmem_spin spin;
    tshmem_spin_init(&spin, func, &buf->tail[pe].value);
    /* Acquire: pairs with the sender's release of this tail, so the header and payload it
     * wrote before are visible to the plain loads that read the slot after this loop. */
    while ((buf->tail_seen[pe] = atomic_load_explicit(tail, memory_order_acquire)) <=
           buf->taken[pe]) {
        if (pe == tshmem_g.my_pe)
            tshmem_fail(func, "PE %d waits for a message from itself that it has not sent; no "
                        "other PE can send it, so it would wait forever. Send to yourself "
                        "before you receive from yourself.", pe);
        tshmem_spin_pause(&spin);
    }
}

/* The header of the slot we are about to read, checked against what recv expects. */
static const struct tshmem_slot_header *next_header(const char *func, tshmem_buffer_t *buf,
                                                    int pe, uint64_t chunk, size_t msg_bytes)
{
    const struct tshmem_slot_header *h = (const void *)slot_at(buf, pe, buf->taken[pe]);
    if (h->chunk != chunk || h->bytes > buf->slot_bytes ||
        (chunk > 0 && h->msg_bytes != msg_bytes))
        tshmem_fail(func, "slot %llu from PE %d holds chunk %llu (%llu bytes of a %llu-byte "
                    "message), but chunk %llu of %s was expected. Was the slot overwritten before "
                    "it was read (does send wait for a credit?), or did the tail move before the "
                    "slot was written?", (unsigned long long)buf->taken[pe], pe,
                    (unsigned long long)h->chunk, (unsigned long long)h->bytes,
                    (unsigned long long)h->msg_bytes, (unsigned long long)chunk,
                    chunk ? "the message being received" : "a new message");
    return h;
}

/* Hands the slot just read back to its sender: the new count of emptied slots is a credit. */
static void give_back(tshmem_buffer_t *buf, int pe)
{
    buf->taken[pe]++;
    /* Release: our loads from the slot come before this store, so the sender, which reads the
     * credit with acquire, cannot overwrite the slot while we are still copying it out. */
    tshmem_signal_op(&buf->head[tshmem_g.my_pe].value, buf->taken[pe], TSHMEM_SIGNAL_SET, pe);
}
/* END SOLUTION */

size_t tshmem_buffer_recv(tshmem_buffer_t *buf, int pe, void *msg, size_t max_bytes)
{
    tshmem_require_live(__func__);
    tshmem_buffer_check(__func__, buf);
    /* BEGIN SOLUTION (Receiving): wait for the message's first slot, check its size against max_bytes, copy every chunk out and give each slot back */
    tshmem_check_pe(__func__, pe);
    if (msg == NULL && max_bytes > 0)
        tshmem_fail(__func__, "msg is NULL but max_bytes is %zu. Pass where the message goes.",
                    max_bytes);
    wait_for_slot(__func__, buf, pe);
    const struct tshmem_slot_header *h = next_header(__func__, buf, pe, 0, 0);
    size_t total = h->msg_bytes;
    if (total > max_bytes)
        tshmem_fail(__func__, "the next message from PE %d is %zu bytes, more than max_bytes "
                    "%zu. Messages from one PE arrive in order, so this one must be taken "
                    "next: pass a buffer of at least %zu bytes.", pe, total, max_bytes, total);
    size_t done = 0;
    for (uint64_t chunk = 0;; chunk++) {
        if (chunk > 0) {
            wait_for_slot(__func__, buf, pe);
            h = next_header(__func__, buf, pe, chunk, total);
        }
        if (h->bytes > total - done)
            tshmem_fail(__func__, "chunk %llu from PE %d runs past the end of its %zu-byte "
                        "message.", (unsigned long long)chunk, pe, total);
        memcpy((char *)msg + done, h + 1, h->bytes);
        done += h->bytes;
        int last = h->last != 0; /* read before the slot is given back and overwritten */
        give_back(buf, pe);
        if (last)
            break;
    }
    return total;
    /* END SOLUTION */
}

int tshmem_buffer_poll(tshmem_buffer_t *buf, int pe)
{
    tshmem_require_live(__func__);
    tshmem_buffer_check(__func__, buf);
    /* BEGIN SOLUTION (Receiving): 1 if the first slot of pe's next message has arrived: at most one acquire load, never wait */
    tshmem_check_pe(__func__, pe);
    if (buf->tail_seen[pe] > buf->taken[pe])
        return 1;
    buf->tail_seen[pe] = atomic_load_explicit(tshmem_atomic(&buf->tail[pe].value),
                                              memory_order_acquire);
    return buf->tail_seen[pe] > buf->taken[pe];
    /* END SOLUTION */
}

void *tshmem_buffer_reserve(tshmem_buffer_t *buf, int pe, size_t nbytes)
{
    tshmem_require_live(__func__);
    tshmem_buffer_check(__func__, buf);
    /* BEGIN SOLUTION (Zero copy): check nbytes and that no reserve to pe is open, wait for a credit, return the address of the slot's payload on pe */
    tshmem_check_pe(__func__, pe);
    if (nbytes > buf->slot_bytes)
        tshmem_fail(__func__, "nbytes %zu is larger than a slot (%zu bytes): a reserved message "
                    "must fit in one slot. Send larger messages with tshmem_buffer_send, which "
                    "splits them, or create the buffer with larger slots.", nbytes,
                    buf->slot_bytes);
    if (buf->reserved[pe] != TSHMEM_NO_RESERVE)
        tshmem_fail(__func__, "a slot for PE %d is already reserved (%zu bytes) and not yet "
                    "committed. Call tshmem_buffer_commit(buf, %d) before the next reserve.",
                    pe, buf->reserved[pe], pe);
    wait_for_credit(__func__, buf, pe);
    buf->reserved[pe] = nbytes;
    char *payload = slot_at(buf, tshmem_g.my_pe, buf->sent[pe]) + sizeof(struct tshmem_slot_header);
    void *direct = tshmem_ptr(payload, pe);
    if (direct)
        return direct; /* pe's own memory: the caller's stores land in the slot itself */
    /* Off this node no pointer reaches pe's memory: the caller writes into a private staging
     * slot, and commit puts it across, as DeepEP stages what goes over RDMA. */
    if (!buf->staging[pe] && !(buf->staging[pe] = malloc(buf->slot_bytes)))
        tshmem_fail(__func__, "out of private memory for a %zu-byte staging slot.",
                    buf->slot_bytes);
    return buf->staging[pe];
    /* END SOLUTION */
}

void tshmem_buffer_commit(tshmem_buffer_t *buf, int pe)
{
    tshmem_require_live(__func__);
    tshmem_buffer_check(__func__, buf);
    /* BEGIN SOLUTION (Zero copy): check that a reserve to pe is open, then publish the slot as a one-slot message */
    tshmem_check_pe(__func__, pe);
    size_t nbytes = buf->reserved[pe];
    if (nbytes == TSHMEM_NO_RESERVE)
        tshmem_fail(__func__, "no slot for PE %d is reserved, so there is nothing to commit. "
                    "Call tshmem_buffer_reserve(buf, %d, nbytes) first, write the message at "
                    "the pointer it returns, then commit.", pe, pe);
    buf->reserved[pe] = TSHMEM_NO_RESERVE;
    struct tshmem_slot_header h = {.bytes = nbytes, .msg_bytes = nbytes, .chunk = 0, .last = 1};
    /* The payload is in pe's slot already, unless it went to the staging slot (off-node). */
    if (buf->staging[pe])
        publish(buf, pe, &h, buf->staging[pe], nbytes);
    else
        publish(buf, pe, &h, NULL, 0);
    /* END SOLUTION */
}
