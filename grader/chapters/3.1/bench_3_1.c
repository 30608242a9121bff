/* bench_3_1.c: chapter 3.1's benchmark: all-to-all, and MoE dispatch and combine, against MPI.
 *
 *   make bench-programs IMPL=solutions && tools/tshrun -np 2 build/solutions/bin/bench_3_1
 *
 * Operations (--op NAME runs one):
 *   alltoall  tshmem_alltoallmem (the selector's choice) against MPI_Alltoall; bytes = what
 *             each PE sends in all (n blocks), busbw = algbw x (n - 1) / n.
 *   alltoall_direct, alltoall_oneshot
 *             each algorithm forced through tshmem_alltoallmem_algo, in the same run (one-shot
 *             only while the n blocks fit its 8 KiB stage).
 *   dispatch  tshmem_moe_dispatch against the same exchange written with MPI: MPI_Alltoall of
 *             the per-expert counts, MPI_Alltoallv of the rows (and of their (token, slot)),
 *             then a local regroup by expert.
 *   combine   tshmem_moe_combine against MPI_Alltoallv of the outputs back to their home PEs
 *             and the weighted sum in slot order. Each timed combine follows an untimed dispatch.
 * For dispatch and combine, the sizes are layer shapes (tokens T per PE, hidden H, top_k k,
 * experts E), listed on each line; bytes = T x k x H x 4, the rows one PE sends, so algbw is
 * rows' bytes per second; tokens_per_s = T / time. Routing: k distinct experts per token,
 * uniform at random, the same for both implementations. Experts are the identity, and the
 * result is checked (y = x times the sum of the weights) for both. A timed dispatch ends with
 * the receiver reading each received row once (first_read), as its experts would. After each
 * dispatch or combine line, a "# " line gives the same figure as tokens per second and GB/s of
 * rows, with the shape.
 */
#include "bench.h"

/* ---- all-to-all ------------------------------------------------------------------------- */
struct a2a_ctx {
    int mpi, me, n;
    enum tshmem_algo algo; /* tshmem's: AUTO (tshmem_alltoallmem), DIRECT or ONESHOT */
    size_t block;
    unsigned char *dest, *source;
};

static void a2a_prepare(void *p, int iter)
{
    struct a2a_ctx *c = p;
    memset(c->dest, 0, c->block * (size_t)c->n); /* the reader's lines in its cache, as used */
    for (int j = 0; j < c->n; j++)
        memset(c->source + (size_t)j * c->block, (c->me * 31 + j * 7 + iter) & 0xff, c->block);
}

static void a2a_run(void *p, int iter)
{
    struct a2a_ctx *c = p;
    (void)iter;
    if (c->mpi)
        MPI_Alltoall(c->source, (int)c->block, MPI_BYTE, c->dest, (int)c->block, MPI_BYTE,
                     MPI_COMM_WORLD);
    else if (c->algo == TSHMEM_ALGO_AUTO)
        tshmem_alltoallmem(TSHMEM_TEAM_WORLD, c->dest, c->source, c->block);
    else
        tshmem_alltoallmem_algo(TSHMEM_TEAM_WORLD, c->dest, c->source, c->block, c->algo);
}

