/* run.c: building a variant, running a chapter's Criterion suite while reading its report as it
 * grows (live progress), and stopping it all cleanly on Ctrl-C or SIGTERM. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "outline.h"
#include "run.h"
#include "sweep.h"
#include "util.h"

extern char **environ;

volatile sig_atomic_t grader_stop;

static void on_stop(int sig)
{
    grader_stop = sig;
}

void stop_on_signals(void)
{
    /* No SA_RESTART: a waitpid or poll in progress returns, and the loop sees the flag. */
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int stop_status(void)
{
    return grader_stop ? 128 + grader_stop : 0;
}

static void nap_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static char *slurp(int fd)
{
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    ssize_t n;
    lseek(fd, 0, SEEK_SET);
    while (buf && (n = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        if (cap - len < 1024) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger)
                break; /* keep what fits: this is output for a person to read */
            buf = bigger;
        }
    }
    if (buf)
        buf[len] = '\0';
    return buf ? buf : strdup("");
}

/* The environment: ours first (getenv finds them), then the inherited one. Caller frees. */
static char **with_env(const char *const *env)
{
    size_t n_env = 0, n_extra = 0;
    while (environ[n_env])
        n_env++;
    while (env && env[n_extra])
        n_extra++;
    char **envp = calloc(n_env + n_extra + 1, sizeof *envp);
    if (envp && n_extra)
        memcpy(envp, env, n_extra * sizeof *envp);
    if (envp)
        memcpy(envp + n_extra, environ, n_env * sizeof *envp);
    return envp;
}

/* Starts argv in the course root with output into fd; in a process group of its own when
 * own_group (so that the terminal's Ctrl-C reaches only us, and we stop it as a whole). */
static pid_t spawn_in_root(const struct course *c, char *const argv[], const char *const *env,
                           int fd, int own_group)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fd, 1);
    posix_spawn_file_actions_adddup2(&fa, fd, 2);
    posix_spawn_file_actions_addchdir_np(&fa, c->root);
    spawn_attr_child(&at, own_group);
    char **envp = with_env(env);
    pid_t pid;
    int rc = envp ? posix_spawnp(&pid, argv[0], &fa, &at, argv, envp) : ENOMEM;
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(envp);
    return rc == 0 ? pid : -1;
}

static int decode(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Stops a child we were told to stop: SIGTERM to it (to its group when it has one, where the
 * suites' workers stop their PE jobs and remove their shared memory), then SIGKILL to what is
 * left after `grace` seconds. Reaps it. */
static int stop_child(pid_t pid, int own_group, int grace)
{
    int status = 0, reaped = 0;
    kill(own_group ? -pid : pid, SIGTERM);
    for (int ms = 0; ms < grace * 1000; ms += 20) {
        if (!reaped && waitpid(pid, &status, WNOHANG) == pid)
            reaped = 1;
        /* the group outlives its leader while a member still cleans up */
        if (reaped && (!own_group || kill(-pid, 0) != 0))
            return decode(status);
        nap_ms(20);
    }
    kill(own_group ? -pid : pid, SIGKILL);
    if (!reaped)
        waitpid(pid, &status, 0);
    return decode(status);
}

/* Waits for the child, polling: calls tick(ctx) every 100 ms; stops it when grader_stop. */
static int wait_child(pid_t pid, int own_group, void (*tick)(void *), void *ctx)
{
    int status;
    for (;;) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid)
            return decode(status);
        if (got < 0 && errno != EINTR)
            return -1;
        if (grader_stop)
            return stop_child(pid, own_group, 15);
        if (tick)
            tick(ctx);
        nap_ms(tick ? 100 : 20);
    }
}

static int temp_file(void)
{
    char path[] = "/tmp/tshmem-grader-XXXXXX";
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    return fd;
}

void run_start(const struct course *c, char *const argv[], const char *const *env,
               struct started_command *s)
{
    s->fd = temp_file();
    s->pid = s->fd < 0 ? -1 : spawn_in_root(c, argv, env, s->fd, 0);
}

