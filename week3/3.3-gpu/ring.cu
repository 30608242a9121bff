/* ring.cu: the ring of chapter 1.5 in kernels. A shift (every PE hands one int to its right
 * neighbour) and a pipelined ring broadcast (each PE forwards what it received, chunk by chunk,
 * as soon as it arrived), each one kernel launched on every PE at once. */
#define TSHMEM_CHAPTER "3.3"
#include "tgpu.h"

/* Provided: the flags live on the symmetric heap, so every PE has them at the same address. */
#define SHIFT_FLAG 0
#define BCAST_FLAG(b, c) (1 + (size_t)(b) * TG_RING_CHUNKS + (c))
#define ACK_FLAG(b) (1 + (size_t)TG_RING_CTAS * TG_RING_CHUNKS + (b))
#define RING_FLAGS (1 + (size_t)TG_RING_CTAS * TG_RING_CHUNKS + TG_RING_CTAS)

void tg_ring_create(tg_ring_t *r)
{
    r->sig = (uint64_t *)tg_malloc(RING_FLAGS * sizeof(uint64_t));
    TG_CUDA(cudaMemset(r->sig, 0, RING_FLAGS * sizeof(uint64_t)));
    r->seq = 0;
    nvshmem_barrier_all(); /* nobody signals a peer before the peer's flags are zero */
}

void tg_ring_destroy(tg_ring_t *r)
{
    nvshmem_free(r->sig);
    r->sig = NULL;
}

/* Provided: launches `kernel` on every PE at once (all its blocks resident together, which a
 * kernel that waits for another PE needs) and stops with a sentence if that is impossible. */
static void launch(const void *kernel, int blocks, int threads, void **args, cudaStream_t st,
                   const char *who)
{
    int rc = nvshmemx_collective_launch(kernel, dim3(blocks), dim3(threads), args, 0, st);
    if (rc != 0)
        tg_die(who, "nvshmemx_collective_launch of %d blocks of %d threads failed (%d)", blocks,
               threads, rc);
}

/* ---- Ring shift --------------------------------------------------------------------------------- */
__global__ void ring_shift_kernel(int *dst, int value, uint64_t *sig, uint64_t seq)
{
    (void)dst; (void)value; (void)sig; (void)seq;
    TSHMEM_TODO("Ring shift in a kernel", "put `value` into `dst` on the right neighbour with nvshmem_int_p, order it before the flag, set the neighbour's flag to `seq`, then wait for your own");
}

void tg_ring_shift(tg_ring_t *r, int *dst, int value, cudaStream_t st)
{
    uint64_t seq = ++r->seq;
    void *args[] = { &dst, &value, &r->sig, &seq };
    launch((const void *)ring_shift_kernel, 1, 1, args, st, __func__);
}

/* ---- Ring broadcast ----------------------------------------------------------------------------- */
/* Provided: block b of `blocks` owns bytes [*lo, *hi) of `total`, cut at 16-byte boundaries. */
__device__ inline void block_slice(size_t total, int b, int blocks, size_t *lo, size_t *hi)
{
    size_t per = ((total + blocks - 1) / blocks + 15) & ~(size_t)15;
    *lo = per * b < total ? per * b : total;
    *hi = *lo + per < total ? *lo + per : total;
}

__global__ void ring_bcast_kernel(char *buf, size_t bytes, int root, uint64_t *sig, uint64_t seq)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), b = blockIdx.x;
    size_t lo, hi;
    block_slice(bytes, b, gridDim.x, &lo, &hi);
    if (n == 1 || hi == lo) return;
    (void)buf; (void)root; (void)sig; (void)seq;
    TSHMEM_TODO("Ring broadcast in a kernel", "for each chunk of this block's slice: unless you are the root, wait until its flag reaches `seq`; unless `next` is the root, forward it with nvshmemx_putmem_signal_nbi_block; the last PE acks to the root, which waits for that ack");
}

void tg_ring_bcast(tg_ring_t *r, void *buf, size_t bytes, int root, cudaStream_t st)
{
    if (root < 0 || root >= nvshmem_n_pes())
        tg_die(__func__, "root %d is out of range on PE %d: there are %d PEs", root,
               nvshmem_my_pe(), nvshmem_n_pes());
    uint64_t seq = ++r->seq;
    void *args[] = { &buf, &bytes, &root, &r->sig, &seq };
    launch((const void *)ring_bcast_kernel, TG_RING_CTAS, 512, args, st, __func__);
}
