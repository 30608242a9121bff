/* run.h: building a variant of the runtime and running a chapter's suite, with live events,
 * and stopping everything cleanly when the grader is told to stop. */
#ifndef GRADER_RUN_H
#define GRADER_RUN_H

#include <signal.h>

#include "course.h"

/* One test's outcome, read back from the suites' JSON Lines report (grader/harness/report.c). */
struct result {
    char test[96];
    char description[160];
    int passed;
    double seconds;
    char *message; /* the first failed assertion's message, or NULL */
};

#define MAX_TESTS 64

struct chapter_run {
    const struct chapter *ch;
    int built;       /* 0: the build failed (the compiler's words are in build_log) */
    int interrupted; /* the grader was told to stop (Ctrl-C, SIGTERM) */
    int skipped;     /* a chapter that "requires" what this machine lacks; build_log says what */
    int missing;     /* built, but the suite could not start (build_log says why): not a
                        compiler error of the learner's */
    char *build_log;
    char *warnings; /* the compiler's warnings on the learner's own files: "file:line: what"
                       lines, each once; NULL when there is none */
    int total; /* tests the suite announced */
    int n;
    struct result results[MAX_TESTS];
};

/* Where each chapter's code comes from: IMPL, plus chapters taken from the reference (REF) or
 * from fresh stubs (STUB), exactly as the Makefile's variables. */
struct variant {
    const char *impl; /* "learner" or "solutions" */
    char ref[128];    /* "1.1 1.2" */
    char stub[32];    /* "1.3" */
    int strict;       /* warnings are errors */
    char mutant[96];  /* "2.2/oneshot-no-done": the reference with that predicted mistake
                         (MUTANT=, grader/chapters/2.2/mutants/oneshot-no-done.patch) */
    int fail_fast;    /* the suite stops at its first failed test (Criterion's --fail-fast) */
    char filter[640]; /* only these tests run: Criterion's --filter pattern,
                         "ch2_2/@(oneshot_large_count|ring_large_count)"; "" for all */
};

/* Called as a run goes: phase is "build" (total 0), then "run" (total = the suite's tests);
 * test once per finished test, in the order they finish. Either may be NULL. */
struct run_events {
    void (*phase)(void *ctx, const struct chapter *ch, const char *phase, int total);
    void (*test)(void *ctx, const struct chapter *ch, const struct result *r, int done, int total);
    void *ctx;
};

/* Builds the variant's PE programs and runs the chapter's suite against them. Returns 0 when
 * every test passed. */
int chapter_run(const struct course *c, const struct chapter *ch, const struct variant *v,
                struct chapter_run *out, const struct run_events *ev);
void chapter_run_free(struct chapter_run *r);
int run_passed(const struct chapter_run *r);
int run_points(const struct chapter_run *r, int *max);

/* Runs argv in the course root with extra environment entries ("K=V", NULL-terminated);
 * stdout and stderr together go to *output (if not NULL). Returns the exit status (128+N for
 * signal N), or -1 if it could not start. */
int run_command(const struct course *c, char *const argv[], const char *const *env, char **output);
/* run_command in two halves, for commands that may run side by side: run_start starts argv
 * (its output into a temporary file); run_finish waits for it and returns what run_command
 * would. */
struct started_command {
    pid_t pid; /* -1: it could not start */
    int fd;
};
void run_start(const struct course *c, char *const argv[], const char *const *env,
               struct started_command *s);
int run_finish(struct started_command *s, char **output);
int run_quiet(const struct course *c, char *const argv[], char **output);
/* "-jN", N the cores online: every build of the grader runs on every core (with
 * --output-sync=target, so that each file's messages stay together). */
const char *make_jobs(void);
/* make -s TARGET IMPL=.. REF=.. STUB=.. STRICT=.. in the course root, on every core; TARGET
 * may name several targets, separated by spaces. */
int run_make(const struct course *c, const struct variant *v, const char *target, char **out);
/* Generates build/stubs/ (make stubs) once per process; 0 when they are there. */
int ensure_stubs(const struct course *c);

/* Set by the handlers of stop_on_signals(): SIGINT, SIGTERM, SIGHUP. Runs in progress stop
 * their process groups and return with interrupted set; nothing is left running. */
extern volatile sig_atomic_t grader_stop;
void stop_on_signals(void);
/* 128 + the signal that stopped us (130 for Ctrl-C), for the exit status. */
int stop_status(void);

#endif
