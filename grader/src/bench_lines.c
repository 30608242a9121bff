/* bench_lines.c: reading the benchmark protocol's lines and putting them side by side. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_lines.h"

/* One "key=value" of the line [l, e) into the matching field. */
static void field(struct bench_line *b, const char *key, size_t klen, const char *val, size_t vlen,
                  int *seen)
{
    char v[64];
    snprintf(v, sizeof v, "%.*s", (int)(vlen < 63 ? vlen : 63), val);
#define KEY(k) (klen == strlen(k) && !strncmp(key, k, klen))
    if (KEY("op"))
        snprintf(b->op, sizeof b->op, "%.31s", v), *seen |= 1;
    else if (KEY("impl"))
        snprintf(b->impl, sizeof b->impl, "%.15s", v), *seen |= 2;
    else if (KEY("bytes"))
        b->bytes = (size_t)strtoull(v, NULL, 10), *seen |= 4;
    else if (KEY("median_us"))
        b->median_us = strtod(v, NULL), *seen |= 8;
    else if (KEY("pes"))
        b->pes = atoi(v);
    else if (KEY("iters"))
        b->iters = atoi(v);
    else if (KEY("min_us"))
        b->min_us = strtod(v, NULL);
    else if (KEY("max_us"))
        b->max_us = strtod(v, NULL);
    else if (KEY("algbw_GBps"))
        b->algbw = strtod(v, NULL);
    else if (KEY("busbw_GBps"))
        b->busbw = strtod(v, NULL);
#undef KEY
}

int bench_parse(struct bench_set *set, const char *out, const char *run)
{
    int added = 0;
    for (const char *l = out ? out : ""; *l && set->n < MAX_BENCH_LINES;) {
        const char *e = strchrnul(l, '\n');
        if (!strncmp(l, "# shared_gpus", 13))
            set->shared_gpus = 1;
        if (!strncmp(l, "bench ", 6)) {
            struct bench_line b = {0};
            int seen = 0;
            for (const char *p = l + 6; p < e;) {
                while (p < e && *p == ' ')
                    p++;
                const char *w = p;
                while (p < e && *p != ' ')
                    p++;
                const char *eq = memchr(w, '=', (size_t)(p - w));
                if (eq)
                    field(&b, w, (size_t)(eq - w), eq + 1, (size_t)(p - eq - 1), &seen);
            }
            if (seen == 15 && b.median_us > 0) { /* op, impl, bytes and a time at least */
                snprintf(b.run, sizeof b.run, "%s", run);
                set->lines[set->n++] = b;
                added++;
            }
        }
        l = *e ? e + 1 : e;
    }
    return added;
}

/* The line of (run, op, bytes) whose impl is tshmem (want_base 0) or a baseline (1). The
 * baseline is taken from the reference's run first: one MPI figure for the whole table. */
static const struct bench_line *find(const struct bench_set *s, const char *run, const char *op,
                                     size_t bytes, int want_base)
{
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->n; i++) {
            const struct bench_line *b = &s->lines[i];
            int base = strcmp(b->impl, "tshmem") != 0;
            if (base != want_base || strcmp(b->op, op) || b->bytes != bytes)
                continue;
            if (!want_base && !strcmp(b->run, run))
                return b;
            if (want_base && (pass == 1 || !strcmp(b->run, "reference")))
                return b;
        }
    return NULL;
}

static double speed(const struct bench_line *fast, const struct bench_line *slow)
{
    return fast && slow && fast->median_us > 0 ? slow->median_us / fast->median_us : 0;
}

struct bench_best bench_best(const struct bench_set *s)
{
    struct bench_best best = {0};
    for (int i = 0; i < s->n; i++) {
        const struct bench_line *y = &s->lines[i];
        if (strcmp(y->run, "yours") || strcmp(y->impl, "tshmem"))
            continue;
        double m = speed(y, find(s, "", y->op, y->bytes, 1));
        double r = speed(y, find(s, "reference", y->op, y->bytes, 0));
        if (m > best.vs_mpi) {
            best.vs_mpi = m, best.mpi_bytes = y->bytes;
            snprintf(best.mpi_op, sizeof best.mpi_op, "%s", y->op);
        }
        if (r > best.vs_ref) {
            best.vs_ref = r, best.ref_bytes = y->bytes;
            snprintf(best.ref_op, sizeof best.ref_op, "%s", y->op);
        }
    }
    return best;
}

static const char *size_text(size_t b, char *buf, size_t len)
{
    if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%zu KiB", b >> 10);
    else
        snprintf(buf, len, "%zu B", b);
    return buf;
}

static const char *num(double v, const char *fmt, char *buf, size_t len)
{
    if (v > 0)
        snprintf(buf, len, fmt, v);
    else
        snprintf(buf, len, "-");
    return buf;
}

/* Microseconds with the digits that matter: 0.04, 12.3, 1534. */
static const char *usec(double v, char *buf, size_t len)
{
    return num(v, v < 10 ? "%.2f" : v < 1000 ? "%.1f" : "%.0f", buf, len);
}

/* Whether line i's operation came up on an earlier line: each operation is shown once, at
 * its first line. */
static int op_seen_before(const struct bench_set *s, int i)
{
    for (int j = 0; j < i; j++)
        if (!strcmp(s->lines[j].op, s->lines[i].op))
            return 1;
    return 0;
}

