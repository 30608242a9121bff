/* pe_2_4.c: the PE side of chapter 2.4's tests: non-blocking allreduce and data-parallel training. */
#include <math.h>
#include <time.h>

#include "pe_reduce.h"
#include "pe_test.h"
#include "tshmem_train.h"

static double value_of(enum kind k, const void *buf, size_t i)
{
    switch (k) {
    case DOUBLE_SUM: return ((const double *)buf)[i];
    case INT64_SUM: return (double)((const int64_t *)buf)[i];
    default: return ((const float *)buf)[i];
    }
}

/* Checks dest against the combination of every PE's source; returns 0 or the failures. */
static int verify_pes(enum kind k, const void *dest, size_t count, int pe0, int n,
                      unsigned salt, const char *what)
{
    void *one = malloc(kind_size(k) * (count ? count : 1));
    double *want = calloc(count ? count : 1, sizeof(double));
    int64_t *iwant = calloc(count ? count : 1, sizeof(int64_t)); /* int64: exact, as integers */
    for (int pe = pe0; pe < pe0 + n; pe++) {
        fill(k, one, count, pe, salt);
        for (size_t i = 0; i < count; i++) {
            double v = value_of(k, one, i);
            want[i] = pe == pe0 ? v : k == FLOAT_MAX ? fmax(want[i], v) : want[i] + v;
            if (k == INT64_SUM)
                iwant[i] += ((const int64_t *)one)[i];
        }
    }
    int n_bad = 0;
    for (size_t i = 0; i < count && n_bad == 0; i++) {
        double seen = value_of(k, dest, i);
        if (k == INT64_SUM) {
            if (((const int64_t *)dest)[i] != iwant[i]) {
                FAIL("%s (%s, count %zu): element %zu is %lld, expected %lld", what,
                     kind_name[k], count, i, (long long)((const int64_t *)dest)[i],
                     (long long)iwant[i]);
                n_bad++;
            }
        } else if (seen != want[i]) {
            FAIL("%s (%s, count %zu): element %zu is %.17g, expected %.17g", what, kind_name[k],
                 count, i, seen, want[i]);
            n_bad++;
        }
    }
    free(iwant);
    free(one);
    free(want);
    return n_bad;
}

/* The same for the world PEs 0 .. n-1. */
static int verify(enum kind k, const void *dest, size_t count, int n, unsigned salt,
                  const char *what)
{
    return verify_pes(k, dest, count, 0, n, salt, what);
}

static int parse_counts(const char *list, size_t *counts, int cap)
{
    int n = 0;
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && n < cap; t = strtok_r(NULL, ",", &save))
        counts[n++] = strtoull(t, NULL, 10);
    free(copy);
    return n;
}

/* Waits for reqs[0..n-1] in the order `order` names: fwd, rev, random (a different order on
 * every PE), test (polls every request with tshmem_test until all are done), all (waitall). */
static void complete_all(tshmem_request_t *reqs, int n, const char *order)
{
    int me = tshmem_my_pe();
    if (strcmp(order, "all") == 0) {
        tshmem_waitall(reqs, (size_t)n);
    } else if (strcmp(order, "test") == 0) {
        int left = n;
        while (left > 0)
            for (int i = 0; i < n; i++) {
                if (reqs[i] == TSHMEM_REQUEST_NULL)
                    continue;
                int done = -1;
                tshmem_test(&reqs[i], &done);
                if (done == 1) {
                    CHECK(reqs[i] == TSHMEM_REQUEST_NULL,
                          "PE %d: tshmem_test said request %d is done but left the handle set", me, i);
                    left--;
                } else if (done != 0) {
                    FAIL("PE %d: tshmem_test set done to %d, expected 0 or 1", me, done);
                    return;
                } else {
                    sched_yield();
                }
            }
    } else {
        int idx[TSHMEM_MAX_REQUESTS];
        for (int i = 0; i < n; i++)
            idx[i] = strcmp(order, "rev") == 0 ? n - 1 - i : i;
        if (strcmp(order, "random") == 0) {
            unsigned s = 12345u + 977u * (unsigned)me;
            for (int i = n - 1; i > 0; i--) {
                s = s * 1103515245u + 12345u;
                int j = (int)((s >> 8) % (unsigned)(i + 1)), t = idx[i];
                idx[i] = idx[j];
                idx[j] = t;
            }
        }
        for (int i = 0; i < n; i++) {
            tshmem_wait(&reqs[idx[i]]);
            CHECK(reqs[idx[i]] == TSHMEM_REQUEST_NULL,
                  "PE %d: tshmem_wait returned but left request %d's handle set", me, idx[i]);
        }
    }
}

