/* link.c: a network between virtual nodes (TSHMEM_LINK="1.25GB/s,5us"), as a card's DMA sees it.
 *
 * Chapter 2.5. Provided: you do not need to edit this file. Between virtual nodes the bytes go
 * through MPI's shared memory, faster than most networks. With TSHMEM_LINK set, every off-node
 * request arrives when a network card of that bandwidth and latency would have delivered it:
 *
 *   sender   the request is stamped with its arrival time (tshmem_link_stamp): the card sends
 *            one transfer after the other, header and bytes at the link's bandwidth, and the
 *            latency comes on top. The sender's CPU does not wait for the wire: it goes on
 *            as soon as MPI has taken the message, as a program goes on once the card's DMA
 *            has the bytes. Only a full card holds it up (CARD_QUEUE_BYTES not yet sent).
 *   target   the transport takes every message as it comes, so that no sender waits on it,
 *            and keeps the requests here until they are due (tshmem_link_hold); a put's
 *            bytes wait in a copy. Whoever serves takes the due ones in arrival order, one
 *            sender's requests never ahead of that sender's earlier ones (tshmem_link_next).
 *   answer   a get's bytes, an atomic's old value and quiet's acknowledgement leave when the
 *            request is served, which is held back until the answer would be back at the
 *            sender as well (tshmem_link_served_due).
 *
 * So the wire's time passes on the clock, not on a CPU: a PE that has work to do while its
 * bytes travel does it, which is what chapter 2.4's overlap needs. The clock is
 * CLOCK_MONOTONIC, one clock for every PE of one machine: the model is for virtual nodes.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tshmem_internal.h"

/* What a card accepts before its sender has to wait for it: a queue of work requests, in
 * bytes. It bounds the copies a target keeps for a sender that puts faster than the wire. */
#define CARD_QUEUE_BYTES ((uint64_t)8 << 20)

struct held {
    struct held *next;
    void *msg; /* the transport's request, with a put's bytes */
    uint64_t due;
    int from;
};

static struct {
    double ns_per_byte; /* 0: no link model */
    uint64_t latency_ns;
    uint64_t free_at;   /* when this PE's card is done with what it was given (send lock) */
    struct held *first, *last; /* held requests in arrival order (the serve lock) */
    _Atomic uint64_t next_due; /* the first one's due time, 0 if none: read without the lock */
    unsigned char *seen;       /* tshmem_link_next: senders with an earlier request held */
    int n_pes;
} lm;

uint64_t tshmem_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int tshmem_link_on(void) { return lm.ns_per_byte > 0; }

static uint64_t wire_ns(uint64_t bytes) { return (uint64_t)(lm.ns_per_byte * (double)bytes); }

/* A thread's sleeps may end up to 50 us late by default (its timer slack), more than a
 * link's latency: ask for 1 us, once per thread. */
void tshmem_precise_sleeps(void)
{
    static __thread int slack_set;
    if (!slack_set) {
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
        slack_set = 1;
    }
}

