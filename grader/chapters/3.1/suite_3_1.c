/* suite_3_1.c: chapter 3.1, MoE all-to-all: tshmem_alltoallmem (auto, and each algorithm on
 * its own), then dispatch and combine against a single-process reference of the same routing,
 * and bad arguments. */
#include "suite.h"

#define CH "3.1"
#define PROG "pe_3_1"
#define SMALL "0,1,7,1023"
#define EVERY_COUNT ((int[]){1, 2, 3, 5, 8, END_PES})

Test(ch3_1, alltoall_sizes, .description = "tshmem_alltoallmem: 0, 1, 7, 1023 bytes per block on 1, 2, 3, 5, 8 PEs; 1 MiB + 3 per block on 2 and 3")
{
    expect_ok_on(CH, PROG, "alltoall", ARGS("world", SMALL), NULL, 30, EVERY_COUNT);
    expect_ok_on(CH, PROG, "alltoall", ARGS("world", "1048579"), ENV("TSHMEM_SYMMETRIC_SIZE=16M"),
                 30, ((int[]){2, 3, END_PES}));
}

Test(ch3_1, alltoall_back_to_back, .description = "400 all-to-alls in a row, sizes changing, no barrier, PEs late at random, every PE reading its dest between calls")
{
    expect_ok_on(CH, PROG, "alltoall_back_to_back", ARGS("world", "400"), NULL, 30,
                 ((int[]){3, END_PES}));
    expect_ok_on(CH, PROG, "alltoall_back_to_back", ARGS("world", "150"), NULL, 30,
                 ((int[]){8, END_PES}));
}

Test(ch3_1, alltoall_teams, .description = "all-to-all on TSHMEM_TEAM_NODE of virtual nodes (2, 2, 1 PEs), on a strided team (world PEs 0, 2, 4), and on WORLD across virtual nodes")
{
    expect_ok_on(CH, PROG, "alltoall_back_to_back", ARGS("node", "100"),
                 ENV("TSHMEM_PES_PER_NODE=2"), 30, ((int[]){5, END_PES}));
    expect_ok_on(CH, PROG, "alltoall_back_to_back", ARGS("even", "100"), NULL, 30,
                 ((int[]){5, END_PES}));
    expect_ok_on(CH, PROG, "alltoall", ARGS("world", "0,1,7,1023,70001"),
                 ENV("TSHMEM_PES_PER_NODE=2"), 30, ((int[]){4, END_PES}));
}

Test(ch3_1, alltoall_direct, .description = "the direct algorithm forced (TSHMEM_ALGO_DIRECT): 0, 1, 7, 1023 bytes per block on 1, 2, 3, 5, 8 PEs, 200 calls in a row on 3")
{
    expect_ok_on(CH, PROG, "direct_alltoall", ARGS("world", SMALL), NULL, 30, EVERY_COUNT);
    expect_ok_on(CH, PROG, "direct_back_to_back", ARGS("world", "200"), NULL, 30,
                 ((int[]){3, END_PES}));
}

Test(ch3_1, alltoall_oneshot, .description = "the one-shot pull forced (TSHMEM_ALGO_ONESHOT): 0, 1, 7 bytes and the stage's limit per block on 1, 2, 3, 5, 8 PEs; 400 calls in a row on 3 PEs and 300 on 8, reading dest between calls; on a strided team; across virtual nodes (getmem)")
{
    expect_ok_on(CH, PROG, "oneshot_alltoall", ARGS("world", "0,1,7,max,1"), NULL, 30,
                 EVERY_COUNT);
    expect_ok_on(CH, PROG, "oneshot_back_to_back", ARGS("world", "400"), NULL, 30,
                 ((int[]){3, END_PES}));
    expect_ok_on(CH, PROG, "oneshot_back_to_back", ARGS("world", "300"), NULL, 30,
                 ((int[]){8, END_PES}));
    expect_ok_on(CH, PROG, "oneshot_back_to_back", ARGS("even", "300"), NULL, 30,
                 ((int[]){5, END_PES}));
    expect_ok_on(CH, PROG, "oneshot_back_to_back", ARGS("world", "300"),
                 ENV("TSHMEM_PES_PER_NODE=2"), 30, ((int[]){3, END_PES}));
}

