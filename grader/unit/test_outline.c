#define _GNU_SOURCE
/* test_outline.c: a chapter's results as a learner reads them: teaching order, and the tests
 * that stopped in the same unwritten function under its message, once. */
#include "outline.h"
#include "unit.h"

static struct course c;
static char root[64];

static void setup(void)
{
    tiny_course(&c, root, sizeof root);
}

static void teardown(void)
{
    course_free(&c);
    remove_tree(root);
}

#define TODO_INIT                                                                                  \
    "1.1 ids on 2 PEs: a PE reached a function that is not written yet:\n"                         \
    "  tshmem: PE 1: tshmem_init() is not written yet (chapter 1.1).\n"                            \
    "    task:  start MPI\n    where: week1/1.1-a/a.c:28\n"                                         \
    "    read:  chapter 1.1, section \"Bootstrap\"  (build/grader/grader read 1.1)\n"              \
    "  (3 similar lines from other PEs left out)\n(exit status 99 after 0.6 s)"

static void add_line(void *ctx, enum outline_style style, const char *text)
{
    (void)style;
    FILE *f = ctx;
    fprintf(f, "%s\n", text);
}

static char *outline(const struct result *r, int n, int verbose, int *left_out)
{
    char *text = NULL;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    *left_out = outline_results(&c.chapters[0], r, n, verbose, add_line, f);
    fclose(f);
    return text;
}

Test(outline, todo_block_without_the_pe_prefix, .init = setup, .fini = teardown)
{
    char buf[512];
    cr_assert(outline_todo(TODO_INIT, buf, sizeof buf));
    cr_assert_str_eq(buf, "tshmem_init() is not written yet (chapter 1.1).\n  task:  start MPI\n"
                          "  where: week1/1.1-a/a.c:28\n  read:  chapter 1.1, section \"Bootstrap\""
                          "  (build/grader/grader read 1.1)");
    cr_assert_not(outline_todo("expected 3, got 4", buf, sizeof buf));
    cr_assert_not(outline_todo(NULL, buf, sizeof buf));
}

Test(outline, teaching_order_is_the_order_of_points, .init = setup, .fini = teardown)
{
    /* the tiny course's 1.1 names big, then zero; a test it does not name comes last */
    struct result r[3] = {{.test = "alpha"}, {.test = "zero"}, {.test = "big"}};
    outline_sort(&c.chapters[0], r, 3);
    cr_assert_str_eq(r[0].test, "big");
    cr_assert_str_eq(r[1].test, "zero");
    cr_assert_str_eq(r[2].test, "alpha");
}

Test(outline, stopped_tests_listed_under_one_message, .init = setup, .fini = teardown)
{
    struct result r[3] = {{.test = "big", .message = TODO_INIT},
                          {.test = "zero", .passed = 1},
                          {.test = "alpha", .message = TODO_INIT}};
    int left_out;
    char *t = outline(r, 3, 0, &left_out);
    cr_assert(left_out, "the tests' own first lines are left out (--verbose shows them)");
    cr_assert(strstr(t, "  Start here: tshmem_init() is not written yet (chapter 1.1).\n"
                        "    task:  start MPI\n"),
              "the message first, once, marked as where to start: %s", t);
    int said = 0;
    for (const char *p = t; (p = strstr(p, "is not written yet")) != NULL; p++)
        said++;
    cr_assert_eq(said, 1, "the message once: %s", t);
    cr_assert(strstr(t, "It stopped these tests:\n  FAIL  big ") && strstr(t, "  FAIL  alpha "),
              "the stopped tests below it, one line each: %s", t);
    cr_assert(strstr(t, "  PASS  zero "), "%s", t);
    cr_assert_null(strstr(t, "similar lines"), "%s", t);
    free(t);
    t = outline(r, 3, 1, &left_out);
    cr_assert_not(left_out);
    cr_assert(strstr(t, "1.1 ids on 2 PEs") &&
                  strstr(t, "(3 similar lines from other PEs left out)"),
              "--verbose: every test's whole message: %s", t);
    free(t);
}

Test(outline, other_failures_keep_their_message, .init = setup, .fini = teardown)
{
    struct result r[2] = {{.test = "big", .message = "expected 3, got 4\nsecond line"},
                          {.test = "zero", .message = TODO_INIT}};
    int left_out;
    char *t = outline(r, 2, 0, &left_out);
    cr_assert(strstr(t, "  FAIL  big ") &&
                  strstr(t, "        expected 3, got 4\n        second line"),
              "%s", t);
    cr_assert(strstr(t, "\n  tshmem_init() is not written"),
              "no 'Start here' after a failure of "
              "the learner's own code: %s",
              t);
    free(t);
}
