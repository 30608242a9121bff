/* bench_3_3.cu: chapter 3.3's bandwidth study, GPU 0 -> GPU 1, in one run:
 *   put:       NCCL send/recv, CUDA IPC peer copy (copy engine), nvshmemx_putmem_on_stream,
 *              tg_put_sm (your many-block kernel) and tg_put (your copy-engine put), 16 KiB to 1 GiB;
 *   allreduce: tg_allreduce (your ring; one shot up to 1 MiB, both timed there) and
 *              ncclAllReduce, float sum, 16 KiB to 1 GiB.
 * Each number: CUDA events around one operation, after an MPI barrier, the slower PE's time,
 * the median of REPS repetitions after WARM warm-ups. One line per (op, impl, size), in the
 * grader's protocol: bench op=put|put_sm|allreduce impl=tshmem|nccl ... busbw_GBps=.. (allreduce:
 * bus bandwidth, algbw*2(n-1)/n); CUDA IPC and nvshmemx_putmem_on_stream as "# " lines.
 * Options: --quick (sizes up to 16 MiB), --sweep (also the block counts of both kernels). */
#include "gpu_check.h"
#include <algorithm>
#include <nccl.h>
#include <string.h>
#include <vector>

#define REPS 25
#define WARM 5
static int me, npes;
static cudaStream_t st;
static cudaEvent_t e0, e1;

