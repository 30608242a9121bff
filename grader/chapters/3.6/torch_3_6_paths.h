/* torch_3_6_paths.h: which path chapter 3.6's GPU allreduce takes, by the number of PEs and the
 * call's size (torch_3_6.cu's choose()): the first row of the job's PE count (the largest pes
 * of the table <= n_pes) whose max_bytes holds the call; above the last row, the ring with
 * 128 blocks of 1024 threads. `tools/gpu-torch --sweep FILE` times every path forced at each
 * size from 256 KiB to 8 MiB and writes this table from the fastest; run it with GPU_PES=2 and
 * GPU_PES=4 on the same machine. Measured: not yet (the choice of two H200s: LL up to 1 MiB). */
static const struct choice paths[] = {
    /* pes, max_bytes, path, ctas, threads, min_chunk (floats) */
    {2, 1048576, P_LL, 0, 0, 0},
    {4, 1048576, P_LL, 0, 0, 0},
};
