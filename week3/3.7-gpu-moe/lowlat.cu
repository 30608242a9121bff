/* lowlat.cu: tm_dispatch_ll and tm_combine_ll, DeepEP's low-latency mode in small: no count
 * exchange and no host synchronization, paid for with memory and padding.
 *   Every (local expert l, source j) pair owns a fixed region of max_tokens rows on the expert's
 *   PE, so a sender knows where its rows go from its own routing alone: its i-th row for expert
 *   e (token and slot order) goes to row i of region (e - first expert of e's PE, me).
 *   1. counts (ll_counts_kernel, one block, no waiting) count and place my rows, and tell each
 *             expert's PE how many rows I send it: ll_count[me][e] := L << 32 | count (the layer
 *             in the high half: the word only grows, and a stale count never looks new);
 *   2. rows   send_rows_kernel of dispatch.cu, aimed at the padded buffer (ll_rows_in counts 2
 *             per row, as rows_in does);
 *   3. wait   (ll_wait_kernel, one block) for each (j, l): the count word of layer L, then the
 *             rows it announced; then the sources of every padded row, for combine.
 * Combine is dispatch.cu's and combine.cu's kernels over the padded rows (padding skipped).
 * Who grants layer L + 1? PE j sends its rows of layer L + 1 only after its combine of layer L,
 * which needed my outputs of layer L, which my experts computed after reading my region: so the
 * region is free again. Nothing on the host waits for data: the whole layer can be captured in
 * a CUDA graph. */
#define TSHMEM_CHAPTER "3.7"
#include "tmoe.h"

/* A block of 1024 threads: the bound keeps each thread within the registers such a block may
 * have (without it, the launch fails with "too many resources requested"). */
__global__ void __launch_bounds__(TM_COUNT_WARPS * 32)
    ll_counts_kernel(tm_moe_t m, const int *topk_idx, const float *topk_weights, int total,
                     uint64_t L)
{
    __shared__ int cnt[TM_COUNT_WARPS][TM_MAX_EXPERTS];
    __shared__ int at_s[TM_MAX_EXPERTS], mine_s[TM_MAX_EXPERTS];
    int n = m.n, me = m.me, E = m.E;
    count_rows(m, topk_idx, topk_weights, total, cnt);
    if (threadIdx.x == 0 && m.err[0]) { /* no host looks at this path's errors: say it here */
        printf("tmoe: PE %d: tm_dispatch_ll: token %d, top-k slot %d: expert %d is out of range: "
               "this layer has experts 0 .. %d (-1 marks an empty slot)\n", me, m.err[1] / m.k,
               m.err[1] % m.k, m.err[2], E - 1);
        __trap();
    }
    for (int e = threadIdx.x; e < E; e += blockDim.x) {
        int c = 0;
        for (int v = 0; v < TM_COUNT_WARPS; v++) c += cnt[v][e];
        mine_s[e] = c;
        if (c > m.max_tokens) { /* the region would overflow into the next one */
            printf("tmoe: PE %d: tm_dispatch_ll: %d rows for expert %d, more than max_tokens "
                   "(%d) that its region holds: route each token to an expert at most once\n",
                   me, c, e, m.max_tokens);
            __trap();
        }
        (void)32;
        TSHMEM_TODO("Low-latency dispatch", "p owns e; at_s[e] = the first row of region (e - first expert of p, me) on p: ((e - first) * n + me) * max_tokens; then ll_count[me][e] on p := L << 32 | c (nvshmemx_signal_op, SET), also when c is 0");
    }
    __syncthreads();
    place_rows(topk_idx, total, E, at_s, cnt, m.dst_row);
    for (int p = threadIdx.x; p < n; p += blockDim.x) { /* outputs that come home in combine */
        uint64_t back = 0;
        for (int e = tm_first_expert(E, n, p); e < tm_first_expert(E, n, p + 1); e++)
            back += mine_s[e];
        m.back_expected[p] += back;
    }
}

__global__ void __launch_bounds__(1024) ll_wait_kernel(tm_moe_t m, uint64_t L)
{
    int n = m.n, rows = m.ll_rows;
    for (int q = threadIdx.x; q < m.n_local * n; q += blockDim.x) {
        int j = q % n, e = m.first_expert + q / n;
        (void)1024;
        TSHMEM_TODO("Low-latency dispatch", "wait until ll_count[j][e] >= L << 32 (nvshmem_signal_wait_until returns the word); c = its low 32 bits; ll_expected[j][e] += 2 c; wait until ll_rows_in[j][e] reaches it; ll_recv_count[q] = c");
    }
    __syncthreads();
    /* Provided: where each padded row comes from (src_pe -1: padding, combine skips it). */
    for (int r = threadIdx.x; r < m.n_local * n * m.max_tokens; r += blockDim.x) {
        int q = r / m.max_tokens, ok = r % m.max_tokens < m.ll_recv_count[q];
        m.ll_src[r] = ok ? q % n : -1;
        m.ll_src[rows + r] = ok ? __ldcg(m.ll_meta + 2 * (size_t)r) : 0;
        m.ll_src[2 * rows + r] = ok ? __ldcg(m.ll_meta + 2 * (size_t)r + 1) : 0;
    }
}