/* One request of a round: its kind, count, and buffers (dst == src in place). */
struct req_info {
    enum kind k;
    size_t count;
    int in_place;
    void *src, *dst;
};

/* A request for every (count, kind, in place or not) that MODE allows and whose bytes times the
 * team size stay within max_total (0: no limit), at most TSHMEM_MAX_REQUESTS. -1 when the heap
 * is too small (said with FAIL). */
static int make_requests(struct req_info *info, const size_t *counts, int nc, const char *mode,
                         size_t max_total)
{
    int me = tshmem_my_pe(), n = tshmem_n_pes(), nr = 0;
    for (int c = 0; c < nc; c++)
        for (int k = 0; k < N_KINDS; k++)
            for (int ip = 0; ip < 2; ip++) {
                if ((ip && strcmp(mode, "copy") == 0) || (!ip && strcmp(mode, "inplace") == 0))
                    continue;
                if (nr == TSHMEM_MAX_REQUESTS)
                    break;
                size_t bytes = kind_size((enum kind)k) * (counts[c] ? counts[c] : 1);
                if (max_total && bytes * (size_t)n > max_total)
                    continue;
                info[nr] = (struct req_info){(enum kind)k, counts[c], ip, tshmem_malloc(bytes),
                                             NULL};
                info[nr].dst = ip ? info[nr].src : tshmem_malloc(bytes);
                if (!info[nr].src || !info[nr].dst) {
                    FAIL("PE %d: no room for %zu bytes in the symmetric heap: run with a larger "
                         "TSHMEM_SYMMETRIC_SIZE", me, bytes);
                    return -1;
                }
                nr++;
            }
    return nr;
}

/* ROUNDS times: every request started at once, all in flight together, completed in ORDER,
 * checked. 1 when every result was right. */
static int run_rounds(const struct req_info *info, int nr, const char *order, int rounds)
{
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    for (int r = 0; r < rounds; r++) {
        tshmem_request_t reqs[TSHMEM_MAX_REQUESTS];
        for (int i = 0; i < nr; i++) {
            fill(info[i].k, info[i].src, info[i].count, me, (unsigned)(i + 100 * r));
            reqs[i] = (tshmem_request_t)&reqs[i]; /* garbage: the call must overwrite it */
            tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, info[i].dst, info[i].src, info[i].count,
                                kind_dtype[info[i].k], kind_op[info[i].k], &reqs[i]);
            if (reqs[i] == TSHMEM_REQUEST_NULL || reqs[i] == (tshmem_request_t)&reqs[i]) {
                FAIL("PE %d: tshmem_allreduce_nb did not fill in request %d", me, i);
                return 0;
            }
        }
        complete_all(reqs, nr, order);
        for (int i = 0; i < nr; i++) {
            char what[64];
            snprintf(what, sizeof what, "round %d request %d%s", r, i,
                     info[i].in_place ? " (in place)" : "");
            if (verify(info[i].k, info[i].dst, info[i].count, n, (unsigned)(i + 100 * r), what))
                return 0;
        }
        /* A round's results are read before the next round overwrites them: a barrier. */
        tshmem_barrier_all();
    }
    return 1;
}

