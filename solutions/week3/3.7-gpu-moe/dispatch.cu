/* dispatch.cu: tm_dispatch, chapter 3.1's dispatch as kernels. The same three steps:
 *   1. counts  (counts_kernel, one block) count this PE's rows per expert, put the E counts
 *              into every PE's count box with count_sig[me] = L, wait for every PE's counts;
 *              then the layout, from the counts alone: where each of my rows lands on its
 *              expert's PE, and how many rows I receive. The host reads that number (a sync,
 *              as in DeepEP's normal dispatch: the layout it returns depends on it), while the
 *              GPU goes on with the rows.
 *   2. rows    (send_rows_kernel, a warp per row) each row and its (token, slot) go straight to
 *              their place in the receiver's grouped buffer; the signals add to rows_in[me][e]
 *              there: a counter per (source, expert), so two senders never contend for one
 *              word. Through nvshmem_ptr a block signals each expert once, at its end; through
 *              puts every row carries its own signal.
 *   3. wait    (wait_rows_kernel, one block) until every counter of mine reaches its running
 *              total; then the layout arrays (layout_kernel).
 * Layers follow each other with no barrier, as in 3.1: count_sig[j] = L is also j's grant (j
 * sends it only when its stream has finished layer L - 1: its combine read the back buffer, its
 * experts read recv), and nobody writes into j's buffers of layer L before seeing it. */
#define TSHMEM_CHAPTER "3.7"
#include "tmoe.h"

#define WARPS TM_COUNT_WARPS

/* Provided: an exclusive prefix sum over the block (WARPS * 32 threads), one value per thread:
 * returns the sum of the values of the threads before this one; *total gets the sum of all.
 * Every thread of the block must call it. */
__device__ static int block_scan(int v, int *total)
{
    __shared__ int warp_sum[WARPS];
    int lane = threadIdx.x % 32, w = threadIdx.x / 32, incl = v;
    for (int d = 1; d < 32; d *= 2) {
        int o = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += o;
    }
    if (lane == 31) warp_sum[w] = incl;
    __syncthreads();
    if (w == 0) { /* WARPS == 32: one warp scans the warps' sums */
        int s = warp_sum[lane];
        for (int d = 1; d < 32; d *= 2) {
            int o = __shfl_up_sync(0xffffffffu, s, d);
            if (lane >= d) s += o;
        }
        warp_sum[lane] = s;
    }
    __syncthreads();
    int before = incl - v + (w > 0 ? warp_sum[w - 1] : 0);
    *total = warp_sum[WARPS - 1];
    __syncthreads(); /* warp_sum is free for the next call */
    return before;
}

/* Provided: what every PE's counts say, read from the box once (thread e reads expert e's n
 * counts, all loads in flight together) and turned into places by two prefix sums:
 *   at_s[e]   where my rows for expert e start on e's PE: the rows of that PE's experts before
 *             e (from every source), then e's rows from the sources before me;
 *   runs_s[q] rows of (local expert l, source j), q = l * n + j: the order my receive buffer is
 *             grouped in (3.1's: by local expert, then source).
 * A walk over the box by one thread per expert would wait for one load at a time: up to E x n
 * round trips to memory, the cost that grew with E. */
__device__ static void read_counts(const tm_moe_t &m, const volatile int32_t *box, int *at_s,
                                   int *runs_s)
{
    int n = m.n, E = m.E, e = threadIdx.x, tot = 0, before = 0, all;
    if (e < E)
        for (int j = 0; j < n; j++) {
            int c = box[j * E + e];
            tot += c;
            before += j < m.me ? c : 0;
        }
    int start = block_scan(e < E ? tot : 0, &all); /* rows for experts 0 .. e - 1, all PEs */
    if (e < E) at_s[e] = start;
    __syncthreads();
    int first = e < E ? at_s[tm_first_expert(E, n, tm_owner(E, n, e))] : 0;
    __syncthreads();
    if (e < E) at_s[e] = start - first + before;
    int q = threadIdx.x;
    if (q < m.n_local * n) runs_s[q] = box[(q % n) * E + m.first_expert + q / n];
    __syncthreads();
}

/* Provided: what this PE receives, from runs_s: rows of (local expert l, source j) start at
 * row_start[l * n + j] (a prefix sum); the host learns n_rows, the per-expert counts and any bad
 * routing entry through `info`. The running totals grow by this layer's counts (rows_in counts
 * 2 per row: its meta and its data). */
__device__ static void receive_layout(const tm_moe_t &m, const int *runs_s, const int *mine,
                                      int *info)
{
    int q = threadIdx.x, runs = m.n_local * m.n, rows;
    int c = q < runs ? runs_s[q] : 0, start = block_scan(c, &rows);
    if (q < runs) {
        m.row_start[q] = start;
        int j = q % m.n, e = m.first_expert + q / m.n;
        m.rows_expected[j * m.E + e] += 2 * (uint64_t)c;
    }
    if (q == 0) m.row_start[runs] = rows, info[0] = rows;
    for (int l = threadIdx.x; l < m.n_local; l += blockDim.x) {
        int sum = 0;
        for (int j = 0; j < m.n; j++) sum += runs_s[l * m.n + j];
        info[1 + l] = sum;
    }
    for (int p = threadIdx.x; p < m.n; p += blockDim.x) { /* outputs that come home in combine */
        uint64_t back = 0;
        for (int e = tm_first_expert(m.E, m.n, p); e < tm_first_expert(m.E, m.n, p + 1); e++)
            back += mine[e];
        m.back_expected[p] += back;
    }
    if (threadIdx.x < 3) info[1 + m.E + threadIdx.x] = m.err[threadIdx.x];
    __threadfence_system(); /* info is read by the host */
}

