/* requests.c: the off-node calls as requests, both ends: the sender side (tshmem_offnode_*) and
 * what the target's proxy does with each request (tshmem_proxy_serve).
 *
 * Chapter 2.5. transport.h says what travels, in which order, and who serves; transport.c
 * provides the state, the message helpers and the proxy thread that calls tshmem_proxy_serve.
 * You write the five calls below and tshmem_proxy_serve. Where chapter 2.6's network runs
 * (tshmem_ucx_active), each call hands its work to it first thing.
 */
#define TSHMEM_CHAPTER "2.5"
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "transport.h"

_Noreturn static void no_transport(const char *func, int pe)
{
    tshmem_fail(func, "PE %d is on node %d and this PE is on node %d, but the off-node "
                "transport is not running (tshmem_transport_start found every PE on one node).",
                pe, tshmem_g.pe_node[pe], tshmem_g.node);
}

void tshmem_offnode_put(void *dest, const void *source, size_t nbytes, int pe)
{
    if (tshmem_ucx_active()) { /* chapter 2.6's network carries it */
        tshmem_ucx_put(dest, source, nbytes, pe);
        return;
    }
    if (!tshmem_net.active)
        no_transport("tshmem_putmem", pe);
    net_lock();
    /* BEGIN SOLUTION (Remote put): send a PUT header and then the bytes to pe's proxy, one chunk at a time; mark pe pending */
    const char *from = source;
    uint64_t offset = offset_of("tshmem_putmem", dest);
    tshmem_net_flush_staged(); /* an earlier small put goes first */
    if (nbytes <= inline_limit(pe)) {
        /* Small: the bytes ride in the header's message; a copy of a few KiB costs less than
         * a second message through MPI and the proxy. The message waits in tshmem_net.staged for
         * our next call: put_signal's signal then travels in it (tshmem_offnode_signal). */
        tshmem_net.staged.r = (struct request){.op = REQ_PUT, .sub = PUT_INLINE, .offset = offset,
                                        .nbytes = nbytes};
        memcpy(tshmem_net.staged.bytes, source, nbytes);
        atomic_store_explicit(&tshmem_net.staged_pe, pe, memory_order_relaxed);
        mark_pending(pe);
        net_unlock();
        return;
    }
    /* Every message is posted before we wait for any (see "Who serves" above): while we
     * wait we may serve pe's requests, and pe may be waiting on our bytes to serve ours. */
    size_t n = (nbytes + CHUNK_BYTES - 1) / CHUNK_BYTES;
    struct request *r = malloc(n * sizeof *r);
    MPI_Request *req = malloc(2 * n * sizeof *req);
    if (!r || !req)
        tshmem_fail("tshmem_putmem", "out of memory for the %zu chunks of a put.", n);
    for (size_t i = 0; i < n; i++) {
        size_t done = i * CHUNK_BYTES;
        size_t len = nbytes - done < CHUNK_BYTES ? nbytes - done : CHUNK_BYTES;
        r[i] = (struct request){.op = REQ_PUT, .offset = offset + done, .nbytes = len};
        tshmem_net_post_request(&r[i], sizeof r[i], pe, &req[2 * i]);
        /* Same sender, same receiver: the bytes are the next TAG_DATA message the proxy
         * takes from us, and they leave from source itself (no copy). When the send is
         * complete, source may be reused: a put's local completion. */
        MPI_Isend(from + done, (int)len, MPI_BYTE, pe, TAG_DATA, tshmem_net.comm, &req[2 * i + 1]);
    }
    for (size_t i = 0; i < 2 * n; i++)
        tshmem_net_wait_request(&req[i], "tshmem_putmem", pe);
    free(req);
    free(r);
    mark_pending(pe);
    /* END SOLUTION */
    net_unlock();
}

void tshmem_offnode_get(void *dest, const void *source, size_t nbytes, int pe)
{
    if (tshmem_ucx_active()) {
        tshmem_ucx_get(dest, source, nbytes, pe);
        return;
    }
    if (!tshmem_net.active)
        no_transport("tshmem_getmem", pe);
    net_lock();
    /* BEGIN SOLUTION (Remote get): ask pe's proxy for the bytes with one GET request and receive them chunk by chunk into dest */
    tshmem_net_flush_staged();
    struct request r = {.op = REQ_GET, .offset = offset_of("tshmem_getmem", source),
                        .nbytes = nbytes};
    char *to = dest;
    /* Post every chunk's receive before asking: the reply never waits for us, even while we
     * serve pe's requests in the wait (see "Who serves" above). */
    size_t n = nbytes ? (nbytes + CHUNK_BYTES - 1) / CHUNK_BYTES : 1;
    MPI_Request *req = malloc(n * sizeof *req);
    if (!req)
        tshmem_fail("tshmem_getmem", "out of memory for the %zu chunks of a get.", n);
    for (size_t i = 0; i < n; i++) {
        size_t done = i * CHUNK_BYTES;
        size_t len = nbytes - done < CHUNK_BYTES ? nbytes - done : CHUNK_BYTES;
        MPI_Irecv(to + done, (int)len, MPI_BYTE, pe, TAG_REPLY, tshmem_net.comm, &req[i]);
    }
    tshmem_net_send_request(&r, pe, "tshmem_getmem");
    for (size_t i = 0; i < n; i++)
        tshmem_net_wait_request(&req[i], "tshmem_getmem", pe);
    free(req);
    /* The proxy read our bytes after applying everything we sent it before this request. */
    clear_pending(pe);
    /* END SOLUTION */
    net_unlock();
}