int run_finish(struct started_command *s, char **output)
{
    if (output)
        *output = NULL;
    if (s->fd < 0)
        return -1;
    int status = s->pid < 0 ? -1 : wait_child(s->pid, 0, NULL, NULL);
    if (output)
        *output = s->pid < 0 ? strdup("") : slurp(s->fd);
    close(s->fd);
    s->fd = -1;
    return status;
}

int run_command(const struct course *c, char *const argv[], const char *const *env, char **output)
{
    struct started_command s;
    run_start(c, argv, env, &s);
    return run_finish(&s, output);
}

int run_quiet(const struct course *c, char *const argv[], char **output)
{
    return run_command(c, argv, NULL, output);
}

const char *make_jobs(void)
{
    static char jobs[32];
    if (!jobs[0]) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        snprintf(jobs, sizeof jobs, "-j%ld", cores < 1 ? 1 : cores);
    }
    return jobs;
}

int run_make(const struct course *c, const struct variant *v, const char *target, char **out)
{
    char impl[64], ref[160], stub[64], strict[16], mutant[128];
    snprintf(impl, sizeof impl, "IMPL=%s", v->impl);
    snprintf(mutant, sizeof mutant, "MUTANT=%s", v->mutant);
    snprintf(ref, sizeof ref, "REF=%s", v->ref);
    snprintf(stub, sizeof stub, "STUB=%s", v->stub);
    snprintf(strict, sizeof strict, "STRICT=%d", v->strict);
    char targets[512], *argv[19] = {"make", "-s",  "--no-print-directory", "--output-sync=target",
                                    (char *)make_jobs(), impl, ref, stub, strict, mutant};
    int n = 10;
    snprintf(targets, sizeof targets, "%s", target);
    for (char *save = NULL, *t = strtok_r(targets, " ", &save); t && n < 18;
         t = strtok_r(NULL, " ", &save))
        argv[n++] = t;
    argv[n] = NULL;
    /* One make at a time in this course folder: variants share their objects (build/obj/), and
     * two makes writing the same object at once (a `grader test` beside the dashboard or
     * `grader watch`) would race. */
    char lock_path[PATH_MAX];
    int lock = -1;
    if (path_format(lock_path, "%s/build", c->root) == 0) {
        mkdir(lock_path, 0755);
        if (path_format(lock_path, "%s/build/.make-lock", c->root) == 0)
            lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    }
    while (lock >= 0 && flock(lock, LOCK_EX) != 0 && errno == EINTR && !grader_stop)
        ;
    int status = run_command(c, argv, NULL, out);
    if (lock >= 0)
        close(lock); /* and with it the lock */
    return status;
}

/* The compiler's warnings on the learner's own files (under week1/, week2/ ...), from what make print-warnings
 * kept beside the objects: "week1/1.1-init/init.c:42: control reaches end of non-void function
 * [-Wreturn-type]", each once. NULL when there is none. */
static char *learner_warnings(const struct course *c, const struct variant *v)
{
    char *log = NULL;
    if (run_make(c, v, "print-warnings", &log) != 0 || !log) {
        free(log);
        return NULL;
    }
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    for (char *save = NULL, *line = strtok_r(log, "\n", &save); f && line;
         line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "./", 2))
            line += 2;
        char *warn = strstr(line, ": warning: ");
        unsigned lineno = 0, col = 0;
        char file[256];
        if (strncmp(line, "week", 4) || !warn || (size_t)(warn - line) >= sizeof file ||
            sscanf(line, "%255[^:]:%u:%u", file, &lineno, &col) != 3)
            continue;
        char one[1024];
        snprintf(one, sizeof one, "%s:%u: %s\n", file, lineno, warn + 11);
        fflush(f);
        if (!out || !strstr(out, one)) /* each once: a header's warning comes with every file */
            fputs(one, f);
    }
    if (f)
        fclose(f);
    free(log);
    if (out && !*out) {
        free(out);
        out = NULL;
    }
    return out;
}

int ensure_stubs(const struct course *c)
{
    static int done = -2;
    if (done == -2) {
        char *argv[] = {"make", "-s", "--no-print-directory", "stubs", NULL}, *out = NULL;
        done = run_quiet(c, argv, &out) == 0 ? 0 : -1;
        free(out);
    }
    return done;
}