__global__ void counts_kernel(tm_moe_t m, const int *topk_idx, const float *topk_weights,
                              int total, uint64_t L, int *info)
{
    __shared__ int cnt[WARPS][TM_MAX_EXPERTS];
    __shared__ int mine_s[TM_MAX_EXPERTS], at_s[TM_MAX_EXPERTS], runs_s[TM_MAX_RUNS];
    int n = m.n, me = m.me, E = m.E;
    int32_t *box = m.count_box + (size_t)(L % 2) * n * E, *mine = box + (size_t)me * E;
    count_rows(m, topk_idx, topk_weights, total, cnt);
    for (int e = threadIdx.x; e < E; e += blockDim.x) {
        int c = 0;
        for (int v = 0; v < WARPS; v++) c += cnt[v][e];
        mine[e] = mine_s[e] = c;
    }
    __threadfence_system(); /* my row of the box is in memory before any put reads it */
    __syncthreads();
    /* BEGIN SOLUTION (Exchanging the counts): thread j < n, j != me: put my row of the box (E int32) into PE j's box with count_sig[me] := L; thread me sets its own count_sig[me] := L; thread j waits until count_sig[j] >= L; then the whole block syncs */
    int j = threadIdx.x;
    if (j < n && j != me)
        nvshmem_putmem_signal_nbi(mine, mine, (size_t)E * sizeof(int32_t), &m.count_sig[me], L,
                                  NVSHMEM_SIGNAL_SET, j);
    if (j == me) nvshmemx_signal_op(&m.count_sig[me], L, NVSHMEM_SIGNAL_SET, me);
    if (j < n) nvshmem_signal_wait_until(&m.count_sig[j], NVSHMEM_CMP_GE, L);
    __syncthreads();
    /* END SOLUTION */
    read_counts(m, box, at_s, runs_s);
    place_rows(topk_idx, total, E, at_s, cnt, m.dst_row);
    receive_layout(m, runs_s, mine_s, info);
    if (threadIdx.x == 0) nvshmem_quiet(); /* the count puts are out: box L % 2 may change */
}

__global__ void send_rows_kernel(tm_moe_t m, const float *x, const int *idx, int total)
{
    /* Rows this block stored through nvshmem_ptr, per expert, not signalled yet: the block
     * signals once per expert at its end, after one fence per thread, instead of a fence and a
     * remote atomic after every 8 KiB row (a fence waits until all of the warp's stores have
     * landed, so the warp could not load its next row meanwhile). */
    __shared__ unsigned pending[TM_MAX_EXPERTS];
    int lane = threadIdx.x % 32, warps = gridDim.x * blockDim.x / 32;
    for (int e = threadIdx.x; e < m.E; e += blockDim.x) pending[e] = 0;
    __syncthreads();
    for (int i = (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < total; i += warps) {
        int e = idx[i];
        if (e < 0 || e >= m.E) continue; /* the same for the whole warp; a bad entry stops the host */
        int p = tm_owner(m.E, m.n, e), r = m.dst_row[i], t = i / m.k;
        float *to = m.recv + (size_t)r * m.H;
        int32_t *meta = m.recv_meta + 2 * (size_t)r;
        uint64_t *sig = m.rows_in + (size_t)m.me * m.E + e;
        /* BEGIN SOLUTION (Sending the rows): where nvshmem_ptr maps `to` on p (and m.p2p): the warp stores row t of x and meta_src[i] there and lane 0 adds 2 to pending[e] (atomicAdd: other warps of the block count there too); else two nvshmemx_putmem_signal_nbi_warp (the meta, then the row), each adding 1 to *sig on p */
        size_t row_bytes = (size_t)m.H * sizeof(float);
        float *peer = m.p2p ? (float *)nvshmem_ptr(to, p) : NULL;
        if (peer) {
            tm_copy_warp(peer, x + (size_t)t * m.H, row_bytes);
            if (lane < 2) ((int32_t *)nvshmem_ptr(meta, p))[lane] = m.meta_src[2 * i + lane];
            if (lane == 0) atomicAdd(&pending[e], 2u);
        } else {
            nvshmemx_putmem_signal_nbi_warp(meta, m.meta_src + 2 * i, 2 * sizeof(int32_t), sig, 1,
                                            NVSHMEM_SIGNAL_ADD, p);
            nvshmemx_putmem_signal_nbi_warp(to, x + (size_t)t * m.H, row_bytes, sig, 1,
                                            NVSHMEM_SIGNAL_ADD, p);
        }
        /* END SOLUTION */
    }
    /* BEGIN SOLUTION (Sending the rows): every thread fences its own stores (__threadfence_system), the block syncs, then thread e (each e < E) with pending[e] > 0 adds pending[e] to rows_in[me][e] on e's PE (nvshmemx_signal_op) */
    __threadfence_system(); /* my stores have landed on their PEs, */
    __syncthreads();        /* everybody's have, before any count says so */
    for (int e = threadIdx.x; e < m.E; e += blockDim.x)
        if (pending[e])
            nvshmemx_signal_op(m.rows_in + (size_t)m.me * m.E + e, pending[e], NVSHMEM_SIGNAL_ADD,
                               tm_owner(m.E, m.n, e));
    /* END SOLUTION */
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet(); /* x may change once the stream is past this */
}

__global__ void wait_rows_kernel(tm_moe_t m)
{
    /* BEGIN SOLUTION (Waiting for the rows): every (source j, local expert) pair: wait until rows_in[j * E + e] >= rows_expected[j * E + e] */
    for (int q = threadIdx.x; q < m.n * m.n_local; q += blockDim.x) {
        int j = q / m.n_local, e = m.first_expert + q % m.n_local;
        nvshmem_signal_wait_until(&m.rows_in[j * m.E + e], NVSHMEM_CMP_GE,
                                  m.rows_expected[j * m.E + e]);
    }
    /* END SOLUTION */
}

/* Provided: row r's source is the j of the (l, j) run that holds it; its (token, slot) came
 * with it. */
__global__ void layout_kernel(tm_moe_t m, int n_rows)
{
    int runs = m.n_local * m.n;
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < n_rows; r += gridDim.x * blockDim.x) {
        int lo = 0, hi = runs; /* the last run that starts at or before r */
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (m.row_start[mid] <= r) lo = mid; else hi = mid;
        }
        while (lo + 1 < runs && m.row_start[lo + 1] <= r) lo++; /* skip empty runs */
        m.src_pe[r] = lo % m.n;
        m.src_token[r] = __ldcg(m.recv_meta + 2 * (size_t)r);
        m.src_slot[r] = __ldcg(m.recv_meta + 2 * (size_t)r + 1);
    }
}

