/* combine.cu: tm_combine, chapter 3.1's combine as kernels: the inverse of the last dispatch.
 *   1. send  (combine_send_kernel, a warp per row) row r of expert_out goes home, to
 *            back[token * k + slot] of PE src_pe[r]; the signals add to back_in[me] there: one
 *            counter per source PE (through nvshmem_ptr, once per block at its end; through
 *            puts, one per row).
 *   2. wait  (wait_back_kernel, one block) until back_in[j] reaches its running total for
 *            every PE j (dispatch's counts kernel added what each j owes me).
 *   3. sum   (weighted_sum_kernel) y[t] = sum over s = 0 .. k - 1 of weight(t, s) x back[t, s],
 *            in slot order, each product and each sum rounded once: chapter 3.1's bits.
 * May a row go into the home PE's back buffer now? The home PE reads it only in its own combine,
 * and it granted layer L (count_sig = L) after its stream finished combine L - 1. */
#define TSHMEM_CHAPTER "3.7"
#include "tmoe.h"

__global__ void combine_send_kernel(tm_moe_t m, const float *out, int n_rows)
{
    __shared__ unsigned pending[TM_MAX_PES]; /* rows stored through nvshmem_ptr, per home PE */
    int lane = threadIdx.x % 32, warps = gridDim.x * blockDim.x / 32;
    for (int p = threadIdx.x; p < m.n; p += blockDim.x) pending[p] = 0;
    __syncthreads();
    for (int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32; r < n_rows; r += warps) {
        int home = m.src_pe[r];
        if (home < 0) continue; /* padding of the low-latency buffer: the same for the warp */
        size_t slot = (size_t)m.src_token[r] * m.k + m.src_slot[r];
        float *to = m.back + slot * m.H;
        const float *from = out + (size_t)r * m.H;
        TSHMEM_TODO("Sending the outputs home", "where nvshmem_ptr maps `to` on home (and m.p2p): the warp stores the row there and lane 0 adds 1 to pending[home]; else one nvshmemx_putmem_signal_nbi_warp adding 1 to back_in[me] on home");
    }
    TSHMEM_TODO("Sending the outputs home", "every thread fences its stores, the block syncs, then thread p (each p < n) with pending[p] > 0 adds it to back_in[me] on PE p");
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet(); /* expert_out may change once the stream is past this */
}

__global__ void wait_back_kernel(tm_moe_t m)
{
    (void)m;
    TSHMEM_TODO("The weighted sum", "thread j < n waits until back_in[j] >= back_expected[j]");
}

/* One block per token (grid-stride), a thread per 4 floats of the row (H is a multiple of 4).
 * A thread loads the rows of up to 4 slots before it adds any of them: the sum must go in slot
 * order, but the loads need not wait for each other. */
__global__ void weighted_sum_kernel(tm_moe_t m, float *y, int T)
{
    int aligned = ((uintptr_t)y & 15) == 0;
    for (int t = blockIdx.x; t < T; t += gridDim.x)
        for (int h4 = threadIdx.x; h4 < m.H / 4; h4 += blockDim.x) {
            float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            TSHMEM_TODO("The weighted sum", "for each of the 4 floats: acc = 0; for s = 0 .. k - 1 with idx[t * k + s] >= 0: acc = acc + weights[t * k + s] * back[(t * k + s) * H + 4 * h4 + c], with __fmul_rn and __fadd_rn (no fused multiply-add: 3.1's CPU rounds the product, then the sum)");
            float *to = y + (size_t)t * m.H + 4 * (size_t)h4;
            if (aligned) *(float4 *)to = acc;
            else to[0] = acc.x, to[1] = acc.y, to[2] = acc.z, to[3] = acc.w;
        }
}

int tm_combine_ctas = 0;

int tm_combine(tm_moe_t *m, const float *expert_out, float *y, cudaStream_t st)
{
    const char *func = __func__;
    if (!m->dispatched)
        tm_die(func, "there is no dispatch to undo on PE %d: call tm_dispatch first (each combine "
               "undoes the dispatch just before it, once)", m->me);
    int n_rows = m->info[0];
    if (n_rows > 0 && !expert_out)
        tm_die(func, "expert_out is NULL, but PE %d received %d rows to send back", m->me, n_rows);
    if (m->T > 0 && !y)
        tm_die(func, "y is NULL, but PE %d dispatched %d tokens", m->me, m->T);
    m->dispatched = 0;
    tm_moe_t dm = *m;
    if (n_rows) {
        int ctas = tm_combine_ctas > 0 ? tm_combine_ctas : tm_grid((size_t)n_rows);
        combine_send_kernel<<<ctas, 512, 0, st>>>(dm, expert_out, n_rows);
        TM_CUDA(cudaGetLastError());
    }
    void *args[] = { &dm };
    tm_launch((const void *)wait_back_kernel, 1, 64, args, st, func);
    if (m->T) {
        weighted_sum_kernel<<<tm_grid(16 * (size_t)m->T), 512, 0, st>>>(dm, y, m->T);
        TM_CUDA(cudaGetLastError());
    }
    return 0;
}