/* ---- The suite's report, read as it grows ------------------------------------------------ */

struct report_reader {
    FILE *f;
    char *line;
    size_t cap;
    struct chapter_run *out;
    const struct run_events *ev;
    int started;
};

static void read_result(struct report_reader *rr, json_t *obj)
{
    struct chapter_run *out = rr->out;
    if (out->n == MAX_TESTS)
        return;
    struct result *r = &out->results[out->n++];
    const char *desc = json_string_value(json_object_get(obj, "description"));
    snprintf(r->test, sizeof r->test, "%s", json_string_value(json_object_get(obj, "test")));
    snprintf(r->description, sizeof r->description, "%s", desc ? desc : "");
    r->passed = json_is_true(json_object_get(obj, "passed"));
    r->seconds = json_number_value(json_object_get(obj, "seconds"));
    const char *msg = json_string_value(json_object_get(obj, "message"));
    r->message = (msg && *msg) ? strdup(msg) : NULL;
    if (out->total < out->n)
        out->total = out->n;
    if (rr->ev && rr->ev->test)
        rr->ev->test(rr->ev->ctx, out->ch, r, out->n, out->total);
}

/* Reads every complete line added since the last call. */
static void report_tick(void *arg)
{
    struct report_reader *rr = arg;
    if (!rr->f)
        return;
    for (;;) {
        long at = ftell(rr->f);
        ssize_t len = getline(&rr->line, &rr->cap, rr->f);
        if (len <= 0 || rr->line[len - 1] != '\n') { /* nothing new, or a line half written */
            clearerr(rr->f);
            fseek(rr->f, at, SEEK_SET);
            return;
        }
        json_t *obj = json_loads(rr->line, 0, NULL);
        if (!obj)
            continue;
        json_t *tests = json_object_get(obj, "tests");
        if (json_is_integer(tests) && !json_object_get(obj, "test")) {
            rr->out->total = (int)json_integer_value(tests);
            if (rr->ev && rr->ev->phase && !rr->started)
                rr->ev->phase(rr->ev->ctx, rr->out->ch, "run", rr->out->total);
            rr->started = 1;
        } else if (json_is_string(json_object_get(obj, "test"))) {
            read_result(rr, obj);
        }
        json_decref(obj);
    }
}

/* The suites are built beside the grader that runs them: build/grader/, or build/grader-address/
 * for the grader under AddressSanitizer (make sanitize). */
static void suite_path(const struct course *c, const struct chapter *ch, char path[PATH_MAX])
{
    char self[PATH_MAX], build[PATH_MAX];
    if (own_program(self) != 0)
        self[0] = '\0';
    char *slash = strrchr(self, '/');
    path_format(build, "%s/build/grader", c->root);
    if (slash && build[0] && !strncmp(self, build, strlen(build))) { /* this course's build/ */
        *slash = '\0';
        path_format(path, "%s/%s", self, ch->suite);
    } else {
        path_format(path, "%s/%s", build, ch->suite); /* "" when too long: it cannot start */
    }
}

