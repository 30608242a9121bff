/* job.h: the grader harness API: run a tshmem PE job under a timeout and check its output.
   Criterion-free, for the grader links it too: the assertions on a job (JOB_EXPECT_*) are in
   grader/tests/suite.h. */
#ifndef TSHMEM_GRADER_JOB_H
#define TSHMEM_GRADER_JOB_H

#include <stdio.h>
#include <stdlib.h>

/* One finished (or stopped) run of `tshrun -np npes <prog> <scenario> ...`.
   PE programs print, line-buffered, to stdout:
     pe <i>: step <text>     (first one: "pe <i>: step start pid=<pid>")
     pe <i>: FAIL <text>     pe <i>: value <key>=<value>     pe <i>: done          */
struct pe_job {
    const char *chapter;   /* "1.3", for messages */
    const char *scenario;  /* argv[1] given to the PE program */
    int npes;
    int status;            /* exit status of tshrun (0..255); -1 if timed out */
    int timed_out;         /* also set when the job was stopped for flooding its output */
    double seconds;        /* wall time */
    char *output;          /* all stdout+stderr of the job, NUL-terminated */
    char *hang_report;     /* NULL unless timed out: where each PE was */
    void *priv;            /* harness-private (strings handed out by job_value) */
};

/* Runs `$TSHMEM_ROOT/tools/tshrun -np npes $TSHMEM_TEST_BIN/<prog> <scenario>` with the entries
   of `env` ("KEY=value", NULL-terminated, may be NULL) added to the inherited environment, output
   captured, under a hard timeout of timeout_s seconds (times $TSHMEM_TEST_TIMEOUT_SCALE if set).
   A `prog` containing '/' is used as given. Problems of the harness itself (variable unset, spawn
   failure) give status 127 and an output line starting "harness: ". Never calls cr_*. */
void job_run(struct pe_job *job, const char *chapter, const char *prog, int npes,
             const char *scenario, const char *const *env, double timeout_s);
/* Same, with `args` (NULL-terminated, may be NULL) given to the PE program after the scenario. */
void job_runv(struct pe_job *job, const char *chapter, const char *prog, int npes,
              const char *scenario, const char *const *args, const char *const *env,
              double timeout_s);
void job_free(struct pe_job *job);
/* A shared job: one that runs a superset of several tests' checks (every algorithm of a
   chapter in one job, where each test checks one of them). Returns 1 when it passed at npes
   PEs, running it first if no test of this grading run has; 0 when it failed, or when there is
   no $TSHMEM_JOB_SHARE (the folder where the grader keeps the verdicts of one suite run). A
   test that gets 0 runs its own job, so that a failure is always reported by the test it
   belongs to, with that job's own output. One test at a time runs a given shared job; another
   that needs it meanwhile waits for the verdict. Never calls cr_*. */
int job_shared_ok(const char *chapter, const char *prog, int npes, const char *scenario,
                  const char *const *args, const char *const *env, double timeout_s);
/* $TSHMEM_TEST_TIMEOUT_SCALE (1 if unset): how much slower than usual the PEs run (make sanitize
   sets 4). A test's own bound on a job's time scales with it, as the timeout does. */
double job_timeout_scale(void);

/* Queries on the captured output. */
int job_count(const struct pe_job *job, const char *needle);             /* substring occurrences */
const char *job_value(const struct pe_job *job, int pe, const char *key); /* first value, or NULL */
int job_done_count(const struct pe_job *job);                           /* distinct PEs done */
int job_pe_done(const struct pe_job *job, int pe);                      /* PE printed done */
char *job_last_step(const struct pe_job *job, int pe);  /* text of its last step, or NULL; free */
/* A short teaching excerpt: FAIL, tshmem:, tshrun: and harness: lines (a "not written yet" block
   in full), at most ~25 lines, banners removed, then "(exit status S after T s)". Caller frees. */
char *job_digest(const struct pe_job *job);

/* A sanitizer's report (make sanitize) in the output: the start of its first line, or NULL;
   the PE it came from, or -1 if unknown; its head (down to its SUMMARY line) written to m, then
   the path of a file under $TSHMEM_ROOT/build/sanitizer/ that keeps the whole output. */
const char *job_sanitizer_report(const char *output);
int job_sanitizer_pe(const struct pe_job *job, const char *report);
void job_sanitizer_head(FILE *m, const struct pe_job *job, const char *report);

/* The failure message of JOB_EXPECT_OK / JOB_EXPECT_ERROR, or NULL when the job is as expected.
   Caller frees. Useful on their own to build custom assertions. */
char *job_problem_ok(const struct pe_job *job);
char *job_problem_error(const struct pe_job *job, int status, const char *needle);

/* Internal (job.c uses it, report.c has it): where gdb's "thread apply all bt" output shows the
   main thread, as "in f (file:line) <- caller <- main, inside callee()"; NULL if no frame. */
char *job_backtrace_text(const char *gdb_output);

/* What that main thread was doing: JOB_WHERE_WAIT inside a wait (a function of the runtime or
   of MPI that waits, or a blocking call of the system, anywhere on its stack); JOB_WHERE_OWN
   running code of its own with none of those on its stack (a loop that never ends), with its
   innermost frame of the program or runtime, "f (file:line)", written to own; else UNKNOWN. */
enum job_where { JOB_WHERE_UNKNOWN, JOB_WHERE_WAIT, JOB_WHERE_OWN };
enum job_where job_backtrace_kind(const char *gdb_output, char *own, size_t len);

#endif
