/* outline.h: a chapter's results as a learner reads them. Tests come in teaching order (the
 * order of the chapter's tasks: grader/course.json's "points" names them in that order), and the
 * tests that stopped in the same unwritten function (a stub's TSHMEM_TODO) are listed, one line
 * each, under that function's message, shown once: the first such message is what to write
 * first. With verbose, every test is shown alone with everything it said. The terminal (grader
 * test) and the dashboard draw the same outline. */
#ifndef GRADER_OUTLINE_H
#define GRADER_OUTLINE_H

#include <stddef.h>

#include "run.h"

enum outline_style { OL_TEXT, OL_HEAD, OL_PASS, OL_FAIL, OL_NOTE };

typedef void (*outline_fn)(void *ctx, enum outline_style style, const char *text);

/* Sorts results into the chapter's teaching order. */
void outline_sort(const struct chapter *ch, struct result *r, int n);

/* The message of the unwritten function a failed test stopped in, as the stub printed it
 * ("f() is not written yet (chapter X.Y)." then its task:, where: and read: lines, without the
 * "tshmem: PE n:" prefix), into buf. Returns 1 when msg holds one, else 0. */
int outline_todo(const char *msg, char *buf, size_t len);

/* Calls emit once per line of the outline of r (in the order given: sort them first). Returns
 * 1 when some test's words were left out (a test stopped in a function whose message is shown
 * once); verbose leaves nothing out. */
int outline_results(const struct chapter *ch, const struct result *r, int n, int verbose,
                    outline_fn emit, void *ctx);

/* What a run of several chapters has shown already: an unwritten function's message is shown
 * in full once per run (a later chapter that stops in it names it in one line), and the first
 * one is the run's next step. */
#define OUTLINE_SEEN_MAX 32
struct outline_seen {
    int n;
    char todo[OUTLINE_SEEN_MAX][1024];
};
/* outline_results, remembering in seen (which may be NULL) what it showed. */
int outline_results_seen(const struct chapter *ch, const struct result *r, int n, int verbose,
                         outline_fn emit, void *ctx, struct outline_seen *seen);
/* "week1/1.1-init/init.c:18, chapter 1.1, section \"Bootstrap\"": where the first message
 * seen says to write, into buf. Returns 1, or 0 when nothing unwritten was seen. */
int outline_next(const struct outline_seen *seen, char *buf, size_t len);

#endif
