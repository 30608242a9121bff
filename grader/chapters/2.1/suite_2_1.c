/* suite_2_1.c: chapter 2.1, communication buffers: slots, head/tail counters, flow control. */
#include "suite.h"

#define CH "2.1"
#define PROG "pe_2_1"

Test(ch2_1, fifo_order_per_pair, .description = "bursts that fill every ring, every PE to every PE and itself: each pair's messages arrive in order")
{
    expect_ok_on(CH, PROG, "fifo", ARGS("4", "64", "40"), NULL, 30,
                 (int[]){1, 2, 3, 5, 8, END_PES});
}

Test(ch2_1, chunks_around_slot_boundaries, .description = "0, 1, slot-1, slot, slot+1 ... 5 rings and 1 MiB: split into slots and put back together, through one slot and through four")
{
    /* One slot first: every chunk waits for that slot's credit, so a credit given back before
     * the chunk is copied out lets the next chunk overwrite it (1 MiB: a thousand hand-overs).
     * Received into room for the largest: an overwritten message shows as the wrong bytes. */
    expect_ok_on(CH, PROG, "chunks", ARGS("1", "1000", "1"), NULL, 30, (int[]){2, END_PES});
    expect_ok_on(CH, PROG, "chunks", ARGS("4", "1000"), NULL, 30, (int[]){2, 3, END_PES});
}

Test(ch2_1, storm_random_sizes_checksums, .description = "all-to-all storm, random sizes and order, send and reserve/commit, poll and recv: nothing lost, repeated or torn")
{
    expect_ok_on(CH, PROG, "storm", ARGS("4", "256", "40", "1"), NULL, 30, (int[]){2, 3, END_PES});
    expect_ok_on(CH, PROG, "storm", ARGS("3", "200", "25", "2"), NULL, 30, (int[]){5, 8, END_PES});
}

Test(ch2_1, slow_receiver_does_not_block_senders, .description = "a receiver that sleeps after every message: senders wait for credits, then finish, overwriting nothing")
{
    expect_ok_on(CH, PROG, "many_to_one", ARGS("4", "256", "200", "200"), NULL, 30,
                 (int[]){2, END_PES});
    expect_ok_on(CH, PROG, "many_to_one", ARGS("2", "128", "40", "500"), NULL, 30,
                 (int[]){5, END_PES});
}

Test(ch2_1, many_senders_one_receiver, .description = "every PE sends several rings' worth to PE 0, which takes from whoever is ready")
{
    expect_ok_on(CH, PROG, "many_to_one", ARGS("4", "256", "100", "0"), NULL, 30,
                 (int[]){3, 8, END_PES});
}

Test(ch2_1, one_slot_and_one_byte_slots, .description = "rings of 1 slot, slots of 1 byte, and both: every message still arrives whole")
{
    expect_ok_on(CH, PROG, "fifo", ARGS("1", "64", "50"), NULL, 30, (int[]){2, 3, END_PES});
    expect_ok_on(CH, PROG, "fifo", ARGS("1", "1", "50"), NULL, 30, (int[]){1, 2, END_PES});
    expect_ok_on(CH, PROG, "storm", ARGS("4", "1", "30", "3"), NULL, 30, (int[]){2, END_PES});
    expect_ok_on(CH, PROG, "storm", ARGS("1", "1", "30", "4"), NULL, 30, (int[]){3, END_PES});
    expect_ok_on(CH, PROG, "chunks", ARGS("1", "1"), NULL, 30, (int[]){2, END_PES});
    expect_ok_on(CH, PROG, "zero_copy", ARGS("1", "1", "30"), NULL, 30, (int[]){2, END_PES});
}

Test(ch2_1, zero_copy_reserve_commit, .description = "reserve, write in place, commit, mixed with send: one ordered stream per pair")
{
    expect_ok_on(CH, PROG, "zero_copy", ARGS("4", "96", "30"), NULL, 30, (int[]){1, 2, 4, END_PES});
}

