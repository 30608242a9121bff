/* bench_3_4.c: chapter 3.4's benchmark: the reduce-scatter against MPI_Reduce_scatter_block,
 * and a ZeRO training step, stages 0-3, against the same stage made of MPI's collectives.
 *
 *   bench op=reducescatter impl=tshmem|mpi ...     the selector's choice and MPI's, by size
 *   bench op=reducescatter_direct|_ring impl=tshmem each algorithm forced (the selector's data)
 *   bench op=zero_stageK impl=tshmem|mpi ...       one training step; bytes = the parameters
 *   # zero ...                                     model state per PE, measured and the ZeRO
 *                                                  paper's formula; bytes sent per step
 *
 * bytes of a reduce-scatter are the whole source of one PE (n blocks); busbw = algbw (n-1)/n.
 * Run by hand:
 *   make bench-programs IMPL=solutions && tools/tshrun -np 4 build/solutions/bin/bench_3_4
 */
#include <malloc.h>
#include <math.h>

#include "bench.h"
#include "tshmem_internal.h" /* white box: the symmetric allocator's block list */
#include "tshmem_zero.h"

#define N_CLASSES 3

struct rs_ctx {
    float *src, *dst, *msrc, *mdst;
    size_t nreduce;
    enum tshmem_algo algo;
    int me;
};

static void rs_prepare(void *arg, int iter)
{
    struct rs_ctx *c = arg;
    size_t total = c->nreduce * (size_t)tshmem_n_pes();
    for (size_t i = 0; i < total; i += 1024) /* touch every page with new values */
        c->src[i] = c->msrc[i] = (float)(iter + c->me + (int)(i & 7));
}

static void rs_tshmem(void *arg, int iter)
{
    struct rs_ctx *c = arg;
    (void)iter;
    if (c->algo == TSHMEM_ALGO_AUTO)
        tshmem_float_sum_reducescatter(TSHMEM_TEAM_WORLD, c->dst, c->src, c->nreduce);
    else
        tshmem_reducescatter(TSHMEM_TEAM_WORLD, c->dst, c->src, c->nreduce, TSHMEM_DTYPE_FLOAT,
                             c->algo);
}

static void rs_mpi(void *arg, int iter)
{
    struct rs_ctx *c = arg;
    (void)iter;
    MPI_Reduce_scatter_block(c->msrc, c->mdst, (int)c->nreduce, MPI_FLOAT, MPI_SUM,
                             MPI_COMM_WORLD);
}

static void rs_bench(const struct bench_opts *o, int n, int me)
{
    size_t max_total = o->max_bytes / sizeof(float) + (size_t)n;
    struct rs_ctx c = {.src = tshmem_malloc(max_total * sizeof(float)),
                       .dst = tshmem_malloc(max_total / (size_t)n * sizeof(float) + 64),
                       .msrc = malloc(max_total * sizeof(float)),
                       .mdst = malloc(max_total / (size_t)n * sizeof(float) + 64), .me = me};
    double factor = n > 1 ? (double)(n - 1) / n : 1.0;
    size_t sizes[64];
    int n_sizes = bench_sizes(o, sizes, 64);
    static const struct {
        const char *op;
        enum tshmem_algo algo;
    } algos[] = {{"reducescatter", TSHMEM_ALGO_AUTO},
                 {"reducescatter_direct", TSHMEM_ALGO_DIRECT},
                 {"reducescatter_ring", TSHMEM_ALGO_RING}};
    for (int s = 0; s < n_sizes; s++) {
        c.nreduce = sizes[s] / sizeof(float) / (size_t)n;
        c.nreduce = c.nreduce ? c.nreduce : 1;
        size_t bytes = c.nreduce * (size_t)n * sizeof(float);
        int iters = bench_iters(o, bytes);
        for (int a = 0; a < 3; a++) {
            if (!bench_wanted(o, algos[a].op))
                continue;
            c.algo = algos[a].algo;
            bench_report(algos[a].op, "tshmem", bytes, iters,
                         bench_measure((struct bench_fn){rs_prepare, rs_tshmem, &c}, iters),
                         factor);
            if (a == 0)
                bench_report(algos[a].op, "mpi", bytes, iters,
                             bench_measure((struct bench_fn){rs_prepare, rs_mpi, &c}, iters),
                             factor);
        }
    }
    tshmem_free(c.dst);
    tshmem_free(c.src);
    free(c.msrc);
    free(c.mdst);
}

/* ---- ZeRO ---------------------------------------------------------------------------------- */
struct zero_ctx {
    struct tshmem_zero *z;
    float *x;
    int *y, n_local, global_n;
};

static void zero_run(void *arg, int iter)
{
    struct zero_ctx *c = arg;
    (void)iter;
    tshmem_zero_step(c->z, c->x, c->y, c->n_local, c->global_n);
}

/* Bytes in use now: the C allocator's own counter plus the symmetric allocator's blocks. */
static size_t heap_in_use(void)
{
    size_t sym = 0;
    for (const struct tshmem_block *b = tshmem_g.blocks; b; b = b->next)
        sym += b->used ? b->size : 0;
    return mallinfo2().uordblks + sym;
}

