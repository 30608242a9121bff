/* mutants.c: `grader mutants` (and the selftest's phase of it): every mistake a chapter's page
 * predicts is a patch of the reference in grader/chapters/X.Y/mutants/NAME.patch, with header
 * lines that patch skips:
 *     mistake: <the mistake, as the page predicts it>
 *     page: <the page's section that predicts it>
 *     tests: <the suite's tests that catch it, as the page names them>
 *     expect: <a fragment the failure must contain>   (one line or more: each must be there)
 *     tries: <N>   (optional, 1 to 5: the mistake is a race that its tests catch on most runs,
 *                   not on every one; they run up to N times, and one catch is enough)
 * Each is built as a variant of the reference (make MUTANT=X.Y/NAME IMPL=solutions: only the
 * patched files compile, every other object is the reference's), and the tests its tests: line
 * names run on it (Criterion's --filter), stopping at the first that fails. A mutant is caught
 * when one of them fails by a check, not by a timeout (the report shows how long it took), with
 * a message holding every expect fragment. Where none does, the whole suite runs once more, for
 * the report alone: which tests fail and whether one of them would name it. Two mutants run
 * side by side. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "mutants.h"
#include "run.h"
#include "util.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct mutant *)a)->name, ((const struct mutant *)b)->name);
}

/* "key: value" at the start of a line, before the diff; value without its newline. */
static int header(const char *line, const char *key, char *out, size_t len)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0 || line[k] != ':')
        return 0;
    const char *v = line + k + 1;
    v += strspn(v, " \t");
    snprintf(out, len, "%.*s", (int)strcspn(v, "\r\n"), v);
    return 1;
}

static void read_mutant(const struct course *c, struct mutant *m)
{
    char full[PATH_MAX], *line = NULL;
    size_t cap = 0;
    FILE *f = path_format(full, "%s/%s", c->root, m->path) == 0 ? fopen(full, "r") : NULL;
    int diff = 0;
    while (f && getline(&line, &cap, f) > 0 && !diff) {
        if (!strncmp(line, "--- ", 4) || !strncmp(line, "diff ", 5)) {
            diff = 1;
            break;
        }
        char names[sizeof m->tests], tries[16];
        if (header(line, "tries", tries, sizeof tries)) {
            char *end;
            long t = strtol(tries, &end, 10);
            if (end == tries || *end || t < 1 || t > 5)
                snprintf(m->problem, sizeof m->problem, "its tries: line says \"%s\": give a "
                         "number from 1 to 5", tries);
            else
                m->tries = (int)t;
        } else if (header(line, "expect", m->expect[m->nexpect < MUTANT_EXPECTS ? m->nexpect : 0],
                   sizeof m->expect[0])) {
            m->nexpect += m->nexpect < MUTANT_EXPECTS;
        } else if (header(line, "tests", names, sizeof names)) {
            for (char *save = NULL, *t = strtok_r(names, " \t,", &save); t;
                 t = strtok_r(NULL, " \t,", &save)) {
                if (m->ntests == MUTANT_TESTS || strlen(t) >= sizeof m->tests[0]) {
                    snprintf(m->problem, sizeof m->problem, "its tests: line names more than %d "
                             "tests, or one longer than %zu characters", MUTANT_TESTS,
                             sizeof m->tests[0] - 1);
                    break;
                }
                snprintf(m->tests[m->ntests++], sizeof m->tests[0], "%s", t);
            }
        } else if (!header(line, "mistake", m->mistake, sizeof m->mistake)) {
            header(line, "page", m->page, sizeof m->page);
        }
    }
    free(line);
    if (f)
        fclose(f);
    if (m->problem[0])
        return;
    if (!f)
        snprintf(m->problem, sizeof m->problem, "cannot read it: %s", strerror(errno));
    else if (!diff)
        snprintf(m->problem, sizeof m->problem,
                 "it holds no diff after its header (diff -u of the reference's file)");
    else if (!m->mistake[0] || !m->page[0] || !m->ntests || !m->nexpect || !m->expect[0][0])
        snprintf(m->problem, sizeof m->problem,
                 "its header has no %s line: before the diff, write \"mistake: ...\", \"page: ...\", "
                 "\"tests: ...\" (the tests that catch it, as the page names them) and "
                 "\"expect: ...\" lines",
                 !m->mistake[0] ? "mistake:" : !m->page[0] ? "page:" : !m->ntests ? "tests:"
                                                                                : "expect:");
}

