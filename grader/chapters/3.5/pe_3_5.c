/* pe_3_5.c: the PE side of chapter 3.5's tests: an MLP block split over a team (column-, then
 * row-parallel), against the single-process block, alone and in a TP x DP grid.
 *
 * What must be equal bit for bit: the inner activation of every shard and every weight
 * gradient (their sums never cross the split) and, after SGD, the weights. What may differ by
 * rounding: y and dx, whose sums over the inner units are split between the PEs; the bound is
 * the book's, 2 gamma_(n-1) x (the sum of the magnitudes of the n terms), gamma_k = k u / (1 -
 * k u), u = 2^-24, computed here in double from the single-process block's own numbers. */
#include <math.h>

#include "pe_test.h"
#include "tshmem_internal.h" /* white box: the team table */
#include "tshmem_tp.h"

#define SEED 3535u

/* CHECK_OR_STOP for the functions that return whether every check passed. */
#define CHECK_OR_FALSE(cond, ...)                                                             \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            FAIL(__VA_ARGS__);                                                                \
            return 0;                                                                         \
        }                                                                                     \
    } while (0)

static double gamma_n(int k)
{
    double u = 0x1p-24;
    return k * u / (1 - k * u);
}

/* A value of step s at index i, the same on every PE: inputs and upstream gradients. */
static float hashed(unsigned what, int s, size_t i)
{
    uint64_t z = ((uint64_t)what << 48) ^ ((uint64_t)s << 32) ^ i;
    z = (z ^ (z >> 31)) * 0x7fb5d329728ea185ull;
    z = (z ^ (z >> 27)) * 0x81dadef4bc2dd44dull;
    z ^= z >> 33;
    return (float)((double)(z >> 11) * 0x1p-52 - 1.0);
}

static uint64_t bits_hash(const float *v, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < n * sizeof(float); i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* The shards the book promises: ffn / t units each, the first ffn % t PEs one more. */
static void check_shards(const tshmem_tp_t *tp, int ffn)
{
    int t = tp->size, next = 0;
    for (int k = 0; k < t; k++) {
        int first = -1, cols = tshmem_tp_shard(tp, k, &first);
        int want = ffn / t + (k < ffn % t);
        CHECK(cols == want && first == next,
              "ffn %d over %d PEs: tshmem_tp_shard gives team PE %d units %d .. %d (%d), "
              "expected %d .. %d (%d): ffn / t each, the first ffn %% t PEs one more", ffn, t, k,
              first, first + cols - 1, cols, next, next + want - 1, want);
        if (k == tp->rank)
            CHECK(tp->mlp.first == next && tp->mlp.cols == want,
                  "team PE %d holds units %d .. %d, but its shard is %d .. %d", k,
                  tp->mlp.first, tp->mlp.first + tp->mlp.cols - 1, next, next + want - 1);
        next += want;
    }
}

/* Bit-for-bit: the shard's part of a whole-block array. mine[k * cols + j] against
 * whole[k * ffn + first + j] (stride_whole = ffn), or rows of hidden (stride = cols = 0). */
static int same_slice(const char *what, int step, const float *mine, const float *whole,
                      int outer, int inner, int whole_stride, int offset)
{
    for (int k = 0; k < outer; k++)
        for (int j = 0; j < inner; j++) {
            float a = mine[(size_t)k * inner + j];
            float b = whole[(size_t)k * whole_stride + offset + j];
            if (memcmp(&a, &b, sizeof a) != 0) {
                FAIL("step %d: %s[%d][%d] of this shard is %.9g, the single-process block has "
                     "%.9g (element [%d][%d]): this number's sum does not cross the split, so it "
                     "must be the same bits. A wrong shard (first, cols), an input that differs "
                     "between the team's PEs, or a gradient added twice", step, what, k, j,
                     (double)a, (double)b, k, offset + j);
                return 0;
            }
        }
    return 1;
}

static double worst_ratio; /* the largest |mine - ref| / bound seen, for the book's table */

/* Within the rounding bound: |mine - ref| <= 2 gamma_(n-1) mag. */
static int close_to(const char *what, int step, const float *mine, const float *ref,
                    const double *mag, int n_terms, int rows, int hidden)
{
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < hidden; o++) {
            size_t i = (size_t)r * hidden + o;
            double diff = fabs((double)mine[i] - (double)ref[i]);
            double bound = 2 * gamma_n(n_terms - 1) * mag[i];
            if (bound > 0 && diff / bound > worst_ratio)
                worst_ratio = diff / bound;
            if (!(diff <= bound)) {
                FAIL("step %d: %s[%d][%d] is %.9g, the single-process block has %.9g: they "
                     "differ by %.3g, more than rounding can explain (2 gamma_%d x %.4g = %.3g). "
                     "A bias or residual added on every PE (t times), a missing or extra "
                     "allreduce, or a partial sum of the wrong units", step, what, r, o,
                     (double)mine[i], (double)ref[i], diff, n_terms - 1, mag[i], bound);
                return 0;
            }
        }
    return 1;
}

