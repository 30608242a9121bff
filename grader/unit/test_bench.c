#define _GNU_SOURCE
/* test_bench.c: the benchmark protocol's lines, read back, side by side, and the ratios. */
#include "bench_lines.h"
#include "unit.h"

#define LINE(run_impl, bytes, us)                                                                  \
    "bench op=put impl=" run_impl " pes=2 bytes=" bytes " iters=20 median_us=" us                  \
    " min_us=1.0 max_us=99.0 algbw_GBps=1.5 busbw_GBps=1.5\n"

static const char *reference = "tshmem: some other line\n" LINE("tshmem", "8", "2.0")
    LINE("mpi", "8", "4.0") LINE("tshmem", "1048576", "100.0") LINE(
        "mpi", "1048576",
        "150.0") "bench op=put impl=tshmem bytes=64\n"                   /* no time: ignored */
                 "bench op=put impl=mpi pes=2 bytes=16 median_us=oops\n" /* not a number: ignored */
                 "pe 0: bench op=put impl=tshmem bytes=8 median_us=1\n"; /* not at the start:
                                                                            ignored */

static const char *yours =
    LINE("tshmem", "8", "1.0") LINE("mpi", "8", "8.0") LINE("tshmem", "1048576", "200.0");

Test(bench, parses_only_whole_lines)
{
    static struct bench_set set;
    cr_assert_eq(bench_parse(&set, reference, "reference"), 4);
    const struct bench_line *b = &set.lines[2];
    cr_assert_str_eq(b->op, "put");
    cr_assert_str_eq(b->impl, "tshmem");
    cr_assert_str_eq(b->run, "reference");
    cr_assert_eq(b->bytes, 1048576);
    cr_assert_eq(b->pes, 2);
    cr_assert_eq(b->iters, 20);
    cr_assert_float_eq(b->median_us, 100.0, 1e-9);
    cr_assert_float_eq(b->busbw, 1.5, 1e-9);
    cr_assert_eq(bench_parse(&set, "", "yours"), 0);
    cr_assert_eq(bench_parse(&set, NULL, "yours"), 0);
}

Test(bench, best_ratios_use_the_references_baseline)
{
    static struct bench_set set;
    bench_parse(&set, reference, "reference");
    bench_parse(&set, yours, "yours");
    struct bench_best b = bench_best(&set);
    /* 8 B: yours 1.0 us, reference 2.0, MPI (the reference run's) 4.0: 4x MPI, 2x reference */
    cr_assert_float_eq(b.vs_mpi, 4.0, 1e-9, "best vs MPI is %g", b.vs_mpi);
    cr_assert_float_eq(b.vs_ref, 2.0, 1e-9, "best vs the reference is %g", b.vs_ref);
    cr_assert_eq(b.mpi_bytes, 8);
    cr_assert_str_eq(b.mpi_op, "put");
}

/* The reference's and your runs in set (after the line `first`, if any), and what bench_table
 * (worst 0) or bench_worst for chapter ch (worst 1) writes of it: a string to free. */
static char *printed(struct bench_set *set, const char *first, int worst, const char *ch)
{
    if (first)
        bench_parse(set, first, "reference");
    bench_parse(set, reference, "reference");
    bench_parse(set, yours, "yours");
    char *t = NULL;
    size_t len;
    FILE *f = open_memstream(&t, &len);
    if (worst)
        bench_worst(f, ch, set);
    else
        bench_table(f, set);
    fclose(f);
    return t;
}

Test(bench, table_and_csv)
{
    static struct bench_set set;
    char *t = printed(&set, NULL, 0, NULL);
    cr_assert(strstr(t, "put on 2 PEs"), "%s", t);
    cr_assert(strstr(t, "     8 B     1.00      2.00     4.00"), "the 8 B row: %s", t);
    cr_assert(strstr(t, "   2.00x    2.00x"), "8 B: you/ref 2x, ref/MPI 2x: %s", t);
    cr_assert(strstr(t, "   1 MiB    200.0     100.0    150.0"), "the 1 MiB row: %s", t);
    cr_assert(strstr(t, "   0.50x    1.50x"), "1 MiB: you/ref 0.5x, ref/MPI 1.5x: %s", t);
    for (char *l = t; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
        cr_assert(strcspn(l, "\n") <= 80, "fits 80 columns: %.*s", (int)strcspn(l, "\n"), l);
    free(t);
    char path[] = "/tmp/tshmem-unit-csv-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    cr_assert_eq(bench_csv(path, "2.2", &set), 0);
    char *csv = read_file(path, NULL);
    unlink(path);
    cr_assert(csv && !strncmp(csv, "chapter,run,op,impl,pes,bytes,", 30), "%s", csv);
    cr_assert(strstr(csv, "2.2,yours,put,tshmem,2,8,20,1.000,"), "%s", csv);
    free(csv);
}

Test(bench, shared_gpus_say_no_slower)
{
    static struct bench_set set, shared;
    char *t = printed(&set, NULL, 1, "2.2");
    /* yours at 1 MiB: 200 us against MPI's 150, 0.75x */
    cr_assert(strstr(t, "slower than MPI"), "a ratio below 1 on separate GPUs is slower: %s", t);
    cr_assert(!set.shared_gpus, "no line said the GPUs were shared");
    free(t);
    t = printed(&shared, "# shared_gpus pes=2 gpus=1: the PEs share GPUs\n", 1, "3.7");
    cr_assert(shared.shared_gpus, "the line is read");
    cr_assert(!strstr(t, "slower"), "PEs that share a GPU measure no link: %s", t);
    cr_assert(strstr(t, "(PEs shared a GPU)"), "and the line says so: %s", t);
    cr_assert(strstr(t, "0.75x"), "the ratio itself is still shown: %s", t);
    free(t);
}

Test(bench, memcpy_is_a_ceiling_not_a_rival)
{
    static struct bench_set set;
    bench_parse(&set, LINE("tshmem", "8", "0.030") LINE("memcpy", "8", "0.024"), "reference");
    char *t = NULL;
    size_t len;
    FILE *f = open_memstream(&t, &len);
    bench_worst(f, "1.3", &set);
    fclose(f);
    cr_assert(strstr(t, "0.80x at 8 B"), "the ratio is shown: %s", t);
    cr_assert(!strstr(t, "slower"), "a copy's own speed is not a rival to be slower than: %s", t);
    cr_assert(strstr(t, "of memcpy, its ceiling"), "the line says what the baseline is: %s", t);
    free(t);
}

Test(bench, the_baseline_column_names_the_figures_it_shows)
{
    /* Two baselines of one operation: the column shows the first one's figures (4.0 us), so
       it must carry the first one's name, not the last one's. */
    static struct bench_set set;
    bench_parse(&set, LINE("tshmem", "8", "2.0") LINE("memcpy", "8", "4.0") LINE("file", "8", "90.0"),
                "reference");
    char *t = NULL;
    size_t len;
    FILE *f = open_memstream(&t, &len);
    bench_table(f, &set);
    fclose(f);
    cr_assert(strstr(t, "memcpy") && !strstr(t, "file"), "the column is memcpy's: %s", t);
    cr_assert(strstr(t, "4.00"), "memcpy's 4.0 us is in the table: %s", t);
    free(t);
}
