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
#include "help.h"
#include "job.h"
#include "progress.h"
#include "run.h"
#include "util.h"

struct bench_opts {
    int pes, quick;
    const char *hosts;   /* --hosts a,b: across machines (tshrun -H, through TSHRUN_HOSTS) */
    int ref_only;        /* --impl solutions: the reference and MPI only (make test) */
    int ref_deps;        /* --ref-deps: yours built with the earlier chapters from the reference */
    const char *fixture; /* $TSHMEM_GRADER_BENCH_FIXTURE: prebuilt programs, for tests */
};

/* The program of a variant ("learner" or "solutions"), built when needed. NULL after saying
 * why. */
static char *bench_program(const struct course *c, const struct chapter *ch, const char *impl,
                           const struct bench_opts *o, char **why)
{
    char name[CHAPTER_PATH_MAX], *path = NULL;
    chapter_path(ch, CH_BENCH, name, sizeof name);
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
    /* --ref-deps, as grader test takes it: every chapter before this one from the reference
     * (REF="1.1 1.2 ..."), so that a learner who went on with it measures their own chapter. */
    for (int j = 0; o->ref_deps && !strcmp(impl, "learner") && &c->chapters[j] != ch; j++)
        appendf(v.ref, sizeof v.ref, "%s ", c->chapters[j].id);
    char *log = NULL, *dir = NULL;
    if (run_make(c, &v, "bench-programs", &log) != 0) {
        *why = log;
        return NULL;
    }
    free(log);
    if (run_make(c, &v, "print-build-dir", &dir) != 0 || !dir) {
        *why = dir ? dir : strdup("make print-build-dir failed");
        return NULL;
    }
    dir[strcspn(dir, "\n")] = '\0';
    if (asprintf(&path, "%s/%s/bin/%s", c->root, dir, name) < 0)
        path = NULL;
    free(dir);
    return path;
}

/* The program's "# " lines: what a table by operation and size cannot hold (2.4's hidden
 * fraction, 3.2's bubble against the theory), each without its "# ", indented; NULL if none. */
static char *comment_lines(const char *out)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return NULL;
    for (const char *l = out ? out : ""; *l;) {
        const char *e = strchrnul(l, '\n');
        if (!strncmp(l, "# ", 2))
            fprintf(f, "  %.*s\n", (int)(e - l - 2), l + 2);
        l = *e ? e + 1 : e;
    }
    fclose(f);
    if (len == 0) {
        free(s);
        return NULL;
    }
    return s;
}

/* The second run of `prog` across two virtual nodes joined by chapter 2.5's modeled network
 * card (TSHMEM_LINK), for a chapter whose course.json entry has "bench_across_nodes" (2.4's
 * overlap, which pays where a card, not a CPU, moves the bytes): its "# " lines are added to
 * *notes. 0, or -1 after saying why. */
static int across_nodes_run(const struct chapter *ch, const char *prog, const char *run,
                            const struct bench_opts *o, char **notes)
{
    if (!ch->bench_op[0] || o->hosts || o->pes < 2) /* real machines have a real network */
        return 0;
    char ppn[48], link[64];
    snprintf(ppn, sizeof ppn, "TSHMEM_PES_PER_NODE=%d", (o->pes + 1) / 2);
    snprintf(link, sizeof link, "TSHMEM_LINK=%s", ch->bench_link);
    const char *env[] = {ppn, link, NULL};
    const char *args[] = {ch->bench_op, o->quick ? "--quick" : NULL, NULL};
    printf("  running %s again across 2 virtual nodes (%s, %s) ...\n", run, ppn, link);
    fflush(stdout);
    struct pe_job job;
    job_runv(&job, ch->id, prog, o->pes, "--op", args, env, o->quick ? 120 : 600);
    char *more = comment_lines(job.output);
    int rc = 0;
    if (job.timed_out || job.status != 0 || !more) {
        char *digest = job.timed_out ? NULL : job_digest(&job);
        printf("  the %s run across virtual nodes %s:\n%s\n", run,
               job.timed_out ? "did not finish" : !more ? "printed no figures" : "failed",
               job.timed_out ? job.hang_report : digest);
        free(digest);
        rc = -1;
    } else {
        char *all = NULL;
        if (asprintf(&all, "%s%s", *notes ? *notes : "", more) >= 0) {
            free(*notes);
            *notes = all;
        }
    }
    free(more);
    job_free(&job);
    return rc;
}

