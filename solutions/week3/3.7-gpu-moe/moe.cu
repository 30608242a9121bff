/* moe.cu: Provided. The MoE handle: its symmetric buffers, sized for the worst case (every row
 * of every PE sent to one PE), and the checks dispatch and combine share. */
#define TSHMEM_CHAPTER "3.7"
#include "tmoe.h"
#include <time.h>
#include <unistd.h>

int tm_moe_expert_pe(const tm_moe_t *moe, int expert)
{
    if (expert < 0 || expert >= moe->E)
        tm_die(__func__, "expert %d is out of range: this layer has experts 0 .. %d", expert,
               moe->E - 1);
    return tm_owner(moe->E, moe->n, expert);
}

tm_moe_t *tm_moe_create(const tm_config_t *c)
{
    int n = nvshmem_n_pes(), me = nvshmem_my_pe();
    if (!c || c->num_experts < 1 || c->num_experts > TM_MAX_EXPERTS || c->hidden < 1 ||
        c->hidden % 4 || c->top_k < 1 || c->top_k > 32 || c->max_tokens < 1)
        tm_die(__func__, "bad config on PE %d: num_experts %d (1 .. %d), hidden %d (a positive "
               "multiple of 4), top_k %d (1 .. 32), max_tokens %d (at least 1)", me,
               c ? c->num_experts : 0, TM_MAX_EXPERTS, c ? c->hidden : 0, c ? c->top_k : 0,
               c ? c->max_tokens : 0);
    if (n > TM_MAX_PES)
        tm_die(__func__, "%d PEs: this chapter's kernels handle at most %d", n, TM_MAX_PES);
    int mine[4] = { c->num_experts, c->hidden, c->top_k, c->max_tokens }, all[4];
    MPI_Allreduce(mine, all, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < 4; i++)
        if (all[i] != mine[i])
            tm_die(__func__, "PE %d's config differs from another PE's (field %d: %d here, %d "
                   "there): every PE must pass the same config", me, i, mine[i], all[i]);
    tm_moe_t *m = (tm_moe_t *)calloc(1, sizeof *m);
    m->n = n, m->me = me, m->E = c->num_experts, m->H = c->hidden, m->k = c->top_k;
    m->max_tokens = c->max_tokens;
    m->first_expert = tm_first_expert(m->E, n, me);
    m->n_local = tm_first_expert(m->E, n, me + 1) - m->first_expert;
    m->p2p = tm_p2p_allowed();
    size_t slots = (size_t)m->max_tokens * m->k, rows = (size_t)n * slots, H = (size_t)m->H;
    m->count_box = (int32_t *)tm_malloc(2 * (size_t)n * m->E * sizeof(int32_t));
    m->count_sig = (uint64_t *)tm_malloc((size_t)n * sizeof(uint64_t));
    m->recv = (float *)tm_malloc(rows * H * sizeof(float));
    m->recv_meta = (int32_t *)tm_malloc(rows * 2 * sizeof(int32_t));
    m->rows_in = (uint64_t *)tm_malloc((size_t)n * m->E * sizeof(uint64_t));
    m->back = (float *)tm_malloc(slots * H * sizeof(float));
    m->back_in = (uint64_t *)tm_malloc((size_t)n * sizeof(uint64_t));
    TM_CUDA(cudaMalloc(&m->idx, slots * sizeof(int)));
    TM_CUDA(cudaMalloc(&m->weights, slots * sizeof(float)));
    TM_CUDA(cudaMalloc(&m->dst_row, slots * sizeof(int)));
    TM_CUDA(cudaMalloc(&m->row_start, ((size_t)m->E * n + 1) * sizeof(int)));
    TM_CUDA(cudaMalloc(&m->err, 4 * sizeof(int)));
    TM_CUDA(cudaMemset(m->err, 0, 4 * sizeof(int)));
    int32_t *ts = (int32_t *)malloc(slots * 2 * sizeof(int32_t));
    for (size_t i = 0; i < slots; i++) ts[2 * i] = (int32_t)(i / m->k), ts[2 * i + 1] = (int32_t)(i % m->k);
    TM_CUDA(cudaMalloc(&m->meta_src, slots * 2 * sizeof(int32_t)));
    TM_CUDA(cudaMemcpy(m->meta_src, ts, slots * 2 * sizeof(int32_t), cudaMemcpyHostToDevice));
    free(ts);
    TM_CUDA(cudaMalloc(&m->src_pe, rows * sizeof(int)));
    TM_CUDA(cudaMalloc(&m->src_token, rows * sizeof(int)));
    TM_CUDA(cudaMalloc(&m->src_slot, rows * sizeof(int)));
    TM_CUDA(cudaMalloc(&m->rows_expected, (size_t)n * m->E * sizeof(uint64_t)));
    TM_CUDA(cudaMalloc(&m->back_expected, (size_t)n * sizeof(uint64_t)));
    TM_CUDA(cudaMemset(m->rows_expected, 0, (size_t)n * m->E * sizeof(uint64_t)));
    TM_CUDA(cudaMemset(m->back_expected, 0, (size_t)n * sizeof(uint64_t)));
    /* n_rows, the per-local-expert counts, then a bad routing entry: written by the counts
     * kernel, read by the host with no copy (mapped pinned memory). */
    TM_CUDA(cudaHostAlloc(&m->info, (4 + (size_t)m->E) * sizeof(int), cudaHostAllocMapped));
    TM_CUDA(cudaEventCreateWithFlags(&m->counted, cudaEventDisableTiming));
    m->h_count = (int *)calloc((size_t)m->E + 1, sizeof(int));
    m->h_offset = (int *)calloc((size_t)m->E + 2, sizeof(int));
    TM_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all(); /* every PE's words are zero before anyone signals them */
    return m;
}

