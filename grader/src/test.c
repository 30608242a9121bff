/* test.c: `grader test`: build the learner's code, run the chapters' suites, show each test
 * with its points and its teaching message, record progress, and re-check earlier chapters
 * whose files changed since they passed. */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "code.h"
#include "commands.h"
#include "help.h"
#include "outline.h"
#include "progress.h"
#include "run.h"
#include "util.h"

struct test_opts {
    int json, live, record, ref_deps, stub, verbose;
    struct outline_seen seen; /* unwritten functions shown in this run */
    struct variant v;
    int passed, failed;
    char summary[4096];
};

/* ---- Output: for a person, or one JSON object per line for a program ---------------------- */

static void emit(json_t *o)
{
    char *line = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(4));
    if (line)
        printf("%s\n", line);
    fflush(stdout);
    free(line);
    json_decref(o);
}

static void live_clear(void)
{
    printf("\r\033[K");
    fflush(stdout);
}

static void on_phase(void *ctx, const struct chapter *ch, const char *phase, int total)
{
    struct test_opts *o = ctx;
    if (o->json) {
        emit(json_pack("{s:s, s:s, s:s, s:i}", "event", "phase", "chapter", ch->id, "phase", phase,
                       "tests", total));
    } else if (o->live) {
        live_clear();
        printf("  %s", !strcmp(phase, "build") ? "building..." : "running the tests...");
        fflush(stdout);
    }
}

