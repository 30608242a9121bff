/* network.h: what the two files of chapter 2.6's one-sided network share (provided).
 *
 * Chapter 2.5 reached another node through a proxy: every off-node put, signal or atomic was an
 * MPI message that a thread of the target took and applied. This network posts the operation
 * itself, through UCX's one-sided calls, on the target's registered memory: a put is
 * ucp_put_nbx into the target's slice, an atomic ucp_atomic_op_nbx on its word. Where the
 * transport does the work in hardware (RDMA on InfiniBand or RoCE, cross-memory attach on one
 * host) no thread of the target takes part; where it emulates it in software (TCP), UCX applies
 * the operation when the target's worker is progressed, which the helper thread of network.c
 * and every wait of the target do.
 *
 *   set up    each PE: a UCP context and one worker; its slice of the symmetric heap mapped
 *             once (ucp_mem_map) and its remote key packed; worker addresses, packed keys and
 *             slice addresses exchanged through MPI (the bootstrap), then one endpoint and one
 *             unpacked remote key per PE on another node (ucx.c, tshmem_ucx_open and _connect)
 *   put, get  ucp_put_nbx / ucp_get_nbx at the target's slice address plus the offset
 *   atomics   ucp_atomic_op_nbx on 64-bit words (add, swap, compare-swap; fetch is add 0)
 *   order     UCX does not order two operations to one target (two lanes, a put split over
 *             rails, an atomic on another lane than a put): ucp_worker_fence between them
 *   quiet     ucp_worker_flush_nbx: every operation posted before is complete at its target
 *
 * Thread mode: UCS_THREAD_MODE_SERIALIZED. Three threads of a PE may reach another node (the
 * program, 2.4's progress thread, and the helper thread that progresses the worker), and one
 * lock of ours, tshmem_ucx.lock, serializes them: every call holds it from its first UCX call
 * to its last, and the helper only tries it, so it steps aside while a call runs (that call
 * progresses the worker itself while it waits). UCS_THREAD_MODE_MULTI would add UCX's own lock
 * to every call for nothing.
 */
#ifndef TSHMEM_NETWORK_H
#define TSHMEM_NETWORK_H

#include <pthread.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

#include "tshmem_internal.h"

/* What tshmem_ucx_open returns while it is not written (its stub): the runtime then keeps
 * chapter 2.5's proxy, and TSHMEM_NET=ucx stops naming this chapter. */
#define TSHMEM_UCX_NOT_WRITTEN UCS_ERR_NOT_IMPLEMENTED

/* The network's state (network.c). `lock` guards everything below it and every UCX call. */
struct tshmem_ucx_state {
    pthread_mutex_t lock; /* one thread of ours at a time calls UCX (see above) */
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_mem_h memh;       /* this PE's slice, mapped for remote access */
    void *rkey_buf;       /* its packed remote key (ucp_rkey_pack), to send to the others */
    size_t rkey_len;
    ucp_address_t *address; /* this worker's address (ucp_worker_get_address) */
    size_t address_len;
    ucp_ep_h *ep;         /* ep[pe]: the endpoint to pe; NULL for a PE of this node */
    ucp_rkey_h *rkey;     /* rkey[pe]: pe's slice, unpacked on ep[pe]; NULL on this node */
    uint64_t *base;       /* base[pe]: the address of pe's slice in pe's own process */
    char (*host)[64];     /* host[pe]: the machine pe runs on (error messages, helper naps) */
    int unordered;        /* an operation was posted since the last fence or flush */
    int link_on;          /* TSHMEM_LINK: the sender waits out each transfer's wire time */
    int helper;           /* a helper thread progresses the worker (the transport needs it) */
    int efd;              /* the worker's event descriptor, or -1 (the helper then naps) */
    pthread_t thread;
    atomic_int stop;      /* the helper thread ends */
    ucs_status_t failed;  /* the first error reported by a completion callback */
};
extern struct tshmem_ucx_state tshmem_ucx;

/* ---- provided (network.c) ---- */
/* Stops with a sentence naming this PE, `func`, what failed, the PE it was for (or -1), the
 * machines of both and UCX's own words for `status`. */
_Noreturn void tshmem_ucx_fail(const char *func, const char *what, int pe, ucs_status_t status);
/* Waits for what a UCX call returned (NULL, an error, or a request), progressing the worker
 * with back-off, then frees the request. Stops with tshmem_ucx_fail on an error. */
void tshmem_ucx_wait(ucs_status_ptr_t ret, const char *func, const char *what, int pe);
/* Lets a request run to completion by itself: its completion callback frees it and records an
 * error for the next quiet. For operations whose completion only quiet confirms. */
void tshmem_ucx_detach(ucs_status_ptr_t ret, const char *func, const char *what, int pe);
/* The param of such a request (callback set, no immediate completion asked). */
ucp_request_param_t tshmem_ucx_detached_param(void);
/* Under TSHMEM_LINK, waits until a transfer of `bytes` posted now would have crossed the link
 * (answered: and its answer of `back` bytes come back). A no-op without the link model. */
void tshmem_ucx_link_wait(size_t bytes, int answered, size_t back);
/* Every PE's blob of `len` bytes (a worker address, a packed key): all[pe] points into one
 * buffer that the caller frees with free(all[0]) and free(all). Collective, through MPI. */
void **tshmem_ucx_allgather(const void *mine, size_t len);

/* ---- yours (ucx.c) ---- */
/* The context, the worker, the mapped slice and its packed key, the worker's address, all in
 * tshmem_ucx; UCS_OK, or the status of the first call that failed. `tcp`: TSHMEM_TRANSPORT=tcp
 * asks for every off-node byte over TCP (UCX_TLS=tcp,self unless UCX_TLS is set). */
ucs_status_t tshmem_ucx_open(int tcp);
/* Given every PE's worker address and packed key, an endpoint and an unpacked key for each PE
 * on another node (tshmem_ucx.ep, .rkey); UCS_OK, or the first failure (*bad_pe: its PE). */
ucs_status_t tshmem_ucx_connect(void *const *addresses, void *const *rkeys, int *bad_pe);

/* The address on pe of the heap word or byte at `addr` of ours: the same offset in its slice. */
static inline uint64_t tshmem_ucx_remote(const char *func, const void *addr, int pe)
{
    const char *p = addr;
    if (p < tshmem_g.slice || p >= tshmem_g.slice + tshmem_g.slice_bytes)
        tshmem_fail(func, "address %p is not in this PE's symmetric heap.", addr);
    return tshmem_ucx.base[pe] + (uint64_t)(p - tshmem_g.slice);
}

#endif
