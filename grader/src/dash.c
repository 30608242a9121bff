/* dash.c: the dashboard: the roadmap of the course, a chapter's tests run with a live progress
 * bar into a scrollable pane, and keys for hint, read, reset, bench and watch.
 *
 * Runs happen in child processes (grader test --json, grader bench), each in a process group
 * of its own: a crash there is a message here, and stopping one stops all it started. The
 * terminal is given back on every way out: q, Ctrl-C, SIGTERM or SIGHUP (a flag, then the
 * normal exit), and a crash of the dashboard itself (a handler that ends curses first). */
#define _GNU_SOURCE
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "code.h"
#include "commands.h"
#include "dash.h"
#include "dash_draw.h"
#include "dash_run.h"
#include "hint.h"
#include "reset.h"

static volatile sig_atomic_t quit_signal;
static volatile pid_t crash_child; /* the run to stop if the dashboard itself crashes */
static int saved_stderr = -1, stderr_file = -1;

static void on_quit(int sig)
{
    quit_signal = sig;
}

static void on_crash(int sig)
{
    endwin(); /* not async-signal-safe, but the alternative is a dead terminal */
    if (crash_child > 0)
        kill(-crash_child, SIGTERM);
    if (saved_stderr >= 0)
        dup2(saved_stderr, 2);
    static const char msg[] = "grader: the dashboard crashed; the terminal is restored. "
                              "grader test still works.\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* What an in-process action printed on stderr (under curses it would scramble the screen):
 * it goes to a file, and from there into the pane. */
static void take_stderr(struct dash *d)
{
    if (stderr_file < 0)
        return;
    off_t end = lseek(stderr_file, 0, SEEK_END);
    if (end <= 0)
        return;
    char *text = calloc(1, (size_t)end + 1);
    if (text && pread(stderr_file, text, (size_t)end, 0) == end) {
        pane_text(&d->panes[d->sel], P_FAIL, text);
        set_status(d, P_FAIL, "%.*s", (int)strcspn(text, "\n"), text);
    }
    free(text);
    if (ftruncate(stderr_file, 0) != 0) {
    }
}

static void reload(struct dash *d)
{
    struct progress p;
    progress_open(&p, d->c, 0);
    roadmap_rows(d->c, &p, d->rows);
    if (p.note[0])
        set_status(d, P_FAIL, "%s", p.note);
    progress_close(&p);
    take_stderr(d);
}

/* ---- Actions ----------------------------------------------------------------------------- */

static int busy(struct dash *d)
{
    if (d->run_ch < 0)
        return 0;
    set_status(d, P_NOTE, "%s is running: Esc stops it.", d->c->chapters[d->run_ch].id);
    return 1;
}

static void start_run(struct dash *d, int i, int bench)
{
    const struct chapter *ch = &d->c->chapters[i];
    if (!ch->available) {
        set_status(d, P_NOTE, "%s is coming: it is not part of the course yet.", ch->id);
        return;
    }
    if (busy(d))
        return;
    char *test[] = {"test", (char *)ch->id, "--json", NULL};
    char *quick[] = {"bench", (char *)ch->id, "--quick", NULL};
    struct pane *p = &d->panes[i];
    pane_clear(p);
    p->follow = 1;
    p->kept = 1;
    if (child_start(&d->run, bench ? quick : test, 1) != 0) {
        set_status(d, P_FAIL, "cannot start the run: %s", strerror(errno));
        return;
    }
    fcntl(d->run.out_fd, F_SETFL, O_NONBLOCK);
    crash_child = d->run.pid;
    d->run_ch = i;
    d->run_json = !bench;
    d->done = d->total = d->got_summary = d->run_passed = d->run_failed = 0;
    d->buflen = 0;
    snprintf(d->phase, sizeof d->phase, "starting");
    if (bench)
        pane_add(p, P_HEAD, "%s %s: quick benchmark (grader bench %s runs every size)", ch->id,
                 ch->title, ch->id);
    set_status(d, P_NOTE, "%s %s...", bench ? "benchmarking" : "testing", ch->id);
    if (pane_height(d) < 10)
        d->zoom = 1; /* a small terminal: the results get the whole screen (Tab: back) */
}

static void stop_run(struct dash *d)
{
    if (d->run_ch < 0)
        return;
    d->stopping = 1;
    draw(d);
    int status = child_stop(&d->run, 20);
    crash_child = 0;
    run_finished(d, status);
    reload(d);
}

static void show_hint(struct dash *d)
{
    const struct chapter *ch = &d->c->chapters[d->sel];
    if (!ch->available || ch->nhints == 0) {
        set_status(d, P_NOTE, "%s has no hints.", ch->id);
        return;
    }
    struct progress p;
    progress_open(&p, d->c, 1);
    int taken = progress_take_hint(&p, ch);
    int used = pg_int(progress_chapter(&p, ch->id, 1), "hints_used");
    if (taken >= 0)
        progress_save(&p);
    progress_close(&p);
    struct pane *pane = &d->panes[d->sel];
    pane_clear(pane);
    pane->kept = 1;
    pane_add(pane, P_HEAD, "%s %s: hints", ch->id, ch->title);
    for (int i = 0; i < used && i < ch->nhints; i++) {
        pane_add(pane, i == taken ? P_NOTE : P_TEXT, "%s Hint %d of %d:", i == taken ? ">" : " ",
                 i + 1, ch->nhints);
        pane_add(pane, i == taken ? P_NOTE : P_TEXT, "     %s", ch->hints[i]);
    }
    set_status(d, P_NOTE,
               taken < 0 ? "%s: every hint is shown; the page (r) has the tasks step "
                           "by step."
                         : "%s: hint %d of %d.",
               ch->id, taken + 1, ch->nhints);
    reload(d);
}

static void read_page(struct dash *d)
{
    const struct chapter *ch = &d->c->chapters[d->sel];
    if (!ch->available) {
        set_status(d, P_NOTE, "%s has no page yet.", ch->id);
        return;
    }
    char *text = book_text(d->c, ch);
    if (!text) {
        set_status(d, P_FAIL, "%s's page %s is missing.", ch->id, ch->book);
        return;
    }
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGINT, &ign, &old); /* Ctrl-C in the pager is the pager's */
    def_prog_mode();
    endwin();
    page_text(text);
    reset_prog_mode();
    sigaction(SIGINT, &old, NULL);
    clearok(stdscr, TRUE);
    free(text);
    mark_read(d->c, ch);
    reload(d);
    set_status(d, P_TEXT, "%s: page read.", ch->id);
}

