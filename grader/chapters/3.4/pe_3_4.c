/* pe_3_4.c: the PE side of chapter 3.4's tests: reduce-scatter and the ZeRO stages. */
#include <math.h>
#include <time.h>

#include "pe_test.h"
#include "tshmem_internal.h" /* white box: 2.4's flag words of a team */
#include "tshmem_zero.h"

/* ---- Reduce-scatter ---------------------------------------------------------------------- */

/* Element i of team PE p's source in round r: not integers, so the order of the additions
 * shows in the bits of the sum. */
static double value(int p, size_t i, int r)
{
    uint64_t h = (uint64_t)p * 0x9e3779b97f4a7c15ull ^ (uint64_t)(i + 1) * 0xbf58476d1ce4e5b9ull ^
                 (uint64_t)(r + 1) * 0x94d049bb133111ebull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return (double)(h >> 11) * 0x1p-53 * 2.0 - 1.0 + (double)(i % 7) * 1e3;
}

/* The sum of block b in team order 0..n-1 (direct) or b+1, ..., b (ring), in type T. */
#define EXPECT(T, NAME)                                                                       \
    static void NAME(T *out, size_t count, int n, int b, int r, int ring)                     \
    {                                                                                         \
        for (size_t i = 0; i < count; i++) {                                                  \
            int p0 = ring ? (b + 1) % n : 0;                                                  \
            T acc = (T)value(p0, (size_t)b * count + i, r);                                   \
            for (int k = 1; k < n; k++)                                                       \
                acc += (T)value(ring ? (b + 1 + k) % n : k, (size_t)b * count + i, r);        \
            out[i] = acc;                                                                     \
        }                                                                                     \
    }
EXPECT(float, expect_f)
EXPECT(double, expect_d)

static tshmem_team_t make_team(const char *name)
{
    int n = tshmem_n_pes();
    tshmem_team_t t = TSHMEM_TEAM_WORLD;
    if (strcmp(name, "tail") == 0) /* PEs 1 .. n-1 */
        tshmem_team_split_strided(TSHMEM_TEAM_WORLD, 1, 1, n - 1, NULL, 0, &t);
    else if (strcmp(name, "even") == 0) /* PEs 0, 2, 4, ... */
        tshmem_team_split_strided(TSHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &t);
    return t;
}

/* "0,1,7": up to 16 sizes into out; *most = the largest (at least 1). Returns how many. */
static int parse_sizes(char *list, size_t *out, size_t *most)
{
    int n = 0;
    *most = 1;
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t && n < 16;
         t = strtok_r(NULL, ",", &save)) {
        out[n] = strtoull(t, NULL, 10);
        *most = out[n] > *most ? out[n] : *most;
        n++;
    }
    return n;
}

/* One call of nreduce elements (float or double) in round r with round `data`'s values; checks
 * my block bit for bit against the algorithm's order and that nothing past it was written.
 * Returns 0, or 1 after a FAIL. */
