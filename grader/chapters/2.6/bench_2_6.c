/* bench_2_6.c: chapter 2.6's benchmark: the UCX network, chapter 2.5's proxy and MPI, in one
 * run, on one wire.
 *
 * The wire: unless told otherwise, every byte between the two virtual nodes goes over TCP
 * loopback for all three, as between two machines: MPI's messages over Open MPI's tcp
 * transport (OMPI_MCA_btl=self,tcp), its one-sided window over its UCX component
 * (OMPI_MCA_osc=ucx), and UCX, for both Open MPI and tshmem, over TCP (UCX_TLS=tcp,self). Set
 * any of these yourself to change it (TSHMEM_BENCH_WIRE=shm leaves all three alone: Open MPI's
 * window is then a store into shared memory, whatever the virtual nodes say).
 *
 * Both networks in one process: the job starts on the proxy (TSHMEM_NET=proxy), then starts
 * the UCX network beside it (tshmem_ucx_start) and switches between them between measurements
 * (tshmem_ucx_running, and each network's wait hook). Both networks' helper threads are alive
 * throughout, each asleep while the other network is measured.
 *
 *   tools/tshrun -np 2 build/solutions/bin/bench_2_6        nodes of 1 PE
 *   build/grader/grader bench 2.6 [--pes 8] [--hosts a,b]   the same through the grader
 *
 * For every size (impl=tshmem is the UCX network; op NAME_proxy is chapter 2.5's proxy):
 *   pingpong   PE 0 and the first PE of the other node: putmem_signal back and forth, one round
 *              trip; impl=mpi: MPI_Send/MPI_Recv ping-pong
 *   put        PE 0 puts to it and calls tshmem_quiet; impl=mpi: MPI_Put + MPI_Win_flush
 *   get        PE 0 gets from it; impl=mpi: MPI_Get + MPI_Win_flush
 *   fadd       (8 B) tshmem_uint64_atomic_fetch_add; impl=mpi: MPI_Fetch_and_op + MPI_Win_flush
 *              (for these three the target waits in tshmem for a signal of PE 0's after the
 *              operation, counted in our time: see done_signal)
 *   allreduce  float sum on WORLD (the selector); impl=mpi: MPI_Allreduce
 *   fcollect   tshmem_fcollectmem on WORLD, bytes per PE; impl=mpi: MPI_Allgather
 * and, on PE 0 once every PE has finalized, ucx_perftest (ucx-utils) between two processes of this machine
 * on the same UCX transport: 8-byte put latency and 1 MiB put bandwidth, the engine's ceiling.
 */
#include <unistd.h>

#include "bench_pair.h"
#include "tshmem_internal.h" /* white box: both networks in one job */

struct ctx {
    char *buf;        /* symmetric landing zone */
    uint64_t *sig;    /* symmetric: [0] ping, [1] pong, [2] the atomic's word */
    char *msg;        /* private */
    float *src, *dst; /* symmetric */
    float *msrc, *mdst;
    char *win_buf;    /* MPI's window */
    MPI_Win win;
    size_t bytes, count;
    int me, n, peer;
};

static tshmem_wait_hook_fn *proxy_hook, *ucx_hook;

/* Every PE: the next measurements go through UCX (1) or the proxy (0). */
static void use_network(int ucx)
{
    tshmem_quiet();
    tshmem_barrier_all();
    tshmem_ucx_running = ucx;
    atomic_store_explicit(&tshmem_wait_hook, ucx ? ucx_hook : proxy_hook, memory_order_release);
    MPI_Barrier(MPI_COMM_WORLD);
}

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

/* The target of a put, get or atomic waits in tshmem for PE 0's word that says it is done, not
 * in the next iteration's MPI_Barrier: a thread blocked inside Open MPI does not progress our
 * networks, and over TCP they need the target (2.5's benchmark does the same). That signal is
 * counted in our time and not in MPI's. */
static void done_signal(struct ctx *c, int iter)
{
    if (c->me == 0)
        tshmem_signal_op(&c->sig[1], (uint64_t)iter + 1, TSHMEM_SIGNAL_SET, c->peer);
    else if (c->me == c->peer)
        tshmem_signal_wait_until(&c->sig[1], TSHMEM_CMP_GE, (uint64_t)iter + 1);
}

static void run_put(void *p, int iter)
{
    struct ctx *c = p;
    if (c->me == 0) {
        tshmem_putmem(c->buf, c->msg, c->bytes, c->peer);
        tshmem_quiet();
    }
    done_signal(c, iter);
}

static void run_mpi_put(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    if (c->me == 0) {
        MPI_Put(c->msg, (int)c->bytes, MPI_BYTE, c->peer, 0, (int)c->bytes, MPI_BYTE, c->win);
        MPI_Win_flush(c->peer, c->win);
    }
}

