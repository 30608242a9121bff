/* put.cu: a put that fills NVLink. One block's stores reach ~40 GB/s; the link carries ten
 * times that, so the copy is cut into slices, one per block, and a block per SM runs at once.
 * Where the peer's memory is mapped (nvshmem_ptr: same node, NVLink), each thread moves several
 * 16-byte vectors per round, all loads before all stores, so that enough bytes are in flight
 * to cover the link's latency; elsewhere nvshmemx_putmem_nbi_block does the copy. */
#define TSHMEM_CHAPTER "3.3"
#include "tgpu.h"

#define PUT_THREADS 1024
#define PUT_UNROLL 4              /* 16-byte vectors in flight per thread */
#define PUT_MIN_SLICE (64 * 1024) /* bytes: below this a block costs more than it moves */

int tg_put_blocks(size_t bytes)
{
    static int sms;
    if (!sms) {
        int dev;
        TG_CUDA(cudaGetDevice(&dev));
        TG_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    }
    /* BEGIN SOLUTION (A put across many blocks): one block per PUT_MIN_SLICE bytes, at least 1, at most one per SM (`sms`) */
    size_t want = (bytes + PUT_MIN_SLICE - 1) / PUT_MIN_SLICE;
    return want < 1 ? 1 : want > (size_t)sms ? sms : (int)want;
    /* END SOLUTION */
}

__global__ void put_kernel(char *dest, const char *src, size_t bytes, int pe)
{
    size_t per = ((bytes + gridDim.x - 1) / gridDim.x + 15) & ~(size_t)15;
    size_t lo = per * blockIdx.x < bytes ? per * blockIdx.x : bytes;
    size_t hi = lo + per < bytes ? lo + per : bytes;
    /* BEGIN SOLUTION (A put across many blocks): copy bytes [lo, hi) to `pe`: through nvshmem_ptr with PUT_UNROLL int4 loads, then stores, per thread and round where both ends are 16-byte aligned; else nvshmemx_putmem_nbi_block and nvshmem_quiet */
    char *peer = (char *)nvshmem_ptr(dest, pe);
    if (!peer || ((uintptr_t)(peer + lo) | (uintptr_t)(src + lo)) % 16) {
        if (lo < hi) nvshmemx_putmem_nbi_block(dest + lo, src + lo, hi - lo, pe);
        __syncthreads();
        if (threadIdx.x == 0) nvshmem_quiet();
        return;
    }
    const int4 *s = (const int4 *)(src + lo);
    int4 *d = (int4 *)(peer + lo);
    size_t nvec = (hi - lo) / 16, i = threadIdx.x;
    for (; i + (PUT_UNROLL - 1) * (size_t)blockDim.x < nvec; i += PUT_UNROLL * (size_t)blockDim.x) {
        int4 v[PUT_UNROLL];
#pragma unroll
        for (int u = 0; u < PUT_UNROLL; u++) v[u] = s[i + u * (size_t)blockDim.x];
#pragma unroll
        for (int u = 0; u < PUT_UNROLL; u++) d[i + u * (size_t)blockDim.x] = v[u];
    }
    for (; i < nvec; i += blockDim.x) d[i] = s[i];
    for (size_t j = lo + nvec * 16 + threadIdx.x; j < hi; j += blockDim.x) peer[j] = src[j];
    /* The kernel's end makes its stores visible to whatever the stream runs next. */
    /* END SOLUTION */
}

void tg_put(void *dest, const void *src, size_t bytes, int pe, cudaStream_t st)
{
    if (pe < 0 || pe >= nvshmem_n_pes())
        tg_die(__func__, "PE %d is out of range: there are %d PEs", pe, nvshmem_n_pes());
    if (bytes == 0) return;
    if (!nvshmem_ptr(dest, nvshmem_my_pe()))
        tg_die(__func__, "dest %p on PE %d is not on the symmetric heap; allocate it with "
               "tg_malloc", dest, nvshmem_my_pe());
    put_kernel<<<tg_put_blocks(bytes), PUT_THREADS, 0, st>>>((char *)dest, (const char *)src,
                                                             bytes, pe);
    TG_CUDA(cudaGetLastError());
}
