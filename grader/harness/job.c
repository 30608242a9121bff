/* job.c: grader harness: runs a tshmem PE job in its own session under a hard timeout, captures
   its output, and on a hang reports where each PE was (gdb) before killing the whole job. */
#define _GNU_SOURCE
#include "job.h"
#include "hash.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define OUTPUT_LIMIT (64L << 20) /* a job printing more is stopped before it fills the disk */
#define KEEP_HEAD (1L << 20)     /* of a bigger output we keep the head and the tail */
#define KEEP_TAIL (7L << 20)     /* (the tail holds the last steps) */
#define MAX_PIDS 512             /* processes of one job we look at */
#define MAX_GDB 16               /* PEs we take a backtrace of */
#define GDB_SECONDS 8.0          /* all backtraces together; gdb itself may hang */
#define TERM_GRACE 2.0           /* between SIGTERM to tshrun and SIGKILL to everything */
#define MAX_REPORTED_PES MAX_GDB

struct pe_proc {
    pid_t pid;
    int pe;          /* -1: unknown */
    char state;      /* from /proc, before we froze it */
    pid_t gdb;       /* gdb taking its backtrace, or -1 */
    int gdb_fd;      /* gdb's output */
    char *where;     /* rendered backtrace, or NULL */
    enum job_where kind; /* in a wait, or running its own code */
    char own[384];   /* where in its own code: "f (file:line)" */
    const char *why; /* why there is no backtrace */
};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void nap(double s) {
    struct timespec t = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
    nanosleep(&t, NULL);
}

/* An unlinked temp file, so nothing is left behind even if this process dies. O_APPEND keeps
   the writes of mpirun and of the ranks, which share it, from overwriting each other. */
static int temp_fd(void) {
    const char *dir = getenv("TMPDIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tshmem-job-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkostemp(path, O_APPEND | O_CLOEXEC);
    if (fd >= 0) unlink(path);
    return fd;
}

/* Starts argv (PATH searched) in a new session: mpirun puts each rank in its own process group,
   but they all stay in this session, which is how we find and kill the whole job. Signals get
   default dispositions and mask: the test process's may differ, and ignored ones are inherited. */
static pid_t spawn(char *const argv[], char *const envp[], int out_fd) {
    posix_spawnattr_t at;
    posix_spawn_file_actions_t fa;
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3); /* e.g. Criterion's pipes */
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0) errno = rc;
    return rc == 0 ? pid : -1;
}

/* State and session of pid from /proc/PID/stat: after the last ')' (the name may hold any
   character) come state, ppid, pgrp, session. */
static int proc_stat(pid_t pid, char *state, pid_t *sid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    int ppid, pgrp, session;
    if (!p || sscanf(p + 1, " %c %d %d %d", state, &ppid, &pgrp, &session) != 4) return 0;
    *sid = session;
    return 1;
}

/* Processes of session sid (zombies only if asked); at most max. */
static int session_pids(pid_t sid, pid_t *pids, char *states, int max, int zombies) {
    DIR *d = opendir("/proc");
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; n < max && (e = readdir(d)) != NULL;) {
        pid_t pid = (pid_t)atoi(e->d_name), s;
        char st;
        if (pid > 0 && proc_stat(pid, &st, &s) && s == sid && (zombies || st != 'Z')) {
            if (states) states[n] = st;
            pids[n++] = pid;
        }
    }
    closedir(d);
    return n;
}

/* Reaps the session's zombies that are our children: the leader, and (as we are a subreaper)
   ranks orphaned when mpirun died first. Others are not ours and waitpid just fails. */
static void reap_session(pid_t sid) {
    pid_t pids[MAX_PIDS];
    int n = session_pids(sid, pids, NULL, MAX_PIDS, 1);
    for (int i = 0; i < n; i++) waitpid(pids[i], NULL, WNOHANG);
}

/* SIGKILLs every live process of the session, again and again since one may be forking while
   we kill, then reaps. Gives up after `patience` s (a process in D state cannot die yet). */
static void kill_session(pid_t sid, double patience) {
    pid_t pids[MAX_PIDS];
    double end = now() + patience;
    int n;
    while ((n = session_pids(sid, pids, NULL, MAX_PIDS, 0)) > 0 && now() < end) {
        for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
        reap_session(sid);
        nap(0.005);
    }
    reap_session(sid);
}

