/* stubgen-py.c: turns a tshmem reference Python file into its learner stub, as stubgen does
 * for C. Each region
 *     # BEGIN SOLUTION (Section name): task text
 *     ...
 *     # END SOLUTION                      (or: # END SOLUTION, stub: CODE)
 * becomes, when indented (inside a function),
 *     raise NotImplementedError("not written yet (chapter X.Y, section \"Section name\"): task")
 * or, with a stub, a "# TODO" comment and CODE; at column 0 a "# TODO" comment alone. The
 * chapter comes from a line TSHMEM_CHAPTER = "X.Y" of the file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define USAGE    "usage: stubgen-py INPUT.py OUTPUT.py\nTurns a solution file into its learner stub.\n"
#define BEGIN    "# BEGIN SOLUTION ("
#define END      "# END SOLUTION"
#define END_STUB "# END SOLUTION, stub: "

static int fail(const char *path, int line, const char *what)
{
    fprintf(stderr, "%s:%d: %s\n", path, line, what);
    return 1;
}

/* Writes s as the inside of a Python "..." literal. */
static void put_escaped(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\')
            fputc('\\', out);
        fputc(s[i], out);
    }
}

static int make_parent_dirs(char *path)
{
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        int bad = mkdir(path, 0777) != 0 && errno != EEXIST;
        *p = '/';
        if (bad)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs(USAGE, stderr);
        return 2;
    }
    FILE *in = fopen(argv[1], "r");
    if (!in) {
        fprintf(stderr, "stubgen-py: cannot read %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    char *buf = NULL, tmp[4200], chapter[32] = "";
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    char *line = NULL, *section = NULL, *task = NULL;
    size_t cap = 0, indent = 0;
    int n = 0, open_at = 0, rc = 0;
    while (!rc && getline(&line, &cap, in) > 0) {
        n++;
        line[strcspn(line, "\n")] = '\0';
        const char *t = line + strspn(line, " ");
        if (!chapter[0])
            sscanf(line, "TSHMEM_CHAPTER = \"%31[^\"]\"", chapter);
        if (!strncmp(t, BEGIN, strlen(BEGIN))) {
            const char *s = t + strlen(BEGIN), *close = strstr(s, "): ");
            if (open_at)
                rc =
                    fail(argv[1], n, "BEGIN SOLUTION inside another region; close that one first.");
            else if (!close || close == s || !close[3])
                rc = fail(argv[1], n, "write the marker as `# BEGIN SOLUTION (Section): task`.");
            else if (!chapter[0])
                rc =
                    fail(argv[1], n, "add a line TSHMEM_CHAPTER = \"X.Y\" above the first region.");
            if (rc)
                break;
            free(section);
            free(task);
            section = strndup(s, (size_t)(close - s));
            task = strdup(close + 3);
            indent = (size_t)(t - line);
            open_at = n;
        } else if (!strncmp(t, END, strlen(END))) {
            const char *stub =
                !strncmp(t, END_STUB, strlen(END_STUB)) ? t + strlen(END_STUB) : NULL;
            if (!open_at || (!stub && strcmp(t, END)))
                rc = fail(argv[1], n,
                          "END SOLUTION without BEGIN, or malformed (`# END SOLUTION`"
                          " or `# END SOLUTION, stub: CODE`).");
            else if (indent == 0 || stub)
                fprintf(out, "%*s# TODO (chapter %s, \"%s\"): %s\n%*s%s%s", (int)indent, "",
                        chapter, section, task, (int)indent, "", stub ? stub : "",
                        stub ? "\n" : "");
            else {
                fprintf(out,
                        "%*sraise NotImplementedError(\"not written yet (chapter %s, section "
                        "\\\"",
                        (int)indent, "", chapter);
                put_escaped(out, section, strlen(section));
                fputs("\\\"): ", out);
                put_escaped(out, task, strlen(task));
                fputs("\")\n", out);
            }
            open_at = 0;
        } else if (!open_at) {
            fprintf(out, "%s\n", line);
        }
    }
    if (!rc && open_at)
        rc = fail(argv[1], open_at, "BEGIN SOLUTION has no END SOLUTION.");
    fclose(out);
    fclose(in);
    free(line);
    free(section);
    free(task);
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
    FILE *f = NULL;
    if (!rc && (make_parent_dirs(tmp) != 0 || !(f = fopen(tmp, "w")) ||
                fwrite(buf, 1, len, f) != len || fclose(f) != 0 || rename(tmp, argv[2]) != 0)) {
        fprintf(stderr, "stubgen-py: cannot write %s: %s\n", argv[2], strerror(errno));
        rc = 1;
    }
    free(buf);
    return rc;
}