/* The magnitudes behind y (forward) and dx (backward) of the single-process block. */
static void magnitudes_y(const struct tshmem_tp_mlp *w, const float *x, double *mag)
{
    int h = w->hidden, f = w->ffn;
    for (int r = 0; r < w->rows; r++)
        for (int o = 0; o < h; o++) {
            double s = fabs(w->b2[o]) + fabs(x[(size_t)r * h + o]);
            for (int j = 0; j < f; j++)
                s += fabs((double)w->W2[(size_t)o * f + j] * w->a[(size_t)r * f + j]);
            mag[(size_t)r * h + o] = s;
        }
}

static void magnitudes_dx(const struct tshmem_tp_mlp *w, const float *dy, double *mag)
{
    int h = w->hidden, f = w->ffn;
    for (int r = 0; r < w->rows; r++)
        for (int i = 0; i < h; i++) {
            double s = fabs(dy[(size_t)r * h + i]);
            for (int j = 0; j < f; j++)
                s += fabs((double)w->W1[(size_t)j * h + i] * w->dz[(size_t)r * f + j]);
            mag[(size_t)r * h + i] = s;
        }
}

/* Every weight gradient of the shard against the whole block's (sum over DP replicas). */
static int same_grads(const struct tshmem_tp_mlp *m, const struct tshmem_tp_mlp *whole,
                      const float *whole_grads, int step)
{
    int h = m->hidden, c = m->cols, f = m->ffn, first = m->first;
    const float *gW1 = whole_grads, *gb1 = gW1 + (size_t)f * h, *gW2 = gb1 + f;
    const float *gb2 = gW2 + (size_t)h * f;
    (void)whole;
    return same_slice("gW1", step, m->gW1, gW1 + (size_t)first * h, c, h, h, 0) &&
           same_slice("gb1", step, m->gb1, gb1, 1, c, f, first) &&
           same_slice("gW2", step, m->gW2, gW2, h, c, f, first) &&
           same_slice("gb2", step, m->gb2, gb2, 1, h, h, 0);
}

/* One pass checked: forward and backward on this PE's rows, against the whole block. */
struct pass {
    float *x, *y, *dy, *dx, *yref, *dxref;
    double *mag;
};

static int check_pass(tshmem_tp_t *tp, struct tshmem_tp_mlp *whole, struct pass *p, int rows,
                      int step, MPI_Comm team_comm)
{
    int h = whole->hidden, f = whole->ffn;
    uint64_t calls = tp->allreduce_calls, bytes = tp->allreduce_bytes;
    uint64_t want = (uint64_t)rows * h * sizeof(float);
    tshmem_tp_forward(tp, p->x, rows, p->y);
    CHECK_OR_FALSE(tp->allreduce_calls == calls + 1 && tp->allreduce_bytes == bytes + want,
                  "step %d: the forward ran %llu allreduces of %llu bytes in all; expected one "
                  "(g) of rows x hidden = %llu bytes", step,
                  (unsigned long long)(tp->allreduce_calls - calls),
                  (unsigned long long)(tp->allreduce_bytes - bytes), (unsigned long long)want);
    tshmem_tp_reference_forward(whole, p->x, rows, p->yref);
    if (!same_slice("a (the GELU's output)", step, tp->mlp.a, whole->a, rows, tp->mlp.cols, f,
                    tp->mlp.first))
        return 0;
    magnitudes_y(whole, p->x, p->mag);
    if (!close_to("y", step, p->y, p->yref, p->mag, f + 2, rows, h))
        return 0;
    uint64_t mine = bits_hash(p->y, (size_t)rows * h), lo, hi;
    MPI_Allreduce(&mine, &lo, 1, MPI_UINT64_T, MPI_MIN, team_comm);
    MPI_Allreduce(&mine, &hi, 1, MPI_UINT64_T, MPI_MAX, team_comm);
    CHECK_OR_FALSE(lo == hi, "step %d: the team's PEs returned different bits of y: every PE of "
                  "the team must end the forward with the same y (the allreduce's result, then "
                  "the same b2 and x)", step);
    calls = tp->allreduce_calls, bytes = tp->allreduce_bytes;
    tshmem_tp_backward(tp, p->dy, p->dx);
    CHECK_OR_FALSE(tp->allreduce_calls == calls + 1 && tp->allreduce_bytes == bytes + want,
                  "step %d: the backward ran %llu allreduces of %llu bytes in all; expected one "
                  "(f's backward) of %llu bytes", step,
                  (unsigned long long)(tp->allreduce_calls - calls),
                  (unsigned long long)(tp->allreduce_bytes - bytes), (unsigned long long)want);
    tshmem_tp_reference_backward(whole, p->dy, p->dxref);
    magnitudes_dx(whole, p->dy, p->mag);
    return close_to("dx", step, p->dx, p->dxref, p->mag, f + 1, rows, h);
}

