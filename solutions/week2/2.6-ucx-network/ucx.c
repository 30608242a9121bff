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
    /* BEGIN SOLUTION (Context, worker and memory): read UCX's configuration (tcp,self over TCP), make a context for RMA, 64-bit atomics and wake-ups, a SERIALIZED worker, map this PE's slice, pack its key, get the worker's address */
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK)
        return st;
    /* TSHMEM_TRANSPORT=tcp: every off-node byte over TCP, as between two machines. A
     * UCX_TLS of the user's wins. */
    if (tcp && !getenv("UCX_TLS"))
        ucp_config_modify(config, "TLS", "tcp,self");
    /* WAKEUP: the helper thread of network.c sleeps on the worker's event descriptor. */
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                           .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP};
    st = ucp_init(&params, config, &tshmem_ucx.context);
    ucp_config_release(config);
    if (st != UCS_OK)
        return st;
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SERIALIZED};
    st = ucp_worker_create(tshmem_ucx.context, &wp, &tshmem_ucx.worker);
    if (st != UCS_OK)
        return st;
    /* The slice once, whole: every remote put, get and atomic lands in it. */
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                             UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                               .address = tshmem_g.slice, .length = tshmem_g.slice_bytes};
    st = ucp_mem_map(tshmem_ucx.context, &mp, &tshmem_ucx.memh);
    if (st != UCS_OK)
        return st;
    st = ucp_rkey_pack(tshmem_ucx.context, tshmem_ucx.memh, &tshmem_ucx.rkey_buf,
                       &tshmem_ucx.rkey_len);
    if (st != UCS_OK)
        return st;
    return ucp_worker_get_address(tshmem_ucx.worker, &tshmem_ucx.address,
                                  &tshmem_ucx.address_len);
    /* END SOLUTION, stub: return TSHMEM_UCX_NOT_WRITTEN; */
}

ucs_status_t tshmem_ucx_connect(void *const *addresses, void *const *rkeys, int *bad_pe)
{
    /* BEGIN SOLUTION (Endpoints and remote keys): for every PE on another node, an endpoint from its worker address and its key unpacked on that endpoint */
    for (int pe = 0; pe < tshmem_g.n_pes; pe++) {
        if (tshmem_g.pe_node[pe] == tshmem_g.node)
            continue; /* this node: the shared-memory path reaches it */
        *bad_pe = pe;
        ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                              .address = addresses[pe]};
        ucs_status_t st = ucp_ep_create(tshmem_ucx.worker, &ep, &tshmem_ucx.ep[pe]);
        if (st != UCS_OK)
            return st;
        st = ucp_ep_rkey_unpack(tshmem_ucx.ep[pe], rkeys[pe], &tshmem_ucx.rkey[pe]);
        if (st != UCS_OK)
            return st;
    }
    *bad_pe = -1;
    return UCS_OK;
    /* END SOLUTION, stub: return TSHMEM_UCX_NOT_WRITTEN; */
}

/* Orders what comes next after every operation posted before. */
static inline void fence_if_needed(const char *func, int pe)
{
    /* BEGIN SOLUTION (Order: the fence): UCX orders nothing between two operations: fence the worker when something was posted since the last fence or completion */
    if (!tshmem_ucx.unordered)
        return;
    ucs_status_t st = ucp_worker_fence(tshmem_ucx.worker);
    if (st != UCS_OK)
        tshmem_ucx_fail(func, "a fence", pe, st);
    tshmem_ucx.unordered = 0;
    /* END SOLUTION */
}

void tshmem_ucx_put(void *dest, const void *source, size_t nbytes, int pe)
{
    pthread_mutex_lock(&tshmem_ucx.lock);
    tshmem_ucx_link_wait(nbytes, 0, 0);
    /* BEGIN SOLUTION (Put and get): after the fence, ucp_put_nbx into dest's place in pe's slice; return once source may be reused */
    uint64_t remote = tshmem_ucx_remote("tshmem_putmem", dest, pe);
    fence_if_needed("tshmem_putmem", pe);
    ucp_request_param_t param = {.op_attr_mask = 0};
    /* Local completion: source may be reused. Its arrival at pe is quiet's to confirm. */
    tshmem_ucx_wait(ucp_put_nbx(tshmem_ucx.ep[pe], source, nbytes, remote, tshmem_ucx.rkey[pe],
                                &param), "tshmem_putmem", "a put", pe);
    tshmem_ucx.unordered = 1;
    /* END SOLUTION */
    pthread_mutex_unlock(&tshmem_ucx.lock);
}

void tshmem_ucx_get(void *dest, const void *source, size_t nbytes, int pe)
{
    pthread_mutex_lock(&tshmem_ucx.lock);
    tshmem_ucx_link_wait(0, 1, nbytes);
    /* BEGIN SOLUTION (Put and get): after the fence (a get sees our earlier puts), ucp_get_nbx from source's place in pe's slice, and wait for the bytes */
    uint64_t remote = tshmem_ucx_remote("tshmem_getmem", source, pe);
    fence_if_needed("tshmem_getmem", pe);
    ucp_request_param_t param = {.op_attr_mask = 0};
    tshmem_ucx_wait(ucp_get_nbx(tshmem_ucx.ep[pe], dest, nbytes, remote, tshmem_ucx.rkey[pe],
                                &param), "tshmem_getmem", "a get", pe);
    /* Done, after everything before the fence: nothing is left to order. */
    /* END SOLUTION */
    pthread_mutex_unlock(&tshmem_ucx.lock);
}