/* SIGINT, SIGTERM or SIGHUP that arrived while a job ran (0: none). A suite told to stop (Ctrl-C,
   or the grader stopping a run) must not leave the job running: the signal only sets this flag,
   the job is stopped as a hung one is (without the report), then the signal takes its course. */
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) { stop_signal = sig; }

/* Waits until pid exits or `deadline`, without reaping it (WNOWAIT): its pid is the session id
   and must not be reused while we sweep the session. Stops early (*flooded = 1) when the output
   in out_fd (if >= 0) passes OUTPUT_LIMIT, and when `stoppable` and a stop signal came.
   Returns 1 when it exited, with its status in *si. */
static int wait_exit(pid_t pid, int out_fd, double deadline, int *flooded, siginfo_t *si,
                     int stoppable) {
    for (double pause = 0.001;; pause = pause < 0.02 ? pause * 2 : pause) {
        if (stoppable && stop_signal) return 0;
        memset(si, 0, sizeof *si);
        int rc = waitid(P_PID, (id_t)pid, si, WEXITED | WNOHANG | WNOWAIT);
        if (rc == 0 && si->si_pid == pid) return 1;
        if (rc != 0 && errno == ECHILD) return 1; /* already reaped: nothing to wait for */
        struct stat st;
        if (out_fd >= 0 && fstat(out_fd, &st) == 0 && st.st_size > OUTPUT_LIMIT) {
            *flooded = 1;
            return 0;
        }
        if (now() >= deadline) return 0;
        nap(pause);
    }
}

static int exit_status(const siginfo_t *si) {
    if (si->si_code == CLD_EXITED) return si->si_status & 0xff;
    return 128 + si->si_status; /* killed by a signal: the shell convention tshrun also uses */
}

static void pread_all(int fd, char *buf, size_t len, off_t off) {
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, off + (off_t)got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    memset(buf + got, 0, len - got + 1);
}

/* The captured output as a string; of a huge one, the head and the tail with a note between.
   NUL bytes become '?' so that string functions see all of it. */
static char *read_output(int fd) {
    struct stat st;
    size_t size = fstat(fd, &st) == 0 ? (size_t)st.st_size : 0, len = size, skip = 0;
    if (size > (size_t)(KEEP_HEAD + KEEP_TAIL)) len = KEEP_HEAD + KEEP_TAIL, skip = size - len;
    char note[96];
    int nl = skip ? snprintf(note, sizeof note, "\n[... %zu bytes of output left out ...]\n", skip)
                  : 0;
    char *buf = malloc(len + (size_t)nl + 1);
    if (!buf) return strdup("harness: out of memory reading the output\n");
    size_t head = skip ? KEEP_HEAD : len;
    pread_all(fd, buf, head, 0);
    if (skip) {
        memcpy(buf + head, note, (size_t)nl);
        pread_all(fd, buf + head + nl, len - head, (off_t)(head + skip));
    }
    for (size_t i = 0; i < len + (size_t)nl; i++)
        if (buf[i] == '\0') buf[i] = '?';
    return buf;
}

/* ---- Hang report ---------------------------------------------------------------------- */

/* Which PE a process is: from its "pe <i>: step start pid=<pid>" line, else from the rank
   Open MPI put in its environment (a PE hung in init printed no step yet). */
static int pe_of_pid(const char *out, pid_t pid) {
    for (const char *p = out; (p = strstr(p, ": step start pid=")) != NULL; p++) {
        const char *l = p;
        while (l > out && l[-1] != '\n') l--;
        int pe;
        long got;
        if (sscanf(l, "pe %d: step start pid=%ld", &pe, &got) == 2 && got == pid) return pe;
    }
    char path[64], env[65536];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, env, sizeof env - 1) : -1;
    if (fd >= 0) close(fd);
    if (n > 0) env[n] = '\0';
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(env + i) + 1) {
        if (strncmp(env + i, "OMPI_COMM_WORLD_RANK=", 21) == 0) return atoi(env + i + 21);
    }
    return -1;
}