static int rs_once(tshmem_team_t team, enum tshmem_algo algo, double *src, double *dst,
                   double *want, size_t count, int dbl, int data, int r)
{
    int n = tshmem_team_n_pes(team), me = tshmem_team_my_pe(team);
    size_t elem = dbl ? 8 : 4;
    for (size_t i = 0; i < (size_t)n * count; i++)
        if (dbl)
            src[i] = value(me, i, data);
        else
            ((float *)src)[i] = (float)value(me, i, data);
    memset(dst, 0x5a, (count + 16) * elem);
    if (algo != TSHMEM_ALGO_AUTO)
        tshmem_reducescatter(team, dst, src, count, dbl ? TSHMEM_DTYPE_DOUBLE : TSHMEM_DTYPE_FLOAT,
                             algo);
    else if (dbl)
        tshmem_double_sum_reducescatter(team, dst, src, count);
    else
        tshmem_float_sum_reducescatter(team, (float *)dst, (float *)src, count);
    /* AUTO may pick either algorithm: either order is right, the same one every time. */
    for (int ring = 0; ring < 2; ring++) {
        if ((algo == TSHMEM_ALGO_RING && !ring) || (algo == TSHMEM_ALGO_DIRECT && ring))
            continue;
        if (dbl)
            expect_d(want, count, n, me, data, ring);
        else
            expect_f((float *)want, count, n, me, data, ring);
        if (memcmp(want, dst, count * elem) == 0)
            goto tail;
    }
    for (size_t i = 0; i < count; i++) { /* the first element that differs */
        double seen = dbl ? dst[i] : ((float *)dst)[i], exp = dbl ? want[i] : ((float *)want)[i];
        if (memcmp(&seen, &exp, sizeof seen) != 0 || i + 1 == count) {
            FAIL("team PE %d of %d, round %d, %s, nreduce %zu: element %zu of my block is %.17g, "
                 "expected %.17g (the sum of every PE's block %d, added in %s)", me, n, r,
                 dbl ? "double" : "float", count, i, seen, exp, me,
                 algo == TSHMEM_ALGO_RING ? "ring order me+1, me+2, ..., me"
                                          : "team order 0, 1, ..., n-1");
            return 1;
        }
    }
tail:
    for (size_t i = count * elem; i < (count + 16) * elem; i++)
        if (((unsigned char *)dst)[i] != 0x5a) {
            FAIL("team PE %d: the call wrote past my block of %zu elements (byte %zu of dest "
                 "changed)", me, count, i);
            return 1;
        }
    return 0;
}

/* rs COUNTS ALGO ROUNDS TEAM: float and double reduce-scatters of every count, ROUNDS rounds
 * back to back with an allreduce on the same team between them and no barrier; every block
 * checked bit for bit against the algorithm's order; a last round repeats round 0's data and
 * must give round 0's bits. */
static void rs(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: pe_3_4 rs COUNTS auto|direct|ring ROUNDS world|tail|even\n");
        exit(2);
    }
    pe_init();
    enum tshmem_algo algo = strcmp(argv[3], "ring") == 0     ? TSHMEM_ALGO_RING
                            : strcmp(argv[3], "direct") == 0 ? TSHMEM_ALGO_DIRECT
                                                             : TSHMEM_ALGO_AUTO;
    int rounds = atoi(argv[4]);
    tshmem_team_t team = make_team(argv[5]);
    size_t counts[16], most;
    int nc = parse_sizes(argv[2], counts, &most);
    int n = tshmem_team_n_pes(team), me = tshmem_team_my_pe(team);
    /* Every PE allocates (collective), members use. dest has a guard of 16 after the block. */
    double *src = tshmem_malloc((size_t)tshmem_n_pes() * most * sizeof(double));
    double *dst = tshmem_malloc((most + 16) * sizeof(double));
    double *one = tshmem_malloc(sizeof(double));
    double *first = malloc(most * sizeof(double) * (size_t)nc * 2);
    double *want = malloc(most * sizeof(double));
    for (int r = 0; me >= 0 && r <= rounds; r++) {
        int data = r == rounds ? 0 : r; /* the last round repeats round 0 */
        for (int c = 0; c < nc; c++)
            for (int dbl = 0; dbl < 2; dbl++) {
                size_t count = counts[c], bytes = count * (dbl ? 8 : 4);
                if (rs_once(team, algo, src, dst, want, count, dbl, data, r))
                    return; /* no barrier: a peer may be in a call; the launcher stops it */
                double *keep = first + ((size_t)c * 2 + (size_t)dbl) * most;
                if (r == 0)
                    memcpy(keep, dst, bytes);
                else if (r == rounds)
                    CHECK(memcmp(keep, dst, bytes) == 0,
                          "team PE %d: the same data as round 0 gave other bits (%s, nreduce "
                          "%zu): the order of the additions must be fixed", me,
                          dbl ? "double" : "float", count);
            }
        /* An allreduce on the same team between rounds: the sequences stay matched. */
        *one = 1.0;
        tshmem_double_sum_reduce(team, one, one, 1);
        CHECK_OR_STOP(*one == (double)n, "team PE %d: an allreduce after round %d gave %g, not %d",
                      me, r, *one, n);
    }
    if (me >= 0)
        STEP("%d rounds of %d counts checked on a team of %d", rounds + 1, nc, n);
    free(first);
    free(want);
    tshmem_barrier_all();
    tshmem_finalize();
}