static void run_suite(const struct course *c, const struct chapter *ch, const char *bindir,
                      int share, int fail_fast, const char *filter, struct chapter_run *out,
                      const struct run_events *ev)
{
    char report[] = "/tmp/tshmem-report-XXXXXX", suite[PATH_MAX], bin[PATH_MAX],
         e_root[sizeof "TSHMEM_ROOT=" + PATH_MAX], e_bin[sizeof "TSHMEM_TEST_BIN=" + PATH_MAX],
         e_report[64], e_tag[96], share_dir[] = "/tmp/tshmem-share-XXXXXX", e_share[64];
    static int runs;
    int fd = mkstemp(report), log_fd = temp_file();
    if (fd >= 0)
        close(fd);
    suite_path(c, ch, suite);
    snprintf(e_root, sizeof e_root, "TSHMEM_ROOT=%s", c->root);
    path_format(bin, "%s/%s/bin", c->root, bindir); /* "" when too long: the suite says so */
    snprintf(e_bin, sizeof e_bin, "TSHMEM_TEST_BIN=%s", bin);
    snprintf(e_report, sizeof e_report, "TSHMEM_REPORT=%s", report);
    snprintf(e_tag, sizeof e_tag, "TSHMEM_GRADER_RUN=%d-%d", (int)getpid(), ++runs);
    /* Where the suite's tests keep the verdicts of the jobs they share (job_shared_ok). Not
     * for a chapter's stub (make test's check that each test fails on it): every shared job
     * would fail, and each test run its own after it. */
    int shared = share && mkdtemp(share_dir) != NULL;
    snprintf(e_share, sizeof e_share, "TSHMEM_JOB_SHARE=%s", shared ? share_dir : "");
    const char *env[] = {e_root, e_bin, e_report, e_tag, e_share, NULL};
    /* Tests run side by side, one per core (at least 2, at most 8): every PE job backs off
     * while it waits, so two at a time share even a 2-core machine well. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char jobs[32];
    snprintf(jobs, sizeof jobs, "--jobs=%ld", cores < 2 ? 2 : cores > 8 ? 8 : cores);
    char filter_arg[sizeof "--filter=" + sizeof ((struct variant *)0)->filter];
    snprintf(filter_arg, sizeof filter_arg, "--filter=%s", filter ? filter : "");
    char *argv[5] = {suite, jobs}, **arg = argv + 2;
    if (fail_fast)
        *arg++ = "--fail-fast";
    if (filter && filter[0])
        *arg++ = filter_arg;
    *arg = NULL;
    struct report_reader rr = {.f = fd >= 0 ? fopen(report, "r") : NULL, .out = out, .ev = ev};
    pid_t pid = log_fd >= 0 ? spawn_in_root(c, argv, env, log_fd, 1) : -1;
    if (pid > 0)
        wait_child(pid, 1, report_tick, &rr);
    report_tick(&rr);
    out->interrupted = grader_stop != 0;
    /* Stopped, or ended at its first failure (--fail-fast: Criterion kills the workers that still
       run, and their jobs outlive them): nothing of the run may go on. */
    if (out->interrupted || fail_fast)
        sweep_run(strchr(e_tag, '=') + 1);
    if (rr.f)
        fclose(rr.f);
    free(rr.line);
    unlink(report);
    if (shared)
        remove_flat_dir(share_dir);
    outline_sort(ch, out->results, out->n);
    if (out->n == 0 && !out->interrupted) { /* the suite itself could not run: keep its words */
        out->built = 0;
        out->missing = 1;
        out->build_log = log_fd >= 0 ? slurp(log_fd) : strdup("cannot create a temp file");
        if (pid < 0) {
            free(out->build_log);
            if (asprintf(&out->build_log, "cannot start %s: %s", suite, strerror(errno)) < 0)
                out->build_log = NULL;
        }
    }
    if (log_fd >= 0)
        close(log_fd);
}

/* A chapter that "requires" hardware (3.3, 3.7: GPUs + NVSHMEM) has no Criterion suite: `make
 * gpu` builds it and tools/gpu-test --chapter <id> runs its test programs, one line each: "PASS
 * name" or "FAIL name: why". Where the machine lacks what it needs, tools/gpu-test --check says
 * "SKIP id: why" (exit 77) and the run is skipped, neither passed nor failed. */
