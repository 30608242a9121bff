/* suite_1_2.c: chapter 1.2, the symmetric heap: segment, allocator, tshmem_ptr. */
#include <dirent.h>

#include "suite.h"

#define CH "1.2"
#define PROG "pe_1_2"

Test(ch1_2, same_offsets, .description = "a block is at the same offset on every PE")
{
    int pes[] = {1, 2, 3, 4, 8};
    for (int i = 0; i < 5; i++) {
        struct pe_job job;
        job_run(&job, CH, PROG, pes[i], "offsets", ENV("TSHMEM_SYMMETRIC_SIZE=4M"), 30);
        JOB_EXPECT_OK(&job);
        const char *first = job_value(&job, 0, "offsets");
        for (int pe = 1; pe < pes[i]; pe++) {
            const char *mine = job_value(&job, pe, "offsets");
            cr_assert(first && mine && strcmp(first, mine) == 0, "1.2 offsets on %d PEs: PE 0's "
                      "blocks are at offsets %s but PE %d's at %s: the allocator must make the "
                      "same choices on every PE", pes[i], first ? first : "?", pe,
                      mine ? mine : "?");
        }
        job_free(&job);
    }
}

Test(ch1_2, alignment, .description = "blocks are 256-byte aligned; tshmem_align honours larger alignments")
{
    expect_ok_on(CH, PROG, "alignment", NULL, NULL, 30, (int[]){1, 2, 4, END_PES});
}

Test(ch1_2, calloc_zeroes, .description = "tshmem_calloc returns zeroed memory, even when reusing a dirty block")
{
    expect_ok_on(CH, PROG, "calloc", NULL, NULL, 30, (int[]){1, 3, END_PES});
}

Test(ch1_2, free_then_malloc_reuses, .description = "freed blocks are reused and merged with free neighbours")
{
    expect_ok_on(CH, PROG, "reuse", NULL, NULL, 30, (int[]){1, 2, 4, END_PES});
}

Test(ch1_2, many_small_and_one_large, .description = "1000 small blocks and one 12 MiB block")
{
    expect_ok_on(CH, PROG, "many", NULL, ENV("TSHMEM_SYMMETRIC_SIZE=16M"), 30,
                 (int[]){1, 2, 8, END_PES});
}

Test(ch1_2, exhaustion_returns_null, .description = "a request that does not fit returns NULL with a message")
{
    struct pe_job job;
    job_run(&job, CH, PROG, 2, "exhaust", ENV("TSHMEM_SYMMETRIC_SIZE=4M"), 30);
    JOB_EXPECT_OK(&job);
    cr_assert(job_count(&job, "tshmem_malloc") >= 1 && job_count(&job, "no room") >= 1,
              "1.2 exhaust: tshmem_malloc returned NULL without saying why; print a message "
              "that names the size and the heap's room (expected the words \"no room\")\n%s",
              job_digest(&job));
    job_free(&job);
}

Test(ch1_2, size_mismatch_caught_under_debug, .description = "TSHMEM_DEBUG=1 names the PE whose malloc size differs")
{
    expect_error(CH, PROG, 3, "mismatch", NULL, ENV("TSHMEM_DEBUG=1"), TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_malloc: PE ", "passed size 128", "every PE of the team must pass "
                      "the same size"));
}

Test(ch1_2, malloc_on_one_pe_is_named, .description = "a tshmem_malloc that one PE alone makes is named, with both PEs' sizes (with and without TSHMEM_DEBUG=1)")
{
    const char *const needles[] = {"PE 0 passed size 64 and PE 1 passed size 128 to tshmem_malloc",
                                   NULL};
    expect_error(CH, PROG, 2, "one_pe", ARGS("malloc"), NULL, TSHMEM_EXIT_ERROR, needles);
    expect_error(CH, PROG, 2, "one_pe", ARGS("malloc"), ENV("TSHMEM_DEBUG=1"), TSHMEM_EXIT_ERROR,
                 needles);
}

Test(ch1_2, free_on_one_pe_is_named, .description = "a tshmem_free that one PE alone makes is named, with the call the other PE made (with and without TSHMEM_DEBUG=1)")
{
    const char *const needles[] = {"PE 0 called tshmem_free and PE 1 called tshmem_malloc, as "
                                   "their call 2 on TSHMEM_TEAM_WORLD",
                                   NULL};
    expect_error(CH, PROG, 2, "one_pe", ARGS("free"), NULL, TSHMEM_EXIT_ERROR, needles);
    expect_error(CH, PROG, 2, "one_pe", ARGS("free"), ENV("TSHMEM_DEBUG=1"), TSHMEM_EXIT_ERROR,
                 needles);
}

