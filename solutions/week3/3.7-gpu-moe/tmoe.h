/* tmoe.h: Provided. What chapter 3.7's CUDA files share: the buffer of chapter 2.1 and the MoE
 * dispatch and combine of chapter 3.1, now as kernels on GPUs with NVSHMEM (one section of
 * book/3.7-gpu-moe.md each), the error checks, and the TODO that a stub stops on.
 *
 * One process per PE, started by mpirun; MPI only starts NVSHMEM. PE p uses GPU p % (GPUs on its
 * node): with fewer GPUs than PEs, several PEs share one GPU (the tests then still check every
 * byte, but the figures are no longer those of a link between GPUs). */
#ifndef TMOE_H
#define TMOE_H

#include <cuda_runtime.h>
#include <mpi.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- Errors: tshmem_gpu.h (shared with chapter 3.3), under this chapter's names -------------- */
#define TSHMEM_GPU_NAME "tmoe"
#define TSHMEM_GPU_PAGE "book/3.7-gpu-moe.md"
#include "tshmem_gpu.h"
/* tm_die(__func__, fmt, ...): prints "tmoe: PE <rank>: <func>: <message>" and stops the whole
 * job; TM_CUDA(call): stops with the call and CUDA's words when it fails; TSHMEM_TODO: a stub's
 * TODO, which sends the reader to book/3.7-gpu-moe.md. */
#define tm_die gpu_die
#define TM_CUDA GPU_CUDA

/* ---- Start and memory (bootstrap.cu, provided: chapter 3.3 wrote it) ------------------------- */
/* After MPI_Init: binds this PE to GPU (node rank % GPUs), starts NVSHMEM; returns this PE. */
int tm_init(void);
void tm_finalize(void);
void *tm_malloc(size_t bytes);                 /* nvshmem_malloc, zeroed, or a sentence */
int tm_pes_per_gpu(void);                      /* 1, or more where PEs share a GPU */
/* Launches `kernel` on this PE with every block resident at once (a kernel that waits for
 * another PE needs that), or stops with a sentence naming `who`: a plain launch where the grid
 * fits on the GPU at once and each PE has its own GPU, else nvshmemx_collective_launch (always,
 * where tm_launch_collective is 1: the study compares the two). */
void tm_launch(const void *kernel, int blocks, int threads, void **args, cudaStream_t st,
               const char *who);
extern int tm_launch_collective;
/* 1 where the same-node fast path (loads and stores through nvshmem_ptr) may be used: the
 * default; TMOE_NO_P2P=1 in the environment turns it off, so that every byte goes through
 * NVSHMEM's puts (what a peer on another node gets). */
int tm_p2p_allowed(void);

/* ---- Provided: copies by a block or a warp. Loads bypass L1 (__ldcg): a peer may have
 * rewritten the bytes since this SM last read them (a ring slot on its next turn), and L1 is not
 * kept coherent with writes from other SMs or other GPUs. 16-byte pieces where both ends
 * allow it, four loads in flight per thread before their stores (a copy is bound by the bytes
 * it has in flight: with one load at a time, each thread waits a whole memory round trip per
 * 16 bytes), then the odd bytes. ------------------------------------------------------------- */
__device__ static inline void tm_copy(void *dst, const void *src, size_t bytes, int lane,
                                      int lanes)
{
    char *d = (char *)dst;
    const char *s = (const char *)src;
    size_t i = 0;
    if ((((uintptr_t)d | (uintptr_t)s) & 15) == 0) {
        const int4 *s4 = (const int4 *)s;
        int4 *d4 = (int4 *)d;
        size_t n4 = bytes / 16, v = lane, L = lanes;
        for (; v + 3 * L < n4; v += 4 * L) {
            int4 a = __ldcg(s4 + v), b = __ldcg(s4 + v + L), c = __ldcg(s4 + v + 2 * L),
                 e = __ldcg(s4 + v + 3 * L);
            d4[v] = a, d4[v + L] = b, d4[v + 2 * L] = c, d4[v + 3 * L] = e;
        }
        for (; v < n4; v += L) d4[v] = __ldcg(s4 + v);
        i = n4 * 16;
    }
    for (size_t b = i + lane; b < bytes; b += lanes)
        d[b] = (char)__ldcg((const signed char *)s + b);
}
#define tm_copy_block(d, s, n) tm_copy(d, s, n, threadIdx.x, blockDim.x)
#define tm_copy_warp(d, s, n) tm_copy(d, s, n, threadIdx.x % 32, 32)

