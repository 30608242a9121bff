/* put.cu: a put that fills NVLink. One block's stores reach ~40 GB/s; the link carries ten
 * times that, so the copy is cut into slices, one per block, and many blocks run at once. */
#define TSHMEM_CHAPTER "3.3"
#include "tgpu.h"

#define PUT_THREADS 1024
#define PUT_MAX_BLOCKS 128
#define PUT_MIN_SLICE (64 * 1024) /* bytes: below this a block costs more than it moves */

int tg_put_blocks(size_t bytes)
{
    (void)bytes;
    TSHMEM_TODO("A put across many blocks", "one block per PUT_MIN_SLICE bytes, at least 1, at most PUT_MAX_BLOCKS");
}

__global__ void put_kernel(char *dest, const char *src, size_t bytes, int pe)
{
    (void)dest; (void)src; (void)bytes; (void)pe;
    TSHMEM_TODO("A put across many blocks", "block b puts its 16-byte-aligned slice with nvshmemx_putmem_nbi_block, then makes it visible on `pe` (nvshmem_quiet)");
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
