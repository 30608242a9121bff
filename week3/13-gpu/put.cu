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
    (void)bytes;
    TSHMEM_TODO("A put across many blocks", "one block per PUT_MIN_SLICE bytes, at least 1, at most one per SM (`sms`)");
}

__global__ void put_kernel(char *dest, const char *src, size_t bytes, int pe)
{
    size_t per = ((bytes + gridDim.x - 1) / gridDim.x + 15) & ~(size_t)15;
    size_t lo = per * blockIdx.x < bytes ? per * blockIdx.x : bytes;
    size_t hi = lo + per < bytes ? lo + per : bytes;
    (void)dest; (void)src; (void)pe;
    TSHMEM_TODO("A put across many blocks", "copy bytes [lo, hi) to `pe`: through nvshmem_ptr with PUT_UNROLL int4 loads, then stores, per thread and round where both ends are 16-byte aligned; else nvshmemx_putmem_nbi_block and nvshmem_quiet");
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
