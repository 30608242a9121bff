/* reset.c: `grader reset`: put a chapter's files back to the generated stub, after copying the
 * learner's files to a new backup folder that is never reused. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "code.h"
#include "commands.h"
#include "help.h"
#include "progress.h"
#include "reset.h"
#include "run.h"
#include "util.h"

/* A new folder .grader-backups/<id>-<stamp>[-N]: mkdir fails on an existing one, so an older
 * backup is never overwritten, even by two resets in the same second. */
static int new_backup_dir(const struct course *c, const struct chapter *ch, char dir[PATH_MAX])
{
    char base[PATH_MAX], stamp[32];
    if (path_format(base, "%s/.grader-backups", c->root) != 0 || make_dirs(base) != 0)
        return -1;
    time_stamp(time(NULL), stamp, sizeof stamp);
    for (int i = 1; i < 1000; i++) {
        int named = i == 1 ? path_format(dir, "%s/%s-%s", base, ch->id, stamp)
                           : path_format(dir, "%s/%s-%s-%d", base, ch->id, stamp, i);
        if (named != 0)
            return -1;
        if (mkdir(dir, 0755) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

int reset_chapter(const struct course *c, const struct chapter *ch, char backup[PATH_MAX])
{
    if (ensure_stubs(c) != 0) {
        fprintf(stderr, "grader reset: cannot generate the stubs (make stubs failed); run make "
                        "stubs to see why.\n");
        return -1;
    }
    struct code_info ci = chapter_code(c, ch);
    if (ci.state == CODE_STUB)
        return 1;
    char dir[PATH_MAX];
    if (new_backup_dir(c, ch, dir) != 0) {
        fprintf(stderr,
                "grader reset: cannot create a backup folder under %s/.grader-backups: "
                "%s. Nothing was changed.\n",
                c->root, strerror(errno));
        return -1;
    }
    /* every file is saved before any is replaced */
    for (int f = 0; f < ch->nfiles; f++) {
        char mine[PATH_MAX], saved[PATH_MAX];
        if (path_format(mine, "%s/%s/%s", c->root, ch->dir, ch->files[f]) != 0 ||
            path_format(saved, "%s/%s", dir, ch->files[f]) != 0 ||
            (access(mine, F_OK) == 0 && copy_file_new(mine, saved) != 0)) {
            fprintf(stderr, "grader reset: cannot save %s/%s to %s/: %s. Nothing was changed.\n",
                    ch->dir, ch->files[f], dir, strerror(errno));
            return -1;
        }
    }
    for (int f = 0; f < ch->nfiles; f++) {
        char mine[PATH_MAX], stub[PATH_MAX], *text = NULL;
        size_t n;
        if (path_format(mine, "%s/%s/%s", c->root, ch->dir, ch->files[f]) != 0 ||
            path_format(stub, "%s/build/stubs/%s/%s", c->root, ch->dir, ch->files[f]) != 0 ||
            !(text = read_file(stub, &n)) || write_file_atomic(mine, text, n) != 0) {
            fprintf(stderr,
                    "grader reset: cannot restore %s/%s from build/stubs/: %s. Your files are "
                    "safe in %s.\n",
                    ch->dir, ch->files[f], strerror(errno), dir);
            free(text);
            return -1;
        }
        free(text);
    }
    memcpy(backup, dir, sizeof dir);
    /* The chapter starts over: its test results no longer describe its code. */
    struct progress p;
    progress_open(&p, c, 1);
    json_t *chp = progress_chapter(&p, ch->id, 1);
    const char *keys[] = {"tests",       "passed", "total",    "points", "done", "regressed",
                          "fingerprint", "built",  "ref_pass", NULL};
    for (int i = 0; keys[i]; i++)
        json_object_del(chp, keys[i]);
    progress_save(&p);
    progress_close(&p);
    return 0;
}

static int confirm(const struct chapter *ch)
{
    char files[512] = "", answer[16] = "";
    for (int f = 0; f < ch->nfiles; f++)
        appendf(files, sizeof files, "%s%s", f ? ", " : "", ch->files[f]);
    printf("Reset chapter %s to the stub? Your %s in %s will be copied to a backup first. "
           "[y/N] ",
           ch->id, files, ch->dir);
    fflush(stdout);
    if (!fgets(answer, sizeof answer, stdin))
        return 0;
    return answer[0] == 'y' || answer[0] == 'Y';
}

int cmd_reset(const struct course *c, int argc, char **argv)
{
    if (wants_help("reset", argc, argv))
        return 0;
    int yes = 0;
    const char *id = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--yes") || !strcmp(argv[i], "-y"))
            yes = 1;
        else if (argv[i][0] != '-' && !id)
            id = argv[i];
        else
            return bad_argument("reset", argv[i]);
    }
    const struct chapter *ch = chapter_arg(c, "reset", id);
    if (!ch)
        return 2;
    if (!yes && !isatty(0)) {
        fprintf(stderr,
                "grader reset: this replaces your files of chapter %s with the stub; "
                "say so with grader reset %s --yes (your files are kept in a backup).\n",
                ch->id, ch->id);
        return 2;
    }
    if (!yes && !confirm(ch)) {
        printf("Nothing was changed.\n");
        return 1;
    }
    char backup[PATH_MAX];
    int rc = reset_chapter(c, ch, backup);
    if (rc == 1)
        printf("Chapter %s is the stub already: nothing to reset.\n", ch->id);
    else if (rc == 0)
        printf("Chapter %s is the stub again. Your files are in %s/\n", ch->id,
               backup + strlen(c->root) + 1);
    return rc < 0 ? 1 : 0;
}
