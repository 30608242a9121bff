/* suite_1_4.c: chapter 1.4, signals, waits, atomics and barriers. */
#include "suite.h"

#define CH "1.4"
#define PROG "pe_1_4"

Test(ch1_4, put_signal_data_visible_with_signal, .description = "whenever a signal is seen, its put's data is seen (3000 rounds)")
{
    expect_ok_on(CH, PROG, "signal_visibility", NULL, NULL, 30, (int[]){1, 2, 3, 4, 8, END_PES});
}

Test(ch1_4, signal_add_and_set, .description = "SIGNAL_ADD from every PE sums exactly; SIGNAL_SET overwrites")
{
    expect_ok_on(CH, PROG, "signal_add_set", NULL, NULL, 30, (int[]){1, 2, 3, 8, END_PES});
}

Test(ch1_4, every_comparison, .description = "wait_until, signal_wait_until and test for EQ NE GT GE LT LE")
{
    expect_ok_on(CH, PROG, "compare", NULL, NULL, 30, (int[]){1, 2, 3, END_PES});
}

Test(ch1_4, atomics_under_contention, .description = "fetch_add totals exact from all PEs; compare_swap elects one winner")
{
    expect_ok_on(CH, PROG, "atomics", NULL, NULL, 30, (int[]){1, 2, 4, 8, END_PES});
}

Test(ch1_4, barrier_all_separates_phases, .description = "thousands of barrier_all rounds: no PE runs ahead")
{
    expect_ok_on(CH, PROG, "phases", ARGS("barrier_all", "3000"), NULL, 30, (int[]){1, 2, 3, END_PES});
    expect_ok_on(CH, PROG, "phases", ARGS("barrier_all", "1000"), NULL, 30, (int[]){5, 8, END_PES});
}

Test(ch1_4, sync_all_separates_phases, .description = "quiet + sync_all rounds: no PE runs ahead")
{
    expect_ok_on(CH, PROG, "phases", ARGS("sync_all", "2000"), NULL, 30, (int[]){2, 4, END_PES});
}

Test(ch1_4, team_barrier_on_node_team, .description = "tshmem_barrier and team_sync on TSHMEM_TEAM_NODE, with virtual nodes too")
{
    expect_ok_on(CH, PROG, "phases", ARGS("node", "1000"), NULL, 30, (int[]){3, END_PES});
    expect_ok_on(CH, PROG, "phases", ARGS("node", "1000"), ENV("TSHMEM_PES_PER_NODE=2"), 30,
                 (int[]){4, 5, END_PES});
}

Test(ch1_4, bad_arguments_are_errors, .description = "an unknown comparison or signal operation stops with a clear error")
{
    expect_error(CH, PROG, 2, "bad_args", ARGS("cmp"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_uint64_wait_until: comparison 99"));
    expect_error(CH, PROG, 2, "bad_args", ARGS("op"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_signal_op: sig_op 7"));
}
