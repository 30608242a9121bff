/* selftest.c: the course checks itself (`make test`): every suite passes on the reference,
 * every test fails on its chapter's stub, the stubs are fresh and build with -Werror, the
 * Makefile and grader/course.json agree on the chapters, and the grader passes its own unit
 * tests (Criterion, grader/unit/) and end-to-end tests (grader/unit/e2e/: the commands, the
 * dashboard driven in tmux, watch mode). */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "lists.h"
#include "mutants.h"
#include "run.h"
#include "util.h"

static int passed, failed, skipped;

static void check(int ok, const char *what, const char *detail)
{
    printf("  %s  %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok && detail && *detail)
        printf("%s%s", detail, detail[strlen(detail) - 1] == '\n' ? "" : "\n");
    ok ? passed++ : failed++;
}

static void check_command(const struct course *c, const char *what, char *const argv[])
{
    char *out = NULL;
    int status = run_command(c, argv, NULL, &out);
    check(status == 0, what, out);
    free(out);
}

/* The lists that restate course.json (the Makefile's, the README's roadmap, book/pages.txt)
 * must say what it says. */
static void check_metadata(const struct course *c)
{
    char *detail = NULL;
    int stale = lists_check(c, &detail);
    check(stale == 0, "the Makefile, README.md and book/pages.txt list the chapters of grader/course.json",
          detail);
    free(detail);
}

static void check_points(const struct chapter *ch, const struct chapter_run *r)
{
    const char *test;
    json_t *v;
    char what[160], detail[512] = "";
    json_object_foreach(ch->points, test, v)
    {
        int found = 0;
        for (int i = 0; i < r->n; i++)
            found |= !strcmp(r->results[i].test, test);
        if (!found)
            appendf(detail, sizeof detail, "    \"%s\" is not a test of %s\n", test, ch->suite);
    }
    snprintf(what, sizeof what, "%s: grader/course.json's points name tests of its suite", ch->id);
    check(!detail[0], what, detail);
}

/* What course.json says of a chapter holds: its files exist, in weekN/ and solutions/, its
 * page exists, and it has hints. */
/* The folder and the page are named by chapter_path; the page's first line must be the id and
 * the title course.json gives, so that the roadmap, the dashboard and the book say one name. */
static void check_page_title(const struct course *c, const struct chapter *ch)
{
    char path[PATH_MAX], what[200], detail[600], want[128], *text;
    snprintf(want, sizeof want, "# %s %s\n", ch->id, ch->title);
    text = path_format(path, "%s/%s", c->root, ch->book) == 0 ? read_file(path, NULL) : NULL;
    snprintf(what, sizeof what, "%s: %s opens with its id and title", ch->id, ch->book);
    snprintf(detail, sizeof detail, "    the page's first line should be \"%.*s\" (grader/course.json's "
             "\"title\"), and is \"%.*s\"",
             (int)strlen(want) - 1, want, text ? (int)strcspn(text, "\n") : 0, text ? text : "");
    check(text && !strncmp(text, want, strlen(want)), what, detail);
    free(text);
}

static void check_chapter_files(const struct course *c, const struct chapter *ch)
{
    char what[200], detail[1024] = "", path[PATH_MAX];
    for (int f = 0; f < ch->nfiles; f++)
        for (int w = 0; w < 2; w++) {
            if (path_format(path, "%s/%s%s/%s", c->root, w ? "solutions/" : "", ch->dir,
                            ch->files[f]) != 0 ||
                access(path, R_OK) != 0)
                appendf(detail, sizeof detail, "    missing: %s%s/%s\n", w ? "solutions/" : "",
                        ch->dir, ch->files[f]);
        }
    snprintf(what, sizeof what, "%s: the files grader/course.json lists exist", ch->id);
    check(!detail[0], what, detail);
    snprintf(what, sizeof what, "%s: grader/course.json gives it hints", ch->id);
    check(ch->nhints > 0, what,
          "    add \"hints\": [\"a nudge\", \"more specific\", "
          "\"nearly the answer\"]");
    check_page_title(c, ch);
}

/* A chapter's suite must hold at least one test: with none, its reference and its stub would
 * both "pass" the selftest vacuously. Counted in the source, where a Test( opens a line. */
static int suite_has_tests(const struct course *c, const struct chapter *ch)
{
    char path[PATH_MAX], what[300], detail[800], src[CHAPTER_PATH_MAX], pe[CHAPTER_PATH_MAX],
        tag[16], *line = NULL;
    size_t cap = 0;
    int tests = 0;
    chapter_path(ch, CH_SUITE_SRC, src, sizeof src);
    chapter_path(ch, CH_PE_SRC, pe, sizeof pe);
    FILE *f = path_format(path, "%s/%s", c->root, src) == 0 ? fopen(path, "r") : NULL;
    while (f && getline(&line, &cap, f) > 0)
        tests += !strncmp(line, "Test(", 5) || !strncmp(line, "ParameterizedTest(", 18);
    free(line);
    if (f)
        fclose(f);
    snprintf(what, sizeof what, "%s: %s has tests", ch->id, src);
    snprintf(detail, sizeof detail,
             "    %s: write one Test(ch%s, name, .description = \"...\") per behaviour the\n"
             "    learner must get right, each running a scenario of %s on some\n"
             "    PE counts (see suite_3_2.c); a chapter without tests cannot be graded",
             f ? "it has no Test()" : "the file does not exist",
             chapter_path(ch, CH_TAG, tag, sizeof tag), pe);
    check(tests > 0, what, detail);
    return tests > 0;
}

/* tools/new-chapter marks every place it creates with "NEW-CHAPTER:" notes, each saying what to
 * write there; a chapter passes only once none is left. */
static void no_scaffold_left(const struct course *c, const struct chapter *ch)
{
    char pe[CHAPTER_PATH_MAX], bench[CHAPTER_PATH_MAX], suite[CHAPTER_PATH_MAX], sol[128],
        what[160];
    chapter_path(ch, CH_PE_SRC, pe, sizeof pe);
    chapter_path(ch, CH_BENCH_SRC, bench, sizeof bench);
    chapter_path(ch, CH_SUITE_SRC, suite, sizeof suite);
    snprintf(sol, sizeof sol, "solutions/%s", ch->dir);
    char *places[] = {sol, suite, pe, bench, (char *)ch->book},
         *argv[9] = {"grep", "-rnH", "NEW-CHAPTER:"};
    int n = 3;
    for (size_t i = 0; i < sizeof places / sizeof *places; i++) {
        char path[PATH_MAX];
        if (path_format(path, "%s/%s", c->root, places[i]) == 0 && access(path, R_OK) == 0) /* 3.3 has no PE program: grep would fail on it */
            argv[n++] = places[i];
    }
    argv[n] = NULL;
    char *out = NULL;
    int status = run_command(c, argv, NULL, &out);
    snprintf(what, sizeof what, "%s: no note of tools/new-chapter is left", ch->id);
    char *detail = NULL;
    size_t len = 0;
    FILE *d = open_memstream(&detail, &len);
    for (char *l = out, *e; d && l && *l; l = *e ? e + 1 : e) {
        e = strchrnul(l, '\n');
        fprintf(d, "    %.*s\n", (int)(e - l), l);
    }
    if (d)
        fclose(d);
    check(status == 1, what, detail); /* grep: 1 is "no line found" */
    free(detail);
    free(out);
}

/* expect_pass: every test must pass (reference) or every test must fail (stub). */
static void grade(const struct course *c, const struct chapter *ch, const char *stub)
{
    struct variant v = {.impl = "solutions", .strict = 1};
    snprintf(v.stub, sizeof v.stub, "%s", stub);
    struct chapter_run r;
    chapter_run(c, ch, &v, &r, NULL);
    char what[256];
    if (r.skipped) { /* a chapter that needs hardware this machine lacks (3.3: 2 GPUs) */
        printf("  skip  %s %s: %s\n", ch->id, *stub ? "stub" : "reference", r.build_log);
        skipped++;
        chapter_run_free(&r);
        return;
    }
    if (!r.built) {
        snprintf(what, sizeof what, "%s %s builds and its suite runs", ch->id,
                 *stub ? "stub" : "reference");
        check(0, what, r.build_log);
    }
    for (int i = 0; i < r.n; i++) {
        const struct result *t = &r.results[i];
        if (*stub) {
            snprintf(what, sizeof what, "%s %s fails on the stub", ch->id, t->test);
            check(!t->passed, what,
                  "    it passes although the chapter is a stub: the test "
                  "checks nothing the learner writes");
        } else {
            snprintf(what, sizeof what, "%s %s passes on the reference (%.1f s)", ch->id, t->test,
                     t->seconds);
            check(t->passed, what, t->message);
        }
    }
    if (!*stub && r.built) /* a misspelt name in "points" would silently count 1 */
        check_points(ch, &r);
    chapter_run_free(&r);
}

/* The grader's unit tests: one check per Criterion test, from our report hook's JSON Lines. */
static void unit_tests(const struct course *c)
{
    char report[] = "/tmp/tshmem-unit-XXXXXX", env_report[64],
         env_root[sizeof "TSHMEM_ROOT=" + PATH_MAX];
    int fd = mkstemp(report);
    if (fd >= 0)
        close(fd);
    snprintf(env_report, sizeof env_report, "TSHMEM_REPORT=%s", report);
    snprintf(env_root, sizeof env_root, "TSHMEM_ROOT=%s", c->root);
    const char *env[] = {env_report, env_root, NULL};
    char *argv[] = {"build/grader/unit_tests", "--jobs=2", NULL}, *out = NULL;
    int status = run_command(c, argv, env, &out), n = 0;
    FILE *f = fopen(report, "r");
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0) {
        json_t *o = json_loads(line, 0, NULL);
        const char *test = json_string_value(json_object_get(o, "test"));
        if (test) {
            char what[256];
            const char *msg = json_string_value(json_object_get(o, "message"));
            snprintf(what, sizeof what, "unit %s: %s",
                     json_string_value(json_object_get(o, "suite")), test);
            check(json_is_true(json_object_get(o, "passed")), what, msg);
            n++;
        }
        json_decref(o);
    }
    free(line);
    if (f)
        fclose(f);
    unlink(report);
    check(status == 0 && n > 0, "the unit tests ran to their end", out);
    free(out);
}

