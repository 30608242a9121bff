/* main.c: the grader's entry point: which command runs (help.c has every --help). */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "help.h"
#include <term.h> /* after every header: it defines macros such as `lines` */

/* The dashboard needs a terminal that curses knows and that can move its cursor; TERM unset,
 * unknown or dumb gets the plain summary instead, with a sentence saying why. */
static int terminal_can_draw(void)
{
    const char *term = getenv("TERM");
    int err = 0;
    if (!term || !*term) {
        fprintf(stderr, "grader: TERM is not set, so here is the summary instead of the "
                        "dashboard (set it, e.g. TERM=xterm-256color, for the dashboard).\n");
        return 0;
    }
    if (setupterm(NULL, 1, &err) != OK) {
        fprintf(stderr, "grader: the terminal type '%s' is not one this machine knows, so here is "
                        "the summary instead of the dashboard (set TERM, e.g. TERM=xterm-256color, "
                        "for the dashboard).\n",
                term);
        return 0;
    }
    const char *cup = tigetstr("cup");
    int ok = cup && cup != (char *)-1;
    del_curterm(cur_term);
    if (!ok)
        fprintf(stderr, "grader: the terminal type '%s' cannot move its cursor, so here is the "
                        "summary instead of the dashboard (set TERM, e.g. TERM=xterm-256color, "
                        "for the dashboard).\n",
                term);
    return ok;
}


int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 &&
        (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
        help(stdout, argc > 2 ? argv[2] : NULL);
        return 0;
    }
    /* Every job the grader starts runs on this machine, also in a Slurm allocation's shell
       (tools/tshrun would spread it over the allocation's nodes); `grader bench --hosts`
       names other machines itself. A learner's own TSHRUN_SLURM wins. */
    setenv("TSHRUN_SLURM", "off", 0);
    struct course c;
    if (course_load(&c, argv[0]) != 0)
        return 2;
    static const struct {
        const char *name;
        int (*fn)(const struct course *, int, char **);
    } cmds[] = {{"test", cmd_test},   {"watch", cmd_watch},     {"hint", cmd_hint},
                {"read", cmd_read},   {"reset", cmd_reset},     {"card", cmd_card},
                {"bench", cmd_bench}, {"session", cmd_session}, {"list", cmd_list},
                {"lists", cmd_lists},
                {NULL, NULL}};
    int rc = -1;
    if (argc < 2)
        rc = isatty(0) && isatty(1) && terminal_can_draw() ? cmd_dashboard(&c, 0, NULL)
                                                          : cmd_summary(&c, 0, NULL);
    else if (!strcmp(argv[1], "selftest"))
        rc = wants_help("selftest", argc - 2, argv + 2) ? 0 : selftest(&c, argc - 2, argv + 2);
    else if (!strcmp(argv[1], "mutants"))
        rc = wants_help("mutants", argc - 2, argv + 2) ? 0 : cmd_mutants(&c, argc - 2, argv + 2);
    for (int i = 0; rc < 0 && cmds[i].name; i++)
        if (!strcmp(argv[1], cmds[i].name))
            rc = cmds[i].fn(&c, argc - 2, argv + 2);
    if (rc < 0) {
        fprintf(stderr, "grader: there is no command '%s'.\n\n", argv[1]);
        help(stderr, NULL);
        rc = 2;
    }
    course_free(&c);
    return rc;
}