/* ---- The buffer of chapter 2.1 on GPUs (ring.cu) --------------------------------------------- */
/* For every ordered pair of PEs a ring of `slots` slots of `slot_bytes`: the receiver's
 * data[sender][slot], its head[sender] (messages delivered, written by the sender) and the
 * sender's tail[receiver] (slots freed, written by the receiver). All three are symmetric, so
 * the writer finds them at the same address on the other PE. */
typedef struct {
    char *data;        /* symmetric: [n_pes][slots][slot_bytes] */
    uint64_t *head;    /* symmetric: [n_pes]: on the receiver, messages in from each sender */
    uint64_t *tail;    /* symmetric: [n_pes]: on the sender, slots freed by each receiver */
    uint64_t *sent, *got; /* device (not symmetric): [n_pes]: my counts, kept across calls */
    int slots;
    size_t slot_bytes;
    int p2p;           /* the same-node fast path is on */
} tm_ring_t;
void tm_ring_create(tm_ring_t *r, int slots, size_t slot_bytes); /* collective */
void tm_ring_destroy(tm_ring_t *r);                              /* collective */
/* Block-wide (every thread of the block calls it with the same arguments): message number
 * sent[pe] + 1 of `bytes` <= slot_bytes from `src` into the ring to `pe`. Waits while that ring
 * is full. */
__device__ void tm_ring_send_block(tm_ring_t r, int pe, const void *src, size_t bytes);
/* Block-wide: waits for the next message from `pe` and copies its `bytes` into `dst`. */
__device__ void tm_ring_recv_block(tm_ring_t r, int pe, void *dst, size_t bytes);
/* Host: every PE streams `bytes` from `src` to PE `to` while it receives `bytes` from PE
 * `from` into `dst` (device memory), in slot-sized messages; one block sends, one receives. */
void tm_ring_stream(tm_ring_t *r, int to, const void *src, int from, void *dst, size_t bytes,
                    cudaStream_t st);
/* Host, provided: the same over `channels` rings at once (each made by tm_ring_create, with slots
 * of one size), one block pair each: one block copies a few tens of GB/s at most, a link wants
 * many. The stream is cut into one or two messages per channel (at least 8 KiB, at most a slot);
 * message m goes through ring m % channels. Every PE passes the same channels and bytes. */
#define TM_MAX_CHANNELS 64 /* 64 block pairs carried 363 GB/s at 1 GiB on H200s, 32 at most 361 */
extern int tm_ring_threads; /* threads per block of tm_ring_stream_channels: 512 (1024 was no
                               faster on two and four H200s; the study's --sweep tries both) */
void tm_ring_stream_channels(tm_ring_t *rings, int channels, int to, const void *src, int from,
                             void *dst, size_t bytes, cudaStream_t st);

/* ---- Allgather (allgather.cu): one shot for small outputs, your ring above ------------------- */
#define TM_AG_CTAS 32              /* blocks of the one-shot kernel, at most */
#define TM_AG_SLICE 4096           /* bytes: the least one block of the one-shot path moves */
#define TM_AG_AREA_MAX (32u << 20) /* bytes: the largest part the landing areas are made for */
#define TM_AG_ONESHOT_MAX (16u << 20) /* bytes of output: the default of oneshot_max (the
                                         study's crossover on two and four H200s: one shot won
                                         to 8 MiB on two, 16 MiB on four; book/3.7-gpu-moe.md) */
typedef struct {
    tm_ring_t rings[TM_MAX_CHANNELS]; /* the ring path: channels rings of 16 slots of 512 KiB */
    int channels;
    char *land;         /* symmetric: [2][n_pes][area]: PE p's part, odd and even calls */
    uint64_t *flags;    /* symmetric: [2][n_pes][TM_AG_CTAS]: PE p's slice b has landed */
    size_t area;        /* bytes of one landing slot: min(max_part, TM_AG_AREA_MAX) */
    size_t cap;         /* the largest part a call may bring */
    size_t oneshot_max; /* bytes of output (n_pes x part): up to this one shot, above it the
                           ring; 0: always the ring. Every PE must have the same. */
    uint64_t seq;       /* one-shot calls so far */
    int p2p;            /* the same-node fast path is on (tm_p2p_allowed) */
} tm_allgather_t;
void tm_allgather_create(tm_allgather_t *ag, size_t max_part, int channels); /* collective */
void tm_allgather_destroy(tm_allgather_t *ag);                               /* collective */
/* Every PE brings `part` bytes at `in` (device memory); PE p's land at out + p * part on every
 * PE (out: n_pes x part bytes of device memory; in may be out + my_pe * part). Collective, the
 * same part everywhere; complete when `st` gets there. */
