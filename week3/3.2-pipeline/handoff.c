/* handoff.c: a pipe between the stages of a model: activations forward, gradients backward.
 *
 * Chapter 3.2. Stage s (team PE s) receives micro-batch activations from stage s - 1 into its
 * forward slots and gradients from stage s + 1 into its backward slots. A handoff is one
 * tshmem_putmem_signal: the data into the receiver's slot (seq - 1) % n_slots, then the signal
 * "arrived = seq", where seq counts the micro-batches of that direction since the pipe was
 * created (1, 2, 3, ...; never reset, so steps follow each other with no barrier). The
 * receiver copies the slot out and answers with a credit, "credit = seq", on the sender: the
 * slot may be written again. A sender therefore waits for credit >= seq - n_slots before it
 * writes micro-batch seq: it is never more than n_slots micro-batches ahead of its receiver,
 * which is the backpressure that keeps a slow stage from being flooded.
 *
 * Every word has one writer: my fwd.arrived is written by the stage before me, my fwd.credit
 * by the stage after me (and the other way round for bwd), and my counters by me.
 */
#define TSHMEM_CHAPTER "3.2"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tshmem_internal.h"
#include "tshmem_pipe.h"

/* Provided: the check every call on a pipe starts with. */
static void pipe_check(const char *func, const tshmem_pipe_t *p)
{
    tshmem_require_live(func);
    if (p == NULL)
        tshmem_fail(func, "PE %d passed pipe = NULL: pass the pipe that tshmem_pipe_create "
                    "returned.", tshmem_g.my_pe);
    if (p->magic != TSHMEM_PIPE_MAGIC)
        tshmem_fail(func, "PE %d passed %p, which is not a live pipe: it did not come from "
                    "tshmem_pipe_create, or tshmem_pipe_destroy has freed it.", tshmem_g.my_pe,
                    (const void *)p);
}

/* Provided: after pipe_check, for the calls that move data: this PE must be a stage. */
static void stage_check(const char *func, const tshmem_pipe_t *p, const void *data)
{
    if (p->stage < 0)
        tshmem_fail(func, "PE %d is not a member of the pipe's team (team %d): it holds the "
                    "pipe only to destroy it. Call the handoffs on the team's PEs.",
                    tshmem_g.my_pe, p->team);
    if (data == NULL)
        tshmem_fail(func, "PE %d (stage %d) passed a NULL buffer: pass %zu floats.",
                    tshmem_g.my_pe, p->stage, p->act_elems);
}

tshmem_pipe_t *tshmem_pipe_create(tshmem_team_t team, const tshmem_pipe_config_t *config)
{
    const char *func = __func__;
    tshmem_require_live(func);
    (void)team; (void)config;
    TSHMEM_TODO("Creating a pipe", "check the team and the config (a sentence for each bad value), lay out counters, four flags and 2 x n_slots slots in one zeroed symmetric block, and fill in the handle (stage -1 outside the team)");
}

void tshmem_pipe_destroy(tshmem_pipe_t *pipe)
{
    pipe_check(__func__, pipe);
    /* tshmem_free waits for every PE first: no neighbour is still writing into the block. */
    tshmem_free(pipe->block);
    pipe->magic = 0;
    free(pipe);
}

int tshmem_pipe_stage(const tshmem_pipe_t *pipe)
{
    pipe_check(__func__, pipe);
    return pipe->stage;
}

int tshmem_pipe_n_stages(const tshmem_pipe_t *pipe)
{
    pipe_check(__func__, pipe);
    return pipe->n_stages;
}

/* Slot k of a direction: the same address on every PE, so it names the receiver's twin too. */
static inline float *slot_of(const tshmem_pipe_t *p, const struct tshmem_pipe_dir *d, uint64_t seq)
{
    return d->slots + (size_t)((seq - 1) % (uint64_t)p->n_slots) * p->slot_elems;
}

