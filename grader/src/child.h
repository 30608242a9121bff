/* child.h: a test run in a child process, for the dashboard and watch mode: a crash in it never
 * takes them down, and stopping it stops everything it started. */
#ifndef GRADER_CHILD_H
#define GRADER_CHILD_H

#include <sys/types.h>

struct child {
    pid_t pid;  /* 0: none */
    int out_fd; /* the read end of its stdout and stderr when captured, else -1 */
};

/* Starts this grader with args ("test", "1.3", "--json", NULL) in a process group of its own
 * (the terminal's Ctrl-C reaches only us), stdin from /dev/null, and its output through a pipe
 * when capture (else on our terminal). $TSHMEM_GRADER_RUNNER, when set, is run instead of the
 * grader with the same arguments (the course's own tests use it to fake a crashing run).
 * Returns 0, or -1 with errno set. */
int child_start(struct child *c, char *const args[], int capture);
/* 1 when it has exited (its status in *status: the exit status, or 128+N for signal N). */
int child_poll(struct child *c, int *status);
/* Stops it: SIGTERM to its group (a grader test stops its suites and their PE jobs), waits up
 * to grace_s seconds, then SIGKILL. Returns its status. */
int child_stop(struct child *c, int grace_s);
/* Closes the pipe, forgets the child. */
void child_close(struct child *c);

#endif