Test(ch2_1, send_to_self, .description = "a PE sends to itself (single and chunked messages) and receives its own messages")
{
    expect_ok_on(CH, PROG, "chunks", ARGS("8", "100"), NULL, 30, (int[]){1, 3, END_PES});
    expect_ok_on(CH, PROG, "storm", ARGS("4", "64", "40", "5"), NULL, 30, (int[]){1, END_PES});
}

Test(ch2_1, poll_sees_waiting_messages, .description = "poll is 1 exactly while a message from that PE is waiting, between barriers")
{
    expect_ok_on(CH, PROG, "poll", ARGS("3", "32", "12"), NULL, 30, (int[]){1, 2, 3, END_PES});
}

Test(ch2_1, destroy_leaves_heap_reusable, .description = "20 create/use/destroy cycles: each new buffer starts empty, and the heap gets every block back")
{
    expect_ok_on(CH, PROG, "reuse", ARGS("20"), NULL, 30, (int[]){2, 3, END_PES});
}

Test(ch2_1, bad_pe_is_an_error, .description = "a PE number out of range in send, recv, poll or reserve stops with a clear error")
{
    expect_error(CH, PROG, 2, "bad", ARGS("send_pe"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_send: pe 2 is out of range"));
    expect_error(CH, PROG, 2, "bad", ARGS("recv_pe"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_recv: pe -1 is out of range"));
    expect_error(CH, PROG, 2, "bad", ARGS("poll_pe"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_poll: pe 5 is out of range"));
    expect_error(CH, PROG, 2, "bad", ARGS("reserve_pe"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_reserve: pe -2 is out of range"));
}

Test(ch2_1, message_larger_than_max_bytes_is_an_error, .description = "recv of a 100-byte message into max_bytes 10 stops and names both sizes")
{
    expect_error(CH, PROG, 2, "bad", ARGS("recv_too_small"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem: PE 1: tshmem_buffer_recv: the next message from PE 0 is 100 bytes",
                      "max_bytes 10"));
}

Test(ch2_1, reserve_commit_misuse_is_an_error, .description = "commit without reserve, reserve larger than a slot or twice, send over an open reserve")
{
    expect_error(CH, PROG, 2, "bad", ARGS("commit_without_reserve"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_commit: no slot for PE 1 is reserved"));
    expect_error(CH, PROG, 2, "bad", ARGS("reserve_too_big"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_reserve: nbytes 65 is larger than a slot (64 bytes)"));
    expect_error(CH, PROG, 2, "bad", ARGS("reserve_twice"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_reserve: a slot for PE 1 is already reserved"));
    expect_error(CH, PROG, 2, "bad", ARGS("send_while_reserved"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_send: a slot reserved for PE 1 is not committed"));
}

Test(ch2_1, bad_create_is_an_error, .description = "0 slots, 0-byte slots, a buffer larger than the heap, a NULL buffer: clear errors")
{
    expect_error(CH, PROG, 2, "bad", ARGS("zero_slots"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_create: n_slots 0"));
    expect_error(CH, PROG, 2, "bad", ARGS("zero_slot_bytes"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_create: slot_bytes 0"));
    expect_error(CH, PROG, 2, "bad", ARGS("too_big_for_heap"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_create: 2 PEs x 1024 slots of 1048576 bytes need",
                      "TSHMEM_SYMMETRIC_SIZE"));
    expect_error(CH, PROG, 2, "bad", ARGS("null_buf"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_send: buf is NULL"));
}

Test(ch2_1, self_deadlock_is_an_error, .description = "sending to a full ring to itself, or waiting for a message from itself never sent, stops instead of hanging")
{
    expect_error(CH, PROG, 1, "bad", ARGS("self_full"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_send: PE 0 sends to itself, and its ring to itself is full"));
    expect_error(CH, PROG, 1, "bad", ARGS("self_empty"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_buffer_recv: PE 0 waits for a message from itself"));
}
