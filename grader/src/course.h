/* course.h: the course's metadata, read from grader/course.json, the one file that describes
 * every chapter.
 *
 * The schema (every key but id, week, dir and title is optional; unknown keys are ignored, so
 * that a chapter can carry more than this grader reads):
 *   "title"      the course's name, shown on the dashboard and the progress card
 *   "chapters"   in roadmap order, each an object:
 *     "id"         "1.3": the roadmap id that every command takes
 *     "week"       1
 *     "dir"        "week1/1.3-put-get": where the learner's files of the chapter live
 *     "title"      "One-sided put/get"
 *     "available"  true once the chapter has files, a suite and a page; false: "coming"
 *     "suite"      "suite_1_3": the Criterion suite (grader/chapters/1.3/suite_1_3.c)
 *     "book"       "book/1.3-put-get.md": the chapter's page (grader read)
 *     "files"      ["rma.c"]: the files the learner writes, inside dir (Code column, reset,
 *                  watch, and the regression check)
 *     "depends"    ["1.1", "1.2"]: earlier chapters whose code this chapter's tests run; --ref-deps
 *                  takes them from the reference, and a change to their files re-checks them
 *     "hints"      ["a nudge", "more specific", "nearly the answer"]: grader hint shows one more
 *                  each call
 *     "points"     {"test_name": 3}: points of a test; a test not named here is worth 1. It
 *                  names the tests in teaching order (the order of the chapter's tasks,
 *                  simplest first), every test, so that results are shown in that order
 *     "requires"   "2 GPUs + NVSHMEM": the chapter runs only on such a machine (tools/gpu-test
 *                  instead of a Criterion suite); elsewhere its tests are reported as skipped,
 *                  with the reason, and it is optional: "N of M chapters done" leaves it out
 * A chapter has a benchmark when grader/bench/bench_<id with _>.c exists (bench_2_2.c). */
#ifndef GRADER_COURSE_H
#define GRADER_COURSE_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>

#define MAX_CHAPTERS 40
#define MAX_FILES    12
#define MAX_DEPENDS  16
#define MAX_HINTS    8

struct chapter {
    char id[8]; /* "1.3" */
    int week;
    char dir[64]; /* "week1/1.3-put-get" */
    char title[96];
    char suite[32]; /* "suite_1_3", empty when the chapter is not available yet */
    char book[96];
    int available;
    int nfiles;
    char files[MAX_FILES][48];
    int ndepends;
    char depends[MAX_DEPENDS][8];
    int nhints;
    const char *hints[MAX_HINTS]; /* point into course.doc */
    json_t *points;               /* {"test": N} or NULL; owned by course.doc */
    char requires[64];            /* "2 GPUs + NVSHMEM", or empty: runs anywhere */
};

struct course {
    char root[PATH_MAX]; /* the course's top directory */
    char title[96];
    int n;
    struct chapter chapters[MAX_CHAPTERS];
    json_t *doc; /* the parsed file, kept for the strings above */
};

/* Loads grader/course.json from the course root ($TSHMEM_ROOT, or two levels above the grader
 * binary) and checks it. Prints a sentence and returns -1 on any problem. */
int course_load(struct course *c, const char *argv0);
/* The same from a given root and file; errors go into err (a sentence) instead of stderr. */
int course_load_file(struct course *c, const char *root, const char *path, char *err,
                     size_t errlen);
void course_free(struct course *c);

const struct chapter *course_find(const struct course *c, const char *id);
int course_index(const struct course *c, const struct chapter *ch);
/* Points of a test of the chapter: its "points" entry, else 1. */
int chapter_points(const struct chapter *ch, const char *test);
/* Where a test comes in the chapter's teaching order: its place in "points" (which names the
 * tests in the order of the chapter's tasks, simplest first); a test it does not name comes
 * after those it does (MAX_TESTS_RANK). */
#define MAX_TESTS_RANK 1000
int chapter_test_rank(const struct chapter *ch, const char *test);
/* What a chapter is worth before its first run: the tests of its suite's source and their
 * points; where that source cannot be read, the tests "points" names. Returns the test count. */
int chapter_declared(const struct course *c, const struct chapter *ch, int *points);
/* The chapters a selector names: "1.3", "week1" or "all" (available ones only), in roadmap
 * order. Returns how many, or -1 after printing (as `cmd`) why it names none. */
int course_select(const struct course *c, const char *cmd, const char *sel,
                  const struct chapter **out);
/* The chapter an id names, or NULL after saying why (as `command`). */
const struct chapter *chapter_arg(const struct course *c, const char *command, const char *id);
/* The chapter a learner is on: the first available one not done (in the progress file), else
 * the last available. */
const struct chapter *current_chapter(const struct course *c);
/* Every chapter that ch depends on, directly or through others, in roadmap order, then ch. */
int chapter_closure(const struct course *c, const struct chapter *ch, const struct chapter **out);

/* Where a chapter's benchmark source would be (grader/chapters/2.2/bench_2_2.c); 1 if it exists. */
int chapter_bench_source(const struct course *c, const struct chapter *ch, char *path, size_t len);

#endif
