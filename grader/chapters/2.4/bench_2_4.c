/* bench_2_4.c: chapter 2.4's benchmark: non-blocking allreduce, and a training step with and
 * without overlap, tshmem against MPI in the same run.
 *
 *   op=allreduce_nb        start + wait of a float sum: tshmem_allreduce_nb + tshmem_wait
 *                          against MPI_Iallreduce + MPI_Wait, 8 B .. 64 MiB
 *   op=grad_allreduce      the communication alone: one blocking allreduce of all gradients
 *                          (tshmem_float_sum_reduce against MPI_Allreduce)
 *   op=train_no_overlap    a training step: forward, backward, then one blocking allreduce
 *   op=train_overlap       a training step whose buckets' allreduces start during backward:
 *                          tshmem_allreduce_nb against MPI_Iallreduce (impl=mpi)
 * bytes is the gradient size for the last three. After them, PE 0 prints a line
 *   # overlap impl=.. step_no_overlap_us=.. step_overlap_us=.. comm_us=.. hidden=..
 * with hidden = (t_no_overlap - t_overlap) / t_comm: the fraction of the communication that
 * the overlap took off the step (1: all of it; 0 or less: none).
 *
 * On one node the communication is done by the same cores and memory bus as the compute, so
 * overlap hides little. Across virtual nodes joined by chapter 2.5's modeled network card, the
 * wire's time passes on the clock while the CPUs compute (grader bench runs this by itself):
 *   TSHMEM_PES_PER_NODE=1 TSHMEM_LINK=1.25GB/s,5us tools/tshrun -np 2 \
 *       build/solutions/bin/bench_2_4 --op overlap_link
 * runs, instead of the training step above, a deeper step (LINK_* below) with and without
 * overlap and its allreduce alone, in turns, for bucket caps of one layer, two layers and
 * everything in one bucket: a table in "# " lines, with the hidden fraction of each.
 *   make bench-programs IMPL=solutions && tools/tshrun -np 2 build/solutions/bin/bench_2_4
 */
#include "bench.h"
#include "tshmem_train.h"

/* ---- allreduce_nb -------------------------------------------------------------------------- */
struct nb_ctx {
    float *buf;  /* symmetric, for tshmem */
    float *mbuf; /* private, for MPI */
    size_t count;
    int me;
};

static void nb_prepare(void *p, int iter)
{
    struct nb_ctx *c = p;
    float v = (float)(c->me + iter % 7);
    for (size_t i = 0; i < c->count; i++)
        c->buf[i] = c->mbuf[i] = v;
}

static void nb_tshmem(void *p, int iter)
{
    (void)iter;
    struct nb_ctx *c = p;
    tshmem_request_t r;
    tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, c->buf, c->buf, c->count, TSHMEM_DTYPE_FLOAT,
                        TSHMEM_OP_SUM, &r);
    tshmem_wait(&r);
}

