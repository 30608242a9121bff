/* suite.h: what the chapter suites share: Criterion, the assertions on a job (JOB_EXPECT_*), and
 * running one scenario on several PE counts. */
#ifndef SUITE_H
#define SUITE_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "tshmem.h" /* TSHMEM_EXIT_ERROR, TSHMEM_EXIT_TODO */

/* Assertions on a `struct pe_job *`, only in the Criterion test process (they call
   cr_assert_fail). JOB_EXPECT_OK: not timed out, status 0, every PE printed done, no FAIL line.
   JOB_EXPECT_ERROR: not timed out, that exit status, and `needle` in the output (NULL or "":
   status only). The message is built before the test aborts, and the job freed: the test
   never returns to free it. The message stays in a static, so that a leak check at the test's
   exit (make sanitize) finds nothing unreachable. */
#define JOB_EXPECT_OK(job)                                                                         \
    do {                                                                                           \
        static char *job_msg_;                                                                     \
        if ((job_msg_ = job_problem_ok((job))) != NULL) {                                          \
            job_free((job));                                                                       \
            cr_assert_fail("%s", job_msg_);                                                        \
        }                                                                                          \
    } while (0)

#define JOB_EXPECT_ERROR(job, status, needle)                                                      \
    do {                                                                                           \
        static char *job_msg_;                                                                     \
        if ((job_msg_ = job_problem_error((job), (status), (needle))) != NULL) {                   \
            job_free((job));                                                                       \
            cr_assert_fail("%s", job_msg_);                                                        \
        }                                                                                          \
    } while (0)

#define END_PES 0
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define ENV(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Runs chapter `ch`'s program `prog` with `scenario` on each PE count of `pes` (ending with
 * END_PES) and expects every PE to finish its checks. Stops at the first failing count. */
static inline void expect_ok_on(const char *ch, const char *prog, const char *scenario,
                                const char *const *args, const char *const *env,
                                double timeout_s, const int *pes)
{
    for (; *pes != END_PES; pes++) {
        struct pe_job job;
        job_runv(&job, ch, prog, *pes, scenario, args, env, timeout_s);
        JOB_EXPECT_OK(&job);
        job_free(&job);
    }
}

/* expect_ok_on, for a test whose checks are part of a shared job's. `shared` is that job's
 * scenario and arguments: a job that runs this test's checks and other tests' (every algorithm
 * at once, or several scenarios in one process); job.h, job_shared_ok. Where the grader's
 * shared job passed at a PE count, this test's own job would pass there too and is not run.
 * Elsewhere the test's own job runs, as in expect_ok_on, and reports its own failure. */
static inline void expect_ok_shared(const char *ch, const char *prog, const char *scenario,
                                    const char *const *args, const char *const *shared,
                                    const char *const *env, double timeout_s, const int *pes)
{
    for (; *pes != END_PES; pes++) {
        if (job_shared_ok(ch, prog, *pes, shared[0], shared + 1, env, timeout_s))
            continue;
        struct pe_job job;
        job_runv(&job, ch, prog, *pes, scenario, args, env, timeout_s);
        JOB_EXPECT_OK(&job);
        job_free(&job);
    }
}

/* Runs the scenario once and expects the runtime to stop it with `status` and a message that
 * contains every one of `needles` (NULL-terminated). */
static inline void expect_error(const char *ch, const char *prog, int npes, const char *scenario,
                                const char *const *args, const char *const *env, int status,
                                const char *const *needles)
{
    struct pe_job job;
    job_runv(&job, ch, prog, npes, scenario, args, env, 30);
    for (; *needles; needles++)
        JOB_EXPECT_ERROR(&job, status, *needles);
    job_free(&job);
}

/* Counts /dev/shm entries whose name contains the job id. */
static inline int shm_entries(const char *job_id)
{
    DIR *d = opendir("/dev/shm");
    int count = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        count += strstr(e->d_name, job_id) != NULL;
    if (d)
        closedir(d);
    return count;
}

/* A job id of our own, so that a test can look for what the job left in /dev/shm. */
static inline const char *unique_job_id(char *buf, size_t len, const char *tag)
{
    static int counter;
    snprintf(buf, len, "TSHMEM_JOB_ID=t%d%s%d", (int)getpid(), tag, ++counter);
    return buf;
}

#endif
