/* session.c: `grader session start "goal"` / `end` / `status`: a study session log kept in the
 * progress file, and the card that `end` prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "help.h"
#include "session.h"
#include "util.h"

json_t *session_snapshot(struct progress *p)
{
    json_t *snap = json_pack("{s:{}, s:[], s:i}", "passing", "done", "hints", 0);
    json_t *chapters = json_object_get(p->doc, "chapters"), *chp, *passing, *done;
    passing = json_object_get(snap, "passing");
    done = json_object_get(snap, "done");
    const char *id;
    int hints = 0;
    json_object_foreach(chapters, id, chp)
    {
        json_t *list = json_array(), *tests = json_object_get(chp, "tests"), *ok;
        const char *test;
        json_object_foreach(tests, test, ok)
        {
            if (json_is_true(ok))
                json_array_append_new(list, json_string(test));
        }
        json_object_set_new(passing, id, list);
        if (pg_bool(chp, "done"))
            json_array_append_new(done, json_string(id));
        hints += pg_int(chp, "hints_used");
    }
    json_object_set_new(snap, "hints", json_integer(hints));
    return snap;
}

static int in_list(json_t *list, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        if (json_is_string(v) && !strcmp(json_string_value(v), s))
            return 1;
    }
    return 0;
}

/* Adds text to the list in buf, or ", ..." once where it does not fit. */
static void append(char *buf, size_t len, const char *text)
{
    size_t used = strlen(buf);
    if (used + strlen(text) + 8 < len)
        appendf(buf, len, "%s%s", used ? ", " : "", text);
    else if (used + 5 < len && (used < 3 || strcmp(buf + used - 3, "...") != 0))
        appendf(buf, len, ", ...");
}

struct session_diff session_compare(json_t *snapshot, struct progress *p, const struct course *c)
{
    struct session_diff d = {0};
    json_t *now = session_snapshot(p);
    json_t *was_passing = json_object_get(snapshot, "passing");
    json_t *was_done = json_object_get(snapshot, "done");
    for (int i = 0; i < c->n; i++) { /* roadmap order */
        const char *id = c->chapters[i].id;
        json_t *list = json_object_get(json_object_get(now, "passing"), id), *t;
        size_t k;
        json_array_foreach(list, k, t)
        {
            const char *test = json_string_value(t);
            if (in_list(json_object_get(was_passing, id), test))
                continue;
            char item[160];
            snprintf(item, sizeof item, "%s %s", id, test);
            append(d.fixed_list, sizeof d.fixed_list, item);
            d.tests_fixed++;
        }
        if (in_list(json_object_get(now, "done"), id) && !in_list(was_done, id)) {
            char item[160];
            snprintf(item, sizeof item, "%s %s", id, c->chapters[i].title);
            append(d.done_list, sizeof d.done_list, item);
            d.chapters_done++;
        }
    }
    d.hints = pg_int(now, "hints") - pg_int(snapshot, "hints");
    if (d.hints < 0)
        d.hints = 0;
    json_decref(now);
    return d;
}

void session_card_write(FILE *out, const char *goal, time_t start, time_t end, int open,
                        const struct session_diff *d, const struct roadmap_totals *now)
{
    char day[32], from[16], to[16], len[32];
    struct tm a, b;
    localtime_r(&start, &a);
    localtime_r(&end, &b);
    strftime(day, sizeof day, "%Y-%m-%d", &a);
    strftime(from, sizeof from, "%H:%M", &a);
    strftime(to, sizeof to, "%H:%M", &b);
    duration_words((long)(end - start), len, sizeof len);
    fprintf(out, "### Study session%s: %s\n\n", open ? " (so far)" : "", goal);
    if (open)
        fprintf(out, "- 🕒 %s, since %s (%s so far)\n", day, from, len);
    else
        fprintf(out, "- 🕒 %s, %s to %s (%s)\n", day, from, to, len);
    fprintf(out, "- ✅ chapters passed: %s\n", d->chapters_done ? d->done_list : "none yet");
    fprintf(out, "- 🔧 tests fixed: %d%s%s%s\n", d->tests_fixed, d->tests_fixed ? " (" : "",
            d->fixed_list, d->tests_fixed ? ")" : "");
    fprintf(out, "- 💡 hints used: %d\n", d->hints);
    fprintf(out, "- 📍 now: %d/%d chapters done, %d/%d points\n", now->done, now->available,
            now->points, now->max_points);
}