/* The end-to-end scripts run side by side, each in a copy of the course of its own: the
 * dashboard's mostly waits for its terminal (16 s of wall time, 1 s of CPU), the others use
 * the CPU. */
static const char *const e2e_scripts[] = {"commands.sh", "dashboard.sh", "watch.sh"};
#define N_E2E (sizeof e2e_scripts / sizeof e2e_scripts[0])

static void e2e_start(const struct course *c, const char *script, struct started_command *s)
{
    char path[256];
    snprintf(path, sizeof path, "grader/unit/e2e/%s", script);
    char *argv[] = {"bash", path, NULL};
    run_start(c, argv, NULL, s);
}

/* An end-to-end script prints "ok - what" or "not ok - what", followed by "# detail" lines. */
static void e2e_finish(const char *script, struct started_command *s)
{
    char *out = NULL, ran[300], *detail = NULL;
    int status = run_finish(s, &out), n = 0, bad = 0;
    size_t dlen = 0;
    char what[300] = "";
    FILE *d = NULL;
    for (char *l = out, *e; l && *l; l = *e ? e + 1 : e) {
        e = strchrnul(l, '\n');
        int ok = !strncmp(l, "ok - ", 5), nok = !strncmp(l, "not ok - ", 9);
        if ((ok || nok) && d) { /* the previous check is complete */
            fclose(d);
            check(!bad, what, detail);
            free(detail), d = NULL, detail = NULL;
        }
        if (ok || nok) {
            snprintf(what, sizeof what, "%s: %.*s", script, (int)(e - l - (ok ? 5 : 9)),
                     l + (ok ? 5 : 9));
            bad = nok, n++;
            d = open_memstream(&detail, &dlen);
        } else if (d && !strncmp(l, "# ", 2)) {
            fprintf(d, "    %.*s\n", (int)(e - l - 2), l + 2);
        }
    }
    if (d) {
        fclose(d);
        check(!bad, what, detail);
        free(detail);
    }
    snprintf(ran, sizeof ran, "%s ran to its end", script);
    check(status == 0 && n > 0, ran, status == 0 && n > 0 ? NULL : out);
    free(out);
}