/* nb COUNTS MODE ORDER ROUNDS: every (count, kind, in place or not) started at once, all in
 * flight together, completed in ORDER, ROUNDS times with no barrier between rounds. */
static void nb(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: pe_2_4 nb COUNTS inplace|copy|both fwd|rev|random|test|all ROUNDS\n");
        exit(2);
    }
    pe_init();
    size_t counts[16];
    int nc = parse_counts(argv[2], counts, 16);
    const char *order = argv[4];
    int rounds = atoi(argv[5]);
    struct req_info info[TSHMEM_MAX_REQUESTS];
    int nr = make_requests(info, counts, nc, argv[3], 0);
    if (nr < 0)
        return;
    STEP("%d requests per round, %d rounds, waits %s", nr, rounds, order);
    if (run_rounds(info, nr, order, rounds))
        tshmem_finalize();
}

/* busy: the program does other work meanwhile. While requests are in flight, it runs blocking
 * allreduces of its own and puts to its neighbour, then sleeps without calling tshmem at all;
 * the requests must have completed by then (the progress thread), and everything be right. */
static void busy(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    size_t count = 50000; /* several chunks */
    float *a = tshmem_malloc(count * sizeof(float)), *b = tshmem_malloc(count * sizeof(float));
    double *c = tshmem_malloc(1000 * sizeof(double));
    int *ring = tshmem_malloc(1000 * sizeof(int));
    for (int round = 0; round < 5; round++) {
        fill(FLOAT_SUM, a, count, me, (unsigned)round);
        fill(FLOAT_MAX, b, count, me, (unsigned)round + 7);
        tshmem_request_t r[2];
        tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, a, a, count, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM, &r[0]);
        tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, b, b, count, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_MAX, &r[1]);
        for (int k = 0; k < 20; k++) { /* blocking collectives on the same team meanwhile */
            fill(DOUBLE_SUM, c, 1000, me, (unsigned)(round * 20 + k));
            tshmem_double_sum_reduce(TSHMEM_TEAM_WORLD, c, c, 1000);
            if (verify(DOUBLE_SUM, c, 1000, n, (unsigned)(round * 20 + k), "blocking allreduce"))
                return;
        }
        int v[1000];
        for (int i = 0; i < 1000; i++)
            v[i] = me * 1000 + i + round;
        tshmem_int_put(ring, v, 1000, (me + 1) % n);
        tshmem_barrier_all();
        int from = (me + n - 1) % n;
        for (int i = 0; i < 1000; i++)
            CHECK_OR_STOP(ring[i] == from * 1000 + i + round,
                          "PE %d: put from PE %d: element %d is %d, expected %d", me, from, i,
                          ring[i], from * 1000 + i + round);
        /* Without a single tshmem call: only a progress thread can finish them. Half a second
         * in the last round, where the check is; the rounds before let the two threads meet
         * in every order (a request done, running, or still queued when the program waits). */
        struct timespec pause = {0, round == 4 ? 500000000 : 30000000 * round};
        nanosleep(&pause, NULL);
        int done[2] = {0, 0};
        tshmem_test(&r[0], &done[0]);
        tshmem_test(&r[1], &done[1]);
        if (round == 4)
            CHECK(done[0] && done[1],
                  "PE %d: after 0.5 s of sleep with no tshmem call, request %s not done: the "
                  "requests must progress without the program calling test or wait (a progress "
                  "thread)", me, done[0] ? "1 was" : "0 was");
        tshmem_waitall(r, 2);
        if (verify(FLOAT_SUM, a, count, n, (unsigned)round, "non-blocking sum") ||
            verify(FLOAT_MAX, b, count, n, (unsigned)round + 7, "non-blocking max"))
            return;
        tshmem_barrier_all();
    }
    tshmem_finalize();
}