void tshmem_offnode_signal(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    if (tshmem_ucx_active()) {
        tshmem_ucx_signal(sig_addr, signal, sig_op, pe);
        return;
    }
    if (!tshmem_net.active)
        no_transport("tshmem_signal_op", pe);
    net_lock();
    /* BEGIN SOLUTION (Remote signal and atomics): send a SIGNAL request; the proxy applies it after every earlier request of ours */
    struct request r = {.op = REQ_SIGNAL, .sub = (uint32_t)sig_op,
                        .offset = offset_of("tshmem_signal_op", sig_addr), .value = signal};
    if (atomic_load_explicit(&tshmem_net.staged_pe, memory_order_relaxed) == pe) {
        /* put_signal: the signal rides in the put's message, applied after its bytes. */
        tshmem_net.staged.r.sub |= PUT_SIGNAL | (sig_op == TSHMEM_SIGNAL_ADD ? PUT_SIGNAL_ADD : 0);
        tshmem_net.staged.r.cond = r.offset;
        tshmem_net.staged.r.value = signal;
        tshmem_net_flush_staged();
    } else {
        tshmem_net_flush_staged();
        tshmem_net_send_request(&r, pe, "tshmem_signal_op");
    }
    mark_pending(pe);
    /* END SOLUTION */
    net_unlock();
}

uint64_t tshmem_offnode_amo(enum tshmem_amo op, uint64_t *dest, uint64_t value, uint64_t cond,
                            int pe)
{
    if (tshmem_ucx_active())
        return tshmem_ucx_amo(op, dest, value, cond, pe);
    if (!tshmem_net.active)
        no_transport("tshmem_uint64_atomic", pe);
    uint64_t old = 0;
    net_lock();
    /* BEGIN SOLUTION (Remote signal and atomics): send an AMO request; for a fetching one wait for the proxy's reply */
    tshmem_net_flush_staged();
    struct request r = {.op = REQ_AMO, .sub = (uint32_t)op,
                        .offset = offset_of("tshmem_uint64_atomic", dest), .value = value,
                        .cond = cond};
    if (op == TSHMEM_AMO_SET || op == TSHMEM_AMO_ADD) {
        /* Nothing comes back: like a put, it is complete at the next quiet. */
        tshmem_net_send_request(&r, pe, "tshmem_uint64_atomic");
        mark_pending(pe);
    } else {
        MPI_Request req;
        MPI_Irecv(&old, 1, MPI_UINT64_T, pe, TAG_REPLY, tshmem_net.comm, &req);
        tshmem_net_send_request(&r, pe, "tshmem_uint64_atomic");
        tshmem_net_wait_request(&req, "tshmem_uint64_atomic", pe);
        clear_pending(pe);
    }
    /* END SOLUTION */
    net_unlock();
    return old;
}

void tshmem_offnode_quiet(void)
{
    if (tshmem_ucx_active()) {
        tshmem_ucx_quiet();
        return;
    }
    if (!tshmem_net.active)
        return; /* every PE on one node: nothing can be pending */
    net_lock();
    if (tshmem_net.n_pending == 0) { /* nothing sent off-node since the last quiet */
        net_unlock();
        return;
    }
    /* BEGIN SOLUTION (Quiet: waiting for acknowledgements): send QUIET to every pending PE, then wait for all their acknowledgements */
    int n = tshmem_g.n_pes, k = 0;
    MPI_Request *acks = malloc(sizeof *acks * (size_t)tshmem_net.n_pending);
    int *from = malloc(sizeof *from * (size_t)tshmem_net.n_pending);
    struct request r = {.op = REQ_QUIET};
    /* Ask them all first, then wait: the round trips overlap instead of adding up. */
    for (int pe = 0; pe < n; pe++) {
        if (!tshmem_net.pending[pe])
            continue;
        from[k] = pe;
        MPI_Irecv(NULL, 0, MPI_BYTE, pe, TAG_ACK, tshmem_net.comm, &acks[k++]);
        int staged_here = atomic_load_explicit(&tshmem_net.staged_pe, memory_order_relaxed) == pe;
        if (staged_here && !tshmem_net.link_on) {
            tshmem_net.staged.r.sub |= PUT_QUIET; /* the put not sent yet asks for the answer */
            tshmem_net_flush_staged();
            continue;
        }
        if (staged_here)
            tshmem_net_flush_staged(); /* under the link model a QUIET travels on its own,
                                        * after it */
        tshmem_net_send_request(&r, pe, "tshmem_quiet");
    }
    for (int i = 0; i < k; i++)
        tshmem_net_wait_request(&acks[i], "tshmem_quiet", from[i]);
    free(acks);
    free(from);
    memset(tshmem_net.pending, 0, (size_t)n);
    tshmem_net.n_pending = 0;
    /* END SOLUTION */
    net_unlock();
}