/* `grader bench all --quick --impl solutions`: every chapter's benchmark still builds, runs and
 * prints each operation's figures beside its baseline's (the full run stays out of make test). */
static void bench_quick(const struct course *c)
{
    char self[PATH_MAX], *out = NULL, what[160];
    if (own_program(self) != 0) {
        check(0, "grader bench all --quick runs", "    cannot find the grader's own program");
        return;
    }
    char *argv[] = {self, "bench", "all", "--quick", "--pes", "2", "--impl", "solutions", NULL};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int status = run_command(c, argv, NULL, &out);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        char src[PATH_MAX], head[96], fail[96];
        if (!ch->available || !chapter_bench_source(c, ch, src, sizeof src))
            continue;
        snprintf(head, sizeof head, "Benchmark of chapter %s,", ch->id);
        snprintf(fail, sizeof fail, "Chapter %s: the benchmark did not complete", ch->id);
        snprintf(what, sizeof what, "%s: its benchmark prints every operation's figures (quick)",
                 ch->id);
        /* A GPU chapter's study says why it skipped where the machine lacks the GPUs. */
        char skip[96];
        snprintf(skip, sizeof skip, "Chapter %s's study is skipped: ", ch->id);
        const char *why = ch->requires[0] && out ? strstr(out, skip) : NULL;
        if (why) {
            why += strlen(skip);
            int len = (int)strcspn(why, "\n");
            printf("  skip  %s: its benchmark: %.*s\n", ch->id, len, why);
            skipped++;
            continue;
        }
        check(out && strstr(out, head) && !strstr(out, fail), what, out);
    }
    snprintf(what, sizeof what, "grader bench all --quick --impl solutions completes (%.1f s)",
             secs);
    check(status == 0, what, status == 0 ? NULL : out);
    free(out);
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A chapter's predicted mistakes: at least two patches of its reference (grader mutants). */
static void check_mutant_count(const struct course *c, const struct chapter *ch)
{
    struct mutant *list;
    int n = mutants_of(c, ch, &list);
    char what[200], detail[300];
    free(list);
    snprintf(what, sizeof what, "%s: at least two of its page's predicted mistakes are mutants "
             "(grader/chapters/%s/mutants/)", ch->id, ch->id);
    snprintf(detail, sizeof detail, "    it has %d: write each as NAME.patch, a diff -u of the "
             "reference after mistake:, page:, tests: and expect: lines (MAINTAINING.md, \"Mutants\")", n);
    check(n >= 2, what, detail);
}