void tshmem_ucx_signal(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    pthread_mutex_lock(&tshmem_ucx.lock);
    tshmem_ucx_link_wait(8, 0, 0);
    /* BEGIN SOLUTION (Atomics and signals): after the fence (the data of a put_signal lands first), an atomic swap (SET) or add (ADD) that nobody waits for */
    uint64_t remote = tshmem_ucx_remote("tshmem_signal_op", sig_addr, pe);
    fence_if_needed("tshmem_signal_op", pe);
    ucp_request_param_t param = tshmem_ucx_detached_param();
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    param.datatype = ucp_dt_make_contig(8);
    /* A swap always fetches: its old value goes to a word nobody reads. */
    static uint64_t value, sink;
    value = signal;
    ucp_atomic_op_t op = UCP_ATOMIC_OP_ADD;
    if (sig_op == TSHMEM_SIGNAL_SET) {
        op = UCP_ATOMIC_OP_SWAP;
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        param.reply_buffer = &sink;
    }
    tshmem_ucx_detach(ucp_atomic_op_nbx(tshmem_ucx.ep[pe], op, &value, 1, remote,
                                        tshmem_ucx.rkey[pe], &param),
                      "tshmem_signal_op", "a signal", pe);
    tshmem_ucx.unordered = 1;
    /* END SOLUTION */
    pthread_mutex_unlock(&tshmem_ucx.lock);
}

uint64_t tshmem_ucx_amo(enum tshmem_amo op, uint64_t *dest, uint64_t value, uint64_t cond,
                        int pe)
{
    uint64_t old = 0;
    pthread_mutex_lock(&tshmem_ucx.lock);
    int fetching = op != TSHMEM_AMO_SET && op != TSHMEM_AMO_ADD;
    tshmem_ucx_link_wait(8, fetching, 8);
    /* BEGIN SOLUTION (Atomics and signals): after the fence, ucp_atomic_op_nbx on the 64-bit word: fetch is add 0, set a swap, compare-swap takes cond in the buffer and value in the reply; wait for a fetching one */
    uint64_t remote = tshmem_ucx_remote("tshmem_uint64_atomic", dest, pe);
    fence_if_needed("tshmem_uint64_atomic", pe);
    static uint64_t operand, sink;
    ucp_atomic_op_t uop = UCP_ATOMIC_OP_ADD;
    operand = value;
    old = value; /* the reply buffer: compare-swap's new value on input */
    switch (op) {
    case TSHMEM_AMO_FETCH: operand = 0; break;
    case TSHMEM_AMO_SET:
    case TSHMEM_AMO_SWAP: uop = UCP_ATOMIC_OP_SWAP; break;
    case TSHMEM_AMO_COMPARE_SWAP: uop = UCP_ATOMIC_OP_CSWAP; operand = cond; break;
    default: break; /* ADD, FETCH_ADD */
    }
    if (fetching) {
        ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE |
                                                     UCP_OP_ATTR_FIELD_REPLY_BUFFER,
                                     .datatype = ucp_dt_make_contig(8), .reply_buffer = &old};
        tshmem_ucx_wait(ucp_atomic_op_nbx(tshmem_ucx.ep[pe], uop, &operand, 1, remote,
                                          tshmem_ucx.rkey[pe], &param),
                        "tshmem_uint64_atomic", "an atomic", pe);
        /* Done, after everything before the fence. */
    } else {
        ucp_request_param_t param = tshmem_ucx_detached_param();
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
        param.datatype = ucp_dt_make_contig(8);
        if (uop == UCP_ATOMIC_OP_SWAP) { /* set: a swap nobody reads */
            param.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
            param.reply_buffer = &sink;
        }
        tshmem_ucx_detach(ucp_atomic_op_nbx(tshmem_ucx.ep[pe], uop, &operand, 1, remote,
                                            tshmem_ucx.rkey[pe], &param),
                          "tshmem_uint64_atomic", "an atomic", pe);
        tshmem_ucx.unordered = 1;
        old = 0;
    }
    /* END SOLUTION */
    pthread_mutex_unlock(&tshmem_ucx.lock);
    return old;
}

void tshmem_ucx_quiet(void)
{
    pthread_mutex_lock(&tshmem_ucx.lock);
    /* BEGIN SOLUTION (Quiet: flush the worker): when something was posted since the last completion, ucp_worker_flush_nbx and wait; report an error a detached operation met */
    if (tshmem_ucx.unordered) {
        ucp_request_param_t param = {.op_attr_mask = 0};
        tshmem_ucx_wait(ucp_worker_flush_nbx(tshmem_ucx.worker, &param), "tshmem_quiet",
                        "a flush", -1);
        tshmem_ucx.unordered = 0;
    }
    if (tshmem_ucx.failed != UCS_OK)
        tshmem_ucx_fail("tshmem_quiet", "an operation that quiet completes", -1,
                        tshmem_ucx.failed);
    /* END SOLUTION */
    pthread_mutex_unlock(&tshmem_ucx.lock);
}
