/* dispatch.cu: tm_dispatch, chapter 3.1's dispatch as kernels. The same three steps:
 *   1. counts  (counts_kernel, one block) count this PE's rows per expert, put the E counts
 *              into every PE's count box with count_sig[me] = L, wait for every PE's counts;
 *              then the layout, from the counts alone: where each of my rows lands on its
 *              expert's PE, and how many rows I receive. The host reads that number (a sync,
 *              as in DeepEP's normal dispatch: the next kernels' sizes depend on it).
 *   2. rows    (send_rows_kernel, a warp per row) each row and its (token, slot) go straight to
 *              their place in the receiver's grouped buffer, each with a signal that adds 1 to
 *              rows_in[me][e] there: a counter per (source, expert), so two senders never
 *              contend for one word.
 *   3. wait    (wait_rows_kernel, one block) until every counter of mine reaches its running
 *              total; then the layout arrays (layout_kernel).
 * Layers follow each other with no barrier, as in 3.1: count_sig[j] = L is also j's grant (j
 * sends it only when its stream has finished layer L - 1: its combine read the back buffer, its
 * experts read recv), and nobody writes into j's buffers of layer L before seeing it. */
#define TSHMEM_CHAPTER "3.7"
#include "tmoe.h"

#define WARPS 32 /* the counts kernel's block: 32 warps of 32 threads */

/* Provided: the counting sort of 3.1 in parallel. Warp w owns entries [w*per, (w+1)*per) of
 * idx (token-major, so token then slot order); cnt[w][e] counts warp w's rows for e. */
__device__ static void count_rows(const int *idx, int total, int E, int (*cnt)[TM_MAX_EXPERTS],
                                  int *err)
{
    int w = threadIdx.x / 32, lane = threadIdx.x % 32, per = (total + WARPS - 1) / WARPS;
    for (int i = threadIdx.x; i < WARPS * E; i += blockDim.x) cnt[i / E][i % E] = 0;
    __syncthreads();
    for (int i = w * per + lane; i < total && i < (w + 1) * per; i += 32) {
        int e = idx[i];
        if (e >= 0 && e < E) atomicAdd(&cnt[w][e], 1);
        else if (e != -1) err[0] = 1, err[1] = i, err[2] = e; /* the host names it */
    }
    __syncthreads();
}

/* Provided: every row's place. On its owner p, expert e's rows start after the rows of p's
 * experts before e (from every source), then those of sources before me; mine are in token and
 * slot order, warp by warp (cnt[w][e] is warp w's first place), and within a warp's 32 entries
 * by rank among the lanes that have the same expert (__match_any_sync). */
__device__ static void place_rows(const int *idx, int total, int E, int n, int me,
                                  const volatile int32_t *box, int (*cnt)[TM_MAX_EXPERTS],
                                  int *dst_row)
{
    int w = threadIdx.x / 32, lane = threadIdx.x % 32, per = (total + WARPS - 1) / WARPS;
    for (int e = threadIdx.x; e < E; e += blockDim.x) {
        int p = tm_owner(E, n, e), at = 0;
        for (int e2 = tm_first_expert(E, n, p); e2 < e; e2++)
            for (int j = 0; j < n; j++) at += box[j * E + e2];
        for (int j = 0; j < me; j++) at += box[j * E + e];
        int run = 0; /* cnt[w][e] becomes warp w's first place for e */
        for (int v = 0; v < WARPS; v++) {
            int c = cnt[v][e];
            cnt[v][e] = at + run;
            run += c;
        }
    }
    __syncthreads();
    int lo = w * per, hi = min(lo + per, total);
    for (int base = lo; base < hi; base += 32) {
        int i = base + lane, e = i < hi ? idx[i] : -1;
        e = e < E ? e : -1; /* a bad entry (the host stops on it) takes no place */
        unsigned same = __match_any_sync(0xffffffffu, e), before = same & ((1u << lane) - 1);
        if (e >= 0) dst_row[i] = cnt[w][e] + __popc(before);
        __syncwarp();
        if (e >= 0 && before == 0) cnt[w][e] += __popc(same); /* the group's first lane */
        __syncwarp();
    }
}

/* Provided: what this PE receives, from the counts: rows of (local expert l, source j) start at
 * row_start[l * n + j]; the host learns n_rows and the per-expert counts through `info`. The
 * running totals grow by this layer's counts (rows_in counts 2 per row: its meta and its data
 * each carry a signal of 1). */
__device__ static void receive_layout(tm_moe_t m, const volatile int32_t *box, const int *mine,
                                      int *info)
{
    if (threadIdx.x == 0) {
        int rows = 0;
        for (int l = 0; l < m.n_local; l++) {
            int at = rows;
            for (int j = 0; j < m.n; j++) {
                m.row_start[l * m.n + j] = rows;
                rows += box[j * m.E + m.first_expert + l];
            }
            info[1 + l] = rows - at;
        }
        m.row_start[m.n_local * m.n] = rows;
        info[0] = rows;
    }
    for (int q = threadIdx.x; q < m.n * m.n_local; q += blockDim.x) {
        int j = q / m.n_local, e = m.first_expert + q % m.n_local;
        m.rows_expected[j * m.E + e] += 2 * (uint64_t)box[j * m.E + e];
    }
    for (int p = threadIdx.x; p < m.n; p += blockDim.x) { /* outputs that come home in combine */
        uint64_t c = 0;
        for (int e = tm_first_expert(m.E, m.n, p); e < tm_first_expert(m.E, m.n, p + 1); e++)
            c += mine[e];
        m.back_expected[p] += c;
    }
    __threadfence_system(); /* info is read by the host */
}

