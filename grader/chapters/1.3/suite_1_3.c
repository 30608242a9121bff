/* suite_1_3.c: chapter 1.3, one-sided put and get, fence and quiet. */
#include "suite.h"

#define CH "1.3"
#define PROG "pe_1_3"
#define HEAP ENV("TSHMEM_SYMMETRIC_SIZE=24M")

Test(ch1_3, put_every_size_to_every_pe, .description = "putmem of 0, 1, 7, 4099 bytes and 2 MiB to every PE, itself included")
{
    expect_ok_on(CH, PROG, "put_sizes", NULL, HEAP, 30, (int[]){1, 2, 3, 4, 8, END_PES});
}

Test(ch1_3, get_every_size_from_every_pe, .description = "getmem of 0, 1, 7, 4099 bytes and 2 MiB from every PE, itself included")
{
    expect_ok_on(CH, PROG, "get_sizes", NULL, HEAP, 30, (int[]){1, 2, 3, 4, 8, END_PES});
}

Test(ch1_3, typed_p_g_put_get, .description = "tshmem_int_p, _g, tshmem_double_put, _get and friends")
{
    expect_ok_on(CH, PROG, "typed", NULL, NULL, 30, (int[]){1, 2, 3, 4, END_PES});
}

Test(ch1_3, nbi_then_quiet, .description = "putmem_nbi and getmem_nbi are complete after tshmem_quiet")
{
    expect_ok_on(CH, PROG, "put_sizes", ARGS("nbi"), HEAP, 30, (int[]){1, 2, 4, END_PES});
    expect_ok_on(CH, PROG, "get_sizes", ARGS("nbi"), HEAP, 30, (int[]){1, 3, END_PES});
}

Test(ch1_3, fence_orders_puts, .description = "data, fence, flag: a PE that sees the flag sees the data")
{
    expect_ok_on(CH, PROG, "fence", NULL, NULL, 30, (int[]){1, 2, 3, 4, END_PES});
}

Test(ch1_3, bad_pe_is_an_error, .description = "a put or get to a PE that does not exist stops with a clear error")
{
    expect_error(CH, PROG, 4, "bad_pe", ARGS("n"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_putmem: pe 4 is out of range"));
    expect_error(CH, PROG, 2, "bad_pe", ARGS("-1", "get"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_getmem: pe -1 is out of range"));
}

Test(ch1_3, non_symmetric_address_is_an_error, .description = "a put to a stack address, or past the heap's end, stops with a clear error")
{
    expect_error(CH, PROG, 2, "bad_addr", NULL, NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_putmem: dest", "is not in the symmetric heap"));
    expect_error(CH, PROG, 2, "bad_addr", ARGS("overrun"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_putmem: dest", "past the end of the symmetric heap"));
}

Test(ch1_3, reserved_area_is_not_the_heap, .description = "a put or get at the runtime's reserved area (its barrier flags) stops with a clear error")
{
    expect_error(CH, PROG, 2, "reserved", NULL, NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_putmem: dest", "lies in the runtime's reserved area (offset 0, 8 bytes)",
                      "Use memory from tshmem_malloc"));
    expect_error(CH, PROG, 2, "reserved", ARGS("get"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_getmem: source", "runtime's reserved area (offset 64, 8 bytes)"));
}
