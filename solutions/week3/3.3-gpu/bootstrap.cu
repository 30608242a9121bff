/* bootstrap.cu: one PE per GPU, NVSHMEM started over MPI, the symmetric heap and the peer view.
 * The GPU twin of chapters 1.1 (init) and 1.2 (symmetric allocation). */
#define TSHMEM_CHAPTER "3.3"
#include "tgpu.h"

int tg_init(void)
{
    int rank, size, local, ndev;
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    TG_CUDA(cudaGetDeviceCount(&ndev));
    if (local >= ndev)
        tg_die(__func__, "this node has %d GPUs but PE %d is its process number %d; start at most "
               "one process per GPU (mpirun -np %d)", ndev, rank, local, ndev);
    /* BEGIN SOLUTION (Bootstrap): bind this process to GPU `local`, then start NVSHMEM from a unique ID that rank 0 makes and MPI_Bcast shares */
    TG_CUDA(cudaSetDevice(local));
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (rank == 0 && nvshmemx_get_uniqueid(&id) != 0)
        tg_die(__func__, "nvshmemx_get_uniqueid failed on PE 0");
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    if (nvshmemx_set_attr_uniqueid_args(rank, size, &id, &attr) != 0)
        tg_die(__func__, "nvshmemx_set_attr_uniqueid_args(%d, %d) failed", rank, size);
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0)
        tg_die(__func__, "nvshmemx_init_attr failed on PE %d", rank);
    /* END SOLUTION */
    if (nvshmem_my_pe() != rank || nvshmem_n_pes() != size)
        tg_die(__func__, "NVSHMEM says PE %d of %d, MPI says rank %d of %d: both must agree",
               nvshmem_my_pe(), nvshmem_n_pes(), rank, size);
    return rank;
}

void tg_finalize(void)
{
    nvshmem_finalize();
}

void *tg_malloc(size_t bytes)
{
    /* BEGIN SOLUTION (Bootstrap): allocate `bytes` on the symmetric heap of every PE (a collective) and stop with a sentence if it fails */
    void *p = nvshmem_malloc(bytes);
    if (!p && bytes)
        tg_die(__func__, "nvshmem_malloc(%zu) returned NULL on PE %d: the symmetric heap is too "
               "small; set NVSHMEM_SYMMETRIC_SIZE (e.g. 4G) in the environment", bytes,
               nvshmem_my_pe());
    return p;
    /* END SOLUTION */
}

void *tg_peer(void *sym, int pe)
{
    if (pe < 0 || pe >= nvshmem_n_pes())
        tg_die(__func__, "PE %d is out of range: there are %d PEs", pe, nvshmem_n_pes());
    /* BEGIN SOLUTION (Bootstrap): ask NVSHMEM for the address that reaches `sym` on `pe` by loads and stores, and stop if there is none */
    void *p = nvshmem_ptr(sym, pe);
    if (!p)
        tg_die(__func__, "PE %d cannot reach %p on PE %d by loads and stores (nvshmem_ptr returned "
               "NULL): the two GPUs are not peers on NVLink or PCIe", nvshmem_my_pe(), sym, pe);
    return p;
    /* END SOLUTION */
}