/* Runs one program; its bench lines go into set (as `run`), its "# " lines into *notes. 0, or
 * -1 after saying why. */
static int bench_run(const struct course *c, const struct chapter *ch, const char *prog,
                     const char *run, const struct bench_opts *o, struct bench_set *set,
                     char **notes)
{
    if (!getenv("TSHMEM_ROOT"))
        setenv("TSHMEM_ROOT", c->root, 1); /* where the job runner finds tools/tshrun */
    const char *full[] = {"8", NULL};      /* every size: --min 8 (to 64 MiB, bench.h's default) */
    struct pe_job job;
    if (o->hosts)
        setenv("TSHRUN_HOSTS", o->hosts, 1); /* tshrun -H: the PEs go to these machines */
    printf("  running %s on %d PEs%s%s ...\n", run, o->pes, o->hosts ? " across " : "",
           o->hosts ? o->hosts : "");
    fflush(stdout);
    job_runv(&job, ch->id, prog, o->pes, o->quick ? "--quick" : "--min", o->quick ? NULL : full,
             NULL, o->quick ? 180 : 600);
    int before = set->n;
    bench_parse(set, job.output, run);
    *notes = comment_lines(job.output);
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
    if (rc == 0 && !grader_stop)
        rc = across_nodes_run(ch, prog, run, o, notes);
    return grader_stop ? -1 : rc;
}

/* A GPU chapter's study (3.3, 3.7): `make gpu IMPL=<impl>`, then tools/gpu-test --chapter <id>
 * --bench, whose "bench op=.. impl=.." lines go into set as `run` (the same protocol as the CPU
 * benchmarks; impl tshmem is the chapter's own kernels, anything else the baseline). 0, or -1
 * after saying why. */
static int gpu_bench_run(const struct course *c, const struct chapter *ch, const char *impl,
                         const char *run, const struct bench_opts *o, struct bench_set *set,
                         char **notes)
{
    struct variant v = {.impl = impl};
    char *log = NULL;
    printf("  building %s (make gpu IMPL=%s) ...\n", run, impl);
    fflush(stdout);
    if (run_make(c, &v, "gpu", &log) != 0) {
        printf("  the %s build failed:\n%s\n", run, log ? log : "");
        free(log);
        return -1;
    }
    free(log);
    log = NULL;
    printf("  running %s on GPUs ...\n", run);
    fflush(stdout);
    char *argv[] = {"tools/gpu-test", "--chapter", (char *)ch->id, "--impl", (char *)impl,
                    "--bench", o->quick ? "--quick" : NULL, NULL};
    int status = run_quiet(c, argv, &log);
    int before = set->n;
    bench_parse(set, log, run);
    *notes = comment_lines(log);
    int rc = 0;
    if (status != 0 || set->n == before) {
        printf("  the %s run %s:\n%s\n", run, set->n == before ? "printed no figures" : "failed",
               log ? log : "");
        rc = -1;
    }
    free(log);
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
        } else if (!strcmp(argv[i], "--hosts") && i + 1 < argc) {
            o->hosts = argv[++i];
            if (!*o->hosts || strspn(o->hosts, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                               "0123456789.-_:,") != strlen(o->hosts)) {
                fprintf(stderr, "grader bench: --hosts takes machine names separated by commas "
                                "(as tshrun -H), not '%s'.\n", o->hosts);
                return 2;
            }
        } else if (!strcmp(argv[i], "--ref-deps")) {
            o->ref_deps = 1;
        } else if (!strcmp(argv[i], "--impl") && i + 1 < argc) {
            const char *impl = argv[++i];
            if (strcmp(impl, "learner") && strcmp(impl, "solutions")) {
                fprintf(stderr, "grader bench: --impl is learner or solutions, not '%s'.\n", impl);
                return 2;
            }
            o->ref_only = !strcmp(impl, "solutions");
        } else if (argv[i][0] != '-' && !*id) {
            *id = argv[i];
        } else {
            return bad_argument("bench", argv[i]);
        }
    }
    return 0;
}