struct mutant_phase {
    int caught;
};

static void mutant_verdict(void *ctx, const struct mutant *m, const struct mutant_verdict *v)
{
    struct mutant_phase *p = ctx;
    char what[400];
    if (v->caught)
        snprintf(what, sizeof what, "%s mutant %s is caught by %s (%.1f s%s)", m->ch->id,
                 m->name, v->test, v->seconds, v->run > 1 ? "; a race, on a later try" : "");
    else
        snprintf(what, sizeof what, "%s mutant %s is caught: %.300s", m->ch->id, m->name,
                 m->mistake[0] ? m->mistake : m->path);
    check(v->caught, what, v->detail);
    p->caught += v->caught;
}

/* Every wanted chapter's mutants, two side by side; a chapter that cannot run here says so. */
static void mutant_checks(const struct course *c, const struct chapter *const *wanted, int n)
{
    struct mutant *all = NULL;
    int total = 0;
    for (int i = 0; i < n; i++) {
        struct mutant *list;
        int k = mutants_of(c, wanted[i], &list);
        char *why = k ? mutants_skip_reason(c, wanted[i]) : NULL;
        struct mutant *more = why || !k ? NULL : realloc(all, sizeof *all * (size_t)(total + k));
        if (why) {
            printf("  skip  %s: %d mutants not run: %s\n", wanted[i]->id, k, why);
            skipped++;
            for (int j = 0; j < k; j++) { /* they must still apply to the reference */
                char *stale = mutant_stale(c, &list[j]), what[300];
                snprintf(what, sizeof what, "%s mutant %s still applies to the reference",
                         wanted[i]->id, list[j].name);
                check(!stale, what, stale);
                free(stale);
            }
        } else if (more) {
            all = more;
            memcpy(all + total, list, sizeof *list * (size_t)k);
            total += k;
        }
        free(why);
        free(list);
    }
    struct mutant_phase p = {0};
    mutants_run(c, all, total, 2, mutant_verdict, &p);
    free(all);
}

/* One chapter's checks: its page, its files, then its suite on the reference and on its stub. */
static void chapter_checks(const struct course *c, const struct chapter *ch)
{
    double t0 = seconds_now();
    printf("\n%s %s: book page, reference, then stub\n", ch->id, ch->title);
    char src[96], what[160];
    snprintf(src, sizeof src, "solutions/%s", ch->dir);
    snprintf(what, sizeof what, "%s %s has every section its stubs point to", ch->id, ch->book);
    check_command(c, what, (char *[]){"tools/check-book", src, (char *)ch->book, NULL});
    check_chapter_files(c, ch);
    no_scaffold_left(c, ch);
    check_mutant_count(c, ch);
    if (ch->requires[0] || suite_has_tests(c, ch)) {
        grade(c, ch, "");
        grade(c, ch, ch->id);
    }
    printf("  (%s checked in %.1f s)\n", ch->id, seconds_now() - t0);
}

