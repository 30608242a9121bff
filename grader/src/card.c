/* card.c: `grader card`: a progress card for a study group's chat. By default a list with
 * emoji and bold that renders in Discord and the like (no tables, one message of at most
 * CHAT_LIMIT characters); --format markdown: the table, for places that render tables; --json:
 * the card's facts, for `grader card --merge` (card_group.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "card.h"
#include "card_group.h"
#include "commands.h"
#include "help.h"
#include "util.h"

static void card_date(time_t now, char *date, size_t len)
{
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(date, len, "%Y-%m-%d", &tm);
}

size_t chat_length(const char *text)
{
    size_t n = 0; /* UTF-16 units, as chat servers count: a 4-byte UTF-8 emoji counts 2 */
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if ((*p & 0xC0) != 0x80)
            n += *p >= 0xF0 ? 2 : 1;
    return n;
}

void card_write(FILE *out, const struct course *c, const struct roadmap_row *rows, int week,
                time_t now)
{
    char date[32];
    card_date(now, date, sizeof date);
    fprintf(out, "### %s: progress card (%s)\n\n", c->title, date);
    fprintf(out, "|    | id | chapter | Code | Test | Points | Perf |\n");
    fprintf(out, "|----|----|---------|------|------|--------|------|\n");
    int shown = 0, ref_deps = 0;
    for (int i = 0; i < c->n; i++) {
        const struct roadmap_row *r = &rows[i];
        char t[32], pts[32], perf[80];
        if (week && r->ch->week != week)
            continue;
        shown++;
        if (!r->ch->available) {
            fprintf(out, "| ⬜ | %s | %s | | *coming* | | |\n", r->ch->id, r->ch->title);
            continue;
        }
        ref_deps |= r->ref_deps && r->status == ST_DONE;
        row_perf(r, perf); /* the best against MPI, and against the reference beside it */
        if (r->vs_mpi > 0 && r->vs_ref > 0)
            appendf(perf, sizeof perf, ", %.2fx ref", r->vs_ref);
        fprintf(out, "| %s | %s | %s | %s | %s%s%s | %s | %s |\n", status_emoji(r->status),
                r->ch->id, r->ch->title, code_word(r->code), row_test(r, t),
                r->regressed  ? " (broke since it passed)"
                : r->ref_pass ? " (passes with --ref-deps)"
                              : "",
                r->ref_deps && r->status == ST_DONE ? "\\*" : "", row_points(r, pts), perf);
    }
    if (!shown)
        fprintf(out, "| | | no chapter in week %d | | | | |\n", week);
    struct roadmap_totals tot = roadmap_sum(c, rows);
    fprintf(out,
            "\n**%d/%d chapters done** · **%d/%d points** · %d/%d tests passing · "
            "%d hint%s used\n",
            tot.done, tot.available, tot.points, tot.max_points, tot.passed, tot.total, tot.hints,
            tot.hints == 1 ? "" : "s");
    if (ref_deps)
        fprintf(out, "\n\\* passed with the earlier chapters taken from the reference "
                     "(--ref-deps)\n");
    fprintf(out, "\nCode: stub, N todo left, written. Perf: best speed against MPI and the "
                 "reference (above 1: faster).\n");
}

/* One chapter's line of the chat card: what is done is short, what is under way says more.
 * Without the title when short (a card that would not fit in one message otherwise). */
