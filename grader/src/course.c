/* course.c: reading and checking grader/course.json, the one file that describes every chapter
 * (course.h has the schema), and finding chapters in it: by id, by selector, the one a command
 * names, the one the learner is on. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "course.h"
#include "progress.h"
#include "util.h"

/* A sentence about the file, into err. Always returns -1. */
static int bad(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* A string member: missing is "" when optional; present but not a string, or too long, is an
 * error. */
static int get_str(json_t *obj, const char *key, char *dst, size_t len, int required,
                   const char *where, char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, key);
    dst[0] = '\0';
    if (!v && !required)
        return 0;
    if (!json_is_string(v))
        return bad(err, errlen, "%s: \"%s\" must be a string%s", where, key,
                   v ? "" : ", and it is missing");
    if (strlen(json_string_value(v)) >= len)
        return bad(err, errlen, "%s: \"%s\" is longer than %zu characters", where, key, len - 1);
    snprintf(dst, len, "%s", json_string_value(v));
    return 0;
}

/* A list of strings: ["a.c", "b.c"]. */
static int get_list(json_t *obj, const char *key, char (*dst)[48], int max, int *n,
                    const char *where, char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, key), *item;
    size_t i;
    *n = 0;
    if (!v)
        return 0;
    if (!json_is_array(v))
        return bad(err, errlen, "%s: \"%s\" must be a list of strings", where, key);
    json_array_foreach(v, i, item)
    {
        if (!json_is_string(item) || strlen(json_string_value(item)) >= sizeof dst[0])
            return bad(err, errlen,
                       "%s: \"%s\" item %zu must be a string shorter than %zu "
                       "characters",
                       where, key, i + 1, sizeof dst[0]);
        if (*n == max)
            return bad(err, errlen, "%s: \"%s\" has more than %d items", where, key, max);
        snprintf(dst[(*n)++], sizeof dst[0], "%s", json_string_value(item));
    }
    return 0;
}

const char *chapter_path(const struct chapter *ch, enum chapter_part part, char *buf, size_t len)
{
    char tag[8];
    snprintf(tag, sizeof tag, "%s", ch->id);
    for (char *p = tag; *p; p++)
        if (*p == '.')
            *p = '_';
    int gpu = ch->kind == KIND_GPU;
    switch (part) {
    case CH_TAG: snprintf(buf, len, "%s", tag); break;
    case CH_DIR: snprintf(buf, len, "week%d/%s-%s", ch->week, ch->id, ch->slug); break;
    case CH_BOOK: snprintf(buf, len, "book/%s-%s.md", ch->id, ch->slug); break;
    case CH_PAGE: snprintf(buf, len, "%s-%s.md", ch->id, ch->slug); break;
    case CH_GRADING: snprintf(buf, len, "grader/chapters/%s", ch->id); break;
    case CH_SUITE: snprintf(buf, len, "%s_%s", gpu ? "test" : "suite", tag); break;
    case CH_SUITE_SRC:
        snprintf(buf, len, "grader/chapters/%s/%s_%s.%s", ch->id, gpu ? "test" : "suite", tag,
                 gpu ? "cu" : "c");
        break;
    case CH_PE: snprintf(buf, len, "pe_%s", tag); break;
    case CH_PE_SRC: snprintf(buf, len, "grader/chapters/%s/pe_%s.c", ch->id, tag); break;
    case CH_BENCH: snprintf(buf, len, "bench_%s", tag); break;
    case CH_BENCH_SRC:
        snprintf(buf, len, "grader/chapters/%s/bench_%s.%s", ch->id, tag, gpu ? "cu" : "c");
        break;
    case CH_MAKE_TARGET: snprintf(buf, len, "pe-%s", tag); break;
    default: snprintf(buf, len, "%s", "");
    }
    return buf;
}

/* "1.3": a week and a number, one digit each. */
static int good_id(const char *id)
{
    return id[0] >= '1' && id[0] <= '9' && id[1] == '.' && id[2] >= '1' && id[2] <= '9' && !id[3];
}

/* "put-get": lower-case letters, digits and single dashes. */
static int good_slug(const char *s)
{
    if (!*s || *s == '-' || s[strlen(s) - 1] == '-')
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || (*p == '-' && p[1] != '-')))
            return 0;
    return 1;
}