/* rsflags COUNTS: white box, on WORLD (one node). The direct reduce-scatter publishes each
 * step in the PE's own word from[me] and reads the others' where they lie: after 10 rounds of
 * every count, checked as rs does, and a barrier (whose flags are others), no word from[j]
 * (j != me) of my copy of WORLD's reduce flags may have moved, and my own from[me] must have. */
static void rsflags(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: pe_3_4 rsflags COUNTS\n");
        exit(2);
    }
    pe_init();
    size_t counts[16], most;
    int nc = parse_sizes(argv[2], counts, &most);
    int n = tshmem_n_pes(), me = tshmem_my_pe();
    double *src = tshmem_malloc((size_t)n * most * sizeof(double));
    double *dst = tshmem_malloc((most + 16) * sizeof(double));
    double *want = malloc(most * sizeof(double));
    uint64_t *from = tshmem_g.reserved->reduce[TSHMEM_TEAM_WORLD].from, before[TSHMEM_COLL_MAX_PES];
    tshmem_barrier_all();
    for (int j = 0; j < n; j++)
        before[j] = __atomic_load_n(&from[j], __ATOMIC_ACQUIRE);
    for (int r = 0; r < 10; r++)
        for (int c = 0; c < nc; c++)
            if (rs_once(TSHMEM_TEAM_WORLD, TSHMEM_ALGO_DIRECT, src, dst, want, counts[c], r % 2,
                        r, r))
                return;
    tshmem_barrier_all();
    for (int j = 0; j < n; j++) {
        uint64_t now = __atomic_load_n(&from[j], __ATOMIC_ACQUIRE);
        if (j == me)
            CHECK(now > before[j], "PE %d: my own word from[%d] of WORLD's reduce flags never "
                  "moved in 10 rounds of direct reduce-scatters: on one node, publish each step "
                  "there (rs_announce), where the others read it", me, me);
        else
            CHECK(now == before[j], "PE %d: word from[%d] of my reduce flags went from %#llx to "
                  "%#llx during direct reduce-scatters on one node: PE %d wrote into my memory. "
                  "Publish each step in your own from[me] and read the others' in their slices "
                  "(tshmem_ptr), so that no line has n - 1 writers", me, j,
                  (unsigned long long)before[j], (unsigned long long)now, j);
    }
    STEP("%d rounds of %d counts, flags published, not pushed, on %d PEs", 10, nc, n);
    free(want);
    tshmem_barrier_all();
    tshmem_finalize();
}

/* ---- The true allgather: tshmem_fcollectmem_nb ------------------------------------------ */

/* Checks dest after an fcollect of nbytes per PE in round r: team PE j's block at j x nbytes,
 * byte for byte, and the guard after the n blocks untouched. Returns 0, or 1 after a FAIL. */
static int fc_check(const unsigned char *dest, size_t nbytes, int n, int me, int r,
                    const char *what)
{
    for (int j = 0; j < n; j++)
        for (size_t i = 0; i < nbytes; i++)
            if (dest[(size_t)j * nbytes + i] != pattern(j, i, r)) {
                FAIL("team PE %d of %d, round %d, %s of %zu bytes per PE: byte %zu of team PE "
                     "%d's block is 0x%02x, expected 0x%02x (its source, unchanged: an "
                     "allgather adds nothing)", me, n, r, what, nbytes, i, j,
                     dest[(size_t)j * nbytes + i], pattern(j, i, r));
                return 1;
            }
    for (size_t i = 0; i < 64; i++)
        if (dest[(size_t)n * nbytes + i] != 0x5a) {
            FAIL("team PE %d, round %d, %s of %zu bytes per PE: byte %zu past the %d blocks of "
                 "dest changed: write n x nbytes, no more", me, r, what, nbytes, i, n);
            return 1;
        }
    return 0;
}

