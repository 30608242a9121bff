/* suite_1_5.c: chapter 1.5, ring communication: shift, broadcast, token, pipelined broadcast. */
#include "suite.h"

#define CH "1.5"
#define PROG "pe_1_5"
#define HEAP ENV("TSHMEM_SYMMETRIC_SIZE=24M")
#define BIG "8388608"

Test(ch1_5, ring_shift_small, .description = "tshmem_ring_shift of 1, 7 and 4099 bytes on 1 to 8 PEs, 5 rounds with no reset")
{
    expect_ok_on(CH, PROG, "shift", ARGS("1", "5"), NULL, 30, (int[]){1, 2, 3, 5, 8, END_PES});
    expect_ok_on(CH, PROG, "shift", ARGS("7", "5"), NULL, 30, (int[]){2, 4, END_PES});
    expect_ok_on(CH, PROG, "shift", ARGS("4099", "5"), NULL, 30, (int[]){3, 8, END_PES});
}

Test(ch1_5, ring_shift_zero_and_8mib, .description = "tshmem_ring_shift of 0 bytes and of 8 MiB")
{
    expect_ok_on(CH, PROG, "shift", ARGS("0", "3"), NULL, 30, (int[]){1, 3, END_PES});
    expect_ok_on(CH, PROG, "shift", ARGS(BIG, "3"), HEAP, 60, (int[]){2, 4, END_PES});
}

Test(ch1_5, broadcast_root_anywhere, .description = "tshmem_ring_broadcast from every root in turn, 1 to 8 PEs, sizes 1 and 4099")
{
    expect_ok_on(CH, PROG, "bcast", ARGS("store", "1", "0", "8"), NULL, 30,
                 (int[]){1, 2, 3, 5, 8, END_PES});
    expect_ok_on(CH, PROG, "bcast", ARGS("store", "4099", "2", "6"), NULL, 30,
                 (int[]){3, 4, END_PES});
}

Test(ch1_5, broadcast_zero_big_in_place, .description = "tshmem_ring_broadcast of 0 bytes, of 8 MiB, and in place on the root")
{
    expect_ok_on(CH, PROG, "bcast", ARGS("store", "0", "1", "3"), NULL, 30, (int[]){2, 3, END_PES});
    expect_ok_on(CH, PROG, "bcast", ARGS("store", BIG, "1", "2"), HEAP, 60, (int[]){3, END_PES});
    expect_ok_on(CH, PROG, "bcast", ARGS("store", "5000", "0", "4", "0", "inplace"), NULL, 30,
                 (int[]){4, END_PES});
}

Test(ch1_5, token_laps, .description = "tshmem_ring_token returns each PE's last hop count: 0, 1, 3 and 200 laps in a row, 1 to 8 PEs")
{
    expect_ok_on(CH, PROG, "token", ARGS("1", "3", "0", "200", "1"), NULL, 30,
                 (int[]){1, 2, 3, 5, 8, END_PES});
}

Test(ch1_5, pipelined_chunks, .description = "tshmem_ring_broadcast_pipelined with 1-byte, 1000-byte, default and larger-than-message chunks")
{
    expect_ok_on(CH, PROG, "bcast", ARGS("pipe", "4099", "0", "3", "1"), NULL, 30,
                 (int[]){2, 3, END_PES});
    expect_ok_on(CH, PROG, "bcast", ARGS("pipe", "100000", "1", "5", "1000"), NULL, 30,
                 (int[]){1, 4, 5, END_PES});
    expect_ok_on(CH, PROG, "bcast", ARGS("pipe", "70000", "0", "8", "0"), NULL, 30,
                 (int[]){8, END_PES});
    expect_ok_on(CH, PROG, "bcast", ARGS("pipe", "777", "2", "3", "1048576", "inplace"), NULL, 30,
                 (int[]){3, END_PES});
}

Test(ch1_5, pipelined_8mib_and_zero, .description = "tshmem_ring_broadcast_pipelined of 8 MiB in 64 KiB chunks, and of 0 bytes")
{
    expect_ok_on(CH, PROG, "bcast", ARGS("pipe", BIG, "0", "2", "65536"), HEAP, 60,
                 (int[]){4, END_PES});
    expect_ok_on(CH, PROG, "bcast", ARGS("pipe", "0", "1", "3", "0"), NULL, 30, (int[]){2, END_PES});
}

Test(ch1_5, every_call_interleaved, .description = "200 calls of shift, both broadcasts and the token, interleaved with changing sizes and roots, no reset")
{
    expect_ok_on(CH, PROG, "mixed", ARGS("200"), NULL, 60, (int[]){2, 3, 5, END_PES});
}

Test(ch1_5, bad_arguments_are_errors, .description = "a root out of range, a dest outside the heap, negative laps: each stops with a clear error")
{
    expect_error(CH, PROG, 3, "bad", ARGS("root", "3"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_ring_broadcast: pe_root 3 is out of range"));
    expect_error(CH, PROG, 2, "bad", ARGS("pipe_root"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_ring_broadcast_pipelined: pe_root -1 is out of range"));
    expect_error(CH, PROG, 2, "bad", ARGS("dest"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_ring_shift: dest", "is not in the symmetric heap"));
    expect_error(CH, PROG, 2, "bad", ARGS("laps"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_ring_token: laps is -2"));
}
