/* watch.c: `grader watch`: run the current chapter's tests each time one of its files is saved
 * (inotify, with a check of the files' times every two seconds, and a key, for file systems
 * whose notifications do not arrive); move on to the next chapter when one passes. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "code.h"
#include "commands.h"
#include "help.h"
#include "progress.h"
#include "run.h"
#include "util.h"

static struct termios saved_tty;
static int tty_changed;

static void tty_restore(void)
{
    if (tty_changed)
        tcsetattr(0, TCSAFLUSH, &saved_tty);
    tty_changed = 0;
}

/* Single keys without Enter, not echoed; restored on every way out. */
static void tty_keys(void)
{
    struct termios t;
    if (!isatty(0) || tcgetattr(0, &saved_tty) != 0)
        return;
    t = saved_tty;
    t.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    if (tcsetattr(0, TCSANOW, &t) == 0) {
        tty_changed = 1;
        atexit(tty_restore);
    }
}

struct watch {
    const struct course *c;
    const struct chapter *ch;
    int fixed; /* the learner named the chapter: stay on it */
    int ref_deps;
    int notify; /* inotify descriptor, or -1 */
    int wd;
    uint64_t last; /* signature when the last run started */
    int runs;
    int keys; /* stdin still has keys to give (not at its end) */
};

/* One key from stdin, or 0 (none, or stdin ended: keys are then no longer read). */
static char read_key(struct watch *w, int timeout_ms)
{
    struct pollfd pf = {.fd = w->keys ? 0 : -1, .events = POLLIN};
    char key = 0;
    if (poll(&pf, 1, timeout_ms) <= 0 || !(pf.revents & (POLLIN | POLLHUP)))
        return 0;
    if (read(0, &key, 1) != 1) {
        w->keys = 0;
        return 0;
    }
    return key;
}

static void arm(struct watch *w)
{
    if (w->notify >= 0 && w->wd >= 0)
        inotify_rm_watch(w->notify, w->wd);
    w->wd = chapter_files_watch(w->notify, w->c, w->ch);
    char files[512] = "";
    for (int f = 0; f < w->ch->nfiles; f++)
        appendf(files, sizeof files, "%s%s", f ? ", " : "", w->ch->files[f]);
    printf("\nWatching %s (%s): save a file to run chapter %s's tests again; r runs them now, "
           "q quits.%s\n",
           w->ch->dir, files, w->ch->id,
           w->wd < 0 ? " (No change notifications here: the files are checked every 2 s.)" : "");
    fflush(stdout);
}

/* Runs the tests in a child; returns its status, or -1 when the learner quit during it. */
static int run_tests(struct watch *w, int *quit)
{
    char *args[] = {"test", (char *)w->ch->id, w->ref_deps ? "--ref-deps" : NULL, NULL};
    struct child ch = {0};
    w->last = chapter_files_signature(w->c, w->ch);
    w->runs++;
    printf("\n---- run %d: chapter %s, %s ----\n", w->runs, w->ch->id, w->ch->title);
    fflush(stdout);
    if (child_start(&ch, args, 0) != 0) {
        printf("grader watch: cannot start the tests: %s\n", strerror(errno));
        return -1;
    }
    int status = 0;
    while (!child_poll(&ch, &status)) {
        char key = read_key(w, 100);
        if (key == 'q' || key == 'Q')
            *quit = 1;
        if (*quit || grader_stop) {
            printf("\nStopping the tests...\n");
            child_stop(&ch, 20);
            *quit = 1;
            return -1;
        }
    }
    return status;
}

/* After a run that passed, the next chapter not done yet (NULL: none). */
static const struct chapter *next_chapter(const struct watch *w)
{
    const struct chapter *next = current_chapter(w->c);
    return next && next != w->ch && course_index(w->c, next) > course_index(w->c, w->ch) ? next
                                                                                         : NULL;
}

/* Waits for a save, a key or a signal: 1 to run, 0 to quit. */
static int wait_event(struct watch *w)
{
    int pending = 0;
    double quiet_until = 0;
    for (int ticks = 0; !grader_stop; ticks++) {
        struct pollfd pf[2] = {{.fd = w->keys ? 0 : -1, .events = POLLIN},
                               {.fd = w->notify, .events = POLLIN}};
        int n = poll(pf, 2, 100);
        if (n > 0 && (pf[0].revents & (POLLIN | POLLHUP))) {
            char key = read_key(w, 0);
            if (key == 'q' || key == 'Q')
                return 0;
            if (key == 'r' || key == 'R' || key == '\n' || key == '\r')
                return 1;
        }
        if (n > 0 && (pf[1].revents & POLLIN)) {
            char buf[4096];
            while (read(w->notify, buf, sizeof buf) > 0) {
            }
            pending = 1;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double t = (double)now.tv_sec + now.tv_nsec / 1e9;
        if (pending && quiet_until == 0)
            quiet_until = t + 0.3; /* an editor's save may come in several writes */
        if ((pending && t >= quiet_until) || ticks % 20 == 19) {
            pending = 0, quiet_until = 0;
            if (chapter_files_signature(w->c, w->ch) != w->last)
                return 1;
        }
    }
    return 0;
}

int cmd_watch(const struct course *c, int argc, char **argv)
{
    if (wants_help("watch", argc, argv))
        return 0;
    struct watch w = {.c = c, .notify = -1, .wd = -1, .keys = 1};
    const char *id = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--ref-deps"))
            w.ref_deps = 1;
        else if (argv[i][0] != '-' && !id)
            id = argv[i];
        else
            return bad_argument("watch", argv[i]);
    }
    w.ch = id ? chapter_arg(c, "watch", id) : current_chapter(c);
    if (!w.ch)
        return 2;
    w.fixed = id != NULL;
    stop_on_signals();
    tty_keys();
    w.notify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    int quit = 0;
    while (!quit && !grader_stop) {
        int status = run_tests(&w, &quit);
        if (quit || grader_stop)
            break;
        const struct chapter *next = status == 0 && !w.fixed ? next_chapter(&w) : NULL;
        if (next) {
            printf("\nChapter %s is done. On to %s, %s (%s): grader read %s shows its page.\n",
                   w.ch->id, next->id, next->title, next->dir, next->id);
            w.ch = next;
            arm(&w);
            continue;
        }
        if (w.runs == 1 || status == 0)
            arm(&w);
        else
            printf("\nWatching %s: save to run again, r runs now, q quits.\n", w.ch->dir);
        fflush(stdout);
        if (!wait_event(&w))
            break;
    }
    tty_restore();
    if (w.notify >= 0)
        close(w.notify);
    printf("\nStopped watching.\n");
    return grader_stop ? stop_status() : 0;
}