/* What the proxy does with one request from PE `from`. It runs on the proxy thread (or a
 * waiting thread of ours, see progress), one request at a time, in the order each sender sent
 * them. A PUT of up to inline_limit(me) bytes came with its bytes: `inline_bytes` points to
 * them. */
void tshmem_proxy_serve(const struct request *r, const char *inline_bytes, int from)
{
    /* BEGIN SOLUTION (The proxy thread): apply a PUT, GET, SIGNAL, AMO or QUIET request to this PE's slice with C11 atomics, and answer where the sender waits */
    switch (r->op) {
    case REQ_PUT: {
        /* The bytes are the next TAG_DATA message from `from`: straight into the heap. */
        char *to = local_bytes(r->offset, r->nbytes, from);
        if (r->sub & PUT_INLINE) {
            memcpy(to, inline_bytes, r->nbytes);
            if (r->sub & PUT_SIGNAL) { /* release: after the bytes, as a SIGNAL would be */
                _Atomic uint64_t *w = tshmem_atomic((uint64_t *)local_bytes(r->cond, 8, from));
                if (r->sub & PUT_SIGNAL_ADD)
                    atomic_fetch_add_explicit(w, r->value, memory_order_release);
                else
                    atomic_store_explicit(w, r->value, memory_order_release);
            }
            if (r->sub & PUT_QUIET) { /* as REQ_QUIET below: everything before is applied */
                atomic_thread_fence(memory_order_seq_cst);
                MPI_Send(NULL, 0, MPI_BYTE, from, TAG_ACK, tshmem_net.comm);
            }
            break;
        }
        MPI_Recv(to, (int)r->nbytes, MPI_BYTE, from, TAG_DATA, tshmem_net.comm, MPI_STATUS_IGNORE);
        break;
    }
    case REQ_GET: {
        const char *src = local_bytes(r->offset, r->nbytes, from);
        for (size_t done = 0; done < r->nbytes; done += CHUNK_BYTES) {
            size_t len = r->nbytes - done < CHUNK_BYTES ? r->nbytes - done : CHUNK_BYTES;
            MPI_Send(src + done, (int)len, MPI_BYTE, from, TAG_REPLY, tshmem_net.comm);
        }
        break;
    }
    case REQ_SIGNAL: {
        /* Release, as on the shared-memory path: the bytes of every earlier PUT from this
         * sender were stored by this thread before, so a PE that reads the signal with
         * acquire sees them. */
        _Atomic uint64_t *w = tshmem_atomic((uint64_t *)local_bytes(r->offset, 8, from));
        if (r->sub == TSHMEM_SIGNAL_SET)
            atomic_store_explicit(w, r->value, memory_order_release);
        else
            atomic_fetch_add_explicit(w, r->value, memory_order_release);
        break;
    }
    case REQ_AMO: {
        _Atomic uint64_t *w = tshmem_atomic((uint64_t *)local_bytes(r->offset, 8, from));
        uint64_t old = 0, cond = r->cond;
        switch ((enum tshmem_amo)r->sub) {
        case TSHMEM_AMO_FETCH: old = atomic_load_explicit(w, memory_order_acquire); break;
        case TSHMEM_AMO_SET: atomic_store_explicit(w, r->value, memory_order_release); return;
        case TSHMEM_AMO_ADD: atomic_fetch_add_explicit(w, r->value, memory_order_acq_rel); return;
        case TSHMEM_AMO_FETCH_ADD:
            old = atomic_fetch_add_explicit(w, r->value, memory_order_acq_rel);
            break;
        case TSHMEM_AMO_SWAP: old = atomic_exchange_explicit(w, r->value, memory_order_acq_rel); break;
        case TSHMEM_AMO_COMPARE_SWAP:
            atomic_compare_exchange_strong_explicit(w, &cond, r->value, memory_order_acq_rel,
                                                    memory_order_acquire);
            old = cond;
            break;
        default:
            tshmem_fail("proxy", "PE %d sent an atomic of unknown kind %u.", from, r->sub);
        }
        MPI_Send(&old, 1, MPI_UINT64_T, from, TAG_REPLY, tshmem_net.comm);
        break;
    }
    case REQ_QUIET:
        /* Everything `from` sent before this request has been applied above. */
        atomic_thread_fence(memory_order_seq_cst);
        MPI_Send(NULL, 0, MPI_BYTE, from, TAG_ACK, tshmem_net.comm);
        break;
    default:
        tshmem_fail("proxy", "PE %d sent a request of unknown kind %u.", from, r->op);
    }
    /* END SOLUTION */
}
