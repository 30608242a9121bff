/* stubgen.c: turns a tshmem reference solution file into its learner stub. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define USAGE "usage: stubgen INPUT OUTPUT\nTurns a solution file into its learner stub: each region\n" \
    "  /* BEGIN SOLUTION (Section name): task text */ ... /* END SOLUTION[, stub: CODE] */\n" \
    "becomes a TODO. OUTPUT may be - for stdout; missing parent directories are created.\n" \
    "Exit status: 0 done, 1 malformed input or I/O error, 2 bad usage.\n"

typedef struct { char *s; size_t off, full; } Line; /* s: NUL-ended copy; full: bytes with '\n' */
typedef struct {
    size_t begin, end, indent;   /* marker lines; indentation of BEGIN */
    char *section, *task, *stub; /* stub is NULL for a plain END */
} Region;
typedef struct { char *data; size_t len, cap; } Buf;
typedef struct {
    const char *path;
    char *src, *work, chapter[64];
    size_t src_len, nlines, nregions;
    Line *lines;
    Region *regions;
    long *body;      /* per line: index of the enclosing function's '{' line, or -1 */
    long *region_at; /* per line: index of the region holding it, or -1 */
} Doc;

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) { fputs("stubgen: out of memory\n", stderr); exit(1); }
    return p;
}

static char *xstrndup(const char *s, size_t n)
{
    char *d = xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static int fail(const Doc *doc, size_t line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%zu: ", doc->path, line + 1);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return -1;
}

static void buf_reserve(Buf *b, size_t n)
{
    if (b->len + n + 1 > b->cap) b->data = xrealloc(b->data, b->cap = (b->len + n) * 2 + 64);
}

static void buf_add(Buf *b, const char *s, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->data[b->len += n] = '\0';
}

static void buf_printf(Buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    b->len += (size_t)vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
}

/* Appends s as a C string literal, escaping '"' and '\'. */
static void buf_c_string(Buf *b, const char *s)
{
    for (buf_add(b, "\"", 1); *s; s++) {
        if (*s == '"' || *s == '\\') buf_add(b, "\\", 1);
        buf_add(b, s, 1);
    }
    buf_add(b, "\"", 1);
}

#define BLANKS " \t\r\f\v"
static const char *skip_blanks(const char *s) { return s + strspn(s, BLANKS); }
static int starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int ends_with(const char *s, const char *p)
{
    size_t n = strlen(s), pn = strlen(p);
    return n >= pn && strcmp(s + n - pn, p) == 0;
}

static int is_ident(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data = NULL;
    size_t cap = 0, n;
    if (!f) return NULL;
    *len = 0;
    do {
        if (*len == cap) data = xrealloc(data, cap = cap * 2 + 65536);
        n = fread(data + *len, 1, cap - *len, f);
        *len += n;
    } while (n > 0);
    if (ferror(f)) { free(data); data = NULL; }
    fclose(f);
    return data;
}

static void split_lines(Doc *doc)
{
    size_t start = 0, cap = 0;
    doc->work = xstrndup(doc->src, doc->src_len);
    for (size_t i = 0; i <= doc->src_len; i++) {
        if (i < doc->src_len && doc->src[i] != '\n') continue;
        if (i == doc->src_len && start == i) break;
        if (doc->nlines == cap) doc->lines = xrealloc(doc->lines, (cap = cap * 2 + 256) * sizeof(Line));
        doc->lines[doc->nlines++] = (Line){ doc->work + start, start, i - start + (i < doc->src_len) };
        size_t end = i; /* the work copy drops trailing blanks, to ease matching */
        for (doc->work[end] = '\0'; end > start && doc->work[end - 1] && strchr(BLANKS, doc->work[end - 1]);)
            doc->work[--end] = '\0';
        start = i + 1;
    }
}

static int parse_begin(const Doc *doc, size_t i, Region *r)
{
    const char *line = doc->lines[i].s, *t = skip_blanks(line), *in = NULL, *close = NULL, *end = t;
    r->begin = i;
    r->indent = (size_t)(t - line);
    if (starts_with(t, "/* BEGIN SOLUTION (") && ends_with(t, " */")) {
        in = t + strlen("/* BEGIN SOLUTION (");
        close = strchr(in, ')');
        end = t + strlen(t) - 3;
    }
    if (!close || close == in || !starts_with(close, "): ") || close + 3 >= end)
        return fail(doc, i, "BEGIN SOLUTION marker lacks a section or a task; "
                    "write it as `/* BEGIN SOLUTION (Section name): task text */`.");
    r->section = xstrndup(in, (size_t)(close - in));
    r->task = xstrndup(close + 3, (size_t)(end - close - 3));
    return 0;
}

static int parse_end(const Doc *doc, size_t i, Region *r)
{
    const char *pre = "/* END SOLUTION, stub: ", *t = skip_blanks(doc->lines[i].s);
    size_t n = strlen(t), pn = strlen(pre);
    r->end = i;
    if (strcmp(t, "/* END SOLUTION */") == 0) return 0;
    if (n > pn + 3 && starts_with(t, pre) && ends_with(t, " */")) {
        r->stub = xstrndup(t + pn, n - pn - 3);
        return 0;
    }
    return fail(doc, i, "malformed END SOLUTION marker; write `/* END SOLUTION */` "
                "or `/* END SOLUTION, stub: CODE */`.");
}

static int find_regions(Doc *doc)
{
    Region *open = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < doc->nlines; i++) {
        const char *line = doc->lines[i].s, *t = skip_blanks(line);
        int begin = starts_with(t, "/* BEGIN SOLUTION"), end = starts_with(t, "/* END SOLUTION");
        if (!begin && !end && (strstr(line, "/* BEGIN SOLUTION") || strstr(line, "/* END SOLUTION")))
            return fail(doc, i, "a SOLUTION marker must be alone on its line; "
                        "move the code beside it to a line of its own.");
        if (begin && open)
            return fail(doc, i, "BEGIN SOLUTION inside the region opened at line %zu; regions cannot nest, "
                        "so close that one with END SOLUTION first.", open->begin + 1);
        if (end && !open)
            return fail(doc, i, "END SOLUTION without a matching BEGIN SOLUTION; remove it or add "
                        "`/* BEGIN SOLUTION (Section name): task text */` before the solution code.");
        if (begin) {
            if (doc->nregions == cap)
                doc->regions = xrealloc(doc->regions, (cap = cap * 2 + 8) * sizeof(Region));
            open = memset(&doc->regions[doc->nregions++], 0, sizeof(Region));
            if (parse_begin(doc, i, open)) return -1;
        }
        if (end && parse_end(doc, i, open)) return -1;
        open = end ? NULL : open;
    }
    if (open)
        return fail(doc, open->begin, "BEGIN SOLUTION has no matching END SOLUTION; "
                    "add `/* END SOLUTION */` after the solution code.");
    return 0;
}

