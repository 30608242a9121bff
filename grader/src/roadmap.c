/* roadmap.c: one row per chapter, from the metadata, the learner's files and the progress file;
 * and the plain summary that `grader` prints when its output is not a terminal. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "roadmap.h"
#include "run.h"
#include "util.h"

void roadmap_rows(const struct course *c, struct progress *p, struct roadmap_row *rows)
{
    ensure_stubs(c);
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        struct roadmap_row *r = &rows[i];
        json_t *chp = progress_chapter(p, ch->id, 0), *bench = json_object_get(chp, "bench");
        char path[PATH_MAX];
        memset(r, 0, sizeof *r);
        r->ch = ch;
        r->code = ch->available ? chapter_code(c, ch) : (struct code_info){CODE_UNKNOWN, 0};
        r->status = progress_status(chp, r->code);
        r->ran = json_object_get(chp, "total") != NULL;
        r->built = pg_bool(chp, "built");
        r->passed = pg_int(chp, "passed");
        r->total = pg_int(chp, "total");
        r->points = pg_int(chp, "points");
        r->max_points = pg_int(chp, "max_points");
        r->regressed = pg_bool(chp, "regressed");
        r->ref_deps = pg_bool(chp, "ref_deps");
        r->ref_pass = pg_bool(chp, "ref_pass") && !pg_bool(chp, "done");
        r->hints_used = pg_int(chp, "hints_used");
        r->read = pg_bool(chp, "read");
        r->has_bench = chapter_bench_source(c, ch, path, sizeof path);
        r->vs_mpi = pg_real(bench, "vs_mpi");
        r->vs_ref = pg_real(bench, "vs_ref");
        const char *last = json_string_value(json_object_get(chp, "last_run"));
        snprintf(r->last_run, sizeof r->last_run, "%s", last ? last : "");
        int declared_points = 0, declared = chapter_declared(c, ch, &declared_points);
        roadmap_reconcile(r, declared, declared_points);
    }
}

void roadmap_reconcile(struct roadmap_row *r, int declared, int declared_points)
{
    r->run_total = r->total;
    r->run_max_points = r->max_points;
    if (!r->ran || !r->built) { /* not run yet: what the suite declares */
        r->total = declared;
        r->max_points = declared_points;
        return;
    }
    if (declared <= 0 || (declared == r->total && declared_points == r->max_points))
        return;
    r->changed = 1;
    r->total = declared;
    r->max_points = declared_points;
    if (r->passed > r->total)
        r->passed = r->total;
    if (r->points > r->max_points)
        r->points = r->max_points;
    if (r->status == ST_DONE)
        r->status = ST_PROGRESS;
}

const char *row_test(const struct roadmap_row *r, char *buf)
{
    if (!r->ran)
        snprintf(buf, 32, "-");
    else if (!r->built)
        snprintf(buf, 32, "no build");
    else
        snprintf(buf, 32, "%d/%d", r->passed, r->total);
    return buf;
}

const char *row_points(const struct roadmap_row *r, char *buf)
{
    if (r->ch->available && (r->max_points > 0 || r->ran))
        snprintf(buf, 32, "%d/%d", r->points, r->max_points);
    else
        buf[0] = '\0';
    return buf;
}

const char *row_perf(const struct roadmap_row *r, char *buf)
{
    double v = r->vs_mpi > 0 ? r->vs_mpi : r->vs_ref;
    const char *fmt = v >= 100 ? "%.0fx %s" : v >= 10 ? "%.1fx %s" : "%.2fx %s";
    if (v > 0) /* at most 9 characters: "24.1x MPI" */
        snprintf(buf, 32, fmt, v, r->vs_mpi > 0 ? "MPI" : "ref");
    else
        snprintf(buf, 32, "-");
    return buf;
}

struct roadmap_totals roadmap_sum(const struct course *c, const struct roadmap_row *rows)
{
    struct roadmap_totals t = {0};
    for (int i = 0; i < c->n; i++) {
        if (!rows[i].ch->available || rows[i].ch->requires[0]) /* optional: needs hardware */
            continue;
        t.available++;
        t.done += rows[i].status == ST_DONE;
        t.points += rows[i].points;
        t.max_points += rows[i].max_points;
        t.hints += rows[i].hints_used;
        t.passed += rows[i].passed;
        t.total += rows[i].total;
    }
    return t;
}

