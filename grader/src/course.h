/* course.h: the course's metadata, read from grader/course.json, the one file that describes
 * every chapter.
 *
 * The schema (every key but id, slug and title is optional; unknown keys are ignored, so
 * that a chapter can carry more than this grader reads):
 *   "title"      the course's name, shown on the dashboard and the progress card
 *   "chapters"   in roadmap order, each an object:
 *     "id"         "1.3": the roadmap id that every command takes (week.number, one digit each)
 *     "slug"       "put-get": with the id, the name of every place of the chapter (chapter_path):
 *                  week1/1.3-put-get/, book/1.3-put-get.md, grader/chapters/1.3/suite_1_3.c ...
 *     "title"      "One-sided put/get" (the page's first line is "# 1.3 One-sided put/get")
 *     "available"  true once the chapter has files, a suite and a page; false: "coming"
 *     "kind"       "c" (the default: its sources go into libtshmem), "gpu" (CUDA + NVSHMEM,
 *                  built by make gpu, graded by tools/gpu-test) or "python" (3.6's module)
 *     "files"      ["rma.c"]: the files the learner writes, inside its folder (Code column,
 *                  reset, watch, and the regression check)
 *     "depends"    ["1.1", "1.2"]: earlier chapters whose code this chapter's tests run; --ref-deps
 *                  takes them from the reference, and a change to their files re-checks them
 *     "also_runs"  ["2.4"]: chapters whose PE programs this chapter's suite runs too
 *     "hints"      ["a nudge", "more specific", "nearly the answer"]: grader hint shows one more
 *                  each call
 *     "points"     {"test_name": 3}: points of a test; a test not named here is worth 1. It
 *                  names the tests in teaching order (the order of the chapter's tasks,
 *                  simplest first), every test, so that results are shown in that order
 *     "requires"   "2 GPUs + NVSHMEM": the chapter runs only on such a machine; elsewhere its
 *                  tests are reported as skipped, with the reason, and it is optional: "N of M
 *                  chapters done" leaves it out
 *     "needs"      {"what": "PyTorch", "make": "deps-torch"}: software the chapter needs
 *                  beyond the course's, and the make target that installs it (make weekN runs it)
 *     "gpu"        {"tests": ["bootstrap", ...], "min_gpus": 2, "all_gpus": false}: a GPU
 *                  chapter's test programs, in the order tools/gpu-test runs them, the GPUs it
 *                  needs, and whether it runs one PE per GPU (else two PEs; GPU_PES=N overrides)
 *     "bench_across_nodes" {"link": "1.25GB/s,5us", "op": "overlap_link"}: grader bench runs
 *                  that operation of the benchmark a second time across two virtual nodes
 * A chapter has a benchmark when its bench source exists (chapter_path CH_BENCH_SRC).
 * "dir", "suite", "book" and "week" are not keys: they follow from the id and the slug. */
#ifndef GRADER_COURSE_H
#define GRADER_COURSE_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>

#define MAX_CHAPTERS 40
#define MAX_FILES    12
#define MAX_DEPENDS  16
#define MAX_HINTS    8

enum chapter_kind { KIND_C, KIND_GPU, KIND_PYTHON };

#define MAX_GPU_TESTS 16
#define CHAPTER_PATH_MAX 160 /* any name chapter_path gives, with its final 0 */

struct chapter {
    char id[8];    /* "1.3" */
    char slug[48]; /* "put-get" */
    int week;      /* 1: the id's first digit */
    enum chapter_kind kind;
    /* Filled from the id and slug by chapter_path when the course is read: */
    char dir[64];   /* "week1/1.3-put-get" */
    char suite[32]; /* "suite_1_3" ("test_3_3" for a GPU chapter); empty when not available */
    char book[96];  /* "book/1.3-put-get.md" */
    char title[96];
    int available;
    int nfiles;
    char files[MAX_FILES][48];
    int ndepends;
    char depends[MAX_DEPENDS][8];
    int nhints;
    const char *hints[MAX_HINTS]; /* point into course.doc */
    json_t *points;               /* {"test": N} or NULL; owned by course.doc */
    char requires[64];            /* "2 GPUs + NVSHMEM", or empty: runs anywhere */
    char needs[48], needs_make[32]; /* "PyTorch" and "deps-torch" (make target), or empty */
    int nalso;
    char also_runs[MAX_DEPENDS][8]; /* chapters whose PE programs the suite runs too */
    char bench_link[48], bench_op[48]; /* bench_across_nodes, or empty */
    int ngpu_tests, min_gpus, all_gpus; /* all_gpus: one PE per GPU, else min_gpus PEs */
    char gpu_tests[MAX_GPU_TESTS][32];
};

/* ---- The names of a chapter's places --------------------------------------------------------
 * Every name is derived from the chapter's id and slug here, and nowhere else: the Makefile's
 * lists, the README's roadmap, make help's weeks and book/pages.txt are written from these by
 * tools/update-lists (grader lists --write). Paths are relative to the course root. */
enum chapter_part {
    CH_TAG,          /* "2_2": the id in program names */
    CH_DIR,          /* "week2/2.2-allreduce": the learner's folder (alike in solutions/ and
                        build/stubs/) */
    CH_BOOK,         /* "book/2.2-allreduce.md" */
    CH_PAGE,         /* "2.2-allreduce.md", the page inside book/ */
    CH_GRADING,      /* "grader/chapters/2.2": everything that grades it */
    CH_SUITE,        /* "suite_2_2" (a GPU chapter: "test_3_3", its test program) */
    CH_SUITE_SRC,    /* "grader/chapters/2.2/suite_2_2.c" (GPU: test_3_3.cu) */
    CH_PE,           /* "pe_2_2": the PE program the suite runs */
    CH_PE_SRC,       /* "grader/chapters/2.2/pe_2_2.c" */
    CH_BENCH,        /* "bench_2_2" */
    CH_BENCH_SRC,    /* "grader/chapters/2.2/bench_2_2.c" (GPU: bench_3_3.cu) */
    CH_MAKE_TARGET,  /* "pe-2_2": make's target for everything its suite runs */
};
/* Writes the name into buf and returns buf ("" for an unknown part). */
const char *chapter_path(const struct chapter *ch, enum chapter_part part, char *buf, size_t len);

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