__global__ void counts_kernel(tm_moe_t m, const int *idx, int total, uint64_t L, int *info)
{
    __shared__ int cnt[WARPS][TM_MAX_EXPERTS];
    __shared__ int mine_s[TM_MAX_EXPERTS];
    int n = m.n, me = m.me, E = m.E;
    int32_t *box = m.count_box + (size_t)(L % 2) * n * E, *mine = box + (size_t)me * E;
    count_rows(idx, total, E, cnt, m.err);
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
    place_rows(idx, total, E, n, me, box, cnt, m.dst_row);
    receive_layout(m, box, mine_s, info);
    if (threadIdx.x == 0) nvshmem_quiet(); /* the count puts are out: box L % 2 may change */
}

__global__ void send_rows_kernel(tm_moe_t m, const float *x, const int *idx, int total)
{
    int lane = threadIdx.x % 32, warps = gridDim.x * blockDim.x / 32;
    for (int i = (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < total; i += warps) {
        int e = idx[i];
        if (e < 0) continue; /* the same for the whole warp */
        int p = tm_owner(m.E, m.n, e), r = m.dst_row[i], t = i / m.k;
        float *to = m.recv + (size_t)r * m.H;
        int32_t *meta = m.recv_meta + 2 * (size_t)r;
        uint64_t *sig = m.rows_in + (size_t)m.me * m.E + e;
        /* BEGIN SOLUTION (Sending the rows): where nvshmem_ptr maps `to` on p (and m.p2p): the warp stores row t of x and meta_src[i] there, __syncwarp, lane 0 fences (__threadfence_system) and adds 2 to *sig on p; else two nvshmemx_putmem_signal_nbi_warp (the meta, then the row), each adding 1 to *sig on p */
        size_t row_bytes = (size_t)m.H * sizeof(float);
        float *peer = m.p2p ? (float *)nvshmem_ptr(to, p) : NULL;
        if (peer) {
            tm_copy_warp(peer, x + (size_t)t * m.H, row_bytes);
            if (lane < 2) ((int32_t *)nvshmem_ptr(meta, p))[lane] = m.meta_src[2 * i + lane];
            __syncwarp();
            if (lane == 0) {
                __threadfence_system(); /* the warp's stores land before the count says so */
                nvshmemx_signal_op(sig, 2, NVSHMEM_SIGNAL_ADD, p);
            }
        } else {
            nvshmemx_putmem_signal_nbi_warp(meta, m.meta_src + 2 * i, 2 * sizeof(int32_t), sig, 1,
                                            NVSHMEM_SIGNAL_ADD, p);
            nvshmemx_putmem_signal_nbi_warp(to, x + (size_t)t * m.H, row_bytes, sig, 1,
                                            NVSHMEM_SIGNAL_ADD, p);
        }
        /* END SOLUTION */
    }
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
    if (total) {
        TM_CUDA(cudaMemcpyAsync(m->idx, topk_idx, (size_t)total * sizeof(int),
                                cudaMemcpyDeviceToDevice, st));
        TM_CUDA(cudaMemcpyAsync(m->weights, topk_weights, (size_t)total * sizeof(float),
                                cudaMemcpyDeviceToDevice, st));
    }
    int *info;
    TM_CUDA(cudaHostGetDevicePointer((void **)&info, m->info, 0));
    tm_moe_t dm = *m;
    const int *idx = m->idx;
    void *args[] = { &dm, &idx, &total, &L, &info };
    tm_launch((const void *)counts_kernel, 1, WARPS * 32, args, st, func);
    tm_wait_stream(st, func); /* the host needs n_rows */
    int err[4];
    TM_CUDA(cudaMemcpy(err, m->err, sizeof err, cudaMemcpyDeviceToHost));
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
    if (total)
        send_rows_kernel<<<tm_grid((size_t)total), 512, 0, st>>>(dm, x, m->idx, total);
    TM_CUDA(cudaGetLastError());
    void *wargs[] = { &dm };
    tm_launch((const void *)wait_rows_kernel, 1, 1024, wargs, st, func);
    if (n_rows) layout_kernel<<<tm_grid((size_t)n_rows / 32 + 1), 512, 0, st>>>(dm, n_rows);
    TM_CUDA(cudaGetLastError());
    m->dispatched = 1;
    *recv_x = m->recv;
    *layout = (tm_layout_t){ m->n_local, m->first_expert, n_rows, m->h_count, m->h_offset,
                             m->src_pe, m->src_token, m->src_slot };
    return 0;
}
