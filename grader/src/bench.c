/* bench.c: `grader bench`: the chapter's benchmark (grader/bench/bench_X_Y.c, see bench.h),
 * built from the learner's code and from the reference, run under tshrun with a hard timeout,
 * shown side by side with MPI's figures; a CSV under build/bench/, best ratios in progress. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_lines.h"
#include "commands.h"
#include "job.h"
#include "progress.h"
#include "run.h"
#include "util.h"

struct bench_opts {
    int pes, quick;
    const char *fixture; /* $TSHMEM_GRADER_BENCH_FIXTURE: prebuilt programs, for tests */
};

/* The program of a variant ("learner" or "solutions"), built when needed. NULL after saying
 * why. */
static char *bench_program(const struct course *c, const struct chapter *ch, const char *impl,
                           const struct bench_opts *o, char **why)
{
    char name[32], *path = NULL;
    snprintf(name, sizeof name, "bench_%s", ch->id);
    for (char *p = name; *p; p++)
        *p = *p == '.' ? '_' : *p;
    *why = NULL;
    if (o->fixture) {
        if (asprintf(&path, "%s/%s/%s", o->fixture, impl, name) < 0)
            return NULL;
        if (access(path, X_OK) != 0) {
            if (asprintf(why, "there is no program %s", path) < 0)
                *why = NULL;
            free(path);
            return NULL;
        }
        return path;
    }
    struct variant v = {.impl = impl};
    char *log = NULL;
    if (run_make(c, &v, "bench-programs", &log) != 0) {
        *why = log;
        return NULL;
    }
    free(log);
    if (asprintf(&path, "%s/build/%s/bin/%s", c->root, impl, name) < 0)
        return NULL;
    return path;
}

/* Runs one program; its bench lines go into set (as `run`). 0, or -1 after saying why. */
static int bench_run(const struct course *c, const struct chapter *ch, const char *prog,
                     const char *run, const struct bench_opts *o, struct bench_set *set)
{
    if (!getenv("TSHMEM_ROOT"))
        setenv("TSHMEM_ROOT", c->root, 1); /* where the job runner finds tools/tshrun */
    const char *full[] = {"8", NULL};      /* every size: --min 8 (to 64 MiB, bench.h's default) */
    struct pe_job job;
    printf("  running %s on %d PEs ...\n", run, o->pes);
    fflush(stdout);
    job_runv(&job, ch->id, prog, o->pes, o->quick ? "--quick" : "--min", o->quick ? NULL : full,
             NULL, o->quick ? 180 : 600);
    int before = set->n;
    bench_parse(set, job.output, run);
    int rc = 0;
    if (job.timed_out || job.status != 0 || set->n == before) {
        char *digest = job.timed_out ? NULL : job_digest(&job);
        printf("  the %s run %s:\n%s\n", run,
               job.timed_out      ? "did not finish"
               : set->n == before ? "printed no figures"
                                  : "failed",
               job.timed_out ? job.hang_report : digest);
        free(digest);
        rc = -1;
    }
    job_free(&job);
    return grader_stop ? -1 : rc;
}

/* Keeps the best ratios ever measured (above 1: the learner's code is faster). */
static void record(const struct course *c, const struct chapter *ch, const struct bench_best *b)
{
    struct progress p;
    progress_open(&p, c, 1);
    json_t *chp = progress_chapter(&p, ch->id, 1), *old = json_object_get(chp, "bench");
    json_t *bench = json_is_object(old) ? json_deep_copy(old) : json_object();
    char now[32];
    time_iso(time(NULL), now, sizeof now);
    if (b->vs_mpi > pg_real(bench, "vs_mpi")) {
        json_object_set_new(bench, "vs_mpi", json_real(b->vs_mpi));
        json_object_set_new(
            bench, "vs_mpi_at",
            json_pack("{s:s, s:I}", "op", b->mpi_op, "bytes", (json_int_t)b->mpi_bytes));
    }
    if (b->vs_ref > pg_real(bench, "vs_ref")) {
        json_object_set_new(bench, "vs_ref", json_real(b->vs_ref));
        json_object_set_new(
            bench, "vs_ref_at",
            json_pack("{s:s, s:I}", "op", b->ref_op, "bytes", (json_int_t)b->ref_bytes));
    }
    json_object_set_new(bench, "last_run", json_string(now));
    json_object_set_new(chp, "bench", bench);
    progress_save(&p);
    progress_close(&p);
}