static void map_lines(Doc *doc)
{
    long fn = -1;
    doc->body = xrealloc(NULL, doc->nlines * sizeof(long));
    doc->region_at = xrealloc(NULL, doc->nlines * sizeof(long));
    for (size_t i = 0; i < doc->nlines; i++) {
        doc->region_at[i] = -1;
        if (fn < 0 && strcmp(doc->lines[i].s, "{") == 0) { doc->body[i] = -1; fn = (long)i; }
        else if (fn >= 0 && strcmp(doc->lines[i].s, "}") == 0) { doc->body[i] = -1; fn = -1; }
        else doc->body[i] = fn;
    }
    for (size_t r = 0; r < doc->nregions; r++)
        for (size_t i = doc->regions[r].begin; i <= doc->regions[r].end; i++)
            doc->region_at[i] = (long)r;
}

static int check_scopes(const Doc *doc)
{
    for (size_t k = 0; k < doc->nregions; k++) {
        const Region *r = &doc->regions[k];
        long fn = doc->body[r->begin];
        if (r->indent == 0 && fn >= 0)
            return fail(doc, r->begin, "BEGIN SOLUTION at column 0 is inside the function whose `{` is at "
                        "line %ld; indent it to mark a region inside that function.", fn + 1);
        if (r->indent > 0 && fn < 0)
            return fail(doc, r->begin, "indented BEGIN SOLUTION is not inside a function body; "
                        "put file-scope regions at column 0.");
        if (doc->body[r->end] != fn)
            return fail(doc, r->end, "the region opened at line %zu crosses a function boundary; keep "
                        "BEGIN and END SOLUTION in the same function, or both at file scope.", r->begin + 1);
    }
    return 0;
}

static int find_chapter(Doc *doc)
{
    const char *pattern = " # define TSHMEM_CHAPTER \"%63[^\"]\""; /* chapter ids are short */
    for (size_t i = 0; i < doc->nlines && !doc->chapter[0]; i++)
        if (sscanf(doc->lines[i].s, pattern, doc->chapter) != 1) doc->chapter[0] = '\0';
    if (doc->chapter[0] || doc->nregions == 0) return 0;
    return fail(doc, doc->regions[0].begin, "file has SOLUTION regions but no "
                "`#define TSHMEM_CHAPTER \"X.Y\"` line; add one near the top of the file.");
}