static void chat_row(FILE *out, const struct roadmap_row *r, int short_form)
{
    const struct chapter *ch = r->ch;
    const char *title = short_form ? "" : ch->title, *sp = short_form ? "" : " ";
    if (!ch->available) {
        fprintf(out, "- ⬜ %s%s%s *(coming)*\n", ch->id, sp, title);
        return;
    }
    if (r->status == ST_TODO) {
        fprintf(out, "- ⬜ %s%s%s%s\n", ch->id, sp, title, ch->requires[0] ? " *(optional)*" : "");
        return;
    }
    char pts[32], perf[80];
    fprintf(out, "- %s **%s**%s%s", status_emoji(r->status), ch->id, sp, title);
    if (row_points(r, pts)[0])
        fprintf(out, " · %s pts", pts);
    else if (ch->requires[0]) /* no points: an optional chapter, not run on this machine */
        fprintf(out, " · *optional, needs %s*", ch->requires);
    if (r->status != ST_DONE) {
        if (r->ran && !r->built)
            fprintf(out, " · does not build");
        else if (r->ran)
            fprintf(out, " · %d/%d tests", r->passed, r->total);
        if (r->code.todos)
            fprintf(out, " · %d todo", r->code.todos);
    }
    if (r->regressed)
        fprintf(out, " · broke since it passed");
    else if (r->ref_pass)
        fprintf(out, " · passes with --ref-deps");
    if (r->ref_deps && r->status == ST_DONE)
        fprintf(out, " · with --ref-deps");
    if (r->vs_mpi > 0 || r->vs_ref > 0) {
        row_perf(r, perf);
        fprintf(out, " · ⚡ %s", perf);
        if (r->vs_mpi > 0 && r->vs_ref > 0)
            fprintf(out, ", %.2fx ref", r->vs_ref);
    }
    fprintf(out, "\n");
}

/* A week's chapters of one status on one line ("- ✅ 1.1, 1.2, 1.3"), for the compact card. */
static void chat_ids(FILE *out, const struct course *c, const struct roadmap_row *rows, int week,
                     enum chapter_status st)
{
    int k = 0;
    for (int i = 0; i < c->n; i++)
        if (rows[i].ch->week == week && rows[i].status == st)
            fprintf(out, "%s%s", k++ ? ", " : st == ST_DONE ? "- ✅ " : "- ⬜ ", rows[i].ch->id);
    if (k)
        fprintf(out, "\n");
}

/* level 0: a line per chapter; 1: a week's done and to-do chapters as one line each; 2: and
 * the chapters under way without their titles. */
static char *chat_text(const struct course *c, const struct roadmap_row *rows, int week,
                       time_t now, int level)
{
    char date[32], *text = NULL;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    card_date(now, date, sizeof date);
    fprintf(out, "**%s** · progress card · %s\n", c->title, date);
    int shown = 0, last_week = 0;
    for (int i = 0; i < c->n; i++) {
        const struct roadmap_row *r = &rows[i];
        if (week && r->ch->week != week)
            continue;
        if (r->ch->week != last_week) {
            fprintf(out, "**Week %d**\n", last_week = r->ch->week);
            if (level)
                chat_ids(out, c, rows, last_week, ST_DONE);
        }
        if (!level || r->status == ST_PROGRESS)
            chat_row(out, r, level > 1);
        if (level && (i + 1 == c->n || rows[i + 1].ch->week != last_week))
            chat_ids(out, c, rows, last_week, ST_TODO);
        shown++;
    }
    if (!shown)
        fprintf(out, "No chapter in week %d.\n", week);
    struct roadmap_totals tot = roadmap_sum(c, rows);
    fprintf(out, "🏁 **%d/%d chapters done** · **%d/%d points** · %d/%d tests · 💡 %d hint%s\n",
            tot.done, tot.available, tot.points, tot.max_points, tot.passed, tot.total, tot.hints,
            tot.hints == 1 ? "" : "s");
    fclose(out);
    return text;
}

void card_write_chat(FILE *out, const struct course *c, const struct roadmap_row *rows, int week,
                     time_t now)
{
    char *text = chat_text(c, rows, week, now, 0);
    for (int level = 1; level <= 2 && chat_length(text) > CHAT_LIMIT; level++) {
        free(text);
        text = chat_text(c, rows, week, now, level);
    }
    fputs(text, out);
    free(text);
}

