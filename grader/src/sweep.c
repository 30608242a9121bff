/* sweep.c: nothing of a stopped run is left running, and nothing of it stays in /dev/shm. */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "sweep.h"
#include "util.h"

static void nap_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* A suite's PE jobs run in sessions of their own, and when the suite's process group is stopped
 * they can outlive it (Criterion kills its workers with the runner, before they stop their
 * jobs). Every process of a run carries TSHMEM_GRADER_RUN=<tag> in its environment; this finds
 * them, stops them (SIGTERM first: tshrun then stops mpirun and removes the job's shared memory),
 * and removes what a killed job leaves in /dev/shm. */
#define MAX_SWEEP 256

static int tagged(const char *tag, pid_t *pids, int max, char (*jobs)[64], int *njobs)
{
    DIR *d = opendir("/proc");
    char want[96], path[64];
    int n = 0;
    size_t wl = (size_t)snprintf(want, sizeof want, "TSHMEM_GRADER_RUN=%s", tag) + 1;
    for (struct dirent *e; d && n < max && (e = readdir(d)) != NULL;) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0 || pid == getpid())
            continue;
        snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
        size_t len = 0;
        char *env = read_file(path, &len); /* NULL: gone, or not ours to read */
        if (!env)
            continue;
        int mine = 0;
        const char *job = NULL;
        for (size_t i = 0; i < len; i += strlen(env + i) + 1) {
            mine |= strncmp(env + i, want, wl) == 0;
            if (strncmp(env + i, "TSHMEM_JOB_ID=", 14) == 0)
                job = env + i + 14;
        }
        if (mine) {
            pids[n++] = pid;
            if (job && jobs && *njobs < MAX_SWEEP)
                snprintf(jobs[(*njobs)++], 64, "%s", job);
        }
        free(env);
    }
    if (d)
        closedir(d);
    return n;
}

static void remove_job_shm(const char *job)
{
    char seg[128], mpi[128], path[512];
    snprintf(seg, sizeof seg, "tshmem-%u-%.60s-", (unsigned)getuid(), job);
    snprintf(mpi, sizeof mpi, "tshrun-%.60s-", job);
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
        if (strncmp(e->d_name, seg, strlen(seg)) == 0) {
            unlink(path);
        } else if (strncmp(e->d_name, mpi, strlen(mpi)) == 0) {
            remove_flat_dir(path); /* Open MPI's files */
        }
    }
    if (d)
        closedir(d);
}

void sweep_run(const char *tag)
{
    static pid_t pids[MAX_SWEEP];
    static char jobs[MAX_SWEEP][64];
    int njobs = 0, n = tagged(tag, pids, MAX_SWEEP, jobs, &njobs);
    for (int i = 0; i < n; i++)
        kill(pids[i], SIGTERM);
    for (int ms = 0; n > 0 && ms < 5000; ms += 50) {
        nap_ms(50);
        n = tagged(tag, pids, MAX_SWEEP, NULL, NULL);
    }
    for (int i = 0; i < n; i++)
        kill(pids[i], SIGKILL);
    for (int i = 0; i < njobs; i++)
        remove_job_shm(jobs[i]);
}
