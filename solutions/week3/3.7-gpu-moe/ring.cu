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
    /* BEGIN SOLUTION (The ring on GPUs): thread 0: m = sent[pe] + 1, wait until tail[pe] >= m - slots; then write slot (m - 1) % slots of data[me] on pe and set head[me] there to m: through nvshmem_ptr with the block's stores and a fence where it maps, else one nvshmemx_putmem_signal_nbi_block */
    __shared__ uint64_t m;
    int me = nvshmem_my_pe();
    if (threadIdx.x == 0) {
        m = r.sent[pe] + 1;
        if (m > (uint64_t)r.slots) /* the slot's previous message must be out first */
            nvshmem_signal_wait_until(&r.tail[pe], NVSHMEM_CMP_GE, m - r.slots);
    }
    __syncthreads();
    char *slot = r.data + ((size_t)me * r.slots + (size_t)((m - 1) % r.slots)) * r.slot_bytes;
    char *peer = r.p2p ? (char *)nvshmem_ptr(slot, pe) : NULL;
    if (peer) {
        tm_copy_block(peer, src, bytes);
        __syncthreads(); /* every thread's stores are in, */
        if (threadIdx.x == 0) {
            __threadfence_system(); /* and visible on the peer before the head says so */
            nvshmemx_signal_op(&r.head[me], m, NVSHMEM_SIGNAL_SET, pe);
        }
    } else {
        /* The signal lands after the data, whatever the path: the put-with-signal promises it. */
        nvshmemx_putmem_signal_nbi_block(slot, src, bytes, &r.head[me], m, NVSHMEM_SIGNAL_SET,
                                         pe);
    }
    if (threadIdx.x == 0) r.sent[pe] = m;
    /* END SOLUTION */
    __syncthreads(); /* m is read by every thread above before thread 0 changes it next call */
}

