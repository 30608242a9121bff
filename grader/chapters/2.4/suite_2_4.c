/* suite_2_4.c: chapter 2.4, overlapping communication: non-blocking allreduce, a progress
 * thread, and data-parallel training whose gradient buckets overlap the backward pass. */
#include "suite.h"

#define CH "2.4"
#define PROG "pe_2_4"
#define COUNTS "0,1,7,1023,40000" /* 40000 floats: more than one chunk of the landing zone */

Test(ch2_4, start_wait_counts_and_team_sizes, .description = "allreduce_nb: counts 0, 1, 7, 1023, 40000 of every type, in place too, all 40 in flight at once, on 1, 2, 3, 5, 8 PEs")
{
    expect_ok_on(CH, PROG, "nb", ARGS(COUNTS, "both", "fwd", "2"), NULL, 30,
                 (int[]){1, 2, 3, 5, 8, END_PES});
}

Test(ch2_4, waits_in_reverse_order, .description = "allreduce_nb: 40 requests in flight, waited for last to first")
{
    expect_ok_on(CH, PROG, "nb", ARGS(COUNTS, "both", "rev", "3"), NULL, 30,
                 (int[]){2, 3, END_PES});
}

Test(ch2_4, waits_in_a_different_random_order_on_each_pe, .description = "allreduce_nb: 40 requests in flight, each PE waits in its own random order")
{
    expect_ok_on(CH, PROG, "nb", ARGS(COUNTS, "both", "random", "3"), NULL, 30,
                 (int[]){2, 4, END_PES});
}

Test(ch2_4, test_polls_until_done, .description = "tshmem_test: polling every request until it says done (and sets the handle to NULL)")
{
    expect_ok_on(CH, PROG, "nb", ARGS(COUNTS, "both", "test", "3"), NULL, 30,
                 (int[]){2, 3, END_PES});
}

Test(ch2_4, waitall, .description = "tshmem_waitall: 40 requests in one call, 3 rounds")
{
    expect_ok_on(CH, PROG, "nb", ARGS(COUNTS, "both", "all", "3"), NULL, 30,
                 (int[]){2, 3, END_PES});
}

Test(ch2_4, max_requests_in_flight_many_rounds, .description = "allreduce_nb: TSHMEM_MAX_REQUESTS (64) in flight, 10 rounds with no reset: chunk numbers only grow")
{
    expect_ok_on(CH, PROG, "nb", ARGS("1,2,3,5,8,13,21,3000", "both", "random", "10"), NULL, 30,
                 (int[]){2, 3, END_PES});
}

Test(ch2_4, large_count, .description = "allreduce_nb: 2^20+3 elements of every type, in place too: hundreds of chunks through the two landing buffers")
{
    expect_ok_on(CH, PROG, "nb", ARGS("1048579", "both", "rev", "1"),
                 ENV("TSHMEM_SYMMETRIC_SIZE=80M"), 30, (int[]){2, 3, END_PES});
}

Test(ch2_4, two_teams_share_the_landing_zone, .description = "allreduce_nb on WORLD and on a team of PEs 1..n-1, interleaved, 8 in flight: a piece may land only after its receiver granted the chunk")
{
    expect_ok_on(CH, PROG, "teams", ARGS("8"), NULL, 30, (int[]){3, 4, END_PES});
}

Test(ch2_4, small_calls_recursive_doubling, .description = "allreduce_nb of up to TSHMEM_NB_RD_BYTES: recursive doubling, flags only between partners, on 2, 5 and 8 PEs; small calls on two teams sharing the landing zone")
{
    expect_ok_on(CH, PROG, "smallrd", ARGS("3"), NULL, 30, (int[]){2, 5, 8, END_PES});
    expect_ok_on(CH, PROG, "teams", ARGS("8", "60"), NULL, 30, (int[]){3, 4, END_PES});
}

Test(ch2_4, progress_while_the_program_works, .description = "in flight during blocking allreduces and puts on the same team, and done after 0.5 s without any tshmem call (a progress thread)")
{
    expect_ok_on(CH, PROG, "busy", ARGS("-"), NULL, 30, (int[]){2, 3, END_PES});
}

Test(ch2_4, train_matches_one_process, .description = "training, 4 layers, one bucket per layer: weights on 1, 2, 3, 4 PEs equal a one-process run within 1e-4 relative; same bits on every PE after every step; loss falls")
{
    expect_ok_on(CH, PROG, "train", ARGS("4", "64", "60", "50", "0", "1"), NULL, 30,
                 (int[]){1, 2, 3, 4, END_PES});
}

Test(ch2_4, train_buckets_by_size, .description = "training with 20 KB buckets (several layers per bucket), 3 PEs: matches the one-process run; buckets start during the backward pass")
{
    expect_ok_on(CH, PROG, "train", ARGS("5", "48", "60", "50", "20000", "1"), NULL, 30,
                 (int[]){3, END_PES});
}

Test(ch2_4, train_without_overlap, .description = "training with overlap off (one blocking allreduce after the backward pass), 2 PEs: matches the one-process run")
{
    expect_ok_on(CH, PROG, "train", ARGS("3", "64", "60", "50", "0", "0"), NULL, 30,
                 (int[]){2, END_PES});
}

Test(ch2_4, wait_twice, .description = "waiting twice for the same request stops with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("twice"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_wait", "TSHMEM_REQUEST_NULL", "already"));
}

Test(ch2_4, null_and_stale_requests, .description = "a NULL request pointer, and a copy of a handle already completed, stop with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("null"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_wait", "req = NULL"));
    expect_error(CH, PROG, 2, "bad", ARGS("stale"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_test", "not a request in flight"));
}

Test(ch2_4, too_many_in_flight, .description = "the 65th request in flight stops with a message naming TSHMEM_MAX_REQUESTS")
{
    expect_error(CH, PROG, 2, "bad", ARGS("toomany"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_allreduce_nb", "64 requests in flight", "TSHMEM_MAX_REQUESTS"));
}

Test(ch2_4, finalize_with_requests_outstanding, .description = "tshmem_finalize with a request never waited for stops with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("finalize"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_finalize", "1 non-blocking request in flight"));
}

Test(ch2_4, dest_not_symmetric, .description = "a dest outside the symmetric heap stops tshmem_allreduce_nb with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("dest"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_allreduce_nb: dest", "symmetric heap"));
}
