/* suite_3_5.c: chapter 3.5, tensor parallelism: an MLP block split over a team (column-, then
 * row-parallel, one allreduce each way) against the single-process block; a TP x DP grid. */
#include "suite.h"

#define CH "3.5"
#define PROG "pe_3_5"

Test(ch3_5, block_matches_single_process, .description = "TP degree 1, 2, 3, 4 (hidden 12, ffn 48, 5 rows, 3 steps with SGD): the GELU's output and every weight gradient equal the single-process block bit for bit, y and dx within the rounding bound, the same y on every PE, one allreduce in the forward and one in the backward")
{
    expect_ok_on(CH, PROG, "block", ARGS("12", "48", "5", "3", "1,2,3,4"), NULL, 30,
                 (int[]){4, END_PES});
}

Test(ch3_5, sizes_that_do_not_divide, .description = "ffn 38 over 3 and 4 PEs and ffn 7 over 4 (hidden 10): ffn / t units each, the first ffn % t PEs one more; results as with sizes that divide")
{
    expect_ok_on(CH, PROG, "block", ARGS("10", "38", "3", "2", "3,4"), NULL, 30,
                 (int[]){4, END_PES});
    expect_ok_on(CH, PROG, "block", ARGS("10", "7", "2", "2"), NULL, 30, (int[]){4, END_PES});
}

Test(ch3_5, one_unit_per_pe, .description = "ffn equal to the team size (one inner unit per PE), 3 PEs")
{
    expect_ok_on(CH, PROG, "block", ARGS("6", "3", "4", "2"), NULL, 30, (int[]){3, END_PES});
}

Test(ch3_5, larger_block, .description = "hidden 64, ffn 256, 16 rows on 2 PEs (4 KiB allreduces), and a block with 1 row")
{
    expect_ok_on(CH, PROG, "block", ARGS("64", "256", "16", "2"), NULL, 30, (int[]){2, END_PES});
    expect_ok_on(CH, PROG, "block", ARGS("16", "20", "1", "2"), NULL, 30, (int[]){2, END_PES});
}

Test(ch3_5, block_on_a_team, .description = "the block on teams of PEs 1 .. 2 and 1 .. 3 of 4 (PE 0, and PE 3 the first time, only create and destroy it)")
{
    expect_ok_on(CH, PROG, "block", ARGS("12", "30", "3", "2", "2,3", "sub"), NULL, 30,
                 (int[]){4, END_PES});
}

Test(ch3_5, split_2d_rows_and_columns, .description = "tshmem_team_split_2d on 5 PEs with xrange 1, 2 and 3 (the last row shorter) and 5: the x-axis team is my row, the y-axis team my column")
{
    expect_ok_on(CH, PROG, "split2d", ARGS("1,2,3,5"), NULL, 30, (int[]){5, END_PES});
}

Test(ch3_5, tp_inside_nodes_dp_across, .description = "2 x 2 on 4 PEs with TSHMEM_PES_PER_NODE=2: TP on the node team, DP between the two virtual nodes (2.5's transport): gradients after tshmem_tp_dp_sync equal the single-process block over both replicas' rows, bit for bit, 3 steps with SGD")
{
    expect_ok_on(CH, PROG, "grid", ARGS("2", "12", "40", "3", "3", "node"),
                 ENV("TSHMEM_PES_PER_NODE=2"), 30, (int[]){4, END_PES});
}

Test(ch3_5, tp_x_dp_on_one_node, .description = "the grid from tshmem_team_split_2d on one node: 2 x 2 on 4 PEs, and TP 1 x DP 2")
{
    expect_ok_on(CH, PROG, "grid", ARGS("2", "10", "38", "3", "2"), NULL, 30,
                 (int[]){4, END_PES});
    expect_ok_on(CH, PROG, "grid", ARGS("1", "10", "38", "3", "2"), NULL, 30,
                 (int[]){2, END_PES});
}

Test(ch3_5, bad_config, .description = "config NULL, hidden 0, ffn smaller than the team, and a config that differs between PEs stop tshmem_tp_create with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("null_config"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_tp_create", "config = NULL"));
    expect_error(CH, PROG, 2, "bad", ARGS("hidden0"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_tp_create", "hidden = 0"));
    expect_error(CH, PROG, 3, "bad", ARGS("ffn_small"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_tp_create", "ffn = 2", "3 PEs"));
    expect_error(CH, PROG, 2, "bad", ARGS("mismatch"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_tp_create", "same config", "ffn from 16 to 24"));
}

Test(ch3_5, bad_team, .description = "a team handle that is not in use stops tshmem_tp_create with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("bad_team"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_tp_create", "team 9"));
}

Test(ch3_5, outside_the_team, .description = "the shard of a team PE past the team's end, and a forward on a PE outside the team, stop with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("shard_outside"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_tp_shard", "team PE 2", "outside"));
    expect_error(CH, PROG, 3, "bad", ARGS("not_member"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_tp_forward", "PE 2", "not a member"));
}

Test(ch3_5, bad_passes, .description = "more rows than max_rows, and a backward with no forward, stop with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("rows"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_tp_forward", "rows = 9", "0 .. 4"));
    expect_error(CH, PROG, 2, "bad", ARGS("backward_first"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_tp_backward", "no forward"));
}

Test(ch3_5, wrong_dp_team, .description = "tshmem_tp_dp_sync on a team that contains a PE of my TP team, or on one whose PEs hold different shards, stops with a message")
{
    expect_error(CH, PROG, 4, "bad", ARGS("dp_overlap"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_tp_dp_sync", "tensor-parallel team"));
    expect_error(CH, PROG, 4, "bad", ARGS("dp_mixed"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_tp_dp_sync", "other shards"));
}

Test(ch3_5, split_2d_bad_xrange, .description = "xrange 0 and xrange larger than the parent team stop tshmem_team_split_2d with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("xrange0"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_team_split_2d", "xrange = 0"));
    expect_error(CH, PROG, 2, "bad", ARGS("xrange_big"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_team_split_2d", "xrange = 3", "1 to 2"));
}
