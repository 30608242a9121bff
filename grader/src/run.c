/* run.c: building a variant, running a chapter's Criterion suite, reading its report back. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <jansson.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "course.h"

extern char **environ;

static char *slurp(int fd)
{
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    ssize_t n;
    lseek(fd, 0, SEEK_SET);
    while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        if (cap - len < 1024) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger)
                break; /* keep what fits: this is output for a person to read */
            buf = bigger;
        }
    }
    buf[len] = '\0';
    return buf;
}

/* Runs argv in the course root with extra environment entries; stdout and stderr together go
 * to *output (if not NULL). Returns the exit status, or -1 if it could not start. */
int run_command(const struct course *c, char *const argv[], const char *const *env, char **output)
{
    char path[] = "/tmp/tshmem-grader-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    size_t n_env = 0, n_extra = 0;
    while (environ[n_env])
        n_env++;
    while (env && env[n_extra])
        n_extra++;
    char **envp = calloc(n_env + n_extra + 1, sizeof *envp);
    if (n_extra)
        memcpy(envp, env, n_extra * sizeof *envp);
    memcpy(envp + n_extra, environ, n_env * sizeof *envp); /* ours first: getenv finds them */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, 1);
    posix_spawn_file_actions_adddup2(&fa, fd, 2);
    posix_spawn_file_actions_addchdir_np(&fa, c->root);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp), status = -1;
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    if (rc == 0 && waitpid(pid, &status, 0) == pid)
        status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (output)
        *output = slurp(fd);
    close(fd);
    return rc == 0 ? status : -1;
}

static int make(const struct course *c, const struct variant *v, const char *target, char **out)
{
    char impl[64], ref[160], stub[64], strict[16];
    snprintf(impl, sizeof impl, "IMPL=%s", v->impl);
    snprintf(ref, sizeof ref, "REF=%s", v->ref);
    snprintf(stub, sizeof stub, "STUB=%s", v->stub);
    snprintf(strict, sizeof strict, "STRICT=%d", v->strict);
    char *argv[] = {"make", "-s", "--no-print-directory", (char *)target, impl, ref, stub,
                    strict, NULL};
    return run_command(c, argv, NULL, out);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct result *)a)->test, ((const struct result *)b)->test);
}

static void read_report(const char *path, struct chapter_run *out)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0 && out->n < 64) {
        json_t *obj = json_loads(line, 0, NULL);
        if (!obj)
            continue;
        struct result *r = &out->results[out->n++];
        snprintf(r->test, sizeof r->test, "%s", json_string_value(json_object_get(obj, "test")));
        r->passed = json_is_true(json_object_get(obj, "passed"));
        r->seconds = json_number_value(json_object_get(obj, "seconds"));
        const char *msg = json_string_value(json_object_get(obj, "message"));
        r->message = (msg && *msg) ? strdup(msg) : NULL;
        json_decref(obj);
    }
    free(line);
    if (f)
        fclose(f);
    qsort(out->results, (size_t)out->n, sizeof out->results[0], by_name);
}

int chapter_run(const struct course *c, const struct chapter *ch, const struct variant *v,
                struct chapter_run *out)
{
    memset(out, 0, sizeof *out);
    out->ch = ch;
    if (make(c, v, "pe-programs", &out->build_log) != 0)
        return -1;
    out->built = 1;
    char *dir = NULL;
    make(c, v, "print-build-dir", &dir);
    dir[strcspn(dir, "\n")] = '\0';

    char report[] = "/tmp/tshmem-report-XXXXXX", suite[4200], bin[4200], e_root[4200],
         e_bin[4300], e_report[64];
    int fd = mkstemp(report);
    close(fd);
    snprintf(suite, sizeof suite, "%s/build/grader/%s", c->root, ch->suite);
    snprintf(bin, sizeof bin, "%s/%s/bin", c->root, dir);
    snprintf(e_root, sizeof e_root, "TSHMEM_ROOT=%s", c->root);
    snprintf(e_bin, sizeof e_bin, "TSHMEM_TEST_BIN=%s", bin);
    snprintf(e_report, sizeof e_report, "TSHMEM_REPORT=%s", report);
    free(dir);
    const char *env[] = {e_root, e_bin, e_report, NULL};
    char *argv[] = {suite, "--jobs=2", NULL};
    char *log = NULL;
    int status = run_command(c, argv, env, &log);
    read_report(report, out);
    unlink(report);
    if (out->n == 0) { /* the suite itself could not run: keep its words */
        free(out->build_log);
        out->build_log = log;
        out->built = 0;
        return -1;
    }
    free(log);
    return status;
}

void chapter_run_free(struct chapter_run *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->results[i].message);
    free(r->build_log);
    r->n = 0;
    r->build_log = NULL;
}
