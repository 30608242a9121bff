#define _GNU_SOURCE
/* test_progress.c: the progress file: atomic writes, a broken file kept aside with a sentence,
 * the status rules, regressions, and the order of hints. */
#include <dirent.h>

#include "progress.h"
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

/* Files in root whose name starts with prefix. */
static int count_files(const char *prefix)
{
    DIR *d = opendir(root);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += !strncmp(e->d_name, prefix, strlen(prefix));
    if (d)
        closedir(d);
    return n;
}

/* A run of chapter 1.1 with the given outcomes of tests "big" and "small". */
static void fake_run(struct chapter_run *r, int big, int small)
{
    memset(r, 0, sizeof *r);
    r->ch = course_find(&c, "1.1");
    r->built = 1;
    r->n = 2;
    snprintf(r->results[0].test, sizeof r->results[0].test, "big");
    r->results[0].passed = big;
    snprintf(r->results[1].test, sizeof r->results[1].test, "small");
    r->results[1].passed = small;
}

static json_t *record_as(int big, int small, int ref_deps)
{
    struct progress p;
    struct chapter_run r;
    fake_run(&r, big, small);
    progress_open(&p, &c, 1);
    progress_record_run(&p, &r, 42, ref_deps);
    cr_assert_eq(progress_save(&p), 0);
    progress_close(&p);
    progress_open(&p, &c, 0);
    json_t *chp = json_deep_copy(progress_chapter(&p, "1.1", 0));
    progress_close(&p);
    return chp;
}

static json_t *record(int big, int small)
{
    return record_as(big, small, 0);
}

Test(progress, missing_file_is_a_quiet_fresh_start, .init = setup, .fini = teardown)
{
    struct progress p;
    progress_open(&p, &c, 0);
    cr_assert_str_eq(p.note, "");
    cr_assert(json_is_object(json_object_get(p.doc, "chapters")));
    cr_assert_null(progress_chapter(&p, "1.1", 0));
    progress_close(&p);
}

Test(progress, written_atomically_and_read_back, .init = setup, .fini = teardown)
{
    json_t *chp = record(1, 0);
    cr_assert_eq(pg_int(chp, "passed"), 1);
    cr_assert_eq(pg_int(chp, "points"), 3, "big is worth 3");
    cr_assert_eq(pg_int(chp, "max_points"), 4, "big 3 + small 1");
    cr_assert_str_eq(json_string_value(json_object_get(chp, "fingerprint")), "000000000000002a");
    json_decref(chp);
    cr_assert_eq(count_files(".tshmem-progress.json.tmp"), 0, "no temp file is left behind");
    struct stat st;
    char path[128];
    snprintf(path, sizeof path, "%s/.tshmem-progress.json", root);
    cr_assert(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
}

/* Each broken content, and a word of the reason the note gives. */
static const char *const broken[][2] = {
    {"{\"version\": 1, \"chapters\": {\"1.1\": {\"passed\": 3", "line 1"}, /* truncated */
    {"", "empty"},
    {"[1, 2, 3]", "not the grader's"},
    {"{\"version\": 1, \"chapters\": [\"1.1\"]}", "not the grader's"},
    {"{\"version\": 99, \"chapters\": {}}", "version"},
    {"\x01\x02 binary", "line 1"},
};

Test(progress, a_broken_file_is_kept_aside_with_a_sentence, .init = setup, .fini = teardown)
{
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        write_text(root, ".tshmem-progress.json", broken[i][0]);
        struct progress p;
        progress_open(&p, &c, 1);
        cr_assert(strstr(p.note, "could not be read") && strstr(p.note, broken[i][1]),
                  "content %zu: the note should say why (%s): %s", i, broken[i][1], p.note);
        cr_assert(strstr(p.note, "is kept as"), "the note names the kept file: %s", p.note);
        cr_assert(json_is_object(json_object_get(p.doc, "chapters")), "a fresh start");
        cr_assert_eq(progress_save(&p), 0);
        progress_close(&p);
        cr_assert_eq(count_files(".tshmem-progress.json.broken-"), (int)i + 1,
                     "every broken file is kept, none overwritten");
    }
    /* the kept file holds exactly what was there */
    write_text(root, ".tshmem-progress.json", "{oops");
    struct progress p;
    progress_open(&p, &c, 0);
    const char *kept = strstr(p.note, "is kept as ") + strlen("is kept as ");
    char path[512];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(kept, ","), kept);
    char *text = read_file(path, NULL);
    cr_assert(text && !strcmp(text, "{oops"), "%s holds %s", path, text ? text : "nothing");
    free(text);
    progress_close(&p);
}

