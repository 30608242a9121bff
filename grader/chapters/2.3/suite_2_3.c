/* suite_2_3.c: chapter 2.3, AllGather: tshmem_fcollectmem and tshmem_broadcastmem, every
 * algorithm, every size class, back-to-back calls, two teams, and bad arguments. */
#include "suite.h"

#define CH "2.3"
#define PROG "pe_2_3"
#define SMALL "0,1,7,1023"
#define BIG "4194307" /* 4 MiB + 3 bytes per PE */
/* 3 PEs x (4 MiB + 3) of fcollect dest plus a source fit in 24M per PE. */
#define BIG_HEAP ENV("TSHMEM_SYMMETRIC_SIZE=24M")
#define EVERY_COUNT ((int[]){1, 2, 3, 5, 8, END_PES})
#define FEW_COUNTS ((int[]){2, 3, END_PES})

/* Every algorithm of each operation, for the jobs the tests share (expect_ok_shared): where
 * one job checked them all, each algorithm's test needs no job of its own. */
#define FCOLLECT_ALGOS "ring,direct,hybrid,oneshot,auto"
#define BROADCAST_ALGOS "ring,direct,hybrid,auto"

/* One algorithm of one operation: the small sizes on 1, 2, 3, 5 and 8 PEs, then 4 MiB + 3
 * bytes per PE on 2 and 3 PEs. Every size runs out of place and in place; broadcast from
 * every root. */
static void every_size(const char *op, const char *algo)
{
    const char *all = strcmp(op, "fcollect") == 0 ? FCOLLECT_ALGOS : BROADCAST_ALGOS;
    expect_ok_shared(CH, PROG, op, ARGS(algo, "world", SMALL), ARGS(op, all, "world", SMALL),
                     NULL, 30, EVERY_COUNT);
    expect_ok_shared(CH, PROG, op, ARGS(algo, "world", BIG), ARGS(op, all, "world", BIG),
                     BIG_HEAP, 30, FEW_COUNTS);
}

Test(ch2_3, fcollect_ring, .description = "ring allgather: 0, 1, 7, 1023 bytes on 1-8 PEs, 4 MiB + 3 on 2-3, in place too")
{
    every_size("fcollect", "ring");
}

Test(ch2_3, fcollect_direct, .description = "direct-push allgather: 0, 1, 7, 1023 bytes on 1-8 PEs, 4 MiB + 3 on 2-3, in place too")
{
    every_size("fcollect", "direct");
}

Test(ch2_3, fcollect_hybrid, .description = "hybrid allgather (one node: direct inside it): every size, in place too")
{
    every_size("fcollect", "hybrid");
}

Test(ch2_3, fcollect_oneshot, .description = "one-shot allgather (each PE reads every peer's staged block): every size, in place too, and 1000 calls in a row with broadcasts between")
{
    every_size("fcollect", "oneshot");
    expect_ok_on(CH, PROG, "back_to_back", ARGS("oneshot", "world", "1000"), NULL, 30,
                 (int[]){3, 8, END_PES});
}

Test(ch2_3, fcollect_auto, .description = "tshmem_fcollectmem, the selector's choice: every size, in place too")
{
    every_size("fcollect", "auto");
}

Test(ch2_3, broadcast_ring, .description = "pipelined ring broadcast from every root: 0, 1, 7, 1023 bytes on 1-8 PEs, 4 MiB + 3 on 2-3")
{
    every_size("broadcast", "ring");
}

Test(ch2_3, broadcast_direct, .description = "direct broadcast from every root: every size, dest == source on the root too")
{
    every_size("broadcast", "direct");
}

Test(ch2_3, broadcast_hybrid, .description = "hybrid broadcast from every root (one node: direct): every size, in place too")
{
    every_size("broadcast", "hybrid");
}

Test(ch2_3, broadcast_auto, .description = "tshmem_broadcastmem, the selector's choice, from every root: every size")
{
    every_size("broadcast", "auto");
}

Test(ch2_3, hybrid_across_pretend_nodes, .description = "the hybrid's leaders' ring and pulls, with the team split into pretend nodes of 2 and 3 PEs, consecutive and strided")
{
    /* groups=K: the hybrid groups the PEs as if on different nodes (tshmem_collect_test_groups);
     * memory stays shared, so the ring of leaders runs for real before chapter 2.5. */
    expect_ok_on(CH, PROG, "fcollect", ARGS("hybrid", "world", SMALL, "groups=2"), NULL, 30,
                 (int[]){3, 5, END_PES});
    expect_ok_on(CH, PROG, "broadcast", ARGS("hybrid", "world", SMALL, "groups=-3"), NULL, 30,
                 (int[]){5, 8, END_PES});
    expect_ok_on(CH, PROG, "back_to_back", ARGS("hybrid", "world", "600", "groups=-2"), NULL, 30,
                 (int[]){5, END_PES});
    expect_ok_on(CH, PROG, "back_to_back", ARGS("hybrid", "world", "600", "groups=3"), NULL, 30,
                 (int[]){8, END_PES});
    expect_ok_on(CH, PROG, "fcollect", ARGS("hybrid", "world", BIG, "groups=1"), BIG_HEAP, 30,
                 (int[]){3, END_PES});
    expect_ok_on(CH, PROG, "broadcast", ARGS("hybrid", "world", BIG, "groups=1"), BIG_HEAP, 30,
                 (int[]){3, END_PES});
}

