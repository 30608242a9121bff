/* card_group.c: `grader card --merge A.json B.json ...`: several members' cards (each made with
 * `grader card --json`) side by side in one group card: a line per member with an emoji per
 * chapter, then who is where in every chapter somebody has started and not everybody has finished.
 * For chat by default (one message of at most CHAT_LIMIT characters), or a Markdown table. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "card.h"
#include "card_group.h"
#include "util.h"

#define MAX_MEMBERS 32

struct member {
    char name[64];
    json_t *card;
};

static const char *s_of(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* The member's chapter id, or NULL: a chapter their copy of the course does not have yet. */
static json_t *m_chapter(const struct member *m, const char *id)
{
    json_t *chs = json_object_get(m->card, "chapters"), *ch;
    size_t i;
    json_array_foreach(chs, i, ch) if (!strcmp(s_of(ch, "id"), id)) return ch;
    return NULL;
}

static enum chapter_status m_status(const struct member *m, const char *id)
{
    const char *w = s_of(m_chapter(m, id), "status");
    return !strcmp(w, "done") ? ST_DONE : !strcmp(w, "in progress") ? ST_PROGRESS : ST_TODO;
}

static int load_members(int nfiles, char **files, struct member *ms)
{
    if (nfiles == 0) {
        fprintf(stderr, "grader card --merge: name the members' cards, e.g. grader card --merge "
                        "alice.json bob.json (each made with grader card --json > NAME.json).\n");
        return -1;
    }
    if (nfiles > MAX_MEMBERS) {
        fprintf(stderr,
                "grader card --merge: %d cards is more than one card can show (%d at "
                "most): merge them in smaller groups.\n",
                nfiles, MAX_MEMBERS);
        return -1;
    }
    for (int i = 0; i < nfiles; i++) {
        json_error_t err;
        json_t *o = json_load_file(files[i], 0, &err);
        if (!o || !json_is_array(json_object_get(o, "chapters"))) {
            fprintf(stderr,
                    "grader card --merge: %s is not a progress card (%s): make each with "
                    "grader card --json > NAME.json.\n",
                    files[i], o ? "it has no \"chapters\" list" : err.text);
            json_decref(o);
            while (i-- > 0)
                json_decref(ms[i].card);
            return -1;
        }
        ms[i].card = o;
        const char *name = s_of(o, "name"), *base = strrchr(files[i], '/');
        if (*name)
            snprintf(ms[i].name, sizeof ms[i].name, "%s", name);
        else /* a card without a name: its file's name, less .json */
            snprintf(ms[i].name, sizeof ms[i].name, "%.*s",
                     (int)strcspn(base ? base + 1 : files[i], "."), base ? base + 1 : files[i]);
    }
    return nfiles;
}

/* How a member stands in a chapter, short: "✅", "🚧 5/8", "⬜", with the best ratio. */
static void m_cell(const struct member *m, const char *id, char *buf, size_t len)
{
    json_t *ch = m_chapter(m, id);
    enum chapter_status st = m_status(m, id);
    snprintf(buf, len, "%s", status_emoji(st));
    if (st == ST_PROGRESS && json_integer_value(json_object_get(ch, "total")) > 0)
        appendf(buf, len, " %d/%d", (int)json_integer_value(json_object_get(ch, "passed")),
                (int)json_integer_value(json_object_get(ch, "total")));
    double mpi = json_number_value(json_object_get(ch, "vs_mpi"));
    if (mpi > 0)
        appendf(buf, len, " ⚡%.2fx MPI", mpi);
}

static void group_markdown(FILE *out, const struct course *c, struct member *ms, int n, int week)
{
    fprintf(out, "|    | chapter |");
    for (int j = 0; j < n; j++)
        fprintf(out, " %s |", ms[j].name);
    fprintf(out, "\n|----|---------|");
    for (int j = 0; j < n; j++)
        fprintf(out, "----|");
    fprintf(out, "\n");
    for (int i = 0; i < c->n; i++) {
        if (week && c->chapters[i].week != week)
            continue;
        fprintf(out, "| %s | %s |", c->chapters[i].id, c->chapters[i].title);
        for (int j = 0; j < n; j++) {
            char cell[64];
            m_cell(&ms[j], c->chapters[i].id, cell, sizeof cell);
            fprintf(out, " %s |", cell);
        }
        fprintf(out, "\n");
    }
    fprintf(out, "| | **points** |");
    for (int j = 0; j < n; j++) {
        json_t *t = json_object_get(ms[j].card, "totals");
        fprintf(out, " %d/%d |", (int)json_integer_value(json_object_get(t, "points")),
                (int)json_integer_value(json_object_get(t, "max_points")));
    }
    fprintf(out, "\n");
}

/* Days between a card's date ("2026-11-20", the start of its "updated" time) and today; -1
 * when the card has none. */
static int days_old(const struct member *m, time_t now)
{
    const char *d = s_of(m->card, "updated");
    if (!*d)
        d = s_of(m->card, "date");
    struct tm then = {0}, today;
    if (!*d || !strptime(d, "%Y-%m-%d", &then))
        return -1;
    localtime_r(&now, &today);
    then.tm_hour = today.tm_hour = 12; /* whole days, whatever the clock says */
    then.tm_min = today.tm_min = then.tm_sec = today.tm_sec = 0;
    then.tm_isdst = today.tm_isdst = -1;
    double s = difftime(mktime(&today), mktime(&then));
    return s < 0 ? 0 : (int)(s / 86400 + 0.5);
}

