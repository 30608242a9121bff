/* put.cu: a put that fills NVLink, two ways. The SMs: one block's stores reach ~40 GB/s while the
 * link carries ten times that, so tg_put_sm cuts the copy into slices, one per block, a block
 * per SM. The copy engine: a DMA unit that moves bytes between GPUs with no SM at all;
 * tg_put hands it the copy whenever the peer's memory is mapped (nvshmem_ptr). */
#define TSHMEM_CHAPTER "3.3"
#include "tgpu.h"

#define PUT_THREADS 1024
#define PUT_ALIGN 4096            /* slices start on 4 KiB: whole 128-byte lines on the link */
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
    (void)dest; (void)src; (void)bytes; (void)pe;
    TSHMEM_TODO("A put across many blocks", "block b puts its slice (a multiple of PUT_ALIGN bytes, the last one shorter) with nvshmemx_putmem_nbi_block, then nvshmem_quiet");
}

/* Provided: the checks both puts share. */
static void check_put(const char *func, void *dest, int pe)
{
    if (pe < 0 || pe >= nvshmem_n_pes())
        tg_die(func, "PE %d is out of range: there are %d PEs", pe, nvshmem_n_pes());
    if (!nvshmem_ptr(dest, nvshmem_my_pe()))
        tg_die(func, "dest %p on PE %d is not on the symmetric heap; allocate it with tg_malloc",
               dest, nvshmem_my_pe());
}

void tg_put_sm(void *dest, const void *src, size_t bytes, int pe, cudaStream_t st)
{
    check_put(__func__, dest, pe);
    if (bytes == 0) return;
    put_kernel<<<tg_put_blocks(bytes), PUT_THREADS, 0, st>>>((char *)dest, (const char *)src,
                                                             bytes, pe);
    TG_CUDA(cudaGetLastError());
}

void tg_put(void *dest, const void *src, size_t bytes, int pe, cudaStream_t st)
{
    check_put(__func__, dest, pe);
    if (bytes == 0) return;
    (void)src; (void)st;
    TSHMEM_TODO("The copy engine", "where nvshmem_ptr maps dest on `pe`, one cudaMemcpyAsync to that address on `st` (the copy engine); else tg_put_sm");
}