/* An earlier chapter named in a list (depends, also_runs): its id, or an error. */
static int earlier_chapters(struct course *c, json_t *item, const char *key, int index,
                            char (*dst)[8], int *n, const char *where, char *err, size_t errlen)
{
    char ids[MAX_DEPENDS][48];
    if (get_list(item, key, ids, MAX_DEPENDS, n, where, err, errlen))
        return -1;
    for (int d = 0; d < *n; d++) {
        const struct chapter *dep = NULL;
        for (int j = 0; j < index && !dep; j++) /* earlier chapters only: no cycles */
            dep = strcmp(c->chapters[j].id, ids[d]) == 0 ? &c->chapters[j] : NULL;
        if (!dep)
            return bad(err, errlen, "%s: \"%s\" names %s, which is not a chapter before it",
                       where, key, ids[d]);
        snprintf(dst[d], sizeof dst[d], "%s", dep->id);
    }
    return 0;
}

/* The keys whose values follow from the id and the slug: a file that still has one was
 * written for an older grader, and silently ignoring it would hide a rename. */
static int derived_keys(json_t *item, const char *where, char *err, size_t errlen)
{
    static const char *const keys[] = {"dir", "suite", "book", "week"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        if (json_object_get(item, keys[k]))
            return bad(err, errlen,
                       "%s: \"%s\" is not a key any more: it follows from the id and the slug "
                       "(week1/1.3-put-get, book/1.3-put-get.md); remove it",
                       where, keys[k]);
    return 0;
}

static int read_kind(struct chapter *ch, json_t *item, const char *where, char *err, size_t errlen)
{
    char kind[16];
    if (get_str(item, "kind", kind, sizeof kind, 0, where, err, errlen))
        return -1;
    if (!kind[0] || !strcmp(kind, "c"))
        ch->kind = KIND_C;
    else if (!strcmp(kind, "gpu"))
        ch->kind = KIND_GPU;
    else if (!strcmp(kind, "python"))
        ch->kind = KIND_PYTHON;
    else
        return bad(err, errlen, "%s: \"kind\" is \"%s\"; it must be \"c\", \"gpu\" or \"python\"",
                   where, kind);
    return 0;
}

/* "gpu": {"tests": [...], "min_gpus": N} and "bench_across_nodes": {"link": .., "op": ..}. */
static int read_extras(struct chapter *ch, json_t *item, const char *where, char *err,
                       size_t errlen)
{
    json_t *gpu = json_object_get(item, "gpu"), *across = json_object_get(item, "bench_across_nodes");
    if (gpu) {
        char tests[MAX_GPU_TESTS][48];
        json_t *min = json_object_get(gpu, "min_gpus");
        if (!json_is_object(gpu) || !json_is_integer(min) || json_integer_value(min) < 1 ||
            json_integer_value(min) > 64)
            return bad(err, errlen, "%s: \"gpu\" must be {\"tests\": [names], \"min_gpus\": 1 to 64}",
                       where);
        ch->min_gpus = (int)json_integer_value(min);
        json_t *all = json_object_get(gpu, "all_gpus");
        if (all && !json_is_boolean(all))
            return bad(err, errlen, "%s: \"gpu\": \"all_gpus\" must be true or false", where);
        ch->all_gpus = json_is_true(all);
        if (get_list(gpu, "tests", tests, MAX_GPU_TESTS, &ch->ngpu_tests, where, err, errlen))
            return -1;
        for (int t = 0; t < ch->ngpu_tests; t++) {
            if (strlen(tests[t]) >= sizeof ch->gpu_tests[t] || !*tests[t] ||
                strspn(tests[t], "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(tests[t]))
                return bad(err, errlen, "%s: the GPU test \"%s\" must be a name of lower-case "
                           "letters, digits and _ (up to 31)", where, tests[t]);
            snprintf(ch->gpu_tests[t], sizeof ch->gpu_tests[t], "%s", tests[t]);
        }
    }
    json_t *needs = json_object_get(item, "needs");
    if (needs && (!json_is_object(needs) ||
                  get_str(needs, "what", ch->needs, sizeof ch->needs, 1, where, err, errlen) ||
                  get_str(needs, "make", ch->needs_make, sizeof ch->needs_make, 1, where, err,
                          errlen)))
        return bad(err, errlen,
                   "%s: \"needs\" must be {\"what\": \"PyTorch\", \"make\": \"deps-torch\"}", where);
    if (ch->kind == KIND_GPU && ch->ngpu_tests == 0)
        return bad(err, errlen, "%s: a GPU chapter lists its test programs in \"gpu\": {\"tests\"}",
                   where);
    if (across) {
        if (!json_is_object(across) ||
            get_str(across, "link", ch->bench_link, sizeof ch->bench_link, 1, where, err, errlen) ||
            get_str(across, "op", ch->bench_op, sizeof ch->bench_op, 1, where, err, errlen))
            return bad(err, errlen, "%s: \"bench_across_nodes\" must be {\"link\": \"1.25GB/s,5us\", "
                       "\"op\": \"name\"}", where);
    }
    return 0;
}

/* One of a chapter's names into a field of its own (not straight: the names are made of its
 * other fields). The slug's length keeps every name inside its field. */
static void copy_name(char *dst, size_t len, const struct chapter *ch, enum chapter_part part)
{
    char name[CHAPTER_PATH_MAX];
    chapter_path(ch, part, name, sizeof name);
    size_t n = strnlen(name, len - 1);
    memcpy(dst, name, n);
    dst[n] = '\0';
}

static int read_chapter(struct course *c, json_t *item, int index, char *err, size_t errlen)
{
    struct chapter *ch = &c->chapters[index];
    char where[64];
    snprintf(where, sizeof where, "chapter %d", index + 1);
    if (!json_is_object(item))
        return bad(err, errlen, "%s must be an object", where);
    if (get_str(item, "id", ch->id, sizeof ch->id, 1, where, err, errlen))
        return -1;
    if (!good_id(ch->id))
        return bad(err, errlen, "%s: the id \"%s\" must be a week and a number, as \"2.3\"", where,
                   ch->id);
    snprintf(where, sizeof where, "chapter %s", ch->id);
    ch->week = ch->id[0] - '0';
    json_t *avail = json_object_get(item, "available");
    if (avail && !json_is_boolean(avail))
        return bad(err, errlen, "%s: \"available\" must be true or false", where);
    ch->available = json_is_true(avail);
    if (derived_keys(item, where, err, errlen) ||
        get_str(item, "slug", ch->slug, sizeof ch->slug, 1, where, err, errlen) ||
        get_str(item, "title", ch->title, sizeof ch->title, 1, where, err, errlen) ||
        get_str(item, "requires", ch->requires, sizeof ch->requires, 0, where, err, errlen) ||
        read_kind(ch, item, where, err, errlen) ||
        get_list(item, "files", ch->files, MAX_FILES, &ch->nfiles, where, err, errlen))
        return -1;
    if (!good_slug(ch->slug))
        return bad(err, errlen,
                   "%s: the slug \"%s\" must be lower-case words joined by single dashes, as "
                   "\"put-get\"",
                   where, ch->slug);
    copy_name(ch->dir, sizeof ch->dir, ch, CH_DIR);
    copy_name(ch->book, sizeof ch->book, ch, CH_BOOK);
    if (ch->available)
        copy_name(ch->suite, sizeof ch->suite, ch, CH_SUITE);
    if (earlier_chapters(c, item, "depends", index, ch->depends, &ch->ndepends, where, err,
                         errlen) ||
        earlier_chapters(c, item, "also_runs", index, ch->also_runs, &ch->nalso, where, err,
                         errlen) ||
        read_extras(ch, item, where, err, errlen))
        return -1;
    json_t *hints = json_object_get(item, "hints"), *h;
    size_t i;
    if (hints && !json_is_array(hints))
        return bad(err, errlen, "%s: \"hints\" must be a list of strings", where);
    json_array_foreach(hints, i, h)
    {
        if (!json_is_string(h) || !*json_string_value(h))
            return bad(err, errlen, "%s: hint %zu must be a non-empty string", where, i + 1);
        if (ch->nhints == MAX_HINTS)
            return bad(err, errlen, "%s: more than %d hints", where, MAX_HINTS);
        ch->hints[ch->nhints++] = json_string_value(h);
    }
    json_t *points = json_object_get(item, "points"), *p;
    const char *test;
    if (points && !json_is_object(points))
        return bad(err, errlen, "%s: \"points\" must map test names to points", where);
    json_object_foreach(points, test, p)
    {
        if (!json_is_integer(p) || json_integer_value(p) < 0 || json_integer_value(p) > 100)
            return bad(err, errlen, "%s: the points of %s must be a whole number from 0 to 100",
                       where, test);
    }
    ch->points = points;
    if (ch->available && ch->nfiles == 0)
        return bad(err, errlen, "%s: an available chapter lists its \"files\"", where);
    for (int j = 0; j < index; j++)
        if (strcmp(c->chapters[j].id, ch->id) == 0)
            return bad(err, errlen, "two chapters have the id %s", ch->id);
    return 0;
}

int course_load_file(struct course *c, const char *root, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    snprintf(c->root, sizeof c->root, "%s", root);
    json_error_t jerr;
    c->doc = json_load_file(path, 0, &jerr);
    if (!c->doc)
        return bad(err, errlen, "%s (line %d)", jerr.text, jerr.line);
    json_t *list = json_object_get(c->doc, "chapters"), *item;
    if (!json_is_array(list) || json_array_size(list) == 0)
        return bad(err, errlen, "it must hold a non-empty list \"chapters\"");
    if (json_array_size(list) > MAX_CHAPTERS)
        return bad(err, errlen, "more than %d chapters", MAX_CHAPTERS);
    const char *title = json_string_value(json_object_get(c->doc, "title"));
    snprintf(c->title, sizeof c->title, "%s", title ? title : "the course");
    size_t i;
    json_array_foreach(list, i, item)
    {
        if (read_chapter(c, item, (int)i, err, errlen) != 0)
            return -1;
        c->n++;
    }
    return 0;
}

void course_free(struct course *c)
{
    json_decref(c->doc);
    c->doc = NULL;
}

static int find_root(char root[PATH_MAX], const char *argv0)
{
    const char *env = getenv("TSHMEM_ROOT");
    if (env && *env) {
        if (path_format(root, "%s", env) == 0)
            return 0;
        fprintf(stderr,
                "grader: TSHMEM_ROOT is longer than a path may be (%d bytes); set it to the "
                "course folder\n",
                PATH_MAX);
        return -1;
    }
    if (own_program(root) != 0) {
        fprintf(stderr,
                "grader: cannot tell where %s lives; set TSHMEM_ROOT to the course "
                "folder\n",
                argv0);
        return -1;
    }
    for (int up = 0; up < 3; up++) { /* .../build/grader/grader -> ... */
        char *slash = strrchr(root, '/');
        if (slash)
            *slash = '\0';
    }
    return 0;
}

int course_load(struct course *c, const char *argv0)
{
    char root[PATH_MAX], path[PATH_MAX], err[512];
    if (find_root(root, argv0) != 0)
        return -1;
    if (path_format(path, "%s/grader/course.json", root) != 0) {
        fprintf(stderr,
                "grader: the course folder's path is too long for its files' (a path has at "
                "most %d bytes): move the course to a shorter one than %s\n",
                PATH_MAX, root);
        return -1;
    }
    if (course_load_file(c, root, path, err, sizeof err) != 0) {
        fprintf(stderr,
                "grader: %s is not right: %s. Fix it, or restore it with "
                "git checkout grader/course.json\n",
                path, err);
        course_free(c);
        return -1;
    }
    return 0;
}

const struct chapter *course_find(const struct course *c, const char *id)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->chapters[i].id, id) == 0)
            return &c->chapters[i];
    return NULL;
}

