/* gpu_check.h: what the GPU chapters' test and benchmark programs share: a watchdog for the stream
 * (a kernel that waits for a flag that never comes must end as a failure, never as a hang) and
 * the PASS / FAIL protocol that tools/gpu-test reads. */
#ifndef GPU_CHECK_H
#define GPU_CHECK_H
#ifndef GPU_CHAPTER_H
#define GPU_CHAPTER_H "tgpu.h" /* the chapter's header: 3.3's, unless the program names another */
#endif
#include GPU_CHAPTER_H
#include <time.h>
#include <unistd.h>

static const char *g_test = "?";

/* Prints a FAIL line naming the test and this PE, then stops every PE. */
__attribute__((noreturn, format(printf, 1, 2)))
static inline void fail_now(const char *fmt, ...)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: PE %d: ", g_test, rank);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* Waits for everything queued on `st`, at most `seconds`. */
static inline void finish(cudaStream_t st, const char *what, double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        cudaError_t e = cudaStreamQuery(st);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady)
            fail_now("%s failed on the GPU: %s (a kernel that trapped, e.g. a TODO, or a bad "
                     "address)", what, cudaGetErrorString(e));
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > seconds)
            fail_now("%s did not finish within %.0f s: a kernel is waiting for a flag that no "
                     "PE sets (or another PE stopped)", what, seconds);
        usleep(200);
    }
}
#endif
