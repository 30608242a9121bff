/* course.c: reading grader/course.json, the one file that describes every chapter. */
#define _GNU_SOURCE
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "course.h"

static void copy_str(char *dst, size_t len, json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    snprintf(dst, len, "%s", s ? s : "");
}

static int find_root(struct course *c, const char *argv0)
{
    const char *env = getenv("TSHMEM_ROOT");
    char exe[4096];
    if (env && *env) {
        snprintf(c->root, sizeof c->root, "%s", env);
        return 0;
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "grader: cannot tell where %s lives; set TSHMEM_ROOT to the course "
                "folder\n", argv0);
        return -1;
    }
    exe[n] = '\0';
    for (int up = 0; up < 3; up++) { /* .../build/grader/grader -> ... */
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
    }
    snprintf(c->root, sizeof c->root, "%s", exe);
    return 0;
}

int course_load(struct course *c, const char *argv0)
{
    memset(c, 0, sizeof *c);
    if (find_root(c, argv0) != 0)
        return -1;
    char path[4200];
    snprintf(path, sizeof path, "%s/grader/course.json", c->root);
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    if (!doc) {
        fprintf(stderr, "grader: cannot read %s: %s (line %d). Restore it with git checkout "
                "grader/course.json\n", path, err.text, err.line);
        return -1;
    }
    json_t *list = json_object_get(doc, "chapters"), *item;
    size_t i;
    json_array_foreach(list, i, item) {
        if (c->n == (int)(sizeof c->chapters / sizeof c->chapters[0]))
            break;
        struct chapter *ch = &c->chapters[c->n++];
        copy_str(ch->id, sizeof ch->id, item, "id");
        copy_str(ch->dir, sizeof ch->dir, item, "dir");
        copy_str(ch->title, sizeof ch->title, item, "title");
        copy_str(ch->suite, sizeof ch->suite, item, "suite");
        copy_str(ch->book, sizeof ch->book, item, "book");
        ch->week = (int)json_integer_value(json_object_get(item, "week"));
        ch->available = json_is_true(json_object_get(item, "available"));
    }
    json_decref(doc);
    if (c->n == 0) {
        fprintf(stderr, "grader: %s lists no chapters\n", path);
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