Test(ch3_1, alltoall_bad_arguments, .description = "an unknown team, a dest off the heap or too small, source overlapping dest: each stops with a clear error")
{
    expect_error(CH, PROG, 2, "alltoall_bad", ARGS("team"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_alltoallmem: team 9 is not a team"));
    expect_error(CH, PROG, 2, "alltoall_bad", ARGS("dest"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_alltoallmem: dest", "is not in the symmetric heap"));
    expect_error(CH, PROG, 2, "alltoall_bad", ARGS("small"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_alltoallmem: dest", "is too small"));
    expect_error(CH, PROG, 2, "alltoall_bad", ARGS("overlap"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_alltoallmem: source", "overlaps dest"));
}

Test(ch3_1, alltoall_bad_algorithm, .description = "an algorithm that is not auto, direct or one-shot, and a one-shot exchange larger than the stage: each stops with a clear error")
{
    expect_error(CH, PROG, 2, "alltoall_bad", ARGS("algo"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_alltoallmem_algo: algo 3 is not an all-to-all algorithm"));
    expect_error(CH, PROG, 2, "alltoall_bad", ARGS("oneshot_big"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_alltoallmem_algo: TSHMEM_ALGO_ONESHOT stages the whole source",
                      "use TSHMEM_ALGO_AUTO or _DIRECT"));
}

Test(ch3_1, dispatch_combine_uniform, .description = "E = 8 over 2, 3 and 5 PEs (not divisible), E = 4 over 8 PEs (some PEs own no expert), k = 1 and 2: rows, layout and combine equal the reference")
{
    expect_ok_on(CH, PROG, "moe", ARGS("E=8", "k=2", "T=24", "layers=2"), NULL, 30,
                 ((int[]){1, 2, 3, 5, END_PES}));
    expect_ok_on(CH, PROG, "moe", ARGS("E=4", "k=1", "T=16", "layers=2"), NULL, 30,
                 ((int[]){8, END_PES}));
}

Test(ch3_1, dispatch_combine_skewed, .description = "one hot expert (every token's slot 0), one expert with no token, the last PE receiving nothing: E = 8, k = 2 on 4 PEs; E = 64, k = 6 on 8 PEs")
{
    expect_ok_on(CH, PROG, "moe", ARGS("E=8", "k=2", "T=32", "route=skewed", "layers=3"), NULL,
                 30, ((int[]){2, 4, END_PES}));
    expect_ok_on(CH, PROG, "moe", ARGS("E=64", "k=6", "H=8", "T=16", "route=skewed", "layers=2"),
                 NULL, 30, ((int[]){8, END_PES}));
}

Test(ch3_1, dispatch_combine_no_tokens, .description = "T = 0 on some PEs (and on every PE), empty top-k slots (-1)")
{
    expect_ok_on(CH, PROG, "moe", ARGS("E=8", "k=2", "tzero=0,2", "layers=3"), NULL, 30,
                 ((int[]){3, END_PES}));
    expect_ok_on(CH, PROG, "moe", ARGS("E=4", "k=2", "tzero=0,1", "layers=2"), NULL, 30,
                 ((int[]){2, END_PES}));
    expect_ok_on(CH, PROG, "moe", ARGS("E=8", "k=2", "route=holes", "tzero=1", "layers=3"),
                 NULL, 30, ((int[]){4, END_PES}));
}

Test(ch3_1, experts_that_compute, .description = "expert e multiplies its rows by e + 1: every row reached the right expert and came back to the right (token, slot), summed in slot order bit for bit; E = 64, k = 6 on 5 PEs; E = 8, k = 1 on 3; E = 16, k = 6 on 4")
{
    expect_ok_on(CH, PROG, "moe", ARGS("E=64", "k=6", "H=12", "T=20", "scale", "layers=2"), NULL,
                 30, ((int[]){5, END_PES}));
    expect_ok_on(CH, PROG, "moe", ARGS("E=8", "k=1", "scale", "route=skewed", "layers=2"), NULL,
                 30, ((int[]){3, END_PES}));
    expect_ok_on(CH, PROG, "moe", ARGS("E=16", "k=6", "scale", "inexact", "layers=2"), NULL, 30,
                 ((int[]){4, END_PES}));
}

Test(ch3_1, layers_with_no_reset, .description = "40 layers in a row on one handle, no barrier, PEs late at random, experts in place and not: counters only grow, buffers granted before reuse")
{
    expect_ok_on(CH, PROG, "moe", ARGS("E=8", "k=2", "T=24", "route=holes", "scale", "layers=40"),
                 NULL, 30, ((int[]){3, END_PES}));
    expect_ok_on(CH, PROG, "moe", ARGS("E=16", "k=2", "H=8", "T=8", "layers=20"), NULL, 30,
                 ((int[]){8, END_PES}));
}

Test(ch3_1, large_rows, .description = "rows of 4 KiB (H = 1024), 128 tokens, k = 2 on 2 PEs, k = 6 on 3")
{
    expect_ok_on(CH, PROG, "moe", ARGS("E=8", "k=2", "H=1024", "T=128", "layers=3"),
                 ENV("TSHMEM_SYMMETRIC_SIZE=16M"), 30, ((int[]){2, END_PES}));
    expect_ok_on(CH, PROG, "moe", ARGS("E=12", "k=6", "H=1024", "T=48", "scale", "layers=2"),
                 ENV("TSHMEM_SYMMETRIC_SIZE=16M"), 30, ((int[]){3, END_PES}));
}

Test(ch3_1, moe_on_other_teams, .description = "a handle on a strided team (world PEs 0, 2, 4; PEs 1 and 3 only create and destroy), and on WORLD across virtual nodes (off-node puts)")
{
    expect_ok_on(CH, PROG, "moe", ARGS("E=8", "k=2", "team=even", "layers=3"), NULL, 30,
                 ((int[]){5, END_PES}));
    expect_ok_on(CH, PROG, "moe", ARGS("E=8", "k=2", "route=skewed", "layers=3"),
                 ENV("TSHMEM_PES_PER_NODE=2"), 30, ((int[]){4, END_PES}));
}

Test(ch3_1, bad_expert_index, .description = "an expert index out of range on one PE stops the job with a message naming the token, the slot and the value")
{
    expect_error(CH, PROG, 2, "moe_bad", ARGS("expert"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_moe_dispatch: token 3, top-k slot 1: expert 8 is out of range"));
    expect_error(CH, PROG, 2, "moe_bad", ARGS("negative"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_moe_dispatch: token 2, top-k slot 0: expert -2 is out of range"));
}

Test(ch3_1, bad_dispatch_and_combine, .description = "too many tokens, a top_k that differs from the handle's, combine before dispatch, no handle: each stops with a clear error")
{
    expect_error(CH, PROG, 2, "moe_bad", ARGS("tokens"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_moe_dispatch: num_tokens 5 is out of range", "max_tokens"));
    expect_error(CH, PROG, 2, "moe_bad", ARGS("topk"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_moe_dispatch: top_k 3 does not match the handle's top_k 2"));
    expect_error(CH, PROG, 2, "moe_bad", ARGS("combine_first"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_moe_combine: there is no dispatch to undo"));
    expect_error(CH, PROG, 2, "moe_bad", ARGS("handle"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_moe_dispatch:", "is not a live handle"));
}

Test(ch3_1, bad_create, .description = "configs that differ between PEs, a top_k above num_experts, a heap too small for the worst case: each stops with a clear error")
{
    expect_error(CH, PROG, 2, "moe_bad", ARGS("config"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_moe_create: this PE passed {num_experts 8, hidden 5",
                      "every PE must create the handle with the same config"));
    expect_error(CH, PROG, 2, "moe_bad", ARGS("topk_config"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_moe_create: top_k 9 is larger than num_experts 8"));
    expect_error(CH, PROG, 2, "moe_bad", ARGS("heap"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_moe_create: the handle needs", "TSHMEM_SYMMETRIC_SIZE"));
}
