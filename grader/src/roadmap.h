/* roadmap.h: one row per chapter, from the metadata, the learner's files and the progress file:
 * what the dashboard, the summary and the progress card show. */
#ifndef GRADER_ROADMAP_H
#define GRADER_ROADMAP_H

#include "code.h"
#include "course.h"
#include "progress.h"

struct roadmap_row {
    const struct chapter *ch;
    enum chapter_status status;
    struct code_info code;
    int ran; /* the tests ran at least once */
    int built;
    int passed, total, points, max_points;
    int regressed, ref_deps, hints_used, read;
    int ref_pass; /* not done, but it passed with the reference's earlier chapters (--ref-deps) */
    int has_bench;         /* grader/bench/bench_X_Y.c exists */
    int changed;           /* the course's tests for it changed since its last run */
    int run_total, run_max_points; /* what that last run counted */
    double vs_mpi, vs_ref; /* best speed ratios, 0 when never measured */
    char last_run[32];     /* when its tests last ran ("2026-11-21T15:30:00"), or "" */
};

/* A row read from the progress file, against the tests the chapter's suite declares now. Not
 * run yet: those are its totals. Run, but the suite has changed since (a course update added or
 * removed tests): the row counts what is declared now, sets `changed`, and a chapter done before
 * shows as in progress until its tests run again. */
void roadmap_reconcile(struct roadmap_row *r, int declared, int declared_points);

/* Fills rows[0 .. c->n-1]. Generates the stubs first (for the Code column). */
void roadmap_rows(const struct course *c, struct progress *p, struct roadmap_row *rows);

/* Column texts, in buffers of at least 32 bytes. */
const char *row_test(const struct roadmap_row *r, char *buf);   /* "5/7", "-" */
const char *row_points(const struct roadmap_row *r, char *buf); /* "9/14", "" */
const char *row_perf(const struct roadmap_row *r, char *buf);   /* "1.31x MPI", "-" */

struct roadmap_totals {
    int available, done, points, max_points, hints, passed, total;
};
struct roadmap_totals roadmap_sum(const struct course *c, const struct roadmap_row *rows);

/* The optional chapters (those that need hardware: the GPU chapters), which the totals leave
 * out: their ids, "3.3 and 3.7", in ids; "3.3 needs 2 GPUs + NVSHMEM, 3.7 needs ..." in needs (may be
 * NULL). Returns how many there are. */
int roadmap_optional(const struct course *c, char *ids, size_t len, char *needs, size_t nlen);

#endif
