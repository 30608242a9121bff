#define _GNU_SOURCE
/* test_course.c: the course metadata: the real grader/course.json, and every way a hand-edited
 * one can be wrong, each refused with a sentence that names the chapter and the key. */
#include "unit.h"

Test(metadata, the_course_json_loads)
{
    const char *root = getenv("TSHMEM_ROOT");
    cr_assert(root != NULL, "run by make test, which sets TSHMEM_ROOT");
    char path[PATH_MAX], err[512];
    struct course c;
    cr_assert(path_format(path, "%s/grader/course.json", root) == 0);
    cr_assert(course_load_file(&c, root, path, err, sizeof err) == 0, "%s: %s", path, err);
    const struct chapter *ch = course_find(&c, "1.3");
    cr_assert(ch && ch->available && ch->nfiles == 1 && !strcmp(ch->files[0], "rma.c"));
    cr_assert(ch->ndepends == 2 && !strcmp(ch->depends[1], "1.2"), "1.3 depends on 1.1 and 1.2");
    cr_assert(ch->nhints == 3, "1.3 has 3 hints, has %d", ch->nhints);
    cr_assert_eq(chapter_points(ch, "put_every_size_to_every_pe"), 3);
    course_free(&c);
}

Test(metadata, points_default_to_one)
{
    struct course c;
    char root[64];
    tiny_course(&c, root, sizeof root);
    const struct chapter *a = course_find(&c, "1.1");
    cr_assert_eq(chapter_points(a, "big"), 3);
    cr_assert_eq(chapter_points(a, "zero"), 0);
    cr_assert_eq(chapter_points(a, "not_listed"), 1);
    int pts = 0;
    cr_assert_eq(chapter_declared(&c, a, &pts), 2, "no suite source: the tests points names");
    cr_assert_eq(pts, 3);
    write_text(root, "grader/chapters/1.1/suite_1_1.c",
               "#include \"suite.h\"\nTest(ch1_1, big, .description = \"x\")\n{\n}\n"
               "static void helper(void) { }\nTest(ch1_1, plain)\n{\n}\n"
               "Test(ch1_1, zero, .description = \"Test(ch1_1, not_a_test)\")\n{\n}\n");
    cr_assert_eq(chapter_declared(&c, a, &pts), 3, "the suite's source names 3 tests");
    cr_assert_eq(pts, 4, "big 3 + plain 1 (not in points) + zero 0");
    course_free(&c);
    remove_tree(root);
}

Test(metadata, select_by_id_week_and_all)
{
    struct course c;
    char root[64];
    const struct chapter *out[MAX_CHAPTERS];
    tiny_course(&c, root, sizeof root);
    cr_assert_eq(course_select(&c, "test", "all", out), 2, "all: the available chapters");
    cr_assert_eq(course_select(&c, "test", "week2", out), 1, "week2 holds one available");
    cr_assert_str_eq(out[0]->id, "2.1");
    cr_assert_eq(course_select(&c, "test", "1.1", out), 1);
    cr_assert_eq(course_select(&c, "test", "2.2", out), -1, "a coming chapter is refused");
    cr_assert_eq(course_select(&c, "test", "9.9", out), -1, "an unknown one too");
    course_free(&c);
    remove_tree(root);
}

Test(metadata, closure_follows_depends)
{
    struct course c;
    char root[64];
    const struct chapter *out[MAX_CHAPTERS];
    tiny_course(&c, root, sizeof root);
    int n = chapter_closure(&c, course_find(&c, "2.1"), out);
    cr_assert_eq(n, 2);
    cr_assert(!strcmp(out[0]->id, "1.1") && !strcmp(out[1]->id, "2.1"), "1.1 then 2.1");
    cr_assert_eq(chapter_closure(&c, course_find(&c, "1.1"), out), 1);
    course_free(&c);
    remove_tree(root);
}

/* Each broken file, and a word its sentence must contain. */
static const char *const broken[][2] = {
    {"{\"chapters\": [", "line"},
    {"{\"title\": \"x\"}", "\"chapters\""},
    {"{\"chapters\": []}", "non-empty"},
    {"{\"chapters\": [{\"slug\": \"d\", \"title\": \"t\"}]}", "\"id\""},
    {"{\"chapters\": [{\"id\": \"1.1\", \"week\": 1, \"slug\": \"d\", \"title\": \"t\"}]}",
     "\"week\" is not a key"},
    {"{\"chapters\": [{\"id\": \"1.1\", \"dir\": \"week1/x\", \"slug\": \"d\", \"title\": \"t\"}]}",
     "\"dir\" is not a key"},
    {"{\"chapters\": [{\"id\": \"1.10\", \"slug\": \"d\", \"title\": \"t\"}]}", "a week and a number"},
    {"{\"chapters\": [{\"id\": \"1.1\", \"slug\": \"Put Get\", \"title\": \"t\"}]}", "the slug"},
    {"{\"chapters\": [{\"id\": \"1.1\", \"title\": \"t\"}]}", "\"slug\""},
    {"{\"chapters\": [{\"id\": \"1.1\", \"slug\": \"d\", \"title\": \"t\", \"kind\": \"rust\"}]}",
     "\"kind\""},
    {"{\"chapters\": [{\"id\": \"1.1\", \"slug\": \"d\", \"title\": \"t\", \"kind\": \"gpu\"}]}",
     "test programs"},
    {"{\"chapters\": [{\"id\": \"1.1\", \"slug\": \"d\", \"title\": \"t\", \"also_runs\": [\"1.1\"]}]}",
     "not a chapter before it"},
    {"{\"chapters\": [{\"id\": \"1.1\", \"slug\": \"d\", \"title\": \"t\", "
     "\"available\": true}]}",
     "\"files\""},
    {"{\"chapters\": [{\"id\": \"1.1\", \"slug\": \"d\", \"title\": \"t\", "
     "\"depends\": [\"1.2\"]}, {\"id\": \"1.2\", \"slug\": \"e\", \"title\": \"u\"}]}",
     "not a chapter before it"},
    {"{\"chapters\": [{\"id\": \"1.1\", \"slug\": \"d\", \"title\": \"t\", "
     "\"hints\": [\"ok\", 7]}]}",
     "hint 2"},
    {"{\"chapters\": [{\"id\": \"1.1\", \"slug\": \"d\", \"title\": \"t\", "
     "\"points\": {\"x\": -1}}]}",
     "points of x"},
    {"{\"chapters\": [{\"id\": \"1.1\", \"slug\": \"d\", \"title\": \"t\"}, "
     "{\"id\": \"1.1\", \"slug\": \"e\", \"title\": \"u\"}]}",
     "two chapters"},
    {"{\"chapters\": [{\"id\": \"1.1\", \"slug\": \"d\", \"title\": \"t\", "
     "\"available\": \"yes\"}]}",
     "true or false"},
};

Test(metadata, a_broken_file_gets_a_sentence)
{
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        char err[512] = "";
        cr_assert_eq(load_json_text(broken[i][0], err, sizeof err), -1, "accepted: %s",
                     broken[i][0]);
        cr_assert(strstr(err, broken[i][1]) != NULL,
                  "the error for %s should mention %s, "
                  "says: %s",
                  broken[i][0], broken[i][1], err);
    }
}

Test(metadata, unknown_keys_are_ignored)
{
    char err[512] = "";
    cr_assert_eq(load_json_text("{\"chapters\": [{\"id\": \"1.1\", \"slug\": \"d\", "
                                "\"title\": \"t\", \"extra\": {\"anything\": [1]}}], "
                                "\"more\": 1}",
                                err, sizeof err),
                 0, "%s", err);
}