/* teams ROUNDS: requests on WORLD and on a team of every PE but 0, interleaved and in flight
 * together: PE 0's progress thread runs the world calls back to back while the others run a
 * team call between two world calls, so a world piece can arrive while a PE is busy with the
 * other team: the shared landing zone must be granted before anyone writes into it. */
static void teams(int argc, char **argv)
{
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    /* floats: several chunks, or with a small COUNT recursive doubling's single slots */
    size_t count = argc > 3 ? strtoull(argv[3], NULL, 10) : 70000;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_team_t sub = team_by_hand(1, 1, tshmem_n_pes() - 1);
    enum { PAIRS = 4 };
    float *w[PAIRS], *b[PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        w[i] = tshmem_malloc(count * sizeof(float));
        b[i] = tshmem_malloc(count * sizeof(float));
    }
    for (int r = 0; r < rounds; r++) {
        tshmem_request_t reqs[2 * PAIRS];
        int nr = 0;
        for (int i = 0; i < PAIRS; i++) {
            fill(FLOAT_SUM, w[i], count, me, (unsigned)(r * 10 + i));
            tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, w[i], w[i], count, TSHMEM_DTYPE_FLOAT,
                                TSHMEM_OP_SUM, &reqs[nr++]);
            if (me > 0) {
                fill(FLOAT_SUM, b[i], count, me, (unsigned)(r * 10 + i + 5));
                tshmem_allreduce_nb(sub, b[i], b[i], count, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM,
                                    &reqs[nr++]);
            }
        }
        complete_all(reqs, nr, "random");
        for (int i = 0; i < PAIRS; i++) {
            if (verify(FLOAT_SUM, w[i], count, n, (unsigned)(r * 10 + i), "world call"))
                return;
            if (me > 0 && verify_pes(FLOAT_SUM, b[i], count, 1, n - 1,
                                     (unsigned)(r * 10 + i + 5), "call on the team of PEs 1..n-1"))
                return;
        }
        tshmem_barrier_all();
    }
    tshmem_finalize();
}

/* Whether team PE j puts into (or grants to, or signals) PE me in a recursive doubling of n
 * PEs: a round partner, my extra, or my core (book 2.4, "Small calls: recursive doubling"). */
static int rd_writer(int me, int j, int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    if (me >= p)
        return j == me - p;
    if (j >= p)
        return j == me + p;
    int d = me ^ j;
    return d != 0 && (d & (d - 1)) == 0; /* one bit apart: a round partner */
}

/* smallrd ROUNDS: calls whose n vectors fit in TSHMEM_NB_RD_BYTES (every kind, in place and not,
 * up to 40 in flight, completed in random order) go by recursive doubling: correct, and at the
 * end no PE other than a partner has written any of my non-blocking flags. */
static void smallrd(int argc, char **argv)
{
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    static const size_t counts[] = {1, 7, 31, 100, 500};
    struct req_info info[TSHMEM_MAX_REQUESTS];
    int nr = make_requests(info, counts, sizeof counts / sizeof counts[0], "both",
                           TSHMEM_NB_RD_BYTES);
    if (nr < 0)
        return;
    STEP("%d small requests per round, %d rounds", nr, rounds);
    if (!run_rounds(info, nr, "random", rounds))
        return;
    const struct tshmem_nb_flags *f = &tshmem_g.reserved->nb[TSHMEM_TEAM_WORLD];
    for (int j = 0; j < n; j++) {
        if (j == me || rd_writer(me, j, n))
            continue;
        if (f->grant[j] || f->piece[j] || f->gather[j]) {
            FAIL("PE %d: after %d rounds of non-blocking allreduces of at most %u bytes each "
                 "on %d PEs, PE %d, which is not one of my recursive-doubling partners, wrote my "
                 "flags (grant %llu, piece %llu, gather %llu). Calls this small take recursive "
                 "doubling: see book 2.4, \"Small calls: recursive doubling\".", me, rounds,
                 TSHMEM_NB_RD_BYTES / (unsigned)n, n, j, (unsigned long long)f->grant[j],
                 (unsigned long long)f->piece[j], (unsigned long long)f->gather[j]);
            return;
        }
    }
    tshmem_finalize();
}