/* Provided: tshmem_putmem_signal(dest, src, bytes, sig, value, TSHMEM_SIGNAL_SET, pe), with the
 * bytes of a large handoff to a PE of this node copied by two threads. A handoff of many MiB is
 * one copy, and one core's copy does not use the whole memory bus. So the copy goes in pieces
 * of PIPE_PIECE bytes, which the caller and a helper thread take in turn from a shared counter:
 * the helper, kept off the caller's core, copies on a free core or on the receiver's, whose
 * thread only waits and yields; if it is slow to start, or its core is busy, the caller takes
 * more pieces, never fewer. Then every piece is complete, the fence orders them before the
 * signal, and the signal goes. Across nodes, or where the thread cannot start, the one call
 * does it all. */
#define PIPE_SPLIT_BYTES ((size_t)4 << 20)
#define PIPE_PIECE ((size_t)1 << 20)

struct split_copy {
    char *dest;
    const char *src;
    size_t bytes;
    int pe;
    _Atomic size_t next; /* the next piece to take */
};

static void copy_pieces(struct split_copy *c)
{
    size_t n = (c->bytes + PIPE_PIECE - 1) / PIPE_PIECE, k;
    while ((k = atomic_fetch_add(&c->next, 1)) < n) {
        size_t at = k * PIPE_PIECE, len = c->bytes - at < PIPE_PIECE ? c->bytes - at : PIPE_PIECE;
        tshmem_putmem(c->dest + at, c->src + at, len, c->pe);
    }
}

static void *copy_helper(void *arg)
{
    copy_pieces(arg);
    return NULL;
}

/* A thread kept off the caller's core, where it would only take turns with the caller. The PE
 * may be bound to that one core (Open MPI binds 2 PEs on 2 cores so): the helper then may use
 * the machine's other cores, the receiver's among them (tshmem_thread_start). 0 if it started. */
static int start_helper(pthread_t *t, struct split_copy *c)
{
    return tshmem_thread_start(t, copy_helper, c, "tshmem-copy",
                               TSHMEM_THREAD_PREEMPTS | TSHMEM_THREAD_OFF_MY_CORE);
}

static inline void pipe_put_signal(void *dest, const void *src, size_t bytes, uint64_t *sig,
                                   uint64_t value, int pe)
{
    pthread_t helper;
    struct split_copy c = {.dest = dest, .src = src, .bytes = bytes, .pe = pe};
    atomic_init(&c.next, 0);
    if (bytes < PIPE_SPLIT_BYTES || tshmem_ptr(dest, pe) == NULL || start_helper(&helper, &c)) {
        tshmem_putmem_signal(dest, src, bytes, sig, value, TSHMEM_SIGNAL_SET, pe);
        return;
    }
    copy_pieces(&c);
    pthread_join(helper, NULL);
    tshmem_fence(); /* every piece before the signal */
    tshmem_signal_op(sig, value, TSHMEM_SIGNAL_SET, pe);
}

/* Hands micro-batch number seq of direction d (act_elems floats at data) to d->to_pe. */
static void handoff_send(tshmem_pipe_t *p, struct tshmem_pipe_dir *d, const float *data,
                         uint64_t seq)
{
    (void)p; (void)d; (void)data; (void)seq;
    TSHMEM_TODO("Handoffs", "wait until the receiver has credited micro-batch seq - n_slots (its slot is free again), then put data into slot_of(seq) on d->to_pe with the signal arrived = seq (pipe_put_signal)");
}

/* Receives micro-batch number seq of direction d from d->from_pe into data. */
static void handoff_recv(tshmem_pipe_t *p, struct tshmem_pipe_dir *d, float *data, uint64_t seq)
{
    (void)p; (void)d; (void)data; (void)seq;
    TSHMEM_TODO("Handoffs", "wait until arrived >= seq, copy slot_of(seq) into data, then give the slot back: credit = seq (SET) on d->from_pe");
}

