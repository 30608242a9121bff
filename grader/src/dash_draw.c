/* dash_draw.c: drawing the dashboard: title bar, roadmap table, results pane (wrapped and
 * scrollable), status line and keys; any size from 40x12 up, with or without colour. */
#define _GNU_SOURCE
#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dash_draw.h"
#include "util.h"

enum { C_GOOD = 1, C_BAD, C_BUSY, C_HEAD, C_BAR, C_DIM };

static int style_attr(const struct dash *d, enum pane_style s)
{
    if (!d->color)
        return s == P_HEAD ? A_BOLD : s == P_FAIL ? A_BOLD : s == P_DIM ? A_DIM : A_NORMAL;
    switch (s) {
    case P_HEAD: return A_BOLD | COLOR_PAIR(C_HEAD);
    case P_PASS: return COLOR_PAIR(C_GOOD);
    case P_FAIL: return A_BOLD | COLOR_PAIR(C_BAD);
    case P_DIM: return A_DIM;
    case P_NOTE: return COLOR_PAIR(C_BUSY);
    default: return A_NORMAL;
    }
}

/* Bytes of s that fill at most `cols` columns (one column per character: the course's texts
 * are ASCII but for a few symbols). */
static size_t fit(const char *s, int cols)
{
    size_t i = 0;
    for (int c = 0; s[i] && c < cols; c++) {
        i++;
        while (((unsigned char)s[i] & 0xc0) == 0x80) /* UTF-8 continuation bytes */
            i++;
    }
    return i;
}

static int columns(const char *s)
{
    int c = 0;
    for (; *s; s++)
        c += ((unsigned char)*s & 0xc0) != 0x80;
    return c;
}

static void put(int y, int x, int cols, const char *s)
{
    if (cols > 0)
        mvaddnstr(y, x, s, (int)fit(s, cols));
}

/* A line across the screen in attr: text, then spaces to the end. */
static void bar(int y, int attr, const char *left, const char *right)
{
    attron(attr);
    mvhline(y, 0, ' ', COLS);
    put(y, 0, COLS, left);
    int rw = columns(right);
    if (rw + columns(left) < COLS)
        put(y, COLS - rw, rw, right);
    attroff(attr);
}

/* ---- The pane ---------------------------------------------------------------------------- */

void pane_text(struct pane *p, enum pane_style style, const char *text)
{
    for (const char *l = text; *l;) {
        size_t len = strcspn(l, "\n");
        pane_add(p, style, "%.*s", (int)len, l);
        l += len + (l[len] == '\n');
    }
}

void pane_add(struct pane *p, enum pane_style style, const char *fmt, ...)
{
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 64;
        struct pane_line *more = realloc(p->lines, sizeof *more * (size_t)cap);
        if (!more)
            return;
        p->lines = more, p->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL;
    va_end(ap);
    if (!text)
        return;
    for (char *t = text; *t; t++) /* a tab or a control byte would break the layout */
        if ((unsigned char)*t < 0x20)
            *t = ' ';
    p->lines[p->n++] = (struct pane_line){style, text};
}

void pane_clear(struct pane *p)
{
    for (int i = 0; i < p->n; i++)
        free(p->lines[i].text);
    p->n = 0;
    p->scroll = 0;
    p->follow = 0;
}

/* A pane line is shown in segments of the screen's width; a continued one is indented. */
static int indent_of(const char *s)
{
    int n = (int)strspn(s, " ");
    return (n > 12 ? 12 : n) + 2;
}

/* The bytes of s that go on one screen line of `width` columns: broken after a space when the
 * line is too long and a space comes late enough, else at the width. */
static size_t cut(const char *s, int width)
{
    size_t len = fit(s, width);
    if (!s[len] || s[len] == ' ')
        return len;
    for (size_t i = len; i > len / 2; i--)
        if (s[i - 1] == ' ')
            return i;
    return len;
}

