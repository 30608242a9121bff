/* tshmem_gpu.h: Provided. What the GPU chapters (3.3, 3.7) share: the error checks and the TODO
 * that a stub stops on. A chapter's own header (tgpu.h, tmoe.h) says whose they are before it
 * includes this one, and gives them its own names (tg_die, TG_CUDA):
 *   #define TSHMEM_GPU_NAME "tgpu"             the first word of every error it prints
 *   #define TSHMEM_GPU_PAGE "book/3.3-gpu.md"  the page a TODO sends the reader to */
#ifndef TSHMEM_GPU_H
#define TSHMEM_GPU_H

#if !defined(TSHMEM_GPU_NAME) || !defined(TSHMEM_GPU_PAGE)
#error "define TSHMEM_GPU_NAME and TSHMEM_GPU_PAGE (the chapter's name and page) first"
#endif

#include <cuda_runtime.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Prints "<name>: PE <rank>: <func>: <message>" and stops the whole job (MPI_Abort). */
__attribute__((noreturn, format(printf, 2, 3)))
static inline void gpu_die(const char *func, const char *fmt, ...)
{
    int rank = -1, up = 0;
    MPI_Initialized(&up);
    if (up) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, TSHMEM_GPU_NAME ": PE %d: %s: ", rank, func);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    if (up) MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

#define GPU_CUDA(call)                                                                        \
    do {                                                                                      \
        cudaError_t gpu_e_ = (call);                                                          \
        if (gpu_e_ != cudaSuccess)                                                            \
            gpu_die(__func__, "%s failed: %s", #call, cudaGetErrorString(gpu_e_));            \
    } while (0)

/* A stub's TODO. On the host it names the chapter, the book section and the task, then stops
 * the job; in a kernel, thread 0 of each block prints it and the kernel traps, which the host
 * sees as "unspecified launch failure" at its next synchronization. */
__host__ __device__ __attribute__((noreturn))
static inline void gpu_todo(const char *chapter, const char *section, const char *task,
                            const char *func, const char *file, int line)
{
#ifdef __CUDA_ARCH__
    if (threadIdx.x == 0)
        printf("TODO (chapter %s): %s() in %s:%d is not written yet: %s. "
               "Read " TSHMEM_GPU_PAGE ", section \"%s\".\n", chapter, func, file, line, task,
               section);
    __trap();
    __builtin_unreachable();
#else
    gpu_die(func, "TODO (chapter %s) in %s:%d is not written yet: %s. Read " TSHMEM_GPU_PAGE
            ", section \"%s\".", chapter, file, line, task, section);
#endif
}
#define TSHMEM_TODO(section, task) \
    gpu_todo(TSHMEM_CHAPTER, section, task, __func__, __FILE__, __LINE__)

#endif