/* bad KIND: one misuse; the runtime must stop the job with a message. */
static void bad(int argc, char **argv)
{
    const char *kind = argc > 2 ? argv[2] : "";
    pe_init();
    float *x = tshmem_malloc(64 * sizeof(float));
    tshmem_request_t r = TSHMEM_REQUEST_NULL;
    if (strcmp(kind, "twice") == 0) {
        tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, x, x, 64, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM, &r);
        tshmem_wait(&r);
        tshmem_wait(&r);
    } else if (strcmp(kind, "null") == 0) {
        tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, x, x, 64, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM, &r);
        tshmem_wait(&r);
        tshmem_wait(NULL);
    } else if (strcmp(kind, "stale") == 0) { /* a copy of a handle that was already completed */
        tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, x, x, 64, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM, &r);
        tshmem_request_t copy = r;
        tshmem_wait(&r);
        int done;
        tshmem_test(&copy, &done);
    } else if (strcmp(kind, "toomany") == 0) {
        tshmem_request_t rs[TSHMEM_MAX_REQUESTS + 1];
        for (int i = 0; i <= TSHMEM_MAX_REQUESTS; i++)
            tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, x, x, 1, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM,
                                &rs[i]);
    } else if (strcmp(kind, "finalize") == 0) {
        tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, x, x, 64, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM, &r);
        tshmem_finalize();
    } else if (strcmp(kind, "dest") == 0) {
        float local[4];
        tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, local, x, 4, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM, &r);
    } else {
        fprintf(stderr, "pe_2_4 bad: no misuse named '%s'\n", kind);
        exit(2);
    }
    FAIL("PE %d: the misuse (%s) returned instead of stopping with an error", tshmem_my_pe(), kind);
}

/* ---- Training ---------------------------------------------------------------------------- */