/* fc SIZES ROUNDS TEAM: non-blocking fcollects of every size (bytes per PE, any count, odd
 * ones too), two in flight at once, back to back with no barrier, in ROUNDS rounds:
 *   - in round r team PE r mod n is late: it sleeps, then checks that nobody wrote into its
 *     dest before its call started (the grant), then starts;
 *   - the blocks arrive byte for byte (nothing is added: an allreduce of the buffer fails on
 *     odd sizes and on bytes that are no sum of floats), and nothing past the n blocks;
 *   - 2.4's piece words of the team do not move: no reduction ran;
 *   - then an fcollect and an allreduce_nb in flight together: the kinds share the team's
 *     chunk numbers in start order. */
static void fc(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: pe_3_4 fc SIZES ROUNDS world|tail|even\n");
        exit(2);
    }
    pe_init();
    int rounds = atoi(argv[3]);
    tshmem_team_t team = make_team(argv[4]);
    size_t sizes[16], most;
    int ns = parse_sizes(argv[2], sizes, &most);
    int N = tshmem_n_pes(), n = tshmem_team_n_pes(team), me = tshmem_team_my_pe(team);
    size_t room = (size_t)N * most + 64;
    unsigned char *a = tshmem_malloc(room), *b = tshmem_malloc(room);
    int64_t *sum = tshmem_malloc(4 * sizeof(int64_t));
    unsigned char *src_a = malloc(most), *src_b = malloc(most); /* private: any memory will do */
    uint64_t piece_before[TSHMEM_COLL_MAX_PES];
    for (int r = 0; me >= 0 && r < rounds; r++)
        for (int c = 0; c < ns; c++) {
            size_t nb = sizes[c];
            for (size_t i = 0; i < nb; i++) {
                src_a[i] = pattern(me, i, r);
                src_b[i] = pattern(me, i, r + 1);
            }
            memset(a, 0x5a, room);
            memset(b, 0x5a, room);
            struct tshmem_nb_flags *f = &tshmem_g.reserved->nb[team];
            memcpy(piece_before, f->piece, sizeof piece_before);
            tshmem_team_sync(team); /* every dest holds its guard bytes */
            if (me == r % n) {
                nanosleep(&(struct timespec){0, 20000000}, NULL);
                for (size_t i = 0; i < room; i++)
                    CHECK_OR_STOP(a[i] == 0x5a && b[i] == 0x5a,
                                  "team PE %d (late on purpose, round %d, %zu bytes per PE): "
                                  "byte %zu of my dest was written before I started the call: "
                                  "wait for a PE's grant before you put into its dest", me, r,
                                  nb, i);
            }
            tshmem_request_t req[2];
            tshmem_fcollectmem_nb(team, a, src_a, nb, &req[0]);
            tshmem_fcollectmem_nb(team, b, src_b, nb, &req[1]);
            if (me % 2) /* waited for in either order */
                tshmem_wait(&req[1]);
            tshmem_waitall(req, 2);
            if (fc_check(a, nb, n, me, r, "the first fcollect") ||
                fc_check(b, nb, n, me, r + 1, "the second fcollect"))
                return;
            tshmem_team_sync(team); /* every peer's puts into my piece words are done */
            CHECK_OR_STOP(memcmp(piece_before, f->piece, sizeof piece_before) == 0,
                          "team PE %d, round %d, %zu bytes per PE: 2.4's piece words moved "
                          "during the fcollects: a true allgather puts blocks into dest and "
                          "signals gather, it runs no reduction", me, r, nb);
            /* The two kinds of request in flight together, an allreduce between fcollects. */
            for (size_t i = 0; i < nb; i++)
                src_a[i] = pattern(me, i, r + 2);
            memset(a, 0x5a, room);
            for (int i = 0; i < 4; i++)
                sum[i] = me + i;
            tshmem_team_sync(team);
            tshmem_request_t mix[3];
            tshmem_fcollectmem_nb(team, a, src_a, nb, &mix[0]);
            tshmem_allreduce_nb(team, sum, sum, 4, TSHMEM_DTYPE_INT64, TSHMEM_OP_SUM, &mix[1]);
            tshmem_fcollectmem_nb(team, b, src_b, nb, &mix[2]);
            tshmem_wait(&mix[2]);
            tshmem_waitall(mix, 3);
            if (fc_check(a, nb, n, me, r + 2, "an fcollect before an allreduce_nb"))
                return;
            for (int i = 0; i < 4; i++)
                CHECK_OR_STOP(sum[i] == (int64_t)n * (n - 1) / 2 + (int64_t)n * i,
                              "team PE %d, round %d: the allreduce_nb between two fcollects "
                              "gave %lld at %d, expected %lld", me, r, (long long)sum[i], i,
                              (long long)n * (n - 1) / 2 + (long long)n * i);
        }
    if (me >= 0)
        STEP("%d rounds of %d sizes gathered on a team of %d", rounds, ns, n);
    free(src_a);
    free(src_b);
    tshmem_barrier_all();
    tshmem_finalize();
}

