/* ucx.c: the one-sided network: UCX opened and connected, and the off-node calls of chapters
 * 1.3 and 1.4 as UCX's own one-sided operations.
 *
 * Chapter 2.6. network.h says what each call becomes and why; network.c provides the start,
 * the exchange through MPI, the waits (tshmem_ucx_wait, tshmem_ucx_detach), the link model's
 * wait and the helper thread. You write the seven functions below. Each off-node call holds
 * tshmem_ucx.lock from its first UCX call to its last (the worker is SERIALIZED).
 */
#define TSHMEM_CHAPTER "2.6"
#include <stdlib.h>
#include <string.h>

#include "network.h"

ucs_status_t tshmem_ucx_open(int tcp)
{
    (void)tcp;
    /* TODO ("Context, worker and memory"): read UCX's configuration (tcp,self over TCP), make a context for RMA, 64-bit atomics and wake-ups, a SERIALIZED worker, map this PE's slice, pack its key, get the worker's address */
    return TSHMEM_UCX_NOT_WRITTEN;
}

ucs_status_t tshmem_ucx_connect(void *const *addresses, void *const *rkeys, int *bad_pe)
{
    (void)addresses; (void)rkeys; (void)bad_pe;
    /* TODO ("Endpoints and remote keys"): for every PE on another node, an endpoint from its worker address and its key unpacked on that endpoint */
    return TSHMEM_UCX_NOT_WRITTEN;
}

/* Orders what comes next after every operation posted before. */
static inline void fence_if_needed(const char *func, int pe)
{
    (void)func; (void)pe;
    TSHMEM_TODO("Order: the fence", "UCX orders nothing between two operations: fence the worker when something was posted since the last fence or completion");
}

void tshmem_ucx_put(void *dest, const void *source, size_t nbytes, int pe)
{
    pthread_mutex_lock(&tshmem_ucx.lock);
    tshmem_ucx_link_wait(nbytes, 0, 0);
    (void)dest; (void)source; (void)pe;
    TSHMEM_TODO("Put and get", "after the fence, ucp_put_nbx into dest's place in pe's slice; return once source may be reused");
    pthread_mutex_unlock(&tshmem_ucx.lock);
}

void tshmem_ucx_get(void *dest, const void *source, size_t nbytes, int pe)
{
    pthread_mutex_lock(&tshmem_ucx.lock);
    tshmem_ucx_link_wait(0, 1, nbytes);
    (void)dest; (void)source; (void)pe;
    TSHMEM_TODO("Put and get", "after the fence (a get sees our earlier puts), ucp_get_nbx from source's place in pe's slice, and wait for the bytes");
    pthread_mutex_unlock(&tshmem_ucx.lock);
}

void tshmem_ucx_signal(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    pthread_mutex_lock(&tshmem_ucx.lock);
    tshmem_ucx_link_wait(8, 0, 0);
    (void)sig_addr; (void)signal; (void)sig_op; (void)pe;
    TSHMEM_TODO("Atomics and signals", "after the fence (the data of a put_signal lands first), an atomic swap (SET) or add (ADD) that nobody waits for");
    pthread_mutex_unlock(&tshmem_ucx.lock);
}

uint64_t tshmem_ucx_amo(enum tshmem_amo op, uint64_t *dest, uint64_t value, uint64_t cond,
                        int pe)
{
    uint64_t old = 0;
    pthread_mutex_lock(&tshmem_ucx.lock);
    int fetching = op != TSHMEM_AMO_SET && op != TSHMEM_AMO_ADD;
    tshmem_ucx_link_wait(8, fetching, 8);
    (void)dest; (void)value; (void)cond; (void)pe;
    TSHMEM_TODO("Atomics and signals", "after the fence, ucp_atomic_op_nbx on the 64-bit word: fetch is add 0, set a swap, compare-swap takes cond in the buffer and value in the reply; wait for a fetching one");
    pthread_mutex_unlock(&tshmem_ucx.lock);
    return old;
}

void tshmem_ucx_quiet(void)
{
    pthread_mutex_lock(&tshmem_ucx.lock);
    TSHMEM_TODO("Quiet: flush the worker", "when something was posted since the last completion, ucp_worker_flush_nbx and wait; report an error a detached operation met");
    pthread_mutex_unlock(&tshmem_ucx.lock);
}
