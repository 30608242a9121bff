/* bootstrap.cu: Provided (chapter 3.3 wrote it): NVSHMEM started over MPI, one process per PE.
 * Unlike 3.3's, it lets PEs share a GPU (PE p on GPU p % GPUs): a machine with one GPU can then
 * run the chapter's tests, which check bytes, not speed. */
#define TSHMEM_CHAPTER "3.7"
#include "tmoe.h"
#include <string.h>

static int pes_per_gpu = 1;

int tm_init(void)
{
    int rank, size, local, nlocal, ndev;
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_size(node, &nlocal);
    MPI_Comm_free(&node);
    TM_CUDA(cudaGetDeviceCount(&ndev));
    if (ndev < 1) tm_die(__func__, "PE %d sees no GPU (cudaGetDeviceCount says 0)", rank);
    pes_per_gpu = (nlocal + ndev - 1) / ndev;
    TM_CUDA(cudaSetDevice(local % ndev));
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (rank == 0 && nvshmemx_get_uniqueid(&id) != 0)
        tm_die(__func__, "nvshmemx_get_uniqueid failed on PE 0");
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    if (nvshmemx_set_attr_uniqueid_args(rank, size, &id, &attr) != 0)
        tm_die(__func__, "nvshmemx_set_attr_uniqueid_args(%d, %d) failed", rank, size);
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0)
        tm_die(__func__, "nvshmemx_init_attr failed on PE %d", rank);
    if (nvshmem_my_pe() != rank || nvshmem_n_pes() != size)
        tm_die(__func__, "NVSHMEM says PE %d of %d, MPI says rank %d of %d: both must agree",
               nvshmem_my_pe(), nvshmem_n_pes(), rank, size);
    return rank;
}

void tm_finalize(void)
{
    nvshmem_finalize();
}

int tm_pes_per_gpu(void)
{
    return pes_per_gpu;
}

void *tm_malloc(size_t bytes)
{
    void *p = nvshmem_malloc(bytes);
    if (!p && bytes)
        tm_die(__func__, "nvshmem_malloc(%zu) returned NULL on PE %d: the symmetric heap is too "
               "small; set NVSHMEM_SYMMETRIC_SIZE (e.g. 4G) in the environment", bytes,
               nvshmem_my_pe());
    if (p) TM_CUDA(cudaMemset(p, 0, bytes));
    return p;
}

int tm_p2p_allowed(void)
{
    const char *v = getenv("TMOE_NO_P2P");
    return !(v && strcmp(v, "0") != 0);
}

int tm_launch_collective = 0;

void tm_launch(const void *kernel, int blocks, int threads, void **args, cudaStream_t st,
               const char *who)
{
    if (!tm_launch_collective && pes_per_gpu == 1) {
        /* Room for every block at once on an idle GPU: a plain launch. Kernels of other streams
         * may delay some blocks, never forever, so a block that waits for another PE still gets
         * its answer; a cooperative launch would add its own cost to every call. */
        static int sms;
        int per_sm = 0;
        if (!sms) {
            int dev;
            TM_CUDA(cudaGetDevice(&dev));
            TM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        }
        TM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
        if (blocks <= per_sm * sms) {
            cudaError_t e = cudaLaunchKernel(kernel, dim3(blocks), dim3(threads), args, 0, st);
            if (e != cudaSuccess)
                tm_die(who, "the launch of %d blocks of %d threads failed: %s", blocks, threads,
                       cudaGetErrorString(e));
            return;
        }
    }
    int rc = nvshmemx_collective_launch(kernel, dim3(blocks), dim3(threads), args, 0, st);
    if (rc != 0)
        tm_die(who, "nvshmemx_collective_launch of %d blocks of %d threads failed (%d): a grid "
               "that waits for other PEs must fit on the GPU all at once", blocks, threads, rc);
}