/* " · updated 2026-11-20", and how old when it is two days or more: a stale card shows. */
static void m_updated(FILE *out, const struct member *m, time_t now)
{
    const char *d = s_of(m->card, "updated");
    if (!*d)
        d = s_of(m->card, "date");
    if (!*d)
        return;
    int age = days_old(m, now);
    fprintf(out, " · updated %.10s", d);
    if (age >= 2)
        fprintf(out, " ⚠️ %d days ago", age);
}

static int in_week(const struct course *c, int i, int week)
{
    return !week || c->chapters[i].week == week;
}

/* The chat form, into a string: members, then chapters under way (as many as fit). */
static char *group_chat(const struct course *c, struct member *ms, int n, int max_rows, int week,
                        int compact)
{
    char *text = NULL, date[32];
    size_t len;
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%d", &tm);
    FILE *out = open_memstream(&text, &len);
    char which[32] = "";
    if (week)
        snprintf(which, sizeof which, ", week %d", week);
    fprintf(out, "**%s** · group card%s · %d member%s · %s\n", c->title, which, n,
            n == 1 ? "" : "s", date);
    for (int j = 0; j < n; j++) {
        json_t *t = json_object_get(ms[j].card, "totals");
        fprintf(out, "- **%s** ", ms[j].name);
        for (int i = 0, first = 1; i < c->n && !compact; i++) { /* compact: no emoji strip */
            if (!in_week(c, i, week))
                continue;
            fprintf(out, "%s%s", !first && c->chapters[i].week != c->chapters[i - 1].week ? " " : "",
                    status_emoji(m_status(&ms[j], c->chapters[i].id)));
            first = 0;
        }
        fprintf(out, "%s%d/%d done · %d pts", compact ? "" : " · ",
                (int)json_integer_value(json_object_get(t, "done")),
                (int)json_integer_value(json_object_get(t, "available")),
                (int)json_integer_value(json_object_get(t, "points")));
        m_updated(out, &ms[j], now);
        fprintf(out, "\n");
    }
    char all_done[256] = "";
    int rows = 0, left = 0, weeks[16] = {0}, nweeks = 0;
    for (int i = 0; i < c->n; i++) {
        const char *id = c->chapters[i].id;
        if (!in_week(c, i, week))
            continue;
        int done = 0, started = 0;
        for (int j = 0; j < n; j++) {
            done += m_status(&ms[j], id) == ST_DONE;
            started += m_status(&ms[j], id) != ST_TODO;
        }
        if (done == n) {
            appendf(all_done, sizeof all_done, "%s%s", all_done[0] ? ", " : "", id);
            continue;
        }
        if (!started)
            continue;
        if (rows == max_rows) {
            left++;
            if (nweeks < 16 && (!nweeks || weeks[nweeks - 1] != c->chapters[i].week))
                weeks[nweeks++] = c->chapters[i].week;
            continue;
        }
        if (rows++ == 0)
            fprintf(out, "**Who is where**\n");
        fprintf(out, "- **%s** %s:", id, c->chapters[i].title);
        for (int j = 0, k = 0; j < n; j++) {
            char cell[64];
            if (m_status(&ms[j], id) == ST_TODO)
                continue;
            m_cell(&ms[j], id, cell, sizeof cell);
            fprintf(out, "%s %s %s", k++ ? " ·" : "", cell, ms[j].name);
        }
        fprintf(out, "\n");
    }
    if (left && !week && nweeks == 1) /* a card of one week has room: a message of its own */
        fprintf(out, "- … and %d more chapter%s: `grader card --week %d --merge` with the same "
                     "cards shows them\n",
                left, left == 1 ? "" : "s", weeks[0]);
    else if (left && !week) {
        fprintf(out, "- … and %d more chapters: `grader card --week N --merge` with the same "
                     "cards shows week N's (N = ",
                left);
        for (int k = 0; k < nweeks; k++)
            fprintf(out, "%s%d", k == 0 ? "" : k == nweeks - 1 ? " or " : ", ", weeks[k]);
        fprintf(out, ")\n");
    } else if (left)
        fprintf(out, "- … and %d more chapter%s: merge fewer cards at a time to see them\n", left,
                left == 1 ? "" : "s");
    if (all_done[0])
        fprintf(out, "🏁 **Everyone done:** %s\n", all_done);
    fclose(out);
    return text;
}

int card_merge(const struct course *c, int nfiles, char **files, int markdown, int week)
{
    struct member ms[MAX_MEMBERS];
    int n = load_members(nfiles, files, ms);
    if (n < 0)
        return 2;
    if (markdown) {
        group_markdown(stdout, c, ms, n, week);
    } else {
        /* as many chapters under way as fit in one message */
        char *text = group_chat(c, ms, n, c->n, week, 0);
        for (int compact = 0; compact < 2 && chat_length(text) > CHAT_LIMIT; compact++)
            for (int rows = c->n; rows >= 0 && chat_length(text) > CHAT_LIMIT; rows--) {
                free(text); /* fewer chapters under way, then members without their emoji */
                text = group_chat(c, ms, n, rows, week, compact);
            }
        fputs(text, stdout);
        free(text);
    }
    for (int j = 0; j < n; j++)
        json_decref(ms[j].card);
    return 0;
}
