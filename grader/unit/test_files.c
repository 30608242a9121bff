#define _GNU_SOURCE
/* test_files.c: the learner's files: reset with its backups, the Code column, and the
 * fingerprint that decides which chapters a run re-checks. */
#include <dirent.h>

#include "code.h"
#include "progress.h"
#include "reset.h"
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

static int count_backups(void)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s/.grader-backups", root);
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += !strncmp(e->d_name, "1.1-", 4);
    if (d)
        closedir(d);
    return n;
}

Test(reset, saves_then_restores_the_stub, .init = setup, .fini = teardown)
{
    const struct chapter *a = course_find(&c, "1.1");
    char backup[PATH_MAX], *text;
    write_text(root, "week1/1.1-a/a.c", "int f(void) { return 1; } /* mine */\n");
    cr_assert_eq(reset_chapter(&c, a, backup), 0);
    text = read_text(root, "week1/1.1-a/a.c");
    cr_assert(text && strstr(text, "TSHMEM_TODO"), "a.c is the stub again: %s", text);
    free(text);
    char saved[PATH_MAX];
    path_format(saved, "%s/a.c", backup);
    text = read_file(saved, NULL);
    cr_assert(text && strstr(text, "/* mine */"), "the backup %s holds the learner's a.c", saved);
    free(text);
    path_format(saved, "%s/b.c", backup);
    cr_assert(access(saved, R_OK) == 0, "every file of the chapter is saved, b.c too");
}

Test(reset, never_overwrites_an_older_backup, .init = setup, .fini = teardown)
{
    const struct chapter *a = course_find(&c, "1.1");
    char first[PATH_MAX], second[PATH_MAX];
    write_text(root, "week1/1.1-a/a.c", "/* first */\n");
    cr_assert_eq(reset_chapter(&c, a, first), 0);
    write_text(root, "week1/1.1-a/a.c", "/* second */\n");
    cr_assert_eq(reset_chapter(&c, a, second), 0); /* the same second, often */
    cr_assert_str_neq(first, second);
    cr_assert_eq(count_backups(), 2);
    char path[PATH_MAX];
    path_format(path, "%s/a.c", first);
    char *text = read_file(path, NULL);
    cr_assert(text && !strcmp(text, "/* first */\n"), "the first backup is intact: %s", text);
    free(text);
}

Test(reset, nothing_to_do_on_a_stub, .init = setup, .fini = teardown)
{
    char backup[PATH_MAX];
    cr_assert_eq(reset_chapter(&c, course_find(&c, "1.1"), backup), 1);
    cr_assert_eq(count_backups(), 0, "no backup of a stub");
}

Test(reset, forgets_the_chapters_results, .init = setup, .fini = teardown)
{
    struct progress p;
    progress_open(&p, &c, 1);
    json_t *chp = progress_chapter(&p, "1.1", 1);
    json_object_set_new(chp, "done", json_true());
    json_object_set_new(chp, "passed", json_integer(2));
    json_object_set_new(chp, "hints_used", json_integer(2));
    progress_save(&p);
    progress_close(&p);
    write_text(root, "week1/1.1-a/b.c", "/* edited */\n");
    char backup[PATH_MAX];
    cr_assert_eq(reset_chapter(&c, course_find(&c, "1.1"), backup), 0);
    progress_open(&p, &c, 0);
    chp = progress_chapter(&p, "1.1", 0);
    cr_assert(!pg_bool(chp, "done") && pg_int(chp, "passed") == 0, "the results are gone");
    cr_assert_eq(pg_int(chp, "hints_used"), 2, "the hints used stay counted");
    progress_close(&p);
}

Test(code, column_says_stub_todo_or_written, .init = setup, .fini = teardown)
{
    const struct chapter *a = course_find(&c, "1.1");
    struct code_info ci = chapter_code(&c, a);
    cr_assert_eq(ci.state, CODE_STUB);
    cr_assert_eq(ci.todos, 2);
    cr_assert_str_eq(code_word(ci), "stub");
    write_text(root, "week1/1.1-a/a.c", "int f(void) { return 1; }\n");
    ci = chapter_code(&c, a);
    cr_assert_eq(ci.state, CODE_EDITED);
    cr_assert_str_eq(code_word(ci), "1 todo");
    write_text(root, "week1/1.1-a/b.c", "int g(void) { return 2; }\n");
    cr_assert_str_eq(code_word(chapter_code(&c, a)), "written");
    unlink(strcat(strcpy((char[128]){0}, root), "/week1/1.1-a/b.c"));
    cr_assert_str_eq(code_word(chapter_code(&c, a)), "?", "a missing file: cannot tell");
}

Test(code, fingerprint_covers_the_chapter_and_its_dependencies, .init = setup, .fini = teardown)
{
    const struct chapter *a = course_find(&c, "1.1"), *b = course_find(&c, "2.1");
    uint64_t a0 = chapter_fingerprint(&c, a), b0 = chapter_fingerprint(&c, b);
    write_text(root, "week2/2.1-c/c.c", "/* 2.1 edited */\n");
    cr_assert_eq(chapter_fingerprint(&c, a), a0, "1.1 does not depend on 2.1's files");
    cr_assert_neq(chapter_fingerprint(&c, b), b0);
    b0 = chapter_fingerprint(&c, b);
    write_text(root, "week1/1.1-a/b.c", "/* 1.1 edited */\n");
    cr_assert_neq(chapter_fingerprint(&c, a), a0);
    cr_assert_neq(chapter_fingerprint(&c, b), b0, "2.1 depends on 1.1: its fingerprint moves");
}

Test(code, signature_moves_when_a_file_is_saved, .init = setup, .fini = teardown)
{
    const struct chapter *a = course_find(&c, "1.1");
    uint64_t s0 = chapter_files_signature(&c, a);
    cr_assert_eq(chapter_files_signature(&c, a), s0, "nothing saved, nothing moves");
    write_text(root, "week1/1.1-a/a.c", "int f(void) { TSHMEM_TODO(\"x\", \"y\"); } /* saved */\n");
    cr_assert_neq(chapter_files_signature(&c, a), s0);
}