static uint64_t params_hash(const struct tshmem_mlp *m)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)m->params;
    for (size_t i = 0; i < m->n_params * sizeof(float); i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

#define N_CLASSES 3

/* train LAYERS WIDTH STEPS GLOBAL_BATCH BUCKET_CAP OVERLAP: data-parallel training on every PE
 * against a one-process run of the same global batches computed on each PE beside it. Checks,
 * after every step, that every PE holds the same bits; at the end, that the weights match the
 * one-process run within the tolerance below and that the loss fell. */
static void train(int argc, char **argv)
{
    if (argc < 8) {
        fprintf(stderr, "usage: pe_2_4 train LAYERS WIDTH STEPS GLOBAL_BATCH BUCKET_CAP OVERLAP\n");
        exit(2);
    }
    int layers = atoi(argv[2]), width = atoi(argv[3]), steps = atoi(argv[4]);
    int global_n = atoi(argv[5]), overlap = atoi(argv[7]);
    size_t cap = strtoull(argv[6], NULL, 10);
    const float lr = 0.2f;
    /* The tolerance: the one-process run sums a parameter's gradient over the global batch in
     * one order; the PEs sum their shares, then the allreduce sums the shares. Each float sum
     * of B terms is off by at most about B * 2^-24 of the sum of their magnitudes, and SGD
     * carries such differences from step to step; over a few dozen steps they stay far below
     * 1e-4 of a weight's size. So: |ddp - single| <= 1e-4 * max(|single|, 0.1). */
    const double rtol = 1e-4, floor_abs = 0.1;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    int dims[TSHMEM_MLP_MAX_LAYERS + 1];
    dims[0] = 4;
    for (int l = 1; l < layers; l++)
        dims[l] = width;
    dims[layers] = N_CLASSES;
    struct tshmem_ddp d;
    tshmem_ddp_init(&d, TSHMEM_TEAM_WORLD, layers, dims, 42, cap, overlap);
    struct tshmem_mlp single;
    float *single_grads = malloc(d.model.n_params * sizeof(float));
    tshmem_mlp_init(&single, layers, dims, 42, single_grads);
    STEP("model of %zu parameters in %d buckets; %d steps of %d samples", d.model.n_params,
         d.n_buckets, steps, global_n);
    uint64_t *hashes = tshmem_calloc((size_t)n, sizeof(uint64_t));
    double *loss = tshmem_malloc(sizeof(double));
    float *x = malloc((size_t)global_n * (size_t)dims[0] * sizeof(float));
    int *y = malloc((size_t)global_n * sizeof(int));
    double first_loss = 0, last_loss = 0;
    int first = me * global_n / n, mine = (me + 1) * global_n / n - first;
    for (int s = 0; s < steps; s++) {
        tshmem_spiral_data(x, y, (long)s * global_n, global_n, dims[0], N_CLASSES, 7);
        /* My share of the batch, and the whole batch for the one-process run. */
        *loss = tshmem_ddp_step(&d, x + (size_t)first * (size_t)dims[0], y + first, mine,
                                global_n, lr);
        tshmem_mlp_forward(&single, x, y, global_n);
        tshmem_mlp_backward(&single, 1.0f / (float)global_n, NULL, NULL);
        tshmem_mlp_sgd(&single, lr);
        if (overlap && d.n_buckets > 1 && layers > 1)
            CHECK_OR_STOP(d.started_early >= 1,
                          "PE %d step %d: no bucket's allreduce had started when the backward "
                          "pass reached layer 0 (started_early = %d): start each bucket in the "
                          "hook as soon as its lowest layer is done, not after the backward pass",
                          me, s, d.started_early);
        /* Same bits everywhere: every PE puts its hash on PE 0, which compares. */
        tshmem_uint64_atomic_set(&hashes[me], params_hash(&d.model), 0);
        tshmem_double_sum_reduce(TSHMEM_TEAM_WORLD, loss, loss, 1);
        if (s == 0)
            first_loss = *loss / global_n;
        last_loss = *loss / global_n;
        tshmem_barrier_all();
        if (me == 0)
            for (int p = 1; p < n; p++)
                CHECK_OR_STOP(hashes[p] == hashes[0],
                              "after step %d PE %d's weights differ from PE 0's (hash %016llx, "
                              "PE 0 %016llx): every PE must end each step with the same bits",
                              s, p, (unsigned long long)hashes[p], (unsigned long long)hashes[0]);
        tshmem_barrier_all();
    }
    double worst = 0;
    size_t worst_i = 0;
    for (size_t i = 0; i < d.model.n_params; i++) {
        double a = d.model.params[i], b = single.params[i];
        double rel = fabs(a - b) / fmax(fabs(b), floor_abs);
        if (!(rel <= worst)) {
            worst = rel;
            worst_i = i;
        }
    }
    VALUE("worst_rel", "%.3g", worst);
    CHECK(worst <= rtol,
          "PE %d: after %d steps parameter %zu is %.9g, the one-process run has %.9g: relative "
          "difference %.3g, more than the tolerance %g", me, steps, worst_i,
          d.model.params[worst_i], single.params[worst_i], worst, rtol);
    VALUE("loss", "%.9g -> %.9g", first_loss, last_loss);
    VALUE("weights", "%016llx", (unsigned long long)params_hash(&d.model));
    CHECK(steps < 20 || last_loss < 0.5 * first_loss,
          "PE %d: the mean loss went from %.4f to %.4f in %d steps; it should at least halve", me,
          first_loss, last_loss, steps);
    free(x);
    free(y);
    tshmem_mlp_free(&single);
    free(single_grads);
    tshmem_ddp_free(&d);
    tshmem_finalize();
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"nb", nb}, {"busy", busy}, {"teams", teams}, {"smallrd", smallrd}, {"bad", bad},
        {"train", train},
        {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
