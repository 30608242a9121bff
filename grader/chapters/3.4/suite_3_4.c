/* suite_3_4.c: chapter 3.4, ZeRO: a reduce-scatter on any team, and the training step of 2.4's
 * model with its optimizer state, gradients and parameters sharded (stages 1, 2, 3). */
#include "suite.h"

#define CH "3.4"
#define PROG "pe_3_4"
#define COUNTS "0,1,7,1000,70000" /* 70000 floats of a block: several ring chunks */
#define BIG ENV("TSHMEM_SYMMETRIC_SIZE=32M")

Test(ch3_4, direct_every_count_any_team, .description = "reduce-scatter, direct: nreduce 0, 1, 7, 1000, 70000, float and double, bit for bit in team order, 3 rounds back to back, on WORLD (3 PEs) and on the even PEs of 4")
{
    expect_ok_on(CH, PROG, "rs", ARGS(COUNTS, "direct", "3", "world"), BIG, 30,
                 (int[]){3, END_PES});
    expect_ok_on(CH, PROG, "rs", ARGS(COUNTS, "direct", "2", "even"), BIG, 30,
                 (int[]){4, END_PES});
}

Test(ch3_4, direct_publishes_its_own_flags, .description = "on one node the direct reduce-scatter publishes each step in the PE's own flag word and reads the others' where they lie: after 10 rounds of counts 1, 7 and 1000 (checked bit for bit), no PE wrote into another's flags, on 3 and 8 PEs")
{
    expect_ok_on(CH, PROG, "rsflags", ARGS("1,7,1000"), NULL, 30, (int[]){3, 8, END_PES});
}

Test(ch3_4, ring_every_count_any_team, .description = "reduce-scatter, ring: the same counts, bit for bit in ring order (block b added from PE b+1 round to b), on WORLD (3 PEs) and on PEs 1..3 of 4")
{
    expect_ok_on(CH, PROG, "rs", ARGS(COUNTS, "ring", "3", "world"), BIG, 30,
                 (int[]){3, END_PES});
    expect_ok_on(CH, PROG, "rs", ARGS(COUNTS, "ring", "2", "tail"), BIG, 30, (int[]){4, END_PES});
}

Test(ch3_4, typed_calls_same_bits_every_run, .description = "tshmem_float/double_sum_reducescatter (the selector): the same data gives the same bits in a later round, after other calls and allreduces with no reset, 4 PEs")
{
    expect_ok_on(CH, PROG, "rs", ARGS(COUNTS, "auto", "4", "world"), BIG, 30,
                 (int[]){4, END_PES});
}

Test(ch3_4, fcollect_nb_true_allgather, .description = "tshmem_fcollectmem_nb: 0, 1, 3, 4097 and 70001 bytes per PE, two in flight, back to back: every block byte for byte and nothing past them; a late PE's dest untouched until its call starts; no reduction run (2.4's piece words unmoved); beside an allreduce_nb; on WORLD (2 and 5 PEs) and on the even PEs of 4")
{
    expect_ok_on(CH, PROG, "fc", ARGS("0,1,3,4097,70001", "3", "world"), NULL, 30,
                 (int[]){2, 5, END_PES});
    expect_ok_on(CH, PROG, "fc", ARGS("1,4097", "2", "even"), NULL, 30, (int[]){4, END_PES});
}

Test(ch3_4, stage1_adam_matches_dp, .description = "ZeRO stage 1 with Adam, 3 PEs: the same bits as stage 0 (plain data parallelism) after every step, within the book's bound of a one-process run; less model state than stage 0; as many bytes sent as stage 0")
{
    expect_ok_on(CH, PROG, "train", ARGS("4", "32", "30", "48", "1", "adam", "direct", "1"),
                 NULL, 30, (int[]){3, END_PES});
}

Test(ch3_4, stage2_sgd_matches_2_4, .description = "ZeRO stage 2 with SGD on 4 PEs: the same bits as 2.4's tshmem_ddp_step and as stage 0 after every step; one layer of gradients kept")
{
    expect_ok_on(CH, PROG, "train", ARGS("4", "32", "30", "48", "2", "sgd", "direct", "1"),
                 NULL, 30, (int[]){4, END_PES});
}

Test(ch3_4, stage2_ring_within_bound, .description = "ZeRO stage 2 with the ring reduce-scatter on 4 PEs (another order of additions): within the book's bound of the one-process run with Adam")
{
    expect_ok_on(CH, PROG, "train", ARGS("3", "32", "30", "48", "2", "adam", "ring", "1"),
                 NULL, 30, (int[]){4, END_PES});
}

Test(ch3_4, stage3_prefetch_matches_dp, .description = "ZeRO stage 3 with Adam and prefetch on 3 PEs: the same bits as stage 0; no full copy of the parameters kept; the next layer's gather under way while each layer computes")
{
    expect_ok_on(CH, PROG, "train", ARGS("4", "32", "30", "48", "3", "adam", "direct", "1"),
                 NULL, 30, (int[]){3, END_PES});
}

Test(ch3_4, stage3_sgd_without_prefetch, .description = "ZeRO stage 3 with SGD and prefetch off, 2 PEs, AUTO: the same bits as 2.4's tshmem_ddp_step")
{
    expect_ok_on(CH, PROG, "train", ARGS("3", "24", "30", "48", "3", "sgd", "auto", "0"),
                 NULL, 30, (int[]){2, END_PES});
}

Test(ch3_4, in_place_refused, .description = "a reduce-scatter with dest inside source (in place) stops with a sentence")
{
    expect_error(CH, PROG, 2, "bad", ARGS("overlap"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_float_sum_reducescatter", "in place", "separate dest"));
}

Test(ch3_4, misuse_is_a_sentence, .description = "a team this PE is not in, a source that does not hold n x nreduce, a shard of a PE outside the team, stage 4, a non-blocking fcollect (after a good one) into a dest of n - 1 blocks: each stops with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("notmember"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_float_sum_reducescatter", "team 2"));
    expect_error(CH, PROG, 2, "bad", ARGS("small"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_float_sum_reducescatter", "source", "too small"));
    expect_error(CH, PROG, 2, "bad", ARGS("shard"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_zero_shard", "team PE 2", "PEs 0 .. 1"));
    expect_error(CH, PROG, 2, "bad", ARGS("stage"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_zero_init", "stage 4"));
    expect_error(CH, PROG, 2, "bad", ARGS("fcsmall"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_fcollectmem_nb", "dest", "too small"));
}