/* The chapter's tests as its suite's source declares them: "Test(ch2_2, name," in a Criterion
 * suite (*suite gets "ch2_2"); for a GPU chapter (test_3_3.cu), its source text. NULL when the
 * source cannot be read. Caller frees. */
static char *suite_source(const struct course *c, const struct chapter *ch, char suite[32])
{
    char grading[CHAPTER_PATH_MAX], path[PATH_MAX];
    size_t len = 0;
    chapter_path(ch, CH_GRADING, grading, sizeof grading);
    suite[0] = '\0';
    if (path_format(path, "%s/%s/%s.%s", c->root, grading, ch->suite,
                    ch->requires[0] ? "cu" : "c") != 0)
        return NULL;
    char *text = read_file(path, &len);
    const char *t = text ? strstr(text, "\nTest(") : NULL;
    if (t)
        snprintf(suite, 32, "%.*s", (int)strcspn(t + 6, ", \n"), t + 6);
    return text;
}

/* Every name of the tests: line must be a test of the chapter's suite. */
static void check_tests(const struct chapter *ch, const char *source, const char *suite,
                        struct mutant *m)
{
    for (int i = 0; i < m->ntests && !m->problem[0]; i++) {
        char decl[160];
        if (suite[0])
            snprintf(decl, sizeof decl, "Test(%s, %s,", suite, m->tests[i]);
        else
            snprintf(decl, sizeof decl, "%s", m->tests[i]);
        if (!source || !strstr(source, decl))
            snprintf(m->problem, sizeof m->problem,
                     "its tests: line names %s, which is not a test of %s's suite "
                     "(grader/chapters/%s/%s.%s): name the test that catches it, as the page "
                     "does", m->tests[i], ch->id, ch->id, ch->suite,
                     ch->requires[0] ? "cu" : "c");
    }
}

int mutants_of(const struct course *c, const struct chapter *ch, struct mutant **out)
{
    char grading[CHAPTER_PATH_MAX], dir[PATH_MAX];
    chapter_path(ch, CH_GRADING, grading, sizeof grading);
    *out = NULL;
    DIR *d = path_format(dir, "%s/%s/mutants", c->root, grading) == 0 ? opendir(dir) : NULL;
    int n = 0, cap = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len <= 6 || strcmp(e->d_name + len - 6, ".patch") != 0 || len - 6 >= 64)
            continue;
        if (n == cap) {
            struct mutant *more = realloc(*out, sizeof **out * (size_t)(cap = cap ? 2 * cap : 8));
            if (!more)
                break;
            *out = more;
        }
        struct mutant *m = &(*out)[n++];
        memset(m, 0, sizeof *m);
        m->ch = ch;
        snprintf(m->name, sizeof m->name, "%.*s", (int)(len - 6), e->d_name);
        path_format(m->path, "%s/mutants/%s", grading, e->d_name);
        read_mutant(c, m);
    }
    if (d)
        closedir(d);
    char suite[32], *source = n ? suite_source(c, ch, suite) : NULL;
    for (int i = 0; i < n; i++) {
        snprintf((*out)[i].suite, sizeof (*out)[i].suite, "%s", suite);
        check_tests(ch, source, suite, &(*out)[i]);
    }
    free(source);
    if (n > 1)
        qsort(*out, (size_t)n, sizeof **out, by_name);
    return n;
}

