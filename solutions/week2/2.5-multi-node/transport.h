/* transport.h: what the two halves of chapter 2.5's off-node path share (provided).
 *
 * A PE on another (virtual) node shares no memory with us, so tshmem_heap_peer answers NULL for
 * it and the calls of chapters 1.3 and 1.4 come to requests.c (tshmem_offnode_*). Each such
 * call becomes a request message to the target PE, where a progress thread, the proxy, applies
 * it to its own slice with the same C11 atomics as the shared-memory path, so that a word is
 * never updated by two atomicity domains. NVSHMEM does the same for InfiniBand with its proxy
 * thread (IBRC).
 *
 *   put     header to the target's proxy (TAG_REQ), then the bytes (TAG_DATA), in chunks;
 *           up to INLINE_BYTES the bytes ride in the header's own message
 *   signal  header; the proxy stores or adds with release order
 *   amo     header; the proxy applies it and, for a fetching one, replies the old value
 *   get     header; the proxy replies the bytes, chunk by chunk (TAG_REPLY)
 *   quiet   a QUIET header to every PE we sent to since the last quiet; the proxy answers
 *           (TAG_ACK) once it reaches it, so everything sent before it has been applied
 *
 * Order: MPI never lets two messages of one sender, tag and communicator overtake each other,
 * and one proxy thread applies a sender's requests one after another, so requests to one PE
 * are applied in the order they were made. That is all tshmem_fence asks of the off-node path.
 *
 * Who serves: the proxy thread when the program computes, and any thread of ours that waits
 * (tshmem_spin_pause calls the wait hook that tshmem_transport_start sets, which runs
 * tshmem_offnode_progress): a PE waiting for a signal takes the request that sets it itself,
 * without waiting for its proxy to be scheduled. One thread at a time serves (the serve lock,
 * below), so one sender's requests are still applied in order. The rule that follows: post
 * every message of a call (a put's bytes, a get's receives) before waiting for any. Two PEs
 * that each wait inside a put to the other may each be serving the other's request, and
 * neither gets back to posting what the other's tshmem_proxy_serve waits for.
 *
 * transport.c holds the state, the message helpers, the link model's hooks (link.c holds the
 * model) and the proxy thread's start, loop and stop; requests.c the sender side
 * (tshmem_offnode_*) and what the proxy does with a request (tshmem_proxy_serve): the part you
 * write. Every name these files share starts with tshmem_, as every global of the library does:
 * a function of your program called serve, or a global called net, must not meet ours at link
 * time.
 */
#ifndef TSHMEM_TRANSPORT_H
#define TSHMEM_TRANSPORT_H

#include <pthread.h>
#include <stdint.h>

#include "tshmem_internal.h"

/* Bytes per data message: big enough to run at the wire's bandwidth, small enough that MPI's
 * int count never overflows and that one sender's large put does not keep a proxy busy for
 * long while others wait. */
#define CHUNK_BYTES ((size_t)1 << 20)

enum { TAG_REQ = 1, TAG_DATA = 2, TAG_REPLY = 3, TAG_ACK = 4 };
enum { REQ_PUT, REQ_GET, REQ_SIGNAL, REQ_AMO, REQ_QUIET, REQ_STOP };
/* A PUT's sub, bits: its bytes came in the request's message (PUT_INLINE); after them the
 * proxy applies a signal (PUT_SIGNAL: value into the word at offset cond, added with
 * PUT_SIGNAL_ADD, else stored) and answers as to a QUIET (PUT_QUIET). A small put_signal, or a
 * small put and the quiet after it, is then one message (see tshmem_net.staged). */
enum { PUT_INLINE = 1, PUT_SIGNAL = 2, PUT_SIGNAL_ADD = 4, PUT_QUIET = 8 };

/* One request, as it travels. Addresses travel as offsets from the start of a slice: the
 * symmetric heap puts a word at the same offset in every PE's slice. */
struct request {
    uint32_t op;     /* REQ_* */
    uint32_t sub;    /* the tshmem_amo of an AMO, the sig_op of a SIGNAL, PUT_INLINE */
    uint64_t offset; /* target bytes or word, from the start of the target's slice */
    uint64_t nbytes; /* PUT, GET: bytes that follow (PUT) or are asked for (GET) */
    uint64_t value;  /* SIGNAL, AMO: the operand */
    uint64_t cond;   /* AMO compare-and-swap: the expected value */
    uint64_t due;    /* the link model's arrival time (ns, CLOCK_MONOTONIC); 0 without it */
};