int course_index(const struct course *c, const struct chapter *ch)
{
    return (int)(ch - c->chapters);
}

int chapter_points(const struct chapter *ch, const char *test)
{
    json_t *p = ch->points ? json_object_get(ch->points, test) : NULL;
    return p ? (int)json_integer_value(p) : 1;
}

int chapter_test_rank(const struct chapter *ch, const char *test)
{
    /* jansson keeps an object's keys in the order of the file */
    int rank = 0;
    const char *key;
    json_t *v;
    json_object_foreach(ch->points, key, v)
    {
        if (!strcmp(key, test))
            return rank;
        rank++;
    }
    return MAX_TESTS_RANK;
}

/* The tests of a chapter's suite, from its source (CH_SUITE_SRC): every line that
 * starts with "Test(" names one, as its second argument. Returns how many, or -1 when the file
 * cannot be read. */
static int suite_tests(const struct course *c, const struct chapter *ch, int *points)
{
    char path[PATH_MAX], line[1024], rel[CHAPTER_PATH_MAX];
    path_format(path, "%s/%s", c->root, chapter_path(ch, CH_SUITE_SRC, rel, sizeof rel));
    FILE *f = ch->suite[0] && path[0] ? fopen(path, "r") : NULL;
    if (!f)
        return -1;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "Test(", 5) != 0)
            continue;
        char *name = strchr(line, ',');
        if (!name)
            continue;
        name += strspn(name, ", \t");
        size_t len = strcspn(name, ", \t)");
        if (len == 0 || len >= 128)
            continue;
        char test[128];
        memcpy(test, name, len);
        test[len] = 0;
        n++;
        *points += chapter_points(ch, test);
    }
    fclose(f);
    return n;
}

