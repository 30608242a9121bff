/* bench_3_7.cu: chapter 3.7's study, every PE at once (one per GPU, or several sharing one):
 *   ring:      point to point at the seeds' sizes (16 KiB to 1 GiB): tm_ring_stream_channels (your
 *              ring over 64 channels, a block pair each; the side table has one channel too),
 *              every PE to its right neighbour, against NCCL's send/recv
 *              (nvshmemx_putmem_on_stream where PEs share a GPU); a side table ("# ..." lines)
 *              adds the put on a stream, the copy engine through CUDA IPC and through nvshmem_ptr;
 *   allgather: 4 KiB to 64 MiB of output: your tm_allgather (one shot for small outputs, your
 *              ring over 32 channels for large ones), against ncclAllGather (puts on a stream
 *              where PEs share a GPU); the side table has each path forced, and puts and CUDA
 *              IPC copies to every peer;
 *   dispatch_eE / combine_eE: tm_dispatch and tm_combine at the pplx-kernels shapes (E = 64 and
 *              256 experts, 6 per token, hidden 2048, fp32 rows, uniform routing), 128 to 4096
 *              tokens per PE, against a baseline with the same routing, counts first, then rows:
 *              NCCL (grouped ncclSend/ncclRecv, what torch.distributed.all_to_all_single runs)
 *              where every PE has its own GPU, else (NCCL refuses two ranks on one GPU) the copy
 *              engine through nvshmem_ptr ("ce"). The baseline's rows are already in destination
 *              order and stay in (source, expert) order on arrival: no permutation is charged.
 * Each figure: CUDA events around the call on its stream, after an MPI barrier, the slowest PE,
 * the median of REPS. Lines: bench op=.. impl=tshmem|nvshmem|nccl|ce pes=.. bytes=..
 * (bytes: rows of one PE, tokens x 6 x 2048 x 4) median_us=.. algbw_GBps=.. busbw_GBps=..
 * Options: --quick (ring and allgather to 1 MiB, 128 and 512 tokens); --no-ring (the MoE shapes
 * only);
 * --sweep (also your ring's channels, slots, slot size and threads at 16 MiB, 256 MiB and 1 GiB,
 * with NCCL's send/recv timed before and after each size's sweep, and combine at the largest
 * token count with other block counts, tm_combine_ctas); --p2p (the point-to-point
 * study alone, with --sweep the quickest way to tune the ring's channels);
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

#define REPS 30
#define WARM 3
static int me, npes;
static cudaStream_t st;
static ncclComm_t comm;
static int use_nccl, sweep;

#define NCCL(call)                                                                             \
    do {                                                                                       \
        ncclResult_t r_ = (call);                                                              \
        if (r_ != ncclSuccess) tm_die(__func__, "%s failed: %s", #call, ncclGetErrorString(r_)); \
    } while (0)

/* pre and post run untimed around each timed op (a combine needs its dispatch first). The time
 * is the stream's, from an event recorded when the host starts the op to one recorded after it:
 * what the host waits inside the op (a dispatch's counts, an IPC copy's barrier) is in it, but
 * not the moment the host happens to notice the end (on the 2-GPU machine that moment came in
 * steps of 4 ms at large sizes, for every library alike). */