static int segments(const char *s, int width)
{
    int ind = indent_of(s), n = 0, first = 1;
    do {
        s += cut(s, first ? width : width - ind);
        while (!first && *s == ' ')
            s++;
        n++, first = 0;
    } while (*s);
    return n;
}

static int total_rows(const struct pane *p, int width)
{
    int n = 0;
    for (int i = 0; i < p->n; i++)
        n += segments(p->lines[i].text, width);
    return n;
}

int pane_height(const struct dash *d)
{
    int table = d->zoom ? 0 : d->c->n + 1;
    int h = LINES - 4 - table; /* title, pane header, status, keys */
    if (!d->zoom && h < 5) /* the table scrolls; the pane keeps room for an overview */
        h = LINES >= 20 ? 8 : LINES - 4 - 1 - (LINES >= 14 ? 6 : 3);
    return h < 1 ? 1 : h;
}

void pane_scroll(struct dash *d, int by)
{
    struct pane *p = &d->panes[d->sel];
    int max = total_rows(p, COLS) - pane_height(d);
    p->scroll += by;
    if (p->scroll > max)
        p->scroll = max;
    if (p->scroll < 0)
        p->scroll = 0;
    p->follow = 0;
}

static void draw_pane(struct dash *d, int y0, int h)
{
    struct pane *p = &d->panes[d->sel];
    int rows = total_rows(p, COLS), max = rows - h > 0 ? rows - h : 0;
    if (p->follow || p->scroll > max)
        p->scroll = max;
    int row = 0, y = y0;
    for (int i = 0; i < p->n && y < y0 + h; i++) {
        const char *s = p->lines[i].text;
        int ind = indent_of(s), first = 1;
        attron(style_attr(d, p->lines[i].style));
        do {
            size_t len = cut(s, first ? COLS : COLS - ind);
            if (row >= p->scroll && y < y0 + h) {
                if (!first)
                    mvhline(y, 0, ' ', ind);
                mvaddnstr(y++, first ? 0 : ind, s, (int)len);
            }
            row++, s += len;
            while (!first && *s == ' ')
                s++;
            first = 0;
        } while (*s);
        attroff(style_attr(d, p->lines[i].style));
    }
}

/* ---- The table --------------------------------------------------------------------------- */

struct layout {
    int title, code, test, points, perf, doc; /* widths; 0: not shown */
};

static struct layout layout_for(int cols)
{
    struct layout l = {0, 7, 8, 7, 9, 4};
    if (cols < 78)
        l.perf = 0;
    if (cols < 68)
        l.doc = 0, l.points = 0;
    if (cols < 52)
        l.code = 0;
    l.title = cols - 9 - (l.code ? l.code + 1 : 0) - (l.test + 1) - (l.points ? l.points + 1 : 0) -
              (l.perf ? l.perf + 1 : 0) - (l.doc ? l.doc + 1 : 0);
    if (l.title < 8)
        l.title = 8;
    if (l.title > 36) /* a wide terminal: the columns stay near the titles */
        l.title = 36;
    return l;
}

static const char *glyph(const struct dash *d, const struct roadmap_row *r)
{
    if (!r->ch->available)
        return d->utf8 ? "·" : ".";
    if (r->status == ST_DONE)
        return d->utf8 ? "✓" : "+";
    return r->status == ST_PROGRESS ? (d->utf8 ? "◐" : "~") : (d->utf8 ? "○" : "o");
}

static void row_text(const struct roadmap_row *r, const struct layout *l, char *out, size_t len)
{
    char t[32], pts[32], perf[32], title[128];
    snprintf(title, sizeof title, "%s", r->ch->title);
    title[fit(title, l->title)] = '\0';
    if (!r->ch->available) {
        snprintf(out, len, "%-4s %-*s %s", r->ch->id, l->title, title, "coming");
        return;
    }
    snprintf(out, len, "%-4s %-*s", r->ch->id, l->title, title);
    if (l->code)
        appendf(out, len, " %-*s", l->code, code_word(r->code));
    appendf(out, len, " %-*s", l->test, row_test(r, t));
    int over = 0; /* columns the Points text takes beyond its own */
    if (l->points) {
        row_points(r, pts);
        if (!pts[0] && r->ch->requires[0]) /* no points: an optional chapter (GPUs) */
            snprintf(pts, sizeof pts, "optional");
        over = (int)strlen(pts) > l->points ? (int)strlen(pts) - l->points : 0;
        appendf(out, len, " %-*s", l->points, pts);
    }
    if (l->perf) {
        appendf(out, len, " %-*s", l->perf - over,
                r->has_bench || r->vs_mpi > 0 ? row_perf(r, perf) : "");
        over = 0;
    }
    if (l->doc)
        appendf(out, len, " %-*s", l->doc - over, r->read ? "read" : "");
}

