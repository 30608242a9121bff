/* bench_3_2.c: chapter 3.2's benchmark: the handoff between two stages, and the bubble of the
 * GPipe and 1F1B schedules.
 *
 *   op=handoff      one activation from stage 0 to stage 1: tshmem_pipe_send_fwd on PE 0 and
 *                   tshmem_pipe_recv_fwd on PE 1 (put with signal into a slot, copy out,
 *                   credit back), against MPI_Send + MPI_Recv of the same bytes (impl=mpi),
 *                   8 B .. 64 MiB. The other PEs, if any, only wait at the barriers. It
 *                   moves every byte twice (into the slot, out of it) and is taught to be
 *                   beaten: where it is slower than MPI, handoff_zero_copy is the one that wins.
 *   op=handoff_zero_copy  the same, received with tshmem_pipe_recv_fwd_ptr: PE 1 reads the
 *                   activation's first word where it lies, in the slot, and releases the slot
 *                   (tshmem_pipe_release_fwd), as a layer that reads its input from the slot
 *                   would; against the same MPI figures (a layer reads MPI's buffer as well).
 *   op=gpipe_mM     one training step of M micro-batches through every PE as a stage, GPipe
 *   op=1f1b_mM      the same step, 1F1B; M = 1, 2, 4, 8, 16. bytes = one activation.
 *
 * The stages compute a tiny layer and then sleep: F us per forward and 2F per backward (F =
 * 2000, or 1000 with --quick). A sleep of fixed length, not a busy loop, so that the figures
 * measure the schedule even where the PEs outnumber the cores (a loaded 2-core machine). After
 * each step op, PE 0 prints
 *   # bubble sched=gpipe pes=P m=M step_us=.. ideal_us=.. bubble=.. theory=.. stash_max=..
 * with ideal_us the same M forwards and backwards timed on one stage alone (no handoffs, no
 * waiting), bubble = 1 - ideal / step, theory = (P - 1) / (M + P - 1), and stash_max the most
 * activations any stage held at once (GPipe: M on every stage; 1F1B: min(M, P) on stage 0).
 *   make bench-programs IMPL=solutions && tools/tshrun -np 2 build/solutions/bin/bench_3_2
 */
#include "bench.h"
#include "tshmem_pipe.h"

/* ---- handoff -------------------------------------------------------------------------------- */
struct handoff_ctx {
    tshmem_pipe_t *pipe;
    float *buf;   /* private: what stage 0 sends and stage 1 receives */
    size_t elems;
    int me;
    float first;  /* PE 1, zero copy: the first word it read from the slot */
};

static void handoff_prepare(void *p, int iter)
{
    struct handoff_ctx *c = p;
    if (c->me == 0)
        for (size_t i = 0; i < c->elems; i += 1024) /* a word per 4 KiB: the data changes */
            c->buf[i] = (float)(iter + (int)i);
}

static void handoff_tshmem(void *p, int iter)
{
    (void)iter;
    struct handoff_ctx *c = p;
    if (c->me == 0)
        tshmem_pipe_send_fwd(c->pipe, c->buf);
    else if (c->me == 1)
        tshmem_pipe_recv_fwd(c->pipe, c->buf);
}

static void handoff_zero_copy(void *p, int iter)
{
    (void)iter;
    struct handoff_ctx *c = p;
    if (c->me == 0) {
        tshmem_pipe_send_fwd(c->pipe, c->buf);
    } else if (c->me == 1) {
        const float *slot = tshmem_pipe_recv_fwd_ptr(c->pipe);
        c->first = slot[0];
        tshmem_pipe_release_fwd(c->pipe);
    }
}