/* Zero copy: waits for micro-batch number seq of direction d and returns it where it lies. */
static const float *handoff_recv_ptr(tshmem_pipe_t *p, struct tshmem_pipe_dir *d, uint64_t seq)
{
    (void)p; (void)d; (void)seq;
    TSHMEM_TODO("Zero-copy receive", "wait until arrived >= seq and return slot_of(seq) itself: no copy, and no credit yet");
}

/* Zero copy: gives the slot of micro-batch number seq back to d->from_pe. */
static void handoff_release(tshmem_pipe_t *p, struct tshmem_pipe_dir *d, uint64_t seq)
{
    (void)p; (void)d; (void)seq;
    TSHMEM_TODO("Zero-copy receive", "the caller has finished reading slot_of(seq): credit = seq (SET) on d->from_pe");
}

/* Provided: what this PE tells the world (struct tshmem_pipe_counters). */
static void publish(uint64_t *word, uint64_t value)
{
    atomic_store_explicit(tshmem_atomic(word), value, memory_order_release);
}

/* Provided: the public calls: checks, numbering and counters around your two functions. */
static void send_dir(const char *func, tshmem_pipe_t *p, struct tshmem_pipe_dir *d,
                     const float *data, uint64_t *sent, uint64_t *sending, uint64_t *ahead_max,
                     const char *none)
{
    stage_check(func, p, data);
    if (d->to_pe < 0)
        tshmem_fail(func, "PE %d is stage %d of %d: %s. Check the stage before sending "
                    "(tshmem_pipe_stage).", tshmem_g.my_pe, p->stage, p->n_stages, none);
    uint64_t seq = d->sent + 1;
    publish(sending, seq);
    handoff_send(p, d, data, seq);
    d->sent = seq;
    /* How far ahead of its receiver this send left us: at most n_slots if the send waited
     * for its credit (the credit only grows, so reading it after the put errs on the low
     * side). */
    uint64_t credited = atomic_load_explicit(tshmem_atomic(d->credit), memory_order_acquire);
    uint64_t ahead = seq > credited ? seq - credited : 0;
    if (ahead > *ahead_max)
        publish(ahead_max, ahead);
    publish(sent, seq);
    publish(sending, 0);
}

static void recv_dir(const char *func, tshmem_pipe_t *p, struct tshmem_pipe_dir *d, float *data,
                     uint64_t *received, const char *none)
{
    stage_check(func, p, data);
    if (d->from_pe < 0)
        tshmem_fail(func, "PE %d is stage %d of %d: %s. Check the stage before receiving "
                    "(tshmem_pipe_stage).", tshmem_g.my_pe, p->stage, p->n_stages, none);
    if (d->released != d->received)
        tshmem_fail(func, "PE %d (stage %d) still holds %llu slot(s) from a zero-copy receive: "
                    "a copying receive gives its slot back at once, and with it the held ones. "
                    "Release them first (tshmem_pipe_release_fwd / _bwd).", tshmem_g.my_pe,
                    p->stage, (unsigned long long)(d->received - d->released));
    uint64_t seq = d->received + 1;
    handoff_recv(p, d, data, seq);
    d->received = d->released = seq;
    publish(received, seq);
}

/* Provided: the zero-copy receive and its release: checks and numbering around yours. */
static void zero_copy_check(const char *func, tshmem_pipe_t *p, const struct tshmem_pipe_dir *d,
                            const char *none)
{
    stage_check(func, p, p);
    if (d->from_pe < 0)
        tshmem_fail(func, "PE %d is stage %d of %d: %s. Check the stage before receiving "
                    "(tshmem_pipe_stage).", tshmem_g.my_pe, p->stage, p->n_stages, none);
}