void tm_allgather(tm_allgather_t *ag, const void *in, void *out, size_t part, cudaStream_t st);

/* ---- MoE dispatch and combine of chapter 3.1 on GPUs (dispatch.cu, combine.cu) --------------- */
#define TM_MAX_EXPERTS 256 /* the layout kernel keeps a count per expert per warp in shared memory */
#define TM_MAX_PES 64
#define TM_MAX_RUNS (TM_MAX_EXPERTS + TM_MAX_PES) /* (local expert, source) pairs on one PE */
typedef struct {
    int num_experts; /* E over all PEs; PE p owns experts p*E/n .. (p+1)*E/n - 1 */
    int hidden;      /* H: floats per row */
    int top_k;       /* k: expert slots per token */
    int max_tokens;  /* the most tokens one PE passes to one dispatch */
} tm_config_t;
typedef struct {
    int n_local_experts, first_expert, n_rows;
    const int *expert_count;  /* host: [n_local_experts] */
    const int *expert_offset; /* host: [n_local_experts + 1] */
    const int *src_pe;        /* device: [n_rows]: the PE the row came from (its home) */
    const int *src_token;     /* device: [n_rows]: its token there */
    const int *src_slot;      /* device: [n_rows]: its top-k slot */
} tm_layout_t;
/* The handle. Symmetric memory first (the same offsets on every PE), then this PE's own. */
typedef struct {
    int n, me, E, H, k, max_tokens, n_local, first_expert;
    int p2p;
    uint64_t layer;         /* dispatches so far: this one's number L, alike on every PE */
    int T;                  /* tokens of the last dispatch */
    int dispatched;
    /* symmetric */
    int32_t *count_box;     /* [2][n][E]: box L % 2, row j: PE j's rows per expert */
    uint64_t *count_sig;    /* [n]: count_sig[j] = L: PE j's counts of layer L are here */
    float *recv;            /* [n * max_tokens * k][H]: received rows, grouped by local expert */
    int32_t *recv_meta;     /* [n * max_tokens * k][2]: (token, slot) of each received row */
    uint64_t *rows_in;      /* [n][E]: rows received from PE j for expert e (only mine used) */
    float *back;            /* [max_tokens * k][H]: outputs coming home, one per (token, slot) */
    uint64_t *back_in;      /* [n]: outputs received from PE j */
    /* device, this PE only */
    int *idx;               /* [max_tokens * k]: the last dispatch's routing (copied) */
    float *weights;         /* [max_tokens * k] */
    int *dst_row;           /* [max_tokens * k]: where (t, s) lands on its expert's PE */
    int32_t *meta_src;      /* [max_tokens * k][2]: (t, s) of entry t * k + s, what a row's meta is */
    int *row_start;         /* [n_local * n + 1]: where the rows of (local expert l, source j) start */
    int *err;               /* device: a bad routing entry found by the counts kernel */
    int *src_pe, *src_token, *src_slot; /* [n * max_tokens * k]: the layout */
    uint64_t *rows_expected;/* [n][E]: running totals of rows_in[j][e] (never reset) */
    uint64_t *back_expected;/* [n]: running totals of back_in[j] */
    int *info;              /* mapped host memory: n_rows, expert_count[n_local], and at
                               info[1 + E] a bad routing entry (flag, entry, expert) */
    cudaEvent_t counted;    /* the counts kernel of the last dispatch is done */
    int *h_count, *h_offset;/* host copies for tm_layout_t */
    /* the low-latency path (lowlat.cu), allocated by its first call */
    int ll_rows;            /* rows of the padded buffer: ceil(E / n) * n * max_tokens */
    float *ll_recv;         /* symmetric: [ceil(E / n)][n][max_tokens][H]: region (l, j) */
    int32_t *ll_meta;       /* symmetric: [ll_rows][2]: (token, slot) of each row */
    uint64_t *ll_count;     /* symmetric: [n][E]: L << 32 | rows PE j sends to e in layer L */
    uint64_t *ll_rows_in;   /* symmetric: [n][E]: running count of rows in (2 per row) */
    uint64_t *ll_expected;  /* device: [n][E]: running totals of ll_rows_in */
    int *ll_recv_count;     /* device: [n_local][n]: rows in region (l, j) this layer */
    int *ll_src;            /* device: [3][ll_rows]: src_pe (-1: padding), src_token, src_slot */
    int ll_dispatched;
} tm_moe_t;
tm_moe_t *tm_moe_create(const tm_config_t *config);   /* collective, same config everywhere */
void tm_moe_destroy(tm_moe_t *moe);                   /* collective */
int tm_moe_expert_pe(const tm_moe_t *moe, int expert);
/* x, topk_idx, topk_weights: device arrays of this PE's num_tokens tokens. Every PE calls it.
 * Returns when the layout is known (the host reads the number of rows received, as DeepEP's
 * normal dispatch does); the rows themselves are in *recv_x when `st` gets there. */