/* Draws build/bench/<csv stem>-<op>.svg and .png for every operation measured at more than
 * one size: bus bandwidth against size, one line per run and implementation. */
static void plot(const struct course *c, const char *csv, const struct bench_set *set)
{
    char *out = NULL;
    char *probe[] = {"sh", "-c", "command -v gnuplot", NULL};
    int have = run_quiet(c, probe, &out) == 0;
    free(out);
    if (!have) {
        printf("No plot: gnuplot is not installed (make deps-book installs it).\n");
        return;
    }
    size_t stem = strlen(csv) - strlen(".csv");
    int drawn = 0, failed = 0;
    for (int i = 0; i < set->n; i++) {
        const struct bench_line *b = &set->lines[i];
        int seen = 0, sizes = 0;
        for (int j = 0; j < i; j++)
            seen |= !strcmp(set->lines[j].op, b->op);
        for (int j = 0; j < set->n; j++)
            sizes += !strcmp(set->lines[j].op, b->op) && set->lines[j].bytes != b->bytes;
        if (seen || !sizes || !b->bytes)
            continue;
        char title[96], opname[32];
        snprintf(opname, sizeof opname, "%s", b->op);
        snprintf(title, sizeof title, "%s on %d PEs: bus bandwidth (GB/s)", b->op, b->pes);
        for (int k = 0; k < 2; k++) {
            char path[PATH_MAX], *log = NULL;
            if (path_format(path, "%.*s-%s.%s", (int)stem, csv, b->op, k ? "png" : "svg") != 0) {
                if (!failed++)
                    printf("No plot of %s: the path of its file would be too long.\n", b->op);
                continue;
            }
            char *argv[] = {"bash", "tools/plot-bench", (char *)csv, path,       "--op",    opname,
                            "--y",  "busbw_GBps",       "--series",  "run,impl", "--title", title,
                            NULL};
            if (run_quiet(c, argv, &log) == 0)
                drawn++;
            else if (!failed++)
                printf("The plot %s failed:\n%s\n", path, log ? log : "");
            free(log);
        }
    }
    if (drawn)
        printf("Plots (bus bandwidth against size): %.*s-<op>.svg and .png\n",
               (int)(stem - strlen(c->root) - 1), csv + strlen(c->root) + 1);
}

/* The reference's run must not have rotted: every operation that has a baseline (MPI or
 * memcpy) at some size has, at each size, both its tshmem figure and the baseline's. (Variants
 * such as allreduce_rd are tshmem only, by design.) 0, or -1 after saying which. */
static int check_pairs(const struct bench_set *set)
{
    int bad = 0;
    for (int i = 0; i < set->n; i++) {
        const struct bench_line *b = &set->lines[i];
        if (strcmp(b->run, "reference"))
            continue;
        int mine = 0, base = 0, op_has_base = 0;
        for (int j = 0; j < set->n; j++) {
            const struct bench_line *x = &set->lines[j];
            if (strcmp(x->run, "reference") || strcmp(x->op, b->op))
                continue;
            int is_base = strcmp(x->impl, "tshmem") != 0;
            op_has_base |= is_base;
            if (x->bytes == b->bytes) {
                base |= is_base;
                mine |= !is_base;
            }
        }
        if ((!mine || (op_has_base && !base)) && bad++ < 5)
            printf("  the reference's run printed %s of %zu bytes without its %s figure\n", b->op,
                   b->bytes, mine ? "baseline (MPI or memcpy)" : "tshmem");
    }
    return bad ? -1 : 0;
}

