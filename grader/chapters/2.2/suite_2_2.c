/* suite_2_2.c: chapter 2.2, allreduce: one-shot, recursive doubling, ring, two-shot, selector. */
#include "suite.h"

#define CH "2.2"
#define PROG "pe_2_2"
#define BIG "1048579" /* 2^20 + 3 elements: more than the scratch, odd, not divisible by 3 */
#define BIG_HEAP "TSHMEM_SYMMETRIC_SIZE=24M" /* room for two vectors of BIG doubles */

/* The four algorithms, for the jobs their tests share (expect_ok_shared): where one job
 * checked them all, each algorithm's test needs no job of its own. */
#define ALGOS "oneshot,rd,ring,twoshot"

/* Small counts (0, 1, 7, 1023) of every kind, in place and not, on every team size. */
static void small_counts(const char *algo)
{
    expect_ok_shared(CH, PROG, "correct", ARGS(algo, "world", "0,1,7,1023", "both"),
                     ARGS("correct", ALGOS, "world", "0,1,7,1023", "both"), NULL, 30,
                     (int[]){1, 2, 3, 5, 8, END_PES});
}

/* 2^20 + 3 elements: several scratch-sized pieces, blocks that do not divide evenly. */
static void large_count(const char *algo)
{
    expect_ok_shared(CH, PROG, "correct", ARGS(algo, "world", BIG, "both"),
                     ARGS("correct", ALGOS, "world", BIG, "both"), ENV(BIG_HEAP), 30,
                     (int[]){2, 3, END_PES});
}

/* 1000 calls in a row, sizes from 0 to more than the scratch, no barrier in between. */
static void back_to_back(const char *algo)
{
    expect_ok_shared(CH, PROG, "backtoback", ARGS(algo, "world", "1000"),
                     ARGS("backtoback", ALGOS, "world", "1000"), NULL, 30,
                     (int[]){2, 3, END_PES});
}

Test(ch2_2, oneshot_counts_and_team_sizes, .description = "one-shot: counts 0, 1, 7, 1023 of every type, in place too, on 1, 2, 3, 5, 8 PEs")
{
    small_counts("oneshot");
}

Test(ch2_2, oneshot_large_count, .description = "one-shot: 2^20+3 elements, in place too, in scratch-sized pieces")
{
    large_count("oneshot");
}

Test(ch2_2, oneshot_1000_calls_back_to_back, .description = "one-shot: 1000 calls of changing sizes with no barrier between: flags are reused, never reset")
{
    back_to_back("oneshot");
}

Test(ch2_2, rd_counts_and_team_sizes, .description = "recursive doubling: counts 0, 1, 7, 1023, in place too, on 1, 2, 3, 5, 6, 8 PEs (fix-up for non-powers of two)")
{
    small_counts("rd");
    expect_ok_on(CH, PROG, "correct", ARGS("rd", "world", "1,7,1023", "both"), NULL, 30,
                 (int[]){6, END_PES});
}

Test(ch2_2, rd_large_count, .description = "recursive doubling: 2^20+3 elements, in place too, in slot-sized pieces")
{
    large_count("rd");
}

Test(ch2_2, rd_1000_calls_back_to_back, .description = "recursive doubling: 1000 calls of changing sizes with no barrier between")
{
    back_to_back("rd");
}

Test(ch2_2, ring_counts_and_team_sizes, .description = "ring: counts 0, 1, 7, 1023, in place too, on 1, 2, 3, 5, 8 PEs (empty and uneven blocks)")
{
    small_counts("ring");
}

Test(ch2_2, ring_large_count, .description = "ring: 2^20+3 elements, in place too; 10 PEs, more than the 8 scratch slots: credits must hold a sender back")
{
    large_count("ring");
    expect_ok_on(CH, PROG, "correct", ARGS("ring", "world", "300001", "both"), NULL, 30,
                 (int[]){10, END_PES});
}

Test(ch2_2, ring_1000_calls_back_to_back, .description = "ring: 1000 calls of changing sizes with no barrier between: credits carry over")
{
    back_to_back("ring");
}

Test(ch2_2, twoshot_counts_and_team_sizes, .description = "two-shot: counts 0, 1, 7, 1023, in place too, on 1, 2, 3, 5, 8 PEs")
{
    small_counts("twoshot");
}

Test(ch2_2, twoshot_large_count, .description = "two-shot: 2^20+3 elements, in place too")
{
    large_count("twoshot");
}

Test(ch2_2, twoshot_1000_calls_back_to_back, .description = "two-shot: 1000 calls of changing sizes with no barrier between")
{
    back_to_back("twoshot");
}

Test(ch2_2, typed_reductions_and_selector, .description = "tshmem_float_sum_reduce and siblings, and TSHMEM_ALGO_AUTO, at every size the selector splits")
{
    expect_ok_on(CH, PROG, "correct", ARGS("typed", "world", "0,1,7,64,1023,70001", "both"), NULL,
                 30, (int[]){1, 2, 3, 5, 8, END_PES});
    expect_ok_on(CH, PROG, "correct", ARGS("auto", "world", "1,60,200,1023," BIG, "both"),
                 ENV(BIG_HEAP), 30, (int[]){2, 3, END_PES});
    expect_ok_on(CH, PROG, "backtoback", ARGS("auto", "world", "1000"), NULL, 30,
                 (int[]){2, 5, END_PES});
}