static void draw_table(struct dash *d, int y0, int h)
{
    struct layout l = layout_for(COLS);
    char head[256];
    snprintf(head, sizeof head, "    %-4s %-*s", "id", l.title, "chapter");
    if (l.code)
        appendf(head, sizeof head, " %-*s", l.code, "Code");
    appendf(head, sizeof head, " %-*s", l.test, "Test");
    if (l.points)
        appendf(head, sizeof head, " %-*s", l.points, "Points");
    if (l.perf)
        appendf(head, sizeof head, " %-*s", l.perf, "Perf");
    if (l.doc)
        appendf(head, sizeof head, " %-*s", l.doc, "Doc");
    attron(A_BOLD | A_UNDERLINE);
    mvhline(y0, 0, ' ', COLS);
    put(y0, 0, COLS, head);
    attroff(A_BOLD | A_UNDERLINE);
    int rows = h - 1, top = 0;
    if (d->sel >= rows) /* keep the selection in view */
        top = d->sel - rows + 1;
    d->table_top = top;
    d->table_rows = rows < d->c->n ? rows : d->c->n;
    for (int i = top; i < d->c->n && i - top < rows; i++) {
        const struct roadmap_row *r = &d->rows[i];
        int y = y0 + 1 + i - top, sel = i == d->sel;
        char text[512];
        row_text(r, &l, text, sizeof text);
        int attr = !r->ch->available ? A_DIM : 0;
        if (d->color && r->ch->available)
            attr = COLOR_PAIR(r->status == ST_DONE       ? C_GOOD
                              : r->status == ST_PROGRESS ? C_BUSY
                                                         : 0);
        if (sel)
            attr = A_REVERSE | (d->color ? 0 : A_BOLD);
        attron(attr);
        mvhline(y, 0, ' ', COLS);
        put(y, 0, 1, sel ? (d->utf8 ? "▸" : ">") : " ");
        put(y, 2, 1, glyph(d, r));
        put(y, 4, COLS - 4, text);
        if (r->regressed && COLS > 60 && columns(text) + 6 < COLS)
            put(y, 4 + columns(text) + 1, 1, "!");
        attroff(attr);
    }
}

/* ---- Whole screen ------------------------------------------------------------------------ */

void set_status(struct dash *d, int style, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->status, sizeof d->status, fmt, ap);
    va_end(ap);
    d->status_style = style;
}

static void pane_header(struct dash *d, int y)
{
    const struct chapter *ch = &d->c->chapters[d->sel];
    char left[256], right[64] = "";
    if (d->run_ch == d->sel && d->total > 0) {
        char meter[64] = "";
        int fill = 20 * d->done / d->total;
        for (int i = 0; i < 20; i++)
            strcat(meter, i < fill ? (d->utf8 ? "█" : "#") : (d->utf8 ? "░" : "."));
        snprintf(left, sizeof left, " %s %s  %s %d/%d tests", d->stopping ? "stopping" : "running",
                 ch->id, meter, d->done, d->total);
    } else if (d->run_ch == d->sel) {
        snprintf(left, sizeof left, " %s %s: %s...", d->stopping ? "stopping" : "running", ch->id,
                 d->phase);
    } else {
        snprintf(left, sizeof left, " %s %s", ch->id, ch->title);
    }
    const struct pane *p = &d->panes[d->sel];
    int rows = total_rows(p, COLS), h = pane_height(d);
    if (rows > h) { /* where we are in it */
        int first = p->scroll > rows - h ? rows - h : p->scroll;
        if (p->follow)
            first = rows - h;
        snprintf(right, sizeof right, "lines %d-%d of %d, PgUp/PgDn ", first + 1, first + h, rows);
    }
    bar(y, d->color ? COLOR_PAIR(C_HEAD) | A_REVERSE : A_REVERSE, left, right);
}

