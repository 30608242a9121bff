/* mutants.h: a chapter's predicted mistakes, as patches of its reference
 * (grader/chapters/X.Y/mutants/NAME.patch), and the run that proves its suite catches each. */
#ifndef GRADER_MUTANTS_H
#define GRADER_MUTANTS_H

#include <limits.h>

#include "course.h"

#define MUTANT_EXPECTS 4
#define MUTANT_TESTS 6

/* One patch and its header lines (mistake:, page:, tests:, expect:, which patch itself
 * skips). */
struct mutant {
    const struct chapter *ch;
    char name[64];          /* "oneshot-no-done" */
    char path[PATH_MAX];    /* "grader/chapters/2.2/mutants/oneshot-no-done.patch" (relative) */
    char mistake[256];
    char page[160];
    char expect[MUTANT_EXPECTS][160]; /* each must be in the failed test's message */
    int nexpect;
    char tests[MUTANT_TESTS][96]; /* the suite's tests that catch it (tests: a b), as the page
                                     names them: only these run */
    int ntests;
    int tries;         /* tries: N (1 to 5, default 1): a race that its tests catch on most
                          runs, not on every one; they run up to N times */
    char suite[32];    /* the Criterion suite's name, "ch2_2" ("" for a GPU chapter) */
    char problem[256]; /* what is wrong with the file itself, or "" */
};

/* The mutants of a chapter, sorted by name, into a malloc'd array (*out; NULL when none).
 * Returns how many. */
int mutants_of(const struct course *c, const struct chapter *ch, struct mutant **out);

/* What became of one mutant. */
struct mutant_verdict {
    int caught;     /* 1: a test failed in time, naming it */
    int skipped;    /* 1: its chapter cannot run here (GPUs, PyTorch): detail says why */
    double seconds; /* the catching test's, or the run's */
    char test[96];  /* the test that caught it */
    int run;        /* on which of the mutant's tries (1 unless it has tries: N) */
    int full;       /* 1: the whole suite ran too (the tests it names did not catch it) */
    char *detail;   /* for a person: why it was not caught, or the catching message's head */
};

/* Runs every mutant in list, `parallel` at a time (each one build of the variant and one run
 * of the chapter's suite), calling done() in the parent as each ends, in the order they end. */
void mutants_run(const struct course *c, const struct mutant *list, int n, int parallel,
                 void (*done)(void *ctx, const struct mutant *m, const struct mutant_verdict *v),
                 void *ctx);

/* Why the mutants of this chapter cannot run on this machine (a GPU chapter without GPUs, a
 * chapter that needs PyTorch without it), or NULL. Caller frees. */
char *mutants_skip_reason(const struct course *c, const struct chapter *ch);

/* Whether the patch still applies to the reference (patch --dry-run): NULL if it does, else
 * what patch said (caller frees). For the mutants that cannot run here. */
char *mutant_stale(const struct course *c, const struct mutant *m);

#endif