int tm_dispatch(tm_moe_t *m, const float *x, int num_tokens, const int *topk_idx,
                const float *topk_weights, float **recv_x, tm_layout_t *layout, cudaStream_t st)
{
    const char *func = __func__;
    if (num_tokens < 0 || num_tokens > m->max_tokens)
        tm_die(func, "num_tokens %d is out of range: the handle was made for 0 .. %d tokens per "
               "PE (max_tokens)", num_tokens, m->max_tokens);
    if (!recv_x || !layout || (num_tokens > 0 && (!x || !topk_idx || !topk_weights)))
        tm_die(func, "recv_x, layout, x, topk_idx or topk_weights is NULL (num_tokens %d)",
               num_tokens);
    int total = num_tokens * m->k;
    uint64_t L = ++m->layer;
    m->T = num_tokens;
    int *info;
    TM_CUDA(cudaHostGetDevicePointer((void **)&info, m->info, 0));
    tm_moe_t dm = *m;
    const int *idx = m->idx;
    void *args[] = { &dm, &topk_idx, &topk_weights, &total, &L, &info };
    tm_launch((const void *)counts_kernel, 1, WARPS * 32, args, st, func);
    TM_CUDA(cudaEventRecord(m->counted, st));
    /* The rows and the wait need nothing from the host: queue them now, so that they run while
     * the host learns n_rows (the host's round trip is hidden behind the rows). */
    if (total)
        send_rows_kernel<<<tm_grid((size_t)total), 512, 0, st>>>(dm, x, idx, total);
    TM_CUDA(cudaGetLastError());
    void *wargs[] = { &dm };
    tm_launch((const void *)wait_rows_kernel, 1, 1024, wargs, st, func);
    tm_wait_event(m->counted, func); /* the host needs n_rows */
    const int *err = m->info + 1 + m->E;
    if (err[0])
        tm_die(func, "token %d, top-k slot %d: expert %d is out of range: this layer has experts "
               "0 .. %d (-1 marks an empty slot)", err[1] / m->k, err[1] % m->k, err[2],
               m->E - 1);
    int n_rows = m->info[0];
    m->h_offset[0] = 0;
    for (int l = 0; l < m->n_local; l++) {
        m->h_count[l] = m->info[1 + l];
        m->h_offset[l + 1] = m->h_offset[l] + m->h_count[l];
    }
    if (n_rows) layout_kernel<<<tm_grid((size_t)n_rows / 32 + 1), 512, 0, st>>>(dm, n_rows);
    TM_CUDA(cudaGetLastError());
    m->dispatched = 1, m->ll_dispatched = 0;
    *recv_x = m->recv;
    *layout = (tm_layout_t){ m->n_local, m->first_expert, n_rows, m->h_count, m->h_offset,
                             m->src_pe, m->src_token, m->src_slot };
    return 0;
}