json_t *card_json(const struct course *c, const struct roadmap_row *rows, const char *name,
                  time_t now)
{
    char date[32];
    card_date(now, date, sizeof date);
    json_t *chs = json_array();
    for (int i = 0; i < c->n; i++) {
        const struct roadmap_row *r = &rows[i];
        json_array_append_new(
            chs, json_pack("{s:s, s:s, s:i, s:b, s:s, s:i, s:i, s:i, s:i, s:b, s:b, s:b, s:i, s:f, "
                           "s:f}",
                           "id", r->ch->id, "title", r->ch->title, "week", r->ch->week,
                           "available", r->ch->available, "status", status_word(r->status),
                           "passed", r->passed, "total", r->total, "points", r->points,
                           "max_points", r->max_points, "regressed", r->regressed, "ref_pass",
                           r->ref_pass, "ref_deps", r->ref_deps, "hints_used", r->hints_used,
                           "vs_mpi", r->vs_mpi, "vs_ref", r->vs_ref));
    }
    struct roadmap_totals t = roadmap_sum(c, rows);
    char updated[32], last_run[32] = "";
    time_iso(now, updated, sizeof updated);
    for (int i = 0; i < c->n; i++) /* ISO times sort as text */
        if (strcmp(rows[i].last_run, last_run) > 0)
            snprintf(last_run, sizeof last_run, "%s", rows[i].last_run);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s?, s:o, s:{s:i, s:i, s:i, s:i, s:i}}", "card",
                     "tshmem progress", "name", name, "course", c->title, "date", date,
                     "updated", updated, "last_run", last_run[0] ? last_run : NULL, "chapters",
                     chs, "totals", "done", t.done, "available", t.available, "points",
                     t.points, "max_points", t.max_points, "hints", t.hints);
}

static const char *default_name(void)
{
    const char *n = getenv("USER");
    return n && *n ? n : "me";
}

int cmd_card(const struct course *c, int argc, char **argv)
{
    if (wants_help("card", argc, argv))
        return 0;
    int week = 0, json = 0, markdown = 0, merge = 0, nfiles = 0;
    char *files[64]; /* card_merge says so when there are more than a card shows */
    const char *name = default_name();
    for (int i = 0; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--week") && i + 1 < argc) {
            errno = 0;
            long w = strtol(argv[++i], &end, 10);
            int weeks = 0;
            for (int k = 0; k < c->n; k++)
                weeks = c->chapters[k].week > weeks ? c->chapters[k].week : weeks;
            if (end == argv[i] || *end || errno || w < 1 || w > weeks) {
                fprintf(stderr,
                        "grader card: --week takes a week of the course, 1 to %d, not "
                        "'%s'.\n",
                        weeks, argv[i]);
                return 2;
            }
            week = (int)w;
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            markdown = !strcmp(argv[++i], "markdown");
            if (!markdown && strcmp(argv[i], "chat")) {
                fprintf(stderr, "grader card: --format is chat (the default: lists and emoji, "
                                "for Discord) or markdown (a table), not '%s'.\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--name") && i + 1 < argc) {
            name = argv[++i];
        } else if (!strcmp(argv[i], "--merge")) {
            merge = 1;
        } else if (merge && argv[i][0] != '-') {
            files[nfiles < 64 ? nfiles : 63] = argv[i];
            nfiles++;
        } else {
            return bad_argument("card", argv[i]);
        }
    }
    int known = 0;
    for (int i = 0; i < c->n; i++)
        known |= c->chapters[i].week == week;
    if (merge && (!week || known))
        return card_merge(c, nfiles, files, markdown, week);
    if (week && !known) {
        fprintf(stderr,
                "grader card: the course has no week %d (grader list shows the "
                "roadmap).\n",
                week);
        return 2;
    }
    struct progress p;
    struct roadmap_row rows[MAX_CHAPTERS];
    progress_open(&p, c, 0);
    roadmap_rows(c, &p, rows);
    if (json) {
        json_t *o = card_json(c, rows, name, time(NULL));
        json_dumpf(o, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(4));
        printf("\n");
        json_decref(o);
    } else if (markdown) {
        card_write(stdout, c, rows, week, time(NULL));
    } else {
        card_write_chat(stdout, c, rows, week, time(NULL));
    }
    progress_close(&p);
    return 0;
}
