/* pe_3_6.c: chapter 3.6's PE program is Python (grader/chapters/3.6/pe_3_6.py); this launcher lets the
 * suite start it like every other PE program (tshrun -np N build/<variant>/bin/pe_3_6 scenario).
 * It finds the variant's module next to itself (build/<variant>/python) and the script in the
 * course, sets PYTHONPATH and becomes Debian's Python (the one python3-torch is installed for):
 * exec keeps the process, so tshrun, MPI and a hang report see the same PE. */
#define _GNU_SOURCE
#include <libgen.h> /* basename */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PYTHON "/usr/bin/python3"

int main(int argc, char **argv)
{
    char exe[PATH_MAX], root[PATH_MAX], script[PATH_MAX + 48], pypath[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        perror("pe_3_6: cannot find its own path in /proc/self/exe");
        return 127;
    }
    exe[n] = '\0';
    /* exe is <course>/build/<variant>/bin/<name>: cut at the last four slashes for the
     * course, at the last two for the variant. */
    char *cut[4];
    for (int i = 0; i < 4; i++) {
        cut[i] = strrchr(exe, '/');
        if (!cut[i]) {
            fprintf(stderr, "pe_3_6: %s is not inside build/<variant>/bin/\n", exe);
            return 127;
        }
        *cut[i] = '\0';
    }
    snprintf(root, sizeof root, "%s", exe);
    *cut[3] = *cut[2] = '/';
    snprintf(pypath, sizeof pypath, "%s/python", exe); /* build/<variant>/python */
    const char *name = strstr(basename(argv[0]), "bench") ? "bench_3_6.py" : "pe_3_6.py";
    snprintf(script, sizeof script, "%s/grader/chapters/3.6/%s", root, name);
    setenv("PYTHONPATH", pypath, 1);
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args)
        return 127;
    args[0] = PYTHON;
    args[1] = script;
    for (int i = 1; i < argc; i++)
        args[i + 1] = argv[i];
    execv(PYTHON, args);
    fprintf(stderr,
            "pe_3_6: cannot start %s %s: chapter 3.6 needs Debian's Python with "
            "PyTorch (make deps-torch installs python3-torch).\n",
            PYTHON, script);
    return 127;
}