/* A put of up to inline_limit(pe) bytes travels in one message, header and bytes together:
 * one message instead of two (a header, then the bytes), for a copy of the bytes on each side.
 * That pays while the message saved costs more than the copies. Between PEs of one machine (MPI
 * over shared memory) it does up to INLINE_BYTES; from 32 KiB the copies cost more. Over TCP
 * (TSHMEM_TRANSPORT=tcp, or a PE on another machine) every message is a pass through the
 * network stack, and it pays up to INLINE_MAX, where header and bytes still fit Open MPI's TCP
 * eager limit of 64 KiB. The measurements: book/performance.md, "Why the waits and the proxy are
 * tuned as they are". */
#define INLINE_BYTES ((size_t)16 << 10)
#define INLINE_MAX (((size_t)64 << 10) - sizeof(struct request))

/* A request with its inline bytes, as the proxy receives it. */
struct request_msg {
    struct request r;
    char bytes[INLINE_MAX];
};

/* The transport's state (transport.c).
 *
 * Its two locks, and the order in which a thread may hold them:
 *
 *   lock    the send lock (net_lock): one of this PE's threads at a time sends. Held by every
 *           tshmem_offnode_* call from its first message to its last; it guards pending,
 *           n_pending, staged, and the link model's card clock (link.c).
 *   serve   the serve lock: one of this PE's threads at a time takes requests (poll_requests).
 *           It guards taken, recv, posted and the link model's held requests.
 *
 * send lock, then serve lock: a thread inside a call waits with the send lock held, and its
 * wait serves (tshmem_offnode_progress tries the serve lock). Never the other way round: a
 * thread that serves holds the serve lock while every other PE's requests queue behind it, so
 * tshmem_proxy_serve answers with MPI directly and never waits for the send lock, whose holder
 * may itself wait for an answer from a PE whose requests only we can serve. Every acquisition
 * of the serve lock is a try (pthread_mutex_trylock: another thread is serving, so this one
 * need not), but the last, at tshmem_transport_stop, once the proxy has ended and the send
 * lock is free. The send lock is tried, not taken, by flush_idle, which runs inside waits that
 * may hold it already. Chapter 2.4's queue lock (request.c) is never held while a request runs,
 * so never with these two; MPI's own locks are below all of them. */
struct transport {
    int active;    /* a proxy thread runs: some PE is on another node */
    MPI_Comm comm; /* the transport's own communicator (a copy of tshmem_g.comm) */
    pthread_t thread;
    pthread_mutex_t lock;     /* the send lock (see above) */
    pthread_mutex_t serve;    /* the serve lock (see above) */
    unsigned char *pending;   /* send lock: pending[pe]: we sent pe something that quiet must
                               * confirm */
    int n_pending;            /* send lock: how many pending[] are set */
    _Atomic uint64_t polled;  /* when another thread than the proxy last polled (ns), where
                               * there is no doorbell to keep it (transport.c, polled_word) */
    atomic_int stop;          /* REQ_STOP was taken: the proxy thread ends */
    struct request_msg taken; /* under the serve lock: the request being taken */
    MPI_Request recv;         /* under the serve lock: a receive posted into taken, if posted */
    int posted;
    long hang_warn;           /* TSHMEM_HANG_WARN, read once: waits are on the fast path */
    int link_on;              /* TSHMEM_LINK is set: a QUIET travels on its own (link_due) */
    int tcp;                  /* TSHMEM_TRANSPORT=tcp: every message goes over TCP */
    /* Under the send lock: a small put that has not left yet, to PE staged_pe (-1: none). The
     * next request to that PE takes it along (a signal, a quiet); any other sends it first
     * (tshmem_net_flush_staged), and so does a thread that waits, or the proxy when it finds
     * it idle. */
    struct request_msg staged;
    atomic_int staged_pe; /* written under the send lock; read without it (relaxed) by
                           * flush_idle, which takes the lock before it acts on it */
    /* Doorbells (transport.c): one per PE, in a segment shared by the PEs of this machine;
     * NULL if it could not be made. A sender rings the target's after posting a request, so
     * that a thread of the target that sleeps for want of requests wakes at once. */
    struct tshmem_bell *bells;
    unsigned char *bell_here; /* bell_here[pe]: pe's bell is in our segment (same machine) */
};
extern struct transport tshmem_net;