static void on_test(void *ctx, const struct chapter *ch, const struct result *r, int done,
                    int total)
{
    struct test_opts *o = ctx;
    int pts = chapter_points(ch, r->test);
    if (o->json) {
        emit(json_pack("{s:s, s:s, s:s, s:s, s:b, s:i, s:i, s:f, s:s, s:i, s:i}", "event", "test",
                       "chapter", ch->id, "test", r->test, "description", r->description, "passed",
                       r->passed, "points", r->passed ? pts : 0, "max_points", pts, "seconds",
                       r->seconds, "message", r->message ? r->message : "", "done", done, "total",
                       total));
    } else if (o->live) {
        char bar[21];
        int fill = total > 0 ? 20 * done / total : 0;
        for (int i = 0; i < 20; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[20] = '\0';
        live_clear();
        printf("  [%s] %d/%d tests  (%s %s)", bar, done, total, r->passed ? "passed" : "failed",
               r->test);
        fflush(stdout);
    }
}

static void print_message(const char *msg)
{
    for (const char *p = msg; *p;) {
        size_t len = strcspn(p, "\n");
        if (len)
            printf("        %.*s\n", (int)len, p);
        p += len + (p[len] == '\n');
    }
}

static void print_line(void *ctx, enum outline_style style, const char *text)
{
    (void)ctx;
    (void)style;
    printf("%s\n", text);
}

/* The chapter's tests in teaching order; tests stopped by the same unwritten function under its
 * message, once (all of every test's words with --verbose). */
static void print_run(const struct chapter_run *r, int verbose, struct outline_seen *seen)
{
    if (!r->built) {
        /* a missing suite or PE program is not the learner's compiler error */
        printf("  %s\n", r->missing ? "the tests could not start:" : "the build failed; the compiler said:");
        print_message(r->build_log ? r->build_log : "(nothing)");
        return;
    }
    if (r->warnings) { /* a warning is often the bug: show it above what it causes */
        printf("  the compiler warned about your code (it builds, but read these first):\n");
        print_message(r->warnings);
    }
    if (outline_results_seen(r->ch, r->results, r->n, verbose, print_line, NULL, seen))
        printf("  (grader test %s --verbose shows every test's own message in full)\n",
               r->ch->id);
}

/* The tests of a run in teaching order, for --json: what the dashboard redraws at the end. */
static json_t *json_tests(const struct chapter_run *r)
{
    json_t *a = json_array();
    for (int i = 0; i < r->n; i++) {
        const struct result *t = &r->results[i];
        int pts = chapter_points(r->ch, t->test);
        json_array_append_new(a, json_pack("{s:s, s:s, s:b, s:i, s:i, s:f, s:s}", "test", t->test,
                                           "description", t->description, "passed", t->passed,
                                           "points", t->passed ? pts : 0, "max_points", pts,
                                           "seconds", t->seconds, "message",
                                           t->message ? t->message : ""));
    }
    return a;
}

static const char *run_word(const struct chapter_run *r)
{
    int ok = run_passed(r);
    return !r->built            ? "does not build"
           : ok == r->n && r->n ? "done"
           : ok                 ? "in progress"
                                : "to do";
}

/* ---- One chapter ------------------------------------------------------------------------- */

/* The earliest other chapter whose unwritten code a failing test of this run reached (the stub's
 * message says "is not written yet (chapter X.Y)"), or NULL. */
static const struct chapter *earlier_todo(const struct course *c, const struct chapter_run *r)
{
    static const char said[] = "is not written yet (chapter ";
    const struct chapter *first = NULL;
    for (int i = 0; i < r->n; i++) {
        const char *m = r->results[i].passed ? NULL : r->results[i].message;
        while (m && (m = strstr(m, said)) != NULL) {
            m += sizeof said - 1;
            char id[16];
            size_t len = strcspn(m, ")");
            if (len == 0 || len >= sizeof id)
                continue;
            memcpy(id, m, len);
            id[len] = '\0';
            const struct chapter *ch = course_find(c, id);
            if (ch && ch != r->ch && (!first || course_index(c, ch) < course_index(c, first)))
                first = ch;
        }
    }
    return first;
}

/* Output lines fit 80 columns: a longer one goes on, indented, on the next. */
enum { TEST_WIDTH = 80 };

static void wrapped(int indent, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wrapped(int indent, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    print_wrapped(stdout, text, TEST_WIDTH - 1, indent);
    free(text);
}

/* Spaces after a chapter's title in the summary, so that every row's columns line up under
 * the course's longest title. */
static int title_pad(const struct course *c, const struct chapter *ch)
{
    int longest = 0;
    for (int i = 0; i < c->n; i++)
        if (text_columns(c->chapters[i].title) > longest)
            longest = text_columns(c->chapters[i].title);
    return longest - text_columns(ch->title);
}

/* Runs one chapter, shows it, records it. Returns 1 when every test passed; -1 interrupted. */
static int test_one(const struct course *c, const struct chapter *ch, struct test_opts *o,
                    int recheck)
{
    o->v.ref[0] = '\0';
    o->v.stub[0] = '\0';
    if (o->stub)
        snprintf(o->v.stub, sizeof o->v.stub, "%s", ch->id);
    for (int j = 0; o->ref_deps && &c->chapters[j] != ch; j++)
        appendf(o->v.ref, sizeof o->v.ref, "%s ", c->chapters[j].id);
    if (o->json)
        emit(json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "event", "chapter", "chapter", ch->id,
                       "title", ch->title, "dir", ch->dir, "ref_deps", o->v.ref[0] != '\0',
                       "recheck", recheck));
    else
        printf("\n%s %s  (%s%s)\n", ch->id, ch->title, ch->dir,
               o->v.ref[0] ? ", earlier chapters from the reference" : "");
    fflush(stdout);
    uint64_t fp = chapter_fingerprint(c, ch);
    struct chapter_run r;
    struct run_events ev = {on_phase, on_test, o};
    chapter_run(c, ch, &o->v, &r, &ev);
    if (o->live)
        live_clear();
    if (r.interrupted) {
        chapter_run_free(&r);
        return -1;
    }
    if (r.skipped) { /* neither passed nor failed, and nothing recorded */
        if (o->json)
            emit(json_pack("{s:s, s:s, s:s, s:s}", "event", "chapter_end", "chapter", ch->id,
                           "status", "skipped", "reason", r.build_log ? r.build_log : ""));
        else
            wrapped(4, "  skipped: %s", r.build_log ? r.build_log : "");
        appendf(o->summary, sizeof o->summary, "  %-4s %s%*s skipped: %s\n", ch->id, ch->title,
                title_pad(c, ch), "", r.build_log ? r.build_log : "");
        chapter_run_free(&r);
        return 0;
    }
    int ok = run_passed(&r), total = r.built ? r.n : 0, max = 0, pts = run_points(&r, &max);
    int regressed = 0, ref_pass = 0, done = r.built && total > 0 && ok == total;
    if (o->record) {
        struct progress p;
        progress_open(&p, c, 1);
        int was_regressed = pg_bool(progress_chapter(&p, ch->id, 0), "regressed");
        progress_record_run(&p, &r, fp, o->v.ref[0] != '\0');
        json_t *chp = progress_chapter(&p, ch->id, 0);
        regressed = pg_bool(chp, "regressed") && !was_regressed; /* broke in this very run */
        ref_pass = !done && !o->v.ref[0] && pg_bool(chp, "ref_pass");
        progress_save(&p);
        progress_close(&p);
    }
    const struct chapter *before = o->v.ref[0] ? NULL : earlier_todo(c, &r);
    if (o->json) {
        emit(json_pack("{s:s, s:s, s:b, s:b, s:s?, s:s?, s:i, s:i, s:i, s:i, s:s, s:b, s:b, s:s?, s:o}",
                       "event", "chapter_end", "chapter", ch->id, "built", r.built, "missing",
                       r.missing, "build_log",
                       r.built ? NULL : r.build_log, "warnings", r.warnings, "passed", ok, "total", total, "points", pts,
                       "max_points", max, "status", run_word(&r), "regressed", regressed,
                       "ref_pass", ref_pass, "blocked_by", before ? before->id : NULL, "tests",
                       json_tests(&r)));
    } else {
        print_run(&r, o->verbose, &o->seen);
        if (r.built)
            printf("  %d of %d tests, %d of %d points\n", ok, total, pts, max);
        if (before)
            printf("  Some tests stopped in chapter %s's unwritten code (%s builds on it): finish "
                   "%s first,\n  or take the earlier chapters from the reference for now: "
                   "grader test %s --ref-deps\n",
                   before->id, ch->id, before->id, ch->id);
        if (regressed)
            wrapped(2, "  %s passed before and fails now: a change broke it, so it is back to in "
                       "progress. The failures above say where.",
                    ch->id);
        else if (ref_pass)
            wrapped(2, "  %s passes with the reference's earlier chapters (grader test %s "
                       "--ref-deps), not yet with yours: that pass is kept.",
                    ch->id, ch->id);
    }
    o->passed += ok;
    o->failed += r.built ? total - ok : 1;
    if (!r.built) /* what the chapter is worth, from its suite: the totals a build would run */
        total = chapter_declared(c, ch, &max);
    appendf(o->summary, sizeof o->summary, "  %-4s %s%*s %2d/%-2d %3d/%-3d pts  %s%s\n", ch->id,
            ch->title, title_pad(c, ch), "", ok, total, pts, max, run_word(&r), regressed ? " (it passed before)"
                                                          : ref_pass ? " (passes with the reference's chapters)"
                                                          : !r.built && !r.missing
                                                              ? ": fix the compiler's first error above"
                                                              : "");
    chapter_run_free(&r);
    return done;
}

/* Earlier chapters that passed, whose files (theirs and their dependencies') changed since. */
static int stale_chapters(const struct course *c, const struct chapter **sel, int n,
                          const struct chapter **out)
{
    struct progress p;
    progress_open(&p, c, 0);
    int last = course_index(c, sel[n - 1]), k = 0;
    for (int i = 0; i < last; i++) {
        const struct chapter *ch = &c->chapters[i];
        int selected = 0;
        for (int j = 0; j < n; j++)
            selected |= sel[j] == ch;
        json_t *chp = progress_chapter(&p, ch->id, 0);
        if (selected || !ch->available || !pg_bool(chp, "done"))
            continue;
        const char *was = json_string_value(json_object_get(chp, "fingerprint"));
        char now[32];
        snprintf(now, sizeof now, "%016llx", (unsigned long long)chapter_fingerprint(c, ch));
        if (!was || strcmp(was, now) != 0)
            out[k++] = ch;
    }
    progress_close(&p);
    return k;
}

static int parse(int argc, char **argv, struct test_opts *o, const char **sel)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--ref-deps"))
            o->ref_deps = 1;
        else if (!strcmp(argv[i], "--json"))
            o->json = 1;
        else if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v"))
            o->verbose = 1;
        else if (!strcmp(argv[i], "--impl") && i + 1 < argc)
            o->v.impl = argv[++i];
        else if (!strcmp(argv[i], "--stub"))
            o->stub = 1;
        else if (argv[i][0] != '-' && !*sel)
            *sel = argv[i];
        else
            return bad_argument("test", argv[i]);
    }
    if (strcmp(o->v.impl, "learner") && strcmp(o->v.impl, "solutions")) {
        fprintf(stderr, "grader test: --impl is learner or solutions, not '%s'.\n", o->v.impl);
        return 2;
    }
    return 0;
}