char *mutants_skip_reason(const struct course *c, const struct chapter *ch)
{
    char *out = NULL, *why = NULL;
    if (ch->requires[0]) { /* a GPU chapter: tools/gpu-test --check says what is missing */
        char *argv[] = {"tools/gpu-test", "--chapter", (char *)ch->id, "--check", NULL};
        int status = run_quiet(c, argv, &out);
        const char *reason = out && strstr(out, ": ") ? strstr(out, ": ") + 2 : out;
        if (status == 77 && asprintf(&why, "its tests run on GPUs: %.*s", reason ? (int)strcspn(reason, "\n") : 0,
                                     reason ? reason : "") < 0)
            why = NULL;
        else if (status != 77 &&
                 asprintf(&why, "its tests run on GPUs (make gpu-test), which this runner does "
                                "not build mutants for") < 0)
            why = NULL;
        free(out);
        return why ? why : strdup("its tests run on GPUs");
    }
    if (!strcmp(ch->needs, "PyTorch")) {
        char *argv[] = {"/usr/bin/python3", "-c", "import torch", NULL};
        if (run_quiet(c, argv, &out) != 0 &&
            asprintf(&why, "its PEs need PyTorch, which this machine lacks (make %s)",
                     ch->needs_make[0] ? ch->needs_make : "deps-torch") < 0)
            why = NULL;
        free(out);
    }
    return why;
}

char *mutant_stale(const struct course *c, const struct mutant *m)
{
    char *argv[] = {"patch", "-p0", "--dry-run", "-F0", "-f", "-s", "--reject-file=-", "-i",
                    (char *)m->path, NULL},
         *out = NULL;
    if (run_quiet(c, argv, &out) == 0) {
        free(out);
        return NULL;
    }
    return out ? out : strdup("patch failed");
}

/* ---- One mutant ------------------------------------------------------------------------- */

static int timed_out(const char *msg)
{
    return msg && (strstr(msg, "timed out after") || strstr(msg, "the job did not finish") ||
                   strstr(msg, "the test timed out"));
}

static int names_it(const struct mutant *m, const char *msg)
{
    for (int i = 0; i < m->nexpect; i++)
        if (!msg || !strstr(msg, m->expect[i]))
            return 0;
    return 1;
}

/* The first lines of a message, indented, for a verdict's detail. */
static void head(FILE *f, const char *msg, int lines)
{
    for (const char *l = msg ? msg : "", *e; *l && lines-- > 0; l = *e ? e + 1 : e) {
        e = strchrnul(l, '\n');
        fprintf(f, "        %.*s\n", (int)(e - l) > 200 ? 200 : (int)(e - l), l);
    }
}

/* Reads a run: caught (1), or not (0) with what was seen in *f. */
static int judge(const struct mutant *m, const struct chapter_run *r, struct mutant_verdict *v,
                 FILE *f)
{
    for (int i = 0; i < r->n; i++) {
        const struct result *t = &r->results[i];
        if (!t->passed && !timed_out(t->message) && names_it(m, t->message)) {
            v->caught = 1;
            v->seconds = t->seconds;
            snprintf(v->test, sizeof v->test, "%s", t->test);
            return 1;
        }
    }
    int failed = 0;
    for (int i = 0; i < r->n; i++) {
        const struct result *t = &r->results[i];
        if (t->passed)
            continue;
        if (failed++ == 0)
            fprintf(f, "      its failed tests do not catch it as the page says: one must fail by "
                       "a check, not by a timeout, with a message holding");
        if (failed == 1)
            for (int k = 0; k < m->nexpect; k++)
                fprintf(f, "%s\"%s\"%s", k ? (k == m->nexpect - 1 ? " and " : ", ") : " ",
                        m->expect[k], k == m->nexpect - 1 ? ".\n" : "");
        if (failed > 3)
            continue;
        fprintf(f, "      %s failed after %.1f s%s:\n", t->test, t->seconds,
                timed_out(t->message) ? " (a timeout)" : "");
        head(f, t->message, 4);
    }
    if (failed > 3)
        fprintf(f, "      (%d more failed tests)\n", failed - 3);
    if (!failed && r->n)
        fprintf(f, "      %s passed on it: %s\n",
                m->ntests == 1 && r->n == 1 ? "the test" : "every test that ran",
                "none of them sees this mistake");
    return 0;
}