/* `grader selftest 3.4 ...`: the course-wide checks and those chapters' only. */
int selftest(const struct course *c, int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (!course_find(c, argv[i]) || !course_find(c, argv[i])->available) {
            fprintf(stderr,
                    "grader selftest: there is no available chapter '%s' in "
                    "grader/course.json (grader list shows them).\n",
                    argv[i]);
            return 2;
        }
    double t_start = seconds_now();
    printf("The course's own checks\n");
    check_metadata(c);
    check_command(
        c, "the stub generator passes its fixtures",
        (char *[]){"bash", "tools/testdata/stubgen/run-tests.sh", "build/tools/stubgen", NULL});
    char *jobs = (char *)make_jobs(), *sync = "--output-sync=target";
    check_command(c, "the committed stubs equal a fresh generation (make check-stubs)",
                  (char *[]){"make", "-s", "--no-print-directory", jobs, sync, "check-stubs", NULL});
    if (argc == 0) {
        check_command(c, "static analysis finds nothing (make lint: cppcheck)",
                      (char *[]){"make", "-s", "--no-print-directory", jobs, sync, "lint", NULL});
        check_command(c, "the grader's unit tests pass under ASan+UBSan (make sanitize-unit)",
                      (char *[]){"make", "-s", "--no-print-directory", jobs, sync, "sanitize-unit",
                                 NULL});
    }
    check_command(c, "a course of nothing but stubs builds and links with -Werror",
                  (char *[]){"make", "-s", "--no-print-directory", jobs, sync, "pe-programs",
                             "IMPL=stubs", "STRICT=1", NULL});
    /* The end-to-end scripts work in copies of the course made from that build and mostly
     * wait (for a terminal, for a file to change): they run from here on, beside the chapters'
     * checks, and report at the end. */
    struct started_command runs[N_E2E];
    if (argc == 0)
        for (size_t i = 0; i < N_E2E; i++)
            e2e_start(c, e2e_scripts[i], &runs[i]);
    char *gpu = NULL; /* nvcc's compile of the GPU chapters, where nvcc and NVSHMEM exist */
    int gst = run_command(
        c, (char *[]){"make", "-s", "--no-print-directory", jobs, sync, "gpu-check", NULL}, NULL,
        &gpu);
    if (gst == 0 && strstr(gpu, "skipped")) {
        printf("  skip  %s", gpu);
        skipped++;
    } else {
        check(gst == 0, "the GPU chapters' solutions and stubs compile with nvcc (make gpu-check)",
              gpu);
    }
    free(gpu);
    const struct chapter *wanted[MAX_CHAPTERS];
    int n = 0;
    for (int i = 0; i < c->n && n < MAX_CHAPTERS; i++) {
        const struct chapter *ch = &c->chapters[i];
        int want = argc == 0;
        for (int a = 0; a < argc; a++)
            want |= course_find(c, argv[a]) == ch;
        if (ch->available && want)
            wanted[n++] = ch;
    }
    double t_chapters = seconds_now();
    for (int i = 0; i < n; i++)
        chapter_checks(c, wanted[i]);
    double t_mutants = seconds_now();
    printf("\nMutants: each predicted mistake, patched into the reference, is caught by name\n");
    mutant_checks(c, wanted, n);
    double t_bench = seconds_now(), t_grader = t_bench;
    if (argc == 0) {
        printf("\nThe benchmarks, quick, on the reference\n");
        bench_quick(c);
        t_grader = seconds_now();
        printf("\nThe grader itself: unit tests, then end to end (commands, dashboard, watch)\n");
        unit_tests(c);
        for (size_t i = 0; i < N_E2E; i++)
            e2e_finish(e2e_scripts[i], &runs[i]);
    }
    double t_end = seconds_now();
    printf("\nTime: course checks %.0f s, chapters %.0f s, mutants %.0f s, benchmarks %.0f s, "
           "the grader %.0f s\n", t_chapters - t_start, t_mutants - t_chapters,
           t_bench - t_mutants, t_grader - t_bench, t_end - t_grader);
    if (skipped)
        printf("\n%d skipped: what needs GPUs and NVSHMEM, or PyTorch, that this machine lacks (see the "
               "skip lines)",
               skipped);
    printf("\n%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
