/* code.h: what the learner's files of a chapter hold: a fingerprint (for the regression check),
 * a signature of their times and a watch of their folder (for watch mode), and how far they are
 * from the generated stub (the Code column). */
#ifndef GRADER_CODE_H
#define GRADER_CODE_H

#include <stdint.h>

#include "course.h"

/* A fingerprint (FNV-1a) of the learner's files of ch and of every chapter it depends on: when
 * it changes, a chapter that passed must be checked again. */
uint64_t chapter_fingerprint(const struct course *c, const struct chapter *ch);

/* The files' times, sizes and inodes: changes when one is saved (watch mode). */
uint64_t chapter_files_signature(const struct course *c, const struct chapter *ch);
/* Adds a watch of the chapter's folder to the inotify descriptor notify (-1: none), for every
 * way an editor saves. Returns the watch, or -1: then only the signature tells. */
int chapter_files_watch(int notify, const struct course *c, const struct chapter *ch);

enum code_state { CODE_UNKNOWN, CODE_STUB, CODE_EDITED, CODE_WRITTEN };
struct code_info {
    enum code_state state; /* STUB: every file equals its generated stub */
    int todos;             /* TSHMEM_TODO( calls left in the learner's files */
};
/* Compares the learner's files with build/stubs/ (make stubs generates them), or with the
 * version committed in git when build/stubs/ is missing. */
struct code_info chapter_code(const struct course *c, const struct chapter *ch);
const char *code_word(struct code_info ci); /* "stub", "3 todo", "written", "?" */

#endif
