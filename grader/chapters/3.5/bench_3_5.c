/* bench_3_5.c: chapter 3.5's benchmark: one training pass (forward + backward) of the MLP
 * block split over TP = 1, 2, 4, 8 (and 16) PEs, with its two allreduces done by tshmem and by
 * MPI_Allreduce.
 *
 *   op=tpT   the block (hidden 256, ffn 1024) split over world PEs 0 .. T-1 (the others wait at
 *            the barriers): tshmem_tp_forward + tshmem_tp_backward on `rows` rows (16 and 128;
 *            16 with --quick); impl=mpi runs the same provided pieces of block.c with
 *            MPI_Allreduce on a communicator of the same PEs (not at TP = 1, which has no
 *            communication: the same computation twice). bytes = one allreduce's payload,
 *            rows x hidden x 4.
 *
 * After each op, PE 0 prints
 *   # tp t=T rows=R step_us=.. speedup=.. ar_share=.. mpi_step_us=.. mpi_ar_share=..
 *        param_bytes=.. act_bytes=.. ar_bytes_step=..       (no mpi_ fields at TP = 1)
 * with speedup = the TP = 1 step over this one, ar_share = the time team PE 0 spent in the two
 * allreduces over its step time (medians), param_bytes = the parameters and gradients one PE
 * holds, act_bytes the activations it keeps for the backward plus the two symmetric buffers,
 * ar_bytes_step = what one PE's allreduces carry per step (2 x payload).
 *   make bench-programs IMPL=solutions && tools/tshrun -np 2 build/solutions/bin/bench_3_5
 */
#include "bench.h"
#include "tshmem_tp.h"

enum { HIDDEN = 256, FFN = 1024 };

struct ctx {
    tshmem_tp_t *tp;
    MPI_Comm comm; /* the same PEs as the team, for impl=mpi; MPI_COMM_NULL outside */
    int rows, member;
    float *x, *y, *dy, *dx, *part;
    double ar_s; /* seconds in MPI_Allreduce (impl=mpi) */
};

static void prepare(void *p, int iter)
{
    struct ctx *c = p;
    size_t n = (size_t)c->rows * HIDDEN;
    for (size_t i = 0; i < n; i += 61) /* a few words change: no pass runs on old data */
        c->x[i] = (float)((iter + (int)i) % 17) * 0.01f;
    if (c->member)
        tshmem_tp_mlp_zero_grad(&c->tp->mlp);
}

static void run_tshmem(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    if (!c->member)
        return;
    tshmem_tp_forward(c->tp, c->x, c->rows, c->y);
    tshmem_tp_backward(c->tp, c->dy, c->dx);
}

static void mpi_sum(struct ctx *c, float *buf)
{
    double t0 = bench_now();
    MPI_Allreduce(MPI_IN_PLACE, buf, c->rows * HIDDEN, MPI_FLOAT, MPI_SUM, c->comm);
    c->ar_s += bench_now() - t0;
}

/* The same pass from the same pieces, with MPI_Allreduce for f and g. */
static void run_mpi(void *p, int iter)
{
    (void)iter;
    struct ctx *c = p;
    if (!c->member)
        return;
    struct tshmem_tp_mlp *m = &c->tp->mlp;
    size_t n = (size_t)c->rows * HIDDEN;
    tshmem_tp_mlp_column_forward(m, c->x, c->rows);
    tshmem_tp_mlp_row_forward(m, c->part);
    mpi_sum(c, c->part);
    memcpy(c->y, c->part, n * sizeof(float));
    tshmem_tp_mlp_finish_forward(m, c->y);
    tshmem_tp_mlp_row_backward(m, c->dy);
    tshmem_tp_mlp_column_backward(m, c->part);
    mpi_sum(c, c->part);
    memcpy(c->dx, c->part, n * sizeof(float));
    tshmem_tp_mlp_finish_backward(m, c->dy, c->dx);
}

static float *zeros(size_t n)
{
    float *p = calloc(n, sizeof(float));
    if (!p) {
        fprintf(stderr, "bench_3_5: out of memory\n");
        exit(1);
    }
    return p;
}