/* bad KIND: one misuse; the runtime must stop the job with a message. */
static void bad(int argc, char **argv)
{
    const char *kind = argc > 2 ? argv[2] : "";
    pe_init();
    int n = tshmem_n_pes();
    float *src = tshmem_malloc((size_t)n * 1024 * sizeof(float));
    float *dst = tshmem_malloc(1024 * sizeof(float));
    float *small = tshmem_malloc((size_t)(n - 1) * 1024 * sizeof(float));
    int dims[] = {4, 16, 3};
    struct tshmem_zero_config cfg = tshmem_zero_default(1);
    struct tshmem_zero z;
    if (strcmp(kind, "inplace") == 0) {
        tshmem_float_sum_reducescatter(TSHMEM_TEAM_WORLD, src, src, 1024);
    } else if (strcmp(kind, "overlap") == 0) { /* dest = block 1 of source */
        tshmem_float_sum_reducescatter(TSHMEM_TEAM_WORLD, src + 1024, src, 1024);
    } else if (strcmp(kind, "notmember") == 0) { /* PE 0 calls on the team of PEs 1..n-1 */
        tshmem_team_t tail = make_team("tail");
        tshmem_float_sum_reducescatter(tail == TSHMEM_TEAM_INVALID ? 2 : tail, dst, src, 16);
    } else if (strcmp(kind, "small") == 0) { /* a source of (n-1) blocks: n x 1024 don't fit */
        tshmem_float_sum_reducescatter(TSHMEM_TEAM_WORLD, dst, small, 1024);
    } else if (strcmp(kind, "algo") == 0) {
        tshmem_reducescatter(TSHMEM_TEAM_WORLD, dst, src, 16, TSHMEM_DTYPE_FLOAT,
                             TSHMEM_ALGO_ONESHOT);
    } else if (strcmp(kind, "shard") == 0) { /* team PE n of a team of n PEs */
        tshmem_zero_init(&z, TSHMEM_TEAM_WORLD, 2, dims, 1, &cfg);
        tshmem_zero_shard(&z, 0, n, NULL);
    } else if (strcmp(kind, "zeroteam") == 0) { /* PE 0 builds a model on a team it is not in */
        tshmem_team_t tail = make_team("tail");
        tshmem_zero_init(&z, tail == TSHMEM_TEAM_INVALID ? 2 : tail, 2, dims, 1, &cfg);
    } else if (strcmp(kind, "fcsmall") == 0) { /* a good call first: the stub stops there */
        tshmem_request_t req;
        for (int i = 0; i < 1024; i++)
            dst[i] = (float)(tshmem_my_pe() * 1024 + i);
        tshmem_fcollectmem_nb(TSHMEM_TEAM_WORLD, src, dst, 1024 * sizeof(float), &req);
        tshmem_wait(&req);
        for (int i = 0; i < n * 1024; i++)
            CHECK_OR_STOP(src[i] == (float)i, "PE %d: a non-blocking fcollect of 4096 bytes per "
                          "PE brought %g at element %d, expected %d", tshmem_my_pe(), src[i], i,
                          i);
        tshmem_fcollectmem_nb(TSHMEM_TEAM_WORLD, small, dst, 1024 * sizeof(float), &req);
    } else if (strcmp(kind, "stage") == 0) {
        cfg.stage = 4;
        tshmem_zero_init(&z, TSHMEM_TEAM_WORLD, 2, dims, 1, &cfg);
    } else {
        fprintf(stderr, "pe_3_4 bad: no misuse named '%s'\n", kind);
        exit(2);
    }
    /* In notmember and zeroteam only PE 0 misuses the call; the team's members may return.
     * They wait for PE 0's error to end the job (a race otherwise: a member's FAIL could end
     * it first), and fail only if it never comes. */
    if (tshmem_my_pe() != 0 && (!strcmp(kind, "notmember") || !strcmp(kind, "zeroteam")))
        for (int i = 0; i < 3000; i++)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
    FAIL("PE %d: the misuse (%s) returned instead of stopping with an error", tshmem_my_pe(), kind);
}

