/* hint.c: the help a learner asks for: graduated hints (`grader hint`) and the chapter's page
 * of the book in the terminal (`grader read`). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

char *book_text(const struct course *c, const struct chapter *ch)
{
    char path[PATH_MAX];
    if (path_format(path, "%s/%s", c->root, ch->book) != 0 || access(path, R_OK) != 0)
        return NULL;
    char *out = NULL;
    char *argv[] = {"pandoc", "--from", "markdown", "--to", "plain", "--columns", "78", path, NULL};
    if (run_quiet(c, argv, &out) == 0 && out && *out)
        return out;
    free(out);
    return read_file(path, NULL);
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

int cmd_read(const struct course *c, int argc, char **argv)
{
    if (wants_help("read", argc, argv))
        return 0;
    if (argc > 1)
        return bad_argument("read", argv[1]);
    const struct chapter *ch = chapter_arg(c, "read", argc ? argv[0] : NULL);
    if (!ch)
        return 2;
    char *text = book_text(c, ch);
    if (!text) {
        fprintf(stderr,
                "grader read: chapter %s's page %s is missing; restore it with git "
                "checkout %s.\n",
                ch->id, ch->book, ch->book);
        return 1;
    }
    mark_read(c, ch);
    if (!isatty(1) || page_text(text) != 0)
        fputs(text, stdout);
    free(text);
    return 0;
}