__device__ void tm_ring_recv_block(tm_ring_t r, int pe, void *dst, size_t bytes)
{
    /* BEGIN SOLUTION (The ring on GPUs): thread 0: m = got[pe] + 1, wait until head[pe] >= m; every thread copies slot (m - 1) % slots of data[pe] into dst; then thread 0 frees it: got[pe] = m and tail[me] on pe set to m */
    __shared__ uint64_t m;
    int me = nvshmem_my_pe();
    if (threadIdx.x == 0) {
        m = r.got[pe] + 1;
        nvshmem_signal_wait_until(&r.head[pe], NVSHMEM_CMP_GE, m);
    }
    __syncthreads();
    const char *slot = r.data + ((size_t)pe * r.slots + (size_t)((m - 1) % r.slots)) * r.slot_bytes;
    tm_copy_block(dst, slot, bytes);
    __syncthreads(); /* every thread has read its part: the slot may be written again */
    if (threadIdx.x == 0) {
        r.got[pe] = m;
        nvshmemx_signal_op(&r.tail[me], m, NVSHMEM_SIGNAL_SET, pe);
    }
    /* END SOLUTION */
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

/* Provided: several rings side by side, one block pair each ("channels", as DeepEP calls them):
 * the stream is cut into messages of `chunk` bytes (at most a slot), and message m goes through
 * ring m % channels, so channel c moves bytes [c * chunk, (c + 1) * chunk), [(c + channels) *
 * chunk, ...) and so on. Block 2c sends on channel c, block 2c + 1 receives on it. */
int tm_ring_threads = 512;

/* The rings a launch uses, passed by value with only the words the kernel reads: a kernel's
 * parameters past 4 KiB cost several microseconds a launch (64 whole tm_ring_t are 4 KiB), so
 * a stream that starts at most 16 channels takes a set of 16. */
template <int N> struct tm_ring_set {
    char *data[N];
    uint64_t *head[N], *tail[N], *sent[N], *got[N];
    int slots[N], p2p[N];
    size_t slot_bytes;
};
template <int N>
__global__ void ring_streams_kernel(tm_ring_set<N> set, int channels, int to, const char *src,
                                    int from, char *dst, size_t bytes, size_t chunk)
{
    int c = blockIdx.x / 2;
    tm_ring_t r;
    r.data = set.data[c], r.head = set.head[c], r.tail = set.tail[c];
    r.sent = set.sent[c], r.got = set.got[c];
    r.slots = set.slots[c], r.slot_bytes = set.slot_bytes, r.p2p = set.p2p[c];
    for (size_t off = (size_t)c * chunk; off < bytes; off += (size_t)channels * chunk) {
        size_t len = bytes - off < chunk ? bytes - off : chunk;
        if (blockIdx.x % 2 == 0) tm_ring_send_block(r, to, src + off, len);
        else tm_ring_recv_block(r, from, dst + off, len);
    }
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet();
}

/* Launches the kernel over rings[0 .. used - 1] (the channels that carry a message). */
template <int N>
static void ring_streams_launch(const tm_ring_t *rings, int used, int channels, int to,
                                const void *src, int from, void *dst, size_t bytes, size_t chunk,
                                cudaStream_t st)
{
    tm_ring_set<N> set = {};
    for (int c = 0; c < used; c++) {
        set.data[c] = rings[c].data, set.head[c] = rings[c].head, set.tail[c] = rings[c].tail;
        set.sent[c] = rings[c].sent, set.got[c] = rings[c].got;
        set.slots[c] = rings[c].slots, set.p2p[c] = rings[c].p2p;
    }
    set.slot_bytes = rings[0].slot_bytes;
    void *args[] = { &set, &channels, &to, &src, &from, &dst, &bytes, &chunk };
    tm_launch((const void *)ring_streams_kernel<N>, 2 * used, tm_ring_threads, args, st,
              "tm_ring_stream_channels");
}

void tm_ring_stream_channels(tm_ring_t *rings, int channels, int to, const void *src, int from,
                             void *dst, size_t bytes, cudaStream_t st)
{
    int n = nvshmem_n_pes(), me = nvshmem_my_pe();
    if (channels < 1 || channels > TM_MAX_CHANNELS)
        tm_die(__func__, "PE %d: channels = %d: use 1 to %d rings", me, channels, TM_MAX_CHANNELS);
    if (to < 0 || to >= n || from < 0 || from >= n || to == me || from == me)
        tm_die(__func__, "PE %d: to %d and from %d must be other PEs, 0 .. %d", me, to, from,
               n - 1);
    for (int c = 0; c < channels; c++)
        if (rings[c].slot_bytes != rings[0].slot_bytes)
            tm_die(__func__, "PE %d: ring %d has slots of %zu bytes, ring 0 of %zu: the channels "
                   "of one stream need slots of one size", me, c, rings[c].slot_bytes,
                   rings[0].slot_bytes);
    if (bytes == 0) return;
    /* Spread the stream over every channel: one block pair moved about 17 GB/s on two H200s, so
     * a 256 KiB stream in one slot-sized message would be one block's work. One message per
     * channel, or two once a message would reach 128 KiB (the next is on its way while the
     * first is copied out); at least 8 KiB (smaller ones cost more in signals than they save),
     * at most a slot. On two H200s this beat four per channel (0.7x at 1 MiB) and one per
     * channel (0.9x at 16 MiB). A short stream has fewer messages than channels, and only the
     * blocks of the channels that carry one start. */
    size_t chunk = (bytes + channels - 1) / channels;
    if (chunk >= (128 << 10)) chunk = (chunk + 1) / 2;
    chunk = (chunk + 1023) & ~(size_t)1023;
    chunk = chunk < 8192 ? 8192 : chunk;
    chunk = chunk > rings[0].slot_bytes ? rings[0].slot_bytes : chunk;
    size_t msgs = (bytes + chunk - 1) / chunk;
    int used = msgs < (size_t)channels ? (int)msgs : channels;
    if (used <= 16)
        ring_streams_launch<16>(rings, used, channels, to, src, from, dst, bytes, chunk, st);
    else
        ring_streams_launch<TM_MAX_CHANNELS>(rings, used, channels, to, src, from, dst, bytes,
                                             chunk, st);
}
