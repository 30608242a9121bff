/* lists.c: the lists that restate grader/course.json, written from it (grader lists, which
 * tools/update-lists runs): the Makefile's chapter lists and per-chapter targets, make help's
 * week lines, the README's roadmap rows and book/pages.txt's chapter entries. Each lives in its
 * file between two marker lines; everything outside the markers is the file's own. The
 * selftest calls lists_check, so a course.json edit that was not followed by tools/update-lists
 * is named with the command that fixes it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "help.h"
#include "lists.h"
#include "util.h"

/* "1.1-1.5": the first and last available chapters of a week. */
static void week_range(const struct course *c, int week, char *buf, size_t len)
{
    const char *first = NULL, *last = NULL;
    for (int i = 0; i < c->n; i++)
        if (c->chapters[i].week == week && c->chapters[i].available) {
            first = first ? first : c->chapters[i].id;
            last = c->chapters[i].id;
        }
    if (!first)
        snprintf(buf, len, "%s", "");
    else if (!strcmp(first, last))
        snprintf(buf, len, "%s", first);
    else
        snprintf(buf, len, "%s-%s", first, last);
}

static int max_week(const struct course *c)
{
    int w = 0;
    for (int i = 0; i < c->n; i++)
        w = c->chapters[i].week > w ? c->chapters[i].week : w;
    return w;
}

/* The make variable of chapters of one kind: "NAME := id:dir id:dir ...", wrapped. */
static void make_list(FILE *f, const struct course *c, const char *name, enum chapter_kind kind)
{
    int col = fprintf(f, "%s :=", name), indent = col + 1;
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        if (!ch->available || ch->kind != kind)
            continue;
        int w = (int)(strlen(ch->id) + strlen(ch->dir) + 2);
        if (col + w > 98) {
            fprintf(f, " \\\n%*s", indent - 1, "");
            col = indent - 1;
        }
        col += fprintf(f, " %s:%s", ch->id, ch->dir);
    }
    fprintf(f, "\n");
}

/* The chapters of a week that have `requires`: "3.3 and 3.7", "3.3, 3.5 and 3.7". */
static void week_ids(const struct course *c, int week, char *buf, size_t len)
{
    const char *ids[MAX_CHAPTERS];
    int n = 0;
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        if (ch->week == week && ch->available && ch->requires[0])
            ids[n++] = ch->id;
    }
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        appendf(buf, len, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ", ids[i]);
}

/* "id=3.3 tag=3_3 dir=... suite=test_3_3 ... gpu_tests=a,b,c": a chapter's names as words a
 * shell can eval one by one (every value is made of letters, digits, '.', '_', '-', '/' and
 * ','). Returns a static buffer. */
static const char *chapter_words(const struct chapter *ch)
{
    static const struct {
        const char *var;
        enum chapter_part part;
    } parts[] = {{"tag", CH_TAG},         {"dir", CH_DIR},           {"book", CH_BOOK},
                 {"grading", CH_GRADING}, {"suite", CH_SUITE},       {"suite_src", CH_SUITE_SRC},
                 {"pe", CH_PE},           {"pe_src", CH_PE_SRC},     {"bench", CH_BENCH},
                 {"bench_src", CH_BENCH_SRC}, {"make_target", CH_MAKE_TARGET}};
    static char out[2048];
    char buf[CHAPTER_PATH_MAX];
    size_t n = (size_t)snprintf(out, sizeof out, "id=%s week=%d slug=%s kind=%s", ch->id, ch->week,
                                ch->slug,
                                ch->kind == KIND_GPU ? "gpu" : ch->kind == KIND_PYTHON ? "python" : "c");
    for (size_t i = 0; i < sizeof parts / sizeof *parts && n < sizeof out; i++)
        n += (size_t)snprintf(out + n, sizeof out - n, " %s=%s", parts[i].var,
                              chapter_path(ch, parts[i].part, buf, sizeof buf));
    if (n < sizeof out)
        n += (size_t)snprintf(out + n, sizeof out - n, " min_gpus=%d all_gpus=%d gpu_tests=",
                              ch->min_gpus, ch->all_gpus);
    for (int t = 0; t < ch->ngpu_tests && n < sizeof out; t++)
        n += (size_t)snprintf(out + n, sizeof out - n, "%s%s", t ? "," : "", ch->gpu_tests[t]);
    return out;
}