int tm_dispatch(tm_moe_t *moe, const float *x, int num_tokens, const int *topk_idx,
                const float *topk_weights, float **recv_x, tm_layout_t *layout, cudaStream_t st);
/* expert_out: layout.n_rows rows in recv_x's order (may be recv_x). y: num_tokens rows, in
 * device memory, complete when `st` gets there; y[t] = sum over s in slot order of
 * weight(t, s) x output(t, s), bit for bit chapter 3.1's sum. */
int tm_combine(tm_moe_t *moe, const float *expert_out, float *y, cudaStream_t st);

/* Low-latency dispatch (lowlat.cu, DeepEP's low-latency mode): no count exchange and no host
 * synchronization. PE j's rows for local expert l land in region (l, j) of a padded buffer,
 * [n_local][n][max_tokens][H], from the region's first row, in token and slot order;
 * recv_count[l * n + j] (device memory) says how many. A region holds max_tokens rows, so a
 * token may route to one expert once. The first call allocates the buffers (every PE makes it).
 * Returns at once: everything is in place when `st` gets there. */
int tm_dispatch_ll(tm_moe_t *moe, const float *x, int num_tokens, const int *topk_idx,
                   const float *topk_weights, float **recv_x, const int **recv_count,
                   cudaStream_t st);
/* expert_out: the padded buffer's shape (may be recv_x); y as for tm_combine. */
int tm_combine_ll(tm_moe_t *moe, const float *expert_out, float *y, cudaStream_t st);

/* Shared by dispatch.cu, combine.cu and lowlat.cu (kernels defined in the first two). */
#define TM_COUNT_WARPS 32 /* the counts kernels' block: 32 warps of 32 threads */
__global__ void send_rows_kernel(tm_moe_t m, const float *x, const int *idx, int total);
__global__ void combine_send_kernel(tm_moe_t m, const float *out, int n_rows);
__global__ void wait_back_kernel(tm_moe_t m);
__global__ void weighted_sum_kernel(tm_moe_t m, float *y, int T);

/* Provided: the first expert of PE p (p = n: E), and the PE that owns expert e. */
__host__ __device__ static inline int tm_first_expert(int E, int n, int p)
{
    return (int)((long long)p * E / n);
}
__host__ __device__ static inline int tm_owner(int E, int n, int e)
{
    int p = (int)(((long long)e * n) / E);
    while (p > 0 && tm_first_expert(E, n, p) > e) p--;
    while (p + 1 < n && tm_first_expert(E, n, p + 1) <= e) p++;
    return p;
}
/* Provided: waits on the host until `st` has done everything queued, at most TMOE_WAIT_S seconds
 * (default 60); then stops with a sentence naming `what` (a PE that never came, or a TODO). */
void tm_wait_stream(cudaStream_t st, const char *what);
void tm_wait_event(cudaEvent_t ev, const char *what); /* the same, for one event */
/* Provided: blocks of 512 threads (16 warps) for `warps` warps of work, at most two per SM (a
 * copy wants many bytes in flight: one block of 16 warps per SM left the memory half idle). */
int tm_grid(size_t warps);
/* Provided: blocks of combine's send kernel (512 threads each); 0, the default: tm_grid's. The
 * study's --sweep times combine at its largest shape with other counts. */