/* The job's PE processes: those of the session running the PE program (at most MAX_PIDS). */
static int find_pes(pid_t sid, const char *prog, const char *out, struct pe_proc *pes) {
    pid_t pids[MAX_PIDS];
    char states[MAX_PIDS], want[PATH_MAX], exe[PATH_MAX], path[64];
    int n = session_pids(sid, pids, states, MAX_PIDS, 0), found = 0;
    if (!realpath(prog, want)) snprintf(want, sizeof want, "%s", prog);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "/proc/%d/exe", (int)pids[i]);
        ssize_t len = readlink(path, exe, sizeof exe - 1);
        if (len < 0) continue;
        exe[len] = '\0';
        if (strcmp(exe, want) != 0) continue;
        pes[found++] = (struct pe_proc){ .pid = pids[i], .pe = pe_of_pid(out, pids[i]),
                                         .state = states[i], .gdb = -1, .gdb_fd = -1 };
    }
    return found;
}

static const char *state_words(char state) {
    return state == 'R' ? "it was running (busy-waiting?)"
           : state == 'D' ? "it was blocked in the kernel"
                          : "it was sleeping (blocked in a call)";
}

/* Runs gdb on all the PEs at once (with 8 PEs on 2 cores one after the other is too slow),
   under one deadline: a gdb that hangs is killed with its session. */
static void backtraces(struct pe_proc *pes, int n) {
    for (int i = 0; i < n; i++) {
        pes[i].why = "gdb was not run";
        if (pes[i].pe < 0 || pes[i].pe >= MAX_GDB) continue; /* not reported anyway */
        char pid[16];
        snprintf(pid, sizeof pid, "%d", (int)pes[i].pid);
        char *argv[] = { "gdb", "-p", pid, "-batch", "-nx", "-iex", "set debuginfod enabled off",
                         "-ex", "thread apply all bt", NULL };
        pes[i].gdb_fd = temp_fd();
        pes[i].gdb = pes[i].gdb_fd >= 0 ? spawn(argv, environ, pes[i].gdb_fd) : -1;
        if (pes[i].gdb < 0) pes[i].why = "no backtrace: gdb is not installed";
    }
    double deadline = now() + GDB_SECONDS;
    for (int i = 0; i < n; i++) {
        siginfo_t si;
        int flooded = 0;
        if (pes[i].gdb > 0) {
            if (!wait_exit(pes[i].gdb, -1, deadline, &flooded, &si, 0))
                pes[i].why = "no backtrace: gdb did not answer in time";
            else pes[i].why = "no backtrace: gdb could not attach";
            kill_session(pes[i].gdb, 1.0);
            char *bt = read_output(pes[i].gdb_fd);
            if (strstr(bt, "ptrace: Operation not permitted"))
                pes[i].why = "no backtrace: gdb may not attach here (kernel.yama.ptrace_scope)";
            pes[i].where = job_backtrace_text(bt);
            pes[i].kind = job_backtrace_kind(bt, pes[i].own, sizeof pes[i].own);
            free(bt);
        }
        if (!pes[i].where && asprintf(&pes[i].where, "%s; %s", pes[i].why,
                                      state_words(pes[i].state)) < 0) pes[i].where = NULL;
        if (pes[i].gdb_fd >= 0) close(pes[i].gdb_fd);
    }
}

/* One line per PE: its last step, from the output, and where its process was. */
static void report_pe(FILE *m, const struct pe_job *snap, int pe, const struct pe_proc *p) {
    char *step = job_last_step(snap, pe);
    fprintf(m, "  PE %d: ", pe);
    if (job_pe_done(snap, pe)) fprintf(m, "printed done");
    else if (step) fprintf(m, "last step \"%s\"", step);
    else fprintf(m, "never printed a step");
    fprintf(m, "; %s\n", p && p->where ? p->where : "its process had already exited");
    free(step);
}

/* The PEs that were running code of their own, in no wait (a loop that does not end), named
   with where; 0 when there is none. */
static int own_code(FILE *m, const struct pe_job *snap, const struct pe_proc *pes, int n) {
    int k = 0, waiting = 0;
    for (int i = 0; i < n; i++) {
        if (pes[i].pe < 0 || pes[i].pe >= snap->npes) continue;
        waiting += pes[i].kind == JOB_WHERE_WAIT;
        if (pes[i].kind != JOB_WHERE_OWN) continue;
        fprintf(m, "%sPE %d was not waiting: it was running its own code, in %s", k ? "; " : "",
                pes[i].pe, pes[i].own);
        k++;
    }
    if (k == 0) return 0;
    fprintf(m, ".\nA loop there that never ends? Its condition never changes, or it waits for a "
               "word without the runtime's wait functions. %s",
            waiting ? "The PEs in a wait are most likely waiting for it: see book \"Debugging\"."
                    : "See book \"Debugging\".");
    return k;
}

