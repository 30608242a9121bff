/* main.c: the grader's commands: test a chapter, list the roadmap, check the course itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "course.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: grader COMMAND [options]\n\n"
            "  grader list                     the roadmap: every chapter and whether it is available\n"
            "  grader read CHAPTER             the chapter's page of the book, in a pager\n"
            "  grader test CHAPTER|weekN|all   build your code and run the chapters' tests\n"
            "      --ref-deps                  take every earlier chapter from the reference solution\n"
            "      --impl learner|solutions    whose code to test (default: yours, in weekN/)\n"
            "      --stub                      (maintainers) the chapter from its generated stub, so\n"
            "                                  every test should fail; with --impl solutions\n"
            "  grader selftest                 the course's own check (what `make test` runs): every\n"
            "                                  suite passes on solutions/ and fails on each stub\n\n"
            "Examples: grader test 1.3    grader test 2.2 --ref-deps    grader test week1\n"
            "Each command takes --help.\n");
}

/* The chapters a selector names: "1.3", "week1" or "all" (available ones only). */
static int select_chapters(const struct course *c, const char *sel, const struct chapter **out)
{
    int n = 0;
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        char week[16];
        snprintf(week, sizeof week, "week%d", ch->week);
        if (strcmp(sel, "all") == 0 || strcmp(sel, week) == 0 || strcmp(sel, ch->id) == 0) {
            if (!ch->available && strcmp(sel, ch->id) == 0) {
                fprintf(stderr, "grader: chapter %s (%s) is not part of the course yet.\n", ch->id,
                        ch->title);
                return -1;
            }
            if (ch->available)
                out[n++] = ch;
        }
    }
    if (n == 0)
        fprintf(stderr, "grader: '%s' names no chapter: use an id such as 1.3, week1 or all "
                "(grader list shows them).\n", sel);
    return n ? n : -1;
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

static void print_run(const struct chapter_run *r)
{
    if (!r->built) {
        printf("  the build failed; the compiler said:\n");
        print_message(r->build_log ? r->build_log : "(nothing)");
        return;
    }
    for (int i = 0; i < r->n; i++) {
        const struct result *t = &r->results[i];
        printf("  %s  %-42s %5.1f s\n", t->passed ? "PASS" : "FAIL", t->test, t->seconds);
        if (!t->passed && t->message)
            print_message(t->message);
    }
}

static int count_passed(const struct chapter_run *r)
{
    int n = 0;
    for (int i = 0; i < r->n; i++)
        n += r->results[i].passed;
    return n;
}

static int cmd_test(const struct course *c, int argc, char **argv)
{
    const char *sel = NULL;
    int ref_deps = 0, stub = 0;
    struct variant v = {.impl = "learner", .strict = getenv("CI") != NULL};
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--ref-deps")) {
            ref_deps = 1;
        } else if (!strcmp(argv[i], "--impl") && i + 1 < argc) {
            v.impl = argv[++i];
        } else if (!strcmp(argv[i], "--stub")) {
            stub = 1;
        } else if (argv[i][0] != '-' && !sel) {
            sel = argv[i];
        } else {
            fprintf(stderr, "grader test: unknown argument '%s' (try grader test --help)\n", argv[i]);
            return 2;
        }
    }
    if (strcmp(v.impl, "learner") && strcmp(v.impl, "solutions")) {
        fprintf(stderr, "grader test: --impl is learner or solutions, not '%s'\n", v.impl);
        return 2;
    }
    const struct chapter *chs[32];
    int n = select_chapters(c, sel ? sel : "all", chs);
    if (n < 0)
        return 2;
    int passed = 0, failed = 0;
    char summary[2048] = "";
    for (int i = 0; i < n; i++) {
        v.ref[0] = '\0';
        if (stub)
            snprintf(v.stub, sizeof v.stub, "%s", chs[i]->id);
        for (int j = 0; ref_deps && &c->chapters[j] != chs[i]; j++)
            snprintf(v.ref + strlen(v.ref), sizeof v.ref - strlen(v.ref), "%s ", c->chapters[j].id);
        printf("\n%s %s  (%s%s)\n", chs[i]->id, chs[i]->title, chs[i]->dir,
               ref_deps && i == 0 && v.ref[0] ? ", earlier chapters from the reference" : "");
        fflush(stdout);
        struct chapter_run r;
        chapter_run(c, chs[i], &v, &r);
        print_run(&r);
        int ok = count_passed(&r), total = r.built ? r.n : 0;
        passed += ok;
        failed += r.built ? total - ok : 1;
        snprintf(summary + strlen(summary), sizeof summary - strlen(summary),
                 "  %-4s %-32s %2d/%-2d %s\n", chs[i]->id, chs[i]->title, ok, total,
                 !r.built ? "does not build" : ok == total ? "done" : ok ? "in progress" : "to do");
        chapter_run_free(&r);
    }
    printf("\nSummary\n%s%s", summary,
           failed ? "Read a failing test's message, then the chapter's book page (book/).\n" : "");
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

int selftest(const struct course *c);

/* The chapter's book page, through a pager on a terminal. */
static int cmd_read(const struct course *c, int argc, char **argv)
{
    const struct chapter *ch = argc > 0 ? course_find(c, argv[0]) : NULL;
    if (!ch || !ch->book[0]) {
        fprintf(stderr, "grader read: name a chapter that has a page, e.g. grader read 1.3 "
                "(grader list shows them)\n");
        return 2;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", c->root, ch->book);
    if (isatty(1) && access("/usr/bin/less", X_OK) == 0) {
        execl("/usr/bin/less", "less", "-R", path, (char *)NULL);
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "grader read: cannot open %s\n", path);
        return 1;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, stdout);
    fclose(f);
    return 0;
}

static int cmd_list(const struct course *c)
{
    printf("%-4s  %-28s  %-34s  %s\n", "id", "directory", "chapter", "status");
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        printf("%-4s  %-28s  %-34s  %s\n", ch->id, ch->dir, ch->title,
               ch->available ? "available" : "coming");
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    struct course c;
    if (course_load(&c, argv[0]) != 0)
        return 2;
    if (!strcmp(argv[1], "test"))
        return cmd_test(&c, argc - 2, argv + 2);
    if (!strcmp(argv[1], "list"))
        return cmd_list(&c);
    if (!strcmp(argv[1], "read"))
        return cmd_read(&c, argc - 2, argv + 2);
    if (!strcmp(argv[1], "selftest")) {
        if (argc > 2 && !strcmp(argv[2], "--help")) {
            usage(stdout);
            return 0;
        }
        return selftest(&c);
    }
    fprintf(stderr, "grader: no command '%s'.\n\n", argv[1]);
    usage(stderr);
    return 2;
}