extern int tm_combine_ctas;

/* ---- Provided: the counting sort of the counts kernels (dispatch.cu, lowlat.cu) --------------
 * Here rather than in dispatch.cu so that each counts kernel has them inlined: a block of 1024
 * threads may use at most 64 registers a thread, and a call into another file's code would
 * bring that code's own register count (launch failure: "too many resources requested"). */
#define TM_BATCH 8
/* Provided: the counting sort of 3.1 in parallel. Warp w owns entries [w*per, (w+1)*per) of
 * idx (token-major, so token then slot order); cnt[w][e] counts warp w's rows for e. The routing
 * is copied on the way (m.idx, m.weights: combine needs it after the caller may have changed
 * its arrays). Each lane loads TM_BATCH entries before it uses any: one block does all of this
 * PE's entries, and one load at a time would cost a memory round trip per 32 entries. */
static __device__ __forceinline__ void count_rows(const tm_moe_t &m, const int *idx, const float *w_in,
                           int total, int (*cnt)[TM_MAX_EXPERTS])
{
    int w = threadIdx.x / 32, lane = threadIdx.x % 32, per = (total + TM_COUNT_WARPS - 1) / TM_COUNT_WARPS;
    int E = m.E, lo = w * per, hi = min(lo + per, total);
    for (int i = threadIdx.x; i < TM_COUNT_WARPS * E; i += blockDim.x) cnt[i / E][i % E] = 0;
    __syncthreads();
    for (int base = lo + lane; base < hi; base += TM_BATCH * 32) {
        int e[TM_BATCH];
        float f[TM_BATCH];
#pragma unroll
        for (int u = 0; u < TM_BATCH; u++) {
            int i = base + 32 * u;
            e[u] = i < hi ? idx[i] : -1;
            f[u] = i < hi ? w_in[i] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < TM_BATCH; u++) {
            int i = base + 32 * u;
            if (i >= hi) break;
            m.idx[i] = e[u], m.weights[i] = f[u];
            if (e[u] >= 0 && e[u] < E) atomicAdd(&cnt[w][e[u]], 1);
            else if (e[u] != -1) m.err[0] = 1, m.err[1] = i, m.err[2] = e[u]; /* the host names it */
        }
    }
    __syncthreads();
}

/* Provided: every row's place. Warp w's first place for e is at_s[e] plus the rows of warps
 * before w; within a warp's 32 entries, by rank among the lanes that have the same expert
 * (__match_any_sync): token and slot order, as 3.1 places them. */
static __device__ __forceinline__ void place_rows(const int *idx, int total, int E, const int *at_s,
                           int (*cnt)[TM_MAX_EXPERTS], int *dst_row)
{
    int w = threadIdx.x / 32, lane = threadIdx.x % 32, per = (total + TM_COUNT_WARPS - 1) / TM_COUNT_WARPS;
    for (int e = threadIdx.x; e < E; e += blockDim.x) {
        int run = at_s[e]; /* cnt[v][e] becomes warp v's first place for e */
        for (int v = 0; v < TM_COUNT_WARPS; v++) {
            int c = cnt[v][e];
            cnt[v][e] = run;
            run += c;
        }
    }
    __syncthreads();
    int lo = w * per, hi = min(lo + per, total);
    for (int b0 = lo; b0 < hi; b0 += TM_BATCH * 32) { /* TM_BATCH loads in flight, as in count_rows */
        int e[TM_BATCH];
#pragma unroll
        for (int u = 0; u < TM_BATCH; u++) {
            int i = b0 + 32 * u + lane, v = i < hi ? idx[i] : -1;
            e[u] = v < E ? v : -1; /* a bad entry (the host stops on it) takes no place */
        }
#pragma unroll
        for (int u = 0; u < TM_BATCH; u++) {
            if (b0 + 32 * u >= hi) break; /* the same for the whole warp */
            int i = b0 + 32 * u + lane;
            unsigned same = __match_any_sync(0xffffffffu, e[u]), before = same & ((1u << lane) - 1);
            if (e[u] >= 0) dst_row[i] = cnt[w][e[u]] + __popc(before);
            __syncwarp();
            if (e[u] >= 0 && before == 0) cnt[w][e[u]] += __popc(same); /* the group's first lane */
            __syncwarp();
        }
    }
}

#endif