int chapter_declared(const struct course *c, const struct chapter *ch, int *points)
{
    *points = 0;
    int n = c ? suite_tests(c, ch, points) : -1;
    if (n > 0)
        return n;
    /* No suite source to read: what the "points" map names. */
    const char *test;
    json_t *p;
    n = 0;
    *points = 0;
    json_object_foreach(ch->points, test, p)
    {
        n++;
        *points += (int)json_integer_value(p);
    }
    return n;
}

int course_select(const struct course *c, const char *cmd, const char *sel,
                  const struct chapter **out)
{
    int n = 0;
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        char week[16];
        snprintf(week, sizeof week, "week%d", ch->week);
        if (strcmp(sel, ch->id) == 0 && !ch->available) {
            fprintf(stderr,
                    "grader %s: chapter %s (%s) is not part of the course yet; grader "
                    "list shows the chapters you can do now.\n",
                    cmd, ch->id, ch->title);
            return -1;
        }
        if ((!strcmp(sel, "all") || !strcmp(sel, week) || !strcmp(sel, ch->id)) && ch->available)
            out[n++] = ch;
    }
    if (n == 0)
        fprintf(stderr,
                "grader %s: '%s' names no chapter you can do: use an id such as 1.3, a "
                "week such as week1, or all (grader list shows them).\n",
                cmd, sel);
    return n ? n : -1;
}

