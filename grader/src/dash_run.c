/* dash_run.c: the dashboard's view of a run: the child's JSON lines (grader test --json) or
 * plain text (grader bench), read as they come, into the chapter's pane; and the overview a
 * chapter's pane shows before any run. */
#define _GNU_SOURCE
#include <curses.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dash_draw.h"
#include "dash_run.h"
#include "outline.h"
#include "util.h"

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static int num(json_t *o, const char *key)
{
    return (int)json_integer_value(json_object_get(o, key));
}

static void pane_line(void *ctx, enum outline_style style, const char *text)
{
    static const enum pane_style map[] = {[OL_TEXT] = P_TEXT, [OL_HEAD] = P_HEAD,
                                          [OL_PASS] = P_PASS, [OL_FAIL] = P_FAIL,
                                          [OL_NOTE] = P_NOTE};
    pane_add(ctx, map[style], "%s", text);
}

/* At the chapter's end its tests, shown as they finished, are drawn again in the chapter's
 * order, grouped as `grader test` shows them (chapter_end's "tests"). */
static void redraw_tests(struct dash *d, struct pane *p, json_t *o)
{
    json_t *tests = json_object_get(o, "tests"), *t;
    const struct chapter *ch = course_find(d->c, str(o, "chapter"));
    size_t i;
    if (!ch || !json_is_array(tests) || d->mark > p->n)
        return;
    static struct result r[MAX_TESTS];
    int n = 0;
    json_array_foreach(tests, i, t)
    {
        if (n == MAX_TESTS)
            break;
        struct result *x = &r[n++];
        snprintf(x->test, sizeof x->test, "%s", str(t, "test"));
        snprintf(x->description, sizeof x->description, "%s", str(t, "description"));
        x->passed = json_is_true(json_object_get(t, "passed"));
        x->seconds = json_number_value(json_object_get(t, "seconds"));
        x->message = (char *)(*str(t, "message") ? str(t, "message") : NULL);
    }
    for (int k = d->mark; k < p->n; k++)
        free(p->lines[k].text);
    p->n = d->mark;
    if (outline_results(ch, r, n, 0, pane_line, p))
        pane_add(p, P_DIM, "  (grader test %s --verbose in a shell shows every test's own "
                 "message in full)", ch->id);
}

