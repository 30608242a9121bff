#define _GNU_SOURCE
/* test_card.c: the progress card and the study session card: what a study group reads. */
#include "card.h"
#include "session.h"
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

/* The card of the tiny course with 1.1 done (3+1 points) and 2.1 half done, as text. */
static char *card(int week, int ref_deps, double vs_mpi)
{
    struct roadmap_row rows[MAX_CHAPTERS];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < c.n; i++)
        rows[i].ch = &c.chapters[i];
    rows[0] = (struct roadmap_row){.ch = &c.chapters[0],
                                   .status = ST_DONE,
                                   .code = {CODE_WRITTEN, 0},
                                   .ran = 1,
                                   .built = 1,
                                   .passed = 2,
                                   .total = 2,
                                   .points = 4,
                                   .max_points = 4,
                                   .ref_deps = ref_deps,
                                   .hints_used = 2,
                                   .vs_mpi = vs_mpi,
                                   .vs_ref = 0.9};
    rows[1] = (struct roadmap_row){.ch = &c.chapters[1],
                                   .status = ST_PROGRESS,
                                   .code = {CODE_EDITED, 2},
                                   .ran = 1,
                                   .built = 1,
                                   .passed = 1,
                                   .total = 3,
                                   .points = 1,
                                   .max_points = 3,
                                   .regressed = 1};
    char *text = NULL;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    card_write(f, &c, rows, week, 1700000000);
    fclose(f);
    return text;
}

Test(card, roadmap_table_with_status_marks, .init = setup, .fini = teardown)
{
    char *t = card(0, 0, 1.31);
    cr_assert(strstr(t, "| ✅ | 1.1 | A | written | 2/2 | 4/4 | 1.31x MPI, 0.90x ref |"), "%s", t);
    cr_assert(strstr(t, "| 🚧 | 2.1 | C | 2 todo | 1/3 (broke since it passed) | 1/3 | - |"), "%s",
              t);
    cr_assert(strstr(t, "| ⬜ | 2.2 | D | | *coming* |"), "%s", t);
    cr_assert(strstr(t, "**1/2 chapters done** · **5/7 points** · 3/5 tests passing · 2 hints "
                        "used"),
              "%s", t);
    cr_assert(strstr(t, "|----|"), "a Markdown table: %s", t);
    cr_assert_null(strstr(t, "\\*"), "no footnote without --ref-deps: %s", t);
    free(t);
}

Test(card, week_filter_and_ref_deps_footnote, .init = setup, .fini = teardown)
{
    char *t = card(2, 0, 0);
    cr_assert_null(strstr(t, "| 1.1 |"), "week 2 only: %s", t);
    cr_assert(strstr(t, "| 2.1 |") && strstr(t, "| 2.2 |"), "%s", t);
    free(t);
    t = card(0, 1, 0);
    cr_assert(strstr(t, "2/2\\*"), "a chapter passed with --ref-deps is marked: %s", t);
    cr_assert(strstr(t, "\\* passed with the earlier chapters taken from the reference"), "%s", t);
    free(t);
}

/* The chat card (the default) of the same progress. */
static char *chat_card(int week)
{
    struct roadmap_row rows[MAX_CHAPTERS];
    char *text = NULL;
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < c.n; i++)
        rows[i].ch = &c.chapters[i];
    rows[0] = (struct roadmap_row){.ch = &c.chapters[0], .status = ST_DONE, .code = {CODE_WRITTEN, 0},
                                   .ran = 1, .built = 1, .passed = 2, .total = 2, .points = 4,
                                   .max_points = 4, .vs_mpi = 1.31, .vs_ref = 0.9};
    rows[1] = (struct roadmap_row){.ch = &c.chapters[1], .status = ST_PROGRESS,
                                   .code = {CODE_EDITED, 2}, .ran = 1, .built = 1, .passed = 1,
                                   .total = 3, .points = 1, .max_points = 3, .regressed = 1};
    size_t len;
    FILE *f = open_memstream(&text, &len);
    card_write_chat(f, &c, rows, week, 1700000000);
    fclose(f);
    return text;
}

