/* bench_2_5.c: chapter 2.5's benchmark: the proxy path against the shared-memory path and MPI.
 *
 * The job is cut into two virtual nodes: unless you set TSHMEM_PES_PER_NODE yourself, the
 * program sets it to half the PEs (rounded up) before tshmem_init, so that
 *   tools/tshrun -np 2 build/solutions/bin/bench_2_5      nodes of 1 PE: the proxy path only
 *   tools/tshrun -np 4 build/solutions/bin/bench_2_5      2x2: proxy, shared memory, hierarchy
 *   build/grader/grader bench 2.5 --pes 4                 the same through the grader
 * Add --tcp to tshrun (or TSHMEM_TRANSPORT=tcp) to send MPI's bytes over TCP loopback, as
 * between two machines. For every size, in one run:
 *   pingpong_offnode  PE 0 and the first PE of the other node send the message back and forth
 *                     with tshmem_putmem_signal; the time is one round trip (two messages).
 *                     impl=mpi: MPI_Send/MPI_Recv ping-pong between the same PEs.
 *   pingpong_onnode   the same between PE 0 and PE 1 when they share a node (4 PEs or more).
 *   put_offnode       PE 0 puts the message to the other node, calls tshmem_quiet (complete
 *                     at the target) and signals; the target waits for the signal. impl=mpi:
 *                     MPI_Send, then a 0-byte acknowledgement back. (The target waits in
 *                     tshmem, not in MPI_Barrier: a main thread blocked inside Open MPI holds
 *                     up the proxy thread's progress for milliseconds; see the book.)
 *   put_onnode        the same to PE 1 on PE 0's node (4 PEs or more).
 *   allreduce         float sum on WORLD through the selector (hierarchical across nodes when a
 *                     node has two PEs or more); impl=mpi: MPI_Allreduce.
 *   allreduce_flat    the same with the flat 2.2 algorithm the selector would pick on one node
 *                     (recursive doubling up to 4 KiB, ring above), all of it through the proxy.
 */
#include "bench_pair.h"

struct ctx {
    char *buf;          /* symmetric: the landing zone of puts */
    uint64_t *sig;      /* symmetric: [0] ping arrived, [1] pong arrived */
    char *msg;          /* private: what we send, and MPI's buffer */
    float *src, *dst;   /* symmetric, for allreduce */
    float *msrc, *mdst; /* private, for MPI_Allreduce */
    size_t bytes, count;
    int me, peer, onnode;
    enum tshmem_algo algo;
};

static void run_pingpong(void *p, int iter)
{
    struct ctx *c = p;
    bench_pair_pingpong(c->buf, c->msg, c->bytes, c->sig, c->me, c->peer, iter);
}

static void run_mpi_pingpong(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    bench_pair_mpi_pingpong(c->msg, c->bytes, c->me, c->peer);
}

static void run_put(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    if (c->me == 0) {
        tshmem_putmem(c->buf, c->msg, c->bytes, c->peer);
        tshmem_quiet();
        tshmem_signal_op(&c->sig[0], (uint64_t)iter + 1, TSHMEM_SIGNAL_SET, c->peer);
    } else if (c->me == c->peer) {
        tshmem_signal_wait_until(&c->sig[0], TSHMEM_CMP_GE, (uint64_t)iter + 1);
    }
}

