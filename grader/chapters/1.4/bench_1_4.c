/* bench_1_4.c: chapter 1.4's signals and barriers against their MPI equivalents, in one run.
 *
 *   pingpong  PE 0 and PE 1 bounce a message: tshmem_putmem_signal + tshmem_signal_wait_until
 *             vs MPI_Send + MPI_Recv. The figure is the one-way time, half a round trip, so
 *             busbw = bytes / one-way time.
 *   barrier   tshmem_barrier_all vs MPI_Barrier (bytes=0: no data)
 *   sync      tshmem_sync_all vs MPI_Barrier
 *
 *   make bench-programs IMPL=solutions && tools/tshrun -np 2 build/solutions/bin/bench_1_4
 *
 * The other PEs (3 and more) wait at the barrier that starts each ping-pong iteration. Each
 * iteration's message is rewritten first, and the receiver checks the last one.
 */
#include "bench.h"

struct ctx {
    int me, n;
    size_t bytes;
    unsigned char *msg, *land; /* symmetric: what is sent, where it lands */
    uint64_t *sig;             /* symmetric: the arrival signal */
    uint64_t seq;              /* grows with every message, so no reset is needed */
    unsigned char *mpi_msg, *mpi_land;
};

static void prepare(void *p, int iter)
{
    struct ctx *c = p;
    memset(c->msg, (unsigned char)(iter * 5 + c->me), c->bytes);
    memset(c->mpi_msg, (unsigned char)(iter * 5 + c->me), c->bytes);
}

static void run_pingpong(void *p, int iter)
{
    struct ctx *c = p;
    (void)iter;
    if (c->n < 2 || c->me > 1)
        return;
    uint64_t ping = ++c->seq, pong = ++c->seq; /* alike on PEs 0 and 1 */
    if (c->me == 0) {
        tshmem_putmem_signal(c->land, c->msg, c->bytes, c->sig, ping, TSHMEM_SIGNAL_SET, 1);
        tshmem_signal_wait_until(c->sig, TSHMEM_CMP_GE, pong);
    } else {
        tshmem_signal_wait_until(c->sig, TSHMEM_CMP_GE, ping);
        tshmem_putmem_signal(c->land, c->msg, c->bytes, c->sig, pong, TSHMEM_SIGNAL_SET, 0);
    }
}

static void run_mpi_pingpong(void *p, int iter)
{
    struct ctx *c = p;
    (void)iter;
    int n = (int)c->bytes;
    if (c->n < 2 || c->me > 1)
        return;
    if (c->me == 0) {
        MPI_Send(c->mpi_msg, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        MPI_Recv(c->mpi_land, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(c->mpi_land, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(c->mpi_msg, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
    }
}

static void run_barrier(void *p, int iter)
{
    (void)p;
    (void)iter;
    tshmem_barrier_all();
}

static void run_sync(void *p, int iter)
{
    (void)p;
    (void)iter;
    tshmem_sync_all();
}

static void run_mpi_barrier(void *p, int iter)
{
    (void)p;
    (void)iter;
    MPI_Barrier(MPI_COMM_WORLD);
}

/* PE 0 and PE 1 hold the other's last message: a fast wrong answer is no answer. */
static void verify(const struct ctx *c, const unsigned char *land, int last)
{
    if (c->n < 2 || c->me > 1)
        return;
    unsigned char want = (unsigned char)(last * 5 + (1 - c->me));
    for (size_t i = 0; i < c->bytes; i++)
        if (land[i] != want) {
            fprintf(stderr, "bench_1_4: PE %d: pingpong of %zu bytes: byte %zu is 0x%02x, "
                    "expected 0x%02x: the result is wrong, the timing worthless\n",
                    c->me, c->bytes, i, land[i], want);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

/* A round trip is two one-way trips. */
static struct bench_result half(struct bench_result r)
{
    r.median_us /= 2, r.min_us /= 2, r.max_us /= 2;
    return r;
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    bench_heap(2 * o.max_bytes + (16u << 20));
    tshmem_init();
    struct ctx c = {.me = tshmem_my_pe(), .n = tshmem_n_pes()};
    size_t sizes[32];
    int n_sizes = bench_sizes(&o, sizes, 32);
    size_t max = sizes[n_sizes - 1];
    c.msg = tshmem_malloc(max);
    c.land = tshmem_malloc(max);
    c.sig = tshmem_calloc(1, sizeof *c.sig);
    c.mpi_msg = malloc(max);
    c.mpi_land = malloc(max);
    if (!c.msg || !c.land || !c.sig || !c.mpi_msg || !c.mpi_land) {
        fprintf(stderr, "bench_1_4: cannot allocate 2 x %zu bytes; set TSHMEM_SYMMETRIC_SIZE "
                "above it or pass a smaller --max\n", max);
        return 2;
    }
    for (int s = 0; s < n_sizes && c.n > 1 && bench_wanted(&o, "pingpong"); s++) {
        c.bytes = sizes[s];
        int iters = bench_iters(&o, c.bytes), last = iters / 10 + iters;
        struct bench_result r = bench_measure((struct bench_fn){prepare, run_pingpong, &c}, iters);
        verify(&c, c.land, last);
        bench_report("pingpong", "tshmem", c.bytes, iters, half(r), 1.0);
        r = bench_measure((struct bench_fn){prepare, run_mpi_pingpong, &c}, iters);
        verify(&c, c.mpi_land, last);
        bench_report("pingpong", "mpi", c.bytes, iters, half(r), 1.0);
    }
    int iters = o.quick ? 200 : 2000;
    static const struct {
        const char *op;
        void (*run)(void *, int);
    } sync_ops[] = {{"barrier", run_barrier}, {"sync", run_sync}};
    for (size_t k = 0; k < sizeof sync_ops / sizeof sync_ops[0]; k++) {
        if (!bench_wanted(&o, sync_ops[k].op))
            continue;
        struct bench_result r = bench_measure((struct bench_fn){NULL, sync_ops[k].run, &c}, iters);
        bench_report(sync_ops[k].op, "tshmem", 0, iters, r, 1.0);
        r = bench_measure((struct bench_fn){NULL, run_mpi_barrier, &c}, iters);
        bench_report(sync_ops[k].op, "mpi", 0, iters, r, 1.0);
    }
    free(c.mpi_msg);
    free(c.mpi_land);
    tshmem_free(c.sig);
    tshmem_free(c.land);
    tshmem_free(c.msg);
    tshmem_finalize();
    return 0;
}
