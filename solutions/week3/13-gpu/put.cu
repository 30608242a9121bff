/* put.cu: a put that fills NVLink. One block's stores reach ~40 GB/s; the link carries ten
 * times that, so the copy is cut into slices, one per block, and many blocks run at once. */
#define TSHMEM_CHAPTER "3.3"
#include "tgpu.h"

#define PUT_THREADS 1024
#define PUT_MAX_BLOCKS 128
#define PUT_MIN_SLICE (64 * 1024) /* bytes: below this a block costs more than it moves */

int tg_put_blocks(size_t bytes)
{
    /* BEGIN SOLUTION (A put across many blocks): one block per PUT_MIN_SLICE bytes, at least 1, at most PUT_MAX_BLOCKS */
    size_t want = (bytes + PUT_MIN_SLICE - 1) / PUT_MIN_SLICE;
    return want < 1 ? 1 : want > PUT_MAX_BLOCKS ? PUT_MAX_BLOCKS : (int)want;
    /* END SOLUTION */
}

__global__ void put_kernel(char *dest, const char *src, size_t bytes, int pe)
{
    /* BEGIN SOLUTION (A put across many blocks): block b puts its 16-byte-aligned slice with nvshmemx_putmem_nbi_block, then makes it visible on `pe` (nvshmem_quiet) */
    size_t per = ((bytes + gridDim.x - 1) / gridDim.x + 15) & ~(size_t)15;
    size_t lo = per * blockIdx.x, hi = lo + per < bytes ? lo + per : bytes;
    if (lo < hi) nvshmemx_putmem_nbi_block(dest + lo, src + lo, hi - lo, pe);
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet();
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
