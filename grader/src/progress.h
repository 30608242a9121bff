/* progress.h: the learner's progress, in one file in the course root (.tshmem-progress.json, or
 * $TSHMEM_PROGRESS): tests passed, points, hints used, chapters read, best benchmark ratios,
 * study sessions.
 *
 * The file is JSON, written atomically (temp file, fsync, rename). Every change is made under a
 * lock (flock on the file's folder) on a freshly read copy, so that the dashboard and a test run
 * it started never undo each other's changes. A file that cannot be read (truncated, edited by
 * hand into invalid JSON, written by a newer grader) is kept aside under a name that says so,
 * and progress starts afresh with a sentence that says what happened.
 *
 *   {"version": 1,
 *    "chapters": {"1.3": {"tests": {"put_every_size_to_every_pe": true, ...},
 *                         "passed": 5, "total": 7, "points": 9, "max_points": 14,
 *                         "done": false, "ever_done": true, "regressed": true,
 *                         "ref_deps": false, "ref_pass": false,
 *                         "fingerprint": "9f..", "last_run": "2026-..",
 *                         "hints_used": 2, "read": true,
 *                         "bench": {"vs_mpi": 1.31, "vs_ref": 0.92, "op": "allreduce", ..}}},
 *    "session": {"goal": "..", "start": "..", "snapshot": {..}},    (while one is open)
 *    "sessions": [{"goal", "start", "end", "chapters_done", "tests_fixed", "hints_used"}, ..]}
 */
#ifndef GRADER_PROGRESS_H
#define GRADER_PROGRESS_H

#include <jansson.h>
#include <stdint.h>

#include "code.h"
#include "course.h"
#include "run.h"

struct progress {
    char path[PATH_MAX];
    json_t *doc;
    char note[10000]; /* what happened to a broken file, or "" */
    int lock_fd;      /* >= 0 while locked */
    int keep;         /* the file exists but could not be read or kept aside: never replace it */
};

/* Reads the progress file (a fresh start when it is missing or broken: see note). With
 * `lock`, holds the lock until progress_close, for a read-modify-write. Never fails: at worst
 * the progress is empty and note says why. */
void progress_open(struct progress *p, const struct course *c, int lock);
/* Writes it back atomically, with the mode the file had. Returns 0, or -1 after printing why
 * (the old file is unchanged): also when the file is read-only (no write bit for its owner),
 * or exists but could not be read (note said so), for a file that cannot be read is never
 * replaced. */
int progress_save(struct progress *p);
void progress_close(struct progress *p);

/* The chapter's object, created when `create`; NULL when absent. */
json_t *progress_chapter(struct progress *p, const char *id, int create);
int pg_int(json_t *obj, const char *key);     /* 0 when absent or not a number */
double pg_real(json_t *obj, const char *key); /* 0 when absent or not a number */
int pg_bool(json_t *obj, const char *key);    /* 0 when absent or not true */

/* Records a run of the learner's code (grader test). */
void progress_record_run(struct progress *p, const struct chapter_run *r, uint64_t fingerprint,
                         int ref_deps);

enum chapter_status { ST_TODO, ST_PROGRESS, ST_DONE };
/* done: the last run passed every test; in progress: a test passes, the code was edited, or a
 * re-check found a regression; to do: nothing yet. */
enum chapter_status progress_status(json_t *chp, struct code_info code);
const char *status_emoji(enum chapter_status st); /* the card's ✅ 🚧 ⬜ */
const char *status_word(enum chapter_status st);  /* "done", "in progress", "to do" */

/* Takes the next hint of the chapter: its index (0-based), or -1 when every hint is shown. */
int progress_take_hint(struct progress *p, const struct chapter *ch);

#endif
