/* bench_3_7.cu: chapter 3.7's study, every PE at once (one per GPU, or several sharing one):
 *   ring:      tm_ring_stream (your ring, one block each way) against nvshmemx_putmem_on_stream,
 *              every PE to its right neighbour, 16 KiB to 64 MiB;
 *   dispatch_eE / combine_eE: tm_dispatch and tm_combine at the pplx-kernels shapes (E = 64 and
 *              256 experts, 6 per token, hidden 2048, fp32 rows, uniform routing), 128 to 4096
 *              tokens per PE, against a baseline with the same routing, counts first, then rows:
 *              NCCL (grouped ncclSend/ncclRecv, what torch.distributed.all_to_all_single runs)
 *              where every PE has its own GPU, else (NCCL refuses two ranks on one GPU) the copy
 *              engine through nvshmem_ptr ("ce"). The baseline's rows are already in destination
 *              order and stay in (source, expert) order on arrival: no permutation is charged.
 * Each figure: host clock around the call and a stream sync, after an MPI barrier, the slowest
 * PE, the median of REPS. Lines: bench op=.. impl=tshmem|nvshmem|nccl|ce pes=.. bytes=..
 * (bytes: rows of one PE, tokens x 6 x 2048 x 4) median_us=.. algbw_GBps=.. busbw_GBps=..
 * Options: --quick (ring to 4 MiB, 128 and 512 tokens); --no-ring (the MoE shapes only);
 * --profile (one untimed dispatch and combine at each of E = 64, 256 and 128, 4096 tokens,
 * nothing else: the run to put under a profiler, `ncu ... bench_3_7 --profile`). One PE alone
 * sends to itself (the ring needs two and is left out): the way to profile on one GPU, with
 * no other PE's kernels beside the profiled one. */
#define GPU_CHAPTER_H "tmoe.h"
#include "gpu_check.h"
#include <algorithm>
#include <nccl.h>
#include <string.h>
#include <time.h>
#include <vector>

#define REPS 20
#define WARM 3
static int me, npes;
static cudaStream_t st;
static ncclComm_t comm;
static int use_nccl;

#define NCCL(call)                                                                             \
    do {                                                                                       \
        ncclResult_t r_ = (call);                                                              \
        if (r_ != ncclSuccess) tm_die(__func__, "%s failed: %s", #call, ncclGetErrorString(r_)); \
    } while (0)

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* pre and post run untimed around each timed op (a combine needs its dispatch first). */
template <class P, class F, class Q> static double median_us(P pre, F op, Q post, double *lo, double *hi)
{
    std::vector<double> t;
    for (int r = 0; r < WARM + REPS; r++) {
        pre();
        finish(st, "a benchmarked call", 120);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_us();
        op();
        while (cudaStreamQuery(st) == cudaErrorNotReady) /* spin: a sleep would be the figure */
            if (now_us() - t0 > 120e6) fail_now("a benchmarked call did not finish in 120 s");
        finish(st, "a benchmarked call", 1);
        double us = now_us() - t0, worst;
        MPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= WARM) t.push_back(worst);
        post();
    }
    std::sort(t.begin(), t.end());
    *lo = t.front(), *hi = t.back();
    return t[t.size() / 2];
}

static void line(const char *op, const char *impl, size_t bytes, double us, double lo, double hi)
{
    if (me == 0)
        printf("bench op=%s impl=%s pes=%d bytes=%zu iters=%d median_us=%.2f min_us=%.2f "
               "max_us=%.2f algbw_GBps=%.2f busbw_GBps=%.2f\n", op, impl, npes, bytes, REPS, us,
               lo, hi, bytes / us / 1e3, bytes / us / 1e3);
    fflush(stdout);
}

__global__ void fill(float *p, size_t n, int salt)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (float)((i * 2654435761u + salt) % 1000) / 128.0f;
}
__global__ void bincount(const int *idx, int total, int *cnt)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x)
        if (idx[i] >= 0) atomicAdd(&cnt[idx[i]], 1);
}

/* The baseline's buffers: counts, then rows in destination order, landing in (source, expert)
 * order; combine sends the same rows back. */
struct base {
    int E, T, k, H;
    int *cnt, *cnt_all, *h_all;
    float *send, *recv, *back; /* recv and back symmetric (the copy-engine path writes them) */
    std::vector<size_t> s_off, s_len, r_off, r_len, at_peer, back_at; /* rows */
};