static void event(struct dash *d, struct pane *p, json_t *o)
{
    const char *ev = str(o, "event");
    if (!strcmp(ev, "chapter")) {
        pane_add(p, P_HEAD, "%s%s %s  (%s%s)",
                 json_is_true(json_object_get(o, "recheck")) ? "re-check: " : "", str(o, "chapter"),
                 str(o, "title"), str(o, "dir"),
                 json_is_true(json_object_get(o, "ref_deps"))
                     ? ", earlier chapters from the reference"
                     : "");
        d->mark = p->n;
        d->done = d->total = 0;
        snprintf(d->phase, sizeof d->phase, "starting");
    } else if (!strcmp(ev, "phase")) {
        snprintf(d->phase, sizeof d->phase, "%s",
                 !strcmp(str(o, "phase"), "build") ? "building" : "running the tests");
        d->total = num(o, "tests");
    } else if (!strcmp(ev, "test")) {
        int ok = json_is_true(json_object_get(o, "passed")), pts = num(o, "max_points");
        d->done = num(o, "done");
        d->total = num(o, "total");
        char worth[32];
        snprintf(worth, sizeof worth, "%d/%d pt%s", ok ? pts : 0, pts, pts == 1 ? "" : "s");
        pane_add(p, ok ? P_PASS : P_FAIL, "  %s  %-40s %-9s %5.1f s", ok ? "PASS" : "FAIL",
                 str(o, "test"), worth, json_number_value(json_object_get(o, "seconds")));
        if (!ok) {
            char *msg = NULL;
            if (asprintf(&msg, "%s", str(o, "message")) >= 0) {
                for (char *l = msg, *e; *l; l = *e ? e + 1 : e) {
                    e = strchrnul(l, '\n');
                    pane_add(p, P_TEXT, "        %.*s", (int)(e - l), l);
                }
                free(msg);
            }
        }
    } else if (!strcmp(ev, "chapter_end")) {
        if (!strcmp(str(o, "status"), "skipped")) { /* needs hardware this machine lacks */
            pane_add(p, P_NOTE, "  skipped: %s", str(o, "reason"));
        } else if (!json_is_true(json_object_get(o, "built"))) {
            pane_add(p, P_FAIL, "  %s", json_is_true(json_object_get(o, "missing"))
                                             ? "the tests could not start:"
                                             : "the build failed; the compiler said:");
            pane_text(p, P_TEXT, str(o, "build_log"));
        } else {
            if (*str(o, "warnings")) {
                pane_add(p, P_NOTE, "  the compiler warned about your code (it builds, but read "
                                    "these first):");
                pane_text(p, P_NOTE, str(o, "warnings"));
            }
            redraw_tests(d, p, o);
            pane_add(p, P_HEAD, "  %d of %d tests, %d of %d points: %s", num(o, "passed"),
                     num(o, "total"), num(o, "points"), num(o, "max_points"), str(o, "status"));
        }
        if (json_is_true(json_object_get(o, "regressed")))
            pane_add(p, P_FAIL, "  %s passed before and fails now: a change broke it.",
                     str(o, "chapter"));
        else if (json_is_true(json_object_get(o, "ref_pass")))
            pane_add(p, P_NOTE, "  %s passes with the reference's earlier chapters, not yet with "
                                "yours: that pass is kept.",
                     str(o, "chapter"));
        if (*str(o, "blocked_by"))
            pane_add(p, P_NOTE, "  Some tests stopped in chapter %s's unwritten code (%s builds on "
                     "it): finish %s first, or run grader test %s --ref-deps in a shell to take "
                     "the earlier chapters from the reference for now.",
                     str(o, "blocked_by"), str(o, "chapter"), str(o, "blocked_by"),
                     str(o, "chapter"));
    } else if (!strcmp(ev, "recheck")) {
        pane_add(p, P_NOTE, "Re-checking %s: passed before, and the files changed since.",
                 str(o, "chapters"));
    } else if (!strcmp(ev, "summary")) {
        d->got_summary = 1;
        d->run_passed = num(o, "passed");
        d->run_failed = num(o, "failed");
        pane_add(p, P_HEAD, "%d passed, %d failed", d->run_passed, d->run_failed);
    }
}

static void line(struct dash *d, char *text)
{
    struct pane *p = &d->panes[d->run_ch];
    json_t *o = d->run_json && text[0] == '{' ? json_loads(text, 0, NULL) : NULL;
    if (o)
        event(d, p, o);
    else if (text[0])
        pane_add(p, d->run_json ? P_DIM : P_TEXT, "%s", text); /* a note, a crash, bench text */
    json_decref(o);
}

void run_output(struct dash *d)
{
    for (;;) {
        ssize_t n = read(d->run.out_fd, d->buf + d->buflen, sizeof d->buf - d->buflen - 1);
        if (n <= 0)
            break;
        d->buflen += (size_t)n;
        d->buf[d->buflen] = '\0';
        char *start = d->buf, *nl;
        while ((nl = strchr(start, '\n')) != NULL) {
            *nl = '\0';
            line(d, start);
            start = nl + 1;
        }
        d->buflen -= (size_t)(start - d->buf);
        memmove(d->buf, start, d->buflen);
        if (d->buflen == sizeof d->buf - 1) { /* one enormous line: show what we have */
            d->buf[d->buflen] = '\0';
            line(d, d->buf);
            d->buflen = 0;
        }
    }
}

