/* progress.c: the learner's progress file: reading it (surviving a broken one), locking it,
 * writing it atomically, and the rules that turn test results into a chapter's status. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

#define PROGRESS_VERSION 1

static int progress_path(const struct course *c, char path[PATH_MAX])
{
    const char *env = getenv("TSHMEM_PROGRESS");
    if (env && *env)
        return path_format(path, "%s", env);
    return path_format(path, "%s/.tshmem-progress.json", c->root);
}

/* Keeps a broken file as <path>.broken-<time>[-N], never over an older one. */
static void keep_aside(struct progress *p, const char *why)
{
    char stamp[32], aside[PATH_MAX];
    time_stamp(time(NULL), stamp, sizeof stamp);
    int named = -1;
    for (int i = 0; i < 100; i++) {
        if (i == 0)
            named = path_format(aside, "%s.broken-%s", p->path, stamp);
        else
            named = path_format(aside, "%s.broken-%s-%d", p->path, stamp, i);
        if (named != 0 || access(aside, F_OK) != 0)
            break;
    }
    /* link: never overwrites */
    if (named == 0 && link(p->path, aside) == 0 && unlink(p->path) == 0)
        snprintf(p->note, sizeof p->note,
                 "grader: your progress file %s could not be read (%s). "
                 "It is kept as %s, and your progress starts afresh: run grader test to "
                 "record your chapters again.",
                 p->path, why, aside);
    else {
        p->keep = 1;
        snprintf(p->note, sizeof p->note,
                 "grader: your progress file %s could not be read (%s) and could not be kept "
                 "aside (%s). It is left as it is and nothing is saved over it: move it away "
                 "to start afresh.",
                 p->path, why, strerror(errno));
    }
}

static json_t *fresh(void)
{
    return json_pack("{s:i, s:{}, s:[]}", "version", PROGRESS_VERSION, "chapters", "sessions");
}

static void load(struct progress *p)
{
    size_t len = 0;
    char *text = read_file(p->path, &len), why[300];
    p->doc = NULL;
    if (!text) {
        if (errno != ENOENT) { /* it is there: what it holds must not be lost */
            p->keep = 1;
            snprintf(p->note, sizeof p->note,
                     "grader: cannot read your progress file %s (%s). It is left as it is and "
                     "nothing is saved until it can be read: check its mode (chmod u+rw) or "
                     "move it away.",
                     p->path, strerror(errno));
        }
        p->doc = fresh();
        return;
    }
    json_error_t err;
    json_t *doc = len ? json_loadb(text, len, 0, &err) : NULL;
    free(text);
    json_t *version = json_object_get(doc, "version");
    if (len == 0)
        snprintf(why, sizeof why, "it is empty");
    else if (!doc)
        snprintf(why, sizeof why, "line %d: %s", err.line, err.text);
    else if (!json_is_object(doc) || !json_is_object(json_object_get(doc, "chapters")))
        snprintf(why, sizeof why, "it is JSON, but not the grader's: no \"chapters\" object");
    else if (!json_is_integer(version) || json_integer_value(version) > PROGRESS_VERSION)
        snprintf(why, sizeof why, "its version is not one this grader knows");
    else {
        p->doc = doc;
        if (!json_is_array(json_object_get(doc, "sessions")))
            json_object_set_new(doc, "sessions", json_array());
        return;
    }
    json_decref(doc);
    keep_aside(p, why);
    p->doc = fresh();
}

void progress_open(struct progress *p, const struct course *c, int lock)
{
    memset(p, 0, sizeof *p);
    p->lock_fd = -1;
    if (progress_path(c, p->path) != 0) /* p->path is "": load() starts afresh */
        snprintf(p->note, sizeof p->note,
                 "grader: the path of your progress file is longer than a path may be (%d "
                 "bytes), so your progress is not remembered: set TSHMEM_PROGRESS to a shorter "
                 "one.",
                 PATH_MAX);
    else if (lock) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", p->path);
        p->lock_fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        while (p->lock_fd >= 0 && flock(p->lock_fd, LOCK_EX) != 0 && errno == EINTR) {
        }
    }
    load(p);
    if (p->note[0])
        fprintf(stderr, "%s\n", p->note);
}

int progress_save(struct progress *p)
{
    if (!p->path[0] || p->keep) /* no path, or a file that could not be read: open said why */
        return -1;
    struct stat st;
    if (stat(p->path, &st) == 0 && !(st.st_mode & S_IWUSR)) { /* root could; nobody should */
        fprintf(stderr,
                "grader: your progress file %s is read-only, so your results are shown but not "
                "remembered: make it writable (chmod u+w %s) to record them.\n",
                p->path, p->path);
        return -1;
    }
    char *text = json_dumps(p->doc, JSON_INDENT(1) | JSON_SORT_KEYS);
    if (!text || write_file_atomic(p->path, text, strlen(text)) != 0) {
        fprintf(stderr,
                "grader: cannot write your progress to %s: %s. Your results are shown "
                "but not remembered; check that the folder is writable.\n",
                p->path, text ? strerror(errno) : "out of memory");
        free(text);
        return -1;
    }
    free(text);
    return 0;
}

