/* ring.cu: the buffer of chapter 2.1 on GPUs. For every ordered pair of PEs a ring of slots in
 * the receiver's symmetric memory, a head word on the receiver (how many messages the sender has
 * delivered) and a tail word on the sender (how many slots the receiver has freed). The sender
 * of message m waits until tail >= m - slots (slot (m - 1) % slots is free again), writes the
 * slot and sets head = m; the receiver waits until head >= m, copies the slot out and sets
 * tail = m. Each word has one writer and only grows: no reset, no lock, as in 2.1.
 *
 * Two ways to write a slot: nvshmemx_putmem_signal_nbi_block (the data, then the head, in that
 * order, over whatever link NVSHMEM has), or, where nvshmem_ptr maps the peer's memory (same
 * node: NVLink or PCIe), the block's own stores followed by a fence and the head: DeepEP's
 * intranode path. */
#define TSHMEM_CHAPTER "3.7"
#include "tmoe.h"

void tm_ring_create(tm_ring_t *r, int slots, size_t slot_bytes)
{
    int n = nvshmem_n_pes();
    if (slots < 1 || slot_bytes < 1 || slot_bytes % 16)
        tm_die(__func__, "slots %d and slot_bytes %zu: need at least one slot and a slot size "
               "that is a positive multiple of 16 bytes", slots, slot_bytes);
    r->slots = slots;
    r->slot_bytes = slot_bytes;
    r->data = (char *)tm_malloc((size_t)n * slots * slot_bytes);
    r->head = (uint64_t *)tm_malloc((size_t)n * sizeof(uint64_t));
    r->tail = (uint64_t *)tm_malloc((size_t)n * sizeof(uint64_t));
    TM_CUDA(cudaMalloc(&r->sent, (size_t)n * sizeof(uint64_t)));
    TM_CUDA(cudaMalloc(&r->got, (size_t)n * sizeof(uint64_t)));
    TM_CUDA(cudaMemset(r->sent, 0, (size_t)n * sizeof(uint64_t)));
    TM_CUDA(cudaMemset(r->got, 0, (size_t)n * sizeof(uint64_t)));
    r->p2p = tm_p2p_allowed();
    TM_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all(); /* nobody writes into a peer's ring before the peer's words are zero */
}

void tm_ring_destroy(tm_ring_t *r)
{
    TM_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all(); /* nobody is still writing into my ring */
    nvshmem_free(r->data);
    nvshmem_free(r->head);
    nvshmem_free(r->tail);
    TM_CUDA(cudaFree(r->sent));
    TM_CUDA(cudaFree(r->got));
}

__device__ void tm_ring_send_block(tm_ring_t r, int pe, const void *src, size_t bytes)
{
    (void)r; (void)pe; (void)src; (void)bytes;
    TSHMEM_TODO("The ring on GPUs", "thread 0: m = sent[pe] + 1, wait until tail[pe] >= m - slots; then write slot (m - 1) % slots of data[me] on pe and set head[me] there to m: through nvshmem_ptr with the block's stores and a fence where it maps, else one nvshmemx_putmem_signal_nbi_block");
    __syncthreads(); /* m is read by every thread above before thread 0 changes it next call */
}

__device__ void tm_ring_recv_block(tm_ring_t r, int pe, void *dst, size_t bytes)
{
    (void)r; (void)pe; (void)dst; (void)bytes;
    TSHMEM_TODO("The ring on GPUs", "thread 0: m = got[pe] + 1, wait until head[pe] >= m; every thread copies slot (m - 1) % slots of data[pe] into dst; then thread 0 frees it: got[pe] = m and tail[me] on pe set to m");
    __syncthreads();
}

/* Provided: block 0 sends, block 1 receives, each message one slot (the last one shorter). */
__global__ void ring_stream_kernel(tm_ring_t r, int to, const char *src, int from, char *dst,
                                   size_t bytes)
{
    for (size_t off = 0; off < bytes; off += r.slot_bytes) {
        size_t len = bytes - off < r.slot_bytes ? bytes - off : r.slot_bytes;
        if (blockIdx.x == 0) tm_ring_send_block(r, to, src + off, len);
        else tm_ring_recv_block(r, from, dst + off, len);
    }
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet(); /* my puts are done: src may change */
}

void tm_ring_stream(tm_ring_t *r, int to, const void *src, int from, void *dst, size_t bytes,
                    cudaStream_t st)
{
    int n = nvshmem_n_pes(), me = nvshmem_my_pe();
    if (to < 0 || to >= n || from < 0 || from >= n || to == me || from == me)
        tm_die(__func__, "PE %d: to %d and from %d must be other PEs, 0 .. %d", me, to, from,
               n - 1);
    if (bytes == 0) return;
    void *args[] = { r, &to, &src, &from, &dst, &bytes };
    tm_launch((const void *)ring_stream_kernel, 2, 512, args, st, __func__);
}