/* The ZeRO paper's model state per PE (its section 3), for fp32 Adam: parameters 4 bytes,
 * gradients 4, Adam's two moments 8 (the paper's K = 12 is for mixed precision, where the
 * moments and an fp32 copy of the parameters sit beside fp16 parameters and gradients). */
static double paper_bytes(int stage, double P, int n)
{
    switch (stage) {
    case 0: return 16 * P;
    case 1: return 8 * P + 8 * P / n;
    case 2: return 4 * P + 12 * P / n;
    default: return 16 * P / n;
    }
}

/* The model of book/3.4-zero.md's tables: seven hidden layers of 384, 894,723 parameters. */
#define BOOK_WIDTH_S "384"
#define BOOK_PARAMS ((size_t)894723)

static void zero_bench(const struct bench_opts *o, int n, int me)
{
    /* Eight layers, so that the buffers of one layer are small beside the whole model, as in
     * the models ZeRO was made for; two samples per PE, so that communication shows. */
    int width = o->quick ? 192 : 384, per_pe = 2, layers = 8;
    int dims[] = {16, width, width, width, width, width, width, width, N_CLASSES};
    struct zero_ctx c = {.n_local = per_pe, .global_n = per_pe * n};
    c.x = malloc((size_t)per_pe * (size_t)dims[0] * sizeof(float));
    c.y = malloc((size_t)per_pe * sizeof(int));
    tshmem_spiral_data(c.x, c.y, (long)me * per_pe, per_pe, dims[0], N_CLASSES, 3);
    int iters = o->iters > 0 ? o->iters : o->quick ? 5 : 20;
    double t_dp = 0, comm_dp = 0;
    for (int stage = 0; stage <= 3; stage++) {
        char op[32];
        snprintf(op, sizeof op, "zero_stage%d", stage);
        if (!bench_wanted(o, op))
            continue;
        double t[2] = {0}, comm_us = 0;
        size_t state = 0, measured = 0, sent = 0, P = 0;
        for (int mpi = 0; mpi < 2; mpi++) {
            struct tshmem_zero z;
            struct tshmem_zero_config cfg = tshmem_zero_default(stage);
            cfg.use_mpi = mpi;
            tshmem_barrier_all();
            size_t before = heap_in_use();
            tshmem_zero_init(&z, TSHMEM_TEAM_WORLD, layers, dims, 1, &cfg);
            size_t after = heap_in_use();
            c.z = &z;
            struct bench_result r = bench_measure((struct bench_fn){NULL, zero_run, &c}, iters);
            bench_report(op, mpi ? "mpi" : "tshmem", z.n_params * sizeof(float), iters, r, 1.0);
            t[mpi] = r.median_us;
            if (!mpi) {
                P = z.n_params;
                state = z.state_peak;
                measured = after - before;
                sent = z.comm_bytes;
                comm_us = 1e6 * z.t_comm;
            }
            tshmem_zero_free(&z);
        }
        if (stage == 0) {
            t_dp = t[0];
            comm_dp = (double)sent;
        }
        /* book/3.4-zero.md's tables were measured on the full model: say when this run's differs. */
        static int said;
        if (me == 0 && !said++)
            printf("# model layers=%d width=%d params=%zu: %s\n", layers, width, P,
                   P == BOOK_PARAMS ? "the model of the book's tables (book/3.4-zero.md)"
                                    : "not the model of the book's tables (width " BOOK_WIDTH_S
                                      ", 894,723 parameters; run without --quick for it): "
                                      "compare this run's ratios with the page, not its bytes "
                                      "or times");
        double dp_comm_paper = n > 1 ? 2.0 * (n - 1) / n * 4.0 * (double)P : 0;
        double paper_comm = (stage == 3 ? 1.5 : 1.0) * dp_comm_paper;
        if (me == 0)
            printf("# zero stage=%d pes=%d params=%zu state_counted=%zu state_measured=%zu "
                   "paper_bytes=%.0f state_vs_dp=%.3f sent_bytes=%zu paper_sent=%.0f "
                   "sent_vs_dp=%.2f step_us=%.0f step_vs_dp=%.2f mpi_step_us=%.0f "
                   "vs_mpi=%.2f comm_us=%.0f\n",
                   stage, n, P, state, measured, paper_bytes(stage, (double)P, n),
                   (double)state / (16.0 * (double)P), sent, paper_comm,
                   comm_dp > 0 ? (double)sent / comm_dp : 0, t[0], t_dp > 0 ? t[0] / t_dp : 0,
                   t[1], t[0] > 0 ? t[1] / t[0] : 0, comm_us);
        fflush(stdout);
    }
    free(c.x);
    free(c.y);
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    bench_heap((2 * o.max_bytes + (64u << 20)) & ~(size_t)0xfffff);
    tshmem_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    rs_bench(&o, n, me);
    zero_bench(&o, n, me);
    tshmem_barrier_all();
    tshmem_finalize();
    return 0;
}
