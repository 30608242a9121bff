/* hint.c: the help a learner asks for: graduated hints (`grader hint`) and the chapter's page
 * of the book in the terminal (`grader read`). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "help.h"
#include "hint.h"
#include "progress.h"
#include "run.h"
#include "util.h"

static const char *const hint_names[] = {"a nudge", "more specific", "nearly the answer"};

static void print_hint(const struct chapter *ch, int i, int is_new)
{
    const char *kind = i < 3 ? hint_names[i] : "one more";
    printf("%s Hint %d of %d (%s):\n", is_new ? "->" : "  ", i + 1, ch->nhints, kind);
    /* fold the text at 76 columns, indented */
    const char *p = ch->hints[i];
    while (*p) {
        int len = (int)strlen(p), cut = len;
        if (len > 76) {
            for (cut = 76; cut > 0 && p[cut] != ' '; cut--) {
            }
            if (cut == 0)
                cut = 76;
        }
        printf("     %.*s\n", cut, p);
        p += cut;
        while (*p == ' ')
            p++;
    }
}

int cmd_hint(const struct course *c, int argc, char **argv)
{
    if (wants_help("hint", argc, argv))
        return 0;
    int list = 0;
    const char *id = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--list"))
            list = 1;
        else if (argv[i][0] != '-' && !id)
            id = argv[i];
        else
            return bad_argument("hint", argv[i]);
    }
    const struct chapter *ch = chapter_arg(c, "hint", id);
    if (!ch)
        return 2;
    if (ch->nhints == 0) {
        printf("Chapter %s has no hints yet. Its page has the tasks step by step: grader read "
               "%s.\n",
               ch->id, ch->id);
        return 0;
    }
    struct progress p;
    progress_open(&p, c, 1);
    int taken = list ? -1 : progress_take_hint(&p, ch);
    int used = pg_int(progress_chapter(&p, ch->id, 1), "hints_used");
    if (taken >= 0)
        progress_save(&p);
    progress_close(&p);
    if (used > ch->nhints)
        used = ch->nhints;
    printf("Chapter %s, %s\n", ch->id, ch->title);
    for (int i = 0; i < used; i++)
        print_hint(ch, i, i == taken);
    if (used == 0)
        printf("No hint taken yet: grader hint %s shows the first.\n", ch->id);
    else if (!list && taken < 0)
        printf("That was every hint of chapter %s. The page's tasks (grader read %s) and the "
               "failing test's message are the next places to look.\n",
               ch->id, ch->id);
    else if (used < ch->nhints)
        printf("%d more: grader hint %s shows the next.\n", ch->nhints - used, ch->id);
    return 0;
}

/* ---- The book in the terminal ------------------------------------------------------------ */

/* The width to fold the page to: COLUMNS, else the terminal's when the output is one, else 100. */
static int page_columns(void)
{
    const char *env = getenv("COLUMNS");
    char *end = NULL;
    long n = env && *env ? strtol(env, &end, 10) : 0;
    if (env && *env && end && !*end && n >= 20 && n <= 1000)
        return (int)n;
    struct winsize ws;
    if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return 100;
}

/* A page of the book (its path under the course) as text: pandoc's plain text folded to the
 * width above, else the Markdown itself; NULL when the page cannot be read. */
static char *page_file_text(const struct course *c, const char *page)
{
    char path[PATH_MAX], cols[16];
    if (path_format(path, "%s/%s", c->root, page) != 0 || access(path, R_OK) != 0)
        return NULL;
    snprintf(cols, sizeof cols, "%d", page_columns() - 3);
    /* grader/read-tables.lua turns a table too wide for the terminal into a list */
    char filter[PATH_MAX], *out = NULL;
    int has_filter = path_format(filter, "%s/grader/read-tables.lua", c->root) == 0 &&
                     access(filter, R_OK) == 0;
    char *argv[] = {"pandoc", "--from", "markdown", "--to", "plain", "--columns", cols,
                    has_filter ? "--lua-filter" : path, has_filter ? filter : NULL, path, NULL};
    if (run_quiet(c, argv, &out) == 0 && out && *out)
        return out;
    free(out);
    return read_file(path, NULL);
}

