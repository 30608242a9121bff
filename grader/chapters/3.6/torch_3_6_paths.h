/* torch_3_6_paths.h: which path chapter 3.6's GPU allreduce takes, by the number of PEs and the
 * call's size (torch_3_6.cu's choose()): the first row of the job's PE count (the largest pes
 * of the table <= n_pes) whose max_bytes holds the call; above the last row, the ring with
 * 128 blocks of 1024 threads. `tools/gpu-torch --sweep FILE` times every path forced at each
 * size from 256 KiB to 8 MiB and rewrites FILE's rows for its PE count from the fastest (the
 * other counts' rows stay); the next build takes them. The 4-PE rows come from one sweep on four
 * H100s, the 2-PE rows from one on two of four H200s (both 2026-11-28), each row's sizes with
 * their medians above it. */
static const struct choice paths[] = {
    /* pes, max_bytes, path, ctas, threads, min_chunk (floats) */
    /* 4 PEs: NVIDIA H100 80GB HBM3, 2026-11-28, one sweep, medians of 2 x 30 calls on the GPU */
    /* below the sweep: the LL path, as before */
    {4, 131072, P_LL, 0, 0, 0},
    /* 256 KiB: 12.5 us, next twoshot_ll 512 threads 12.6, NCCL 14.8 */
    {4, 262144, P_TWOSHOT_LL, 0, 256, 0},
    /* 512 KiB: 14.2 us, next twoshot_ll 256 threads 14.5, NCCL 17.5 */
    /* 1 MiB: 19.2 us, next twoshot_ll 256 threads 19.3, NCCL 20.6 */
    {4, 1048576, P_TWOSHOT_LL, 0, 512, 0},
    /* 2 MiB: 24.3 us, next twoshot 32 x 1024 24.7, NCCL 28.9 */
    /* 4 MiB: 34.1 us, next twoshot 512 threads 34.4, NCCL 42.8 */
    {4, 4194304, P_TWOSHOT, 0, 256, 0},
    /* 8 MiB: 52.0 us, next twoshot 512 threads 52.4, NCCL 62.1 */
    {4, 8388608, P_TWOSHOT, 0, 1024, 0},
    /* 2 PEs: NVIDIA H200, 2026-11-28, one sweep, pooled medians of 2 x 30 calls on the GPU */
    /* below the sweep: the LL path, as before */
    /* 256 KiB: 8.7 us, next twoshot_ll 512 threads 9.3, NCCL 11.7 */
    /* 512 KiB: 10.2 us, next twoshot_ll 256 threads 10.9, NCCL 13.2 */
    /* 1 MiB: 13.1 us, next twoshot_ll 512 threads 14.2, NCCL 16.4 */
    {2, 1048576, P_LL, 0, 0, 0},
    /* 2 MiB: 18.0 us, next ring 64 x 512/4096 18.2, NCCL 30.8 */
    /* 4 MiB: 23.5 us, next twoshot 1024 threads 23.8, NCCL 35.6 */
    /* 8 MiB: 35.0 us, next ring 64 x 512/16384 36.3, NCCL 49.4 */
    {2, 8388608, P_TWOSHOT, 0, 512, 0},
};
