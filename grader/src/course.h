/* course.h: the course's metadata (grader/course.json) and the grader's shared helpers. */
#ifndef GRADER_COURSE_H
#define GRADER_COURSE_H

#include <stddef.h>

struct chapter {
    char id[8];       /* "1.3" */
    int week;
    char dir[64];     /* "week1/03-put-get" */
    char title[96];
    char suite[32];   /* "suite_1_3", empty when the chapter is not available yet */
    char book[96];
    int available;
};

struct course {
    char root[4096];  /* the course's top directory */
    int n;
    struct chapter chapters[32];
};

/* Loads grader/course.json from the course root ($TSHMEM_ROOT, or two levels above the grader
 * binary). Prints a sentence and returns -1 on any problem. */
int course_load(struct course *c, const char *argv0);
const struct chapter *course_find(const struct course *c, const char *id);

/* One test's outcome, read back from the suites' JSON Lines report. */
struct result {
    char test[96];
    int passed;
    double seconds;
    char *message;    /* the first failed assertion's message, or NULL */
};

struct chapter_run {
    const struct chapter *ch;
    int built;        /* 0: the build failed (the compiler's words are in build_log) */
    char *build_log;
    int n;
    struct result results[64];
};

/* Where each chapter's code comes from: IMPL, plus chapters taken from the reference (REF) or
 * from fresh stubs (STUB), exactly as the Makefile's variables. */
struct variant {
    const char *impl;  /* "learner" or "solutions" */
    char ref[128];     /* "1.1 1.2" */
    char stub[32];     /* "1.3" */
    int strict;        /* warnings are errors */
};

/* Builds the variant's PE programs and runs the chapter's suite against them. */
int chapter_run(const struct course *c, const struct chapter *ch, const struct variant *v,
                struct chapter_run *out);
void chapter_run_free(struct chapter_run *r);
int run_command(const struct course *c, char *const argv[], const char *const *env, char **output);

#endif
