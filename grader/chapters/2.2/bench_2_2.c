/* bench_2_2.c: chapter 2.2's benchmark: allreduce of floats (sum), tshmem against MPI.
 *
 * For every size it times tshmem_allreduce with the selector (op=allreduce) and with each
 * algorithm forced (allreduce_oneshot, _rd, _ring, _twoshot), then MPI_Allreduce
 * (op=allreduce impl=mpi), all in the same run. busbw uses NCCL-tests' factor 2(n-1)/n.
 *   make bench-programs IMPL=solutions && tools/tshrun -np 2 build/solutions/bin/bench_2_2
 */
#include "bench.h"

struct ctx {
    float *src, *dst;        /* symmetric, for tshmem */
    float *msrc, *mdst;      /* private, for MPI */
    size_t count;
    enum tshmem_algo algo;
    int me;
};

/* New input every iteration: no run is served from the previous run's result. */
static void prepare(void *p, int iter)
{
    struct ctx *c = p;
    float v = (float)(c->me + iter % 7);
    for (size_t i = 0; i < c->count; i++)
        c->src[i] = c->msrc[i] = v;
}

static void run_tshmem(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    tshmem_allreduce(TSHMEM_TEAM_WORLD, c->dst, c->src, c->count, TSHMEM_DTYPE_FLOAT,
                     TSHMEM_OP_SUM, c->algo);
}

static void run_mpi(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    MPI_Allreduce(c->msrc, c->mdst, (int)c->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

/* One check per size and algorithm, outside the timing: a fast wrong answer is no answer. */
static void check(const struct ctx *c, const float *out, int n, const char *op)
{
    float want = 0;
    for (int pe = 0; pe < n; pe++)
        want += (float)pe; /* the value prepare(iter 0) wrote */
    for (size_t i = 0; i < c->count; i++)
        if (out[i] != want) {
            fprintf(stderr, "bench_2_2: PE %d: %s of %zu bytes: element %zu is %g, expected %g\n",
                    c->me, op, c->count * sizeof(float), i, out[i], want);
            exit(1);
        }
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    /* Room for the two largest vectors per PE, unless the user chose a heap size. */
    char heap[32];
    snprintf(heap, sizeof heap, "%zuM", (2 * o.max_bytes >> 20) + 16);
    setenv("TSHMEM_SYMMETRIC_SIZE", heap, 0);
    tshmem_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    size_t max_count = o.max_bytes / sizeof(float) + 1;
    struct ctx c = {.src = tshmem_malloc(max_count * sizeof(float)),
                    .dst = tshmem_malloc(max_count * sizeof(float)),
                    .msrc = malloc(max_count * sizeof(float)),
                    .mdst = malloc(max_count * sizeof(float)),
                    .me = me};
    static const struct {
        const char *op;
        enum tshmem_algo algo;
    } tests[] = {
        {"allreduce", TSHMEM_ALGO_AUTO},
        {"allreduce_oneshot", TSHMEM_ALGO_ONESHOT},
        {"allreduce_rd", TSHMEM_ALGO_RECURSIVE_DOUBLING},
        {"allreduce_ring", TSHMEM_ALGO_RING},
        {"allreduce_twoshot", TSHMEM_ALGO_TWO_SHOT},
    };
    double factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
    size_t sizes[64];
    int n_sizes = bench_sizes(&o, sizes, 64);
    for (int s = 0; s < n_sizes; s++) {
        c.count = sizes[s] / sizeof(float);
        if (c.count == 0)
            c.count = 1;
        size_t bytes = c.count * sizeof(float);
        int iters = bench_iters(&o, bytes);
        for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
            if (!bench_wanted(&o, tests[t].op))
                continue;
            c.algo = tests[t].algo;
            prepare(&c, 0);
            run_tshmem(&c, 0);
            check(&c, c.dst, n, tests[t].op);
            struct bench_result r = bench_measure((struct bench_fn){prepare, run_tshmem, &c}, iters);
            bench_report(tests[t].op, "tshmem", bytes, iters, r, factor);
        }
        if (bench_wanted(&o, "allreduce")) {
            prepare(&c, 0);
            run_mpi(&c, 0);
            check(&c, c.mdst, n, "MPI_Allreduce");
            struct bench_result r = bench_measure((struct bench_fn){prepare, run_mpi, &c}, iters);
            bench_report("allreduce", "mpi", bytes, iters, r, factor);
        }
    }
    tshmem_barrier_all();
    tshmem_finalize();
    free(c.msrc);
    free(c.mdst);
    return 0;
}