static char *hang_text(const struct pe_job *snap, const struct pe_proc *pes, int n,
                       double limit, int flooded) {
    char *s = NULL;
    size_t len;
    FILE *m = open_memstream(&s, &len);
    if (flooded) fprintf(m, "stopped after printing over %ld MiB", OUTPUT_LIMIT >> 20);
    else fprintf(m, "timed out after %g s", limit);
    fprintf(m, ": %d PE%s, scenario %s. Where each PE was:\n", snap->npes,
            snap->npes == 1 ? "" : "s", snap->scenario);
    for (int pe = 0; pe < snap->npes && pe < MAX_REPORTED_PES; pe++) {
        const struct pe_proc *p = NULL;
        for (int i = 0; i < n; i++) p = pes[i].pe == pe ? &pes[i] : p;
        report_pe(m, snap, pe, p);
    }
    if (snap->npes > MAX_REPORTED_PES)
        fprintf(m, "  (%d more PEs left out)\n", snap->npes - MAX_REPORTED_PES);
    if (flooded) fprintf(m, "A PE printing without end is usually stuck in a loop.");
    else if (job_done_count(snap) == snap->npes)
        fprintf(m, "Every PE printed done, so the job hung while finishing (tshmem_finalize?).");
    else if (!own_code(m, snap, pes, n))
        fprintf(m, "A hang usually means a PE waits for a signal nobody sends: "
                   "see book \"Debugging\".");
    fclose(m);
    return s;
}

/* Everything about a job that did not end, collected while it still runs. The PEs are frozen
   (SIGSTOP) meanwhile: busy-waiting PEs would starve gdb, and the snapshot stays consistent. */
static char *hang_report(const struct pe_job *job, pid_t sid, const char *prog, int out_fd,
                         double limit, int flooded) {
    struct pe_job snap = *job;
    static struct pe_proc pes[MAX_PIDS]; /* large; the test process has one thread */
    snap.output = read_output(out_fd);
    int n = find_pes(sid, prog, snap.output, pes);
    for (int i = 0; i < n; i++) kill(pes[i].pid, SIGSTOP);
    backtraces(pes, n);
    for (int i = 0; i < n; i++) kill(pes[i].pid, SIGCONT); /* so they can obey SIGTERM */
    char *text = hang_text(&snap, pes, n, limit, flooded);
    for (int i = 0; i < n; i++) free(pes[i].where);
    free(snap.output);
    return text;
}

/* ---- Running a job -------------------------------------------------------------------- */

/* The inherited environment plus `extra`; an extra KEY=... replaces an inherited KEY. */
static char **build_env(const char *const *extra) {
    size_t n = 0, k = 0, m = 0;
    while (environ[n]) n++;
    while (extra && extra[k]) k++;
    char **env = calloc(n + k + 1, sizeof *env);
    for (size_t i = 0; env && i < n; i++) {
        size_t key = strcspn(environ[i], "=") + 1;
        int replaced = 0;
        for (size_t j = 0; j < k; j++) replaced |= strncmp(extra[j], environ[i], key) == 0;
        if (!replaced) env[m++] = environ[i];
    }
    for (size_t j = 0; env && j < k; j++) env[m++] = (char *)extra[j];
    return env;
}

static void harness_error(struct pe_job *job, const char *fmt, ...) {
    va_list ap;
    char *msg = NULL;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0) msg = NULL;
    va_end(ap);
    if (asprintf(&job->output, "harness: %s\n", msg ? msg : fmt) < 0) job->output = NULL;
    free(msg);
    job->status = 127;
}

double job_timeout_scale(void) {
    const char *s = getenv("TSHMEM_TEST_TIMEOUT_SCALE");
    double f = s ? strtod(s, NULL) : 1.0;
    return f > 0 ? f : 1.0;
}

/* "$TSHMEM_ROOT/tools/tshrun" and the PE program's path, or NULL with an error set. */
static int job_paths(struct pe_job *job, const char *prog, char **tshrun, char **pe_prog) {
    const char *root = getenv("TSHMEM_ROOT"), *bin = getenv("TSHMEM_TEST_BIN");
    if (!root || !*root) {
        harness_error(job, "TSHMEM_ROOT is not set (the repository root, holding tools/tshrun)");
        return 0;
    }
    if (!strchr(prog, '/') && (!bin || !*bin)) {
        harness_error(job, "TSHMEM_TEST_BIN is not set (the folder of the PE test programs)");
        return 0;
    }
    if (asprintf(tshrun, "%s/tools/tshrun", root) < 0) *tshrun = NULL;
    if (strchr(prog, '/') ? (*pe_prog = strdup(prog)) == NULL
                          : asprintf(pe_prog, "%s/%s", bin, prog) < 0) *pe_prog = NULL;
    return *tshrun && *pe_prog;
}