static void do_reset(struct dash *d)
{
    const struct chapter *ch = &d->c->chapters[d->sel];
    char backup[PATH_MAX];
    d->confirm_reset = 0;
    int rc = reset_chapter(d->c, ch, backup);
    reload(d);
    if (rc == 1)
        set_status(d, P_NOTE, "%s is the stub already: nothing to reset.", ch->id);
    else if (rc == 0)
        set_status(d, P_NOTE, "%s is the stub again; your files are in %s/", ch->id,
                   backup + strlen(d->c->root) + 1);
    chapter_overview(d, d->sel);
}

static void toggle_watch(struct dash *d)
{
    if (d->watch_ch >= 0) {
        if (d->wd >= 0)
            inotify_rm_watch(d->notify, d->wd);
        d->wd = -1;
        set_status(d, P_TEXT, "stopped watching %s", d->c->chapters[d->watch_ch].id);
        d->watch_ch = -1;
        return;
    }
    const struct chapter *ch = &d->c->chapters[d->sel];
    if (!ch->available) {
        set_status(d, P_NOTE, "%s is coming: nothing to watch yet.", ch->id);
        return;
    }
    d->wd = chapter_files_watch(d->notify, d->c, ch);
    d->watch_ch = d->sel;
    d->watch_sig = chapter_files_signature(d->c, ch);
    d->watch_due = 0;
    set_status(d, P_NOTE, "watching %s: save a file and its tests run (w stops)", ch->id);
}

/* A save seen (or the 2-second check found one): run when nothing else runs. */
static void watch_tick(struct dash *d, int notified, int *tick)
{
    if (d->watch_ch < 0)
        return;
    const struct chapter *ch = &d->c->chapters[d->watch_ch];
    if (notified)
        d->watch_due = now_s() + 0.3; /* an editor's save may come in several writes */
    int check = (d->watch_due > 0 && now_s() >= d->watch_due) || ++*tick % 10 == 0;
    if (!check || d->run_ch >= 0)
        return;
    uint64_t sig = chapter_files_signature(d->c, ch);
    d->watch_due = 0;
    if (sig == d->watch_sig)
        return;
    d->watch_sig = sig;
    d->sel = d->watch_ch;
    start_run(d, d->watch_ch, 0);
}

/* ---- Keys and the loop ------------------------------------------------------------------- */

static void select_row(struct dash *d, int i)
{
    if (i < 0 || i >= d->c->n)
        return;
    d->sel = i;
    d->confirm_reset = 0;
    if (!d->panes[i].kept)
        chapter_overview(d, i);
}