/* Criterion's --filter for the tests a mutant names: "ch2_2/name" or "ch2_2/@(a|b)". */
static void name_filter(const struct mutant *m, struct variant *var)
{
    size_t room = sizeof var->filter, n = 0;
    n += (size_t)snprintf(var->filter, room, "%s/%s", m->suite, m->ntests > 1 ? "@(" : "");
    for (int i = 0; i < m->ntests && n < room; i++)
        n += (size_t)snprintf(var->filter + n, room - n, "%s%s", i ? "|" : "", m->tests[i]);
    if (m->ntests > 1 && n < room)
        snprintf(var->filter + n, room - n, ")");
}

/* The report starts again: what the run before said is dropped. */
static FILE *report_again(FILE *f, char **text, size_t *len)
{
    fclose(f);
    free(*text);
    *text = NULL;
    return open_memstream(text, len);
}

static void run_one(const struct course *c, const struct mutant *m, struct mutant_verdict *v)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    memset(v, 0, sizeof *v);
    /* The tests that catch it, as the page names them, and only those: the rest of the suite
       would only pass, or stop at the same mistake later. */
    struct variant var = {.impl = "solutions", .strict = 1, .fail_fast = 1};
    snprintf(var.mutant, sizeof var.mutant, "%s/%s", m->ch->id, m->name);
    name_filter(m, &var);
    struct chapter_run r = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int caught = 0, tries = m->tries > 0 ? m->tries : 1;
    for (int k = 1; k <= tries && !caught && !grader_stop; k++) {
        if (k > 1) { /* a race its tests missed this time: again, with a fresh report */
            chapter_run_free(&r);
            f = report_again(f, &text, &len);
            var.fail_fast = 1;
        }
        chapter_run(c, m->ch, &var, &r, NULL);
        if (!r.built) {
            fprintf(f, "      the mutant does not build, or its suite does not start:\n");
            head(f, r.build_log, 12);
            break;
        }
        if (!(caught = judge(m, &r, v, f)) && r.n < m->ntests && run_passed(&r) < r.n) {
            /* The first of them to fail did not name it, and stopped the others: all of them. */
            chapter_run_free(&r);
            f = report_again(f, &text, &len);
            var.fail_fast = 0;
            chapter_run(c, m->ch, &var, &r, NULL);
            caught = r.built && judge(m, &r, v, f);
        }
        v->run = k;
        if (!caught && k == tries && tries > 1)
            fprintf(f, "      (a race: its tests ran %d times and missed it every time)\n", tries);
    }
    if (!caught && r.built && !grader_stop) {
        /* Not caught: the whole suite, for the report alone (a test that names it elsewhere
           still leaves the mutant uncaught until the page and tests: name that test). */
        chapter_run_free(&r);
        var.fail_fast = 0;
        var.filter[0] = '\0';
        v->full = 1;
        chapter_run(c, m->ch, &var, &r, NULL);
        struct mutant_verdict other = {0};
        char *more = NULL;
        size_t more_len = 0;
        FILE *g = open_memstream(&more, &more_len);
        if (r.built && judge(m, &r, &other, g))
            fprintf(f, "      the whole suite ran on it: %s catches it by name (%.1f s); if the "
                       "page means that test, name it in the page and in tests:\n",
                    other.test, other.seconds);
        else if (r.built)
            fprintf(f, "      the whole suite ran on it:\n");
        if (g)
            fclose(g);
        if (r.built && !other.caught && more)
            fputs(more, f);
        free(more);
    }
    chapter_run_free(&r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!caught)
        v->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    fclose(f);
    v->detail = text;
}

