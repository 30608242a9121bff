/* commands.h: the grader's commands (one file each, more or less) and what they share. */
#ifndef GRADER_COMMANDS_H
#define GRADER_COMMANDS_H

#include <stdio.h>

#include "course.h"

/* Each takes the arguments after its name; returns the exit status. */
int cmd_test(const struct course *c, int argc, char **argv);
int cmd_watch(const struct course *c, int argc, char **argv);
int cmd_hint(const struct course *c, int argc, char **argv);
int cmd_read(const struct course *c, int argc, char **argv);
int cmd_reset(const struct course *c, int argc, char **argv);
int cmd_card(const struct course *c, int argc, char **argv);
int cmd_session(const struct course *c, int argc, char **argv);
int cmd_bench(const struct course *c, int argc, char **argv);
int cmd_list(const struct course *c, int argc, char **argv);
int cmd_lists(const struct course *c, int argc, char **argv);
int cmd_summary(const struct course *c, int argc, char **argv);
int cmd_dashboard(const struct course *c, int argc, char **argv);
int selftest(const struct course *c, int argc, char **argv);

/* The --help text of a command ("test", ...; NULL: the overview). */
void help(FILE *out, const char *command);
/* 1 when argv holds --help or -h (and prints the command's help). */
int wants_help(const char *command, int argc, char **argv);
/* "grader CMD: unknown argument 'X' (try grader CMD --help)"; returns 2. */
int bad_argument(const char *command, const char *arg);
/* The chapter an id names, or NULL after saying why (as `command`). */
const struct chapter *chapter_arg(const struct course *c, const char *command, const char *id);

/* The chapter a learner is on: the first available one not done, else the last available. */
const struct chapter *current_chapter(const struct course *c);

/* Resets a chapter's files to the stub (reset.c); the backup folder goes into backup. Returns
 * 0, 1 when there was nothing to reset, -1 after printing why. */
int reset_chapter(const struct course *c, const struct chapter *ch, char *backup, size_t len);
/* The page as text for a terminal (pandoc -t plain when installed, else the Markdown). */
char *book_text(const struct course *c, const struct chapter *ch);
/* Shows text in $PAGER (else less -R, else more); 0 when a pager ran. */
int page_text(const char *text);
/* Marks the chapter read in the progress file. */
void mark_read(const struct course *c, const struct chapter *ch);

#endif