Test(card, chat_card_is_a_list_with_emoji_and_bold, .init = setup, .fini = teardown)
{
    char *t = chat_card(0);
    cr_assert_null(strchr(t, '|'), "no table (chat servers such as Discord do not render them): %s",
                   t);
    cr_assert(strstr(t, "**Week 1**\n- ✅ **1.1** A · 4/4 pts · ⚡ 1.31x MPI, 0.90x ref\n"), "%s", t);
    cr_assert(strstr(t, "- 🚧 **2.1** C · 1/3 pts · 1/3 tests · 2 todo · broke since it passed\n"),
              "%s", t);
    cr_assert(strstr(t, "- ⬜ 2.2 D *(coming)*"), "%s", t);
    cr_assert(strstr(t, "**1/2 chapters done** · **5/7 points**"), "%s", t);
    free(t);
    t = chat_card(2);
    cr_assert_null(strstr(t, "1.1"), "week 2 only: %s", t);
    free(t);
}

/* A chapter that needs GPUs, started (its files edited) on a machine without them: it never
 * ran, so it has no points to show, and the card says why instead of " ·  pts". */
Test(card, chat_card_of_a_started_gpu_chapter_without_gpus, .init = setup, .fini = teardown)
{
    struct roadmap_row rows[MAX_CHAPTERS];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < c.n; i++)
        rows[i].ch = &c.chapters[i];
    snprintf(c.chapters[1].requires, sizeof c.chapters[1].requires, "2 GPUs + NVSHMEM");
    rows[1].status = ST_PROGRESS;
    rows[1].code = (struct code_info){CODE_EDITED, 3};
    char *t = NULL;
    size_t len;
    FILE *f = open_memstream(&t, &len);
    card_write_chat(f, &c, rows, 0, 1700000000);
    fclose(f);
    cr_assert(strstr(t, "- 🚧 **2.1** C · *optional, needs 2 GPUs + NVSHMEM* · 3 todo\n"), "%s", t);
    cr_assert_null(strstr(t, " pts"), "no points line without points: %s", t);
    free(t);
}

/* 17 chapters with long titles, every one under way with all a row can say, or every one done
 * with its ratios: the card still fits one chat message. */
Test(card, chat_card_of_a_whole_course_fits_one_message)
{
    static struct course big;
    struct roadmap_row rows[MAX_CHAPTERS];
    memset(&big, 0, sizeof big);
    snprintf(big.title, sizeof big.title, "tshmem: build your own NVSHMEM");
    big.n = 17;
    for (int i = 0; i < big.n; i++) {
        struct chapter *ch = &big.chapters[i];
        ch->week = 1 + i / 6;
        snprintf(ch->id, sizeof ch->id, "%d.%d", 1 + i / 6 % 9, 1 + i % 6); /* weeks 1-3 */
        snprintf(ch->title, sizeof ch->title, "A chapter title of forty characters, %02d", i);
        ch->available = 1;
    }
    for (int done = 0; done < 2; done++) {
        for (int i = 0; i < big.n; i++)
            rows[i] = (struct roadmap_row){.ch = &big.chapters[i],
                                           .status = done ? ST_DONE : ST_PROGRESS,
                                           .code = {CODE_EDITED, 12}, .ran = 1, .built = 1,
                                           .passed = 18, .total = 19, .points = 130,
                                           .max_points = 133, .regressed = !done,
                                           .ref_deps = done, .vs_mpi = 12.5, .vs_ref = 0.93};
        char *t = NULL;
        size_t len;
        FILE *f = open_memstream(&t, &len);
        card_write_chat(f, &big, rows, 0, 1700000000);
        fclose(f);
        cr_assert_leq(chat_length(t), CHAT_LIMIT, "%zu characters: %s", chat_length(t), t);
        cr_assert(strstr(t, "17 chapters done") || strstr(t, "/17 chapters done"), "%s", t);
        cr_assert(strstr(t, "3.5"), "every chapter is still named: %s", t);
        free(t);
    }
}

Test(card, chat_length_counts_as_chat_servers_do)
{
    cr_assert_eq(chat_length("ab"), 2);
    cr_assert_eq(chat_length("✅"), 1, "a 3-byte character counts 1");
    cr_assert_eq(chat_length("🚧"), 2, "a 4-byte emoji counts 2 (a surrogate pair)");
}