Test(progress, wrong_types_inside_are_tolerated, .init = setup, .fini = teardown)
{
    write_text(root, ".tshmem-progress.json",
               "{\"version\": 1, \"chapters\": {\"1.1\": "
               "{\"passed\": \"many\", \"done\": \"yes\", \"hints_used\": -4}}}");
    struct progress p;
    progress_open(&p, &c, 1);
    cr_assert_str_eq(p.note, "");
    json_t *chp = progress_chapter(&p, "1.1", 0);
    cr_assert_eq(pg_int(chp, "passed"), 0);
    cr_assert_eq(pg_bool(chp, "done"), 0);
    cr_assert_eq(progress_take_hint(&p, course_find(&c, "1.1")), 0, "a negative count is 0");
    progress_close(&p);
}

Test(progress, status_rules, .init = setup, .fini = teardown)
{
    struct code_info stub = {CODE_STUB, 3}, edited = {CODE_EDITED, 1};
    json_t *none = json_object();
    cr_assert_eq(progress_status(none, stub), ST_TODO);
    cr_assert_eq(progress_status(none, edited), ST_PROGRESS, "an edited stub is in progress");
    json_t *half = record(1, 0), *all = record(1, 1);
    cr_assert_eq(progress_status(half, stub), ST_PROGRESS);
    cr_assert_eq(progress_status(all, stub), ST_DONE);
    cr_assert_str_eq(status_emoji(ST_DONE), "✅");
    cr_assert_str_eq(status_emoji(ST_PROGRESS), "🚧");
    cr_assert_str_eq(status_emoji(ST_TODO), "⬜");
    json_decref(none), json_decref(half), json_decref(all);
}

Test(progress, a_regression_is_remembered_until_fixed, .init = setup, .fini = teardown)
{
    json_t *r1 = record(1, 1), *r2 = record(0, 0), *r3 = record(1, 0), *r4 = record(1, 1);
    struct code_info stub = {CODE_STUB, 0};
    cr_assert(pg_bool(r1, "done") && !pg_bool(r1, "regressed"));
    cr_assert(pg_bool(r2, "regressed"), "done, then failing: a regression");
    cr_assert_eq(progress_status(r2, stub), ST_PROGRESS,
                 "a regression is in progress, "
                 "even with no test passing");
    cr_assert(pg_bool(r3, "regressed"), "still not done: still a regression");
    cr_assert(pg_bool(r4, "done") && !pg_bool(r4, "regressed"), "fixed");
    cr_assert(pg_bool(r4, "ever_done"));
    json_decref(r1), json_decref(r2), json_decref(r3), json_decref(r4);
}

Test(progress, hints_come_in_order_then_run_out, .init = setup, .fini = teardown)
{
    const struct chapter *a = course_find(&c, "1.1");
    for (int i = 0; i < 4; i++) {
        struct progress p;
        progress_open(&p, &c, 1);
        int got = progress_take_hint(&p, a);
        cr_assert_eq(got, i < 3 ? i : -1, "call %d gives hint %d, gave %d", i + 1, i < 3 ? i : -1,
                     got);
        progress_save(&p);
        progress_close(&p);
    }
    struct progress p;
    progress_open(&p, &c, 0);
    cr_assert_eq(pg_int(progress_chapter(&p, "1.1", 0), "hints_used"), 3);
    cr_assert_str_eq(a->hints[0], "first");
    cr_assert_str_eq(a->hints[2], "third");
    progress_close(&p);
}