/* The end of a chapter's benchmark: the table, the notes, the CSV and plots, the best ratios
 * in progress. Frees set and notes. 0 when every run that was asked for printed its figures. */
static int bench_report(const struct course *c, const struct chapter *ch,
                        const struct bench_opts *op, struct bench_set *set, char *notes[2],
                        int ref_ok, int mine_ok, FILE *worst)
{
    const struct bench_opts o = *op;
    int rc;
    if (grader_stop) {
        printf("Stopped: the benchmark was interrupted, and nothing of it is left running.\n");
        free(notes[0]);
        free(notes[1]);
        free(set);
        return stop_status();
    }
    if (!ref_ok && !mine_ok) {
        free(notes[0]);
        free(notes[1]);
        free(set);
        return 1;
    }
    printf("\n");
    bench_table(stdout, set);
    for (int i = 0; i < 2; i++)
        if (notes[i])
            printf("\nMore figures from %s:\n%s", i ? "your code's run" : "the reference run",
                   notes[i]);
    printf("\nWorst ratio against the baseline, per operation (above 1: faster; the speed "
           "column's ref/base, yours/base):\n");
    if (bench_worst(stdout, ch->id, set) == 0)
        printf("  (no operation of this chapter has a baseline)\n");
    if (worst)
        bench_worst(worst, ch->id, set);
    struct bench_best best = bench_best(set);
    char csv[PATH_MAX], stamp[32];
    time_stamp(time(NULL), stamp, sizeof stamp);
    if (path_format(csv, "%s/build/bench", c->root) == 0)
        make_dirs(csv);
    if (path_format(csv, "%s/build/bench/bench_%s-%s.csv", c->root, ch->id, stamp) != 0)
        printf("\nNo CSV of the figures: the course folder's path is too long.\n");
    else if (bench_csv(csv, ch->id, set) == 0) {
        printf("\nAll figures: %s\n", csv + strlen(c->root) + 1);
        plot(c, csv, set);
    }
    if (mine_ok && (best.vs_mpi > 0 || best.vs_ref > 0)) {
        record(c, ch, &best);
        printf("Your best: %.2fx MPI (%s, %zu B), %.2fx the reference (%s, %zu B).\n", best.vs_mpi,
               best.mpi_op, best.mpi_bytes, best.vs_ref, best.ref_op, best.ref_bytes);
    }
    rc = o.ref_only ? !ref_ok || check_pairs(set) != 0 : !mine_ok;
    free(notes[0]);
    free(notes[1]);
    free(set);
    return rc;
}


/* One chapter's benchmark: the reference, then (unless ref_only) your code. 0 when every run
 * that was asked for printed its figures. */