/* Returns 0 to quit. */
static int key(struct dash *d, int k)
{
    if (d->confirm_reset) {
        if (k == 'y' || k == 'Y')
            do_reset(d);
        else
            d->confirm_reset = 0, set_status(d, P_TEXT, "Nothing was changed.");
        return 1;
    }
    switch (k) {
    case 'q':
    case 'Q': return 0;
    case KEY_UP:
    case 'k': select_row(d, d->sel - 1); break;
    case KEY_DOWN:
    case 'j': select_row(d, d->sel + 1); break;
    case KEY_HOME: select_row(d, 0); break;
    case KEY_END: select_row(d, d->c->n - 1); break;
    case KEY_NPAGE:
    case ' ': pane_scroll(d, pane_height(d) - 1); break;
    case KEY_PPAGE: pane_scroll(d, -(pane_height(d) - 1)); break;
    case '\n':
    case '\r':
    case KEY_ENTER: start_run(d, d->sel, 0); break;
    case 'b':
    case 'B': start_run(d, d->sel, 1); break;
    case 'h':
    case 'H': show_hint(d); break;
    case 'r': read_page(d); break;
    case 'w':
    case 'W': toggle_watch(d); break;
    case '\t': d->zoom = !d->zoom; break;
    case 27: /* Esc */
        if (d->run_ch >= 0)
            stop_run(d);
        else
            d->zoom = 0;
        break;
    case 'x':
    case 'X':
        if (!busy(d) && d->c->chapters[d->sel].available) {
            d->confirm_reset = 1;
            set_status(d, P_NOTE,
                       "Reset %s to the stub? y: yes (your files are backed up "
                       "first), any other key: no",
                       d->c->chapters[d->sel].id);
        }
        break;
    case 12:
    case 'R': clearok(stdscr, TRUE); break; /* Ctrl-L: redraw */
    default: break;
    }
    return 1;
}

static void loop(struct dash *d)
{
    int tick = 0;
    while (!quit_signal) {
        draw(d);
        struct pollfd pf[3] = {{.fd = 0, .events = POLLIN},
                               {.fd = d->run_ch >= 0 ? d->run.out_fd : -1, .events = POLLIN},
                               {.fd = d->notify, .events = POLLIN}};
        poll(pf, 3, 200); /* a signal (SIGWINCH, Ctrl-C) ends it early */
        if (d->run_ch >= 0) {
            int status;
            run_output(d);
            if (child_poll(&d->run, &status)) {
                crash_child = 0;
                run_finished(d, status);
                reload(d);
            }
        }
        int notified = 0;
        if (pf[2].revents & POLLIN) {
            char buf[4096];
            while (read(d->notify, buf, sizeof buf) > 0)
                notified = 1;
        }
        watch_tick(d, notified, &tick);
        for (int k; (k = getch()) != ERR;)
            if (!key(d, k))
                return;
    }
}

static void start_curses(struct dash *d)
{
    setlocale(LC_ALL, "");
    d->utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    initscr();
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    const char *no_color = getenv("NO_COLOR");
    d->color = has_colors() && !(no_color && *no_color);
    if (d->color) {
        start_color();
        use_default_colors();
        init_pair(1, COLOR_GREEN, -1);
        init_pair(2, COLOR_RED, -1);
        init_pair(3, COLOR_YELLOW, -1);
        init_pair(4, COLOR_CYAN, -1);
        init_pair(5, COLOR_WHITE, COLOR_BLUE);
    }
}

int cmd_dashboard(const struct course *c, int argc, char **argv)
{
    (void)argc, (void)argv;
    static struct dash d; /* big: the output buffer and the panes */
    d.c = c;
    d.run_ch = d.watch_ch = -1;
    d.wd = -1;
    d.notify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    const struct chapter *cur = current_chapter(c);
    d.sel = cur ? course_index(c, cur) : 0;
    /* stderr to a file while curses owns the screen */
    char path[] = "/tmp/tshmem-dash-XXXXXX";
    stderr_file = mkostemp(path, O_CLOEXEC);
    if (stderr_file >= 0) {
        unlink(path);
        fflush(stderr);
        saved_stderr = dup(2);
        dup2(stderr_file, 2);
    }
    struct sigaction quit = {.sa_handler = on_quit}, crash = {.sa_handler = on_crash};
    sigemptyset(&quit.sa_mask);
    sigemptyset(&crash.sa_mask);
    int quits[] = {SIGINT, SIGTERM, SIGHUP}, crashes[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (int i = 0; i < 3; i++)
        sigaction(quits[i], &quit, NULL);
    for (int i = 0; i < 5; i++)
        sigaction(crashes[i], &crash, NULL);
    start_curses(&d);
    reload(&d);
    chapter_overview(&d, d.sel);
    loop(&d);
    if (d.run_ch >= 0) {
        set_status(&d, P_NOTE, "stopping the run...");
        stop_run(&d);
    }
    endwin();
    if (saved_stderr >= 0) {
        dup2(saved_stderr, 2);
        close(saved_stderr);
    }
    if (d.notify >= 0)
        close(d.notify);
    for (int i = 0; i < c->n; i++) {
        pane_clear(&d.panes[i]);
        free(d.panes[i].lines);
    }
    return quit_signal ? 128 + quit_signal : 0;
}