/* ---- Side by side: one child process per mutant ----------------------------------------- */

struct slot {
    pid_t pid;
    int index;
    char file[32];
};

static void start(const struct course *c, const struct mutant *m, int index, struct slot *s)
{
    snprintf(s->file, sizeof s->file, "/tmp/tshmem-mutant-XXXXXX");
    int fd = mkstemp(s->file);
    s->index = index;
    fflush(stdout);
    s->pid = fd < 0 ? -1 : fork();
    if (s->pid == 0) {
        struct mutant_verdict v;
        run_one(c, m, &v);
        FILE *f = fdopen(fd, "w");
        if (f) {
            fprintf(f, "%d %d %.3f %s %d\n%s", v.caught, v.full, v.seconds,
                    v.test[0] ? v.test : "-", v.run, v.detail ? v.detail : "");
            fclose(f);
        }
        _exit(0);
    }
    if (fd >= 0)
        close(fd);
}

static void finish(const struct slot *s, struct mutant_verdict *v)
{
    memset(v, 0, sizeof *v);
    size_t len = 0;
    char *text = s->pid > 0 ? read_file(s->file, &len) : NULL;
    unlink(s->file);
    char *nl = text ? strchr(text, '\n') : NULL;
    if (!nl || sscanf(text, "%d %d %lf %95s %d", &v->caught, &v->full, &v->seconds, v->test,
                      &v->run) < 5) {
        v->detail = strdup("      the mutant's run ended without a verdict (stopped?)\n");
        free(text);
        return;
    }
    if (!strcmp(v->test, "-"))
        v->test[0] = '\0';
    v->detail = strdup(nl + 1);
    free(text);
}

void mutants_run(const struct course *c, const struct mutant *list, int n, int parallel,
                 void (*done)(void *ctx, const struct mutant *m, const struct mutant_verdict *v),
                 void *ctx)
{
    struct slot slots[8];
    int running = 0, next = 0;
    parallel = parallel < 1 ? 1 : parallel > 8 ? 8 : parallel;
    while ((next < n || running > 0)) {
        while (next < n && running < parallel && !grader_stop) {
            if (list[next].problem[0]) { /* a patch without its header is a verdict already */
                struct mutant_verdict v = {0};
                if (asprintf(&v.detail, "      %s: %s\n", list[next].path, list[next].problem) < 0)
                    v.detail = NULL;
                done(ctx, &list[next], &v);
                free(v.detail);
                next++;
                continue;
            }
            start(c, &list[next], next, &slots[running]);
            running++, next++;
        }
        if (running == 0)
            break;
        /* One of our own children, never waitpid(-1): the selftest's end-to-end scripts run
           beside this, and reaping one here would lose its exit status. */
        int found = -1;
        while (found < 0) {
            for (int i = 0; i < running && found < 0; i++) {
                int status;
                if (slots[i].pid <= 0) { /* it did not start: its verdict says so */
                    found = i;
                    break;
                }
                pid_t got = waitpid(slots[i].pid, &status, WNOHANG);
                if (got == slots[i].pid || (got < 0 && errno != EINTR))
                    found = i;
            }
            if (found < 0)
                nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
        }
        struct mutant_verdict v;
        finish(&slots[found], &v);
        done(ctx, &list[slots[found].index], &v);
        free(v.detail);
        slots[found] = slots[--running];
    }
}

/* ---- grader mutants [CHAPTER ...] -------------------------------------------------------- */

struct tally {
    int caught, missed;
};

static void print_verdict(void *ctx, const struct mutant *m, const struct mutant_verdict *v)
{
    struct tally *t = ctx;
    char race[48] = "";
    if (v->run > 1)
        snprintf(race, sizeof race, " (a race: caught on try %d)", v->run);
    if (v->caught)
        printf("  ok    %s %s: caught by %s in %.1f s%s\n", m->ch->id, m->name, v->test,
               v->seconds, race);
    else
        printf("  FAIL  %s %s (%s): %s\n%s", m->ch->id, m->name, m->page,
               m->mistake[0] ? m->mistake : "(no mistake: line)", v->detail ? v->detail : "");
    v->caught ? t->caught++ : t->missed++;
}

