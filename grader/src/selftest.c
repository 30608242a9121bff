/* selftest.c: the course checks itself (`make test`): every suite passes on the reference,
 * every test fails on its chapter's stub, the stubs are fresh and build with -Werror, and the
 * Makefile and grader/course.json agree on the chapters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "course.h"

static int passed, failed;

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

/* The Makefile's CHAPTERS list must be course.json's available chapters, in order. */
static void check_metadata(const struct course *c)
{
    char *out = NULL, want[2048] = "";
    char *argv[] = {"make", "-s", "--no-print-directory", "print-chapters", NULL};
    run_command(c, argv, NULL, &out);
    for (int i = 0; i < c->n; i++)
        if (c->chapters[i].available)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s:%s\n",
                     c->chapters[i].id, c->chapters[i].dir);
    char detail[4200];
    snprintf(detail, sizeof detail, "    Makefile CHAPTERS:\n%s    course.json:\n%s", out, want);
    check(strcmp(out, want) == 0, "the Makefile and grader/course.json list the same chapters",
          detail);
    free(out);
}

/* expect_pass: every test must pass (reference) or every test must fail (stub). */
static void grade(const struct course *c, const struct chapter *ch, const char *stub)
{
    struct variant v = {.impl = "solutions", .strict = 1};
    snprintf(v.stub, sizeof v.stub, "%s", stub);
    struct chapter_run r;
    chapter_run(c, ch, &v, &r);
    char what[256];
    if (!r.built) {
        snprintf(what, sizeof what, "%s %s builds and its suite runs", ch->id,
                 *stub ? "stub" : "reference");
        check(0, what, r.build_log);
    }
    for (int i = 0; i < r.n; i++) {
        const struct result *t = &r.results[i];
        if (*stub) {
            snprintf(what, sizeof what, "%s %s fails on the stub", ch->id, t->test);
            check(!t->passed, what, "    it passes although the chapter is a stub: the test "
                  "checks nothing the learner writes");
        } else {
            snprintf(what, sizeof what, "%s %s passes on the reference (%.1f s)", ch->id, t->test,
                     t->seconds);
            check(t->passed, what, t->message);
        }
    }
    chapter_run_free(&r);
}

int selftest(const struct course *c)
{
    printf("The course's own checks\n");
    check_metadata(c);
    check_command(c, "the stub generator passes its fixtures",
                  (char *[]){"bash", "tools/testdata/stubgen/run-tests.sh", "build/tools/stubgen",
                             NULL});
    check_command(c, "the committed stubs equal a fresh generation (make check-stubs)",
                  (char *[]){"make", "-s", "--no-print-directory", "check-stubs", NULL});
    check_command(c, "a course of nothing but stubs builds and links with -Werror",
                  (char *[]){"make", "-s", "--no-print-directory", "pe-programs", "IMPL=stubs",
                             "STRICT=1", NULL});
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        if (!ch->available)
            continue;
        printf("\n%s %s: book page, reference, then stub\n", ch->id, ch->title);
        char src[96], what[160];
        snprintf(src, sizeof src, "solutions/%s", ch->dir);
        snprintf(what, sizeof what, "%s %s has every section its stubs point to", ch->id, ch->book);
        check_command(c, what, (char *[]){"tools/check-book", src, (char *)ch->book, NULL});
        grade(c, ch, "");
        grade(c, ch, ch->id);
    }
    printf("\n%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
