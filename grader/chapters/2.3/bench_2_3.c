/* bench_2_3.c: chapter 2.3's benchmark: allgather and broadcast, each algorithm, against MPI.
 *
 *   make bench-programs IMPL=solutions && tools/tshrun -np 2 build/solutions/bin/bench_2_3
 *
 * Operations (--op NAME runs one): fcollect (the selector's choice), fcollect_ring,
 * fcollect_direct, fcollect_hybrid, fcollect_oneshot, broadcast, broadcast_ring, broadcast_direct,
 * broadcast_hybrid; the lines with impl=mpi under the names fcollect and broadcast are
 * MPI_Allgather and MPI_Bcast, measured in the same run, size by size.
 *
 * bytes is what every PE ends up with: for allgather the whole gathered buffer (each PE gives
 * bytes / n), busbw = algbw x (n - 1) / n; for broadcast the message, busbw = algbw. The root
 * is PE 0. Broadcast runs in place on the root (dest == source), as MPI_Bcast does with its one
 * buffer; allgather out of place on both sides, so both copy their own block too.
 */
#include "bench.h"

struct op {
    const char *name;
    int broadcast, mpi;
    enum tshmem_algo algo;
};

static const struct op ops[] = {
    {"fcollect", 0, 1, TSHMEM_ALGO_AUTO},           {"fcollect", 0, 0, TSHMEM_ALGO_AUTO},
    {"fcollect_ring", 0, 0, TSHMEM_ALGO_RING},      {"fcollect_direct", 0, 0, TSHMEM_ALGO_DIRECT},
    {"fcollect_hybrid", 0, 0, TSHMEM_ALGO_HYBRID},  {"fcollect_oneshot", 0, 0, TSHMEM_ALGO_ONESHOT},
    {"broadcast", 1, 1, TSHMEM_ALGO_AUTO},
    {"broadcast", 1, 0, TSHMEM_ALGO_AUTO},          {"broadcast_ring", 1, 0, TSHMEM_ALGO_RING},
    {"broadcast_direct", 1, 0, TSHMEM_ALGO_DIRECT}, {"broadcast_hybrid", 1, 0, TSHMEM_ALGO_HYBRID},
};
#define N_OPS (sizeof ops / sizeof ops[0])

struct ctx {
    const struct op *op;
    int me, n;
    size_t block;                 /* per PE (allgather) or the message (broadcast) */
    unsigned char *dest, *source; /* symmetric for tshmem, private for MPI */
};

/* The byte PE pe contributes in iteration iter. */
static unsigned char mark(int pe, int iter)
{
    return (unsigned char)(pe * 29 + iter * 7 + 1);
}

/* Untimed, before every iteration: the input is rewritten, and every PE has just used its dest
 * (as a program that reads each result would), so its lines sit in that PE's cache. Without
 * this a push would look free: the pusher writes lines that stay in its own cache from the
 * previous iteration, and the copy to the reader's core would never be timed. */
static void prepare(void *p, int iter)
{
    struct ctx *c = p;
    if (c->op->broadcast) {
        /* In place: the root's dest is its source. */
        memset(c->dest, c->me == 0 ? mark(0, iter) : 0, c->block);
    } else {
        memset(c->dest, 0, c->block * (size_t)c->n);
        memset(c->source, mark(c->me, iter), c->block);
    }
}

static void run(void *p, int iter)
{
    struct ctx *c = p;
    (void)iter;
    const struct op *o = c->op;
    int n = (int)c->block; /* MPI counts are int; sizes stay below 2 GiB */
    if (o->mpi && o->broadcast)
        MPI_Bcast(c->dest, n, MPI_BYTE, 0, MPI_COMM_WORLD);
    else if (o->mpi)
        MPI_Allgather(c->source, n, MPI_BYTE, c->dest, n, MPI_BYTE, MPI_COMM_WORLD);
    else if (o->broadcast)
        tshmem_broadcastmem_algo(TSHMEM_TEAM_WORLD, c->dest, c->dest, c->block, 0, o->algo);
    else
        tshmem_fcollectmem_algo(TSHMEM_TEAM_WORLD, c->dest, c->source, c->block, o->algo);
}

/* After the timed runs: the last iteration's result must be in dest on every PE. */
static void verify(const struct ctx *c, int last)
{
    size_t blocks = c->op->broadcast ? 1 : (size_t)c->n;
    for (size_t b = 0; b < blocks; b++) {
        unsigned char want = mark(c->op->broadcast ? 0 : (int)b, last);
        const unsigned char *at = c->dest + b * c->block;
        for (size_t i = 0; i < c->block; i++)
            if (at[i] != want) {
                fprintf(stderr,
                        "bench_2_3: PE %d: %s (%s), %zu bytes: block %zu byte %zu is "
                        "0x%02x, expected 0x%02x: the result is wrong, the timing worthless\n",
                        c->me, c->op->name, c->op->mpi ? "mpi" : "tshmem", c->block * blocks, b, i,
                        at[i], want);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    }
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    /* Room for the largest dest and source, unless the user chose a heap size. */
    char heap[32];
    snprintf(heap, sizeof heap, "%zu", 2 * o.max_bytes + (16u << 20));
    setenv("TSHMEM_SYMMETRIC_SIZE", heap, 0);
    tshmem_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    unsigned char *sym_dest = tshmem_malloc(o.max_bytes), *sym_source = tshmem_malloc(o.max_bytes);
    unsigned char *mpi_dest = calloc(1, o.max_bytes), *mpi_source = calloc(1, o.max_bytes);
    size_t sizes[64];
    int n_sizes = bench_sizes(&o, sizes, 64);
    for (int s = 0; s < n_sizes; s++) {
        for (size_t i = 0; i < N_OPS; i++) {
            const struct op *op = &ops[i];
            if (!bench_wanted(&o, op->name))
                continue;
            size_t block = op->broadcast ? sizes[s] : sizes[s] / (size_t)n;
            if (block == 0)
                continue;
            struct ctx c = {
                op, me, n, block, op->mpi ? mpi_dest : sym_dest, op->mpi ? mpi_source : sym_source};
            int iters = bench_iters(&o, sizes[s]);
            struct bench_result r = bench_measure((struct bench_fn){prepare, run, &c}, iters);
            verify(&c, iters / 10 + iters); /* bench_measure's last iteration */
            size_t bytes = op->broadcast ? block : block * (size_t)n;
            bench_report(op->name, op->mpi ? "mpi" : "tshmem", bytes, iters, r,
                         op->broadcast ? 1.0 : (double)(n - 1) / n);
        }
    }
    tshmem_free(sym_source);
    tshmem_free(sym_dest);
    free(mpi_dest);
    free(mpi_source);
    tshmem_finalize();
    return 0;
}