/* Blanks out comments and the contents of string and character literals. */
static void mask_code(char *s, size_t n)
{
    enum { CODE, LINE_COMMENT, BLOCK_COMMENT, QUOTED } st = CODE;
    char quote = 0;
    for (size_t i = 0; i < n; i++) {
        char next = i + 1 < n ? s[i + 1] : '\0';
        if (st == CODE && s[i] == '/' && (next == '/' || next == '*')) {
            st = next == '/' ? LINE_COMMENT : BLOCK_COMMENT;
            s[i] = s[i + 1] = ' ';
            i++;
        } else if (st == CODE && (s[i] == '"' || s[i] == '\'')) {
            st = QUOTED;
            quote = s[i];
        } else if ((st == BLOCK_COMMENT && s[i] == '*' && next == '/')
                   || (st == QUOTED && s[i] == '\\' && next && next != '\n')) {
            st = st == BLOCK_COMMENT ? CODE : QUOTED;
            s[i] = s[i + 1] = ' ';
            i++;
        } else if (s[i] == '\n') {
            st = st == BLOCK_COMMENT ? BLOCK_COMMENT : CODE;
        } else if (st == QUOTED && s[i] == quote) {
            st = CODE;
        } else if (st != CODE) {
            s[i] = ' ';
        }
    }
}

/* The masked text of lines [from, to) that lie outside all regions. */
static char *code_text(const Doc *doc, size_t from, size_t to)
{
    Buf b = { 0 };
    buf_add(&b, "", 0);
    for (size_t i = from; i < to; i++)
        if (doc->region_at[i] < 0) buf_printf(&b, "%s\n", doc->lines[i].s);
    mask_code(b.data, b.len);
    return b.data;
}

static int uses_ident(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name))
        if ((p == text || !is_ident(p[-1])) && !is_ident(p[n])) return 1;
    return 0;
}

/* The declared name of one parameter, or NULL for `void`, `...` or none. */
static char *param_name(const char *p, size_t n)
{
    const char *last = NULL;
    size_t len = 0;
    int depth = 0;
    for (size_t i = 0; i + 1 < n; i++) { /* function pointer: the name follows `(*` */
        size_t j = i + 1;
        while (p[i] == '(' && j < n && p[j] && strchr(BLANKS "\n*", p[j])) j++;
        if (p[i] == '(' && memchr(p + i, '*', j - i)) {
            p += j;
            for (n = 0; is_ident(p[n]); n++) {}
            break;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '[') depth++;
        else if (p[i] == ']') depth--;
        else if (depth == 0 && is_ident(p[i]) && (i == 0 || !is_ident(p[i - 1])))
            for (last = p + i, len = 0; i + len < n && is_ident(p[i + len]);) len++;
    }
    if (!last || (len == 4 && memcmp(last, "void", 4) == 0)) return NULL;
    return xstrndup(last, len);
}

static int is_header_bound(const char *line)
{
    const char *t = skip_blanks(line);
    return !*t || *t == '#' || ends_with(t, ";") || ends_with(t, "}") || ends_with(t, "*/");
}

/* Appends `(void)x;` for each parameter of the function at line `open` unused outside regions. */
static int unused_params(const Doc *doc, size_t open, size_t at, Buf *out)
{
    size_t top = open, close = open + 1;
    while (top > 0 && !is_header_bound(doc->lines[top - 1].s)) top--;
    while (close < doc->nlines && doc->body[close] == (long)open) close++;
    char *head = code_text(doc, top, open), *body = code_text(doc, open + 1, close);
    char *start = strchr(head, '('), *q = start;
    int depth = 0, done = 0;
    while (q && !done && *++q) {
        if (*q == '(' || *q == '[') depth++;
        else if (depth > 0 && (*q == ')' || *q == ']')) depth--;
        else if (depth == 0 && (*q == ',' || *q == ')')) {
            char *name = param_name(start + 1, (size_t)(q - start - 1));
            if (name && !uses_ident(body, name)) buf_printf(out, "%s(void)%s;", out->len ? " " : "", name);
            free(name);
            start = q;
            done = *q == ')';
        }
    }
    free(head);
    free(body);
    if (done) return 0;
    return fail(doc, at, "cannot find the parameter list of the function whose `{` is at line %zu; "
                "write its header `type name(params)` directly above that `{`.", open + 1);
}