static void base_counts(base &b, const int *idx)
{
    TM_CUDA(cudaMemsetAsync(b.cnt, 0, b.E * sizeof(int), st));
    bincount<<<64, 256, 0, st>>>(idx, b.T * b.k, b.cnt);
    if (use_nccl) {
        NCCL(ncclGroupStart());
        for (int p = 0; p < npes; p++) {
            NCCL(ncclSend(b.cnt, b.E, ncclInt, p, comm, st));
            NCCL(ncclRecv(b.cnt_all + (size_t)p * b.E, b.E, ncclInt, p, comm, st));
        }
        NCCL(ncclGroupEnd());
    } else {
        for (int p = 0; p < npes; p++)
            nvshmemx_putmem_on_stream(b.cnt_all + (size_t)me * b.E, b.cnt, b.E * sizeof(int), p, st);
        nvshmemx_barrier_all_on_stream(st);
    }
    TM_CUDA(cudaMemcpyAsync(b.h_all, b.cnt_all, (size_t)npes * b.E * sizeof(int), cudaMemcpyDeviceToHost, st));
    TM_CUDA(cudaStreamSynchronize(st)); /* torch: .tolist() of the counts */
    size_t so = 0, ro = 0;
    for (int p = 0; p < npes; p++) {
        size_t s = 0, r = 0, before = 0, back = 0;
        for (int e = 0; e < tm_first_expert(b.E, npes, me); e++) back += b.h_all[(size_t)p * b.E + e];
        b.back_at[p] = back; /* where p's rows for me start in p's send order */
        for (int e = tm_first_expert(b.E, npes, p); e < tm_first_expert(b.E, npes, p + 1); e++) {
            s += b.h_all[(size_t)me * b.E + e];
            for (int j = 0; j < me; j++) before += b.h_all[(size_t)j * b.E + e];
        }
        for (int e = tm_first_expert(b.E, npes, me); e < tm_first_expert(b.E, npes, me + 1); e++)
            r += b.h_all[(size_t)p * b.E + e];
        b.s_off[p] = so, b.s_len[p] = s, b.r_off[p] = ro, b.r_len[p] = r, b.at_peer[p] = before;
        so += s, ro += r;
    }
}

/* Rows from `from` (offsets off/len) to each peer's `to` at its offset. */
static void base_rows(base &b, const float *from, const std::vector<size_t> &off,
                      const std::vector<size_t> &len, float *to, const std::vector<size_t> &roff,
                      const std::vector<size_t> &rlen, const std::vector<size_t> &at_peer)
{
    size_t H = b.H;
    if (use_nccl) {
        NCCL(ncclGroupStart());
        for (int p = 0; p < npes; p++) {
            NCCL(ncclSend(from + off[p] * H, len[p] * H, ncclFloat, p, comm, st));
            NCCL(ncclRecv(to + roff[p] * H, rlen[p] * H, ncclFloat, p, comm, st));
        }
        NCCL(ncclGroupEnd());
    } else {
        for (int p = 0; p < npes; p++)
            if (len[p])
                TM_CUDA(cudaMemcpyAsync((float *)nvshmem_ptr(to, p) + at_peer[p] * H,
                                        from + off[p] * H, len[p] * H * 4,
                                        cudaMemcpyDeviceToDevice, st));
        nvshmemx_barrier_all_on_stream(st);
    }
}