static int usage_error(const char *why)
{
    fprintf(stderr, "grader session: %s (try grader session --help).\n", why);
    return 2;
}

static int session_card(const struct course *c, struct progress *p, json_t *s, time_t end, int open)
{
    struct roadmap_row rows[MAX_CHAPTERS];
    const char *goal = json_string_value(json_object_get(s, "goal"));
    time_t start = time_parse_iso(json_string_value(json_object_get(s, "start")));
    struct session_diff d = session_compare(json_object_get(s, "snapshot"), p, c);
    roadmap_rows(c, p, rows);
    struct roadmap_totals tot = roadmap_sum(c, rows);
    session_card_write(stdout, goal ? goal : "(no goal)", start == (time_t)-1 ? end : start, end,
                       open, &d, &tot);
    if (!open) { /* the log keeps what the card said */
        char iso[32];
        time_iso(end, iso, sizeof iso);
        json_t *rec =
            json_pack("{s:s, s:O?, s:s, s:i, s:s, s:i, s:s, s:i}", "goal", goal ? goal : "",
                      "start", json_object_get(s, "start"), "end", iso, "chapters_done",
                      d.chapters_done, "chapters", d.done_list, "tests_fixed", d.tests_fixed,
                      "tests", d.fixed_list, "hints_used", d.hints);
        json_array_append_new(json_object_get(p->doc, "sessions"), rec);
    }
    return 0;
}

int cmd_session(const struct course *c, int argc, char **argv)
{
    if (wants_help("session", argc, argv))
        return 0;
    if (argc == 0)
        return usage_error("say start \"GOAL\", end or status");
    const char *what = argv[0];
    if (strcmp(what, "start") && strcmp(what, "end") && strcmp(what, "status"))
        return usage_error("it takes start \"GOAL\", end or status");
    if (!strcmp(what, "start") && (argc != 2 || !argv[1][0]))
        return usage_error("start takes your goal in quotes, e.g. grader session start "
                           "\"finish chapter 1.3\"");
    if (strcmp(what, "start") && argc != 1)
        return bad_argument("session", argv[1]);
    struct progress p;
    progress_open(&p, c, 1);
    json_t *open = json_object_get(p.doc, "session");
    const char *since = json_string_value(json_object_get(open, "start"));
    const char *goal = json_string_value(json_object_get(open, "goal"));
    int rc = 0;
    time_t now = time(NULL);
    if (!strcmp(what, "start") && json_is_object(open)) {
        fprintf(stderr,
                "grader session: a session is open since %s (\"%s\"): end it first with "
                "grader session end.\n",
                since ? since : "?", goal ? goal : "");
        rc = 1;
    } else if (!strcmp(what, "start")) {
        char iso[32];
        time_iso(now, iso, sizeof iso);
        /* jansson takes only UTF-8: a goal that is not would be dropped, and nothing saved */
        json_t *session = json_pack("{s:s, s:s, s:o}", "goal", argv[1], "start", iso, "snapshot",
                                    session_snapshot(&p));
        if (!session) {
            fprintf(stderr, "grader session: the goal is not UTF-8 text (your terminal's "
                            "encoding?): type it again, or in plain ASCII. Nothing was saved.\n");
            progress_close(&p);
            return 2;
        }
        json_object_set_new(p.doc, "session", session);
        rc = progress_save(&p) ? 1 : 0;
        if (!rc)
            printf("Session started at %s: %s\nWhen you stop, grader session end prints its "
                   "card.\n",
                   iso + 11, argv[1]);
    } else if (!json_is_object(open)) {
        fprintf(stderr, "grader session: no session is open; start one with grader session "
                        "start \"GOAL\".\n");
        rc = 1;
    } else if (!strcmp(what, "status")) {
        session_card(c, &p, open, now, 1);
    } else {
        json_incref(open);
        session_card(c, &p, open, now, 0);
        json_object_del(p.doc, "session");
        json_decref(open);
        rc = progress_save(&p) ? 1 : 0;
    }
    progress_close(&p);
    return rc;
}
