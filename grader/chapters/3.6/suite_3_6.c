/* suite_3_6.c: chapter 3.6, PyTorch integration: the Python module tshmem (tensors on the
 * symmetric heap through DLPack, allreduce on them, DataParallel with gradient buckets), run as
 * Python PE programs (grader/chapters/3.6/pe_3_6.py, started by build/<variant>/bin/pe_3_6).
 *
 * Each PE is a Python process that imports torch, which alone takes a second or more of CPU:
 * the tests are few jobs, each with many checks, and a generous timeout (one job of 4 PEs on a
 * loaded 2-core laptop can take half a minute). */
#include "suite.h"

#define CH "3.6"
#define PROG "pe_3_6"
#define TIMEOUT 120
/* The 3-PE scenarios of four tests in one job: one import of torch per PE instead of four
 * (expect_ok_shared; a test whose part fails there runs its own job). */
#define SHARED_3 ARGS("seq", "tensors", "allreduce", "train:32:1", "train:30:2048:ddp")
/* The same for 4 PEs in 2 virtual nodes: tensors there, and DataParallel across nodes. */
#define NODES_2 ENV("TSHMEM_PES_PER_NODE=2")
#define SHARED_4 ARGS("seq", "tensors", "train:32:2048")

Test(ch3_6, tensors_on_the_heap, .description = "zeros/empty: 8 dtypes x 3 shapes, empty tensors, the same offsets on every PE, peer views read what each PE wrote and store into it after a barrier (None off-node), free then zeros reuses the block, zeroed (3 PEs; 4 PEs in 2 virtual nodes)")
{
    expect_ok_shared(CH, PROG, "tensors", NULL, SHARED_3, NULL, TIMEOUT, (int[]){3, END_PES});
    expect_ok_shared(CH, PROG, "tensors", NULL, SHARED_4, NODES_2, TIMEOUT, (int[]){4, END_PES});
}

Test(ch3_6, misuse_is_a_python_exception, .description = "a foreign tensor, a freed tensor, a view passed to free, int64 and float16 to allreduce, a non-contiguous tensor, a bad PE, a bad shape or dtype, calls before init and after finalize, finalize with a handle in flight: each a Python exception whose sentence names the call and the problem (2 PEs)")
{
    expect_ok_on(CH, PROG, "misuse", NULL, NULL, TIMEOUT, (int[]){2, END_PES});
}

Test(ch3_6, allreduce_in_place_and_started, .description = "allreduce_: 1 to 300000 elements of float32 and float64, exact sums, returns its tensor; allreduce_start: 3 handles in flight waited in reverse order, a slice, the same bits on every PE (3 PEs)")
{
    expect_ok_shared(CH, PROG, "allreduce", NULL, SHARED_3, NULL, TIMEOUT, (int[]){3, END_PES});
}

/* bucket_bytes per run: 1 MiB (one bucket), 2 KiB (4 buckets), 1 byte (one per parameter). */
Test(ch3_6, data_parallel_matches_one_process, .description = "DataParallel, 32 SGD steps of a 3-layer MLP on 1, 2, 3 PEs and 4 PEs in 2 virtual nodes (1, 4, 6 buckets): every gradient within the book's bound of one process's on the same global batch, buckets started in order from the hooks before backward ends, the same weights on every PE, close to one process trained alone")
{
    static const struct {
        int pes;
        const char *bucket_bytes;
    } runs[] = {{1, "1048576"}, {2, "2048"}, {3, "1"}, {4, "2048"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        const char *const *args = ARGS("32", runs[i].bucket_bytes);
        const int *pes = (int[]){runs[i].pes, END_PES};
        if (runs[i].pes == 3)
            expect_ok_shared(CH, PROG, "train", args, SHARED_3, NULL, TIMEOUT, pes);
        else if (runs[i].pes == 4)
            expect_ok_shared(CH, PROG, "train", args, SHARED_4, NODES_2, TIMEOUT, pes);
        else
            expect_ok_on(CH, PROG, "train", args, NULL, TIMEOUT, pes);
    }
}

Test(ch3_6, same_as_torch_ddp_over_gloo, .description = "torch.nn.parallel.DistributedDataParallel over gloo, at the same weights on the same rows for 30 steps, gives gradients within twice the bound of DataParallel's (3 PEs, 2 KiB buckets)")
{
    expect_ok_shared(CH, PROG, "train", ARGS("30", "2048", "ddp"), SHARED_3, NULL, TIMEOUT,
                     (int[]){3, END_PES});
}