template <class P, class F, class Q> static double median_us(P pre, F op, Q post, double *lo, double *hi)
{
    static cudaEvent_t e0, e1;
    if (!e0) {
        TM_CUDA(cudaEventCreate(&e0));
        TM_CUDA(cudaEventCreate(&e1));
    }
    std::vector<double> t;
    for (int r = 0; r < WARM + REPS; r++) {
        pre();
        finish(st, "a benchmarked call", 120);
        MPI_Barrier(MPI_COMM_WORLD);
        TM_CUDA(cudaEventRecord(e0, st));
        op();
        TM_CUDA(cudaEventRecord(e1, st));
        finish(st, "a benchmarked call", 120);
        float ms = 0;
        TM_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        double us = ms * 1e3, worst;
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
        if (sweep && T == tokens.back()) /* blocks of combine's send kernel (0: tm_grid's) */
            for (int ctas : { 0, 33, 66, 132, 264 }) {
                tm_combine_ctas = ctas;
                double l2, h2, u2 = median_us(dispatch, combine, none, &l2, &h2);
                tm_combine_ctas = 0;
                if (me == 0) printf("# sweep %s tokens=%d combine ctas=%d: %.1f us\n", cop, T, ctas, u2);
            }
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

/* CUDA IPC: each PE opens every peer's cudaMalloc'ed buffer `mine` (the same size everywhere);
 * peer[p] is PE p's buffer in this process (peer[me] = mine). */
static void ipc_open(void *mine, std::vector<char *> &peer)
{
    cudaIpcMemHandle_t h;
    std::vector<cudaIpcMemHandle_t> all(npes);
    TM_CUDA(cudaIpcGetMemHandle(&h, mine));
    MPI_Allgather(&h, (int)sizeof h, MPI_BYTE, all.data(), (int)sizeof h, MPI_BYTE, MPI_COMM_WORLD);
    peer.assign(npes, NULL);
    for (int p = 0; p < npes; p++)
        if (p == me)
            peer[p] = (char *)mine;
        else
            TM_CUDA(cudaIpcOpenMemHandle((void **)&peer[p], all[p], cudaIpcMemLazyEnablePeerAccess));
}
static void ipc_close(std::vector<char *> &peer)
{
    for (int p = 0; p < npes; p++)
        if (p != me) TM_CUDA(cudaIpcCloseMemHandle(peer[p]));
}
/* A CUDA IPC transfer is done when the sender's copy is and the receiver has been told: here a
 * stream sync and an MPI barrier (what a program using IPC alone would do). */
static void ipc_done(void)
{
    TM_CUDA(cudaStreamSynchronize(st)); /* not finish(): its naps of 200 us would be the figure */
    MPI_Barrier(MPI_COMM_WORLD);
}

/* One row of a study's side table: GB/s of each way of moving the same bytes. */
struct row {
    size_t bytes;
    double gbps[8];
};
static void side_table(const char *title, const char *const *names, int n,
                       const std::vector<row> &rows)
{
    if (me != 0) return;
    printf("# %s (GB/s: bytes / median time; every PE at once)\n#   %8s", title, "size");
    for (int i = 0; i < n; i++) printf(" %12s", names[i]);
    printf("\n");
    for (const row &r : rows) {
        char sz[32];
        if (r.bytes >= (1u << 20)) snprintf(sz, sizeof sz, "%zu MiB", r.bytes >> 20);
        else snprintf(sz, sizeof sz, "%zu KiB", r.bytes >> 10);
        printf("#   %8s", sz);
        for (int i = 0; i < n; i++)
            if (r.gbps[i] > 0) printf(" %12.2f", r.gbps[i]);
            else printf(" %12s", "-");
        printf("\n");
    }
}

/* Point to point at the seeds' sizes: every PE sends `bytes` to its right neighbour. The bench
 * lines compare your ring with NCCL's send/recv (with nvshmemx_putmem_on_stream where NCCL cannot
 * run); the side table has every way: your ring, the put on a stream, the copy engine through
 * CUDA IPC and through nvshmem_ptr, NCCL. */
#define P2P_CHANNELS 64 /* the rings of your multi-channel stream, 16 slots of 256 KiB and a block
                         pair each: --sweep on four and on two H200s, 2026-11-28, gave 363 GB/s
                         at 1 GiB with 64 channels (any slots), 356 with 48, 345-361 with 32 */
#define CHANNELS 32 /* the allgather's rings (tm_allgather_create makes 16 slots of 512 KiB) */
static void study_p2p(const std::vector<size_t> &sizes)
{
    size_t maxb = sizes.back();
    tm_ring_t r, rs[P2P_CHANNELS];
    tm_ring_create(&r, 16, 64 << 10);
    for (tm_ring_t &x : rs) tm_ring_create(&x, 16, 256 << 10);
    char *src, *dst, *sym = (char *)tm_malloc(maxb);
    TM_CUDA(cudaMalloc(&src, maxb));
    TM_CUDA(cudaMalloc(&dst, maxb));
    TM_CUDA(cudaMemset(src, 1, maxb));
    std::vector<char *> peer;
    if (use_nccl) ipc_open(dst, peer);
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    auto none = [] {};
    auto nccl_p2p = [&](size_t bytes) { /* NCCL's send/recv, the bench lines' baseline */
        NCCL(ncclGroupStart());
        NCCL(ncclSend(src, bytes, ncclChar, right, comm, st));
        NCCL(ncclRecv(dst, bytes, ncclChar, left, comm, st));
        NCCL(ncclGroupEnd());
    };
    std::vector<row> rows;
    for (size_t bytes : sizes) {
        double lo, hi, us[7] = { 0, 0, 0, 0, 0, 0, 0 }, l5[7], h5[7];
        us[5] = median_us(none, [&] { tm_ring_stream(&r, right, src, left, dst, bytes, st); }, none, &lo, &hi);
        tm_launch_collective = 1; /* the same ring, each call a cooperative launch */
        us[6] = median_us(none, [&] { tm_ring_stream_channels(rs, P2P_CHANNELS, right, src, left, dst, bytes, st); }, none, &lo, &hi);
        tm_launch_collective = 0;
        us[0] = median_us(none, [&] { tm_ring_stream_channels(rs, P2P_CHANNELS, right, src, left, dst, bytes, st); }, none, &l5[0], &h5[0]);
        us[1] = median_us(none, [&] { nvshmemx_putmem_on_stream(sym, src, bytes, right, st); nvshmemx_barrier_all_on_stream(st); }, none, &l5[1], &h5[1]);
        us[3] = median_us(none, [&] { TM_CUDA(cudaMemcpyAsync(nvshmem_ptr(sym, right), src, bytes, cudaMemcpyDeviceToDevice, st)); nvshmemx_barrier_all_on_stream(st); }, none, &lo, &hi);
        if (use_nccl) {
            us[2] = median_us(none, [&] { TM_CUDA(cudaMemcpyAsync(peer[right], src, bytes, cudaMemcpyDeviceToDevice, st)); ipc_done(); }, none, &lo, &hi);
            us[4] = median_us(none, [&] { nccl_p2p(bytes); }, none, &l5[4], &h5[4]);
        }
        line("ring", "tshmem", bytes, us[0], l5[0], h5[0]);
        int b = use_nccl ? 4 : 1;
        line("ring", use_nccl ? "nccl" : "nvshmem", bytes, us[b], l5[b], h5[b]);
        row rw = { bytes, { 0, 0, 0, 0, 0, 0, 0, 0 } };
        for (int i = 0; i < 7; i++) rw.gbps[i] = us[i] > 0 ? bytes / us[i] / 1e3 : 0;
        rows.push_back(rw);
    }
    if (sweep) /* channels x slots per ring x slot size x threads a block, NCCL before and after */
        for (size_t bytes : { (size_t)16 << 20, (size_t)256 << 20, (size_t)1 << 30 }) {
            if (bytes > maxb) continue;
            auto nccl_line = [&](const char *when) {
                if (!use_nccl) return;
                double lo, hi, us = median_us(none, [&] { nccl_p2p(bytes); }, none, &lo, &hi);
                if (me == 0) printf("# sweep nccl %s %zu bytes: %.1f us, %.1f GB/s\n", when, bytes, us, bytes / us / 1e3);
            };
            nccl_line("before");
            for (int ch : { 16, 32, 48, 64 })
                for (int nslots : { 8, 16 })
                    for (size_t slot : { (size_t)256 << 10, (size_t)512 << 10, (size_t)1 << 20, (size_t)2 << 20 })
                        for (int threads : { 512, 1024 }) {
                            if ((size_t)npes * ch * nslots * slot > ((size_t)2 << 30)) continue;
                            tm_ring_t more[TM_MAX_CHANNELS];
                            for (int c = 0; c < ch; c++) tm_ring_create(&more[c], nslots, slot);
                            tm_ring_threads = threads;
                            double lo, hi, us = median_us(none, [&] { tm_ring_stream_channels(more, ch, right, src, left, dst, bytes, st); }, none, &lo, &hi);
                            tm_ring_threads = 512;
                            if (me == 0) printf("# sweep ring channels=%d slots=%d slot=%zu threads=%d %zu bytes: %.1f us, %.1f GB/s\n", ch, nslots, slot, threads, bytes, us, bytes / us / 1e3);
                            for (int c = 0; c < ch; c++) tm_ring_destroy(&more[c]);
                        }
            nccl_line("after");
        }
    const char *names[] = { "ring_x64", "nvshmem_put", "cuda_ipc", "ptr_copy", "nccl_p2p", "ring_x1", "x64_coop" };
    side_table("point to point, every PE to its right neighbour; ring_x64: your ring over 64 "
               "channels, ring_x1: over one, x64_coop: over 64, each call a cooperative launch",
               names, 7, rows);
    if (use_nccl) ipc_close(peer);
    for (tm_ring_t &x : rs) tm_ring_destroy(&x);
    tm_ring_destroy(&r);
    nvshmem_free(sym);
    cudaFree(src), cudaFree(dst);
}

/* Allgather at the seeds' sizes (bytes: the whole output, as nccl-tests count it; each PE
 * brings bytes / npes). Yours: tm_allgather as the selector picks (one shot up to oneshot_max,
 * the ring above), and each path forced (one shot while a part fits the landing areas; the ring
 * of chapter 2.1 forwarding each piece npes - 1 times over 32 channels); against ncclAllGather
 * (puts on a stream to every peer where NCCL cannot run); the side table adds the puts and CUDA
 * IPC copies to every peer, and a "# selector" line says where one shot stopped winning. */
static void study_allgather(const std::vector<size_t> &sizes)
{
    size_t maxb = sizes.back();
    tm_allgather_t ag;
    tm_allgather_create(&ag, (maxb + npes - 1) / npes, CHANNELS);
    size_t chosen = ag.oneshot_max;
    char *out, *sym = (char *)tm_malloc(maxb);
    TM_CUDA(cudaMalloc(&out, maxb));
    TM_CUDA(cudaMemset(out, me + 1, maxb));
    std::vector<char *> peer;
    if (use_nccl) ipc_open(out, peer);
    auto none = [] {};
    std::vector<row> rows;
    size_t last_oneshot_win = 0, first_ring_win = 0;
    for (size_t bytes : sizes) {
        size_t part = bytes / npes;
        double lo, hi, us[6] = { 0, 0, 0, 0, 0, 0 }, l6[6], h6[6];
        auto mine = [&] { tm_allgather(&ag, out + me * part, out, part, st); };
        ag.oneshot_max = chosen;
        us[0] = median_us(none, mine, none, &l6[0], &h6[0]);
        ag.oneshot_max = 0;
        us[1] = median_us(none, mine, none, &l6[1], &h6[1]);
        if (part <= ag.area) {
            ag.oneshot_max = (size_t)-1;
            us[2] = median_us(none, mine, none, &l6[2], &h6[2]);
        }
        ag.oneshot_max = chosen;
        us[3] = median_us(none, [&] {
            for (int p = 0; p < npes; p++)
                if (p != me) nvshmemx_putmem_on_stream(sym + me * part, sym + me * part, part, p, st);
            nvshmemx_barrier_all_on_stream(st);
        }, none, &l6[3], &h6[3]);
        if (use_nccl) {
            us[4] = median_us(none, [&] {
                for (int p = 0; p < npes; p++)
                    if (p != me)
                        TM_CUDA(cudaMemcpyAsync(peer[p] + me * part, out + me * part, part, cudaMemcpyDeviceToDevice, st));
                ipc_done();
            }, none, &lo, &hi);
            us[5] = median_us(none, [&] { NCCL(ncclAllGather(out + me * part, out, part, ncclChar, comm, st)); }, none, &l6[5], &h6[5]);
        }
        if (us[2] > 0 && us[2] < us[1]) last_oneshot_win = bytes;
        if (us[2] > 0 && us[1] <= us[2] && !first_ring_win) first_ring_win = bytes;
        line("allgather", "tshmem", bytes, us[0], l6[0], h6[0]);
        int b = use_nccl ? 5 : 3;
        line("allgather", use_nccl ? "nccl" : "nvshmem", bytes, us[b], l6[b], h6[b]);
        row rw = { bytes, { 0, 0, 0, 0, 0, 0 } };
        for (int i = 0; i < 6; i++) rw.gbps[i] = us[i] > 0 ? bytes / us[i] / 1e3 : 0;
        rows.push_back(rw);
    }
    const char *names[] = { "tm_allgather", "ring_x32", "one_shot", "nvshmem_put", "cuda_ipc", "nccl" };
    side_table("allgather, bytes of the whole output; tm_allgather: one shot up to oneshot_max, "
               "then the ring; ring_x32 and one_shot: each path forced", names, 6, rows);
    if (me == 0)
        printf("# selector: oneshot_max = %zu bytes of output; one shot beat the ring up to %zu "
               "bytes, the ring first won at %zu (0: never, in these sizes)\n", chosen,
               last_oneshot_win, first_ring_win);
    if (use_nccl) ipc_close(peer);
    tm_allgather_destroy(&ag);
    nvshmem_free(sym);
    cudaFree(out);
}

int main(int argc, char **argv)
{
    int quick = 0, ring = 1, profile = 0, p2p_only = 0;
    for (int i = 1; i < argc; i++) {
        quick |= strcmp(argv[i], "--quick") == 0;
        profile |= strcmp(argv[i], "--profile") == 0;
        sweep |= strcmp(argv[i], "--sweep") == 0;
        if (strcmp(argv[i], "--no-ring") == 0) ring = 0;
        p2p_only |= strcmp(argv[i], "--p2p") == 0;
    }
    setenv("NVSHMEM_SYMMETRIC_SIZE", sweep ? "8G" : "4G", 0); /* the sweep makes rings of up to 2 GiB more */
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
        printf("# chapter 3.7 study: %d PEs, %d per GPU; median of %d after %d warm-ups; CUDA events, slowest PE\n", npes, tm_pes_per_gpu(), REPS, WARM);
        if (npes == 1)
            printf("# one PE sends to itself: the baseline is the copy engine (ce), bytes move inside one GPU's memory\n");
        else if (!use_nccl)
            printf("# PEs share a GPU: NCCL refuses that (\"Duplicate GPU detected\"), so the baseline is the copy engine through nvshmem_ptr (ce); bytes move inside one GPU's memory, not over a link\n");
        printf("# baseline: counts first (a host sync), then rows already in destination order\n");
    }
    if (ring && npes > 1) { /* the seeds' sizes: their point-to-point and allgather tables */
        { /* untimed: the first figures of a run came out slow (clocks, first touches) */
            char *a = (char *)tm_malloc(1 << 20);
            for (int i = 0; i < 200; i++)
                nvshmemx_putmem_on_stream(a, a, 1 << 20, (me + 1) % npes, st);
            nvshmemx_barrier_all_on_stream(st);
            finish(st, "the warm-up puts", 60);
            nvshmem_free(a);
        }
        const size_t K = 1024, M = K * K;
        std::vector<size_t> p2p = { 16 * K, 256 * K, M, 16 * M, 64 * M, 256 * M, 1024 * M };
        std::vector<size_t> ag = { 4 * K, 16 * K, 64 * K, 256 * K, M, 2 * M, 4 * M, 8 * M, 16 * M, 32 * M, 64 * M };
        if (quick) p2p.resize(3), ag.resize(5); /* to 1 MiB */
        study_p2p(p2p);
        if (!p2p_only) study_allgather(ag);
    }
    std::vector<int> tokens = quick ? std::vector<int>{ 128, 512 } : std::vector<int>{ 128, 512, 1024, 4096 };
    if (!p2p_only) {
        study_moe(64, tokens);
        study_moe(256, tokens);
    }
    if (use_nccl) NCCL(ncclCommDestroy(comm));
    TM_CUDA(cudaStreamDestroy(st));
    tm_finalize();
    MPI_Finalize();
    return 0;
}
