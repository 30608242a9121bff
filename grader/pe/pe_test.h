/* pe_test.h: what every PE-side test program shares: scenarios, checks and the output protocol.
 *
 * A test program runs one scenario on every PE (tshrun -np N pe_1_3 put_sizes) and reports by
 * printing lines that the Criterion suites read:
 *   pe <i>: step <text>         a milestone (a hang report shows each PE's last one)
 *   pe <i>: FAIL <text>         a failed check: what was expected, what was seen
 *   pe <i>: value <key>=<val>   a value the suite compares across PEs
 *   pe <i>: done                the scenario finished on this PE
 */
#ifndef PE_TEST_H
#define PE_TEST_H

#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tshmem.h"

struct scenario {
    const char *name;
    void (*run)(int argc, char **argv);
};

static int pe_me = -1;
static int pe_failures;

/* Before tshmem_init our PE number comes from the launcher. */
static inline int pe_id(void)
{
    if (pe_me >= 0)
        return pe_me;
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    return rank ? atoi(rank) : 0;
}

__attribute__((format(printf, 2, 3))) static inline void pe_say(const char *kind, const char *fmt, ...)
{
    char text[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    printf("pe %d: %s%s%s\n", pe_id(), kind, *kind ? " " : "", text); /* one write per line */
}

#define STEP(...) pe_say("step", __VA_ARGS__)
#define VALUE(key, ...) pe_say("value", key "=" __VA_ARGS__)
#define FAIL(...) (pe_failures++, pe_say("FAIL", __VA_ARGS__))
/* A failed check prints and carries on, so one run shows every PE's view. */
#define CHECK(cond, ...)                                                                      \
    do {                                                                                      \
        if (!(cond))                                                                          \
            FAIL(__VA_ARGS__);                                                                \
    } while (0)
/* Stop at the first failure of a long loop: thousands of identical lines teach nothing. */
#define CHECK_OR_STOP(cond, ...)                                                              \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            FAIL(__VA_ARGS__);                                                                \
            return;                                                                           \
        }                                                                                     \
    } while (0)

/* After a failed check in a run of collective calls: the other PEs may already wait, in the next
 * call, for this PE, which will never make it; a barrier here would hang until the test's
 * timeout, and the hang would hide the wrong value behind "the job did not finish". End the
 * whole job at once instead (the FAIL line is out: stdout is line-buffered). */
static inline void pe_stop_job(void)
{
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static inline void pe_init(void)
{
    tshmem_init();
    pe_me = tshmem_my_pe();
}

/* A barrier that does not depend on chapter 1.4, for the tests of chapters 1.1-1.3. */
static inline void pe_sync(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    MPI_Barrier(MPI_COMM_WORLD);
    atomic_thread_fence(memory_order_seq_cst);
}

/* Deterministic test data: byte i of a message from PE src in round r. */
static inline unsigned char pattern(int src, size_t i, int r)
{
    return (unsigned char)(i * 131u + (unsigned)src * 17u + (unsigned)r * 7u + 1u);
}

/* "ring,direct,auto": its names in order, at most cap; returns how many. A program takes such
 * a list where a test names one algorithm, so that one job can run several tests' checks (the
 * grader's shared jobs: job.h, job_shared_ok). The names live as long as the program. */
static inline int pe_names(const char *list, const char **names, int cap)
{
    static char pool[1024]; /* the names' copies, not malloc'd: nothing for a leak check */
    static size_t used;
    size_t len = strlen(list) + 1;
    if (len > sizeof pool - used) {
        fprintf(stderr, "pe_names: the list '%s' is longer than the %zu bytes left\n", list,
                sizeof pool - used);
        exit(2);
    }
    char *copy = pool + used, *save = NULL;
    used += len;
    memcpy(copy, list, len);
    int n = 0;
    for (char *t = strtok_r(copy, ",", &save); t && n < cap; t = strtok_r(NULL, ",", &save))
        names[n++] = t;
    return n;
}

static inline int pe_main(int argc, char **argv, const struct scenario *list)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    STEP("start pid=%d", (int)getpid());
    if (argc < 2) {
        fprintf(stderr, "usage: %s SCENARIO [args]\n", argv[0]);
        return 2;
    }
    for (const struct scenario *s = list; s->name; s++)
        if (strcmp(s->name, argv[1]) == 0) {
            s->run(argc, argv);
            if (pe_failures == 0)
                printf("pe %d: done\n", pe_id());
            return pe_failures ? 1 : 0;
        }
    fprintf(stderr, "%s: no scenario named '%s'\n", argv[0], argv[1]);
    return 2;
}

#endif /* PE_TEST_H */
