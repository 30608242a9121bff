/* allgather.cu: every PE brings `part` bytes and every PE gets all of them, PE p's at
 * out + p * part. Two paths, chosen by the size of the call, as chapter 3.3's allreduce chooses:
 *
 * - one shot (small outputs): every block of one kernel writes its slice of my part straight
 *   into every peer's landing area (stores through nvshmem_ptr where it maps, else a
 *   put-with-signal), sets one flag on each peer, then waits for every peer's flag of its slice
 *   and copies their slices out. One launch and one wait per call, whatever the number of PEs.
 * - the ring (large outputs): your ring of slots (ring.cu) over several channels forwards each
 *   piece to the right neighbour, n_pes - 1 calls of tm_ring_stream_channels.
 *
 * Below a few MiB a call is all latency (a launch, a round trip over NVLink): the ring pays one
 * per step, n_pes - 1 of them, one shot pays one. Above, both are bound by the SMs' copies; the
 * landing areas then cost memory (2 x n_pes x part on every PE) for nothing. */
#define TSHMEM_CHAPTER "3.7"
#include "tmoe.h"

/* Provided: PE p's flag of slice b for calls of parity par (odd or even), on whichever PE. */
__device__ inline uint64_t *ag_flag(uint64_t *flags, int n, int par, int p, int b)
{
    return &flags[((size_t)par * n + p) * TM_AG_CTAS + b];
}

/* Block b owns bytes [b * per, b * per + len) of every part. PE p's slice lands at
 * land + (par * n + p) * area + b * per on every other PE. Two landing areas, used by odd and
 * even calls: a PE can be at most one call ahead of any other (call c + 1 waits for everyone's
 * flags of c + 1, set only once they have finished call c), so the area of call c + 2 is free. */
__global__ void oneshot_allgather_kernel(char *land, uint64_t *flags, size_t area, int p2p,
                                         const char *in, char *out, size_t part, size_t per,
                                         uint64_t seq)
{
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), b = blockIdx.x, par = (int)(seq & 1);
    size_t at = (size_t)b * per, len = part - at < per ? part - at : per;
    (void)land; (void)flags; (void)area; (void)p2p; (void)in; (void)out;
    TSHMEM_TODO("One-shot allgather for small outputs", "write this block's slice of in into slot `me` of every other PE's landing area (the par half): through nvshmem_ptr with the block's stores, then one fence and each peer's flag set to seq, or a put-with-signal where it does not map; copy the slice into out yourself; then for every other PE wait for its flag of this slice and copy its slice from your landing area into out");
}

void tm_allgather_create(tm_allgather_t *ag, size_t max_part, int channels)
{
    int n = nvshmem_n_pes(), me = nvshmem_my_pe();
    if (channels < 1 || channels > TM_MAX_CHANNELS)
        tm_die(__func__, "PE %d: channels = %d: use 1 to %d rings", me, channels, TM_MAX_CHANNELS);
    ag->cap = max_part;
    ag->channels = channels;
    for (int c = 0; c < channels; c++) tm_ring_create(&ag->rings[c], 16, 512 << 10);
    size_t a = max_part < TM_AG_AREA_MAX ? max_part : TM_AG_AREA_MAX;
    ag->area = a < 16 ? 16 : (a + 15) & ~(size_t)15;
    ag->land = (char *)tm_malloc(2 * (size_t)n * ag->area);
    ag->flags = (uint64_t *)tm_malloc(2 * (size_t)n * TM_AG_CTAS * sizeof(uint64_t));
    ag->oneshot_max = TM_AG_ONESHOT_MAX;
    ag->seq = 0;
    ag->p2p = tm_p2p_allowed();
    TM_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all(); /* every PE's flags are zero before anyone signals */
}

void tm_allgather_destroy(tm_allgather_t *ag)
{
    for (int c = 0; c < ag->channels; c++) tm_ring_destroy(&ag->rings[c]);
    TM_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all(); /* nobody still writes into my landing area */
    nvshmem_free(ag->land);
    nvshmem_free(ag->flags);
    ag->land = NULL, ag->flags = NULL;
}

/* Provided: the selector, then either path. */
void tm_allgather(tm_allgather_t *ag, const void *in, void *out, size_t part, cudaStream_t st)
{
    int n = nvshmem_n_pes(), me = nvshmem_my_pe();
    if (part > ag->cap)
        tm_die(__func__, "PE %d: part = %zu bytes, more than the %zu this allgather was created "
               "for; create it with a larger max_part", me, part, ag->cap);
    if (part == 0) return;
    char *o = (char *)out;
    const char *i = (const char *)in;
    if (i < o + (size_t)n * part && o < i + part && i != o + (size_t)me * part)
        tm_die(__func__, "PE %d: in overlaps out other than at out + %d * part, where this PE's "
               "part goes: pass separate buffers, or in = out + my_pe * part", me, me);
    if (n == 1) {
        if (i != o) TM_CUDA(cudaMemcpyAsync(o, i, part, cudaMemcpyDeviceToDevice, st));
        return;
    }
    if ((size_t)n * part <= ag->oneshot_max && part <= ag->area) {
        /* Slices of at least TM_AG_SLICE bytes, at most TM_AG_CTAS of them. No block waits for
         * another block of this PE (block b only for block b of the others, which signals
         * before it waits): a plain launch will do, and costs less than a collective one. */
        size_t per = (part + TM_AG_CTAS - 1) / TM_AG_CTAS;
        per = per < TM_AG_SLICE ? TM_AG_SLICE : (per + 15) & ~(size_t)15;
        int blocks = (int)((part + per - 1) / per);
        uint64_t seq = ++ag->seq;
        oneshot_allgather_kernel<<<blocks, 512, 0, st>>>(ag->land, ag->flags, ag->area, ag->p2p,
                                                         i, o, part, per, seq);
        TM_CUDA(cudaGetLastError());
        return;
    }
    /* The ring: my part first, then at step s send the piece that came last (PE me - s's) and
     * take the next (PE me - s - 1's) from the left. */
    int right = (me + 1) % n, left = (me + n - 1) % n;
    if (i != o + (size_t)me * part)
        TM_CUDA(cudaMemcpyAsync(o + (size_t)me * part, i, part, cudaMemcpyDeviceToDevice, st));
    for (int s = 0; s < n - 1; s++)
        tm_ring_stream_channels(ag->rings, ag->channels, right, o + (size_t)((me - s + n) % n) * part,
                                left, o + (size_t)((me - s - 1 + n) % n) * part, part, st);
}