static int parse_opts(int argc, char **argv, const char **id, struct bench_opts *o)
{
    for (int i = 0; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--quick")) {
            o->quick = 1;
        } else if (!strcmp(argv[i], "--pes") && i + 1 < argc) {
            o->pes = (int)strtol(argv[++i], &end, 10);
            if (*end || o->pes < 1 || o->pes > 64) {
                fprintf(stderr,
                        "grader bench: --pes takes a number of PEs from 1 to 64, not "
                        "'%s'.\n",
                        argv[i]);
                return 2;
            }
        } else if (argv[i][0] != '-' && !*id) {
            *id = argv[i];
        } else {
            return bad_argument("bench", argv[i]);
        }
    }
    return 0;
}

int cmd_bench(const struct course *c, int argc, char **argv)
{
    if (wants_help("bench", argc, argv))
        return 0;
    struct bench_opts o = {.pes = 2, .fixture = getenv("TSHMEM_GRADER_BENCH_FIXTURE")};
    const char *id = NULL;
    int rc = parse_opts(argc, argv, &id, &o);
    if (rc)
        return rc;
    const struct chapter *ch = chapter_arg(c, "bench", id);
    if (!ch)
        return 2;
    char src[4300], *why = NULL;
    if (!o.fixture && !chapter_bench_source(c, ch, src, sizeof src)) {
        printf("There is no benchmark for chapter %s yet: its figures would come from %s.\n",
               ch->id, src + strlen(c->root) + 1);
        return 0;
    }
    printf("Benchmark of chapter %s, %s, on %d PEs%s\n", ch->id, ch->title, o.pes,
           o.quick ? " (quick)" : "");
    stop_on_signals();
    struct bench_set set = {0};
    char *ref = bench_program(c, ch, "solutions", &o, &why);
    if (!ref) {
        printf("The reference benchmark does not build:\n%s\n", why ? why : "");
        free(why);
        return 1;
    }
    int ref_ok = bench_run(c, ch, ref, "reference", &o, &set) == 0;
    free(ref);
    char *mine = grader_stop ? NULL : bench_program(c, ch, "learner", &o, &why);
    if (!mine && !grader_stop)
        printf("  your code does not build, so only the reference and MPI are measured:\n%s\n",
               why ? why : "");
    free(why);
    struct progress p;
    progress_open(&p, c, 0);
    int done = pg_bool(progress_chapter(&p, ch->id, 0), "done");
    progress_close(&p);
    if (mine && !done)
        printf("  note: chapter %s does not pass its tests yet (grader test %s), so your "
               "figures may not mean much.\n",
               ch->id, ch->id);
    int mine_ok = mine && bench_run(c, ch, mine, "yours", &o, &set) == 0;
    free(mine);
    if (grader_stop) {
        printf("Stopped: the benchmark was interrupted, and nothing of it is left running.\n");
        return stop_status();
    }
    if (!ref_ok && !mine_ok)
        return 1;
    printf("\n");
    bench_table(stdout, &set);
    struct bench_best best = bench_best(&set);
    char csv[4300], stamp[32];
    time_stamp(time(NULL), stamp, sizeof stamp);
    snprintf(csv, sizeof csv, "%s/build/bench", c->root);
    make_dirs(csv);
    snprintf(csv, sizeof csv, "%s/build/bench/bench_%s-%s.csv", c->root, ch->id, stamp);
    if (bench_csv(csv, ch->id, &set) == 0)
        printf("\nAll figures: %s\n", csv + strlen(c->root) + 1);
    if (mine_ok && (best.vs_mpi > 0 || best.vs_ref > 0)) {
        record(c, ch, &best);
        printf("Your best: %.2fx MPI (%s, %zu B), %.2fx the reference (%s, %zu B).\n", best.vs_mpi,
               best.mpi_op, best.mpi_bytes, best.vs_ref, best.ref_op, best.ref_bytes);
    }
    return mine_ok ? 0 : 1;
}