/* Kills a job that did not end: SIGTERM to tshrun first, so that mpirun stops the ranks and
   tshrun removes their shared memory; whatever is still alive after the grace gets SIGKILL. */
static void stop_job(pid_t pid) {
    siginfo_t si;
    int flooded = 0;
    kill(pid, SIGTERM);
    wait_exit(pid, -1, now() + TERM_GRACE, &flooded, &si, 0);
    kill_session(pid, 10.0);
}

static void run_spawned(struct pe_job *job, pid_t pid, const char *pe_prog, int fd, double t0,
                        double limit) {
    siginfo_t si;
    int flooded = 0;
    if (wait_exit(pid, fd, t0 + limit, &flooded, &si, 1)) {
        job->seconds = now() - t0;
        job->status = exit_status(&si);
        kill_session(pid, 5.0); /* a PE orphaned by a crashed mpirun must not outlive the test */
        return;
    }
    job->seconds = now() - t0;
    job->timed_out = 1;
    job->status = -1;
    if (!stop_signal) job->hang_report = hang_report(job, pid, pe_prog, fd, limit, flooded);
    stop_job(pid);
}

/* What a job killed with SIGKILL could not remove itself: its segments (the runtime unlinks
   them right after start-up, tshrun in the window before) and Open MPI's folder (tshrun). */
static void remove_shm_leftovers(const char *job_id) {
    char seg[128], mpi[128], path[PATH_MAX];
    snprintf(seg, sizeof seg, "tshmem-%u-%s-", (unsigned)getuid(), job_id);
    snprintf(mpi, sizeof mpi, "tshrun-%s-", job_id);
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        int is_seg = strncmp(e->d_name, seg, strlen(seg)) == 0;
        if (!is_seg && strncmp(e->d_name, mpi, strlen(mpi)) != 0) continue;
        snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
        if (is_seg) unlink(path);
        else {
            DIR *sub = opendir(path); /* Open MPI's files: one level deep */
            char file[PATH_MAX + 256];
            for (struct dirent *f; sub && (f = readdir(sub)) != NULL;) {
                snprintf(file, sizeof file, "%s/%s", path, f->d_name);
                if (f->d_name[0] != '.') unlink(file);
            }
            if (sub) closedir(sub);
            rmdir(path);
        }
    }
    if (d) closedir(d);
}

/* The job's id (TSHMEM_JOB_ID names its /dev/shm entries): the test's own, or one we choose. */
static const char *job_id_of(const char *const *env, char *buf, size_t len) {
    static int counter;
    for (size_t i = 0; env && env[i]; i++)
        if (strncmp(env[i], "TSHMEM_JOB_ID=", 14) == 0) return env[i] + 14;
    snprintf(buf, len, "g%d-%d", (int)getpid(), ++counter);
    return buf;
}

