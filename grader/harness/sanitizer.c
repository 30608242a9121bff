/* sanitizer.c: grader harness: a sanitizer's report in a PE job's output (make sanitize).
   AddressSanitizer, LeakSanitizer, UndefinedBehaviorSanitizer and ThreadSanitizer each print a
   report of 30 to 100 lines and more: the failure message shows its head (what happened, and
   where, down to its SUMMARY line) and names a file under build/sanitizer/ that keeps the job's
   whole output, each report in full. */
#define _GNU_SOURCE
#include "job.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REPORT_LINES 40 /* of the first report, in the failure message */

/* The line that opens a report: ASan, LSan and TSan name themselves; UBSan's first line is
   "file:line:col: runtime error: ...". */
static const char *const openers[] = { "ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                       "WARNING: ThreadSanitizer", "FATAL: ThreadSanitizer",
                                       "ERROR: UndefinedBehaviorSanitizer", ": runtime error: ",
                                       NULL };

const char *job_sanitizer_report(const char *out) {
    for (const char *l = out ? out : ""; *l;) {
        const char *e = strchrnul(l, '\n');
        for (int i = 0; openers[i]; i++)
            if (memmem(l, (size_t)(e - l), openers[i], strlen(openers[i]))) return l;
        l = *e ? e + 1 : e;
    }
    return NULL;
}

/* The process the report is about: "==8014==ERROR: ..." or "... (pid=8014)"; 0 if unsaid. */
static long report_pid(const char *l) {
    const char *e = strchrnul(l, '\n'), *p = memmem(l, (size_t)(e - l), "(pid=", 5);
    if (p) return strtol(p + 5, NULL, 10);
    return strncmp(l, "==", 2) == 0 ? strtol(l + 2, NULL, 10) : 0;
}

int job_sanitizer_pe(const struct pe_job *job, const char *report) {
    long pid = report ? report_pid(report) : 0;
    char needle[48];
    const char *out = job->output ? job->output : "";
    if (pid <= 0) return -1;
    snprintf(needle, sizeof needle, ": step start pid=%ld\n", pid);
    for (const char *p = out; (p = strstr(p, needle)) != NULL; p++) {
        const char *l = p;
        while (l > out && l[-1] != '\n') l--;
        int pe;
        if (sscanf(l, "pe %d:", &pe) == 1) return pe;
    }
    return -1;
}

/* Where the whole output goes: $TSHMEM_ROOT/build/sanitizer/<chapter>-<scenario>-<pid>-<n>.txt,
   a name of letters, digits, '.', '-' and '_' alone. NULL if it cannot be written. */
static char *save_output(const struct pe_job *job) {
    static int counter;
    const char *root = getenv("TSHMEM_ROOT");
    char dir[PATH_MAX], name[128], *path = NULL;
    snprintf(dir, sizeof dir, "%s/build", root && *root ? root : ".");
    mkdir(dir, 0777);
    strncat(dir, "/sanitizer", sizeof dir - strlen(dir) - 1);
    mkdir(dir, 0777);
    snprintf(name, sizeof name, "%s-%s-%d-%d.txt", job->chapter ? job->chapter : "job",
             job->scenario ? job->scenario : "", (int)getpid(), ++counter);
    for (char *c = name; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_", *c))
            *c = '_';
    if (asprintf(&path, "%s/%s", dir, name) < 0) return NULL;
    FILE *f = fopen(path, "w");
    if (!f) return free(path), NULL;
    fprintf(f, "# %s %s on %d PEs: exit status %d after %.1f s; the job's whole output:\n",
            job->chapter ? job->chapter : "?", job->scenario ? job->scenario : "?", job->npes,
            job->status, job->seconds);
    fputs(job->output ? job->output : "", f);
    if (fclose(f) != 0) return free(path), NULL;
    return path;
}

/* The path as the learner types it: relative when the course's root is the current folder. */
static const char *shown_path(const char *path) {
    char cwd[PATH_MAX], root[PATH_MAX];
    const char *r = getenv("TSHMEM_ROOT");
    if (!r || !getcwd(cwd, sizeof cwd) || !realpath(r, root) || strcmp(cwd, root) != 0)
        return path;
    size_t n = strlen(r);
    return strncmp(path, r, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

/* The saved file of the last job whose report was shown: a message is often built twice
   (a job's output may reuse the address of a freed one: its length and time tell them apart). */
static const char *saved_for(const struct pe_job *job) {
    static const char *output;
    static size_t len;
    static double seconds;
    static char *path;
    size_t n = job->output ? strlen(job->output) : 0;
    if (!path || output != job->output || len != n || seconds != job->seconds) {
        free(path);
        path = save_output(job);
        output = job->output, len = n, seconds = job->seconds;
    }
    return path;
}

void job_sanitizer_head(FILE *m, const struct pe_job *job, const char *report) {
    int shown = 0, left_out = 0;
    const char *summary = NULL, *summary_end = NULL;
    for (const char *l = report, *e; *l; l = *e ? e + 1 : e) {
        e = strchrnul(l, '\n');
        int last = memmem(l, (size_t)(e - l), "SUMMARY: ", 9) != NULL;
        if (shown < REPORT_LINES) fprintf(m, "  %.*s\n", (int)(e - l), l), shown++;
        else if (last) summary = l, summary_end = e;
        else left_out++;
        if (last) break;
    }
    if (left_out) fprintf(m, "  (%d more lines of the report left out)\n", left_out);
    if (summary) fprintf(m, "  %.*s\n", (int)(summary_end - summary), summary);
    const char *path = saved_for(job);
    if (path) fprintf(m, "  (the job's whole output, each report in full: %s)\n", shown_path(path));
}
