/* outline.c: a chapter's results in teaching order, with the tests stopped by the same
 * unwritten function grouped under its message (see outline.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outline.h"
#include "util.h"

/* ch: the chapter whose "points" give the order (qsort_r, glibc's, passes it). */
static int by_rank(const void *a, const void *b, void *ch)
{
    const struct result *x = a, *y = b;
    int rx = chapter_test_rank(ch, x->test), ry = chapter_test_rank(ch, y->test);
    return rx != ry ? (rx > ry) - (rx < ry) : strcmp(x->test, y->test);
}

void outline_sort(const struct chapter *ch, struct result *r, int n)
{
    qsort_r(r, (size_t)n, sizeof *r, by_rank, (void *)ch);
}

/* The line at p without its leading blanks, its length in *len. */
static const char *trimmed(const char *p, size_t *len)
{
    p += strspn(p, " \t");
    *len = strcspn(p, "\n");
    return p;
}

int outline_todo(const char *msg, char *buf, size_t len)
{
    const char *hit = msg ? strstr(msg, " is not written yet (chapter ") : NULL;
    if (!hit || len == 0)
        return 0;
    const char *line = hit;
    while (line > msg && line[-1] != '\n')
        line--;
    /* "tshmem: PE 3: f() is not ...": the function's words start after the last ": " before it */
    const char *start = line;
    for (const char *p = line; p < hit; p++)
        if (p[0] == ':' && p[1] == ' ')
            start = p + 2;
    size_t n;
    const char *t = trimmed(start, &n);
    buf[0] = '\0';
    int full = appendf(buf, len, "%.*s", (int)n, t) != 0;
    for (const char *p = t + n; *p == '\n' && !full;) {
        t = trimmed(p + 1, &n);
        if (strncmp(t, "task:", 5) && strncmp(t, "where:", 6) && strncmp(t, "read:", 5))
            break;
        full = appendf(buf, len, "\n  %.*s", (int)n, t) != 0;
        p = t + n;
    }
    return 1;
}

static void emitf(outline_fn emit, void *ctx, enum outline_style s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void emitf(outline_fn emit, void *ctx, enum outline_style s, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) >= 0) {
        emit(ctx, s, text);
        free(text);
    }
    va_end(ap);
}

static void test_line(const struct chapter *ch, const struct result *t, outline_fn emit, void *ctx)
{
    int pts = chapter_points(ch, t->test);
    char worth[32];
    snprintf(worth, sizeof worth, "%d/%d pt%s", t->passed ? pts : 0, pts, pts == 1 ? "" : "s");
    emitf(emit, ctx, t->passed ? OL_PASS : OL_FAIL, "  %s  %-40s %-9s %5.1f s",
          t->passed ? "PASS" : "FAIL", t->test, worth, t->seconds);
}

/* Each line of text, indented. */
static void text_lines(const char *text, const char *indent, enum outline_style s, outline_fn emit,
                       void *ctx)
{
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        if (len)
            emitf(emit, ctx, s, "%s%.*s", indent, (int)len, p);
        p += len + (p[len] == '\n');
    }
}

int outline_results(const struct chapter *ch, const struct result *r, int n, int verbose,
                    outline_fn emit, void *ctx)
{
    return outline_results_seen(ch, r, n, verbose, emit, ctx, NULL);
}

static int seen_before(struct outline_seen *seen, const char *todo)
{
    for (int k = 0; seen && k < seen->n; k++)
        if (!strcmp(seen->todo[k], todo))
            return 1;
    if (seen && seen->n < OUTLINE_SEEN_MAX)
        snprintf(seen->todo[seen->n++], sizeof seen->todo[0], "%.1023s", todo);
    return 0;
}

/* The text after "label" on its line of a message, without leading blanks. */
static int field(const char *text, const char *label, char *buf, size_t len)
{
    const char *p = strstr(text, label);
    if (!p)
        return 0;
    p += strlen(label);
    p += strspn(p, " ");
    snprintf(buf, len, "%.*s", (int)strcspn(p, "\n"), p);
    return buf[0] != '\0';
}

int outline_next(const struct outline_seen *seen, char *buf, size_t len)
{
    char where[512], read[512];
    if (!seen || seen->n == 0 || !field(seen->todo[0], "where:", where, sizeof where))
        return 0;
    if (field(seen->todo[0], "read:", read, sizeof read))
        snprintf(buf, len, "%s, %s", where, read);
    else
        snprintf(buf, len, "%s", where);
    return 1;
}

int outline_results_seen(const struct chapter *ch, const struct result *r, int n, int verbose,
                         outline_fn emit, void *ctx, struct outline_seen *seen)
{
    char todo[MAX_TESTS][1024], own[48];
    int has[MAX_TESTS], shown[MAX_TESTS] = {0}, left_out = 0, first = 1;
    snprintf(own, sizeof own, "(chapter %s).", ch->id);
    if (n > MAX_TESTS)
        n = MAX_TESTS;
    for (int i = 0; i < n; i++)
        has[i] = !verbose && !r[i].passed && outline_todo(r[i].message, todo[i], sizeof todo[i]);
    for (int i = 0; i < n; i++) {
        if (shown[i])
            continue;
        if (!has[i]) {
            test_line(ch, &r[i], emit, ctx);
            if (!r[i].passed && r[i].message)
                text_lines(r[i].message, "        ", OL_TEXT, emit, ctx);
            first &= r[i].passed;
            continue;
        }
        int count = 0;
        for (int j = i; j < n; j++)
            count += has[j] && !strcmp(todo[j], todo[i]);
        /* the message once; the first of this chapter's own is where to start */
        size_t head = strcspn(todo[i], "\n");
        int start = first && strstr(todo[i], own) && strstr(todo[i], own) < todo[i] + head;
        first = 0;
        if (seen_before(seen, todo[i])) { /* a chapter above showed it whole */
            size_t h = head && todo[i][head - 1] == '.' ? head - 1 : head;
            emitf(emit, ctx, OL_NOTE, "  %.*s: its task is shown above.", (int)h, todo[i]);
        } else {
            emitf(emit, ctx, OL_NOTE, "  %s%.*s", start ? "Start here: " : "", (int)head, todo[i]);
            text_lines(todo[i] + head, "  ", OL_TEXT, emit, ctx);
        }
        emitf(emit, ctx, OL_TEXT, "    It stopped %s:", count == 1 ? "this test" : "these tests");
        for (int j = i; j < n; j++)
            if (has[j] && !strcmp(todo[j], todo[i])) {
                test_line(ch, &r[j], emit, ctx);
                shown[j] = 1;
            }
        left_out = 1;
    }
    return left_out;
}
