/* main.c: the grader's entry point: which command runs (help.c has every --help). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "help.h"

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 &&
        (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
        help(stdout, argc > 2 ? argv[2] : NULL);
        return 0;
    }
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
        rc = isatty(0) && isatty(1) ? cmd_dashboard(&c, 0, NULL) : cmd_summary(&c, 0, NULL);
    else if (!strcmp(argv[1], "selftest"))
        rc = wants_help("selftest", argc - 2, argv + 2) ? 0 : selftest(&c, argc - 2, argv + 2);
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