/* The program's thread and chapter 2.4's progress thread may both reach another node at the
 * same time. A PUT header and its bytes, a request and its reply, quiet's QUIETs and their
 * acknowledgements must not interleave with the other thread's, so each tshmem_offnode_* call
 * holds the send lock from its first message to its last. The proxy thread never waits for it:
 * it answers other PEs whatever our own threads are doing. */
static inline void net_lock(void) { pthread_mutex_lock(&tshmem_net.lock); }
static inline void net_unlock(void) { pthread_mutex_unlock(&tshmem_net.lock); }

/* INLINE_MAX where the bytes go over TCP (TSHMEM_TRANSPORT=tcp, or pe on another machine: it
 * has no doorbell in our segment), INLINE_BYTES over shared memory. */
static inline size_t inline_limit(int pe)
{
    if (tshmem_net.tcp || !tshmem_net.bell_here || !tshmem_net.bell_here[pe])
        return INLINE_MAX;
    return INLINE_BYTES;
}

static inline uint64_t offset_of(const char *func, const void *addr)
{
    const char *p = addr;
    if (p < tshmem_g.slice || p >= tshmem_g.slice + tshmem_g.slice_bytes)
        tshmem_fail(func, "address %p is not in this PE's symmetric heap.", addr);
    return (uint64_t)(p - tshmem_g.slice);
}

/* The proxy's view of [offset, offset + nbytes) in its own slice; stops on a bad request. */
static inline char *local_bytes(uint64_t offset, uint64_t nbytes, int from)
{
    if (offset > tshmem_g.slice_bytes || nbytes > tshmem_g.slice_bytes - offset)
        tshmem_fail("proxy", "PE %d asked for %llu bytes at heap offset %llu, outside this "
                    "PE's slice of %zu bytes: do both PEs run with the same "
                    "TSHMEM_SYMMETRIC_SIZE?", from, (unsigned long long)nbytes,
                    (unsigned long long)offset, tshmem_g.slice_bytes);
    return tshmem_g.slice + offset;
}

/* Waits for an MPI request with back-off (tshmem_spin_pause), serving our own requests
 * meanwhile, and says what it waits for after TSHMEM_HANG_WARN seconds. `pe` is the PE whose
 * answer we wait for, or -1 for every PE. */
void tshmem_net_wait_request(MPI_Request *req, const char *func, int pe);

/* Posts a request message to pe's proxy: a struct request, followed by inline bytes if any
 * (`bytes` in all). The link model stamps it; `msg` must live until `req` completes. */
void tshmem_net_post_request(void *msg, size_t bytes, int pe, MPI_Request *req);

/* Posts a header-only request and waits until it has left. */
void tshmem_net_send_request(struct request *r, int pe, const char *func);

/* Sends the put waiting in tshmem_net.staged, if any; call with the send lock held. Requests
 * to one PE stay in the order they were made: every call sends the staged put before its own. */
void tshmem_net_flush_staged(void);

static inline void send_bytes(const void *buf, size_t nbytes, int pe, int tag, const char *func)
{
    MPI_Request req;
    MPI_Isend(buf, (int)nbytes, MPI_BYTE, pe, tag, tshmem_net.comm, &req);
    tshmem_net_wait_request(&req, func, pe);
}

static inline void recv_bytes(void *buf, size_t nbytes, int pe, int tag, const char *func)
{
    MPI_Request req;
    MPI_Irecv(buf, (int)nbytes, MPI_BYTE, pe, tag, tshmem_net.comm, &req);
    tshmem_net_wait_request(&req, func, pe);
}

/* pe has requests of ours that only a quiet confirms. */
static inline void mark_pending(int pe)
{
    if (!tshmem_net.pending[pe]) {
        tshmem_net.pending[pe] = 1;
        tshmem_net.n_pending++;
    }
}

/* A reply from pe came after everything we sent it before: nothing is pending there. */
static inline void clear_pending(int pe)
{
    if (tshmem_net.pending[pe]) {
        tshmem_net.pending[pe] = 0;
        tshmem_net.n_pending--;
    }
}

/* What the proxy does with one request from PE `from` (requests.c), called with the serve lock
 * held. A PUT of up to inline_limit(me) bytes came with its bytes: `inline_bytes` points to
 * them. */
void tshmem_proxy_serve(const struct request *r, const char *inline_bytes, int from);

#endif
