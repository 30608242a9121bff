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
    TSHMEM_TODO("Remote put", "send a PUT header and then the bytes to pe's proxy, one chunk at a time; mark pe pending");
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
    TSHMEM_TODO("Remote get", "ask pe's proxy for the bytes with one GET request and receive them chunk by chunk into dest");
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
    TSHMEM_TODO("Remote signal and atomics", "send a SIGNAL request; the proxy applies it after every earlier request of ours");
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
    TSHMEM_TODO("Remote signal and atomics", "send an AMO request; for a fetching one wait for the proxy's reply");
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
    TSHMEM_TODO("Quiet: waiting for acknowledgements", "send QUIET to every pending PE, then wait for all their acknowledgements");
    net_unlock();
}

/* What the proxy does with one request from PE `from`. It runs on the proxy thread (or a
 * waiting thread of ours, see progress), one request at a time, in the order each sender sent
 * them. A PUT of up to inline_limit(me) bytes came with its bytes: `inline_bytes` points to
 * them. */
void tshmem_proxy_serve(const struct request *r, const char *inline_bytes, int from)
{
    (void)r; (void)inline_bytes; (void)from;
    TSHMEM_TODO("The proxy thread", "apply a PUT, GET, SIGNAL, AMO or QUIET request to this PE's slice with C11 atomics, and answer where the sender waits");
}
