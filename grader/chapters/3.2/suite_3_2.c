/* suite_3_2.c: chapter 3.2, pipeline-parallel handoff: put_signal handoffs between stages,
 * GPipe and 1F1B, against a single-process run of the same layers (bit for bit). */
#include "suite.h"

#define CH "3.2"
#define PROG "pe_3_2"
#define MICROS "1,2,5,16"

Test(ch3_2, gpipe_matches_single_process, .description = "GPipe on 1, 2, 3, 4 stages with 1, 2, 5, 16 micro-batches (2 slots): every stage's gradients and the loss equal the single-process run bit for bit; GPipe stashes all m micro-batches")
{
    expect_ok_on(CH, PROG, "train", ARGS("gpipe", MICROS, "1", "2", "3", "8"), NULL, 30,
                 (int[]){1, 2, 3, 4, END_PES});
}

Test(ch3_2, onef1b_matches_single_process, .description = "1F1B on 1, 2, 3, 4 stages with 1, 2, 5, 16 micro-batches (2 slots): gradients and loss equal the single-process run bit for bit; stage s stashes at most p - s")
{
    expect_ok_on(CH, PROG, "train", ARGS("1f1b", MICROS, "1", "2", "3", "8"), NULL, 30,
                 (int[]){1, 2, 3, 4, END_PES});
}

Test(ch3_2, one_slot_no_deadlock, .description = "1 slot per direction: GPipe and 1F1B in turn on 2, 3, 4 stages, 1 to 16 micro-batches, no deadlock, same results")
{
    expect_ok_on(CH, PROG, "train", ARGS("gpipe,1f1b", MICROS, "2", "1", "3", "8"), NULL, 30,
                 (int[]){2, 3, 4, END_PES});
}

Test(ch3_2, more_slots, .description = "3 and 64 slots per direction (more slots than micro-batches in flight): same results")
{
    expect_ok_on(CH, PROG, "train", ARGS("gpipe,1f1b", "5,16", "2", "3", "2", "5"), NULL, 30,
                 (int[]){3, END_PES});
    expect_ok_on(CH, PROG, "train", ARGS("1f1b,gpipe", "16", "2", "64", "2", "5"), NULL, 30,
                 (int[]){2, END_PES});
}

Test(ch3_2, repeated_steps_no_reset, .description = "12 training steps in a row on one pipe (schedules and micro-batch counts mixed, SGD between): weights equal the single-process run bit for bit; counters only grow")
{
    expect_ok_on(CH, PROG, "train", ARGS("1f1b,gpipe", "3,8,1", "4", "2", "4", "12"), NULL, 30,
                 (int[]){3, 5, END_PES});
}

Test(ch3_2, onef1b_stash_is_p_minus_s, .description = "1F1B with 8 and 16 micro-batches on 4 and 6 stages: stage s holds at most p - s activations (GPipe would hold m)")
{
    expect_ok_on(CH, PROG, "train", ARGS("1f1b", "8,16", "1", "2", "2", "4"), NULL, 30,
                 (int[]){4, 6, END_PES});
}

Test(ch3_2, larger_activations, .description = "micro-batches of 16 x 192 floats (12 KiB) on 2 and 3 stages, 16 micro-batches, both schedules")
{
    expect_ok_on(CH, PROG, "train", ARGS("gpipe,1f1b", "16", "1", "2", "16", "192"), NULL, 30,
                 (int[]){2, 3, END_PES});
}

Test(ch3_2, large_handoffs, .description = "micro-batches of 4096 x 257 floats (4.02 MiB: a large handoff, whose copy two threads share), 2 micro-batches forward and back, both schedules, 2 stages: the same bits as the single-process run")
{
    expect_ok_on(CH, PROG, "train", ARGS("gpipe,1f1b", "2", "1", "1", "4096", "257"),
                 ENV("TSHMEM_SYMMETRIC_SIZE=32M"), 60, (int[]){2, END_PES});
}

Test(ch3_2, stages_on_a_team, .description = "the pipe on a team of PEs 1 .. n-1 (PE 0 only creates and destroys it), 3 and 4 PEs")
{
    expect_ok_on(CH, PROG, "train", ARGS("gpipe,1f1b", "1,5", "1", "2", "2", "5", "sub"), NULL,
                 30, (int[]){3, 4, END_PES});
}

Test(ch3_2, stages_across_nodes, .description = "every stage on a virtual node of its own (TSHMEM_PES_PER_NODE=1, the off-node path of 2.5), both schedules, 1 slot; and a gate with 2 PEs per node")
{
    expect_ok_on(CH, PROG, "train", ARGS("gpipe,1f1b", "1,5,16", "1", "1", "3", "8"),
                 ENV("TSHMEM_PES_PER_NODE=1"), 30, (int[]){3, END_PES});
    expect_ok_on(CH, PROG, "gate", ARGS("1f1b", "1", "16", "2"), ENV("TSHMEM_PES_PER_NODE=2"),
                 30, (int[]){4, END_PES});
}