static void run_get(void *p, int iter)
{
    struct ctx *c = p;
    if (c->me == 0)
        tshmem_getmem(c->msg, c->buf, c->bytes, c->peer);
    done_signal(c, iter);
}

static void run_mpi_get(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    if (c->me == 0) {
        MPI_Get(c->msg, (int)c->bytes, MPI_BYTE, c->peer, 0, (int)c->bytes, MPI_BYTE, c->win);
        MPI_Win_flush(c->peer, c->win);
    }
}

static void run_fadd(void *p, int iter)
{
    struct ctx *c = p;
    if (c->me == 0)
        (void)tshmem_uint64_atomic_fetch_add(&c->sig[2], 1, c->peer);
    done_signal(c, iter);
}

static void run_mpi_fadd(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    if (c->me == 0) {
        uint64_t one = 1, old;
        MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, c->peer, 0, MPI_SUM, c->win);
        MPI_Win_flush(c->peer, c->win);
    }
}

static void run_reduce(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    tshmem_allreduce(TSHMEM_TEAM_WORLD, c->dst, c->src, c->count, TSHMEM_DTYPE_FLOAT,
                     TSHMEM_OP_SUM, TSHMEM_ALGO_AUTO);
}

static void run_mpi_reduce(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    MPI_Allreduce(c->msrc, c->mdst, (int)c->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static void run_collect(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    tshmem_fcollectmem(TSHMEM_TEAM_WORLD, c->dst, c->src, c->bytes);
}

static void run_mpi_collect(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    MPI_Allgather(c->msrc, (int)c->bytes, MPI_BYTE, c->mdst, (int)c->bytes, MPI_BYTE,
                  MPI_COMM_WORLD);
}

static void reset(struct ctx *c)
{
    tshmem_barrier_all();
    c->sig[0] = c->sig[1] = 0;
    tshmem_barrier_all();
}

/* One operation at one size: UCX, the proxy, then MPI. */
static double measure(struct ctx *c, const char *op, void (*mine)(void *, int),
                      void (*mpi)(void *, int), size_t bytes, int iters, double factor)
{
    double ucx_us = 0;
    char proxy_op[64];
    snprintf(proxy_op, sizeof proxy_op, "%s_proxy", op);
    for (int ucx = 1; ucx >= 0; ucx--) {
        use_network(ucx);
        reset(c);
        struct bench_result r = bench_measure((struct bench_fn){NULL, mine, c}, iters);
        bench_report(ucx ? op : proxy_op, "tshmem", bytes, iters, r, factor);
        if (ucx)
            ucx_us = r.median_us;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    struct bench_result r = bench_measure((struct bench_fn){NULL, mpi, c}, iters);
    bench_report(op, "mpi", bytes, iters, r, factor);
    return ucx_us;
}

/* ucx_perftest between a server and a client on this machine; its typical latency (us) or its
 * overall bandwidth (MB/s) from the "Final:" line; -1 if it did not run. */
static double perftest(const char *test, size_t bytes, int iters, int bandwidth)
{
    int port = 20000 + (int)(getpid() % 20000);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ucx_perftest -p %d -t %s -s %zu -n %d >/dev/null 2>&1 & "
             "sleep 1; ucx_perftest 127.0.0.1 -p %d -t %s -s %zu -n %d 2>/dev/null | "
             "grep '^Final:'; wait", port, test, bytes, iters, port, test, bytes, iters);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    char line[512] = "";
    double it = 0, lat = -1, avg, overall, bw = -1, bw_all = -1;
    if (fgets(line, sizeof line, f) &&
        sscanf(line, "Final: %lf %lf %lf %lf %lf %lf", &it, &lat, &avg, &overall, &bw,
               &bw_all) == 6) {
    } else {
        lat = bw_all = -1;
    }
    pclose(f);
    return bandwidth ? bw_all : lat;
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    const char *wire = getenv("TSHMEM_BENCH_WIRE");
    int tcp = !(wire && strcmp(wire, "shm") == 0);
    if (tcp) { /* before MPI_Init: Open MPI reads its settings there */
        setenv("OMPI_MCA_btl", "self,tcp", 0);
        setenv("OMPI_MCA_osc", "ucx", 0);
        setenv("UCX_TLS", "tcp,self", 0);
    }
    setenv("TSHMEM_NET", "proxy", 1);
    int provided, n;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char k[16];
    snprintf(k, sizeof k, "%d", (n + 1) / 2);
    setenv("TSHMEM_PES_PER_NODE", k, 0);
    char heap[32];
    snprintf(heap, sizeof heap, "%zuM", (4 * o.max_bytes >> 20) + 16);
    setenv("TSHMEM_SYMMETRIC_SIZE", heap, 0);
    tshmem_init();
    int me = tshmem_my_pe();
    proxy_hook = atomic_load(&tshmem_wait_hook);
    setenv("TSHMEM_NET", "ucx", 1);
    if (n < 2 || !tshmem_ucx_start()) {
        if (me == 0)
            fprintf(stderr, "bench_2_6: %s\n", n < 2 ? "run on 2 PEs or more (two virtual "
                    "nodes)." : "the UCX network did not start (its message above says why).");
        tshmem_finalize();
        MPI_Finalize();
        return 1;
    }
    ucx_hook = atomic_load(&tshmem_wait_hook);
    size_t max_count = o.max_bytes / sizeof(float) + 1;
    struct ctx c = {.buf = tshmem_malloc(o.max_bytes), .sig = tshmem_calloc(4, sizeof(uint64_t)),
                    .msg = calloc(o.max_bytes, 1),
                    .src = tshmem_malloc(max_count * sizeof(float)),
                    .dst = tshmem_malloc(max_count * sizeof(float) * (size_t)n),
                    .msrc = calloc(max_count, sizeof(float)),
                    .mdst = calloc(max_count * (size_t)n, sizeof(float)), .me = me, .n = n,
                    .peer = (n + 1) / 2};
    MPI_Win_allocate((MPI_Aint)o.max_bytes + 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c.win_buf,
                     &c.win);
    MPI_Win_lock_all(0, c.win);
    if (me == 0)
        printf("# wire %s; PE 0 and PE %d are on different nodes (of %s PEs: virtual nodes, or "
               "machines with --hosts)\n",
               tcp ? "TCP for all (btl self,tcp; osc ucx; UCX_TLS=tcp,self)"
                   : "as set (shared memory where allowed)", c.peer, k);
    size_t sizes[64];
    int n_sizes = bench_sizes(&o, sizes, 64);
    double ar = 2.0 * (n - 1) / n, ag = (double)(n - 1) / n;
    double pp8 = 0, put1m = 0;
    for (int s = 0; s < n_sizes; s++) {
        size_t bytes = sizes[s];
        int iters = bench_iters(&o, bytes);
        c.bytes = bytes;
        if (bench_wanted(&o, "pingpong")) {
            double us = measure(&c, "pingpong", run_pingpong, run_mpi_pingpong, bytes, iters, 1.0);
            if (bytes == 8)
                pp8 = us / 2; /* one way */
        }
        if (bench_wanted(&o, "put")) {
            double us = measure(&c, "put", run_put, run_mpi_put, bytes, iters, 1.0);
            if (bytes == (1u << 20))
                put1m = (double)bytes / us; /* MB/s */
        }
        if (bench_wanted(&o, "get"))
            measure(&c, "get", run_get, run_mpi_get, bytes, iters, 1.0);
        if (bytes == 8 && bench_wanted(&o, "fadd"))
            measure(&c, "fadd", run_fadd, run_mpi_fadd, bytes, iters, 1.0);
        c.count = bytes / sizeof(float) ? bytes / sizeof(float) : 1;
        if (bench_wanted(&o, "allreduce"))
            measure(&c, "allreduce", run_reduce, run_mpi_reduce, c.count * sizeof(float), iters,
                    ar);
        if (bytes <= o.max_bytes / (size_t)n && bench_wanted(&o, "fcollect"))
            measure(&c, "fcollect", run_collect, run_mpi_collect, bytes, iters, ag);
    }
    MPI_Win_unlock_all(c.win);
    MPI_Win_free(&c.win);
    use_network(1); /* finalize stops UCX, then the proxy */
    MPI_Barrier(MPI_COMM_WORLD);
    tshmem_finalize();
    free(c.msg);
    free(c.msrc);
    free(c.mdst);
    MPI_Finalize();
    /* The ceiling, alone on the machine: every PE has ended its networks and MPI, so no
     * thread of ours spins beside ucx_perftest's two processes. */
    if (me == 0 && tcp) {
        double lat = perftest("ucp_put_lat", 8, o.quick ? 2000 : 20000, 0);
        double bw = perftest("ucp_put_bw", 1 << 20, o.quick ? 200 : 2000, 1);
        if (lat < 0 || bw < 0)
            printf("# ucx_perftest did not run (apt-get install ucx-utils): no ceiling\n");
        else { /* a size this run did not measure (--max, --sizes, --only) is said, not 0 */
            printf("# ucx_perftest ceiling on UCX_TLS=tcp,self: ucp_put_lat 8 B %.2f us one way, ",
                   lat);
            if (pp8 > 0)
                printf("ours (half a put_signal round trip) %.2f us: %.2fx; ", pp8, lat / pp8);
            else
                printf("ours not measured (no 8 B ping-pong in this run); ");
            printf("ucp_put_bw 1 MiB %.0f MB/s, ", bw);
            if (put1m > 0)
                printf("ours (put + quiet) %.0f MB/s: %.2fx\n", put1m, bw > 0 ? put1m / bw : 0);
            else
                printf("ours not measured (no 1 MiB put in this run: its sizes go by 4x from 8 B; "
                       "--quick or --max 1M has it)\n");
        }
    }
    return 0;
}
