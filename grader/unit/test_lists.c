#define _GNU_SOURCE
/* test_lists.c: every name of a chapter comes from its id and slug (chapter_path), and the
 * lists that restate course.json are found stale, and rewritten, between their markers only. */
#include "commands.h"
#include "lists.h"
#include "unit.h"

Test(lists, every_name_comes_from_the_id_and_slug)
{
    struct course c;
    char root[64], buf[CHAPTER_PATH_MAX];
    tiny_course(&c, root, sizeof root);
    const struct chapter *a = course_find(&c, "2.1");
    static const struct {
        enum chapter_part part;
        const char *want;
    } names[] = {{CH_TAG, "2_1"},
                 {CH_DIR, "week2/2.1-c"},
                 {CH_BOOK, "book/2.1-c.md"},
                 {CH_PAGE, "2.1-c.md"},
                 {CH_GRADING, "grader/chapters/2.1"},
                 {CH_SUITE, "suite_2_1"},
                 {CH_SUITE_SRC, "grader/chapters/2.1/suite_2_1.c"},
                 {CH_PE, "pe_2_1"},
                 {CH_PE_SRC, "grader/chapters/2.1/pe_2_1.c"},
                 {CH_BENCH, "bench_2_1"},
                 {CH_BENCH_SRC, "grader/chapters/2.1/bench_2_1.c"},
                 {CH_MAKE_TARGET, "pe-2_1"}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        cr_assert_str_eq(chapter_path(a, names[i].part, buf, sizeof buf), names[i].want);
    cr_assert_str_eq(a->dir, "week2/2.1-c", "the folder is filled in when the course is read");
    cr_assert_str_eq(a->book, "book/2.1-c.md");
    cr_assert_str_eq(a->suite, "suite_2_1");
    cr_assert_eq(a->week, 2, "the week is the id's first digit");
    struct chapter gpu = *a;
    gpu.kind = KIND_GPU;
    cr_assert_str_eq(chapter_path(&gpu, CH_SUITE, buf, sizeof buf), "test_2_1",
                     "a GPU chapter's tests are a CUDA program");
    cr_assert_str_eq(chapter_path(&gpu, CH_BENCH_SRC, buf, sizeof buf),
                     "grader/chapters/2.1/bench_2_1.cu");
    course_free(&c);
    remove_tree(root);
}

static void marked_files(const char *root)
{
    write_text(root, "Makefile", "all:\n\t@true\n# BEGIN lists\nold\n# END lists\nstubs:\n\t@true\n");
    write_text(root, "README.md", "# tiny\n<!-- BEGIN roadmap -->\n| old |\n<!-- END roadmap -->\nmore\n");
    write_text(root, "book/pages.txt", "== Week 1\n@week 1\n@end\n== Week 2\n@week 2\n@end\nglossary.md\n");
}

Test(lists, stale_lists_are_named_and_rewritten_between_their_markers)
{
    struct course c;
    char root[64], *detail = NULL;
    tiny_course(&c, root, sizeof root);
    marked_files(root);
    cr_assert_eq(lists_check(&c, &detail), 3, "all three files are stale: %s", detail);
    cr_assert(strstr(detail, "Makefile") && strstr(detail, "README.md") &&
                  strstr(detail, "book/pages.txt") && strstr(detail, "run tools/update-lists"),
              "the sentence names each file and the command that fixes it: %s", detail);
    free(detail);
    cr_assert_eq(cmd_lists(&c, 1, (char *[]){"--write", NULL}), 0);
    cr_assert_eq(lists_check(&c, &detail), 0, "after --write nothing is stale: %s", detail);
    free(detail);
    char *mk = read_text(root, "Makefile"), *readme = read_text(root, "README.md"),
         *pages = read_text(root, "book/pages.txt");
    cr_assert(strstr(mk, "CHAPTERS := 1.1:week1/1.1-a 2.1:week2/2.1-c\n"), "%s", mk);
    cr_assert(strstr(mk, "pe-2_1: $(BUILD)/bin/pe_2_1\n") && !strstr(mk, "old\n"), "%s", mk);
    cr_assert(strstr(mk, "all:\n\t@true\n# BEGIN lists\n") && strstr(mk, "# END lists\nstubs:"),
              "what lies outside the markers stays: %s", mk);
    cr_assert(strstr(readme, "| 2.2 | `week2/2.2-d`") && strstr(readme, "| coming |"), "%s", readme);
    cr_assert(strstr(pages, "@week 2\n@chapter 2.1 | C | 2.1-c.md | week2/2.1-c | c.c\n"
                            "@coming 2.2 | D\n@end\nglossary.md\n"),
              "%s", pages);
    free(mk), free(readme), free(pages);
    write_text(root, "README.md", "# tiny, its roadmap markers gone\n");
    cr_assert_eq(lists_check(&c, &detail), -1);
    cr_assert(strstr(detail, "README.md") && strstr(detail, "opening marker line is missing"), "%s",
              detail);
    free(detail);
    course_free(&c);
    remove_tree(root);
}