void progress_close(struct progress *p)
{
    if (p->lock_fd >= 0)
        close(p->lock_fd); /* releases the flock */
    p->lock_fd = -1;
    json_decref(p->doc);
    p->doc = NULL;
}

json_t *progress_chapter(struct progress *p, const char *id, int create)
{
    json_t *chapters = json_object_get(p->doc, "chapters"), *chp = json_object_get(chapters, id);
    if (json_is_object(chp) || !create)
        return json_is_object(chp) ? chp : NULL;
    chp = json_object();
    json_object_set_new(chapters, id, chp);
    return chp;
}

int pg_int(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? (int)json_number_value(v) : 0;
}

double pg_real(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : 0;
}

int pg_bool(json_t *obj, const char *key)
{
    return json_is_true(json_object_get(obj, key));
}

void progress_record_run(struct progress *p, const struct chapter_run *r, uint64_t fingerprint,
                         int ref_deps)
{
    json_t *chp = progress_chapter(p, r->ch->id, 1), *tests = json_object();
    char now[32], fp[32];
    int max = 0, points = r->built ? run_points(r, &max) : 0, passed = run_passed(r);
    int done = r->built && r->n > 0 && passed == r->n, was_done = pg_bool(chp, "done");
    /* A pass with the reference's earlier chapters (--ref-deps) is a state of its own: a plain
     * run that fails after it (the learner's earlier chapters unwritten) is no regression, and
     * the pass is kept (ref_pass) until a plain run passes or a --ref-deps run fails. */
    int was_ref = was_done && pg_bool(chp, "ref_deps");
    int ref_pass = ref_deps ? done : !done && (was_ref || pg_bool(chp, "ref_pass"));
    int broke = ref_deps ? was_done : was_done && !was_ref;
    for (int i = 0; i < r->n; i++)
        json_object_set_new(tests, r->results[i].test, json_boolean(r->results[i].passed));
    time_iso(time(NULL), now, sizeof now);
    snprintf(fp, sizeof fp, "%016llx", (unsigned long long)fingerprint);
    json_object_set_new(chp, "tests", tests);
    json_object_set_new(chp, "passed", json_integer(passed));
    json_object_set_new(chp, "total", json_integer(r->built ? r->n : 0));
    json_object_set_new(chp, "points", json_integer(points));
    json_object_set_new(chp, "max_points", json_integer(max));
    json_object_set_new(chp, "built", json_boolean(r->built));
    json_object_set_new(chp, "done", json_boolean(done));
    json_object_set_new(chp, "ref_deps", json_boolean(ref_deps));
    json_object_set_new(chp, "ref_pass", json_boolean(ref_pass));
    json_object_set_new(chp, "fingerprint", json_string(fp));
    json_object_set_new(chp, "last_run", json_string(now));
    /* a regression: it was done (as this run is: with or without the reference), and now it is
     * not; it stays marked until it passes again */
    json_object_set_new(chp, "regressed",
                        json_boolean(!done && (broke || pg_bool(chp, "regressed"))));
    if (done && !pg_bool(chp, "ever_done")) {
        json_object_set_new(chp, "ever_done", json_true());
        json_object_set_new(chp, "first_done", json_string(now));
    }
}

enum chapter_status progress_status(json_t *chp, struct code_info code)
{
    if (pg_bool(chp, "done"))
        return ST_DONE;
    if (pg_int(chp, "passed") > 0 || pg_bool(chp, "regressed") || code.state == CODE_EDITED ||
        code.state == CODE_WRITTEN)
        return ST_PROGRESS;
    return ST_TODO;
}

const char *status_emoji(enum chapter_status st)
{
    return st == ST_DONE ? "✅" : st == ST_PROGRESS ? "🚧" : "⬜";
}

const char *status_word(enum chapter_status st)
{
    return st == ST_DONE ? "done" : st == ST_PROGRESS ? "in progress" : "to do";
}

int progress_take_hint(struct progress *p, const struct chapter *ch)
{
    json_t *chp = progress_chapter(p, ch->id, 1);
    int used = pg_int(chp, "hints_used");
    if (used < 0)
        used = 0;
    if (used >= ch->nhints)
        return -1;
    json_object_set_new(chp, "hints_used", json_integer(used + 1));
    return used;
}
