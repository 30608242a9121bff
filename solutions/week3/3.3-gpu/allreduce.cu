/* allreduce.cu: the ring allreduce of chapter 2.2 on GPUs, and one shot for small buffers (after
 * the ring). The ring cuts the buffer into n_pes segments; a reduce-scatter (n_pes - 1 steps)
 * leaves segment p fully summed on PE p, an allgather (n_pes - 1 steps) hands every summed
 * segment around the ring. Every block owns the same slice of each segment and walks it chunk
 * by chunk, so while one chunk crosses NVLink the next is being added: many blocks and many
 * chunks keep both directions of the link busy. */
#define TSHMEM_CHAPTER "3.3"
#include "tgpu.h"


/* Provided: the flag of (phase, step, block, chunk); phase 0 is the reduce-scatter, 1 the allgather. */
__device__ inline uint64_t *flag(uint64_t *flags, int n, int phase, int step, int b, int c)
{
    return &flags[(((size_t)phase * (n - 1) + step) * TG_AR_MAX_CTAS + b) * TG_AR_CHUNKS + c];
}

/* Provided: dst[i] += src[i] for i < len, by the whole block; 16-byte loads where it can. */
__device__ inline void add_into(float *dst, const float *src, size_t len)
{
    size_t vec = len / 4;
    float4 *d4 = (float4 *)dst;
    const float4 *s4 = (const float4 *)src;
    for (size_t i = threadIdx.x; i < vec; i += blockDim.x) {
        float4 a = d4[i], s = s4[i];
        a.x += s.x; a.y += s.y; a.z += s.z; a.w += s.w;
        d4[i] = a;
    }
    for (size_t i = vec * 4 + threadIdx.x; i < len; i += blockDim.x) dst[i] += src[i];
}

/* Provided: puts len floats and sets the flag to seq on `pe`; a zero-length chunk only signals. */
__device__ inline void put_chunk(float *dst, const float *src, size_t len, uint64_t *sig,
                                 uint64_t seq, int pe)
{
    __syncthreads(); /* every thread's part of src is written */
    if (len)
        nvshmemx_putmem_signal_nbi_block(dst, src, len * sizeof(float), sig, seq,
                                         NVSHMEM_SIGNAL_SET, pe);
    else if (threadIdx.x == 0)
        nvshmemx_signal_op(sig, seq, NVSHMEM_SIGNAL_SET, pe);
}

/* Provided: thread 0 waits for the flag, then the whole block may read what it announced. */
__device__ inline void wait_flag(uint64_t *sig, uint64_t seq)
{
    if (threadIdx.x == 0) nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, seq);
    __syncthreads();
}

__global__ void ring_allreduce_kernel(float *data, float *scratch, uint64_t *flags, size_t count,
                                      size_t seg, size_t per, size_t chunk, uint64_t seq)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    /* Segment t's part of chunk c of this block: [start, start + len) of data, clipped to count. */
#define CHUNK_AT(t, c, start, len)                                                             \
    do {                                                                                      \
        size_t s0_ = (size_t)(t) * seg, e0_ = s0_ + seg < count ? s0_ + seg : count;           \
        size_t a_ = s0_ + (size_t)b * per + (size_t)(c) * chunk;                               \
        size_t z_ = a_ + chunk, lim_ = s0_ + (size_t)(b + 1) * per;                            \
        z_ = z_ < lim_ ? z_ : lim_;                                                           \
        z_ = z_ < e0_ ? z_ : e0_;                                                             \
        start = a_;                                                                           \
        len = a_ < z_ ? z_ - a_ : 0;                                                          \
    } while (0)
    /* BEGIN SOLUTION (Ring allreduce on the GPU): for each chunk: reduce-scatter steps (put your partial segment into the right neighbour's scratch slot, wait for yours, add it in), then allgather steps (put the summed segment into the right neighbour's data, forward what arrives); finally wait for the last allgather flag of every chunk */
    int b = blockIdx.x, right = (me + 1) % n, nch = (int)((per + chunk - 1) / chunk);
    for (int c = 0; c < nch; c++) {
        size_t at, len;
        /* Reduce-scatter: at step s send segment (me - s - 1) into slot s of the neighbour's
         * scratch; from step 1 on, what arrived in slot s - 1 is added in first. Step 0 waits
         * for nothing, so it runs one chunk ahead: chunk c + 1 crosses NVLink while this block
         * waits for chunk c. */
        int t = (me - 1 + n) % n;
        for (int cc = c == 0 ? 0 : c + 1; cc <= c + 1 && cc < nch; cc++) {
            CHUNK_AT(t, cc, at, len);
            put_chunk(scratch + (at - (size_t)t * seg), data + at, len, flag(flags, n, 0, 0, b, cc),
                      seq, right);
        }
        for (int s = 1; s < n - 1; s++) {
            t = (me - s - 1 + n) % n;
            CHUNK_AT(t, c, at, len);
            size_t slot = (size_t)s * seg + (at - (size_t)t * seg);
            wait_flag(flag(flags, n, 0, s - 1, b, c), seq);
            add_into(data + at, scratch + slot - seg, len);
            put_chunk(scratch + slot, data + at, len, flag(flags, n, 0, s, b, c), seq, right);
        }
        /* Last arrival: my own segment, which is then complete. */
        CHUNK_AT(me, c, at, len);
        wait_flag(flag(flags, n, 0, n - 2, b, c), seq);
        add_into(data + at, scratch + (size_t)(n - 2) * seg + (at - (size_t)me * seg), len);
        /* Allgather: at step s send segment (me - s), straight into the neighbour's data. */
        for (int s = 0; s < n - 1; s++) {
            t = (me - s + n) % n;
            CHUNK_AT(t, c, at, len);
            if (s > 0) wait_flag(flag(flags, n, 1, s - 1, b, c), seq);
            put_chunk(data + at, data + at, len, flag(flags, n, 1, s, b, c), seq, right);
        }
    }
    for (int c = 0; c < nch; c++) wait_flag(flag(flags, n, 1, n - 2, b, c), seq);
    if (threadIdx.x == 0) nvshmem_quiet();
    /* END SOLUTION */