Test(ch3_2, held_stage_stalls_gpipe_upstream, .description = "GPipe, a stage held at a gate: the stage before it sends exactly n_slots micro-batches and waits; every earlier boundary stays within n_slots; nothing passes the gate; then the step ends right (4 PEs, each gate position, 1 and 2 slots)")
{
    expect_ok_on(CH, PROG, "gate", ARGS("gpipe", "1", "16", "1"), NULL, 30, (int[]){4, END_PES});
    expect_ok_on(CH, PROG, "gate", ARGS("gpipe", "2", "16", "2"), NULL, 30, (int[]){4, END_PES});
    expect_ok_on(CH, PROG, "gate", ARGS("gpipe", "1", "16", "3"), NULL, 30, (int[]){4, END_PES});
}

Test(ch3_2, held_stage_stalls_1f1b_upstream, .description = "1F1B, a stage held at a gate: the stage before it sends min(n_slots, p - s) micro-batches and waits; earlier boundaries stay within n_slots; then the step ends right")
{
    expect_ok_on(CH, PROG, "gate", ARGS("1f1b", "1", "16", "1"), NULL, 30, (int[]){4, END_PES});
    expect_ok_on(CH, PROG, "gate", ARGS("1f1b", "2", "16", "3"), NULL, 30, (int[]){4, END_PES});
    expect_ok_on(CH, PROG, "gate", ARGS("1f1b", "3", "8", "1"), NULL, 30, (int[]){3, END_PES});
}

Test(ch3_2, slow_stage_same_results, .description = "one stage 3 ms slower per micro-batch than the others, 1 slot, two steps: results unchanged")
{
    expect_ok_on(CH, PROG, "slow", ARGS("1f1b", "1", "3000"), NULL, 30, (int[]){3, END_PES});
    expect_ok_on(CH, PROG, "slow", ARGS("gpipe", "2", "3000"), NULL, 30, (int[]){4, END_PES});
}

Test(ch3_2, zero_copy_receive, .description = "tshmem_pipe_recv_fwd_ptr / _bwd_ptr return the slot itself with the right data; a held slot is never overwritten before its release (1, 2 and 3 slots, 2 and 3 stages, both directions); a copying receive follows on")
{
    expect_ok_on(CH, PROG, "zero", ARGS("1", "6"), NULL, 30, (int[]){2, 3, END_PES});
    expect_ok_on(CH, PROG, "zero", ARGS("2", "9"), NULL, 30, (int[]){3, END_PES});
    expect_ok_on(CH, PROG, "zero", ARGS("3", "10"), NULL, 30, (int[]){2, END_PES});
}

Test(ch3_2, zero_copy_misuse, .description = "a release with no slot held, a zero-copy receive on stage 0 or with every slot held, and a copying receive while a slot is held stop with a message")
{
    expect_error(CH, PROG, 2, "zero_bad", ARGS("release_unheld"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_release_fwd", "holds no slot"));
    expect_error(CH, PROG, 2, "zero_bad", ARGS("recv_before_first"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_recv_fwd_ptr", "stage 0 of 2"));
    expect_error(CH, PROG, 2, "zero_bad", ARGS("hold_too_many"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_recv_fwd_ptr", "all 1 slot", "Release the oldest"));
    expect_error(CH, PROG, 2, "zero_bad", ARGS("copy_while_held"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_recv_fwd", "still holds 1 slot"));
}

Test(ch3_2, bad_slots, .description = "0 slots, or more than TSHMEM_PIPE_MAX_SLOTS, stops tshmem_pipe_create with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("slots0"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_create", "n_slots = 0", "1 to 64"));
    expect_error(CH, PROG, 2, "bad", ARGS("slots_many"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_create", "n_slots = 65"));
}

Test(ch3_2, bad_activation_size, .description = "act_elems 0, act_elems larger than the heap, and config NULL stop tshmem_pipe_create with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("elems0"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_create", "act_elems = 0"));
    expect_error(CH, PROG, 2, "bad", ARGS("too_large"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_create", "act_elems = 1099511627776", "TSHMEM_SYMMETRIC_SIZE"));
    expect_error(CH, PROG, 2, "bad", ARGS("null_config"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_create", "config = NULL"));
}

Test(ch3_2, bad_team, .description = "a team handle that is not in use stops tshmem_pipe_create with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("bad_team"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_create", "team 9"));
}

Test(ch3_2, handoff_past_the_ends, .description = "sending forward from the last stage, receiving forward on the first, and a handoff on a PE outside the team stop with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("send_past_last"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_send_fwd", "stage 1 of 2"));
    expect_error(CH, PROG, 2, "bad", ARGS("recv_before_first"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_recv_fwd", "stage 0 of 2"));
    expect_error(CH, PROG, 3, "bad", ARGS("not_member"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_send_bwd", "not a member"));
}

Test(ch3_2, schedule_arguments, .description = "a model whose micro-batch does not match the pipe, and a negative micro-batch count, stop the schedule with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("model_mismatch"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_1f1b", "21 floats", "carries 16"));
    expect_error(CH, PROG, 2, "bad", ARGS("negative_micro"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_pipe_gpipe", "n_micro = -3"));
}
