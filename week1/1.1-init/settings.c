/* settings.c: every TSHMEM_* environment setting, in one table.
 *
 * Provided: you do not need to edit this file. Parsing, validation, defaults and the listing
 * that TSHMEM_DEBUG=1 prints at start-up all come from the table below.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tshmem_internal.h"

enum kind { SIZE, INT, FLAG, STRING };

struct setting {
    const char *name;
    enum kind kind;
    const char *fallback; /* the default, written as a user would write it */
    long min, max;        /* for INT */
    const char *about;
};

static const struct setting table[] = {
    {"TSHMEM_SYMMETRIC_SIZE", SIZE, "8M", 0, 0,
     "bytes of symmetric heap per PE; K, M, G and T suffixes (64M, 1G)"},
    {"TSHMEM_PES_PER_NODE", INT, "0", 0, 1 << 20,
     "split each machine into virtual nodes of this many consecutive PEs (0: one node per "
     "machine)"},
    {"TSHMEM_DEBUG", FLAG, "0", 0, 0,
     "extra checks (every collective call compared across the team's PEs on entry) and "
     "start-up information"},
    {"TSHMEM_HANG_WARN", INT, "10", 0, 86400,
     "seconds a wait may spin before the PE says what it waits for (0: never)"},
    {"TSHMEM_TRANSPORT", STRING, "shm", 0, 0,
     "how MPI itself moves bytes: shm, or tcp (loopback on one machine); tshrun reads it"},
    {"TSHMEM_LINK", STRING, "", 0, 0,
     "a network between virtual nodes, e.g. 12.5GB/s,5us: each off-node transfer takes that "
     "bandwidth and latency, as a network card's would (empty: as fast as MPI)"},
    {"TSHMEM_NET", STRING, "", 0, 0,
     "the network between nodes: ucx (chapter 2.6; the default once it is written and UCX "
     "starts) or proxy (chapter 2.5)"},
    {"TSHMEM_UCX_HELPER", STRING, "", 0, 0,
     "1 or 0: whether a helper thread progresses the UCX network (empty: where its transports "
     "need the target's help, as TCP does)"},
    {"TSHMEM_JOB_ID", STRING, "", 0, 0,
     "names this job's shared-memory segments; tshrun sets it"},
};
#define N_SETTINGS (sizeof table / sizeof table[0])

static const struct setting *find(const char *name)
{
    for (size_t i = 0; i < N_SETTINGS; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    tshmem_fail("settings", "%s is not a tshmem setting (see week1/1.1-init/settings.c).", name);
}

static const char *raw(const struct setting *s)
{
    const char *v = getenv(s->name);
    return (v && *v) ? v : s->fallback;
}

/* "64M" -> 67108864. Digits, then at most one of K, M, G, T (optionally followed by B or iB),
 * nothing else; anything that would not fit in 64 bits is refused, not wrapped. */
static int parse_size(const char *text, size_t *out)
{
    const char *p = text;
    uint64_t v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
            return -2;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    int shift = 0;
    switch (*p) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    case '\0': break;
    default: return -1;
    }
    if (shift) {
        p++;
        if (strcasecmp(p, "") != 0 && strcasecmp(p, "B") != 0 && strcasecmp(p, "iB") != 0)
            return -1;
        if (v > (UINT64_MAX >> shift))
            return -2;
        v <<= shift;
    }
    if (v > SIZE_MAX)
        return -2;
    *out = (size_t)v;
    return 0;
}

size_t tshmem_env_size(const char *name)
{
    const struct setting *s = find(name);
    const char *text = raw(s);
    size_t v = 0;
    int rc = parse_size(text, &v);
    if (rc == -1)
        tshmem_fail("tshmem_init", "%s='%s' is not a size: write a whole number of bytes with an "
                    "optional K, M, G or T suffix, e.g. %s=64M.", name, text, name);
    if (rc == -2)
        tshmem_fail("tshmem_init", "%s='%s' is larger than this machine can address (2^64 "
                    "bytes). Ask for less, e.g. %s=1G.", name, text, name);
    return v;
}

long tshmem_env_int(const char *name)
{
    const struct setting *s = find(name);
    const char *text = raw(s);
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < s->min || v > s->max)
        tshmem_fail("tshmem_init", "%s='%s' is not a whole number from %ld to %ld (%s).", name,
                    text, s->min, s->max, s->about);
    return v;
}

int tshmem_env_flag(const char *name)
{
    const char *text = raw(find(name));
    if (!strcmp(text, "1") || !strcasecmp(text, "yes") || !strcasecmp(text, "true"))
        return 1;
    if (!strcmp(text, "0") || !strcasecmp(text, "no") || !strcasecmp(text, "false"))
        return 0;
    tshmem_fail("tshmem_init", "%s='%s' should be 1 or 0.", name, text);
}

const char *tshmem_env_str(const char *name)
{
    return raw(find(name));
}

/* At start-up: every setting is read once, so that a bad value stops tshmem_init with a message
 * that names it, rather than the first call that happens to read it (a wait, minutes later, for
 * TSHMEM_HANG_WARN). The two that the runtime reads on its busy paths are kept in tshmem_g. */
void tshmem_env_check(void)
{
    for (size_t i = 0; i < N_SETTINGS; i++) {
        if (table[i].kind == SIZE)
            (void)tshmem_env_size(table[i].name);
        else if (table[i].kind == INT)
            (void)tshmem_env_int(table[i].name);
        else if (table[i].kind == FLAG)
            (void)tshmem_env_flag(table[i].name);
    }
    tshmem_g.debug = tshmem_env_flag("TSHMEM_DEBUG");
    tshmem_g.hang_warn = tshmem_env_int("TSHMEM_HANG_WARN");
}

void tshmem_env_print(void)
{
    printf("tshmem settings (PE %d):\n", tshmem_g.my_pe);
    for (size_t i = 0; i < N_SETTINGS; i++)
        printf("  %-22s = %-10s %s%s\n", table[i].name, raw(&table[i]),
               getenv(table[i].name) ? "" : "(default) ", table[i].about);
    fflush(stdout);
}
