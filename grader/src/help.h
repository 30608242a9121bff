/* help.h: every command's --help, and what the commands share to read their arguments. */
#ifndef GRADER_HELP_H
#define GRADER_HELP_H

#include <stdio.h>

/* The --help text of a command ("test", ...; NULL: the overview). */
void help(FILE *out, const char *command);
/* 1 when argv holds --help or -h (and prints the command's help). */
int wants_help(const char *command, int argc, char **argv);
/* "grader CMD: unknown argument 'X' (try grader CMD --help)"; returns 2. */
int bad_argument(const char *command, const char *arg);

#endif
