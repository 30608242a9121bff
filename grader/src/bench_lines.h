/* bench_lines.h: the benchmark protocol's lines (grader/bench/bench.h prints them), read back,
 * put side by side, and turned into ratios:
 *   bench op=allreduce impl=tshmem pes=2 bytes=1048576 iters=50 median_us=12.3 min_us=11.0
 *         max_us=20.1 algbw_GBps=85.2 busbw_GBps=85.2
 * impl is tshmem (the library the program was linked with), mpi or memcpy (the baseline). */
#ifndef GRADER_BENCH_LINES_H
#define GRADER_BENCH_LINES_H

#include <stddef.h>
#include <stdio.h>

#define MAX_BENCH_LINES 512

struct bench_line {
    char run[16]; /* "yours" or "reference": which build printed it */
    char op[32];
    char impl[16]; /* "tshmem", "mpi", "memcpy" */
    int pes, iters;
    size_t bytes;
    double median_us, min_us, max_us, algbw, busbw;
};

struct bench_set {
    int n;
    int shared_gpus; /* a run said "# shared_gpus ...": its PEs shared GPUs, so its figures
                      * are not those of a link, and no ratio of them says "slower" */
    struct bench_line lines[MAX_BENCH_LINES];
};

/* Adds every well-formed "bench ..." line of output to set, marked as `run`; a line that starts
 * "# shared_gpus" sets set->shared_gpus; other lines are ignored. Returns how many were added. */
int bench_parse(struct bench_set *set, const char *output, const char *run);

/* Speed ratios: how many times faster (above 1) the first is than the second, from medians. */
struct bench_best {
    double vs_mpi, vs_ref; /* best over every op and size; 0 when not measured */
    char mpi_op[32], ref_op[32];
    size_t mpi_bytes, ref_bytes;
};
struct bench_best bench_best(const struct bench_set *set);

/* A table per operation: size, latency and bus bandwidth of yours / reference / baseline,
 * and the ratios yours/reference and reference/baseline. */
void bench_table(FILE *out, const struct bench_set *set);
/* For every operation that has a baseline, one line: the worst ratio against it over every
 * size (below 1: slower), for the reference and for yours, and the size where it happens.
 * Returns how many lines it printed. */
int bench_worst(FILE *out, const char *chapter, const struct bench_set *set);
/* Every line as CSV; 0 or -1. */
int bench_csv(const char *path, const char *chapter, const struct bench_set *set);

#endif
