/* util.h: small file, path, text and time helpers the grader's commands share. */
#ifndef GRADER_UTIL_H
#define GRADER_UTIL_H

#include <limits.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

/* Every path the grader makes is formatted here, into a buffer of PATH_MAX bytes (the most a
 * path may have). Returns 0, or -1 with errno ENAMETOOLONG when it does not fit: path is then
 * "", so that nothing opens a path cut short. */
int path_format(char path[PATH_MAX], const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* This grader's own program (/proc/self/exe). 0, or -1 with errno set. */
int own_program(char path[PATH_MAX]);
/* Appends to the string in buf, of size bytes in all. Returns 0, or -1 when what it appends was
 * cut short to fit. */
int appendf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Text written to f in lines of at most `width` columns (UTF-8 characters count one each),
 * broken at spaces; every line after the first starts with `indent` spaces. A word longer than
 * a line stands on a line of its own. */
void print_wrapped(FILE *f, const char *text, int width, int indent);
/* Columns of a UTF-8 string: one per character. */
int text_columns(const char *s);
/* The whole file, NUL-terminated (*len without the NUL), or NULL with errno set. */
char *read_file(const char *path, size_t *len);
/* Writes data to path atomically: a temp file beside it, fsync, rename, fsync of the folder.
 * The file keeps the mode it had (0644 when new). Returns 0, or -1 with errno set (path is
 * then unchanged). */
int write_file_atomic(const char *path, const char *data, size_t len);
/* Copies src to dst, which must not exist yet (O_EXCL); keeps the mode. 0 or -1 with errno. */
int copy_file_new(const char *src, const char *dst);
/* mkdir -p; 0 or -1 with errno. */
int make_dirs(const char *path);
/* Removes a folder and the files in it (one level deep: no subfolders). */
void remove_flat_dir(const char *path);

/* "2026-11-21T15:30:00" (local time) and "20261121-153000", for logs and file names. */
void time_iso(time_t t, char *buf, size_t len);
void time_stamp(time_t t, char *buf, size_t len);
time_t time_parse_iso(const char *s); /* (time_t)-1 if it is not one */
/* "1 h 05 min", "12 min", "40 s" */
void duration_words(long seconds, char *buf, size_t len);
/* Attributes for a child the grader starts: no signal blocked, INT, TERM, HUP, PIPE and WINCH
 * at their defaults (whatever the grader does with them), and a process group of its own when
 * own_group, so that the terminal's Ctrl-C reaches only the grader, which stops the group. */
void spawn_attr_child(posix_spawnattr_t *at, int own_group);

#endif