void tm_moe_destroy(tm_moe_t *m)
{
    if (!m) return;
    TM_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    nvshmem_free(m->count_box);
    nvshmem_free(m->count_sig);
    nvshmem_free(m->recv);
    nvshmem_free(m->recv_meta);
    nvshmem_free(m->rows_in);
    nvshmem_free(m->back);
    nvshmem_free(m->back_in);
    cudaFree(m->idx), cudaFree(m->weights), cudaFree(m->dst_row);
    cudaFree(m->row_start), cudaFree(m->err), cudaFree(m->meta_src);
    cudaFree(m->src_pe), cudaFree(m->src_token), cudaFree(m->src_slot);
    cudaFree(m->rows_expected), cudaFree(m->back_expected);
    cudaFreeHost(m->info);
    cudaEventDestroy(m->counted);
    if (m->ll_recv) {
        nvshmem_free(m->ll_recv);
        nvshmem_free(m->ll_meta);
        nvshmem_free(m->ll_count);
        nvshmem_free(m->ll_rows_in);
        cudaFree(m->ll_expected), cudaFree(m->ll_recv_count), cudaFree(m->ll_src);
    }
    free(m->h_count), free(m->h_offset), free(m);
}

/* Waits for a stream (ev NULL) or an event, at most TMOE_WAIT_S seconds. */
static void wait_done(cudaStream_t st, cudaEvent_t ev, const char *what)
{
    const char *v = getenv("TMOE_WAIT_S");
    double limit = v ? atof(v) : 60;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        cudaError_t e = ev ? cudaEventQuery(ev) : cudaStreamQuery(st);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady)
            tm_die(what, "failed on the GPU: %s (a kernel that trapped, e.g. a TODO, or a bad "
                   "address)", cudaGetErrorString(e));
        clock_gettime(CLOCK_MONOTONIC, &t);
        double waited = (double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec);
        if (waited > limit)
            tm_die(what, "waited %.0f s on PE %d: some PE did not make the same call, or a "
                   "kernel waits for a signal that no PE sends", limit, nvshmem_my_pe());
        /* Spin for the first millisecond (a dispatch's counts take microseconds: a sleep would
         * cost more than the wait), then back off: PEs may share the CPU. */
        if (waited > 1e-3) usleep(50);
    }
}

void tm_wait_stream(cudaStream_t st, const char *what)
{
    wait_done(st, NULL, what);
}

void tm_wait_event(cudaEvent_t ev, const char *what)
{
    wait_done(NULL, ev, what);
}

int tm_grid(size_t warps)
{
    static int sms;
    if (!sms) {
        int dev;
        TM_CUDA(cudaGetDevice(&dev));
        TM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    }
    size_t blocks = (warps + 15) / 16;
    return blocks < 1 ? 1 : blocks > 2 * (size_t)sms ? 2 * sms : (int)blocks;
}