#define NCCL(call)                                                                             \
    do {                                                                                       \
        ncclResult_t r_ = (call);                                                              \
        if (r_ != ncclSuccess) tg_die(__func__, "%s failed: %s", #call, ncclGetErrorString(r_)); \
    } while (0)

template <class F> static double median_us(F op)
{
    std::vector<double> t;
    for (int r = 0; r < WARM + REPS; r++) {
        TG_CUDA(cudaStreamSynchronize(st));
        MPI_Barrier(MPI_COMM_WORLD);
        TG_CUDA(cudaEventRecord(e0, st));
        op();
        TG_CUDA(cudaEventRecord(e1, st));
        finish(st, "a benchmarked operation", 60);
        float ms = 0;
        TG_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        double us = 1000.0 * ms, worst;
        MPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= WARM) t.push_back(worst);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

/* The grader's protocol (grader bench reads it): your kernels are impl=tshmem, NCCL the
 * baseline; the put's other engines go in "# " lines. Each put figure is printed for op put
 * (tg_put) and op put_sm (tg_put_sm), each beside NCCL's send/recv. */
static void line(const char *op, const char *impl, size_t bytes, double us, double gbs)
{
    if (me != 0) return;
    struct { const char *name, *op, *impl; } map[] = {
        { "tg_put", "put", "tshmem" }, { "tg_put_sm", "put_sm", "tshmem" },
        { "nccl_sendrecv", "put", "nccl" }, { "nccl_sendrecv", "put_sm", "nccl" },
        { "tg_allreduce", "allreduce", "tshmem" }, { "nccl_allreduce", "allreduce", "nccl" } };
    int shown = 0;
    for (auto &m : map)
        if (!strcmp(m.name, impl) && (strcmp(op, "allreduce") == 0) == (strcmp(m.op, "allreduce") == 0)) {
            printf("bench op=%s impl=%s pes=%d bytes=%zu iters=%d median_us=%.2f algbw_GBps=%.2f "
                   "busbw_GBps=%.2f\n", m.op, m.impl, npes, bytes, REPS, us, gbs, gbs);
            shown = 1;
        }
    if (!shown) printf("# %s %s %zu bytes: %.2f us, %.1f GB/s\n", op, impl, bytes, us, gbs);
    fflush(stdout);
}

/* For --sweep only: put.cu's block put, with the grid and the slice alignment given. */
__global__ void sweep_put(char *dest, const char *src, size_t bytes, int pe, size_t align)
{
    size_t per = ((bytes + gridDim.x - 1) / gridDim.x + align - 1) / align * align;
    size_t lo = per * blockIdx.x, hi = lo + per < bytes ? lo + per : bytes;
    if (lo < hi) nvshmemx_putmem_nbi_block(dest + lo, src + lo, hi - lo, pe);
}

static const char *human(size_t b, char *s)
{
    if (b >= (1u << 30)) sprintf(s, "%zu GiB", b >> 30);
    else if (b >= (1u << 20)) sprintf(s, "%zu MiB", b >> 20);
    else sprintf(s, "%zu KiB", b >> 10);
    return s;
}

int main(int argc, char **argv)
{
    int quick = 0, sweep = 0;
    for (int i = 1; i < argc; i++) {
        quick |= strcmp(argv[i], "--quick") == 0;
        sweep |= strcmp(argv[i], "--sweep") == 0;
    }
    setenv("NVSHMEM_SYMMETRIC_SIZE", "4G", 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &npes);
    g_test = "bench";
    tg_init();
    if (npes < 2) tg_die(__func__, "the study needs 2 PEs or more (mpirun -np 2), not %d", npes);
    TG_CUDA(cudaStreamCreate(&st));
    TG_CUDA(cudaEventCreate(&e0));
    TG_CUDA(cudaEventCreate(&e1));
    size_t maxb = quick ? (size_t)16 << 20 : (size_t)1 << 30;

    ncclUniqueId nid;
    if (me == 0) NCCL(ncclGetUniqueId(&nid));
    MPI_Bcast(&nid, (int)sizeof nid, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
    NCCL(ncclCommInitRank(&comm, npes, nid, me));

    char *sym = (char *)tg_malloc(maxb), *src, *ipc_local, *ipc_peer = NULL;
    TG_CUDA(cudaMalloc(&src, maxb));
    TG_CUDA(cudaMalloc(&ipc_local, maxb));
    TG_CUDA(cudaMemset(src, 1, maxb));
    TG_CUDA(cudaMemset(sym, 0, maxb));
    cudaIpcMemHandle_t mine;
    std::vector<cudaIpcMemHandle_t> theirs(npes); /* one per PE: the study runs on 2 GPUs or more */
    TG_CUDA(cudaIpcGetMemHandle(&mine, ipc_local));
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, theirs.data(), (int)sizeof mine, MPI_BYTE,
                  MPI_COMM_WORLD);
    if (me == 0)
        TG_CUDA(cudaIpcOpenMemHandle((void **)&ipc_peer, theirs[1], cudaIpcMemLazyEnablePeerAccess));
    TG_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();

    std::vector<size_t> sizes;
    for (size_t b = 16 << 10; b <= maxb; b *= 4) sizes.push_back(b);
    if (me == 0) {
        printf("# chapter 3.3 bandwidth study: %d PEs, GPU 0 -> GPU 1, median of %d after %d warm-ups\n", npes, REPS, WARM);
    }
    if (me == 0) printf("# tg_put_sm: %d blocks at 16 MiB, %d at 1 GiB\n", tg_put_blocks((size_t)16 << 20), tg_put_blocks((size_t)1 << 30));
    std::vector<double> nccl_p, ipc_p, ons_p, sm_p, tg_p, tgar, ncar;
    for (size_t b : sizes) {
        double us;
        us = median_us([&] {
            if (me == 0) NCCL(ncclSend(src, b, ncclChar, 1, comm, st));
            if (me == 1) NCCL(ncclRecv(sym, b, ncclChar, 0, comm, st));
        });
        line("put", "nccl_sendrecv", b, us, b / us / 1e3); nccl_p.push_back(b / us / 1e3);
        us = median_us([&] { if (me == 0) TG_CUDA(cudaMemcpyAsync(ipc_peer, src, b, cudaMemcpyDeviceToDevice, st)); });
        line("put", "cuda_ipc_copy", b, us, b / us / 1e3); ipc_p.push_back(b / us / 1e3);
        us = median_us([&] { if (me == 0) nvshmemx_putmem_on_stream(sym, src, b, 1, st); });
        line("put", "nvshmem_on_stream", b, us, b / us / 1e3); ons_p.push_back(b / us / 1e3);
        us = median_us([&] { if (me == 0) tg_put_sm(sym, src, b, 1, st); });
        line("put", "tg_put_sm", b, us, b / us / 1e3); sm_p.push_back(b / us / 1e3);
        us = median_us([&] { if (me == 0) tg_put(sym, src, b, 1, st); });
        line("put", "tg_put", b, us, b / us / 1e3); tg_p.push_back(b / us / 1e3);
    }
    if (sweep)
        for (size_t b : { (size_t)16 << 20, (size_t)256 << 20 })
            for (int blocks : { 128, 132, 264 })
                for (size_t align : { 16, 4096 }) {
                    if (b > maxb) continue;
                    double us = median_us([&] { if (me == 0) sweep_put<<<blocks, 1024, 0, st>>>(sym, src, b, 1, align); });
                    if (me == 0) printf("sweep put blocks=%d align=%zu %zu %.2f us %.1f GB/s\n", blocks, align, b, us, b / us / 1e3);
                }

    tg_allreduce_t ar;
    int ar_ctas = getenv("TG_AR_CTAS") ? atoi(getenv("TG_AR_CTAS")) : TG_AR_MAX_CTAS;
    int ar_threads = getenv("TG_AR_THREADS") ? atoi(getenv("TG_AR_THREADS")) : 1024;
    tg_allreduce_create(&ar, maxb / sizeof(float), ar_ctas, ar_threads);
    size_t ar_min_chunk = ar.min_chunk;
    float *data = (float *)sym;
    double bus = 2.0 * (npes - 1) / npes;
    if (sweep)
        for (size_t b : { (size_t)16 << 20, (size_t)64 << 20, (size_t)256 << 20 })
            for (int ctas : { 64, 128 })
                for (int threads : { 1024 })
                    for (size_t mc : { 8192, 16384, 32768, 65536 }) {
                        if (b > maxb) continue;
                        ar.ctas = ctas;
                        ar.threads = threads;
                        ar.min_chunk = mc;
                        double us = median_us([&] { tg_allreduce(&ar, data, b / sizeof(float), st); });
                        if (me == 0) printf("sweep allreduce ctas=%d threads=%d min_chunk=%zu %zu %.2f us busbw %.1f GB/s\n", ctas, threads, mc, b, us, b / us / 1e3 * bus);
                    }
    ar.ctas = ar_ctas;
    ar.threads = ar_threads;
    ar.min_chunk = ar_min_chunk;
    if (me == 0) printf("# tg_allreduce: up to %d blocks of %d threads, chunks of at least %zu floats; one shot up to %zu bytes\n", ar.ctas, ar.threads, ar.min_chunk, ar.oneshot_max);
    char hs[32];
    /* Untimed calls first: the first size measured was 20-40% slower than the next for every
     * path (NCCL's too) after the put study and the allocations, with only WARM warm-ups. */
    for (int i = 0; i < 200; i++) {
        tg_allreduce(&ar, data, 4096, st);
        NCCL(ncclAllReduce(data, data, 4096, ncclFloat, ncclSum, comm, st));
    }
    TG_CUDA(cudaStreamSynchronize(st));
    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t b : sizes) {
        size_t n = b / sizeof(float);
        if (b <= ar.oneshot_max) { /* the two paths side by side where both can run */
            size_t keep = ar.oneshot_max;
            ar.oneshot_max = 0;
            double ring = median_us([&] { tg_allreduce(&ar, data, n, st); });
            ar.oneshot_max = keep;
            double one = median_us([&] { tg_allreduce(&ar, data, n, st); });
            if (me == 0) printf("# allreduce %s: one shot %.2f us, the ring %.2f us (%.2fx)\n", human(b, hs), one, ring, ring / one);
        }
        double us = median_us([&] { tg_allreduce(&ar, data, n, st); });
        line("allreduce", "tg_allreduce", b, us, b / us / 1e3 * bus); tgar.push_back(b / us / 1e3 * bus);
        us = median_us([&] { NCCL(ncclAllReduce(data, data, n, ncclFloat, ncclSum, comm, st)); });
        line("allreduce", "nccl_allreduce", b, us, b / us / 1e3 * bus); ncar.push_back(b / us / 1e3 * bus);
    }

    if (me == 0) {
        char s[32];
        printf("\n| size | NCCL send/recv | CUDA IPC copy | nvshmemx_putmem_on_stream | tg_put_sm | tg_put | tg_put_sm / on_stream | tg_put / on_stream |\n");
        printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (size_t i = 0; i < sizes.size(); i++)
            printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |\n", human(sizes[i], s), nccl_p[i], ipc_p[i], ons_p[i], sm_p[i], tg_p[i], sm_p[i] / ons_p[i], tg_p[i] / ons_p[i]);
        printf("\n| size | tg_allreduce busbw | NCCL allreduce busbw | ratio |\n|---:|---:|---:|---:|\n");
        for (size_t i = 0; i < sizes.size(); i++)
            printf("| %s | %.1f | %.1f | %.2f |\n", human(sizes[i], s), tgar[i], ncar[i], tgar[i] / ncar[i]);
        printf("(GB/s = 1e9 bytes per second; NVLink on this machine: 450 GB/s per direction)\n");
    }
    tg_allreduce_destroy(&ar);
    if (ipc_peer) TG_CUDA(cudaIpcCloseMemHandle(ipc_peer));
    TG_CUDA(cudaFree(ipc_local));
    TG_CUDA(cudaFree(src));
    nvshmem_free(sym);
    NCCL(ncclCommDestroy(comm));
    tg_finalize();
    MPI_Finalize();
    return 0;
}
