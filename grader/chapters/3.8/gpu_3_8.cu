/* gpu_3_8.cu: chapter 3.8's GPU twin, a study (bonus task 6 of book/3.8-lora-cache.md): the
 * adapter cache's slots and entries in NVSHMEM's symmetric GPU memory, one PE per GPU, and what
 * an adapter switch costs there against the roadmap's 100 us. Built and run by tools/gpu-lora
 * (mpirun, one process per GPU; GPU_PES=N: the first N).
 *
 * Every PE is the home of two adapters of each size (slots in its symmetric heap, each with an
 * entry: one 64-bit word, the state in the high half (1 = published) and the pins in the low
 * half, and a version word). PE p switches between the two adapters whose home is PE p + 1 (all
 * PEs at once, each reading a different home), as a serving step does between batches:
 *   peer      pin (one thread's nvshmem_uint64_atomic_fetch_add on the home's entry, then the
 *             state and version read back), copy the slot into this GPU's working buffer with
 *             the SMs (loads through nvshmem_ptr, over NVLink), unpin (fetch-add of -1);
 *   zero_copy pin and unpin only: a LoRA kernel that reads A and B in place through nvshmem_ptr
 *             needs no copy, so this is the switch (and the roadmap's "lookup under 2 us");
 *   peer_ce   pin, the copy by the copy engine (cudaMemcpyAsync from the nvshmem_ptr address),
 *             unpin;
 * against the places an adapter comes from without the cache:
 *   host      cudaMemcpyAsync from pinned host memory (cudaMallocHost): a miss, over PCIe;
 *   local     cudaMemcpyAsync within this GPU's memory (HBM, the limit of any copy).
 * Each call alone: every PE's GPU idle and past an MPI barrier, CUDA events around the call on
 * one stream, the slowest PE, the median of 30 after 5 warm-ups; twice, as chapter 3.6 times
 * its calls: on the GPU (the stream first spins 100 us, so the host has queued the whole call
 * before the start event: the GPU's time alone, as in a server whose host runs ahead) and with
 * the launch (no spin: the host's launches are in the time too). Each copied adapter is
 * checked: every float carries its adapter's version and position, so a torn or stale copy is
 * seen.
 *
 * Prints, per size, "# gpu_switch hidden=H rank=R layers=L bytes=B peer_us=.. zero_copy_us=..
 * peer_ce_us=.. host_us=.. local_us=.. (on the GPU) peer_launch_us=.. zero_copy_launch_us=..
 * host_launch_us=.. peer_GBps=.. host_over_peer=.. under_100us=yes|no" (peer on the GPU against
 * 100 us), and "PASS switch_contents" or "FAIL switch_contents: what was seen". fp32, as chapter
 * 3.8's benchmark: bytes = layers x 2 x hidden x rank x 4. */
#include <cuda_runtime.h>
#include <mpi.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TSHMEM_GPU_NAME "gpu_3_8"
#define TSHMEM_GPU_PAGE "book/3.8-lora-cache.md"
#include "tshmem_gpu.h"

#define REPS 30
#define WARM 5
#define PUBLISHED (1ull << 32)
#define COPY_CTAS 132
#define COPY_THREADS 1024
#define SPIN_CYCLES 200000 /* about 100 us at the SMs' 2 GHz or less */

struct size_row { int hidden, rank, layers; };
/* The rows of chapter 3.8's switch table (book/3.8-lora-cache.md). */
static const struct size_row rows[] = {
    {1024, 8, 1}, {4096, 8, 1}, {1024, 8, 32}, {1024, 64, 4}, {4096, 16, 4}, {1024, 16, 32},
    {4096, 64, 4}, {1024, 64, 32}, {4096, 16, 32}, {4096, 64, 32},
};
#define NROWS (int)(sizeof rows / sizeof rows[0])

/* One thread: pin entry `e` at `home` (a reference, if the entry is published), then read its
 * version; out[0] = 1 and out[1] = version on success, out[0] = 0 if the entry was not
 * published (the pin is taken back). */
__global__ void pin_kernel(uint64_t *e, uint64_t *version, int home, uint64_t *out)
{
    uint64_t old = nvshmem_uint64_atomic_fetch_add(e, 1, home);
    if (!(old & PUBLISHED)) {
        nvshmem_uint64_atomic_add(e, (uint64_t)-1, home);
        out[0] = 0;
        return;
    }
    __threadfence_system(); /* the slot's loads that follow come after the pin (acquire) */
    out[0] = 1;
    out[1] = nvshmem_uint64_g(version, home);
}

__global__ void unpin_kernel(uint64_t *e, int home)
{
    nvshmem_uint64_atomic_add(e, (uint64_t)-1, home);
}

/* The GPU waits `cycles` clock ticks (the host queues what follows meanwhile). */
__global__ void spin_kernel(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles)
        ;
}

/* The SMs copy n floats from `src` (a peer's slot, through nvshmem_ptr) to `dst`, 16 bytes a
 * load. */
