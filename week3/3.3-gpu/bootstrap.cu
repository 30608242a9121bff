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
    TSHMEM_TODO("Bootstrap", "bind this process to GPU `local`, then start NVSHMEM from a unique ID that rank 0 makes and MPI_Bcast shares");
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
    (void)bytes;
    TSHMEM_TODO("Bootstrap", "allocate `bytes` on the symmetric heap of every PE (a collective) and stop with a sentence if it fails");
}

void *tg_peer(void *sym, int pe)
{
    if (pe < 0 || pe >= nvshmem_n_pes())
        tg_die(__func__, "PE %d is out of range: there are %d PEs", pe, nvshmem_n_pes());
    (void)sym;
    TSHMEM_TODO("Bootstrap", "ask NVSHMEM for the address that reaches `sym` on `pe` by loads and stores, and stop if there is none");
}
