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

Test(ch1_4, reserved_area_is_not_the_heap, .description = "a signal, atomic or wait on a barrier flag of the runtime's reserved area stops with a clear error")
{
    expect_error(CH, PROG, 2, "reserved", ARGS("signal"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_signal_op: sig_addr", "runtime's reserved area (offset 0, 8 bytes)"));
    expect_error(CH, PROG, 2, "reserved", ARGS("atomic"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_uint64_atomic_add: dest", "runtime's reserved area"));
    expect_error(CH, PROG, 2, "reserved", ARGS("wait"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_uint64_wait_until: ivar", "runtime's reserved area"));
}

Test(ch1_4, unaligned_word_is_an_error, .description = "an atomic or signal at an address that is not a multiple of 8 stops with a clear error")
{
    expect_error(CH, PROG, 2, "unaligned", ARGS("atomic"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_uint64_atomic_fetch_add: dest", "is not 8-byte aligned"));
    expect_error(CH, PROG, 2, "unaligned", ARGS("signal"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_signal_op: sig_addr", "is not 8-byte aligned"));
}

Test(ch1_4, skipped_barrier_is_named, .description = "a barrier one PE skips is named, with the call that PE made instead (with and without TSHMEM_DEBUG=1)")
{
    const char *const needles[] = {"PE 0 called tshmem_barrier_all and PE 1 called "
                                   "tshmem_finalize, as their call 2 on TSHMEM_TEAM_WORLD",
                                   NULL};
    expect_error(CH, PROG, 2, "skip_barrier", NULL, NULL, TSHMEM_EXIT_ERROR, needles);
    expect_error(CH, PROG, 2, "skip_barrier", NULL, ENV("TSHMEM_DEBUG=1"), TSHMEM_EXIT_ERROR,
                 needles);
}

Test(ch1_4, hang_warning_names_the_barrier, .description = "a barrier that waits long says so itself: which call, and which PE has not entered it")
{
    struct pe_job job;
    job_runv(&job, CH, PROG, 2, "late", ARGS("3"), ENV("TSHMEM_HANG_WARN=1"), 30);
    JOB_EXPECT_OK(&job);
    cr_assert(job_count(&job, "tshmem: PE 0: tshmem_barrier_all: has waited 1 s in its call 2 on "
                              "TSHMEM_TEAM_WORLD") == 1 &&
                  job_count(&job, "not yet entered by: PE 1 (at its call 1, "
                                  "tshmem_barrier_all)") == 1,
              "1.4 late on 2 PEs: PE 1 came 3 s late to the second barrier with "
              "TSHMEM_HANG_WARN=1; expected PE 0 to warn once, naming tshmem_barrier_all, its "
              "call 2 on TSHMEM_TEAM_WORLD and PE 1 as not entered\n%s", job.output);
    job_free(&job);
}
