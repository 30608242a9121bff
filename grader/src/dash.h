/* dash.h: the dashboard (ncurses): its state, which dash.c (the keys and the loop), dash_draw.c
 * (the screen) and dash_run.c (a run's output) share: the roadmap table, a results pane per
 * chapter, runs in child processes. */
#ifndef GRADER_DASH_H
#define GRADER_DASH_H

#include <stdint.h>

#include "child.h"
#include "roadmap.h"

enum pane_style { P_TEXT, P_HEAD, P_PASS, P_FAIL, P_DIM, P_NOTE };

struct pane_line {
    enum pane_style style;
    char *text;
};

/* What the pane shows: the output of a run (per chapter, kept for the session), or a text. */
struct pane {
    int n, cap;
    struct pane_line *lines;
    int scroll; /* first line shown */
    int follow; /* keep the last line in view as lines arrive */
    int kept;   /* it shows a run's output or hints (else the chapter's overview) */
};

struct dash {
    const struct course *c;
    struct roadmap_row rows[MAX_CHAPTERS];
    int sel;                         /* selected chapter */
    int table_top, table_rows;       /* the chapters the table shows: first, how many */
    struct pane panes[MAX_CHAPTERS]; /* the last output shown for each chapter */
    int zoom;                        /* the pane takes the whole screen */
    int utf8, color;

    /* a test run or a benchmark, in a child process */
    struct child run;
    int run_ch;   /* chapter index, -1 when nothing runs */
    int run_json; /* 1: grader test --json, 0: text (bench) */
    int stopping;
    char phase[32];
    int done, total, run_passed, run_failed, got_summary;
    int mark; /* the pane's first line of the running chapter's tests (redrawn at its end) */
    char buf[1 << 16];
    size_t buflen;

    /* watch: the selected chapter's files are watched while on */
    int watch_ch; /* -1: off */
    int notify, wd;
    uint64_t watch_sig;
    double watch_due; /* a save was seen: run at this time */

    int confirm_reset; /* waiting for y/n */
    char status[320];
    int status_style;
};

#endif