char *book_text(const struct course *c, const struct chapter *ch)
{
    return page_file_text(c, ch->book);
}

void mark_read(const struct course *c, const struct chapter *ch)
{
    struct progress p;
    progress_open(&p, c, 1);
    json_t *chp = progress_chapter(&p, ch->id, 1);
    if (!pg_bool(chp, "read")) {
        json_object_set_new(chp, "read", json_true());
        progress_save(&p);
    }
    progress_close(&p);
}

int page_text(const char *text)
{
    const char *pager = getenv("PAGER");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s", pager && *pager ? pager : "less -R");
    if (!(pager && *pager) && access("/usr/bin/less", X_OK) != 0)
        snprintf(cmd, sizeof cmd, "more");
    FILE *f = popen(cmd, "w");
    if (!f)
        return -1;
    void (*old)(int) = signal(SIGPIPE, SIG_IGN); /* q before the end closes the pipe early */
    fputs(text, f);
    int status = pclose(f);
    signal(SIGPIPE, old);
    return status == -1 ? -1 : 0;
}

/* The pages one can read, from book/pages.txt: each chapter's id and every other page's file
 * name without .md, comma-separated, into buf. Returns the page's path ("book/x.md") when name
 * is one of them, else NULL; the caller frees it. */
static char *find_page(const struct course *c, const char *name, char *buf, size_t size)
{
    char path[PATH_MAX];
    char *list = path_format(path, "%s/book/pages.txt", c->root) == 0 ? read_file(path, NULL) : NULL;
    char *found = NULL;
    size_t used = 0;
    buf[0] = 0;
    for (char *line = list ? strtok(list, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        char page[256];
        if (!strncmp(line, "@chapter ", 9)) {
            char id[32];
            if (sscanf(line + 9, "%31s", id) != 1)
                continue;
            const struct chapter *ch = course_find(c, id);
            if (!ch || !ch->available)
                continue;
            snprintf(page, sizeof page, "%s", id);
        } else if (line[0] && line[0] != '#' && line[0] != '=' && line[0] != '@' &&
                   strlen(line) > 3 && !strcmp(line + strlen(line) - 3, ".md") &&
                   strlen(line) < sizeof page) {
            snprintf(page, sizeof page, "%.*s", (int)strlen(line) - 3, line);
            if (!found && !strcmp(page, name) && asprintf(&found, "book/%s", line) < 0)
                found = NULL;
        } else
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", page);
        if (n > 0 && (size_t)n < size - used)
            used += (size_t)n;
    }
    free(list);
    return found;
}

int cmd_read(const struct course *c, int argc, char **argv)
{
    if (wants_help("read", argc, argv))
        return 0;
    if (argc > 1)
        return bad_argument("read", argv[1]);
    const char *name = argc ? argv[0] : NULL;
    const struct chapter *ch = name && name[0] != '-' ? course_find(c, name) : NULL;
    char *page = NULL;
    if (name && name[0] != '-' && !ch) {
        char pages[4096];
        page = find_page(c, name, pages, sizeof pages);
        if (!page) {
            fprintf(stderr,
                    "grader read: there is no page '%s'; the pages you can read are %s.\n",
                    name, pages[0] ? pages : "those of book/pages.txt");
            return 2;
        }
    } else {
        ch = chapter_arg(c, "read", name);
        if (!ch)
            return 2;
    }
    char *text = page ? page_file_text(c, page) : book_text(c, ch);
    if (!text) {
        if (page)
            fprintf(stderr,
                    "grader read: the page %s is missing; restore it with git checkout %s.\n",
                    page, page);
        else
            fprintf(stderr,
                    "grader read: chapter %s's page %s is missing; restore it with git "
                    "checkout %s.\n",
                    ch->id, ch->book, ch->book);
        free(page);
        return 1;
    }
    if (ch)
        mark_read(c, ch);
    free(page);
    if (!isatty(1) || page_text(text) != 0)
        fputs(text, stdout);
    free(text);
    return 0;
}