void job_runv(struct pe_job *job, const char *chapter, const char *prog, int npes,
              const char *scenario, const char *const *args, const char *const *env,
              double timeout_s) {
    *job = (struct pe_job){ .chapter = chapter, .scenario = scenario, .npes = npes };
    char *tshrun = NULL, *pe_prog = NULL, np[16], **argv = NULL, **envp = NULL;
    int fd = -1;
    if (!job_paths(job, prog, &tshrun, &pe_prog)) goto out;
    if ((fd = temp_fd()) < 0) {
        harness_error(job, "cannot create a temp file: %s", strerror(errno));
        goto out;
    }
    size_t nargs = 0, nenv = 0;
    while (args && args[nargs]) nargs++;
    while (env && env[nenv]) nenv++;
    char id_buf[64], id_env[96];
    const char *job_id = job_id_of(env, id_buf, sizeof id_buf);
    const char **env2 = calloc(nenv + 2, sizeof *env2);
    if (env2) {
        for (size_t i = 0; i < nenv; i++) env2[i] = env[i];
        snprintf(id_env, sizeof id_env, "TSHMEM_JOB_ID=%s", job_id);
        if (job_id == id_buf) env2[nenv] = id_env;
    }
    argv = calloc(nargs + 6, sizeof *argv), envp = env2 ? build_env(env2) : NULL;
    free(env2);
    if (!argv || !envp) {
        harness_error(job, "out of memory");
        goto out;
    }
    snprintf(np, sizeof np, "%d", npes);
    argv[0] = tshrun, argv[1] = "-np", argv[2] = np, argv[3] = pe_prog, argv[4] = (char *)scenario;
    for (size_t i = 0; i < nargs; i++) argv[5 + i] = (char *)args[i];
    /* Orphaned ranks (mpirun killed first) become our children, so we can reap them; and an
       ignored SIGCHLD would reap tshrun behind our back, losing its exit status. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    struct sigaction chld;
    if (sigaction(SIGCHLD, NULL, &chld) == 0 &&
        (chld.sa_handler == SIG_IGN || (chld.sa_flags & SA_NOCLDWAIT)))
        signal(SIGCHLD, SIG_DFL);
    struct sigaction stop = { .sa_handler = on_stop }, old[3];
    const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
    sigemptyset(&stop.sa_mask);
    for (int i = 0; i < 3; i++) sigaction(sigs[i], &stop, &old[i]);
    double t0 = now();
    pid_t pid = spawn(argv, envp, fd);
    if (pid < 0) harness_error(job, "cannot start %s: %s", tshrun, strerror(errno));
    else run_spawned(job, pid, pe_prog, fd, t0, timeout_s * job_timeout_scale());
    if (pid >= 0) job->output = read_output(fd);
    if (job->timed_out) remove_shm_leftovers(job_id); /* we killed it: its cleanup may not have run */
    for (int i = 0; i < 3; i++) sigaction(sigs[i], &old[i], NULL);
    if (stop_signal) raise(stop_signal); /* nothing of the job is left: now stop as asked */
out:
    free(argv);
    free(envp);
    if (fd >= 0) close(fd);
    if (!job->output) job->output = strdup("");
    free(tshrun);
    free(pe_prog);
}

void job_run(struct pe_job *job, const char *chapter, const char *prog, int npes,
             const char *scenario, const char *const *env, double timeout_s) {
    job_runv(job, chapter, prog, npes, scenario, NULL, env, timeout_s);
}

/* FNV-1a of a string and its NUL, continued from h: the name of a shared job's files. The NUL
 * separates: "ab","c" is not "a","bc". */
static uint64_t hash_word(uint64_t h, const char *s)
{
    return fnv1a(h, s, strlen(s) + 1);
}

int job_shared_ok(const char *chapter, const char *prog, int npes, const char *scenario,
                  const char *const *args, const char *const *env, double timeout_s) {
    const char *dir = getenv("TSHMEM_JOB_SHARE");
    if (!dir || !*dir) return 0;
    char n[16], lock[PATH_MAX], ok[PATH_MAX + 8], fail[PATH_MAX + 8];
    snprintf(n, sizeof n, "%d", npes);
    uint64_t h = hash_word(hash_word(hash_word(FNV_START, prog), scenario), n);
    for (size_t i = 0; args && args[i]; i++)
        h = hash_word(h, args[i]);
    h = hash_word(h, "--env");
    for (size_t i = 0; env && env[i]; i++)
        h = hash_word(h, env[i]);
    snprintf(lock, sizeof lock, "%s/%016llx", dir, (unsigned long long)h);
    snprintf(ok, sizeof ok, "%s.ok", lock);
    snprintf(fail, sizeof fail, "%s.fail", lock);
    int fd = open(lock, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return 0;
    /* One test runs the job; another that needs it meanwhile waits here for its verdict. */
    while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {}
    int passed;
    if (access(ok, F_OK) == 0) passed = 1;
    else if (access(fail, F_OK) == 0) passed = 0;
    else {
        struct pe_job job;
        job_runv(&job, chapter, prog, npes, scenario, args, env, timeout_s);
        char *problem = job_problem_ok(&job);
        passed = problem == NULL;
        free(problem);
        job_free(&job);
        int mark = -1;
        if (!stop_signal) /* stopped by the user: no verdict to keep */
            mark = open(passed ? ok : fail, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        if (mark >= 0) close(mark);
    }
    flock(fd, LOCK_UN);
    close(fd);
    return passed;
}