Test(ch2_3, back_to_back_calls, .description = "1000 fcollects and broadcasts in a row per algorithm, sizes and roots changing, no barrier, PEs late at random")
{
    static const char *algos[] = {"ring", "direct", "hybrid", "auto"};
    for (int a = 0; a < 4; a++)
        expect_ok_on(CH, PROG, "back_to_back", ARGS(algos[a], "world", "1000"), NULL, 30,
                     (int[]){3, END_PES});
    expect_ok_on(CH, PROG, "back_to_back", ARGS("auto", "world", "1000"), NULL, 30,
                 (int[]){8, END_PES});
}

Test(ch2_3, world_then_node_team, .description = "calls on TSHMEM_TEAM_WORLD and TSHMEM_TEAM_NODE in turn, on the same buffers")
{
    static const char *algos[] = {"ring", "direct", "hybrid", "auto"};
    for (int a = 0; a < 4; a++)
        expect_ok_on(CH, PROG, "two_teams", ARGS(algos[a], "world", "300"), NULL, 30,
                     (int[]){3, END_PES});
}

Test(ch2_3, node_team_on_virtual_nodes, .description = "every algorithm on TSHMEM_TEAM_NODE with TSHMEM_PES_PER_NODE=2 (nodes of 2, 2, 1 PEs)")
{
    static const char *algos[] = {"ring", "direct", "hybrid", "auto"};
    for (int a = 0; a < 4; a++)
        expect_ok_on(CH, PROG, "back_to_back", ARGS(algos[a], "node", "300"),
                     ENV("TSHMEM_PES_PER_NODE=2"), 30, (int[]){5, END_PES});
    expect_ok_on(CH, PROG, "fcollect", ARGS("auto", "node", SMALL), ENV("TSHMEM_PES_PER_NODE=2"),
                 30, (int[]){4, END_PES});
}

Test(ch2_3, bad_team_or_root_is_an_error, .description = "an unknown team or a root outside the team stops with a clear error")
{
    expect_error(CH, PROG, 2, "bad_args", ARGS("team"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_fcollectmem: team 7 is not a team"));
    expect_error(CH, PROG, 2, "bad_args", ARGS("broadcast_team"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_broadcastmem: team -1 is not a team"));
    expect_error(CH, PROG, 3, "bad_args", ARGS("root"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_broadcastmem: pe_root 3 is out of range"));
    expect_error(CH, PROG, 2, "bad_args", ARGS("negative_root"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_broadcastmem_algo: pe_root -1 is out of range"));
}

Test(ch2_3, bad_buffers_are_errors, .description = "a dest off the heap or too small, a root's source off the heap, an overlap: each stops with a clear error")
{
    expect_error(CH, PROG, 2, "bad_args", ARGS("dest"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_fcollectmem: dest", "is not in the symmetric heap"));
    expect_error(CH, PROG, 2, "bad_args", ARGS("broadcast_dest"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_broadcastmem: dest", "is not in the symmetric heap"));
    expect_error(CH, PROG, 2, "bad_args", ARGS("small"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_fcollectmem: dest", "is too small"));
    expect_error(CH, PROG, 2, "bad_args", ARGS("source"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_broadcastmem: source", "is not in the symmetric heap"));
    expect_error(CH, PROG, 2, "bad_args", ARGS("overlap"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_fcollectmem: source", "overlaps dest"));
}

Test(ch2_3, bad_algorithm_is_an_error, .description = "an algorithm that is not ring, direct, hybrid, one-shot (fcollect) or auto stops with a clear error, and so does one-shot across nodes")
{
    expect_error(CH, PROG, 2, "bad_args", ARGS("algo"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_fcollectmem_algo: algo 99 is not"));
    expect_error(CH, PROG, 2, "bad_args", ARGS("broadcast_algo"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_broadcastmem_algo: algo 2 is not"));
    expect_error(CH, PROG, 2, "bad_args", ARGS("oneshot_across"), ENV("TSHMEM_PES_PER_NODE=1"),
                 TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_fcollectmem_algo: TSHMEM_ALGO_ONESHOT reads every team PE's memory "
                      "directly, but world PE"));
}

Test(ch2_3, fcollect_size_mismatch_is_named, .description = "an fcollect whose nbytes differs between PEs stops, naming both PEs and both sizes")
{
    expect_error(CH, PROG, 2, "mismatch", ARGS("fcollect"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("PE 0 passed nbytes 16 and PE 1 passed nbytes 4096 to tshmem_fcollectmem"));
    expect_error(CH, PROG, 3, "mismatch", ARGS("fcollect"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_fcollectmem: PE 0 passed nbytes 16 and PE ", "passed nbytes 4096"));
}

Test(ch2_3, broadcast_root_mismatch_is_named, .description = "a broadcast whose pe_root differs between PEs stops, naming both PEs and both roots")
{
    expect_error(CH, PROG, 2, "mismatch", ARGS("broadcast"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("PE 0 passed pe_root 0 and PE 1 passed pe_root 1 to tshmem_broadcastmem"));
}