/* Sleeps until CLOCK_MONOTONIC reads t. */
void tshmem_link_sleep_until(uint64_t t)
{
    tshmem_precise_sleeps();
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

/* TSHMEM_LINK="1.25GB/s,5us": a bandwidth in GB/s or MB/s, a latency in us or ns. */
void tshmem_link_setup(int n_pes)
{
    const char *text = tshmem_env_str("TSHMEM_LINK");
    lm.ns_per_byte = 0;
    lm.free_at = 0;
    if (!text || !*text)
        return;
    double bw = 0, lat = 0;
    char bw_unit[8] = "", lat_unit[8] = "";
    if (sscanf(text, "%lf%7[^,],%lf%7s", &bw, bw_unit, &lat, lat_unit) != 4 || bw <= 0 ||
        lat < 0 || (strcmp(bw_unit, "GB/s") && strcmp(bw_unit, "MB/s")) ||
        (strcmp(lat_unit, "us") && strcmp(lat_unit, "ns")))
        tshmem_fail("tshmem_init", "TSHMEM_LINK='%s' is not a link: write a bandwidth in GB/s or "
                    "MB/s and a latency in us or ns, e.g. TSHMEM_LINK=1.25GB/s,5us (a 10 Gb/s "
                    "network card).", text);
    double bytes_per_ns = bw * (strcmp(bw_unit, "GB/s") ? 1e6 : 1e9) / 1e9;
    lm.ns_per_byte = 1.0 / bytes_per_ns;
    lm.latency_ns = (uint64_t)(lat * (strcmp(lat_unit, "us") ? 1.0 : 1000.0));
    lm.n_pes = n_pes;
    free(lm.seen);
    lm.seen = calloc((size_t)n_pes, 1);
    if (!lm.seen)
        tshmem_fail("tshmem_init", "out of memory for the link model of %d PEs.", n_pes);
}

/* The arrival time of a transfer of `bytes` that this PE's card is given now: after whatever
 * it still sends, at the link's bandwidth, plus the latency. Called under the transport's
 * send lock, so one thread at a time moves free_at. */
uint64_t tshmem_link_stamp(size_t bytes)
{
    if (!tshmem_link_on())
        return 0;
    uint64_t t = tshmem_now_ns();
    /* A full card: the sender waits until it has sent enough, as a post to a full send queue
     * would. The only place where the wire's time is charged to a CPU. */
    if (lm.free_at > t && lm.free_at - t > wire_ns(CARD_QUEUE_BYTES)) {
        tshmem_link_sleep_until(lm.free_at - wire_ns(CARD_QUEUE_BYTES));
        t = tshmem_now_ns();
    }
    uint64_t start = t > lm.free_at ? t : lm.free_at;
    lm.free_at = start + wire_ns(bytes);
    return lm.free_at + lm.latency_ns;
}

/* When a request that arrives at `due` may be served: then, or, when it is answered (a get's
 * bytes, an atomic's value, an acknowledgement: `back` bytes), when that answer would be back
 * at the sender. */
uint64_t tshmem_link_served_due(uint64_t due, int answered, size_t back)
{
    if (due == 0 || !answered)
        return due;
    return due + lm.latency_ns + wire_ns(back);
}

/* next_due from the list (the serve lock is held). */
static void update_next_due(void)
{
    uint64_t first = 0;
    for (struct held *h = lm.first; h; h = h->next)
        if (first == 0 || h->due < first)
            first = h->due;
    atomic_store_explicit(&lm.next_due, first, memory_order_relaxed);
}

/* Keeps a request (msg, from the transport's malloc) until `due`; the link owns it now. */
void tshmem_link_hold(void *msg, int from, uint64_t due)
{
    struct held *h = malloc(sizeof *h);
    if (!h)
        tshmem_fail("proxy", "out of memory for a request of PE %d on the link.", from);
    *h = (struct held){.msg = msg, .due = due, .from = from};
    if (lm.last)
        lm.last->next = h;
    else
        lm.first = h;
    lm.last = h;
    update_next_due();
}

/* A held request of `from` is waiting: a later one must wait behind it. */
int tshmem_link_holds(int from)
{
    for (struct held *h = lm.first; h; h = h->next)
        if (h->from == from)
            return 1;
    return 0;
}

/* The first held request that is due and has nothing of its sender held before it, taken off
 * the list (the caller serves and frees it); NULL if none. */
void *tshmem_link_next(int *from)
{
    uint64_t t = tshmem_now_ns();
    struct held **p = &lm.first, *prev = NULL;
    void *msg = NULL;
    for (struct held *h = lm.first; h; prev = h, p = &h->next, h = h->next) {
        if (h->due <= t && !lm.seen[h->from]) {
            *p = h->next;
            if (lm.last == h)
                lm.last = prev;
            msg = h->msg;
            *from = h->from;
            free(h);
            break;
        }
        lm.seen[h->from] = 1;
    }
    for (struct held *h = lm.first; h; h = h->next)
        lm.seen[h->from] = 0;
    if (msg)
        update_next_due();
    return msg;
}

/* When the first held request falls due; 0 when none is held. Any thread, without a lock. */
uint64_t tshmem_link_next_due(void)
{
    return atomic_load_explicit(&lm.next_due, memory_order_relaxed);
}

/* One turn of a wait across the link (tshmem_spin_pause): sleep until the first request on
 * the wire to us arrives, a new request is posted to us (our doorbell rings: transport.c,
 * tshmem_offnode_sleep), and at most a nap, then look again (for a word set on this node).
 * A thread that waits for a network card sleeps too, and here it matters: a sleeper is woken in time, while a thread that yields beside busy ones (2.4's
 * backward pass) gets its core back only after their time slices. The nap grows with the
 * wait's turns, from 20 us to 640 us: every wake-up costs the busy threads a switch, and a
 * wait that has lasted is waiting for something slow (an arrival still wakes it on time). */
#define NAP_NS 20000u
void tshmem_link_nap(unsigned long turn)
{
    unsigned shift = turn / 16 > 5 ? 5 : (unsigned)(turn / 16);
    tshmem_offnode_sleep((uint64_t)NAP_NS << shift);
}