Test(progress, unwritable_folder_is_a_sentence_not_a_crash, .init = setup, .fini = teardown)
{
    setenv("TSHMEM_PROGRESS", "/nonexistent-folder/progress.json", 1);
    struct progress p;
    progress_open(&p, &c, 1);
    progress_chapter(&p, "1.1", 1);
    cr_assert_eq(progress_save(&p), -1);
    progress_close(&p);
}

/* A progress file that exists but cannot be read (here: a folder in its place; mode 000 does
 * the same to anyone but root) is never replaced: the note says so and nothing is saved. */
Test(progress, an_unreadable_file_is_never_replaced, .init = setup, .fini = teardown)
{
    char path[128];
    snprintf(path, sizeof path, "%s/.tshmem-progress.json", root);
    cr_assert(mkdir(path, 0700) == 0);
    write_text(root, ".tshmem-progress.json/inside", "real progress\n");
    struct progress p;
    progress_open(&p, &c, 1);
    cr_assert(strstr(p.note, "cannot read your progress file") &&
                  strstr(p.note, "It is left as it is and nothing is saved"),
              "%s", p.note);
    progress_chapter(&p, "1.1", 1);
    cr_assert_eq(progress_save(&p), -1, "a file that could not be read is not written over");
    progress_close(&p);
    struct stat st;
    cr_assert(stat(path, &st) == 0 && S_ISDIR(st.st_mode), "what was there is still there");
    char *kept = read_text(root, ".tshmem-progress.json/inside");
    cr_assert(kept && !strcmp(kept, "real progress\n"));
    free(kept);
    cr_assert_eq(count_files(".tshmem-progress.json.tmp"), 0, "no temp file is left behind");
}

/* A read-only file (no write bit for its owner) is not replaced, even by root, who could; a
 * private one stays private. */
Test(progress, a_read_only_file_is_kept_and_modes_are_kept, .init = setup, .fini = teardown)
{
    json_decref(record(1, 0));
    char path[128];
    snprintf(path, sizeof path, "%s/.tshmem-progress.json", root);
    cr_assert(chmod(path, 0600) == 0);
    json_decref(record(1, 1));
    struct stat st;
    cr_assert(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode %o, not 0600 any more",
              st.st_mode & 0777);
    cr_assert(chmod(path, 0444) == 0);
    char *before = read_text(root, ".tshmem-progress.json");
    struct progress p;
    progress_open(&p, &c, 1);
    json_object_set_new(progress_chapter(&p, "1.1", 1), "passed", json_integer(0));
    cr_assert_eq(progress_save(&p), -1, "a read-only progress file is not replaced");
    progress_close(&p);
    char *after = read_text(root, ".tshmem-progress.json");
    cr_assert(before && after && !strcmp(before, after), "the read-only file changed");
    free(before), free(after);
}

/* A pass with the reference's earlier chapters is a state of its own: the plain run after it
 * (the learner's earlier chapters still stubs) is no regression, and the pass is kept until a
 * plain run passes; a --ref-deps run that fails after a pass is a regression. */
Test(progress, a_pass_with_ref_deps_is_its_own_state_never_a_regression, .init = setup,
     .fini = teardown)
{
    json_t *ref = record_as(1, 1, 1), *plain = record_as(0, 0, 0), *again = record_as(0, 1, 0),
           *own = record_as(1, 1, 0), *broke = record_as(0, 1, 1);
    cr_assert(pg_bool(ref, "done") && pg_bool(ref, "ref_pass") && pg_bool(ref, "ref_deps"));
    cr_assert(!pg_bool(plain, "regressed"), "a plain run after a --ref-deps pass is no regression");
    cr_assert(pg_bool(plain, "ref_pass") && !pg_bool(plain, "done"), "the pass is kept as such");
    cr_assert(!pg_bool(again, "regressed") && pg_bool(again, "ref_pass"));
    cr_assert(pg_bool(own, "done") && !pg_bool(own, "ref_pass") && !pg_bool(own, "regressed"),
              "a plain pass is the chapter done");
    cr_assert(pg_bool(broke, "regressed"), "failing with the reference after a pass: broken");
    json_decref(ref), json_decref(plain), json_decref(again), json_decref(own), json_decref(broke);
}