int roadmap_optional(const struct course *c, char *ids, size_t len, char *needs, size_t nlen)
{
    int n = 0, k = 0;
    for (int i = 0; i < c->n; i++)
        n += c->chapters[i].available && c->chapters[i].requires[0];
    ids[0] = '\0';
    if (needs)
        needs[0] = '\0';
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        if (!ch->available || !ch->requires[0])
            continue;
        k++;
        appendf(ids, len, "%s%s", k == 1 ? "" : k == n ? " and " : ", ", ch->id);
        if (needs)
            appendf(needs, nlen, "%s%s needs %s", k == 1 ? "" : ", ", ch->id, ch->requires);
    }
    return n;
}

/* The summary's columns: the title takes what 80 columns leave (at most its longest). */
enum { SUM_WIDTH = 80, SUM_CODE = 7, SUM_TESTS = 8, SUM_POINTS = 7, SUM_PERF = 9, SUM_STATUS = 11 };

int cmd_summary(const struct course *c, int argc, char **argv)
{
    (void)argc, (void)argv;
    struct progress p;
    struct roadmap_row rows[MAX_CHAPTERS];
    progress_open(&p, c, 0);
    roadmap_rows(c, &p, rows);
    int perf = 0, title = 7;
    for (int i = 0; i < c->n; i++) {
        perf |= rows[i].vs_mpi > 0 || rows[i].vs_ref > 0;
        if (text_columns(c->chapters[i].title) > title)
            title = text_columns(c->chapters[i].title);
    }
    int room = SUM_WIDTH - 1 - (4 + 2) - (SUM_CODE + 1) - (SUM_TESTS + 1) - (SUM_POINTS + 1) -
               (perf ? SUM_PERF + 1 : 0) - SUM_STATUS;
    if (title > room)
        title = room;
    printf("%s\n\n%-4s  %-*s %-*s %-*s %-*s ", c->title, "id", title, "chapter", SUM_CODE, "code",
           SUM_TESTS, "tests", SUM_POINTS, "points");
    if (perf)
        printf("%-*s ", SUM_PERF, "perf");
    printf("status\n");
    for (int i = 0; i < c->n; i++) {
        const struct roadmap_row *r = &rows[i];
        char t[32], pts[32], perf_text[32], name[160];
        snprintf(name, sizeof name, "%s", r->ch->title);
        for (int cols = 0, b = 0; name[b]; b++) /* cut at `title` columns, on a character */
            if (((unsigned char)name[b] & 0xc0) != 0x80 && ++cols > title) {
                name[b] = '\0';
                break;
            }
        int pad = title - text_columns(name); /* printf pads bytes, not characters */
        if (!r->ch->available) {
            printf("%-4s  %s%*s coming\n", r->ch->id, name, pad, "");
            continue;
        }
        printf("%-4s  %s%*s %-*s %-*s %-*s ", r->ch->id, name, pad, "", SUM_CODE,
               code_word(r->code), SUM_TESTS, row_test(r, t), SUM_POINTS, row_points(r, pts));
        if (perf)
            printf("%-*s ", SUM_PERF, row_perf(r, perf_text));
        printf("%s\n", r->ch->requires[0] && r->status == ST_TODO ? "optional"
                                                                  : status_word(r->status));
    }
    struct roadmap_totals tot = roadmap_sum(c, rows);
    char line[1024] = "", ids[128], needs[512];
    putchar('\n');
    for (int i = 0; i < c->n; i++) { /* what a status word alone cannot say */
        const struct roadmap_row *r = &rows[i];
        line[0] = '\0';
        if (r->ch->available && r->regressed)
            snprintf(line, sizeof line, "%s passed before and fails now: a change broke it "
                                        "(grader test %s says where).", r->ch->id, r->ch->id);
        else if (r->ch->available && r->ref_pass)
            snprintf(line, sizeof line, "%s passes with the reference's earlier chapters "
                                        "(grader test %s --ref-deps), not yet with yours.",
                     r->ch->id, r->ch->id);
        if (line[0])
            print_wrapped(stdout, line, SUM_WIDTH - 1, 2);
    }
    int nopt = roadmap_optional(c, ids, sizeof ids, needs, sizeof needs);
    if (nopt > 0) {
        snprintf(line, sizeof line, "Optional: %s, left out of the chapters done and the points "
                                    "(%s).", ids, needs);
        print_wrapped(stdout, line, SUM_WIDTH - 1, 2);
    }
    const struct chapter *cur = current_chapter(c);
    snprintf(line, sizeof line, "%d of %d chapters done, %d of %d points.\n", tot.done,
             tot.available, tot.points, tot.max_points);
    if (tot.done == tot.available)
        appendf(line, sizeof line, "Every chapter available so far is done.");
    else if (cur)
        appendf(line, sizeof line, "Next: grader test %s (grader read %s for its page).", cur->id,
                cur->id);
    print_wrapped(stdout, line, SUM_WIDTH - 1, 2);
    progress_close(&p);
    return 0;
}