int cmd_test(const struct course *c, int argc, char **argv)
{
    if (wants_help("test", argc, argv))
        return 0;
    const char *sel = NULL;
    struct test_opts o = {.v = {.impl = "learner", .strict = getenv("CI") != NULL}};
    int rc = parse(argc, argv, &o, &sel);
    if (rc)
        return rc;
    o.live = !o.json && isatty(1) && !getenv("NO_PROGRESS");
    o.record = !strcmp(o.v.impl, "learner") && !o.stub; /* maintainers' runs are not progress */
    const struct chapter *chs[MAX_CHAPTERS], *stale[MAX_CHAPTERS];
    const struct chapter *cur = sel ? NULL : current_chapter(c);
    if (!sel && cur && !o.json) /* the one a learner is on, not all 17 (grader test all) */
        wrapped(0, "Chapter %s is the one you are on (the first not done yet); grader test all "
                   "runs every chapter.",
                cur->id);
    int n = course_select(c, "test", sel ? sel : cur ? cur->id : "all", chs);
    if (n < 0)
        return 2;
    stop_on_signals();
    int interrupted = 0, nstale = 0;
    for (int i = 0; i < n && !interrupted; i++)
        interrupted = test_one(c, chs[i], &o, 0) < 0;
    if (!interrupted && o.record && (nstale = stale_chapters(c, chs, n, stale)) > 0) {
        char list[256] = "";
        for (int i = 0; i < nstale; i++)
            appendf(list, sizeof list, "%s%s", i ? (i == nstale - 1 ? " and " : ", ") : "",
                    stale[i]->id);
        if (o.json)
            emit(json_pack("{s:s, s:s}", "event", "recheck", "chapters", list));
        else
            printf("\nRe-checking %s: %s passed before, and your files changed since.\n", list,
                   nstale == 1 ? "it" : "they");
        for (int i = 0; i < nstale && !interrupted; i++)
            interrupted = test_one(c, stale[i], &o, 1) < 0;
    }
    if (interrupted) {
        if (o.json)
            emit(json_pack("{s:s}", "event", "interrupted"));
        else
            printf("\nStopped: the tests were interrupted, and nothing of them is left "
                   "running.\n");
        return stop_status();
    }
    if (o.json) {
        emit(json_pack("{s:s, s:i, s:i}", "event", "summary", "passed", o.passed, "failed",
                       o.failed));
        return o.failed ? 1 : 0;
    }
    char next[1100];
    printf("\nSummary\n");
    for (char *l = o.summary, *e; *l; l = *e ? e + 1 : e) { /* a long row goes on, indented */
        e = strchrnul(l, '\n');
        wrapped(7, "%.*s", (int)(e - l), l);
    }
    if (o.failed)
        wrapped(0, "Read a failing test's message, then the chapter's page (grader read), or ask "
                   "for a hint (grader hint).");
    printf("%d passed, %d failed\n", o.passed, o.failed);
    if (o.failed && outline_next(&o.seen, next, sizeof next)) /* the one next step */
        printf("Next: %s\n", next);
    return o.failed ? 1 : 0;
}