/* ---- Training ---------------------------------------------------------------------------- */
#define N_CLASSES 3

static uint64_t hash(const float *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n * sizeof(float); i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* The one-process run's Adam, the same arithmetic as tshmem_zero_optimize. */
static void adam(const struct tshmem_zero_config *c, long t, float *p, const float *g, float *m,
                 float *v, size_t count)
{
    float c1 = 1.0f - powf(c->beta1, (float)t), c2 = 1.0f - powf(c->beta2, (float)t);
    for (size_t i = 0; i < count; i++) {
        m[i] = c->beta1 * m[i] + (1.0f - c->beta1) * g[i];
        v[i] = c->beta2 * v[i] + (1.0f - c->beta2) * g[i] * g[i];
        p[i] -= c->lr * (m[i] / c1) / (sqrtf(v[i] / c2) + c->eps);
    }
}

/* The most model state stage st may keep, in bytes, from the layout: what the stage's
 * formula says (book, "Memory") plus buffers of one padded layer. */
static size_t state_bound(const struct tshmem_zero *z, int st, int adam_on)
{
    size_t P = z->n_params, S = z->soff[z->n_layers], w = z->widest, n = (size_t)z->n;
    size_t mom = adam_on ? 2 : 0;
    size_t floats = st == 0   ? P + P + n + mom * P
                    : st == 1 ? P + P + n + (1 + mom) * S + w
                    : st == 2 ? P + (1 + mom) * S + 2 * w
                              : (2 + mom) * S + 3 * w;
    return floats * sizeof(float);
}

/* train LAYERS WIDTH STEPS GLOBAL STAGE sgd|adam direct|ring|auto PREFETCH: stage STAGE beside
 * stage 0, 2.4's tshmem_ddp_step (SGD) and a one-process run of the same global batches. */
static void train(int argc, char **argv)
{
    if (argc < 10) {
        fprintf(stderr, "usage: pe_3_4 train LAYERS WIDTH STEPS GLOBAL STAGE sgd|adam "
                        "direct|ring|auto PREFETCH\n");
        exit(2);
    }
    int layers = atoi(argv[2]), width = atoi(argv[3]), steps = atoi(argv[4]);
    int global_n = atoi(argv[5]), stage = atoi(argv[6]), sgd = strcmp(argv[7], "sgd") == 0;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    int dims[TSHMEM_MLP_MAX_LAYERS + 1] = {4};
    for (int l = 1; l < layers; l++)
        dims[l] = width;
    dims[layers] = N_CLASSES;
    struct tshmem_zero_config cfg = tshmem_zero_default(stage);
    cfg.optim = sgd ? TSHMEM_OPTIM_SGD : TSHMEM_OPTIM_ADAM;
    cfg.lr = sgd ? 0.2f : 0.01f;
    cfg.algo = strcmp(argv[8], "ring") == 0     ? TSHMEM_ALGO_RING
               : strcmp(argv[8], "direct") == 0 ? TSHMEM_ALGO_DIRECT
                                                : TSHMEM_ALGO_AUTO;
    cfg.prefetch = atoi(argv[9]);
    struct tshmem_zero_config cfg0 = cfg;
    cfg0.stage = 0;
    struct tshmem_zero z, z0;
    tshmem_zero_init(&z, TSHMEM_TEAM_WORLD, layers, dims, 42, &cfg);
    tshmem_zero_init(&z0, TSHMEM_TEAM_WORLD, layers, dims, 42, &cfg0);
    struct tshmem_ddp d;
    if (sgd)
        tshmem_ddp_init(&d, TSHMEM_TEAM_WORLD, layers, dims, 42, 0, 1);
    size_t P = z.n_params;
    struct tshmem_mlp single;
    float *sg = malloc(P * sizeof(float)), *sm = calloc(P, sizeof(float)),
          *sv = calloc(P, sizeof(float)), *mine = malloc(P * sizeof(float));
    tshmem_mlp_init(&single, layers, dims, 42, sg);
    STEP("stage %d, %s, %zu parameters, %d steps of %d samples", stage, argv[7], P, steps,
         global_n);
    uint64_t *hashes = tshmem_calloc((size_t)n, sizeof(uint64_t));
    double *loss = tshmem_malloc(sizeof(double));
    float *x = malloc((size_t)global_n * (size_t)dims[0] * sizeof(float));
    int *y = malloc((size_t)global_n * sizeof(int));
    /* Bit for bit against stage 0 wherever the sums are added in the same order: the direct
     * reduce-scatter (and AUTO, which picks it on one node) adds in team order as stage 0's
     * allreduce does; the ring does so on 1 and 2 PEs only. */
    int exact = cfg.algo != TSHMEM_ALGO_RING || n <= 2;
    double first_loss = 0, last_loss = 0;
    int first = me * global_n / n, share = (me + 1) * global_n / n - first;
    for (int s = 0; s < steps; s++) {
        tshmem_spiral_data(x, y, (long)s * global_n, global_n, dims[0], N_CLASSES, 7);
        const float *xs = x + (size_t)first * (size_t)dims[0];
        *loss = tshmem_zero_step(&z, xs, y + first, share, global_n);
        tshmem_zero_step(&z0, xs, y + first, share, global_n);
        if (sgd)
            tshmem_ddp_step(&d, xs, y + first, share, global_n, cfg.lr);
        tshmem_mlp_forward(&single, x, y, global_n);
        tshmem_mlp_backward(&single, 1.0f / (float)global_n, NULL, NULL);
        if (sgd)
            tshmem_mlp_sgd(&single, cfg.lr);
        else
            adam(&cfg, s + 1, single.params, sg, sm, sv, P);
        tshmem_zero_params(&z, mine);
        if (exact)
            for (size_t i = 0; i < P; i++)
                CHECK_OR_STOP(memcmp(&mine[i], &z0.params[i], sizeof(float)) == 0,
                              "PE %d step %d: parameter %zu is %.9g under stage %d, %.9g under "
                              "stage 0 (plain data parallelism): with the same order of "
                              "additions every stage must give the same bits", me, s, i,
                              mine[i], stage, z0.params[i]);
        if (sgd)
            for (size_t i = 0; i < P; i++)
                CHECK_OR_STOP(!exact || memcmp(&mine[i], &d.model.params[i], 4) == 0,
                              "PE %d step %d: parameter %zu is %.9g under stage %d, %.9g under "
                              "2.4's tshmem_ddp_step: the same gradients and SGD must give the "
                              "same bits", me, s, i, mine[i], stage, d.model.params[i]);
        if (stage == 3 && cfg.prefetch && layers > 1)
            CHECK_OR_STOP(z.prefetched >= 2 * (layers - 1),
                          "PE %d step %d: only %d of the %d layer computations had the next "
                          "layer's gather under way: with prefetch, start layer l+1's gather "
                          "(l-1's in the backward pass) before computing layer l", me, s,
                          z.prefetched, 2 * (layers - 1));
        tshmem_uint64_atomic_set(&hashes[me], hash(mine, P), 0);
        tshmem_double_sum_reduce(TSHMEM_TEAM_WORLD, loss, loss, 1);
        if (s == 0)
            first_loss = *loss / global_n;
        last_loss = *loss / global_n;
        tshmem_barrier_all();
        if (me == 0)
            for (int p = 1; p < n; p++)
                CHECK_OR_STOP(hashes[p] == hashes[0], "after step %d PE %d's parameters differ "
                              "from PE 0's: every PE must end each step with the same bits", s, p);
        tshmem_barrier_all();
    }
    /* The one-process run adds each gradient over the whole batch in sample order, the PEs
     * their shares and then the shares: a float sum of B terms moves by at most about
     * B * 2^-24 of the sum of their magnitudes. SGD carries that along: 1e-4 of a weight
     * (2.4's bound). Adam divides by sqrt(v): where a gradient is ~0 its sign, and so a whole
     * step of lr * (1 - beta1) / sqrt(1 - beta2) = 3.2 lr, can flip; the book derives it. So
     * for Adam every parameter stays within steps x 2 x 3.2 lr, and 99% within 1e-3. */
    double rtol = sgd ? 1e-4 : 1e-3, hard = sgd ? 1e30 : steps * 2 * 3.2 * cfg.lr;
    size_t over = 0, worst_i = 0;
    double worst = 0;
    for (size_t i = 0; i < P; i++) {
        double a = mine[i], b = single.params[i], rel = fabs(a - b) / fmax(fabs(b), 0.1);
        over += rel > rtol;
        CHECK_OR_STOP(fabs(a - b) <= hard, "PE %d: parameter %zu is %.9g, the one-process run "
                      "has %.9g: further apart than Adam's worst case allows", me, i, a, b);
        if (!(rel <= worst)) {
            worst = rel;
            worst_i = i;
        }
    }
    VALUE("worst_rel", "%.3g", worst);
    CHECK(sgd ? over == 0 : over <= P / 100,
          "PE %d: %zu parameters differ from the one-process run by more than %g relative; the "
          "worst, %zu, is %.9g against %.9g", me, over, rtol, worst_i, mine[worst_i],
          single.params[worst_i]);
    VALUE("loss", "%.4f -> %.4f", first_loss, last_loss);
    CHECK(last_loss < 0.7 * first_loss, "PE %d: the mean loss went from %.4f to %.4f in %d "
          "steps; it should fall by a third at least", me, first_loss, last_loss, steps);
    size_t bound = state_bound(&z, stage, !sgd);
    VALUE("state_bytes", "%zu", z.state_peak);
    CHECK(z.state_peak <= bound, "PE %d: stage %d keeps %zu bytes of model state at its peak; "
          "the stage's share is at most %zu here (%zu parameters on %d PEs): keep only what the "
          "stage keeps (book, Memory)", me, stage, z.state_peak, bound, P, n);
    if (stage == 1 || stage == 2)
        CHECK(z.comm_bytes <= z0.comm_bytes * 11 / 10 + (size_t)(16 * n * layers),
              "PE %d: stage %d sent %zu bytes in its last step, stage 0 %zu: a reduce-scatter and "
              "an allgather move what one allreduce does, no more", me, stage, z.comm_bytes,
              z0.comm_bytes);
    free(x);
    free(y);
    free(sm);
    free(sv);
    free(mine);
    tshmem_mlp_free(&single);
    free(sg);
    if (sgd)
        tshmem_ddp_free(&d);
    tshmem_zero_free(&z0);
    tshmem_zero_free(&z);
    tshmem_finalize();
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"rs", rs}, {"rsflags", rsflags}, {"fc", fc}, {"bad", bad}, {"train", train}, {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