static void a2a_verify(const struct a2a_ctx *c, int last)
{
    for (int i = 0; i < c->n; i++) {
        unsigned char want = (unsigned char)((i * 31 + c->me * 7 + last) & 0xff);
        const unsigned char *b = c->dest + (size_t)i * c->block;
        if (b[0] != want || b[c->block - 1] != want) {
            fprintf(stderr, "bench_3_1: PE %d: alltoall (%s), %zu bytes per block: block %d is "
                    "0x%02x, expected 0x%02x: the result is wrong, the timing worthless\n", c->me,
                    c->mpi ? "mpi" : "tshmem", c->block, i, b[0], want);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
}

/* ---- MoE ---------------------------------------------------------------------------------- */
struct shape {
    int T, H, k, E;
};

struct moe_ctx {
    int mpi, me, n;
    struct shape s;
    float *x, *w, *y;
    int *idx;
    /* tshmem */
    tshmem_moe_t *moe;
    float *recv;
    tshmem_moe_layout_t lay;
    /* MPI: the same exchange by hand */
    int *pe_of, *first_of;                  /* [E]: owner, [n + 1]: first expert of each PE */
    int lmax;                               /* the most experts a PE owns */
    int *cnt_send, *cnt_recv;               /* [n][lmax] rows per (PE, its local expert) */
    int *scount, *sdispl, *rcount, *rdispl; /* rows per PE, for MPI_Alltoallv (in floats) */
    int *mcount, *mdispl, *mrcount, *mrdispl; /* the same for the (token, slot) pairs */
    int *pos;                               /* [T k]: where (t, s) sits in the packed rows */
    float *packed, *arrived, *grouped, *back;
    int *meta, *meta_in;
    int *from_row;                          /* [rows]: grouped row -> arrived row */
    int rows_in;
};

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* This PE's tokens: values in 1/8 steps and weights in 1/64 steps, so the check is exact. */
static void make_tokens(struct moe_ctx *c)
{
    uint64_t r = mix((uint64_t)c->me + 99);
    size_t T = (size_t)c->s.T, H = (size_t)c->s.H, k = (size_t)c->s.k;
    for (size_t i = 0; i < T * H; i++)
        c->x[i] = (float)((int)((r = mix(r)) % 33) - 16) / 8.0f;
    for (size_t t = 0; t < T; t++)
        for (size_t s = 0; s < k; s++) {
            int e, again;
            do { /* k distinct experts */
                e = (int)((r = mix(r)) % (uint64_t)c->s.E);
                again = 0;
                for (size_t q = 0; q < s; q++)
                    again |= c->idx[t * k + q] == e;
            } while (again);
            c->idx[t * k + s] = e;
            c->w[t * k + s] = (float)(1 + (r = mix(r)) % 16) / 64.0f;
        }
}

static void mpi_dispatch(struct moe_ctx *c)
{
    int n = c->n, H = c->s.H, k = c->s.k, T = c->s.T, L = c->lmax;
    memset(c->cnt_send, 0, sizeof(int) * (size_t)n * L);
    for (int i = 0; i < T * k; i++) {
        int e = c->idx[i], p = c->pe_of[e];
        c->cnt_send[p * L + e - c->first_of[p]]++;
    }
    MPI_Alltoall(c->cnt_send, L, MPI_INT, c->cnt_recv, L, MPI_INT, MPI_COMM_WORLD);
    /* Pack by destination PE, then its local expert, then token: a cursor per (PE, expert). */
    int *cur = malloc(sizeof(int) * ((size_t)n * L + 1)), at = 0;
    for (int p = 0; p < n; p++) {
        c->sdispl[p] = at * H, c->mdispl[p] = at * 2;
        for (int l = 0; l < L; l++)
            cur[p * L + l] = at, at += c->cnt_send[p * L + l];
        c->scount[p] = at * H - c->sdispl[p], c->mcount[p] = at * 2 - c->mdispl[p];
    }
    for (int t = 0; t < T; t++)
        for (int s = 0; s < k; s++) {
            int e = c->idx[t * k + s], p = c->pe_of[e];
            int r = cur[p * L + e - c->first_of[p]]++;
            memcpy(c->packed + (size_t)r * H, c->x + (size_t)t * H, sizeof(float) * (size_t)H);
            c->meta[2 * r] = t, c->meta[2 * r + 1] = s;
            c->pos[t * k + s] = r;
        }
    int rin = 0;
    for (int j = 0; j < n; j++) {
        int rows = 0;
        for (int l = 0; l < L; l++)
            rows += c->cnt_recv[j * L + l];
        c->rdispl[j] = rin * H, c->rcount[j] = rows * H;
        c->mrdispl[j] = rin * 2, c->mrcount[j] = rows * 2;
        rin += rows;
    }
    c->rows_in = rin;
    MPI_Alltoallv(c->packed, c->scount, c->sdispl, MPI_FLOAT, c->arrived, c->rcount, c->rdispl,
                  MPI_FLOAT, MPI_COMM_WORLD);
    MPI_Alltoallv(c->meta, c->mcount, c->mdispl, MPI_INT, c->meta_in, c->mrcount, c->mrdispl,
                  MPI_INT, MPI_COMM_WORLD);
    /* Regroup: rows arrived source by source (each in expert order); experts first now. */
    int g = 0, nl = c->first_of[c->me + 1] - c->first_of[c->me];
    for (int l = 0; l < nl; l++)
        for (int j = 0; j < n; j++) {
            int start = c->rdispl[j] / H;
            for (int q = 0; q < l; q++)
                start += c->cnt_recv[j * L + q];
            for (int i = 0; i < c->cnt_recv[j * L + l]; i++, g++) {
                memcpy(c->grouped + (size_t)g * H, c->arrived + (size_t)(start + i) * H,
                       sizeof(float) * (size_t)H);
                c->from_row[g] = start + i;
            }
        }
    free(cur);
}

static void mpi_combine(struct moe_ctx *c)
{
    int H = c->s.H, k = c->s.k, T = c->s.T;
    /* The experts' outputs (identity: the grouped rows) back into arrival order, then home. */
    for (int g = 0; g < c->rows_in; g++)
        memcpy(c->arrived + (size_t)c->from_row[g] * H, c->grouped + (size_t)g * H,
               sizeof(float) * (size_t)H);
    MPI_Alltoallv(c->arrived, c->rcount, c->rdispl, MPI_FLOAT, c->back, c->scount, c->sdispl,
                  MPI_FLOAT, MPI_COMM_WORLD);
    for (int t = 0; t < T; t++) {
        float *out = c->y + (size_t)t * H;
        memset(out, 0, sizeof(float) * (size_t)H);
        for (int s = 0; s < k; s++) {
            float w = c->w[t * k + s];
            const float *row = c->back + (size_t)c->pos[t * k + s] * H;
            for (int h = 0; h < H; h++)
                out[h] += w * row[h];
        }
    }
}

static void tshmem_dispatch_once(struct moe_ctx *c)
{
    tshmem_moe_dispatch(c->moe, c->x, c->s.T, c->s.k, c->idx, c->w, &c->recv, &c->lay);
}

static void first_read(const float *rows, size_t floats);

/* Untimed: the dispatch the combine undoes, and the experts' work in between. Identity experts
 * compute nothing, but a real expert has read every row it received before its output goes
 * home; so each side's expert output is in the expert's cache when the combine starts: MPI's
 * (grouped) because its regroup wrote it, tshmem's (the recv buffer itself) by a first_read.
 * Without that read, the writers of the dispatch would still hold tshmem's rows in their
 * caches, and the combine would pay the move that the expert's compute pays in a model. */
static void moe_prepare_combine(void *p, int iter)
{
    struct moe_ctx *c = p;
    (void)iter;
    if (c->mpi) {
        mpi_dispatch(c);
    } else {
        tshmem_dispatch_once(c); /* identity experts: expert_out is the recv buffer itself */
        first_read(c->recv, (size_t)c->lay.n_rows * c->s.H);
    }
}

/* The experts' first read of what arrived: one load per cache line of every received row.
 * Without it a one-sided dispatch would look cheaper than it is: its rows sit in the writer's
 * cache, and the move to the reader's core would come later, outside the timed region (MPI's
 * regroup makes that move inside it). */
static volatile float sink;
static void first_read(const float *rows, size_t floats)
{
    float s = 0;
    for (size_t i = 0; i < floats; i += 16)
        s += rows[i];
    sink = s;
}

static void moe_run_dispatch(void *p, int iter)
{
    struct moe_ctx *c = p;
    (void)iter;
    if (c->mpi) {
        mpi_dispatch(c);
        first_read(c->grouped, (size_t)c->rows_in * c->s.H);
    } else {
        tshmem_dispatch_once(c);
        first_read(c->recv, (size_t)c->lay.n_rows * c->s.H);
    }
}

static void moe_run_combine(void *p, int iter)
{
    struct moe_ctx *c = p;
    (void)iter;
    if (c->mpi)
        mpi_combine(c);
    else
        tshmem_moe_combine(c->moe, c->recv, c->y);
}

static void moe_verify(const struct moe_ctx *c)
{
    for (int t = 0; t < c->s.T; t++) {
        float sw = 0;
        for (int s = 0; s < c->s.k; s++)
            sw += c->w[t * c->s.k + s];
        for (int h = 0; h < c->s.H; h++)
            if (c->y[(size_t)t * c->s.H + h] != c->x[(size_t)t * c->s.H + h] * sw) {
                fprintf(stderr, "bench_3_1: PE %d: combine (%s): y[%d][%d] is %g, expected %g: "
                        "the result is wrong, the timing worthless\n", c->me,
                        c->mpi ? "mpi" : "tshmem", t, h, (double)c->y[(size_t)t * c->s.H + h],
                        (double)(c->x[(size_t)t * c->s.H + h] * sw));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    }
}

static void moe_report(const char *op, const struct moe_ctx *c, int iters, struct bench_result r)
{
    if (c->me != 0)
        return;
    size_t bytes = (size_t)c->s.T * c->s.k * c->s.H * sizeof(float);
    double algbw = (double)bytes / (r.median_us * 1e3);
    printf("bench op=%s impl=%s pes=%d bytes=%zu iters=%d median_us=%.3f min_us=%.3f "
           "max_us=%.3f algbw_GBps=%.3f busbw_GBps=%.3f tokens=%d hidden=%d topk=%d experts=%d "
           "tokens_per_s=%.0f\n", op, c->mpi ? "mpi" : "tshmem", c->n, bytes, iters, r.median_us,
           r.min_us, r.max_us, algbw, algbw, c->s.T, c->s.H, c->s.k, c->s.E,
           (double)c->s.T / (r.median_us * 1e-6));
    /* The same per layer shape, for the reader (grader bench lists these after its tables). */
    printf("# %-8s %-6s T=%-4d H=%-5d k=%d E=%-3d %8.0f tokens/s per PE, rows at %6.2f GB/s\n", op,
           c->mpi ? "mpi" : "tshmem", c->s.T, c->s.H, c->s.k, c->s.E,
           (double)c->s.T / (r.median_us * 1e-6), algbw);
    fflush(stdout);
}

static void *xmalloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p)
        MPI_Abort(MPI_COMM_WORLD, 2);
    return p;
}

static void moe_shape(const struct bench_opts *o, struct shape s, int me, int n)
{
    struct moe_ctx c = {.me = me, .n = n, .s = s};
    size_t T = (size_t)s.T, H = (size_t)s.H, k = (size_t)s.k, rows = (size_t)n * T * k;
    c.x = xmalloc(sizeof(float) * T * H), c.y = xmalloc(sizeof(float) * T * H);
    c.w = xmalloc(sizeof(float) * T * k), c.idx = xmalloc(sizeof(int) * T * k);
    make_tokens(&c);
    tshmem_moe_config_t cfg = {s.E, s.H, s.k, s.T};
    c.moe = tshmem_moe_create(TSHMEM_TEAM_WORLD, &cfg);
    c.pe_of = xmalloc(sizeof(int) * (size_t)s.E), c.first_of = xmalloc(sizeof(int) * (n + 1));
    for (int p = 0; p <= n; p++)
        c.first_of[p] = (int)((long)p * s.E / n);
    for (int e = 0; e < s.E; e++)
        c.pe_of[e] = tshmem_moe_expert_pe(c.moe, e);
    for (int p = 0; p < n; p++)
        c.lmax = c.first_of[p + 1] - c.first_of[p] > c.lmax ? c.first_of[p + 1] - c.first_of[p]
                                                            : c.lmax;
    c.lmax = c.lmax ? c.lmax : 1;
    c.cnt_send = xmalloc(sizeof(int) * (size_t)n * c.lmax);
    c.cnt_recv = xmalloc(sizeof(int) * (size_t)n * c.lmax);
    int **v[] = {&c.scount, &c.sdispl, &c.rcount, &c.rdispl,
                 &c.mcount, &c.mdispl, &c.mrcount, &c.mrdispl};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        *v[i] = xmalloc(sizeof(int) * (size_t)n);
    c.pos = xmalloc(sizeof(int) * T * k);
    c.packed = xmalloc(sizeof(float) * T * k * H), c.back = xmalloc(sizeof(float) * T * k * H);
    c.arrived = xmalloc(sizeof(float) * rows * H), c.grouped = xmalloc(sizeof(float) * rows * H);
    c.meta = xmalloc(sizeof(int) * 2 * T * k), c.meta_in = xmalloc(sizeof(int) * 2 * rows);
    c.from_row = xmalloc(sizeof(int) * rows);
    int iters = bench_iters(o, T * k * H * sizeof(float));
    for (c.mpi = 1; c.mpi >= 0; c.mpi--) {
        if (bench_wanted(o, "dispatch")) {
            struct bench_result r = bench_measure((struct bench_fn){NULL, moe_run_dispatch, &c},
                                                  iters);
            moe_report("dispatch", &c, iters, r);
        }
        if (bench_wanted(o, "combine")) {
            memset(c.y, 0, sizeof(float) * T * H);
            struct bench_result r = bench_measure(
                (struct bench_fn){moe_prepare_combine, moe_run_combine, &c}, iters);
            moe_verify(&c);
            moe_report("combine", &c, iters, r);
        }
    }
    tshmem_moe_destroy(c.moe);
    void *f[] = {c.x, c.y, c.w, c.idx, c.pe_of, c.first_of, c.cnt_send, c.cnt_recv, c.scount,
                 c.sdispl, c.rcount, c.rdispl, c.mcount, c.mdispl, c.mrcount, c.mrdispl, c.pos,
                 c.packed, c.back, c.arrived, c.grouped, c.meta, c.meta_in, c.from_row};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        free(f[i]);
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    /* Layer shapes: a decode-sized batch, then larger ones. The biggest (full run only) needs
     * 2 x 512 x 2 rows of 16 KiB in the recv buffer of each of 2 PEs. */
    static const struct shape quick[] = {{64, 256, 2, 8}, {128, 1024, 2, 8}, {128, 512, 6, 64}};
    static const struct shape full[] = {{16, 256, 2, 8},    {64, 256, 2, 8},  {128, 1024, 2, 8},
                                        {128, 512, 6, 64},  {256, 2048, 6, 64},
                                        {512, 4096, 2, 8}};
    const struct shape *shapes = o.quick ? quick : full;
    int n_shapes = o.quick ? 3 : 6;
    size_t moe_heap = 0;
    int nw;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &nw);
    for (int i = 0; i < n_shapes; i++) {
        const struct shape *s = &shapes[i];
        size_t rows = (size_t)nw * s->T * s->k, need = (rows + (size_t)s->T * s->k) *
                                                       ((size_t)s->H * 4 + 8);
        moe_heap = need > moe_heap ? need : moe_heap;
    }
    size_t a2a_heap = 2 * o.max_bytes;
    bench_heap((a2a_heap > moe_heap ? a2a_heap : moe_heap) + (16u << 20));
    tshmem_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    /* The all-to-all ops: MPI and the selector's choice (both under "alltoall"), then each
     * algorithm forced. */
    static const struct {
        const char *op;
        int mpi;
        enum tshmem_algo algo;
    } a2a_ops[] = {{"alltoall", 1, TSHMEM_ALGO_AUTO},
                   {"alltoall", 0, TSHMEM_ALGO_AUTO},
                   {"alltoall_direct", 0, TSHMEM_ALGO_DIRECT},
                   {"alltoall_oneshot", 0, TSHMEM_ALGO_ONESHOT}};
    int any_a2a = 0;
    for (size_t k = 0; k < sizeof a2a_ops / sizeof a2a_ops[0]; k++)
        any_a2a |= bench_wanted(&o, a2a_ops[k].op);
    if (any_a2a) {
        unsigned char *sd = tshmem_malloc(o.max_bytes), *ss = tshmem_malloc(o.max_bytes);
        unsigned char *md = xmalloc(o.max_bytes), *ms = xmalloc(o.max_bytes);
        size_t sizes[64];
        int n_sizes = bench_sizes(&o, sizes, 64);
        for (int i = 0; i < n_sizes; i++) {
            size_t block = sizes[i] / (size_t)n;
            if (block == 0)
                continue;
            for (size_t k = 0; k < sizeof a2a_ops / sizeof a2a_ops[0]; k++) {
                int mpi = a2a_ops[k].mpi;
                if (!bench_wanted(&o, a2a_ops[k].op) ||
                    (a2a_ops[k].algo == TSHMEM_ALGO_ONESHOT && block * (size_t)n > 8192))
                    continue;
                struct a2a_ctx c = {mpi, me, n, a2a_ops[k].algo, block, mpi ? md : sd,
                                    mpi ? ms : ss};
                int iters = bench_iters(&o, sizes[i]);
                struct bench_result r = bench_measure((struct bench_fn){a2a_prepare, a2a_run, &c},
                                                      iters);
                a2a_verify(&c, iters / 10 + iters);
                bench_report(a2a_ops[k].op, mpi ? "mpi" : "tshmem", block * (size_t)n, iters, r,
                             (double)(n - 1) / n);
            }
        }
        tshmem_free(ss);
        tshmem_free(sd);
        free(md), free(ms);
    }
    for (int i = 0; i < n_shapes; i++)
        if (bench_wanted(&o, "dispatch") || bench_wanted(&o, "combine"))
            moe_shape(&o, shapes[i], me, n);
    tshmem_finalize();
    MPI_Finalize();
    return 0;
}