static void handoff_mpi(void *p, int iter)
{
    (void)iter;
    struct handoff_ctx *c = p;
    size_t bytes = c->elems * sizeof(float);
    if (c->me == 0)
        MPI_Send(c->buf, (int)bytes, MPI_BYTE, 1, 32, MPI_COMM_WORLD);
    else if (c->me == 1)
        MPI_Recv(c->buf, (int)bytes, MPI_BYTE, 0, 32, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void handoff_check(const struct handoff_ctx *c, const char *what, int iter)
{
    if (c->me != 1)
        return;
    for (size_t i = 0; i < c->elems; i += 1024)
        if (c->buf[i] != (float)(iter + (int)i)) {
            fprintf(stderr, "bench_3_2: PE 1: %s of %zu floats: element %zu is %g, expected %g\n",
                    what, c->elems, i, (double)c->buf[i], (double)(float)(iter + (int)i));
            exit(1);
        }
}

static void handoff_bench(const struct bench_opts *o)
{
    int me = tshmem_my_pe();
    size_t sizes[64];
    int n_sizes = bench_wanted(o, "handoff") || bench_wanted(o, "handoff_zero_copy")
                      ? bench_sizes(o, sizes, 64)
                      : 0;
    for (int s = 0; s < n_sizes; s++) {
        struct handoff_ctx c = {.me = me};
        c.elems = sizes[s] >= sizeof(float) ? sizes[s] / sizeof(float) : 1;
        size_t bytes = c.elems * sizeof(float);
        c.buf = calloc(c.elems, sizeof(float));
        tshmem_pipe_config_t cfg = {.act_elems = c.elems, .n_slots = TSHMEM_PIPE_DEFAULT_SLOTS};
        c.pipe = tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg);
        int iters = bench_iters(o, bytes);
        handoff_prepare(&c, 7);
        handoff_tshmem(&c, 7);
        handoff_check(&c, "tshmem_pipe_recv_fwd", 7);
        bench_report("handoff", "tshmem", bytes, iters,
                     bench_measure((struct bench_fn){handoff_prepare, handoff_tshmem, &c}, iters),
                     1.0);
        handoff_prepare(&c, 8);
        if (me == 1) { /* untimed: the whole activation, read where it lies */
            float *mine = c.buf;
            c.buf = (float *)tshmem_pipe_recv_fwd_ptr(c.pipe);
            handoff_check(&c, "tshmem_pipe_recv_fwd_ptr", 8);
            c.buf = mine;
            tshmem_pipe_release_fwd(c.pipe);
        } else {
            handoff_zero_copy(&c, 8);
        }
        bench_report("handoff_zero_copy", "tshmem", bytes, iters,
                     bench_measure((struct bench_fn){handoff_prepare, handoff_zero_copy, &c},
                                   iters),
                     1.0);
        handoff_prepare(&c, 9);
        handoff_mpi(&c, 9);
        handoff_check(&c, "MPI_Recv", 9);
        struct bench_result mpi =
            bench_measure((struct bench_fn){handoff_prepare, handoff_mpi, &c}, iters);
        bench_report("handoff", "mpi", bytes, iters, mpi, 1.0);
        bench_report("handoff_zero_copy", "mpi", bytes, iters, mpi, 1.0);
        tshmem_pipe_destroy(c.pipe);
        free(c.buf);
    }
    if (me == 0 && n_sizes > 0)
        printf("# handoff copies every byte twice (into the slot, out of it): where it is slower "
               "than MPI_Send/MPI_Recv, the zero-copy receive of this chapter "
               "(op=handoff_zero_copy) is the one that beats it\n");
}

/* ---- schedules ------------------------------------------------------------------------------ */
struct step_ctx {
    tshmem_pipe_t *pipe;
    struct tshmem_pipe_model model;
    int gpipe, m;
};

static void step_run(void *p, int iter)
{
    struct step_ctx *c = p;
    tshmem_pipe_model_zero_grad(&c->model);
    if (c->gpipe)
        tshmem_pipe_gpipe(c->pipe, &c->model, iter, c->m);
    else
        tshmem_pipe_1f1b(c->pipe, &c->model, iter, c->m);
}

/* The same work on this stage with nobody to wait for: m forwards, then m backwards. */
static double ideal_us(struct tshmem_pipe_model *model, int m, int reps)
{
    double best = 1e30;
    int last = model->stage == model->n_stages - 1;
    for (int r = 0; r < reps; r++) {
        tshmem_pipe_model_begin(model, 0, m);
        double t0 = bench_now();
        for (int mb = 0; mb < m; mb++)
            tshmem_pipe_model_forward(model, mb, model->x, model->y);
        for (int mb = 0; mb < m; mb++)
            tshmem_pipe_model_backward(model, mb, last ? NULL : model->dy, model->dx);
        double t = 1e6 * (bench_now() - t0);
        best = t < best ? t : best;
    }
    tshmem_pipe_model_zero_grad(model);
    return best;
}

static void schedule_bench(const struct bench_opts *o)
{
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    const int rows = 1, width = 16;
    long f_us = o->quick ? 1000 : 2000;
    tshmem_pipe_config_t cfg = {.act_elems = (size_t)rows * width,
                                .n_slots = TSHMEM_PIPE_DEFAULT_SLOTS};
    struct step_ctx c = {.pipe = tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg)};
    tshmem_pipe_model_init(&c.model, me, n, rows, width, 5);
    c.model.fwd_us = f_us;
    c.model.bwd_us = 2 * f_us;
    static const int micros[] = {1, 2, 4, 8, 16};
    int iters = o->iters > 0 ? o->iters : o->quick ? 3 : 10;
    for (int k = 0; k < 5; k++) {
        /* The slowest stage's time alone for this m: what a step would take with no bubble. */
        double ideal = ideal_us(&c.model, micros[k], o->quick ? 1 : 3), ideal_max = 0;
        MPI_Allreduce(&ideal, &ideal_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        for (int g = 1; g >= 0; g--) {
            char op[32];
            c.gpipe = g, c.m = micros[k];
            snprintf(op, sizeof op, "%s_m%d", g ? "gpipe" : "1f1b", c.m);
            if (!bench_wanted(o, op))
                continue;
            struct bench_result r = bench_measure((struct bench_fn){NULL, step_run, &c}, iters);
            bench_report(op, "tshmem", cfg.act_elems * sizeof(float), iters, r, 1.0);
            int peak = c.model.stash_peak, peak_max = 0; /* the most any stage stashed */
            MPI_Allreduce(&peak, &peak_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            if (me == 0)
                printf("# bubble sched=%s pes=%d m=%d step_us=%.0f ideal_us=%.0f bubble=%.3f "
                       "theory=%.3f stash_max=%d\n", g ? "gpipe" : "1f1b", n, c.m, r.median_us,
                       ideal_max, 1 - ideal_max / r.median_us,
                       (double)(n - 1) / (c.m + n - 1), peak_max);
            fflush(stdout);
        }
    }
    tshmem_pipe_model_free(&c.model);
    tshmem_pipe_destroy(c.pipe);
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    /* Two directions of two slots of the largest activation, and some room. */
    bench_heap((4 * o.max_bytes + (16u << 20)) & ~(size_t)0xfffff);
    tshmem_init();
    if (tshmem_n_pes() < 2) {
        if (tshmem_my_pe() == 0)
            fprintf(stderr, "bench_3_2: run it on 2 PEs or more (tools/tshrun -np 2 ...): a "
                    "pipeline needs two stages.\n");
        tshmem_finalize();
        return 2;
    }
    handoff_bench(&o);
    schedule_bench(&o);
    tshmem_barrier_all();
    tshmem_finalize();
    return 0;
}