static int emit_region(const Doc *doc, const Region *r, int first_in_function, Buf *out)
{
    const char *ind = doc->lines[r->begin].s;
    int w = (int)r->indent;
    if (r->indent == 0) {
        buf_printf(out, "/* TODO (chapter %s, \"%s\"): %s */\n", doc->chapter, r->section, r->task);
        return 0;
    }
    if (first_in_function) {
        Buf unused = { 0 };
        int rc = unused_params(doc, (size_t)doc->body[r->begin], r->begin, &unused);
        if (unused.len) buf_printf(out, "%.*s%s\n", w, ind, unused.data);
        free(unused.data);
        if (rc) return -1;
    }
    if (r->stub) {
        buf_printf(out, "%.*s/* TODO (\"%s\"): %s */\n", w, ind, r->section, r->task);
        buf_printf(out, "%.*s%s\n", w, ind, r->stub);
    } else {
        buf_printf(out, "%.*sTSHMEM_TODO(", w, ind);
        buf_c_string(out, r->section);
        buf_add(out, ", ", 2);
        buf_c_string(out, r->task);
        buf_add(out, ");\n", 3);
    }
    return 0;
}

static int make_stub(Doc *doc, Buf *out)
{
    long last_fn = -1;
    split_lines(doc);
    if (find_regions(doc)) return -1;
    map_lines(doc);
    if (check_scopes(doc) || find_chapter(doc)) return -1;
    buf_add(out, "", 0);
    for (size_t i = 0; i < doc->nlines; i++) {
        const Region *r = doc->region_at[i] < 0 ? NULL : &doc->regions[doc->region_at[i]];
        if (!r) {
            buf_add(out, doc->src + doc->lines[i].off, doc->lines[i].full);
            continue;
        }
        if (emit_region(doc, r, r->indent && doc->body[r->begin] != last_fn, out)) return -1;
        last_fn = r->indent ? doc->body[r->begin] : last_fn;
        i = r->end;
    }
    return 0;
}

static int make_parent_dirs(char *path)
{
    for (char *p = strchr(path, '/'); p; p = strchr(p + 1, '/')) {
        if (p == path) continue;
        *p = '\0';
        int bad = mkdir(path, 0777) != 0 && errno != EEXIST;
        *p = '/';
        if (bad) return -1;
    }
    return 0;
}

/* Writes OUTPUT.tmp then renames it, so a failure never leaves a partial OUTPUT. */
static int write_output(const char *path, const Buf *out)
{
    if (strcmp(path, "-") == 0) {
        if (fwrite(out->data, 1, out->len, stdout) == out->len && fflush(stdout) == 0) return 0;
        fprintf(stderr, "stubgen: cannot write to stdout: %s\n", strerror(errno));
        return -1;
    }
    size_t n = strlen(path);
    char *tmp = xrealloc(NULL, n + 5);
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 5);
    FILE *f = NULL;
    int ok = make_parent_dirs(tmp) == 0 && (f = fopen(tmp, "wb")) != NULL
             && fwrite(out->data, 1, out->len, f) == out->len;
    ok = (f == NULL || fclose(f) == 0) && ok && rename(tmp, path) == 0;
    if (!ok) {
        fprintf(stderr, "stubgen: cannot write %s: %s\n", path, strerror(errno));
        remove(tmp);
    }
    free(tmp);
    return ok ? 0 : -1;
}

static void free_doc(Doc *doc)
{
    for (size_t k = 0; k < doc->nregions; k++) {
        free(doc->regions[k].section);
        free(doc->regions[k].task);
        free(doc->regions[k].stub);
    }
    void *blocks[] = { doc->regions, doc->lines, doc->body, doc->region_at, doc->work, doc->src };
    for (size_t k = 0; k < sizeof blocks / sizeof *blocks; k++) free(blocks[k]);
}

int main(int argc, char **argv)
{
    int help = argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
    if (help || argc != 3) {
        fputs(USAGE, help ? stdout : stderr);
        return help ? 0 : 2;
    }
    Doc doc = { .path = argv[1] };
    Buf out = { 0 };
    doc.src = read_file(argv[1], &doc.src_len);
    if (!doc.src) {
        fprintf(stderr, "stubgen: cannot read %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    int rc = make_stub(&doc, &out) || write_output(argv[2], &out);
    free_doc(&doc);
    free(out.data);
    return rc ? 1 : 0;
}