void bench_table(FILE *out, const struct bench_set *s)
{
    for (int i = 0; i < s->n; i++) {
        const struct bench_line *first = &s->lines[i];
        if (op_seen_before(s, i))
            continue;
        /* The column is named after the baseline whose figures it shows (find's choice: the
           first baseline line of the operation): MPI, or its own name (memcpy, nccl, ...). An
           operation with several baselines shows the first; the others stay in the CSV. */
        const struct bench_line *fb = find(s, "", first->op, first->bytes, 1);
        const char *base = fb && strcmp(fb->impl, "mpi") ? fb->impl : "MPI";
        fprintf(out, "%s on %d PEs\n%8s %-27s  %-23s  %s\n", first->op, first->pes, "",
                "latency (us)", "busbw (GB/s)", "speed");
        fprintf(out, "%8s %8s %9s %8s  %7s %7s %7s  %8s %8s\n", "size", "yours", "reference", base,
                "yours", "ref", base, "you/ref", "ref/base");
        for (int j = 0; j < s->n; j++) { /* sizes in the order they were measured */
            const struct bench_line *b = &s->lines[j];
            int dup = 0;
            for (int k = 0; k < j; k++)
                dup |= !strcmp(s->lines[k].op, b->op) && s->lines[k].bytes == b->bytes;
            if (strcmp(b->op, first->op) || dup)
                continue;
            const struct bench_line *y = find(s, "yours", b->op, b->bytes, 0),
                                    *r = find(s, "reference", b->op, b->bytes, 0),
                                    *m = find(s, "", b->op, b->bytes, 1);
            char t[9][32];
            fprintf(out, "%8s %8s %9s %8s  %7s %7s %7s  %8s %8s\n", size_text(b->bytes, t[0], 32),
                    usec(y ? y->median_us : 0, t[1], 32), usec(r ? r->median_us : 0, t[2], 32),
                    usec(m ? m->median_us : 0, t[3], 32), num(y ? y->busbw : 0, "%.2f", t[4], 32),
                    num(r ? r->busbw : 0, "%.2f", t[5], 32),
                    num(m ? m->busbw : 0, "%.2f", t[6], 32), num(speed(y, r), "%.2fx", t[7], 32),
                    num(speed(r, m), "%.2fx", t[8], 32));
        }
        fprintf(out, "\n");
    }
    fprintf(out, "speed: how many times faster (above 1) the first is, from the median "
                 "latencies.\n");
}

/* The worst of `run`'s ratios against the baseline for op over every size: 0 if none. */
static double worst_of(const struct bench_set *s, const char *run, const char *op, size_t *at)
{
    double worst = 0;
    for (int i = 0; i < s->n; i++) {
        const struct bench_line *b = &s->lines[i];
        if (strcmp(b->run, run) || strcmp(b->impl, "tshmem") || strcmp(b->op, op))
            continue;
        const struct bench_line *m = find(s, "", op, b->bytes, 1);
        double r = speed(b, m);
        if (r > 0 && (worst == 0 || r < worst)) {
            worst = r;
            *at = b->bytes;
        }
    }
    return worst;
}

int bench_worst(FILE *out, const char *chapter, const struct bench_set *s)
{
    int lines = 0;
    for (int i = 0; i < s->n; i++) {
        const struct bench_line *first = &s->lines[i];
        if (op_seen_before(s, i))
            continue;
        size_t ref_at = 0, your_at = 0;
        double ref = worst_of(s, "reference", first->op, &ref_at);
        double yours = worst_of(s, "yours", first->op, &your_at);
        if (ref == 0 && yours == 0)
            continue; /* no baseline for this operation */
        const char *base = find(s, "", first->op, ref_at ? ref_at : your_at, 1)->impl;
        int below = (ref > 0 && ref < 1) || (yours > 0 && yours < 1);
        /* A memcpy of the same bytes is not a rival but the ceiling: 1.3's put on one machine
         * is that copy plus its checks, so it can come close to 1x, never above. */
        int ceiling = !strcmp(base, "memcpy");
        int slower = below && !s->shared_gpus && !ceiling;
        char t[4][32];
        fprintf(out, "  %-4s %-22s %2d PEs  reference %6s at %-8s  yours %6s at %-8s%s%s%s\n",
                chapter, first->op, first->pes, num(ref, "%.2fx", t[0], 32),
                ref > 0 ? size_text(ref_at, t[1], 32) : "-", num(yours, "%.2fx", t[2], 32),
                yours > 0 ? size_text(your_at, t[3], 32) : "-",
                slower ? "  slower than " : s->shared_gpus ? "  (PEs shared a GPU)" : "",
                !slower                ? ""
                : !strcmp(base, "mpi") ? "MPI"
                                       : base,
                below && ceiling ? "  of memcpy, its ceiling" : "");
        lines++;
    }
    return lines;
}

int bench_csv(const char *path, const char *chapter, const struct bench_set *s)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "chapter,run,op,impl,pes,bytes,iters,median_us,min_us,max_us,algbw_GBps,"
               "busbw_GBps\n");
    for (int i = 0; i < s->n; i++) {
        const struct bench_line *b = &s->lines[i];
        fprintf(f, "%s,%s,%s,%s,%d,%zu,%d,%.3f,%.3f,%.3f,%.3f,%.3f\n", chapter, b->run, b->op,
                b->impl, b->pes, b->bytes, b->iters, b->median_us, b->min_us, b->max_us, b->algbw,
                b->busbw);
    }
    return fclose(f);
}
