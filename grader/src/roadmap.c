/* roadmap.c: one row per chapter, from the metadata, the learner's files and the progress file;
 * and the plain summary that `grader` prints when its output is not a terminal. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "roadmap.h"
#include "run.h"

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

int cmd_summary(const struct course *c, int argc, char **argv)
{
    (void)argc, (void)argv;
    struct progress p;
    struct roadmap_row rows[MAX_CHAPTERS];
    progress_open(&p, c, 0);
    roadmap_rows(c, &p, rows);
    printf("%s\n\n%-4s  %-34s  %-8s  %-12s  %-10s  %-11s  %s\n", c->title, "id", "chapter", "code",
           "tests", "points", "perf", "status");
    for (int i = 0; i < c->n; i++) {
        const struct roadmap_row *r = &rows[i];
        char t[32], pts[32], perf[32];
        if (!r->ch->available) {
            printf("%-4s  %-34s  coming\n", r->ch->id, r->ch->title);
            continue;
        }
        printf("%-4s  %-34s  %-8s  %-12s  %-10s  %-11s  %s%s%s%s\n", r->ch->id, r->ch->title,
               code_word(r->code), row_test(r, t), row_points(r, pts), row_perf(r, perf),
               status_word(r->status),
               r->regressed   ? " (it passed before)"
               : r->ref_pass ? " (passes with the reference's earlier chapters)"
                             : "",
               r->ch->requires[0] ? ", optional: needs " : "", r->ch->requires);
    }
    struct roadmap_totals tot = roadmap_sum(c, rows);
    const struct chapter *cur = current_chapter(c);
    printf("\n%d of %d chapters done, %d points. ", tot.done, tot.available, tot.points);
    if (tot.done == tot.available)
        printf("Every chapter available so far is done.\n");
    else if (cur)
        printf("Next: grader test %s (grader read %s for its page).\n", cur->id, cur->id);
    progress_close(&p);
    return 0;
}