#undef CHUNK_AT
}

/* Provided: the flag by which PE p's slice `b` of an odd (par 1) or even (par 0) call arrives. */
__device__ inline uint64_t *slot_flag(uint64_t *flags, int n, int par, int p, int b)
{
    return &flags[((size_t)par * n + p) * TG_AR_MAX_CTAS + b];
}

/* One shot: block b owns floats [b * per, b * per + len) of data; PE p's copy of that slice lands
 * at slots + ((par * n + p) * area + at) on every other PE. Below a few hundred KiB a call is all
 * latency: the ring's 2 (n - 1) steps each wait for a signal, this path waits once. Every PE
 * sums the n copies in the same order (PE 0 first), so every PE gets the same bits. */
__global__ void oneshot_allreduce_kernel(float *data, float *slots, uint64_t *flags, size_t count,
                                         size_t per, uint64_t seq)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), b = blockIdx.x, par = (int)(seq & 1);
    const size_t area = TG_AR_ONESHOT_MAX / sizeof(float); /* floats of one PE's slot */
    size_t at = (size_t)b * per, len = count - at < per ? count - at : per;
    /* BEGIN SOLUTION (One-shot allreduce for small buffers): put this block's slice into slot `me` of every other PE's landing area (the par half), all of the puts first; then one fence and every peer's flag set to seq, and a quiet (data is rewritten below); wait for every other PE's flag, then sum the n slices in PE order 0 .. n - 1 into data */
    float *mine = slots + ((size_t)par * n + me) * area + at; /* where my slice lands on a peer */
    for (int i = 1; i < n; i++) /* every peer's copy in flight at once */
        nvshmemx_putmem_nbi_block(mine, data + at, len * sizeof(float), (me + i) % n);
    __syncthreads(); /* every thread's part of every put is issued */
    if (threadIdx.x == 0) {
        __threadfence_system(); /* the block's stores over NVLink are visible, */
        nvshmem_fence();        /* and any other transport's puts land, before the flags */
        for (int i = 1; i < n; i++)
            nvshmemx_signal_op(slot_flag(flags, n, par, me, b), seq, NVSHMEM_SIGNAL_SET, (me + i) % n);
        nvshmem_quiet(); /* the puts have read data: it may be overwritten */
    }
    for (int p = 0; p < n; p++)
        if (p != me) wait_flag(slot_flag(flags, n, par, p, b), seq);
    for (size_t i = threadIdx.x; i < len; i += blockDim.x) {
        float sum = 0;
        for (int p = 0; p < n; p++)
            sum += p == me ? data[at + i] : __ldcg(slots + ((size_t)par * n + p) * area + at + i);
        data[at + i] = sum;
    }
    /* END SOLUTION */
}

/* Provided: a plain launch where every block fits on the GPU at once (no block of either kernel
 * waits for another block of its own PE: block b waits only for block b of other PEs, which
 * signals before it waits), else nvshmemx_collective_launch, which says so when it cannot. A
 * cooperative launch costs the host more per call, which a PyTorch step pays per bucket. */
static void launch(const void *kernel, int blocks, int threads, void **args, cudaStream_t st)
{
    static int sms;
    int per_sm = 0;
    if (!sms) {
        int dev;
        TG_CUDA(cudaGetDevice(&dev));
        TG_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    }
    TG_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
    if (blocks <= per_sm * sms) {
        TG_CUDA(cudaLaunchKernel(kernel, dim3(blocks), dim3(threads), args, 0, st));
        return;
    }
    int rc = nvshmemx_collective_launch(kernel, dim3(blocks), dim3(threads), args, 0, st);
    if (rc != 0)
        tg_die("tg_allreduce", "nvshmemx_collective_launch of %d blocks of %d threads failed "
               "(%d): the grid must fit on the GPU all at once", blocks, threads, rc);
}

