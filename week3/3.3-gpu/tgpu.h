/* tgpu.h: Provided. What chapter 3.3's CUDA files share: the functions you write (one section of
 * book/3.3-gpu.md each), error checks, and the TODO that a stub stops on.
 *
 * The chapter runs one process per GPU (one PE per GPU), started by mpirun. MPI is used only to
 * start NVSHMEM; every byte of data moves through NVSHMEM (or, in the benchmark, NCCL and CUDA). */
#ifndef TGPU_H
#define TGPU_H

#include <cuda_runtime.h>
#include <mpi.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- Errors: tshmem_gpu.h (shared with chapter 3.7), under this chapter's names -------------- */
#define TSHMEM_GPU_NAME "tgpu"
#define TSHMEM_GPU_PAGE "book/3.3-gpu.md"
#include "tshmem_gpu.h"
/* tg_die(__func__, fmt, ...): prints "tgpu: PE <rank>: <func>: <message>" and stops the whole
 * job; TG_CUDA(call): stops with the call and CUDA's words when it fails; TSHMEM_TODO: a stub's
 * TODO, which sends the reader to book/3.3-gpu.md. */
#define tg_die gpu_die
#define TG_CUDA GPU_CUDA

/* ---- Bootstrap (bootstrap.cu) ---------------------------------------------------------------- */
/* After MPI_Init: binds this process to one GPU, starts NVSHMEM with a unique ID that rank 0
 * makes and MPI broadcasts; returns this PE (== the MPI rank). Collective. */
int tg_init(void);
void tg_finalize(void);
/* nvshmem_malloc with a check: stops with a sentence when the symmetric heap is too small. */
void *tg_malloc(size_t bytes);
/* The address through which this GPU's loads and stores reach `sym` on PE `pe` (nvshmem_ptr);
 * stops if `pe` is not reachable that way (not on this node's NVLink). */
void *tg_peer(void *sym, int pe);

/* ---- Ring shift and ring broadcast (ring.cu) ------------------------------------------------- */
#define TG_RING_CTAS 32   /* blocks of the broadcast kernel */
#define TG_RING_CHUNKS 16 /* pipelined chunks per block, at most */
typedef struct {
    uint64_t *sig;  /* symmetric: [0] shift, [1 + b*CHUNKS + c] bcast data, then one ack per block */
    uint64_t seq;   /* calls so far; every flag is set to the call's number, so none is ever reset */
} tg_ring_t;
void tg_ring_create(tg_ring_t *r);
void tg_ring_destroy(tg_ring_t *r);
/* `value` lands in `dst` (a symmetric int) on the right neighbour (my_pe + 1) % n_pes. */
void tg_ring_shift(tg_ring_t *r, int *dst, int value, cudaStream_t st);
/* Copies `bytes` of the symmetric `buf` from PE `root` into `buf` on every other PE. */
void tg_ring_bcast(tg_ring_t *r, void *buf, size_t bytes, int root, cudaStream_t st);

/* ---- Allreduce (allreduce.cu): the ring, and one shot for small buffers ---------------------- */
#define TG_AR_MAX_CTAS 128
#define TG_AR_CHUNKS 16   /* pipelined chunks per block and step, at most */
#define TG_AR_ONESHOT_MAX (1 << 20) /* bytes: the largest call the one-shot path can take */
#define TG_AR_ONESHOT_SLICE 2048      /* floats: the least one block of the one-shot path sums */
typedef struct {
    float *scratch;   /* symmetric: (n_pes - 1) landing slots of one segment each */
    uint64_t *flags;  /* symmetric: 2 * (n_pes - 1) steps * TG_AR_MAX_CTAS * TG_AR_CHUNKS */
    size_t cap;       /* the most floats one call may reduce */
    uint64_t seq;     /* calls so far */
    int ctas, threads; /* the most blocks a call uses, and their size */
    size_t min_chunk;  /* floats: no chunk is smaller (fewer, larger chunks for small calls) */
    /* The one-shot path: every PE puts its whole buffer into every other PE's landing area,
     * then each sums the n copies itself; two areas, used by odd and even calls. */
    float *slots;       /* symmetric: [2][n_pes][TG_AR_ONESHOT_MAX / 4] */
    uint64_t *slot_flags; /* symmetric: [2][n_pes][TG_AR_MAX_CTAS] */
    size_t oneshot_max; /* bytes: calls up to this size go one shot (0: never; at most
                           TG_AR_ONESHOT_MAX); the default is TG_AR_ONESHOT_MAX */
} tg_allreduce_t;
void tg_allreduce_create(tg_allreduce_t *ar, size_t max_count, int ctas, int threads);
void tg_allreduce_destroy(tg_allreduce_t *ar);
/* In place: data[i] becomes the sum of data[i] over all PEs; `data` is symmetric. Collective.
 * Up to ar->oneshot_max bytes one shot, above that the ring. */
void tg_allreduce(tg_allreduce_t *ar, float *data, size_t count, cudaStream_t st);

/* ---- Put across many blocks, and the copy engine (put.cu) ----------------------------------- */
/* Both copy `bytes` from the local `src` into the symmetric `dest` on PE `pe`; the copy is
 * complete (visible on `pe`) when the stream `st` reaches that point. */
/* With the SMs: as many blocks as it takes to fill NVLink (nvshmemx_putmem_nbi_block). */
void tg_put_sm(void *dest, const void *src, size_t bytes, int pe, cudaStream_t st);
/* With the copy engine where the peer is mapped (same node), else tg_put_sm. */
void tg_put(void *dest, const void *src, size_t bytes, int pe, cudaStream_t st);
/* The grid tg_put_sm uses for `bytes` (so the benchmark can print it). */
int tg_put_blocks(size_t bytes);

#endif
