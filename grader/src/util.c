/* util.c: small file and time helpers the grader's commands share. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int path_format(char path[PATH_MAX], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(path, PATH_MAX, fmt, ap);
    va_end(ap);
    if (n >= 0 && n < PATH_MAX)
        return 0;
    path[0] = '\0';
    errno = ENAMETOOLONG;
    return -1;
}

int own_program(char path[PATH_MAX])
{
    ssize_t n = readlink("/proc/self/exe", path, PATH_MAX);
    if (n <= 0 || n >= PATH_MAX) { /* PATH_MAX: perhaps cut short */
        if (n > 0)
            errno = ENAMETOOLONG;
        path[0] = '\0';
        return -1;
    }
    path[n] = '\0';
    return 0;
}

int appendf(char *buf, size_t size, const char *fmt, ...)
{
    size_t used = strnlen(buf, size);
    if (used == size) /* not a string: nothing to append to */
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size - used ? 0 : -1;
}

int text_columns(const char *s)
{
    int c = 0;
    for (; *s; s++)
        c += ((unsigned char)*s & 0xc0) != 0x80;
    return c;
}

void print_wrapped(FILE *f, const char *text, int width, int indent)
{
    int col = 0;
    for (const char *w = text; *w;) {
        if (*w == '\n') { /* a line break of the text's own */
            fputc('\n', f);
            col = 0, w++;
            continue;
        }
        size_t spaces = strspn(w, " "), len = strcspn(w + spaces, " \n");
        char word[1024];
        snprintf(word, sizeof word, "%.*s", (int)len, w + spaces);
        int wc = text_columns(word);
        if (col > 0 && col + (int)spaces + wc > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > 0 || spaces) {
            fprintf(f, "%*s", (int)spaces, "");
            col += (int)spaces;
        }
        fputs(word, f);
        col += wc;
        w += spaces + len;
    }
    if (col > 0)
        fputc('\n', f);
}

char *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    ssize_t got = 0;
    while (buf && (got = read(fd, buf + n, cap - n - 1)) > 0) {
        n += (size_t)got;
        if (cap - n < 2) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger, cap *= 2;
        }
    }
    int saved = errno;
    close(fd);
    if (!buf) {
        errno = ENOMEM;
        return NULL;
    }
    if (got < 0) {
        free(buf);
        errno = saved;
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n, len -= (size_t)n;
    }
    return 0;
}

int write_file_atomic(const char *path, const char *data, size_t len)
{
    char tmp[PATH_MAX], dir[PATH_MAX];
    if (path_format(tmp, "%s.tmp-XXXXXX", path) != 0)
        return -1;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -1;
    /* The new file keeps the old one's mode (0644 for a new one): a learner who made it
     * private keeps it private. */
    struct stat old;
    mode_t mode = stat(path, &old) == 0 ? old.st_mode & 07777 : 0644;
    /* A crash before the rename leaves the old file whole; after it, the new one whole. */
    if (write_all(fd, data, len) != 0 || fchmod(fd, mode) != 0 || fsync(fd) != 0) {
        int saved = errno;
        close(fd);
        unlink(tmp);
        errno = saved;
        return -1;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
        return -1;
    }
    /* The rename itself is durable once the folder is synced. */
    snprintf(dir, sizeof dir, "%s", path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

int copy_file_new(const char *src, const char *dst)
{
    struct stat st;
    size_t len;
    char *data = read_file(src, &len);
    if (!data || stat(src, &st) != 0) {
        free(data);
        return -1;
    }
    int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
    int rc = fd < 0 ? -1 : write_all(fd, data, len);
    int saved = errno;
    if (fd >= 0 && (fsync(fd) != 0 || close(fd) != 0))
        rc = -1, saved = errno;
    free(data);
    errno = saved;
    return rc;
}

int make_dirs(const char *path)
{
    char buf[PATH_MAX];
    if (path_format(buf, "%s", path) != 0)
        return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

void time_iso(time_t t, char *buf, size_t len)
{
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

void time_stamp(time_t t, char *buf, size_t len)
{
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, len, "%Y%m%d-%H%M%S", &tm);
}

time_t time_parse_iso(const char *s)
{
    struct tm tm = {0};
    if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                     &tm.tm_min, &tm.tm_sec) != 6)
        return (time_t)-1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    return mktime(&tm);
}

void duration_words(long s, char *buf, size_t len)
{
    if (s < 0)
        s = 0;
    if (s >= 3600)
        snprintf(buf, len, "%ld h %02ld min", s / 3600, s % 3600 / 60);
    else if (s >= 60)
        snprintf(buf, len, "%ld min", s / 60);
    else
        snprintf(buf, len, "%ld s", s);
}

void spawn_attr_child(posix_spawnattr_t *at, int own_group)
{
    sigset_t none, dflt;
    sigemptyset(&none);
    sigemptyset(&dflt);
    sigaddset(&dflt, SIGINT);
    sigaddset(&dflt, SIGTERM);
    sigaddset(&dflt, SIGHUP);
    sigaddset(&dflt, SIGPIPE);
    sigaddset(&dflt, SIGWINCH);
    posix_spawnattr_init(at);
    posix_spawnattr_setsigmask(at, &none);
    posix_spawnattr_setsigdefault(at, &dflt);
    posix_spawnattr_setpgroup(at, 0);
    posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                     (own_group ? POSIX_SPAWN_SETPGROUP : 0));
}

void remove_flat_dir(const char *path)
{
    DIR *d = opendir(path);
    char file[PATH_MAX];
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            path_format(file, "%s/%s", path, e->d_name) == 0)
            unlink(file);
    if (d)
        closedir(d);
    rmdir(path);
}