static void makefile_block(FILE *f, const struct course *c)
{
    fprintf(f, "# id:folder of every available chapter, in roadmap order: CHAPTERS go into libtshmem,\n"
               "# GPU_CHAPTERS are CUDA + NVSHMEM (make gpu), PY_CHAPTERS a CPython module (make torch).\n");
    make_list(f, c, "CHAPTERS", KIND_C);
    make_list(f, c, "GPU_CHAPTERS", KIND_GPU);
    make_list(f, c, "PY_CHAPTERS", KIND_PYTHON);
    fprintf(f, "# make pe-X_Y: all that the grader builds to run chapter X.Y's suite (its PE program,\n"
               "# and those of the chapters its \"also_runs\" names).\n");
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        if (!ch->available || ch->kind == KIND_GPU)
            continue;
        char target[CHAPTER_PATH_MAX], pe[CHAPTER_PATH_MAX];
        fprintf(f, "%s: $(BUILD)/bin/%s", chapter_path(ch, CH_MAKE_TARGET, target, sizeof target),
                chapter_path(ch, CH_PE, pe, sizeof pe));
        for (int a = 0; a < ch->nalso; a++)
            fprintf(f, " $(BUILD)/bin/%s",
                    chapter_path(course_find(c, ch->also_runs[a]), CH_PE, pe, sizeof pe));
        fprintf(f, "\n");
    }
    fprintf(f, "# A GPU chapter's names, tests and GPUs, for tools/gpu-env and tools/gpu-test on a GPU\n"
               "# machine that may have no grader: make -s print-chapter ID=3.3.\n");
    for (int i = 0; i < c->n; i++)
        if (c->chapters[i].available && c->chapters[i].kind == KIND_GPU)
            fprintf(f, "CHAPTER_%s := %s\n", c->chapters[i].id, chapter_words(&c->chapters[i]));
    int weeks = max_week(c);
    fprintf(f, "# The README's commands: install what is missing, build, grade a week's chapters.\n"
               "WEEKS := ");
    for (int w = 1; w <= weeks; w++)
        fprintf(f, "week%d%s", w, w < weeks ? " " : "\n");
    for (int w = 1; w <= weeks; w++) {
        fprintf(f, "week%d: deps", w);
        for (int i = 0; i < c->n; i++) {
            const struct chapter *ch = &c->chapters[i];
            if (ch->week == w && ch->available && ch->needs_make[0])
                fprintf(f, " %s", ch->needs_make);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "# make help's lines for them.\ndefine HELP_WEEKS\n");
    for (int w = 1; w <= weeks; w++) {
        char range[32], hw[64];
        week_range(c, w, range, sizeof range);
        week_ids(c, w, hw, sizeof hw);
        fprintf(f, "@echo \"  make week%d        %s chapters %s\"\n", w,
                w == 1 ? "install what is missing, build your code, grade" : "the same for", range);
        if (hw[0])
            fprintf(f, "@echo \"                    (%s need GPUs and NVSHMEM: skipped, with the reason,"
                       " elsewhere;\"\n@echo \"                    make gpu builds and runs them)\"\n",
                    hw);
        for (int i = 0; i < c->n; i++) {
            const struct chapter *ch = &c->chapters[i];
            if (ch->week == w && ch->available && ch->needs[0])
                fprintf(f, "@echo \"                    (%s needs %s: make week%d installs it, as make %s does)\"\n",
                        ch->id, ch->needs, w, ch->needs_make);
        }
    }
    fprintf(f, "endef\n");
}

static void readme_block(FILE *f, const struct course *c)
{
    fprintf(f, "| id  | directory                     | chapter                                | available |\n"
               "|-----|-------------------------------|----------------------------------------|-----------|\n");
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        char dir[80], avail[160];
        snprintf(dir, sizeof dir, "`%s`", ch->dir);
        if (!ch->available)
            snprintf(avail, sizeof avail, "coming");
        else if (ch->requires[0])
            snprintf(avail, sizeof avail, "yes (needs %s)", ch->requires);
        else if (ch->needs[0])
            snprintf(avail, sizeof avail, "yes (needs %s: `make %s`)", ch->needs, ch->needs_make);
        else
            snprintf(avail, sizeof avail, "yes");
        fprintf(f, "| %-3s | %-29s | %-38s | %s |\n", ch->id, dir, ch->title, avail);
    }
}

/* book/pages.txt: "@chapter id | title | page | folder | files" for each chapter of the week
 * ("@coming id | title" for one not available yet). */
static void pages_block(FILE *f, const struct course *c, int week)
{
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        if (ch->week != week)
            continue;
        if (!ch->available) {
            fprintf(f, "@coming %s | %s\n", ch->id, ch->title);
            continue;
        }
        char page[CHAPTER_PATH_MAX];
        fprintf(f, "@chapter %s | %s | %s | %s |", ch->id, ch->title,
                chapter_path(ch, CH_PAGE, page, sizeof page), ch->dir);
        for (int k = 0; k < ch->nfiles; k++)
            fprintf(f, " %s", ch->files[k]);
        fprintf(f, "\n");
    }
}

/* One region of a file: the lines strictly between the line that starts with `begin` and the
 * next line that starts with `end`. */
struct region {
    const char *file;  /* relative to the course root */
    char begin[64];    /* a line starting with this opens it */
    const char *end;   /* and a line starting with this closes it */
    char *want;        /* what belongs there */
};

static char *block_text(const struct course *c, int what, int week)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    if (what == 0)
        makefile_block(f, c);
    else if (what == 1)
        readme_block(f, c);
    else
        pages_block(f, c, week);
    fclose(f);
    return text;
}