static int gpu_run(const struct course *c, const struct chapter *ch, const struct variant *v,
                   struct chapter_run *out, const struct run_events *ev)
{
    struct variant g = *v;
    g.impl = strstr(v->stub, ch->id) ? "stubs" : v->impl;
    char *check[] = {"tools/gpu-test", "--chapter", (char *)ch->id, "--check", NULL}, *text = NULL;
    int status = run_quiet(c, check, &text);
    if (status == 77 || status != 0) {
        char *why = text ? strstr(text, ": ") : NULL;
        out->skipped = status == 77;
        out->build_log = strdup(why ? why + 2 : text ? text : "tools/gpu-test --check failed");
        out->build_log[strcspn(out->build_log, "\n")] = '\0';
        free(text);
        return -1;
    }
    free(text);
    if (run_make(c, &g, "gpu", &out->build_log) != 0 || grader_stop) {
        out->interrupted = grader_stop != 0;
        return -1;
    }
    free(out->build_log);
    out->build_log = NULL;
    out->built = 1;
    if (ev && ev->phase)
        ev->phase(ev->ctx, ch, "run", 0);
    char *argv[] = {"tools/gpu-test", "--chapter", (char *)ch->id, "--impl", (char *)g.impl, NULL};
    run_quiet(c, argv, &text);
    out->interrupted = grader_stop != 0;
    for (char *l = text, *e; l && *l && out->n < MAX_TESTS; l = *e ? e + 1 : e) {
        e = strchrnul(l, '\n');
        int pass = !strncmp(l, "PASS ", 5), fail = !strncmp(l, "FAIL ", 5);
        if (!pass && !fail)
            continue;
        struct result *r = &out->results[out->n++];
        size_t name = strcspn(l + 5, ":\n");
        snprintf(r->test, sizeof r->test, "%.*s", (int)name, l + 5);
        snprintf(r->description, sizeof r->description, "%.*s on GPUs", (int)name, l + 5);
        r->passed = pass;
        r->message = fail && l[5 + name] == ':' ? strndup(l + 5 + name + 2, (size_t)(e - l) - 7 - name)
                                                : NULL;
        if (ev && ev->test)
            ev->test(ev->ctx, ch, r, out->n, out->n);
    }
    out->total = out->n;
    if (out->n == 0 && !out->interrupted) {
        out->built = 0;
        out->build_log = text ? text : strdup("tools/gpu-test printed nothing");
        return -1;
    }
    free(text);
    return out->n && run_passed(out) == out->n ? 0 : -1;
}

int chapter_run(const struct course *c, const struct chapter *ch, const struct variant *v,
                struct chapter_run *out, const struct run_events *ev)
{
    memset(out, 0, sizeof *out);
    out->ch = ch;
    if (ch->requires[0])
        return gpu_run(c, ch, v, out, ev);
    if (ev && ev->phase)
        ev->phase(ev->ctx, ch, "build", 0);
    /* The chapter's PE program (pe-2_2 for suite_2_2), not every chapter's: a variant made for
     * one run (a stub's, in make test) links one program instead of a dozen. And the chapter's
     * suite: a course built with plain `make` may not have it yet. */
    char targets[2 * CHAPTER_PATH_MAX + 16], make_target[CHAPTER_PATH_MAX];
    snprintf(targets, sizeof targets, "%s build/grader/%s",
             chapter_path(ch, CH_MAKE_TARGET, make_target, sizeof make_target), ch->suite);
    int status = run_make(c, v, targets, &out->build_log);
    if (grader_stop) {
        out->interrupted = 1;
        return -1;
    }
    if (status != 0)
        return -1;
    free(out->build_log);
    out->build_log = NULL;
    out->built = 1;
    char *dir = NULL;
    if (run_make(c, v, "print-build-dir", &dir) != 0 || !dir) {
        out->built = 0;
        out->build_log = dir ? dir : strdup("make print-build-dir failed");
        return -1;
    }
    dir[strcspn(dir, "\n")] = '\0';
    if (!strcmp(v->impl, "learner"))
        out->warnings = learner_warnings(c, v);
    int stub = !strcmp(v->impl, "stubs") || strstr(v->stub, ch->id) != NULL;
    run_suite(c, ch, dir, !stub, v->fail_fast, v->filter, out, ev);
    free(dir);
    return out->built && !out->interrupted && out->n > 0 && run_passed(out) == out->n ? 0 : -1;
}

void chapter_run_free(struct chapter_run *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->results[i].message);
    free(r->build_log);
    free(r->warnings);
    r->n = 0;
    r->build_log = NULL;
    r->warnings = NULL;
}

int run_passed(const struct chapter_run *r)
{
    int n = 0;
    for (int i = 0; i < r->n; i++)
        n += r->results[i].passed;
    return n;
}

int run_points(const struct chapter_run *r, int *max)
{
    int got = 0, all = 0;
    for (int i = 0; i < r->n; i++) {
        int p = chapter_points(r->ch, r->results[i].test);
        all += p;
        got += r->results[i].passed ? p : 0;
    }
    if (max)
        *max = all;
    return got;
}