static const float *recv_ptr_dir(const char *func, tshmem_pipe_t *p, struct tshmem_pipe_dir *d,
                                 uint64_t *received, const char *none)
{
    zero_copy_check(func, p, d, none);
    /* The sender of the next micro-batch waits for the credit of the oldest held one: asking
     * for it while holding every slot would wait for ever. */
    if (d->received - d->released >= (uint64_t)p->n_slots)
        tshmem_fail(func, "PE %d (stage %d) already holds all %d slot(s) of this direction: its "
                    "sender cannot send micro-batch %llu before one comes back. Release the "
                    "oldest first (tshmem_pipe_release_fwd / _bwd).", tshmem_g.my_pe, p->stage,
                    p->n_slots, (unsigned long long)d->received + 1);
    uint64_t seq = d->received + 1;
    const float *slot = handoff_recv_ptr(p, d, seq);
    d->received = seq;
    publish(received, seq);
    return slot;
}

static void release_dir(const char *func, tshmem_pipe_t *p, struct tshmem_pipe_dir *d,
                        const char *none)
{
    zero_copy_check(func, p, d, none);
    if (d->released == d->received)
        tshmem_fail(func, "PE %d (stage %d) holds no slot of this direction: release once for "
                    "each pointer that the zero-copy receive returned, after the last read "
                    "of it.", tshmem_g.my_pe, p->stage);
    handoff_release(p, d, d->released + 1);
    d->released++;
}

void tshmem_pipe_send_fwd(tshmem_pipe_t *pipe, const float *act)
{
    pipe_check(__func__, pipe);
    struct tshmem_pipe_counters *c = pipe->counters;
    send_dir(__func__, pipe, &pipe->fwd, act, &c->fwd_sent, &c->fwd_sending, &c->fwd_ahead_max,
             "the last stage has no stage after it to send an activation to");
}

void tshmem_pipe_recv_fwd(tshmem_pipe_t *pipe, float *act)
{
    pipe_check(__func__, pipe);
    recv_dir(__func__, pipe, &pipe->fwd, act, &pipe->counters->fwd_received,
             "the first stage has no stage before it to receive an activation from (its "
             "input comes from tshmem_pipe_model_input)");
}

void tshmem_pipe_send_bwd(tshmem_pipe_t *pipe, const float *grad)
{
    pipe_check(__func__, pipe);
    struct tshmem_pipe_counters *c = pipe->counters;
    send_dir(__func__, pipe, &pipe->bwd, grad, &c->bwd_sent, &c->bwd_sending, &c->bwd_ahead_max,
             "the first stage has no stage before it to send a gradient to");
}

void tshmem_pipe_recv_bwd(tshmem_pipe_t *pipe, float *grad)
{
    pipe_check(__func__, pipe);
    recv_dir(__func__, pipe, &pipe->bwd, grad, &pipe->counters->bwd_received,
             "the last stage has no stage after it to receive a gradient from (its gradient "
             "comes from the loss)");
}

const float *tshmem_pipe_recv_fwd_ptr(tshmem_pipe_t *pipe)
{
    pipe_check(__func__, pipe);
    return recv_ptr_dir(__func__, pipe, &pipe->fwd, &pipe->counters->fwd_received,
                        "the first stage has no stage before it to receive an activation from");
}

void tshmem_pipe_release_fwd(tshmem_pipe_t *pipe)
{
    pipe_check(__func__, pipe);
    release_dir(__func__, pipe, &pipe->fwd, "the first stage receives no activations");
}

const float *tshmem_pipe_recv_bwd_ptr(tshmem_pipe_t *pipe)
{
    pipe_check(__func__, pipe);
    return recv_ptr_dir(__func__, pipe, &pipe->bwd, &pipe->counters->bwd_received,
                        "the last stage has no stage after it to receive a gradient from");
}

void tshmem_pipe_release_bwd(tshmem_pipe_t *pipe)
{
    pipe_check(__func__, pipe);
    release_dir(__func__, pipe, &pipe->bwd, "the last stage receives no gradients");
}
