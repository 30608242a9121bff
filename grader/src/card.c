/* card.c: `grader card`: a Markdown progress card for a study group's chat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "card.h"
#include "commands.h"
#include "util.h"

void card_write(FILE *out, const struct course *c, const struct roadmap_row *rows, int week,
                time_t now)
{
    char date[32];
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%d", &tm);
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
            snprintf(perf + strlen(perf), sizeof perf - strlen(perf), ", %.2fx ref", r->vs_ref);
        fprintf(out, "| %s | %s | %s | %s | %s%s%s | %s | %s |\n", status_emoji(r->status),
                r->ch->id, r->ch->title, code_word(r->code), row_test(r, t),
                r->regressed ? " (broke since it passed)" : "",
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

int cmd_card(const struct course *c, int argc, char **argv)
{
    if (wants_help("card", argc, argv))
        return 0;
    int week = 0;
    for (int i = 0; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--week") && i + 1 < argc) {
            week = (int)strtol(argv[++i], &end, 10);
            if (*end || week < 1) {
                fprintf(stderr,
                        "grader card: --week takes a week number such as 1, not "
                        "'%s'.\n",
                        argv[i]);
                return 2;
            }
        } else {
            return bad_argument("card", argv[i]);
        }
    }
    int known = 0;
    for (int i = 0; i < c->n; i++)
        known |= c->chapters[i].week == week;
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
    card_write(stdout, c, rows, week, time(NULL));
    progress_close(&p);
    return 0;
}