/* Provided: the padded buffers, made by the first call on every PE (a collective). */
static void ll_alloc(tm_moe_t *m)
{
    int per = (m->E + m->n - 1) / m->n; /* the most experts one PE owns */
    size_t rows = (size_t)per * m->n * m->max_tokens, words = (size_t)m->n * m->E;
    m->ll_rows = (int)rows;
    m->ll_recv = (float *)tm_malloc(rows * m->H * sizeof(float));
    m->ll_meta = (int32_t *)tm_malloc(rows * 2 * sizeof(int32_t));
    m->ll_count = (uint64_t *)tm_malloc(words * sizeof(uint64_t));
    m->ll_rows_in = (uint64_t *)tm_malloc(words * sizeof(uint64_t));
    TM_CUDA(cudaMalloc(&m->ll_expected, words * sizeof(uint64_t)));
    TM_CUDA(cudaMemset(m->ll_expected, 0, words * sizeof(uint64_t)));
    TM_CUDA(cudaMalloc(&m->ll_recv_count, (size_t)per * m->n * sizeof(int)));
    TM_CUDA(cudaMalloc(&m->ll_src, 3 * rows * sizeof(int)));
    TM_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all(); /* every PE's words are zero before anyone signals them */
}

/* The handle as the shared kernels see it on the low-latency path. */
static tm_moe_t ll_view(const tm_moe_t *m)
{
    tm_moe_t v = *m;
    v.recv = m->ll_recv, v.recv_meta = m->ll_meta, v.rows_in = m->ll_rows_in;
    v.src_pe = m->ll_src, v.src_token = m->ll_src + m->ll_rows;
    v.src_slot = m->ll_src + 2 * (size_t)m->ll_rows;
    return v;
}

int tm_dispatch_ll(tm_moe_t *m, const float *x, int num_tokens, const int *topk_idx,
                   const float *topk_weights, float **recv_x, const int **recv_count,
                   cudaStream_t st)
{
    const char *func = __func__;
    if (num_tokens < 0 || num_tokens > m->max_tokens)
        tm_die(func, "num_tokens %d is out of range: the handle was made for 0 .. %d tokens per "
               "PE (max_tokens)", num_tokens, m->max_tokens);
    if (!recv_x || !recv_count || (num_tokens > 0 && (!x || !topk_idx || !topk_weights)))
        tm_die(func, "recv_x, recv_count, x, topk_idx or topk_weights is NULL (num_tokens %d)",
               num_tokens);
    if (!m->ll_recv) ll_alloc(m);
    int total = num_tokens * m->k;
    uint64_t L = ++m->layer;
    m->T = num_tokens;
    tm_moe_t dm = ll_view(m);
    ll_counts_kernel<<<1, TM_COUNT_WARPS * 32, 0, st>>>(dm, topk_idx, topk_weights, total, L);
    if (total) send_rows_kernel<<<tm_grid((size_t)total), 512, 0, st>>>(dm, x, m->idx, total);
    ll_wait_kernel<<<1, 1024, 0, st>>>(dm, L);
    TM_CUDA(cudaGetLastError());
    m->ll_dispatched = 1, m->dispatched = 0;
    *recv_x = m->ll_recv;
    *recv_count = m->ll_recv_count;
    return 0;
}

int tm_combine_ll(tm_moe_t *m, const float *expert_out, float *y, cudaStream_t st)
{
    const char *func = __func__;
    if (!m->ll_dispatched)
        tm_die(func, "there is no low-latency dispatch to undo on PE %d: call tm_dispatch_ll "
               "first (each combine undoes the dispatch just before it, once)", m->me);
    int rows = m->n_local * m->n * m->max_tokens;
    if (rows > 0 && !expert_out)
        tm_die(func, "expert_out is NULL, but PE %d has a padded buffer of %d rows", m->me, rows);
    if (m->T > 0 && !y) tm_die(func, "y is NULL, but PE %d dispatched %d tokens", m->me, m->T);
    m->ll_dispatched = 0;
    tm_moe_t dm = ll_view(m);
    if (rows) combine_send_kernel<<<tm_grid((size_t)rows), 512, 0, st>>>(dm, expert_out, rows);
    wait_back_kernel<<<1, 64, 0, st>>>(dm);
    if (m->T) weighted_sum_kernel<<<tm_grid(16 * (size_t)m->T), 512, 0, st>>>(dm, y, m->T);
    TM_CUDA(cudaGetLastError());
    return 0;
}