Test(ch2_2, node_team_every_algorithm, .description = "every algorithm on TSHMEM_TEAM_NODE, with virtual nodes of 2 PEs too")
{
    expect_ok_on(CH, PROG, "correct", ARGS("all", "node", "0,1,7,1023,70001", "both"), NULL, 30,
                 (int[]){3, END_PES});
    expect_ok_on(CH, PROG, "correct", ARGS("all", "node", "0,1,7,1023,70001", "both"),
                 ENV("TSHMEM_PES_PER_NODE=2"), 30, (int[]){4, 5, END_PES});
}

Test(ch2_2, odd_pes_team_every_algorithm, .description = "every algorithm on a team of the odd PEs: team numbers are not world numbers")
{
    expect_ok_on(CH, PROG, "correct", ARGS("all", "odd", "0,1,7,1023,70001", "both"), NULL, 30,
                 (int[]){4, 7, END_PES});
}

Test(ch2_2, world_and_node_calls_alternate, .description = "world and node reductions alternate, every algorithm in turn: one scratch, two teams' flags")
{
    expect_ok_on(CH, PROG, "teams", ARGS("400"), NULL, 30, (int[]){3, 4, END_PES});
}

Test(ch2_2, sub_team_then_world, .description = "all PEs but the last on a team of their own, then the world, back to back: nobody writes a PE's scratch before it enters the call")
{
    expect_ok_on(CH, PROG, "subteam", ARGS("200"), NULL, 30, (int[]){3, 5, END_PES});
}

Test(ch2_2, rd_small_calls_need_no_entry_signal, .description = "recursive doubling: 1000 calls of at most TSHMEM_RD_EAGER_BYTES, PEs late by turns, send no entry signal; then mixed with larger calls and a sub-team's")
{
    expect_ok_on(CH, PROG, "eager", ARGS("1000"), NULL, 30, (int[]){2, 3, 8, END_PES});
}

/* Every PE reports a hash of its result's bits per algorithm: all PEs must agree. */
static void same_bits(int npes)
{
    static const char *algos[] = {"auto", "oneshot", "rd", "ring", "twoshot"};
    struct pe_job job;
    job_runv(&job, CH, PROG, npes, "bound", ARGS("100003"), NULL, 30);
    JOB_EXPECT_OK(&job);
    for (int a = 0; a < 5; a++) {
        char key[32];
        snprintf(key, sizeof key, "bits_%s", algos[a]);
        const char *first = job_value(&job, 0, key);
        cr_assert(first, "2.2 bound on %d PEs: PE 0 reported no %s", npes, key);
        for (int pe = 1; pe < npes; pe++) {
            const char *mine = job_value(&job, pe, key);
            cr_assert(mine && strcmp(mine, first) == 0,
                      "2.2 bound on %d PEs, algo %s: PE %d's result has other bits than PE 0's "
                      "(hash %s, PE 0: %s). Every PE must combine in the same order, or receive "
                      "the one result that another PE computed: see book 2.2, \"The idea\".",
                      npes, algos[a], pe, mine ? mine : "none", first);
        }
    }
    job_free(&job);
}

Test(ch2_2, float_sum_within_bound_same_bits_everywhere, .description = "float sums of fractions: within gamma(n-1) * sum|x| of the exact sum, and the same bits on every PE")
{
    same_bits(3);
    same_bits(8);
}

Test(ch2_2, bad_input_is_an_error, .description = "a bad team, non-symmetric dest or source, a PE outside the team, overlapping buffers, a bad algorithm: clear errors")
{
    expect_error(CH, PROG, 2, "bad", ARGS("team"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_float_sum_reduce: team 9 is not a team"));
    expect_error(CH, PROG, 2, "bad", ARGS("dest"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_float_sum_reduce: dest", "symmetric heap"));
    expect_error(CH, PROG, 2, "bad", ARGS("source"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_allreduce: source", "symmetric heap"));
    expect_error(CH, PROG, 2, "bad", ARGS("member"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_double_sum_reduce: PE 0 is not a member of team 5"));
    expect_error(CH, PROG, 2, "bad", ARGS("overlap"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_float_max_reduce: dest", "overlap"));
    expect_error(CH, PROG, 2, "bad", ARGS("algo"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_allreduce: algo 4 is not an allreduce algorithm"));
}

Test(ch2_2, count_mismatch_is_named, .description = "an allreduce whose count differs between PEs stops, naming both PEs and both counts, instead of writing past a buffer or hanging")
{
    for (int npes = 2; npes <= 4; npes += 2)
        expect_error(CH, PROG, npes, "mismatch", NULL, NULL, TSHMEM_EXIT_ERROR,
                     ARGS("tshmem_float_sum_reduce: PE ", "passed nreduce 1000", "nreduce 100 ",
                          "every PE of the team must pass the same nreduce"));
}
