/* child.c: a test run in a child process of the dashboard or of watch mode. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "util.h"

extern char **environ;

int child_start(struct child *c, char *const args[], int capture)
{
    char self[PATH_MAX], *argv[16];
    const char *runner = getenv("TSHMEM_GRADER_RUNNER");
    if (own_program(self) != 0)
        return -1;
    argv[0] = runner && *runner ? (char *)runner : self;
    int k = 1;
    for (; args[k - 1] && k < 15; k++)
        argv[k] = args[k - 1];
    argv[k] = NULL;

    int fds[2] = {-1, -1};
    if (capture && pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (capture) {
        posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
        posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    }
    spawn_attr_child(&at, 1);
    int rc = posix_spawnp(&c->pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (capture)
        close(fds[1]);
    if (rc != 0) {
        if (capture)
            close(fds[0]);
        c->pid = 0;
        errno = rc;
        return -1;
    }
    c->out_fd = capture ? fds[0] : -1;
    return 0;
}

static int decode(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int child_poll(struct child *c, int *status)
{
    int st;
    if (c->pid <= 0)
        return 1;
    if (waitpid(c->pid, &st, WNOHANG) != c->pid)
        return 0;
    *status = decode(st);
    c->pid = 0;
    return 1;
}

int child_stop(struct child *c, int grace_s)
{
    int st = 0, reaped = 0;
    if (c->pid <= 0)
        return 0;
    pid_t pg = c->pid;
    kill(-pg, SIGTERM);
    for (int ms = 0; ms < grace_s * 1000; ms += 20) {
        if (!reaped && waitpid(c->pid, &st, WNOHANG) == c->pid)
            reaped = 1;
        if (reaped && kill(-pg, 0) != 0) /* the whole group is gone */
            break;
        struct timespec t = {0, 20000000L};
        nanosleep(&t, NULL);
    }
    if (!reaped || kill(-pg, 0) == 0) {
        kill(-pg, SIGKILL);
        if (!reaped)
            waitpid(c->pid, &st, 0);
    }
    c->pid = 0;
    return decode(st);
}

void child_close(struct child *c)
{
    if (c->out_fd >= 0)
        close(c->out_fd);
    c->out_fd = -1;
}