void tg_allreduce_create(tg_allreduce_t *ar, size_t max_count, int ctas, int threads)
{
    int n = nvshmem_n_pes();
    if (ctas < 1 || ctas > TG_AR_MAX_CTAS)
        tg_die(__func__, "ctas = %d on PE %d: use 1 to %d blocks", ctas, nvshmem_my_pe(),
               TG_AR_MAX_CTAS);
    size_t seg = ((max_count + n - 1) / n + 3) & ~(size_t)3;
    size_t nflags = n > 1 ? 2 * (size_t)(n - 1) * TG_AR_MAX_CTAS * TG_AR_CHUNKS : 1;
    ar->scratch = n > 1 ? (float *)tg_malloc((size_t)(n - 1) * seg * sizeof(float)) : NULL;
    ar->flags = (uint64_t *)tg_malloc(nflags * sizeof(uint64_t));
    TG_CUDA(cudaMemset(ar->flags, 0, nflags * sizeof(uint64_t)));
    ar->cap = max_count;
    ar->seq = 0;
    ar->ctas = ctas;
    ar->threads = threads;
    ar->min_chunk = 16384;
    size_t nslot = n > 1 ? 2 * (size_t)n : 0;
    ar->slots = nslot ? (float *)tg_malloc(nslot * TG_AR_ONESHOT_MAX) : NULL;
    ar->slot_flags = (uint64_t *)tg_malloc((nslot ? nslot : 1) * TG_AR_MAX_CTAS * sizeof(uint64_t));
    TG_CUDA(cudaMemset(ar->slot_flags, 0, (nslot ? nslot : 1) * TG_AR_MAX_CTAS * sizeof(uint64_t)));
    ar->oneshot_max = TG_AR_ONESHOT_MAX;
    nvshmem_barrier_all(); /* every PE's flags are zero before anyone signals */
}

void tg_allreduce_destroy(tg_allreduce_t *ar)
{
    if (ar->scratch) nvshmem_free(ar->scratch);
    if (ar->slots) nvshmem_free(ar->slots);
    nvshmem_free(ar->flags);
    nvshmem_free(ar->slot_flags);
    ar->scratch = ar->slots = NULL;
    ar->flags = ar->slot_flags = NULL;
}

void tg_allreduce(tg_allreduce_t *ar, float *data, size_t count, cudaStream_t st)
{
    int n = nvshmem_n_pes();
    if (count > ar->cap)
        tg_die(__func__, "count %zu on PE %d is more than the %zu floats this allreduce was "
               "created for; create it with a larger max_count", count, nvshmem_my_pe(), ar->cap);
    if (count == 0 || n == 1) return;
    if (!nvshmem_ptr(data, nvshmem_my_pe()))
        tg_die(__func__, "data %p on PE %d is not on the symmetric heap; allocate it with "
               "tg_malloc", (void *)data, nvshmem_my_pe());
    if (ar->oneshot_max > TG_AR_ONESHOT_MAX)
        tg_die(__func__, "oneshot_max = %zu bytes on PE %d: the landing areas hold %d bytes; "
               "set it to at most that (0 turns the one-shot path off)", ar->oneshot_max,
               nvshmem_my_pe(), TG_AR_ONESHOT_MAX);
    if (count * sizeof(float) <= ar->oneshot_max) {
        /* Slices of at least TG_AR_ONESHOT_SLICE floats, at most ctas of them. */
        size_t per = (count + ar->ctas - 1) / ar->ctas;
        per = per < TG_AR_ONESHOT_SLICE ? TG_AR_ONESHOT_SLICE : (per + 3) & ~(size_t)3;
        int blocks = (int)((count + per - 1) / per);
        uint64_t seq = ++ar->seq;
        void *args[] = { &data, &ar->slots, &ar->slot_flags, &count, &per, &seq };
        launch((const void *)oneshot_allreduce_kernel, blocks, ar->threads, args, st);
        return;
    }
    /* Segments and slices start at multiples of 4 floats, so float4 loads stay aligned. */
    size_t seg = ((count + n - 1) / n + 3) & ~(size_t)3;
    size_t min_chunk = ar->min_chunk < 4 ? 4 : (ar->min_chunk + 3) & ~(size_t)3; /* float4s */
    size_t want = (seg + min_chunk - 1) / min_chunk;
    int blocks = want < (size_t)ar->ctas ? (int)want : ar->ctas;
    size_t per = ((seg + blocks - 1) / blocks + 3) & ~(size_t)3;
    size_t chunk = ((per + TG_AR_CHUNKS - 1) / TG_AR_CHUNKS + 3) & ~(size_t)3;
    chunk = chunk < min_chunk ? min_chunk : chunk;
    uint64_t seq = ++ar->seq;
    void *args[] = { &data, &ar->scratch, &ar->flags, &count, &seg, &per, &chunk, &seq };
    launch((const void *)ring_allreduce_kernel, blocks, ar->threads, args, st);
}
