/* unit.h: what the grader's unit tests share: a small course of their own in a temp folder. */
#ifndef GRADER_UNIT_H
#define GRADER_UNIT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "course.h"
#include "util.h"

/* Two available chapters (2.1 depends on 1.1), one coming; a Makefile whose `make stubs` does
 * nothing (the stubs are written by the test into build/stubs/). */
#define TINY_COURSE                                                                                \
    "{\"title\": \"tiny\", \"chapters\": ["                                                        \
    "{\"id\": \"1.1\", \"slug\": \"a\", \"title\": \"A\","                                        \
    " \"files\": [\"a.c\", \"b.c\"], \"available\": true,"                                         \
    " \"hints\": [\"first\", \"second\", \"third\"], \"points\": {\"big\": 3, \"zero\": 0}},"      \
    "{\"id\": \"2.1\", \"slug\": \"c\", \"title\": \"C\","                                        \
    " \"files\": [\"c.c\"], \"available\": true,"                                                 \
    " \"depends\": [\"1.1\"]},"                                                                    \
    "{\"id\": \"2.2\", \"slug\": \"d\", \"title\": \"D\", \"available\": false}]}"

static inline void write_text(const char *root, const char *rel, const char *text)
{
    char path[PATH_MAX], dir[PATH_MAX];
    cr_assert(path_format(path, "%s/%s", root, rel) == 0);
    memcpy(dir, path, sizeof path);
    *strrchr(dir, '/') = '\0';
    cr_assert(make_dirs(dir) == 0, "cannot create %s", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static inline char *read_text(const char *root, const char *rel)
{
    char path[PATH_MAX];
    return path_format(path, "%s/%s", root, rel) == 0 ? read_file(path, NULL) : NULL;
}

/* A temp folder holding the tiny course (stubs equal to the learner's files), its progress
 * file inside. */
static inline void tiny_course(struct course *c, char *root, size_t len)
{
    snprintf(root, len, "/tmp/tshmem-unit-XXXXXX");
    cr_assert(mkdtemp(root) != NULL);
    write_text(root, "grader/course.json", TINY_COURSE);
    write_text(root, "Makefile", "stubs:\n\t@true\n");
    write_text(root, "book/1.1-a.md", "# A\n\nThe page of A.\n");
    const char *files[] = {"week1/1.1-a/a.c", "week1/1.1-a/b.c", "week2/2.1-c/c.c"};
    for (int i = 0; i < 3; i++) {
        char stub[256];
        snprintf(stub, sizeof stub, "build/stubs/%s", files[i]);
        write_text(root, files[i], "int f(void) { TSHMEM_TODO(\"x\", \"y\"); }\n");
        write_text(root, stub, "int f(void) { TSHMEM_TODO(\"x\", \"y\"); }\n");
    }
    char json[PATH_MAX], err[512];
    cr_assert(path_format(json, "%s/grader/course.json", root) == 0);
    cr_assert(course_load_file(c, root, json, err, sizeof err) == 0, "tiny course: %s", err);
    char progress[PATH_MAX];
    cr_assert(path_format(progress, "%s/.tshmem-progress.json", root) == 0);
    setenv("TSHMEM_PROGRESS", progress, 1);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static inline void remove_tree(const char *root)
{
    nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Loads course.json text; returns 0 or -1 with the error sentence in err. */
static inline int load_json_text(const char *json, char *err, size_t len)
{
    char root[] = "/tmp/tshmem-unit-XXXXXX", path[64];
    cr_assert(mkdtemp(root) != NULL);
    write_text(root, "grader/course.json", json);
    snprintf(path, sizeof path, "%s/grader/course.json", root);
    struct course c;
    int rc = course_load_file(&c, root, path, err, len);
    course_free(&c);
    remove_tree(root);
    return rc;
}

#endif