static void run_mpi_put(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    if (c->me == 0) {
        MPI_Send(c->msg, (int)c->bytes, MPI_BYTE, c->peer, 1, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, c->peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (c->me == c->peer) {
        MPI_Recv(c->msg, (int)c->bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
}

static void prepare_reduce(void *p, int iter)
{
    struct ctx *c = p;
    float v = (float)(c->me + iter % 7);
    for (size_t i = 0; i < c->count; i++)
        c->src[i] = c->msrc[i] = v;
}

static void run_reduce(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    tshmem_allreduce(TSHMEM_TEAM_WORLD, c->dst, c->src, c->count, TSHMEM_DTYPE_FLOAT,
                     TSHMEM_OP_SUM, c->algo);
}

static void run_mpi_reduce(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    MPI_Allreduce(c->msrc, c->mdst, (int)c->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static void check_reduce(const struct ctx *c, const float *out, int n, const char *op)
{
    float want = 0;
    for (int pe = 0; pe < n; pe++)
        want += (float)pe;
    for (size_t i = 0; i < c->count; i++)
        if (out[i] != want) {
            fprintf(stderr, "bench_2_5: PE %d: %s of %zu bytes: element %zu is %g, expected %g\n",
                    c->me, op, c->count * sizeof(float), i, out[i], want);
            exit(1);
        }
}

/* Every PE syncs its signal words to 0 before a new series of ping-pongs. */
static void reset_signals(struct ctx *c)
{
    tshmem_barrier_all();
    c->sig[0] = c->sig[1] = 0;
    tshmem_barrier_all();
}

static void measure_pair(struct ctx *c, const char *op, int peer, size_t bytes, int iters,
                         int with_mpi)
{
    c->peer = peer;
    c->bytes = bytes;
    reset_signals(c);
    struct bench_result r = bench_measure((struct bench_fn){NULL, run_pingpong, c}, iters);
    bench_report(op, "tshmem", bytes, iters, r, 1.0);
    if (with_mpi) {
        r = bench_measure((struct bench_fn){NULL, run_mpi_pingpong, c}, iters);
        bench_report(op, "mpi", bytes, iters, r, 1.0);
    }
}

static void measure_put(struct ctx *c, const char *op, int peer, size_t bytes, int iters,
                        int with_mpi)
{
    c->peer = peer;
    c->bytes = bytes;
    reset_signals(c);
    struct bench_result r = bench_measure((struct bench_fn){NULL, run_put, c}, iters);
    bench_report(op, "tshmem", bytes, iters, r, 1.0);
    if (with_mpi) {
        r = bench_measure((struct bench_fn){NULL, run_mpi_put, c}, iters);
        bench_report(op, "mpi", bytes, iters, r, 1.0);
    }
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    int provided, n;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char k[16];
    snprintf(k, sizeof k, "%d", (n + 1) / 2);
    setenv("TSHMEM_PES_PER_NODE", k, 0); /* two virtual nodes unless told otherwise */
    /* This chapter's network, the proxy, even where chapter 2.6's is written (bench_2_6
     * measures that one); TSHMEM_NET=ucx measures it here instead. */
    setenv("TSHMEM_NET", "proxy", 0);
    char heap[32];
    snprintf(heap, sizeof heap, "%zuM", (3 * o.max_bytes >> 20) + 16);
    setenv("TSHMEM_SYMMETRIC_SIZE", heap, 0);
    tshmem_init();
    int me = tshmem_my_pe();
    int off = -1, on = -1; /* the first PE off PE 0's node, and the first on it */
    size_t max_count = o.max_bytes / sizeof(float) + 1;
    struct ctx c = {.buf = tshmem_malloc(o.max_bytes), .sig = tshmem_calloc(2, sizeof(uint64_t)),
                    .msg = calloc(o.max_bytes, 1),
                    .src = tshmem_malloc(max_count * sizeof(float)),
                    .dst = tshmem_malloc(max_count * sizeof(float)),
                    .msrc = malloc(max_count * sizeof(float)),
                    .mdst = malloc(max_count * sizeof(float)), .me = me};
    for (int pe = 1; pe < n; pe++) {
        /* PE 0 knows which PEs share its node (tshmem_ptr answers); it tells the others. */
        int on0 = me == 0 && tshmem_ptr(c.buf, pe) != NULL;
        MPI_Bcast(&on0, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (on0 && on < 0)
            on = pe;
        if (!on0 && off < 0)
            off = pe;
    }
    if (off < 0) {
        if (me == 0)
            fprintf(stderr, "bench_2_5: every PE is on PE 0's node (TSHMEM_PES_PER_NODE=%s): "
                    "nothing goes through the proxy. Run on 2 PEs or more, with nodes smaller "
                    "than the job.\n", getenv("TSHMEM_PES_PER_NODE"));
        tshmem_finalize();
        MPI_Finalize();
        return 1;
    }
    size_t sizes[64];
    int n_sizes = bench_sizes(&o, sizes, 64);
    double factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
    for (int s = 0; s < n_sizes; s++) {
        size_t bytes = sizes[s];
        int iters = bench_iters(&o, bytes);
        if (bench_wanted(&o, "pingpong_offnode"))
            measure_pair(&c, "pingpong_offnode", off, bytes, iters, 1);
        if (on > 0 && bench_wanted(&o, "pingpong_onnode"))
            measure_pair(&c, "pingpong_onnode", on, bytes, iters, 0);
        if (bench_wanted(&o, "put_offnode"))
            measure_put(&c, "put_offnode", off, bytes, iters, 1);
        if (on > 0 && bench_wanted(&o, "put_onnode"))
            measure_put(&c, "put_onnode", on, bytes, iters, 0);
        c.count = bytes / sizeof(float) ? bytes / sizeof(float) : 1;
        size_t rbytes = c.count * sizeof(float);
        static const struct {
            const char *op;
            int flat;
        } reds[] = {{"allreduce", 0}, {"allreduce_flat", 1}};
        for (int t = 0; t < 2; t++) {
            if (!bench_wanted(&o, reds[t].op))
                continue;
            c.algo = !reds[t].flat ? TSHMEM_ALGO_AUTO
                     : rbytes <= 4096 ? TSHMEM_ALGO_RECURSIVE_DOUBLING
                                      : TSHMEM_ALGO_RING;
            prepare_reduce(&c, 0);
            run_reduce(&c, 0);
            check_reduce(&c, c.dst, n, reds[t].op);
            struct bench_result r =
                bench_measure((struct bench_fn){prepare_reduce, run_reduce, &c}, iters);
            bench_report(reds[t].op, "tshmem", rbytes, iters, r, factor);
        }
        if (bench_wanted(&o, "allreduce")) {
            prepare_reduce(&c, 0);
            run_mpi_reduce(&c, 0);
            check_reduce(&c, c.mdst, n, "MPI_Allreduce");
            struct bench_result r =
                bench_measure((struct bench_fn){prepare_reduce, run_mpi_reduce, &c}, iters);
            bench_report("allreduce", "mpi", rbytes, iters, r, factor);
        }
    }
    tshmem_barrier_all();
    tshmem_finalize();
    free(c.msg);
    free(c.msrc);
    free(c.mdst);
    MPI_Finalize();
    return 0;
}