__global__ void copy_kernel(float4 *dst, const float4 *src, size_t n4)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __ldcs(src + i);
}

/* The home writes the adapter of version v: float i is v * 4096 + (i mod 4093), an integer below
 * 2^24 and so exact in a float; a float of the other adapter, or of none, differs. */
__global__ void fill_kernel(float *slot, size_t n, uint32_t v)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        slot[i] = (float)(v * 4096u + (uint32_t)(i % 4093));
}

/* Counts the floats of dst that differ from adapter version v's. */
__global__ void check_kernel(const float *dst, size_t n, uint32_t v, unsigned long long *bad)
{
    unsigned long long mine = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        mine += dst[i] != (float)(v * 4096u + (uint32_t)(i % 4093));
    if (mine)
        atomicAdd(bad, mine);
}

static int me, npes;

static double slowest_median(double *us)
{
    double all[REPS];
    MPI_Allreduce(us, all, REPS, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 1; i < REPS; i++) /* insertion sort: 30 values */
        for (int j = i; j > 0 && all[j] < all[j - 1]; j--) {
            double t = all[j];
            all[j] = all[j - 1];
            all[j - 1] = t;
        }
    return all[REPS / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int local, ndev;
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &npes);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    GPU_CUDA(cudaGetDeviceCount(&ndev));
    if (local >= ndev)
        gpu_die("main", "PE %d is process %d of its node, which has %d GPUs: one process per "
                "GPU (mpirun -np %d)", me, local, ndev, ndev);
    GPU_CUDA(cudaSetDevice(local));
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (me == 0 && nvshmemx_get_uniqueid(&id) != 0)
        gpu_die("main", "nvshmemx_get_uniqueid failed");
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(me, npes, &id, &attr);
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0)
        gpu_die("main", "nvshmemx_init_attr failed");
    if (npes < 2 && me == 0)
        printf("# gpu_switch: one PE: the home is this GPU itself (no NVLink in the figures)\n");

    size_t max_bytes = 0;
    for (int r = 0; r < NROWS; r++) {
        size_t b = (size_t)rows[r].layers * 2 * rows[r].hidden * rows[r].rank * sizeof(float);
        max_bytes = b > max_bytes ? b : max_bytes;
    }
    /* Two slots (adapters 0 and 1) at every PE, their entries and versions. */
    float *slot[2];
    for (int a = 0; a < 2; a++) {
        slot[a] = (float *)nvshmem_malloc(max_bytes);
        if (!slot[a])
            gpu_die("main", "nvshmem_malloc(%zu) failed: set NVSHMEM_SYMMETRIC_SIZE to 1G or "
                    "more", max_bytes);
    }
    uint64_t *entry = (uint64_t *)nvshmem_malloc(4 * sizeof(uint64_t)); /* [2] words, [2] versions */
    float *dst, *local_src, *host;
    uint64_t *out;
    unsigned long long *bad;
    GPU_CUDA(cudaMalloc(&dst, max_bytes));
    GPU_CUDA(cudaMalloc(&local_src, max_bytes));
    GPU_CUDA(cudaMalloc(&out, 2 * sizeof(uint64_t)));
    GPU_CUDA(cudaMalloc(&bad, sizeof *bad));
    GPU_CUDA(cudaMallocHost(&host, max_bytes));
    memset(host, 0, max_bytes);
    cudaStream_t st;
    GPU_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t t0, t1;
    GPU_CUDA(cudaEventCreate(&t0));
    GPU_CUDA(cudaEventCreate(&t1));
    int home = (me + 1) % npes;
    int fails = 0;
    if (me == 0)
        printf("# gpu_switch: %d PEs, each switching between two adapters at the next PE; each "
               "call alone, CUDA events, the slowest PE, median of %d after %d warm-ups\n", npes,
               REPS, WARM);

    for (int r = 0; r < NROWS; r++) {
        size_t bytes = (size_t)rows[r].layers * 2 * rows[r].hidden * rows[r].rank * sizeof(float);
        size_t n = bytes / sizeof(float);
        /* This PE, as a home: publish its two adapters (versions 1 and 2) for this size. */
        for (int a = 0; a < 2; a++)
            fill_kernel<<<264, 1024, 0, st>>>(slot[a], n, (uint32_t)(a + 1));
        GPU_CUDA(cudaStreamSynchronize(st));
        uint64_t init[4] = {PUBLISHED, PUBLISHED, 1, 2};
        GPU_CUDA(cudaMemcpy(entry, init, sizeof init, cudaMemcpyHostToDevice));
        nvshmem_barrier_all();
        const float4 *peer[2];
        for (int a = 0; a < 2; a++)
            peer[a] = (const float4 *)nvshmem_ptr(slot[a], home);
        if (!peer[0])
            gpu_die("main", "PE %d cannot reach PE %d's memory by loads (nvshmem_ptr is NULL): "
                    "this study needs the GPUs of one node on NVLink", me, home);
        const char *names[] = {"peer", "zero_copy", "peer_ce", "host", "local"};
        double med[2][5];
        for (int m = 0; m < 2; m++) /* m = 0: on the GPU; 1: with the launch */
        for (int how = 0; how < 5; how++) {
            double us[REPS];
            for (int it = 0; it < WARM + REPS; it++) {
                int a = it & 1; /* switch to the other adapter each call */
                GPU_CUDA(cudaStreamSynchronize(st));
                MPI_Barrier(MPI_COMM_WORLD);
                if (m == 0)
                    spin_kernel<<<1, 1, 0, st>>>(SPIN_CYCLES);
                GPU_CUDA(cudaEventRecord(t0, st));
                if (how <= 2)
                    pin_kernel<<<1, 1, 0, st>>>(&entry[a], &entry[2 + a], home, out);
                if (how == 0)
                    copy_kernel<<<COPY_CTAS, COPY_THREADS, 0, st>>>((float4 *)dst, peer[a],
                                                                    n / 4);
                if (how == 2)
                    GPU_CUDA(cudaMemcpyAsync(dst, peer[a], bytes, cudaMemcpyDeviceToDevice, st));
                if (how <= 2)
                    unpin_kernel<<<1, 1, 0, st>>>(&entry[a], home);
                if (how == 3)
                    GPU_CUDA(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, st));
                if (how == 4)
                    GPU_CUDA(cudaMemcpyAsync(dst, local_src, bytes, cudaMemcpyDeviceToDevice, st));
                GPU_CUDA(cudaEventRecord(t1, st));
                GPU_CUDA(cudaEventSynchronize(t1));
                GPU_CUDA(cudaGetLastError());
                float ms;
                GPU_CUDA(cudaEventElapsedTime(&ms, t0, t1));
                if (it >= WARM)
                    us[it - WARM] = ms * 1000.0;
                if (how == 0 || how == 2) { /* the copy is adapter a's, whole and current */
                    uint64_t o[2];
                    GPU_CUDA(cudaMemset(bad, 0, sizeof *bad));
                    check_kernel<<<264, 1024, 0, st>>>(dst, n, (uint32_t)(a + 1), bad);
                    unsigned long long nbad;
                    GPU_CUDA(cudaMemcpyAsync(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost, st));
                    GPU_CUDA(cudaMemcpyAsync(o, out, sizeof o, cudaMemcpyDeviceToHost, st));
                    GPU_CUDA(cudaStreamSynchronize(st));
                    if (nbad || o[0] != 1 || o[1] != (uint64_t)(a + 1)) {
                        if (!fails)
                            printf("FAIL switch_contents: PE %d, %s switch of %zu bytes from PE "
                                   "%d: %llu floats differ from adapter %d's, pin %s, version "
                                   "%llu (expected %d)\n", me, names[how], bytes, home, nbad,
                                   a + 1, o[0] ? "taken" : "refused",
                                   (unsigned long long)o[1], a + 1);
                        fails++;
                    }
                }
            }
            med[m][how] = slowest_median(us);
        }
        /* Every pin was given back: the entries' words read PUBLISHED with no pins. */
        nvshmem_barrier_all();
        uint64_t words[2];
        GPU_CUDA(cudaMemcpy(words, entry, sizeof words, cudaMemcpyDeviceToHost));
        if (words[0] != PUBLISHED || words[1] != PUBLISHED) {
            if (!fails)
                printf("FAIL switch_contents: PE %d's entries read %#llx and %#llx after every "
                       "reader unpinned (expected %#llx: published, no pins)\n", me,
                       (unsigned long long)words[0], (unsigned long long)words[1],
                       (unsigned long long)PUBLISHED);
            fails++;
        }
        if (me == 0)
            printf("# gpu_switch hidden=%d rank=%d layers=%d bytes=%zu peer_us=%.1f "
                   "zero_copy_us=%.1f peer_ce_us=%.1f host_us=%.1f local_us=%.1f "
                   "peer_launch_us=%.1f zero_copy_launch_us=%.1f host_launch_us=%.1f "
                   "peer_GBps=%.1f host_over_peer=%.2f under_100us=%s\n", rows[r].hidden,
                   rows[r].rank, rows[r].layers, bytes, med[0][0], med[0][1], med[0][2],
                   med[0][3], med[0][4], med[1][0], med[1][1], med[1][3],
                   bytes / med[0][0] / 1e3, med[0][3] / med[0][0],
                   med[0][0] < 100.0 ? "yes" : "no");
        fflush(stdout);
    }
    int all_fails;
    MPI_Allreduce(&fails, &all_fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && !all_fails)
        printf("PASS switch_contents\n");
    GPU_CUDA(cudaFreeHost(host));
    GPU_CUDA(cudaFree(dst));
    GPU_CUDA(cudaFree(local_src));
    GPU_CUDA(cudaFree(out));
    GPU_CUDA(cudaFree(bad));
    nvshmem_free(entry);
    nvshmem_free(slot[0]);
    nvshmem_free(slot[1]);
    nvshmem_finalize();
    MPI_Finalize();
    return all_fails ? 1 : 0;
}