static void bench_degree(const struct bench_opts *o, int t, const int *rows_list, int n_rows,
                         double *step1)
{
    int me = tshmem_my_pe();
    char op[16];
    snprintf(op, sizeof op, "tp%d", t);
    tshmem_team_t team;
    tshmem_team_split_strided(TSHMEM_TEAM_WORLD, 0, 1, t, NULL, 0, &team);
    struct ctx c = {.member = me < t};
    MPI_Comm_split(MPI_COMM_WORLD, c.member ? 0 : MPI_UNDEFINED, me, &c.comm);
    int max_rows = rows_list[n_rows - 1];
    tshmem_tp_config_t cfg = {.hidden = HIDDEN, .ffn = FFN, .max_rows = max_rows, .seed = 11};
    c.tp = tshmem_tp_create(team, &cfg);
    size_t n = (size_t)max_rows * HIDDEN;
    c.x = zeros(n), c.y = zeros(n), c.dy = zeros(n), c.dx = zeros(n), c.part = zeros(n);
    for (size_t i = 0; i < n; i++)
        c.dy[i] = (float)((int)(i % 13) - 6) * 1e-3f;
    for (int k = 0; k < n_rows && bench_wanted(o, op); k++) {
        c.rows = rows_list[k];
        size_t bytes = (size_t)c.rows * HIDDEN * sizeof(float);
        /* A pass is milliseconds of computation and microseconds of allreduce: the two
         * implementations differ by less than a pass varies, and three passes' median read
         * 0.85x-1.06x where twenty read 0.99x-1.01x. Nine in a quick run. */
        int iters = o->iters > 0 ? o->iters : o->quick ? 9 : 20;
        double ar0 = c.member ? c.tp->allreduce_s : 0;
        uint64_t calls0 = c.member ? c.tp->allreduce_calls : 0;
        struct bench_result r =
            bench_measure((struct bench_fn){prepare, run_tshmem, &c}, iters);
        bench_report(op, "tshmem", bytes, iters, r, 2.0 * (t - 1) / t);
        /* Team PE 0's time in the allreduces, per pass (warm-up passes included). */
        double ar_us = c.member ? 1e6 * (c.tp->allreduce_s - ar0) /
                                      (double)((c.tp->allreduce_calls - calls0) / 2)
                                : 0;
        /* TP = 1 has no communication: its MPI version would be the same computation, and a
         * ratio of two timings of it measures only the machine's noise. It is timed once, as
         * the step the other degrees' speedups divide. */
        struct bench_result rm = r;
        double mpi_ar_us = 0;
        if (t > 1) {
            c.ar_s = 0;
            rm = bench_measure((struct bench_fn){prepare, run_mpi, &c}, iters);
            bench_report(op, "mpi", bytes, iters, rm, 2.0 * (t - 1) / t);
            mpi_ar_us = 1e6 * c.ar_s / (iters + iters / 10 + 1);
        } else {
            step1[k] = r.median_us;
        }
        if (me == 0) {
            const struct tshmem_tp_mlp *m = &c.tp->mlp;
            size_t params = 2 * tshmem_tp_mlp_count(HIDDEN, m->cols) * sizeof(float);
            size_t act = ((size_t)c.rows * HIDDEN + 3 * (size_t)c.rows * m->cols +
                          2 * (size_t)max_rows * HIDDEN) * sizeof(float);
            char mpi[80] = "";
            if (t > 1)
                snprintf(mpi, sizeof mpi, " mpi_step_us=%.0f mpi_ar_share=%.3f", rm.median_us,
                         mpi_ar_us / rm.median_us);
            printf("# tp t=%d rows=%d step_us=%.0f speedup=%.2f ar_share=%.3f%s param_bytes=%zu "
                   "act_bytes=%zu ar_bytes_step=%zu\n", t, c.rows, r.median_us,
                   step1[k] / r.median_us, ar_us / r.median_us, mpi, params, act, 2 * bytes);
            fflush(stdout);
        }
    }
    tshmem_tp_destroy(c.tp);
    if (c.comm != MPI_COMM_NULL)
        MPI_Comm_free(&c.comm);
    free(c.x), free(c.y), free(c.dy), free(c.dx), free(c.part);
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    bench_heap(16u << 20); /* the largest shard and the allreduce buffers fit in 5 MiB */
    tshmem_init();
    int n = tshmem_n_pes();
    static const int rows_full[] = {16, 128}, rows_quick[] = {16};
    const int *rows = o.quick ? rows_quick : rows_full;
    int n_rows = o.quick ? 1 : 2;
    double step1[2] = {0, 0};
    for (int t = 1; t <= n && t <= 16; t *= 2)
        bench_degree(&o, t, rows, n_rows, step1);
    tshmem_barrier_all();
    tshmem_finalize();
    return 0;
}