const struct chapter *chapter_arg(const struct course *c, const char *command, const char *id)
{
    if (!id || id[0] == '-') {
        fprintf(stderr,
                "grader %s: name a chapter, e.g. grader %s 1.3 (grader list shows "
                "them).\n",
                command, command);
        return NULL;
    }
    const struct chapter *ch = course_find(c, id);
    if (!ch)
        fprintf(stderr,
                "grader %s: there is no chapter '%s'; chapters are named like 1.3 "
                "(grader list shows them).\n",
                command, id);
    else if (!ch->available)
        fprintf(stderr,
                "grader %s: chapter %s (%s) is not part of the course yet; grader list "
                "shows the chapters you can do now.\n",
                command, ch->id, ch->title);
    return ch && ch->available ? ch : NULL;
}

const struct chapter *current_chapter(const struct course *c)
{
    struct progress p;
    progress_open(&p, c, 0);
    const struct chapter *cur = NULL, *last = NULL;
    for (int i = 0; i < c->n && !cur; i++) {
        if (!c->chapters[i].available)
            continue;
        last = &c->chapters[i];
        if (!pg_bool(progress_chapter(&p, last->id, 0), "done"))
            cur = last;
    }
    progress_close(&p);
    return cur ? cur : last;
}

int chapter_closure(const struct course *c, const struct chapter *ch, const struct chapter **out)
{
    char in[MAX_CHAPTERS] = {0};
    int me = course_index(c, ch), n = 0;
    in[me] = 1;
    /* depends only name earlier chapters, so one backwards sweep closes the set */
    for (int i = me; i >= 0; i--) {
        if (!in[i])
            continue;
        for (int d = 0; d < c->chapters[i].ndepends; d++) {
            const struct chapter *dep = course_find(c, c->chapters[i].depends[d]);
            if (dep)
                in[course_index(c, dep)] = 1;
        }
    }
    for (int i = 0; i <= me; i++)
        if (in[i])
            out[n++] = &c->chapters[i];
    return n;
}

int chapter_bench_source(const struct course *c, const struct chapter *ch, char *path, size_t len)
{
    char rel[CHAPTER_PATH_MAX];
    snprintf(path, len, "%s/%s", c->root, chapter_path(ch, CH_BENCH_SRC, rel, sizeof rel));
    return access(path, R_OK) == 0;
}