static void study_moe(int E, const std::vector<int> &tokens)
{
    const int k = 6, H = 2048, Tmax = tokens.back();
    tm_config_t c = { E, H, k, Tmax };
    tm_moe_t *moe = tm_moe_create(&c);
    base b;
    b.E = E, b.k = k, b.H = H;
    size_t slots = (size_t)Tmax * k;
    b.s_off.resize(npes), b.s_len.resize(npes), b.r_off.resize(npes), b.r_len.resize(npes);
    b.at_peer.resize(npes), b.back_at.resize(npes);
    TM_CUDA(cudaMalloc(&b.cnt, E * sizeof(int)));
    b.cnt_all = (int *)tm_malloc((size_t)npes * E * sizeof(int));
    TM_CUDA(cudaMallocHost(&b.h_all, (size_t)npes * E * sizeof(int)));
    TM_CUDA(cudaMalloc(&b.send, slots * H * 4));
    b.recv = (float *)tm_malloc((size_t)npes * slots * H * 4);
    b.back = (float *)tm_malloc(slots * H * 4);
    float *x, *w, *y;
    int *idx;
    TM_CUDA(cudaMalloc(&x, (size_t)Tmax * H * 4));
    TM_CUDA(cudaMalloc(&y, (size_t)Tmax * H * 4));
    TM_CUDA(cudaMalloc(&w, slots * 4));
    TM_CUDA(cudaMalloc(&idx, slots * 4));
    fill<<<256, 256>>>(x, (size_t)Tmax * H, me);
    fill<<<256, 256>>>(b.send, slots * H, me + 7);
    fill<<<64, 256>>>(w, slots, me + 3);
    std::vector<int> hidx(slots);
    srand(1234 + me);
    for (int t = 0; t < Tmax; t++) /* 6 distinct experts per token, uniform */
        for (int s = 0; s < k; s++) {
            int e, dup;
            do {
                e = rand() % E, dup = 0;
                for (int q = 0; q < s; q++) dup |= hidx[(size_t)t * k + q] == e;
            } while (dup);
            hidx[(size_t)t * k + s] = e;
        }
    TM_CUDA(cudaMemcpy(idx, hidx.data(), slots * 4, cudaMemcpyHostToDevice));
    TM_CUDA(cudaDeviceSynchronize());
    char dop[32], cop[32];
    snprintf(dop, sizeof dop, "dispatch_e%d", E);
    snprintf(cop, sizeof cop, "combine_e%d", E);
    const char *bname = use_nccl ? "nccl" : "ce";
    for (int T : tokens) {
        size_t bytes = (size_t)T * k * H * 4;
        double lo, hi, us;
        float *recv = NULL;
        tm_layout_t lay;
        auto none = [] {};
        auto dispatch = [&] { tm_dispatch(moe, x, T, idx, w, &recv, &lay, st); };
        auto combine = [&] { tm_combine(moe, recv, y, st); }; /* expert_out: the rows as they came */
        us = median_us(none, dispatch, combine, &lo, &hi);
        line(dop, "tshmem", bytes, us, lo, hi);
        us = median_us(dispatch, combine, none, &lo, &hi);
        line(cop, "tshmem", bytes, us, lo, hi);
        b.T = T;
        TM_CUDA(cudaMemcpy(idx + 0, hidx.data(), (size_t)T * k * 4, cudaMemcpyHostToDevice));
        us = median_us(none, [&] { base_counts(b, idx); base_rows(b, b.send, b.s_off, b.s_len, b.recv, b.r_off, b.r_len, b.at_peer); }, none, &lo, &hi);
        line(dop, bname, bytes, us, lo, hi);
        us = median_us(none, [&] { base_rows(b, b.recv, b.r_off, b.r_len, b.back, b.s_off, b.s_len, b.back_at); }, none, &lo, &hi);
        line(cop, bname, bytes, us, lo, hi);
        if (me == 0) printf("# %s: %d tokens per PE, %zu MiB of rows per PE; %d rows arrived on PE 0\n", dop, T, bytes >> 20, lay.n_rows);
    }
    tm_moe_destroy(moe);
    TM_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    nvshmem_free(b.cnt_all), nvshmem_free(b.recv), nvshmem_free(b.back);
    cudaFree(b.cnt), cudaFreeHost(b.h_all), cudaFree(b.send);
    cudaFree(x), cudaFree(y), cudaFree(w), cudaFree(idx);
}

/* One dispatch and one combine at each shape, untimed: what a profiler looks at. */
static void study_profile(int E)
{
    const int k = 6, H = 2048, Tmax = 4096;
    tm_config_t c = { E, H, k, Tmax };
    tm_moe_t *moe = tm_moe_create(&c);
    float *x, *w, *y, *recv;
    int *idx;
    size_t slots = (size_t)Tmax * k;
    TM_CUDA(cudaMalloc(&x, (size_t)Tmax * H * 4));
    TM_CUDA(cudaMalloc(&y, (size_t)Tmax * H * 4));
    TM_CUDA(cudaMalloc(&w, slots * 4));
    TM_CUDA(cudaMalloc(&idx, slots * 4));
    fill<<<256, 256>>>(x, (size_t)Tmax * H, me);
    fill<<<64, 256>>>(w, slots, me + 3);
    std::vector<int> hidx(slots);
    srand(1234 + me);
    for (size_t i = 0; i < slots; i++) hidx[i] = (int)((i % k) * (E / k) + rand() % (E / k)); /* distinct per token */
    TM_CUDA(cudaMemcpy(idx, hidx.data(), slots * 4, cudaMemcpyHostToDevice));
    for (int T : { 128, 4096 }) {
        tm_layout_t lay;
        tm_dispatch(moe, x, T, idx, w, &recv, &lay, st);
        tm_combine(moe, recv, y, st);
        finish(st, "a profiled dispatch and combine", 120);
        if (me == 0) printf("# profile: E = %d, %d tokens per PE: %d rows arrived on PE 0\n", E, T, lay.n_rows);
    }
    tm_moe_destroy(moe);
    cudaFree(x), cudaFree(y), cudaFree(w), cudaFree(idx);
}