void run_finished(struct dash *d, int status)
{
    struct pane *p = &d->panes[d->run_ch];
    const struct chapter *ch = &d->c->chapters[d->run_ch];
    run_output(d);
    if (d->buflen) {
        d->buf[d->buflen] = '\0';
        line(d, d->buf);
        d->buflen = 0;
    }
    if (d->stopping) {
        pane_add(p, P_NOTE, "Stopped: the run was cancelled, and nothing of it is left running.");
        set_status(d, P_NOTE, "%s: run cancelled", ch->id);
    } else if (status > 128) {
        pane_add(p, P_FAIL,
                 "The run crashed (signal %d, %s). The dashboard is fine: Enter runs "
                 "the tests again.",
                 status - 128, strsignal(status - 128));
        set_status(d, P_FAIL, "%s: the run crashed (signal %d)", ch->id, status - 128);
    } else if (d->run_json && !d->got_summary) {
        pane_add(p, P_FAIL, "The run ended (status %d) before its summary; its words are above.",
                 status);
        set_status(d, P_FAIL, "%s: the run ended early (status %d)", ch->id, status);
    } else if (d->run_json) {
        set_status(d, d->run_failed ? P_FAIL : P_PASS, "%s: %d passed, %d failed%s", ch->id,
                   d->run_passed, d->run_failed,
                   d->run_failed ? ": the messages say which PE saw what" : ": all passed");
    } else {
        set_status(d, P_TEXT, "%s: benchmark finished", ch->id);
    }
    child_close(&d->run);
    d->run_ch = -1;
    d->stopping = 0;
}

void chapter_overview(struct dash *d, int i)
{
    const struct roadmap_row *r = &d->rows[i];
    const struct chapter *ch = r->ch;
    struct pane *p = &d->panes[i];
    char files[512] = "";
    pane_clear(p);
    p->kept = 0;
    if (!ch->available) {
        pane_add(p, P_HEAD, "%s %s", ch->id, ch->title);
        pane_add(p, P_TEXT, "Coming: this chapter is not part of the course yet.");
        return;
    }
    for (int f = 0; f < ch->nfiles; f++)
        appendf(files, sizeof files, "%s%s", f ? ", " : "", ch->files[f]);
    pane_add(p, r->status == ST_DONE ? P_PASS : P_HEAD, "Status: %s", status_word(r->status));
    if (ch->requires[0])
        pane_add(p, P_NOTE, "Optional: it needs %s, and is left out of the chapters done and the "
                            "points.", ch->requires);
    pane_add(p, P_TEXT, "Your files: %s/ (%s): %s", ch->dir, files,
             r->code.state == CODE_STUB      ? "the stub, untouched"
             : r->code.state == CODE_WRITTEN ? "no TODO left"
             : r->code.state == CODE_EDITED  ? "edited, TODOs left"
                                             : "cannot compare with the stub");
    if (r->ran && r->built)
        pane_add(p, r->status == ST_DONE ? P_PASS : P_TEXT,
                 "Last run: %d of %d tests, %d of %d "
                 "points%s.",
                 r->passed, r->changed ? r->run_total : r->total, r->points,
                 r->changed ? r->run_max_points : r->max_points,
                 r->ref_deps ? " (earlier chapters from the reference)" : "");
    else if (r->ran)
        pane_add(p, P_FAIL, "Last run: your code did not build.");
    else
        pane_add(p, P_TEXT, "Its tests have not run yet: press Enter.");
    if (r->changed)
        pane_add(p, P_HEAD, "The course's tests for it have changed since (now %d tests, %d "
                 "points): press Enter to run them.", r->total, r->max_points);
    if (r->regressed)
        pane_add(p, P_FAIL, "It passed before and failed a later re-check: a change broke it.");
    else if (r->ref_pass)
        pane_add(p, P_NOTE, "It passes with the reference's earlier chapters (--ref-deps), not "
                            "yet with yours.");
    pane_add(p, P_TEXT, "Book: %s (r reads it here)%s", ch->book, r->read ? ", read" : "");
    pane_add(p, P_TEXT, "Hints: %d of %d used (h shows the next)", r->hints_used, ch->nhints);
    pane_add(p, P_TEXT, "Benchmark: %s", r->has_bench ? "b runs it" : "none for this chapter yet");
}