static int bench_chapter(const struct course *c, const struct chapter *ch,
                         const struct bench_opts *op, FILE *worst)
{
    struct bench_opts o = *op;
    char src[PATH_MAX], *why = NULL;
    if (!o.fixture && !chapter_bench_source(c, ch, src, sizeof src)) {
        printf("There is no benchmark for chapter %s yet: its figures would come from %s.\n",
               ch->id, src + strlen(c->root) + 1);
        return 0;
    }
    int gpu = ch->requires[0] && !o.fixture;
    if (gpu) { /* skipped, with the reason, where the machine lacks the GPUs or NVSHMEM */
        char *check[] = {"tools/gpu-test", "--chapter", (char *)ch->id, "--check", NULL};
        char *text = NULL;
        int st = run_quiet(c, check, &text);
        if (st != 0) {
            printf("Chapter %s's study is skipped: %s", ch->id, text ? text : "tools/gpu-test "
                   "--check failed\n");
            free(text);
            return 0;
        }
        free(text);
    }
    if (gpu)
        printf("Benchmark of chapter %s, %s, on GPUs%s\n", ch->id, ch->title,
               o.quick ? " (quick)" : "");
    else
        printf("Benchmark of chapter %s, %s, on %d PEs%s%s%s\n", ch->id, ch->title, o.pes,
               o.hosts ? " across " : "", o.hosts ? o.hosts : "", o.quick ? " (quick)" : "");
    struct bench_set *set = calloc(1, sizeof *set);
    if (!set)
        return 1;
    char *notes[2] = {NULL, NULL}; /* the reference's, yours */
    if (gpu) {
        int ref_ok = gpu_bench_run(c, ch, "solutions", "reference", &o, set, &notes[0]) == 0;
        int mine_ok = !o.ref_only && !grader_stop &&
                      gpu_bench_run(c, ch, "learner", "yours", &o, set, &notes[1]) == 0;
        return bench_report(c, ch, &o, set, notes, ref_ok, mine_ok, worst);
    }
    char *ref = bench_program(c, ch, "solutions", &o, &why);
    if (!ref) {
        printf("The reference benchmark does not build:\n%s\n", why ? why : "");
        free(why);
        free(set);
        return 1;
    }
    int ref_ok = bench_run(c, ch, ref, "reference", &o, set, &notes[0]) == 0;
    free(ref);
    char *mine = NULL;
    if (!o.ref_only) {
        mine = grader_stop ? NULL : bench_program(c, ch, "learner", &o, &why);
        if (!mine && !grader_stop)
            printf("  your code does not build, so only the reference and MPI are measured:\n"
                   "%s\n%s",
                   why ? why : "",
                   o.ref_deps ? "" : "  (an earlier chapter not written yet? grader bench "
                                     "CHAPTER --ref-deps takes them from the reference)\n");
        else if (mine && o.ref_deps)
            printf("  yours: your chapter %s with the earlier chapters from the reference "
                   "(--ref-deps)\n", ch->id);
        free(why);
        struct progress p;
        progress_open(&p, c, 0);
        int done = pg_bool(progress_chapter(&p, ch->id, 0), "done");
        progress_close(&p);
        if (mine && !done)
            printf("  note: chapter %s does not pass its tests yet (grader test %s), so your "
                   "figures may not mean much.\n",
                   ch->id, ch->id);
    }
    int mine_ok = mine && bench_run(c, ch, mine, "yours", &o, set, &notes[1]) == 0;
    free(mine);
    return bench_report(c, ch, &o, set, notes, ref_ok, mine_ok, worst);
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
    stop_on_signals();
    if (id && !strcmp(id, "all")) {
        /* Every available chapter that has a benchmark, in course order. */
        int ran = 0, bad = 0;
        char src[PATH_MAX], *worst = NULL;
        size_t worst_len = 0;
        FILE *w = open_memstream(&worst, &worst_len);
        for (int i = 0; i < c->n && !grader_stop; i++) {
            const struct chapter *ch = &c->chapters[i];
            if (!ch->available || (!o.fixture && !chapter_bench_source(c, ch, src, sizeof src)))
                continue;
            if (ran++)
                printf("\n");
            if (bench_chapter(c, ch, &o, w) != 0) {
                bad++;
                printf("Chapter %s: the benchmark did not complete.\n", ch->id);
            }
        }
        if (w)
            fclose(w);
        if (grader_stop) {
            free(worst);
            return stop_status();
        }
        if (worst && worst_len)
            printf("\nWorst ratio against the baseline, per operation, every chapter:\n%s", worst);
        free(worst);
        printf("\n%d chapter benchmarks run, %d did not complete.\n", ran, bad);
        return bad ? 1 : 0;
    }
    const struct chapter *ch = chapter_arg(c, "bench", id);
    if (!ch)
        return 2;
    return bench_chapter(c, ch, &o, NULL);
}