void draw(struct dash *d)
{
    erase();
    if (LINES < 12 || COLS < 40) {
        mvprintw(0, 0, "The terminal is %dx%d:", COLS, LINES);
        mvprintw(1, 0, "make it at least 40x12.");
        mvprintw(2, 0, "q quits.");
        refresh();
        return;
    }
    struct roadmap_totals t = roadmap_sum(d->c, d->rows);
    char right[256], ids[128], left[160];
    int nopt = roadmap_optional(d->c, ids, sizeof ids, NULL, 0);
    snprintf(left, sizeof left, " %s", d->c->title);
    /* the chapters done leave out the optional ones: say so, as long as it fits */
    snprintf(right, sizeof right, "%d/%d done (%s optional)  %d/%d pts ", t.done, t.available, ids,
             t.points, t.max_points);
    if (nopt == 0 || columns(left) + columns(right) + 1 > COLS)
        snprintf(right, sizeof right, "%d/%d done (+%d optional)  %d/%d pts ", t.done,
                 t.available, nopt, t.points, t.max_points);
    if (nopt == 0 || columns(left) + columns(right) + 1 > COLS)
        snprintf(right, sizeof right, "%d/%d done  %d/%d pts ", t.done, t.available, t.points,
                 t.max_points);
    bar(0, d->color ? COLOR_PAIR(C_BAR) | A_BOLD : A_REVERSE | A_BOLD, left, right);
    int ph = pane_height(d), y = 1;
    if (!d->zoom) {
        int th = LINES - 4 - ph;
        draw_table(d, 1, th);
        y = 1 + th;
    }
    pane_header(d, y);
    draw_pane(d, y + 1, ph);
    int sattr =
        d->status_style == P_TEXT ? (int)A_NORMAL : style_attr(d, (enum pane_style)d->status_style);
    if (d->status[0]) {
        attron(sattr);
        put(LINES - 2, 1, COLS - 1, d->status);
        attroff(sattr);
    } else if (d->watch_ch >= 0) {
        attron(style_attr(d, P_NOTE));
        mvprintw(LINES - 2, 1, "watching %s: save a file and its tests run",
                 d->c->chapters[d->watch_ch].id);
        attroff(style_attr(d, P_NOTE));
    } else {
        char legend[160];
        snprintf(legend, sizeof legend, "%s",
                 d->utf8 ? "✓ done  ◐ in progress  ○ to do  · coming"
                         : "+ done  ~ in progress  o to do  . coming");
        if (!d->zoom && d->table_rows < d->c->n) /* the table scrolls: say what it hides */
            appendf(legend, sizeof legend, "   chapters %d-%d of %d%s", d->table_top + 1,
                    d->table_top + d->table_rows, d->c->n,
                    d->table_top + d->table_rows < d->c->n ? (d->utf8 ? " ↓" : " (more below)")
                                                           : (d->utf8 ? " ↑" : " (more above)"));
        put(LINES - 2, 1, COLS - 1, legend);
    }
    const char *keys = d->confirm_reset ? " y: reset (your files are backed up first)  n: keep them"
                       : COLS >= 96     ? " Up/Down select  Enter test  h hint  r read  x reset  "
                                          "b bench  w watch  Tab zoom  q quit"
                       : COLS >= 72     ? " Enter test  h hint  r read  x reset  b bench  w watch  "
                                          "Tab zoom  q quit"
                                    : " Enter test h hint r read x reset b bench w watch q quit";
    bar(LINES - 1, A_REVERSE, keys, "");
    refresh();
}