static int regions(const struct course *c, struct region *r, int max)
{
    int n = 0;
    r[n++] = (struct region){"Makefile", "# BEGIN lists", "# END lists", block_text(c, 0, 0)};
    r[n++] = (struct region){"README.md", "<!-- BEGIN roadmap", "<!-- END roadmap", block_text(c, 1, 0)};
    for (int w = 1; w <= max_week(c) && n < max; w++) {
        r[n] = (struct region){"book/pages.txt", "", "@end", block_text(c, 2, w)};
        snprintf(r[n].begin, sizeof r[n].begin, "@week %d", w);
        n++;
    }
    return n;
}

/* The file's text with the region replaced (NULL, and *why, when its markers are missing). */
static char *replaced(const char *text, const struct region *r, const char **why)
{
    const char *b = NULL, *e = NULL, *p = text;
    size_t bl = strlen(r->begin);
    for (; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
        if (!b && !strncmp(p, r->begin, bl) && (p[bl] == ' ' || p[bl] == '\n' || p[bl] == ':')) {
            b = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
        } else if (b && !strncmp(p, r->end, strlen(r->end))) {
            e = p;
            break;
        }
    }
    if (!b || !e) {
        *why = !b ? "its opening marker line is missing" : "its closing marker line is missing";
        return NULL;
    }
    char *out = NULL;
    if (asprintf(&out, "%.*s%s%s", (int)(b - text), text, r->want, e) < 0)
        return NULL;
    return out;
}

/* Compares (write == 0) or rewrites (write == 1) every region; prints one line per stale or
 * rewritten file into out. Returns how many files were stale, or -1 when one could not be read
 * or written. */
static int lists_sync(const struct course *c, int write, FILE *out)
{
    struct region r[16];
    int n = regions(c, r, 16), stale = 0, rc = 0;
    const char *files[] = {"Makefile", "README.md", "book/pages.txt"};
    for (size_t fi = 0; fi < sizeof files / sizeof *files; fi++) {
        char path[PATH_MAX];
        char *text = path_format(path, "%s/%s", c->root, files[fi]) == 0 ? read_file(path, NULL) : NULL;
        if (!text) {
            fprintf(out, "    cannot read %s\n", files[fi]);
            rc = -1;
            continue;
        }
        char *now = strdup(text);
        for (int i = 0; i < n && now; i++) {
            if (strcmp(r[i].file, files[fi]))
                continue;
            const char *why = "out of memory";
            char *next = r[i].want ? replaced(now, &r[i], &why) : NULL;
            if (!next) {
                fprintf(out, "    %s: the list \"%s\" cannot be written: %s (it ends at a line "
                             "starting with \"%s\")\n",
                        files[fi], r[i].begin, why, r[i].end);
                rc = -1;
            }
            free(now);
            now = next;
        }
        if (now && strcmp(now, text)) {
            stale++;
            if (write && write_file_atomic(path, now, strlen(now)) != 0) {
                fprintf(out, "    cannot write %s\n", files[fi]);
                rc = -1;
            } else {
                fprintf(out, "    %s %s\n", files[fi],
                        write ? "rewritten from grader/course.json"
                              : "does not say what grader/course.json says");
            }
        }
        free(now);
        free(text);
    }
    for (int i = 0; i < n; i++)
        free(r[i].want);
    return rc < 0 ? -1 : stale;
}

int lists_check(const struct course *c, char **detail)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int stale = f ? lists_sync(c, 0, f) : -1;
    if (f) {
        if (stale != 0)
            fprintf(f, "    run tools/update-lists: it writes these lists from grader/course.json\n");
        fclose(f);
    }
    *detail = text;
    return stale;
}

/* A chapter's names as shell assignments (tools/new-chapter: eval "$(grader lists --paths X.Y)"). */
static int print_paths(const struct course *c, const char *id)
{
    const struct chapter *ch = chapter_arg(c, "lists", id);
    if (!ch)
        return 2;
    printf("%s\n", chapter_words(ch));
    return 0;
}

int cmd_lists(const struct course *c, int argc, char **argv)
{
    if (wants_help("lists", argc, argv))
        return 0;
    if (argc == 2 && !strcmp(argv[0], "--paths"))
        return print_paths(c, argv[1]);
    if (argc != 1 || (strcmp(argv[0], "--check") && strcmp(argv[0], "--write")))
        return bad_argument("lists", argc ? argv[0] : "(none)");
    int write = !strcmp(argv[0], "--write"), stale = lists_sync(c, write, stdout);
    if (stale < 0)
        return 1;
    if (stale == 0)
        printf("lists: the Makefile, README.md and book/pages.txt say what grader/course.json says\n");
    else if (!write)
        printf("lists: %d file%s out of date: run tools/update-lists\n", stale, stale == 1 ? "" : "s");
    return !write && stale ? 1 : 0;
}
