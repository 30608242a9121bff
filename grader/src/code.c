/* code.c: what the learner's files of a chapter hold: a fingerprint (for the regression check),
 * a signature and a watch (for watch mode), and how far they are from the generated stub (the
 * Code column). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "code.h"
#include "hash.h"
#include "run.h"
#include "util.h"

uint64_t chapter_fingerprint(const struct course *c, const struct chapter *ch)
{
    const struct chapter *chs[MAX_CHAPTERS];
    int n = chapter_closure(c, ch, chs);
    uint64_t h = FNV_START;
    for (int i = 0; i < n; i++) {
        for (int f = 0; f < chs[i]->nfiles; f++) {
            char path[PATH_MAX];
            size_t len = 0;
            /* a path too long to open counts as a missing file */
            path_format(path, "%s/%s/%s", c->root, chs[i]->dir, chs[i]->files[f]);
            char *text = path[0] ? read_file(path, &len) : NULL;
            h = fnv1a(h, path, strlen(path) + 1);
            h = fnv1a(h, text ? text : "(missing)", text ? len : 9);
            free(text);
        }
    }
    return h;
}

/* The stub of a file: build/stubs/<dir>/<file>, else the version git has committed. */
static char *stub_text(const struct course *c, const char *rel)
{
    char path[PATH_MAX];
    char *text =
        path_format(path, "%s/build/stubs/%s", c->root, rel) == 0 ? read_file(path, NULL) : NULL;
    if (text)
        return text;
    char spec[512], *out = NULL;
    snprintf(spec, sizeof spec, "HEAD:%s", rel);
    char *argv[] = {"git", "show", spec, NULL};
    if (run_quiet(c, argv, &out) == 0)
        return out;
    free(out);
    return NULL;
}

static int count_todos(const char *text)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, "TSHMEM_TODO(")) != NULL; p++)
        n++;
    return n;
}

struct code_info chapter_code(const struct course *c, const struct chapter *ch)
{
    struct code_info ci = {.state = CODE_UNKNOWN};
    int missing = 0, no_stub = 0, edited = 0;
    for (int f = 0; f < ch->nfiles; f++) {
        char rel[200], path[PATH_MAX];
        snprintf(rel, sizeof rel, "%s/%s", ch->dir, ch->files[f]);
        char *mine = path_format(path, "%s/%s", c->root, rel) == 0 ? read_file(path, NULL) : NULL;
        char *stub = mine ? stub_text(c, rel) : NULL;
        missing |= mine == NULL;
        no_stub |= mine && !stub;
        if (mine) {
            ci.todos += count_todos(mine);
            edited |= stub && strcmp(mine, stub) != 0;
        }
        free(mine);
        free(stub);
    }
    if (missing || ch->nfiles == 0)
        ci.state = CODE_UNKNOWN;
    else if (ci.todos == 0)
        ci.state = CODE_WRITTEN; /* no TODO left: written, whatever the stub says */
    else if (edited)
        ci.state = CODE_EDITED;
    else
        ci.state = no_stub ? CODE_EDITED : CODE_STUB; /* without a stub: "N todo" is still true */
    return ci;
}

const char *code_word(struct code_info ci)
{
    static char buf[32];
    switch (ci.state) {
    case CODE_STUB: return "stub";
    case CODE_WRITTEN: return "written";
    case CODE_EDITED: snprintf(buf, sizeof buf, "%d todo", ci.todos); return buf;
    default: return "?";
    }
}

uint64_t chapter_files_signature(const struct course *c, const struct chapter *ch)
{
    uint64_t h = FNV_START;
    for (int f = 0; f < ch->nfiles; f++) {
        char path[PATH_MAX];
        struct stat st;
        if (path_format(path, "%s/%s/%s", c->root, ch->dir, ch->files[f]) != 0 ||
            stat(path, &st) != 0)
            memset(&st, 0, sizeof st);
        long parts[4] = {(long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long)st.st_size,
                         (long)st.st_ino};
        h = fnv1a(h, parts, sizeof parts);
    }
    return h;
}

int chapter_files_watch(int notify, const struct course *c, const struct chapter *ch)
{
    char dir[PATH_MAX];
    if (notify < 0 || path_format(dir, "%s/%s", c->root, ch->dir) != 0)
        return -1;
    /* editors save by writing in place, or by writing a new file and renaming it over */
    return inotify_add_watch(notify, dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ATTRIB);
}
