/* commands.h: the grader's commands, one entry point each, in the file of the command's name
 * (cmd_test in test.c, ...; cmd_list in help.c, cmd_summary in roadmap.c, cmd_dashboard in
 * dash.c): what main.c calls. */
#ifndef GRADER_COMMANDS_H
#define GRADER_COMMANDS_H

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
int cmd_mutants(const struct course *c, int argc, char **argv); /* mutants.c */
int selftest(const struct course *c, int argc, char **argv);

#endif