static struct pass pass_alloc(int rows, int h)
{
    size_t n = (size_t)rows * h;
    struct pass p;
    p.x = calloc(n, 4), p.y = calloc(n, 4), p.dy = calloc(n, 4), p.dx = calloc(n, 4);
    p.yref = calloc(n, 4), p.dxref = calloc(n, 4), p.mag = calloc(n, sizeof(double));
    return p;
}

static void pass_free(struct pass *p)
{
    free(p->x), free(p->y), free(p->dy), free(p->dx), free(p->yref), free(p->dxref), free(p->mag);
}

static void fill(struct pass *p, int rows, int h, int step, int row0)
{
    for (size_t i = 0; i < (size_t)rows * h; i++) {
        p->x[i] = hashed(1, step, (size_t)row0 * h + i);
        p->dy[i] = 0.05f * hashed(2, step, (size_t)row0 * h + i);
    }
}

/* STEPS passes of the block on team (all PEs call it; the members compute), SGD between them,
 * each against the single-process block beside it. 0 after a failed check. */
static int run_block(tshmem_team_t team, int h, int f, int rows, int steps)
{
    int me = tshmem_my_pe();
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, team == TSHMEM_TEAM_INVALID ? MPI_UNDEFINED : 0, me, &comm);
    tshmem_tp_config_t cfg = {.hidden = h, .ffn = f, .max_rows = rows, .seed = SEED};
    tshmem_tp_t *tp = tshmem_tp_create(team, &cfg);
    if (tshmem_tp_rank(tp) < 0) {
        STEP("not in the team: waiting to destroy the block");
        tshmem_tp_destroy(tp);
        return 1;
    }
    STEP("team PE %d of %d: units %d .. %d of %d", tp->rank, tp->size, tp->mlp.first,
         tp->mlp.first + tp->mlp.cols - 1, f);
    check_shards(tp, f);
    if (pe_failures)
        return 0;
    struct tshmem_tp_mlp whole;
    tshmem_tp_mlp_init(&whole, h, f, 0, f, rows, SEED, NULL);
    struct pass p = pass_alloc(rows, h);
    for (int s = 0; s < steps; s++) {
        STEP("TP %d, step %d", tp->size, s);
        fill(&p, rows, h, s, 0);
        tshmem_tp_mlp_zero_grad(&tp->mlp);
        tshmem_tp_mlp_zero_grad(&whole);
        if (!check_pass(tp, &whole, &p, rows, s, comm) ||
            !same_grads(&tp->mlp, &whole, whole.grads, s))
            return 0;
        tshmem_tp_mlp_sgd(&tp->mlp, 0.1f);
        tshmem_tp_mlp_sgd(&whole, 0.1f);
    }
    VALUE("allreduces", "TP %d: %llu", tp->size, (unsigned long long)tp->allreduce_calls);
    pass_free(&p);
    tshmem_tp_mlp_free(&whole);
    tshmem_tp_destroy(tp);
    MPI_Comm_free(&comm);
    return 1;
}

/* block H F ROWS STEPS [SIZES [sub]]: for each team size of SIZES (default: every PE), the
 * block split over world PEs 0 .. size-1 (sub: 1 .. size; the other PEs only create and destroy
 * it), STEPS passes each. */
static void block(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: pe_3_5 block HIDDEN FFN ROWS STEPS [SIZES [sub]]\n");
        exit(2);
    }
    int h = atoi(argv[2]), f = atoi(argv[3]), rows = atoi(argv[4]), steps = atoi(argv[5]);
    int sub = argc > 7 && strcmp(argv[7], "sub") == 0;
    pe_init();
    int n = tshmem_n_pes(), sizes[8] = {n}, n_sizes = 1;
    if (argc > 6) {
        n_sizes = 0;
        char *copy = strdup(argv[6]), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok && n_sizes < 8;
             tok = strtok_r(NULL, ",", &save))
            sizes[n_sizes++] = atoi(tok);
        free(copy);
    }
    for (int k = 0; k < n_sizes; k++) {
        int start = sub ? 1 : 0;
        if (sizes[k] < 1 || start + sizes[k] > n) {
            fprintf(stderr, "pe_3_5 block: a team of %d PEs from PE %d does not fit %d PEs\n",
                    sizes[k], start, n);
            exit(2);
        }
        tshmem_team_t team = TSHMEM_TEAM_WORLD;
        if (start > 0 || sizes[k] < n)
            tshmem_team_split_strided(TSHMEM_TEAM_WORLD, start, 1, sizes[k], NULL, 0, &team);
        if (!run_block(team, h, f, rows, steps))
            return;
    }
    VALUE("worst_of_bound", "%.4f", worst_ratio);
    tshmem_finalize();
}

#include "pe_3_5_grid.h"

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"block", block}, {"grid", grid}, {"split2d", split2d}, {"bad", bad}, {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
