/* lists.h: the lists that restate grader/course.json (the Makefile's, make help's, the
 * README's roadmap, book/pages.txt's chapters), written from it by `grader lists --write`
 * (tools/update-lists). */
#ifndef GRADER_LISTS_H
#define GRADER_LISTS_H

#include "course.h"

/* 0 when every list says what course.json says; else the number of files that do not (-1:
 * one could not be read), with a sentence per file and the command that fixes them in *detail
 * (free it). */
int lists_check(const struct course *c, char **detail);

#endif