static void nb_mpi(void *p, int iter)
{
    (void)iter;
    struct nb_ctx *c = p;
    MPI_Request r;
    MPI_Iallreduce(MPI_IN_PLACE, c->mbuf, (int)c->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

static void nb_check(const struct nb_ctx *c, const float *out, int n, const char *what)
{
    float want = 0;
    for (int pe = 0; pe < n; pe++)
        want += (float)pe;
    for (size_t i = 0; i < c->count; i++)
        if (out[i] != want) {
            fprintf(stderr, "bench_2_4: PE %d: %s of %zu floats: element %zu is %g, expected %g\n",
                    c->me, what, c->count, i, out[i], want);
            exit(1);
        }
}

/* ---- training steps ------------------------------------------------------------------------ */
#define N_CLASSES 10
enum mode { NO_OVERLAP, OVERLAP, MPI_NO_OVERLAP, MPI_OVERLAP, COMM_TSHMEM, COMM_MPI };

struct train_ctx {
    struct tshmem_ddp ddp[2];    /* [0] no overlap, [1] bucketed overlap: tshmem's own step */
    struct tshmem_mlp mpi_model; /* the same model, stepped with MPI's allreduces */
    MPI_Request req[TSHMEM_MLP_MAX_LAYERS];
    float *x;
    int *y, n_local, global_n;
    enum mode mode;
};

/* MPI's bucketed step: the same buckets as the tshmem model, MPI_Iallreduce at each. */
static void mpi_on_layer(void *arg, int layer)
{
    struct train_ctx *c = arg;
    const struct tshmem_ddp *d = &c->ddp[1];
    for (int b = 0; b < d->n_buckets; b++)
        if (d->bucket_first[b] == layer) {
            float *g = c->mpi_model.grads + c->mpi_model.off[layer];
            int count = (int)(c->mpi_model.off[d->bucket_last[b] + 1] - c->mpi_model.off[layer]);
            MPI_Iallreduce(MPI_IN_PLACE, g, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &c->req[b]);
        }
}

static void train_run(void *p, int iter)
{
    (void)iter;
    struct train_ctx *c = p;
    const float lr = 0.01f;
    struct tshmem_mlp *m = &c->mpi_model;
    switch (c->mode) {
    case NO_OVERLAP:
    case OVERLAP:
        tshmem_ddp_step(&c->ddp[c->mode == OVERLAP], c->x, c->y, c->n_local, c->global_n, lr);
        break;
    case MPI_NO_OVERLAP:
    case MPI_OVERLAP:
        tshmem_mlp_forward(m, c->x, c->y, c->n_local);
        tshmem_mlp_backward(m, 1.0f / (float)c->global_n,
                            c->mode == MPI_OVERLAP ? mpi_on_layer : NULL, c);
        if (c->mode == MPI_OVERLAP)
            MPI_Waitall(c->ddp[1].n_buckets, c->req, MPI_STATUSES_IGNORE);
        else
            MPI_Allreduce(MPI_IN_PLACE, m->grads, (int)m->n_params, MPI_FLOAT, MPI_SUM,
                          MPI_COMM_WORLD);
        tshmem_mlp_sgd(m, lr);
        break;
    case COMM_TSHMEM: {
        float *g = c->ddp[0].model.grads;
        tshmem_float_sum_reduce(TSHMEM_TEAM_WORLD, g, g, c->ddp[0].model.n_params);
        break;
    }
    case COMM_MPI:
        MPI_Allreduce(MPI_IN_PLACE, m->grads, (int)m->n_params, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    }
}

static void train_bench(const struct bench_opts *o, int n)
{
    /* A model whose gradients take a few MiB: three hidden layers of `width`; a few samples per
     * PE, so that the allreduce is a visible part of the step. */
    int width = o->quick ? 512 : 1024, layers = 4, per_pe = 1;
    int dims[] = {16, width, width, width, N_CLASSES};
    struct train_ctx c = {.n_local = per_pe, .global_n = per_pe * n};
    size_t cap = 0; /* one bucket per layer */
    tshmem_ddp_init(&c.ddp[0], TSHMEM_TEAM_WORLD, layers, dims, 1, cap, 0);
    tshmem_ddp_init(&c.ddp[1], TSHMEM_TEAM_WORLD, layers, dims, 1, cap, 1);
    size_t n_params = c.ddp[0].model.n_params, bytes = n_params * sizeof(float);
    float *mpi_grads = malloc(bytes);
    tshmem_mlp_init(&c.mpi_model, layers, dims, 1, mpi_grads);
    c.x = malloc((size_t)c.n_local * (size_t)dims[0] * sizeof(float));
    c.y = malloc((size_t)c.n_local * sizeof(int));
    tshmem_spiral_data(c.x, c.y, (long)tshmem_my_pe() * c.n_local, c.n_local, dims[0], N_CLASSES,
                       3);
    int iters = o->iters > 0 ? o->iters : o->quick ? 10 : 40;
    static const struct {
        const char *op, *impl;
        enum mode mode;
    } runs[] = {
        {"grad_allreduce", "tshmem", COMM_TSHMEM},  {"grad_allreduce", "mpi", COMM_MPI},
        {"train_no_overlap", "tshmem", NO_OVERLAP}, {"train_no_overlap", "mpi", MPI_NO_OVERLAP},
        {"train_overlap", "tshmem", OVERLAP},       {"train_overlap", "mpi", MPI_OVERLAP},
    };
    double t[6] = {0};
    double factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
    for (int i = 0; i < 6; i++) {
        if (!bench_wanted(o, runs[i].op))
            continue;
        c.mode = runs[i].mode;
        struct bench_result r = bench_measure((struct bench_fn){NULL, train_run, &c}, iters);
        bench_report(runs[i].op, runs[i].impl, bytes, iters, r, factor);
        t[i] = r.median_us;
    }
    if (tshmem_my_pe() == 0 && !o->only)
        for (int k = 0; k < 2; k++)
            printf("# overlap impl=%s pes=%d buckets=%d grad_bytes=%zu step_no_overlap_us=%.0f "
                   "step_overlap_us=%.0f comm_us=%.0f hidden=%.2f\n",
                   k ? "mpi" : "tshmem", n, c.ddp[1].n_buckets, bytes, t[2 + k], t[4 + k], t[k],
                   t[k] > 0 ? (t[2 + k] - t[4 + k]) / t[k] : 0);
    fflush(stdout);
    tshmem_ddp_free(&c.ddp[0]);
    tshmem_ddp_free(&c.ddp[1]);
    tshmem_mlp_free(&c.mpi_model);
    free(mpi_grads);
    free(c.x);
    free(c.y);
}

/* ---- across virtual nodes ------------------------------------------------------------------ */
/* With TSHMEM_PES_PER_NODE and TSHMEM_LINK set (grader bench does it), the step runs across
 * virtual nodes whose network is a modeled card: its wire time passes on the clock while the
 * CPUs compute. A deeper model than above, layers of equal size, and a few samples per PE, so
 * that the backward pass takes about as long as the gradients take on the wire. */
#define LINK_WIDTH 512
#define LINK_LAYERS 4
#define LINK_PER_PE 4

/* One line per bucket cap: the plain step, the overlapped one and the allreduce alone,
 * measured in turns (one of each per round), so that a change of load touches all three. */
static void link_row(const struct bench_opts *o, int n, size_t cap, const char *cap_name)
{
    int layers = LINK_LAYERS, per_pe = LINK_PER_PE, dims[LINK_LAYERS + 1];
    for (int l = 0; l < layers; l++)
        dims[l] = LINK_WIDTH;
    dims[layers] = N_CLASSES;
    struct train_ctx c = {.n_local = per_pe, .global_n = per_pe * n};
    tshmem_ddp_init(&c.ddp[0], TSHMEM_TEAM_WORLD, layers, dims, 1, cap, 0);
    tshmem_ddp_init(&c.ddp[1], TSHMEM_TEAM_WORLD, layers, dims, 1, cap, 1);
    c.x = malloc((size_t)c.n_local * (size_t)dims[0] * sizeof(float));
    c.y = malloc((size_t)c.n_local * sizeof(int));
    tshmem_spiral_data(c.x, c.y, (long)tshmem_my_pe() * c.n_local, c.n_local, dims[0], N_CLASSES,
                       3);
    static const enum mode modes[] = {COMM_TSHMEM, NO_OVERLAP, OVERLAP};
    int iters = o->iters > 0 ? o->iters : o->quick ? 11 : 41, warmup = 2;
    double *t = malloc(sizeof(double) * 3 * (size_t)iters);
    double *slowest = malloc(sizeof(double) * 3 * (size_t)iters);
    for (int i = 0; i < warmup + iters; i++)
        for (int k = 0; k < 3; k++) {
            c.mode = modes[k];
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = bench_now();
            train_run(&c, i);
            if (i >= warmup)
                t[k * iters + i - warmup] = bench_now() - t0;
        }
    MPI_Allreduce(t, slowest, 3 * iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double med[3];
    for (int k = 0; k < 3; k++) {
        qsort(slowest + k * iters, (size_t)iters, sizeof(double), bench_cmp_double);
        med[k] = 1e6 * slowest[k * iters + iters / 2];
    }
    if (tshmem_my_pe() == 0)
        printf("#   %-13s %7d %9.0f %10.0f %9.0f %8.2f\n", cap_name, c.ddp[1].n_buckets, med[1],
               med[2], med[0], (med[1] - med[2]) / med[0]);
    fflush(stdout);
    free(t);
    free(slowest);
    tshmem_ddp_free(&c.ddp[0]);
    tshmem_ddp_free(&c.ddp[1]);
    free(c.x);
    free(c.y);
}

/* The table: bucket caps from one layer per bucket to one bucket for everything. */
static void link_sweep(const struct bench_opts *o, int n, const char *link)
{
    size_t layer = ((size_t)LINK_WIDTH * LINK_WIDTH + LINK_WIDTH) * sizeof(float);
    int nodes = n / tshmem_team_n_pes(TSHMEM_TEAM_NODE);
    if (tshmem_my_pe() == 0)
        printf("# across %d virtual nodes, %d PEs, link %s: %d layers of %d, %zu KiB of "
               "gradients\n"
               "#   bucket cap    buckets     plain overlapped comm alone   hidden  (median us)\n",
               nodes, n, link, LINK_LAYERS, LINK_WIDTH, LINK_LAYERS * layer >> 10);
    link_row(o, n, 0, "one layer");
    link_row(o, n, 2 * layer, "two layers");
    link_row(o, n, (size_t)LINK_LAYERS * layer, "everything");
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    bench_heap((o.max_bytes + (64u << 20)) & ~(size_t)0xfffff); /* the vector, the models */
    tshmem_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    size_t max_count = o.max_bytes / sizeof(float) + 1;
    struct nb_ctx c = {.buf = tshmem_malloc(max_count * sizeof(float)),
                       .mbuf = malloc(max_count * sizeof(float)),
                       .me = me};
    double factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
    size_t sizes[64];
    int n_sizes = bench_wanted(&o, "allreduce_nb") ? bench_sizes(&o, sizes, 64) : 0;
    for (int s = 0; s < n_sizes; s++) {
        c.count = sizes[s] >= sizeof(float) ? sizes[s] / sizeof(float) : 1;
        size_t bytes = c.count * sizeof(float);
        int iters = bench_iters(&o, bytes);
        nb_prepare(&c, 0);
        nb_tshmem(&c, 0);
        nb_check(&c, c.buf, n, "tshmem_allreduce_nb");
        bench_report("allreduce_nb", "tshmem", bytes, iters,
                     bench_measure((struct bench_fn){nb_prepare, nb_tshmem, &c}, iters), factor);
        nb_prepare(&c, 0);
        nb_mpi(&c, 0);
        nb_check(&c, c.mbuf, n, "MPI_Iallreduce");
        bench_report("allreduce_nb", "mpi", bytes, iters,
                     bench_measure((struct bench_fn){nb_prepare, nb_mpi, &c}, iters), factor);
    }
    tshmem_free(c.buf);
    free(c.mbuf);
    const char *link = getenv("TSHMEM_LINK");
    int split = 0; /* some PE on another (virtual) node than PE 0 */
    for (int pe = 0; pe < n; pe++)
        split |= tshmem_ptr(c.buf, pe) == NULL;
    if (split && link && *link && bench_wanted(&o, "overlap_link"))
        link_sweep(&o, n, link);
    else
        train_bench(&o, n);
    tshmem_barrier_all();
    tshmem_finalize();
    return 0;
}
