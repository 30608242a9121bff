/* bench_2_6.c: chapter 2.6's benchmark (see bench.h): the chapter's operation against its MPI
 * or memcpy baseline, in the same run, one "bench op=... impl=..." line each.
 * NEW-CHAPTER: what it measures, and how to run it by hand. */
#include "bench.h"

int main(int argc, char **argv)
{
    bench_args(argc, argv);
    /* NEW-CHAPTER: measure with bench_measure and print with bench_report (see bench_3_2.c). */
    fprintf(stderr, "bench_2_6: chapter 2.6's benchmark measures nothing yet: write its "
                    "operations in grader/chapters/2.6/bench_2_6.c\n");
    return 1;
}