int cmd_mutants(const struct course *c, int argc, char **argv)
{
    /* CHAPTER, or CHAPTER/NAME for one mutant */
    char ids[16][16];
    const char *names[16];
    if (argc > 16) {
        fprintf(stderr, "grader mutants: at most 16 chapters or mutants at once.\n");
        return 2;
    }
    for (int i = 0; i < argc; i++) {
        const char *slash = strchr(argv[i], '/');
        snprintf(ids[i], sizeof ids[i], "%.*s", slash ? (int)(slash - argv[i]) : 15, argv[i]);
        names[i] = slash ? slash + 1 : NULL;
        argv[i] = ids[i];
    }
    for (int i = 0; i < argc; i++)
        if (!course_find(c, argv[i]) || !course_find(c, argv[i])->available) {
            fprintf(stderr, "grader mutants: there is no available chapter '%s' in "
                            "grader/course.json (grader list shows them).\n", argv[i]);
            return 2;
        }
    stop_on_signals();
    struct tally t = {0};
    int few = 0, skipped = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    printf("Each chapter's predicted mistakes, as mutants of the reference: its suite must catch "
           "each by a check that names it, not by a timeout\n");
    struct mutant *all = NULL;
    int total = 0;
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        int want = argc == 0;
        for (int a = 0; a < argc; a++)
            want |= course_find(c, argv[a]) == ch;
        if (!ch->available || !want)
            continue;
        struct mutant *list;
        int n = mutants_of(c, ch, &list), named = 0;
        for (int a = 0; a < argc; a++) /* CHAPTER/NAME: that mutant alone */
            if (course_find(c, argv[a]) == ch && names[a])
                for (int k = 0; k < n; k++)
                    if (!strcmp(list[k].name, names[a]))
                        list[named++] = list[k];
        int whole = 1;
        for (int a = 0; a < argc; a++)
            whole &= !(course_find(c, argv[a]) == ch && names[a]);
        if (!whole) {
            if (named == 0) {
                printf("  FAIL  %s: no mutant of that name in grader/chapters/%s/mutants/\n", ch->id,
                       ch->id);
                few++;
            }
            n = named;
        } else if (n < 2) {
            printf("  FAIL  %s has %d mutant%s: write at least two, grader/chapters/%s/mutants/"
                   "NAME.patch (MAINTAINING.md, \"Mutants\")\n", ch->id, n, n == 1 ? "" : "s",
                   ch->id);
            few++;
        }
        char *why = n ? mutants_skip_reason(c, ch) : NULL;
        struct mutant *more = why || !n ? NULL : realloc(all, sizeof *all * (size_t)(total + n));
        if (why) {
            printf("  skip  %s: %d mutants not run: %s\n", ch->id, n, why);
            skipped += n;
            for (int k = 0; k < n; k++) { /* they must still apply to the reference */
                char *stale = mutant_stale(c, &list[k]);
                if (stale)
                    printf("  FAIL  %s %s no longer applies to the reference: write it again "
                           "(diff -u)\n%s", ch->id, list[k].name, stale);
                t.missed += stale != NULL;
                free(stale);
            }
        } else if (more) { /* every chapter's in one queue: two run at a time throughout */
            all = more;
            memcpy(all + total, list, sizeof *list * (size_t)n);
            total += n;
        }
        free(why);
        free(list);
    }
    mutants_run(c, all, total, 2, print_verdict, &t);
    free(all);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("\n%d caught, %d not caught, %d skipped (%.0f s)\n", t.caught, t.missed, skipped,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    if (grader_stop)
        return stop_status();
    return t.missed || few ? 1 : 0;
}