/* Progress with 1.1's tests: big passing or not, small passing or not, done, hints. */
static void set_progress(struct progress *p, int big, int small, int hints)
{
    json_t *chp = progress_chapter(p, "1.1", 1);
    json_object_set_new(chp, "tests", json_pack("{s:b, s:b}", "big", big, "small", small));
    json_object_set_new(chp, "done", json_boolean(big && small));
    json_object_set_new(chp, "hints_used", json_integer(hints));
}

Test(session, compare_counts_what_changed, .init = setup, .fini = teardown)
{
    struct progress p;
    progress_open(&p, &c, 0);
    set_progress(&p, 1, 0, 1);
    json_t *start = session_snapshot(&p);
    set_progress(&p, 1, 1, 3);
    struct session_diff d = session_compare(start, &p, &c);
    cr_assert_eq(d.tests_fixed, 1, "small was fixed; big passed already");
    cr_assert_str_eq(d.fixed_list, "1.1 small");
    cr_assert_eq(d.chapters_done, 1);
    cr_assert_str_eq(d.done_list, "1.1 A");
    cr_assert_eq(d.hints, 2);
    json_decref(start);
    progress_close(&p);
}

Test(session, card_says_goal_time_and_results)
{
    struct session_diff d = {.chapters_done = 1, .tests_fixed = 2, .hints = 1};
    snprintf(d.done_list, sizeof d.done_list, "1.3 One-sided put/get");
    snprintf(d.fixed_list, sizeof d.fixed_list, "1.3 fence_orders_puts, 1.3 typed_p_g_put_get");
    struct roadmap_totals now = {.available = 4, .done = 3, .points = 40, .max_points = 71};
    char *t = NULL;
    size_t len;
    FILE *f = open_memstream(&t, &len);
    session_card_write(f, "finish put/get", 1700000000, 1700000000 + 95 * 60, 0, &d, &now);
    fclose(f);
    cr_assert(strstr(t, "### Study session: finish put/get"), "%s", t);
    cr_assert(strstr(t, "(1 h 35 min)"), "%s", t);
    cr_assert(strstr(t, "chapters passed: 1.3 One-sided put/get"), "%s", t);
    cr_assert(strstr(t, "tests fixed: 2 (1.3 fence_orders_puts, 1.3 typed_p_g_put_get)"), "%s", t);
    cr_assert(strstr(t, "hints used: 1"), "%s", t);
    cr_assert(strstr(t, "now: 3/4 chapters done, 40/71 points"), "%s", t);
    free(t);
}

/* A course update adds a test to a chapter a learner finished: the row must count the new test,
 * and the chapter is not done until it runs; the last run's own counts stay for its line. */
Test(roadmap, a_changed_suite_reopens_a_done_chapter)
{
    struct roadmap_row r = {.status = ST_DONE, .ran = 1, .built = 1, .passed = 19, .total = 19,
                            .points = 27, .max_points = 27};
    roadmap_reconcile(&r, 20, 29);
    cr_assert(r.changed, "the suite declares 20 tests where the run had 19: changed");
    cr_assert_eq(r.total, 20);
    cr_assert_eq(r.max_points, 29);
    cr_assert_eq(r.passed, 19);
    cr_assert_eq(r.points, 27);
    cr_assert_eq(r.run_total, 19, "the last run's count stays for its line");
    cr_assert_eq(r.run_max_points, 27);
    cr_assert_eq(r.status, ST_PROGRESS, "done before, in progress until the new test runs");

    struct roadmap_row same = {.status = ST_DONE, .ran = 1, .built = 1, .passed = 19, .total = 19,
                               .points = 27, .max_points = 27};
    roadmap_reconcile(&same, 19, 27);
    cr_assert(!same.changed && same.status == ST_DONE, "an unchanged suite changes nothing");

    struct roadmap_row fewer = {.status = ST_PROGRESS, .ran = 1, .built = 1, .passed = 5,
                                .total = 6, .points = 9, .max_points = 10};
    roadmap_reconcile(&fewer, 4, 7);
    cr_assert(fewer.changed && fewer.passed == 4 && fewer.points == 7,
              "tests removed: passed and points never above the new totals (%d, %d)",
              fewer.passed, fewer.points);

    struct roadmap_row fresh = {.status = ST_TODO};
    roadmap_reconcile(&fresh, 8, 18);
    cr_assert(!fresh.changed && fresh.total == 8 && fresh.max_points == 18,
              "not run yet: the declared totals, and nothing has changed");
}