Test(ch1_2, symmetric_size_setting, .description = "TSHMEM_SYMMETRIC_SIZE sets the heap per PE (K, M, G)")
{
    expect_ok_on(CH, PROG, "heap_size", ARGS("1500000", "3000000"), ENV("TSHMEM_SYMMETRIC_SIZE=2M"),
                 30, (int[]){1, 2, END_PES});
    expect_ok_on(CH, PROG, "heap_size", ARGS("1500000", "3000000"),
                 ENV("TSHMEM_SYMMETRIC_SIZE=2097152"), 30, (int[]){2, END_PES});
    expect_ok_on(CH, PROG, "heap_size", ARGS("32768", "70000"), ENV("TSHMEM_SYMMETRIC_SIZE=64k"),
                 30, (int[]){2, END_PES});
    expect_ok_on(CH, PROG, "heap_size", ARGS("200000000", "300000000"),
                 ENV("TSHMEM_SYMMETRIC_SIZE=256M"), 30, (int[]){2, END_PES});
}

Test(ch1_2, symmetric_size_rejects_bad_values, .description = "garbage, 0 and absurd sizes stop at init with a clear error")
{
    static const char *bad[][2] = {
        {"TSHMEM_SYMMETRIC_SIZE=12Q", "is not a size"},
        {"TSHMEM_SYMMETRIC_SIZE=lots", "is not a size"},
        {"TSHMEM_SYMMETRIC_SIZE=-5", "is not a size"},
        {"TSHMEM_SYMMETRIC_SIZE=0", "leaves no room"},
        {"TSHMEM_SYMMETRIC_SIZE=100000000000000000000", "larger than"},
        {"TSHMEM_SYMMETRIC_SIZE=1000T", "/dev/shm"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_error(CH, PROG, 2, "offsets", NULL, ENV(bad[i][0]), TSHMEM_EXIT_ERROR,
                     ARGS("TSHMEM_SYMMETRIC_SIZE", bad[i][1]));
}

Test(ch1_2, ptr_and_addr_accessible, .description = "tshmem_ptr gives the twin on this node, NULL off-node")
{
    expect_ok_on(CH, PROG, "ptr", NULL, NULL, 30, (int[]){1, 2, 4, END_PES});
    expect_ok_on(CH, PROG, "ptr", NULL, ENV("TSHMEM_PES_PER_NODE=2"), 30, (int[]){4, 5, END_PES});
}

Test(ch1_2, ptr_rejects_non_symmetric, .description = "tshmem_ptr of a stack address stops with a clear error")
{
    expect_error(CH, PROG, 2, "ptr_not_symmetric", NULL, NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_ptr: dest", "is not in the symmetric heap"));
}

Test(ch1_2, free_rejects_bad_pointer, .description = "tshmem_free of a pointer it never returned stops with a clear error")
{
    expect_error(CH, PROG, 2, "free_bad", NULL, NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_free: ", "is not a block"));
}

Test(ch1_2, refusals_stop_or_return_null, .description = "a bad alignment, an overflowing calloc and a free outside the heap stop the job; a size larger than the heap returns NULL, checked before rounding")
{
    expect_error(CH, PROG, 2, "refuse", ARGS("align3"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_align: alignment 3 is not a power of two"));
    expect_error(CH, PROG, 2, "refuse", ARGS("align_big"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_align: alignment 4194304 is larger than the 2 MiB boundary"));
    expect_error(CH, PROG, 2, "refuse", ARGS("calloc_overflow"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_calloc: count ", "does not fit in size_t"));
    expect_error(CH, PROG, 2, "refuse", ARGS("free_outside"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_free: ", "is not a block that tshmem_malloc returned"));
    struct pe_job job;
    job_runv(&job, CH, PROG, 2, "refuse", ARGS("huge"), NULL, 30);
    JOB_EXPECT_OK(&job);
    cr_assert(job_count(&job, "no room") >= 1,
              "1.2 refuse huge: tshmem_malloc(SIZE_MAX - 100) returned NULL without the \"no "
              "room\" warning that names the size and the heap\n%s", job_digest(&job));
    job_free(&job);
}

Test(ch1_2, no_shm_left_behind, .description = "the segment is unlinked at init: nothing stays in /dev/shm, even when a PE is killed")
{
    for (int kill = 0; kill < 2; kill++) {
        char id[64];
        unique_job_id(id, sizeof id, kill ? "k" : "n");
        struct pe_job job;
        job_runv(&job, CH, PROG, 3, "unlinked", kill ? ARGS("kill") : NULL, ENV(id), 30);
        if (!kill) {
            JOB_EXPECT_OK(&job);
        } else {
            cr_assert(job_count(&job, "FAIL") == 0 && !job.timed_out && job.status != 0,
                      "1.2 unlinked (a PE kills itself): %s", job_digest(&job));
        }
        int left = shm_entries(id + strlen("TSHMEM_JOB_ID="));
        cr_assert(left == 0, "1.2 unlinked%s: %d entries of the job remain in /dev/shm",
                  kill ? " after a PE was killed" : "", left);
        job_free(&job);
    }
}