static void study_ring(size_t maxb)
{
    tm_ring_t r;
    tm_ring_create(&r, 16, 64 << 10);
    char *src, *dst, *sym = (char *)tm_malloc(maxb);
    TM_CUDA(cudaMalloc(&src, maxb));
    TM_CUDA(cudaMalloc(&dst, maxb));
    TM_CUDA(cudaMemset(src, 1, maxb));
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    auto none = [] {};
    for (size_t bytes = 16 << 10; bytes <= maxb; bytes *= 4) {
        double lo, hi, us;
        us = median_us(none, [&] { tm_ring_stream(&r, right, src, left, dst, bytes, st); }, none, &lo, &hi);
        line("ring", "tshmem", bytes, us, lo, hi);
        us = median_us(none, [&] { nvshmemx_putmem_on_stream(sym, src, bytes, right, st); nvshmemx_barrier_all_on_stream(st); }, none, &lo, &hi);
        line("ring", "nvshmem", bytes, us, lo, hi);
        us = median_us(none, [&] { TM_CUDA(cudaMemcpyAsync(nvshmem_ptr(sym, right), src, bytes, cudaMemcpyDeviceToDevice, st)); nvshmemx_barrier_all_on_stream(st); }, none, &lo, &hi);
        if (me == 0) printf("# ring %zu bytes: copy engine through nvshmem_ptr %.1f us, %.1f GB/s\n", bytes, us, bytes / us / 1e3);
    }
    tm_ring_destroy(&r);
    nvshmem_free(sym);
    cudaFree(src), cudaFree(dst);
}

int main(int argc, char **argv)
{
    int quick = 0, ring = 1, profile = 0;
    for (int i = 1; i < argc; i++) {
        quick |= strcmp(argv[i], "--quick") == 0;
        profile |= strcmp(argv[i], "--profile") == 0;
        if (strcmp(argv[i], "--no-ring") == 0) ring = 0;
    }
    setenv("NVSHMEM_SYMMETRIC_SIZE", "4G", 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &npes);
    g_test = "bench";
    if (npes < 1) fail_now("the study needs at least 1 PE, not %d", npes);
    tm_init();
    TM_CUDA(cudaStreamCreate(&st));
    use_nccl = tm_pes_per_gpu() == 1 && npes > 1;
    if (profile) {
        for (int E : { 64, 256 }) study_profile(E);
        TM_CUDA(cudaStreamDestroy(st));
        tm_finalize();
        MPI_Finalize();
        return 0;
    }
    if (use_nccl) {
        ncclUniqueId nid;
        if (me == 0) NCCL(ncclGetUniqueId(&nid));
        MPI_Bcast(&nid, (int)sizeof nid, MPI_BYTE, 0, MPI_COMM_WORLD);
        NCCL(ncclCommInitRank(&comm, npes, nid, me));
    }
    if (me == 0) {
        printf("# chapter 3.7 study: %d PEs, %d per GPU; median of %d after %d warm-ups; host clock, slowest PE\n", npes, tm_pes_per_gpu(), REPS, WARM);
        if (npes == 1)
            printf("# one PE sends to itself: the baseline is the copy engine (ce), bytes move inside one GPU's memory\n");
        else if (!use_nccl)
            printf("# PEs share a GPU: NCCL refuses that (\"Duplicate GPU detected\"), so the baseline is the copy engine through nvshmem_ptr (ce); bytes move inside one GPU's memory, not over a link\n");
        printf("# baseline: counts first (a host sync), then rows already in destination order\n");
    }
    if (ring && npes > 1) study_ring(quick ? (size_t)4 << 20 : (size_t)64 << 20);
    std::vector<int> tokens = quick ? std::vector<int>{ 128, 512 } : std::vector<int>{ 128, 512, 1024, 4096 };
    study_moe(64, tokens);
    study_moe(256, tokens);
    if (use_nccl) NCCL(ncclCommDestroy(comm));
    TM_CUDA(cudaStreamDestroy(st));
    tm_finalize();
    MPI_Finalize();
    return 0;
}
