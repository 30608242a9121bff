/* pe_2_2.c: the PE side of chapter 2.2's tests: allreduce, every algorithm, any team. */
#include "pe_test.h" /* first: it asks for the POSIX declarations (usleep) */

#include <math.h>

#include "pe_reduce.h"

enum { GUARD = 16 }; /* elements past the end of dest that no reduction may touch */
#define SENTINEL (-7777)

static const struct {
    const char *name;
    enum tshmem_algo algo;
} algos[] = {
    {"auto", TSHMEM_ALGO_AUTO},
    {"oneshot", TSHMEM_ALGO_ONESHOT},
    {"rd", TSHMEM_ALGO_RECURSIVE_DOUBLING},
    {"ring", TSHMEM_ALGO_RING},
    {"twoshot", TSHMEM_ALGO_TWO_SHOT},
};
enum { N_ALGOS = sizeof algos / sizeof algos[0] };

static enum tshmem_algo algo_named(const char *name)
{
    for (int i = 0; i < N_ALGOS; i++)
        if (strcmp(algos[i].name, name) == 0)
            return algos[i].algo;
    fprintf(stderr, "pe_2_2: no algorithm named '%s'\n", name);
    exit(2);
}

/* The four reductions of the API. "typed" calls tshmem_float_sum_reduce and its siblings;
 * otherwise tshmem_allreduce with the algorithm under test. */
/* What element i of the result must be: the team members' elements combined. */
static double expect_real(enum kind k, const int *pes, int n, size_t i, unsigned salt)
{
    double acc = 0;
    for (int j = 0; j < n; j++) {
        double v;
        int pe = pes[j];
        if (k == FLOAT_SUM)
            v = (double)base(pe, i, salt);
        else if (k == DOUBLE_SUM)
            v = (double)base(pe, i, salt) * 0.25 + pe * 65536.0;
        else
            v = (double)((int64_t)((i * 7919u + (unsigned)pe * 104729u + salt) % 100003u) - 50000);
        acc = k == FLOAT_MAX ? (j == 0 || v > acc ? v : acc) : acc + v;
    }
    return acc;
}

static int64_t expect_int(const int *pes, int n, size_t i, unsigned salt)
{
    int64_t acc = 0;
    for (int j = 0; j < n; j++)
        acc += base(pes[j], i, salt) * 1000000007LL + ((int64_t)pes[j] << 40);
    return acc;
}

static void fill_guard(enum kind k, void *buf, size_t count)
{
    if (k == INT64_SUM)
        for (int g = 0; g < GUARD; g++)
            ((int64_t *)buf)[count + (size_t)g] = SENTINEL;
    else if (k == DOUBLE_SUM)
        for (int g = 0; g < GUARD; g++)
            ((double *)buf)[count + (size_t)g] = SENTINEL;
    else
        for (int g = 0; g < GUARD; g++)
            ((float *)buf)[count + (size_t)g] = SENTINEL;
}

static double element(enum kind k, const void *buf, size_t i)
{
    if (k == DOUBLE_SUM)
        return ((const double *)buf)[i];
    if (k == INT64_SUM)
        return (double)((const int64_t *)buf)[i];
    return ((const float *)buf)[i];
}

/* Checks dest (the result, then GUARD untouched elements) and, unless in place, that source
 * is unchanged. Prints the first wrong element and how many are wrong; returns 0 if any. */
static int verify(enum kind k, const void *dest, const void *source, size_t count, int in_place,
                  const int *pes, int n, unsigned salt, const char *what)
{
    int me = tshmem_my_pe();
    size_t bad = 0, first = 0;
    double want_first = 0, saw_first = 0;
    for (size_t i = 0; i < count; i++) {
        int ok;
        double want, saw;
        if (k == INT64_SUM) {
            int64_t w = expect_int(pes, n, i, salt), s = ((const int64_t *)dest)[i];
            ok = w == s, want = (double)w, saw = (double)s;
        } else {
            want = expect_real(k, pes, n, i, salt), saw = element(k, dest, i);
            ok = want == saw;
        }
        if (!ok && bad++ == 0)
            first = i, want_first = want, saw_first = saw;
    }
    if (bad) {
        FAIL("PE %d: %s, %s of %zu elements: dest[%zu] is %.17g, expected %.17g (%zu of %zu "
             "elements wrong)", me, what, kind_name[k], count, first, saw_first, want_first, bad,
             count);
        return 0;
    }
    for (size_t g = 0; g < GUARD; g++)
        if (element(k, dest, count + g) != SENTINEL) {
            FAIL("PE %d: %s, %s of %zu elements: dest[%zu], past the end, was overwritten "
                 "(%.17g, expected %d untouched)", me, what, kind_name[k], count, count + g,
                 element(k, dest, count + g), SENTINEL);
            return 0;
        }
    if (!in_place) {
        char *fresh = malloc(count * kind_size(k) + 1);
        fill(k, fresh, count, me, salt);
        size_t i = 0;
        while (i < count && memcmp((const char *)source + i * kind_size(k),
                                   fresh + i * kind_size(k), kind_size(k)) == 0)
            i++;
        free(fresh);
        if (i < count) {
            FAIL("PE %d: %s, %s of %zu elements: source[%zu] changed to %.17g: a reduction "
                 "must not write its source", me, what, kind_name[k], count, i,
                 element(k, source, i));
            return 0;
        }
    }
    return 1;
}

/* One reduction of `count` elements of kind k on team, in place or not, checked. A wrong result
 * ends the job at once (pe_stop_job), naming the PE, the call, the element and both values. */
static int reduce_once(tshmem_team_t team, const char *algo, enum kind k, void *src, void *dst,
                       size_t count, int in_place, unsigned salt)
{
    int n = tshmem_team_n_pes(team), me = tshmem_my_pe();
    int *pes = malloc(sizeof(int) * (size_t)n);
    for (int j = 0; j < n; j++)
        pes[j] = tshmem_team_translate_pe(team, j, TSHMEM_TEAM_WORLD);
    void *out = in_place ? src : dst;
    fill(k, src, count, me, salt);
    fill_guard(k, out, count);
    if (strcmp(algo, "typed") == 0) {
        switch (k) {
        case FLOAT_SUM: tshmem_float_sum_reduce(team, out, src, count); break;
        case DOUBLE_SUM: tshmem_double_sum_reduce(team, out, src, count); break;
        case INT64_SUM: tshmem_int64_sum_reduce(team, out, src, count); break;
        case FLOAT_MAX: tshmem_float_max_reduce(team, out, src, count); break;
        default: break;
        }
    } else {
        tshmem_allreduce(team, out, src, count, kind_dtype[k], kind_op[k], algo_named(algo));
    }
    char what[160];
    snprintf(what, sizeof what, "algo %s on a team of %d%s, call %u", algo, n,
             in_place ? ", in place" : "", salt);
    int ok = verify(k, out, src, count, in_place, pes, n, salt, what);
    free(pes);
    if (!ok) /* the others may wait in the next call for this PE: no barrier, stop them all */
        pe_stop_job();
    return ok;
}

static size_t parse_counts(const char *list, size_t *counts, int cap, int *n)
{
    size_t max = 0;
    *n = 0;
    for (const char *p = list; *p && *n < cap;) {
        char *end;
        size_t v = strtoull(p, &end, 10);
        counts[(*n)++] = v;
        max = v > max ? v : max;
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p != ',')
            break;
    }
    return max;
}

static tshmem_team_t team_named(const char *name)
{
    if (strcmp(name, "node") == 0)
        return TSHMEM_TEAM_NODE;
    if (strcmp(name, "odd") == 0) /* PEs 1, 3, 5, ...: a team that leaves PE 0 out */
        return team_by_hand(1, 2, tshmem_n_pes());
    return TSHMEM_TEAM_WORLD;
}

/* ALGO as given: one name, a list ("rd,ring"), or "all": every algorithm, then "typed". */
static int algo_list(const char *algo, const char **names)
{
    if (strcmp(algo, "all") != 0)
        return pe_names(algo, names, N_ALGOS + 1);
    for (int a = 0; a < N_ALGOS; a++)
        names[a] = algos[a].name;
    names[N_ALGOS] = "typed";
    return N_ALGOS + 1;
}

/* correct ALGO TEAM COUNTS MODE: every reduction kind, every count, in place and not; ALGO may
 * name several algorithms (algo_list), one after the other. */
static void correct(int argc, char **argv)
{
    const char *algo = argc > 2 ? argv[2] : "auto", *team_s = argc > 3 ? argv[3] : "world";
    const char *list = argc > 4 ? argv[4] : "0,1,7,1023", *mode = argc > 5 ? argv[5] : "both";
    size_t counts[16];
    int n_counts;
    size_t max = parse_counts(list, counts, 16, &n_counts);
    pe_init();
    tshmem_team_t team = team_named(team_s);
    char *src = tshmem_malloc((max + GUARD) * 8), *dst = tshmem_malloc((max + GUARD) * 8);
    unsigned salt = 0;
    const char *names[N_ALGOS + 1];
    int n_names = algo_list(algo, names);
    for (int a = 0; a < n_names && tshmem_team_my_pe(team) >= 0; a++) {
        const char *name = names[a];
        for (int c = 0; c < n_counts; c++) {
            STEP("%s, count %zu", name, counts[c]);
            for (int k = 0; k < N_KINDS; k++)
                for (int in_place = 0; in_place < 2; in_place++) {
                    if ((in_place && strcmp(mode, "copy") == 0) ||
                        (!in_place && strcmp(mode, "inplace") == 0))
                        continue;
                    if (!reduce_once(team, name, (enum kind)k, src, dst, counts[c], in_place,
                                     ++salt))
                        goto out;
                }
        }
    }
out:
    pe_sync(); /* MPI's: the world may span virtual nodes (chapter 2.5) */
    tshmem_finalize();
}

/* backtoback ALGO TEAM CALLS: many calls in a row with changing sizes, kinds and in-place,
 * no barrier in between: the flags and the scratch are reused, never reset. Several
 * algorithms (algo_list): CALLS calls of each in turn, still with no barrier between. */
static void backtoback(int argc, char **argv)
{
    const char *algo = argc > 2 ? argv[2] : "auto", *team_s = argc > 3 ? argv[3] : "world";
    int calls = argc > 4 ? atoi(argv[4]) : 1000;
    enum { BIG = 300007 }; /* a float vector larger than the 1 MiB scratch */
    pe_init();
    tshmem_team_t team = team_named(team_s);
    char *src = tshmem_malloc((BIG + GUARD) * 8), *dst = tshmem_malloc((BIG + GUARD) * 8);
    const char *names[N_ALGOS + 1];
    int n_names = algo_list(algo, names);
    for (int a = 0; a < n_names; a++)
        for (int call = 1; call <= calls; call++) {
            if (call % 250 == 0)
                STEP("%s, call %d", names[a], call);
            size_t count = call % 97 == 0 ? BIG : (size_t)(call * 7919) % 2999;
            if (call % 11 == 0)
                count = 0;
            if (!reduce_once(team, names[a], (enum kind)(call % N_KINDS), src, dst, count,
                             call % 3 == 0, (unsigned)(a * calls + call)))
                goto out;
        }
out:
    pe_sync();
    tshmem_finalize();
}

/* teams CALLS: world and node reductions alternate, each algorithm in turn, back to back.
 * The scratch is one per PE, shared by every team's calls. */
static void teams(int argc, char **argv)
{
    int calls = argc > 2 ? atoi(argv[2]) : 400;
    enum { BIG = 70001 };
    pe_init();
    char *src = tshmem_malloc((BIG + GUARD) * 8), *dst = tshmem_malloc((BIG + GUARD) * 8);
    for (int call = 1; call <= calls; call++) {
        tshmem_team_t team = call % 2 ? TSHMEM_TEAM_WORLD : TSHMEM_TEAM_NODE;
        const char *algo = algos[(call / 2) % N_ALGOS].name;
        size_t count = call % 13 == 0 ? BIG : (size_t)(call * 131) % 5003;
        if (!reduce_once(team, algo, (enum kind)(call % N_KINDS), src, dst, count, call % 4 == 1,
                         (unsigned)call))
            break;
    }
    pe_sync();
    tshmem_finalize();
}

/* subteam CALLS: every PE but the last reduces on a team of their own, then everyone reduces
 * on the world, with no barrier between, every pair of algorithms in turn. The last PE starts
 * the world call at once and may want to write into a PE's scratch while that PE is still in
 * its team call: only that PE's "I have entered" may let it. */
static void subteam(int argc, char **argv)
{
    int calls = argc > 2 ? atoi(argv[2]) : 200;
    enum { BIG = 150001 }; /* in place, more than the whole scratch */
    pe_init();
    tshmem_team_t low = team_by_hand(0, 1, tshmem_n_pes() - 1);
    char *src = tshmem_malloc((BIG + GUARD) * 8), *dst = tshmem_malloc((BIG + GUARD) * 8);
    for (int call = 0; call < calls; call++) {
        /* Every pair of algorithms in turn; every other round large, every other pair of
         * rounds in place. */
        int pair = call % (N_ALGOS * N_ALGOS), round = call / (N_ALGOS * N_ALGOS);
        const char *team_algo = algos[pair % N_ALGOS].name;
        const char *world_algo = algos[pair / N_ALGOS].name;
        size_t count = round % 2 ? BIG : (size_t)(call * 577) % 3001;
        enum kind k = (enum kind)(call % N_KINDS);
        if (tshmem_team_my_pe(low) >= 0 &&
            !reduce_once(low, team_algo, k, src, dst, count, round % 4 >= 2, 2u * (unsigned)call))
            break;
        if (!reduce_once(TSHMEM_TEAM_WORLD, world_algo, k, src, dst, count, call % 3 == 0,
                         2u * (unsigned)call + 1))
            break;
    }
    pe_sync();
    tshmem_finalize();
}

/* The largest call that recursive doubling on a team of n PEs takes through its eager area:
 * one slot of TSHMEM_RD_EAGER_BYTES cut as the scratch is (book 2.2, "Small calls"). */
static size_t eager_limit(int n)
{
    int p = 1, rounds = 0;
    while (p * 2 <= n)
        p *= 2, rounds++;
    int slots = 2 * rounds + (n > p);
    return TSHMEM_RD_EAGER_BYTES / (size_t)(slots > 0 ? slots : 1) / 64 * 64;
}

/* A count of kind k that fits that limit on `team` (or, with over, just does not). */
static size_t eager_count(tshmem_team_t team, enum kind k, unsigned call, int over)
{
    size_t elem = tshmem_dtype_size(kind_dtype[k]);
    size_t most = eager_limit(tshmem_team_n_pes(team)) / elem;
    return over ? most + 1 + call % 7 : 1 + call % most;
}

/* eager CALLS: recursive doubling's small calls (book 2.2, "Small calls: no entry signal").
 * First CALLS calls that fit the world's eager slot (eager_limit), one PE late by turns, no
 * barrier between: then no PE may have written an entry signal ("from") into another's reduce
 * flags. Then small and larger calls mixed, and a team of PEs 0 and 2 reducing just before
 * every world call, as in subteam: the eager area is the team's own. */
static void eager(int argc, char **argv)
{
    int calls = argc > 2 ? atoi(argv[2]) : 1000;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    char *src = tshmem_malloc((4096 + GUARD) * 8), *dst = tshmem_malloc((4096 + GUARD) * 8);
    const struct tshmem_coll_flags *f = &tshmem_g.reserved->reduce[TSHMEM_TEAM_WORLD];
    for (int call = 1; call <= calls; call++) {
        enum kind k = (enum kind)(call % N_KINDS);
        if (call % n == me && call % 3 == 0)
            usleep(50); /* late by turns: the others run a call ahead into my eager area */
        size_t count = eager_count(TSHMEM_TEAM_WORLD, k, (unsigned)call, 0);
        if (!reduce_once(TSHMEM_TEAM_WORLD, "rd", k, src, dst, count, call % 4 == 1,
                         (unsigned)call))
            goto out;
    }
    pe_sync();
    for (int j = 0; j < n; j++)
        if (f->from[j] != 0) {
            CHECK(0, "after %d recursive-doubling calls of at most %zu bytes on %d PEs, PE %d "
                  "has written an entry signal into this PE's reduce flags (from[%d] = %llu). "
                  "A call that fits a slot of the team's eager area lands there and needs none: "
                  "see book 2.2, \"Small calls: no entry signal\".", calls, eager_limit(n), n,
                  j, j, (unsigned long long)f->from[j]);
            goto out;
        }
    STEP("no entry signal in %d small calls", calls);
    /* PEs 0 and 2 reduce on a team of their own before each world call; PE 1 goes straight
     * into the world call and writes into PE 0's eager area while PE 0, late, is still in its
     * pair call: the two calls must not land in the same place. */
    tshmem_team_t pair = team_by_hand(0, 2, n >= 3 ? 2 : 1);
    for (int call = 1; call <= calls; call++) {
        enum kind k = (enum kind)(call % N_KINDS);
        int over = call % 5 == 0; /* a world call too large for the eager area now and then */
        unsigned salt = (unsigned)(calls + 2 * call);
        if (me == 0 && call % 2)
            usleep(50);
        if (tshmem_team_my_pe(pair) >= 0 &&
            !reduce_once(pair, "rd", k, src, dst, eager_count(pair, k, (unsigned)call, 0), 0,
                         salt))
            goto out;
        if (call % n == me && call % 3 == 1)
            usleep(50);
        size_t count = eager_count(TSHMEM_TEAM_WORLD, k, (unsigned)call, over);
        if (!reduce_once(TSHMEM_TEAM_WORLD, "rd", k, src, dst, count, call % 3 == 0, salt + 1))
            goto out;
    }
out:
    pe_sync();
    tshmem_finalize();
}

/* bound COUNT: data that is not integer-valued, reduced by every algorithm in turn. Each float
 * sum must be within the stated bound of the exact sum, and every PE must get the same bits
 * (value "bits_<algo>" per PE, compared by the suite). */
static void bound(int argc, char **argv)
{
    size_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : 100003;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    float *src = tshmem_malloc(count * sizeof(float) + 1);
    float *dst = tshmem_malloc(count * sizeof(float) + 1);
    uint64_t state = 88172645463325252ull ^ (uint64_t)me * 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < count; i++) { /* xorshift: fractions of both signs, many scales */
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        src[i] = (float)((double)(state >> 11) / 9007199254740992.0 - 0.5) *
                 (float)(1 << (state % 12));
    }
    /* The exact sums and the sums of magnitudes, in double: 8 floats add exactly in 53 bits. */
    double *exact = calloc(count, sizeof(double)), *mag = calloc(count, sizeof(double));
    float *peer = malloc(sizeof(float) * count);
    tshmem_barrier_all();
    for (int pe = 0; pe < n; pe++) {
        tshmem_float_get(peer, src, count, pe);
        for (size_t i = 0; i < count; i++)
            exact[i] += peer[i], mag[i] += fabs(peer[i]);
    }
    tshmem_barrier_all();
    /* Adding n floats in any order rounds n - 1 times, each by at most u = 2^-24 of a partial
     * sum, itself at most the sum of magnitudes: |error| <= gamma(n-1) * sum |x|, with
     * gamma(k) = k u / (1 - k u) (Higham, Accuracy and Stability, section 4.2). */
    double u = ldexp(1, -24), gamma = (n - 1) * u / (1 - (n - 1) * u);
    for (int a = 0; a < N_ALGOS; a++) {
        STEP("%s", algos[a].name);
        tshmem_allreduce(TSHMEM_TEAM_WORLD, dst, src, count, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM,
                         algos[a].algo);
        uint64_t hash = 1469598103934665603ull;
        for (size_t i = 0; i < count; i++) {
            double err = fabs((double)dst[i] - exact[i]), lim = gamma * mag[i];
            if (!(err <= lim)) { /* the others go on to the next algorithm's call: stop them */
                FAIL("PE %d: algo %s, float sum of %zu elements: dest[%zu] is %.9g, the exact "
                     "sum is %.17g: the error %.3g exceeds the bound gamma(n-1) * sum|x| = %.3g",
                     me, algos[a].name, count, i, dst[i], exact[i], err, lim);
                pe_stop_job();
            }
            uint32_t bits;
            memcpy(&bits, &dst[i], sizeof bits);
            hash = (hash ^ bits) * 1099511628211ull;
        }
        char key[32];
        snprintf(key, sizeof key, "bits_%s", algos[a].name);
        pe_say("value", "%s=%016llx", key, (unsigned long long)hash);
    }
    free(exact), free(mag), free(peer);
    tshmem_barrier_all();
    tshmem_finalize();
}

/* bad KIND: a call the runtime must refuse with a clear message. */
static void bad(int argc, char **argv)
{
    const char *kind = argc > 2 ? argv[2] : "team";
    pe_init();
    float *src = tshmem_malloc(64 * sizeof(float)), *dst = tshmem_malloc(64 * sizeof(float));
    float local[64] = {0};
    if (strcmp(kind, "team") == 0)
        tshmem_float_sum_reduce(9, dst, src, 64);
    else if (strcmp(kind, "dest") == 0)
        tshmem_float_sum_reduce(TSHMEM_TEAM_WORLD, local, src, 64);
    else if (strcmp(kind, "source") == 0)
        tshmem_allreduce(TSHMEM_TEAM_WORLD, dst, local, 64, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM,
                         TSHMEM_ALGO_RING);
    else if (strcmp(kind, "member") == 0 && tshmem_team_my_pe(team_by_hand(1, 2, 8)) < 0)
        tshmem_double_sum_reduce(5, (double *)dst, (double *)src, 8); /* PE 0 is not in it */
    else if (strcmp(kind, "overlap") == 0)
        tshmem_float_max_reduce(TSHMEM_TEAM_WORLD, dst + 1, dst, 32);
    else if (strcmp(kind, "algo") == 0)
        tshmem_allreduce(TSHMEM_TEAM_WORLD, dst, src, 64, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM,
                         TSHMEM_ALGO_DIRECT);
    if (strcmp(kind, "member") == 0 && tshmem_my_pe() % 2 == 1) {
        pe_sync(); /* a member waits here: the call on PE 0, not a member, must stop the job */
        return;
    }
    FAIL("PE %d: the bad call (%s) returned instead of stopping with an error", tshmem_my_pe(),
         kind);
}

/* mismatch: an allreduce every PE makes alike, then one where PE 1 passes 1000 elements and
 * the others 100 (every buffer has room for 1000: nothing outside them is hit). */
static void mismatch(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    float *src = tshmem_malloc(1000 * sizeof(float)), *dst = tshmem_malloc(1000 * sizeof(float));
    for (int i = 0; i < 1000; i++)
        src[i] = (float)(me + 1);
    tshmem_float_sum_reduce(TSHMEM_TEAM_WORLD, dst, src, 100);
    CHECK(dst[99] == (float)(n * (n + 1) / 2), "the first allreduce gave %g at [99], expected %d",
          (double)dst[99], n * (n + 1) / 2);
    size_t count = me == 1 ? 1000 : 100;
    STEP("allreduce of %zu elements (PE 1: 1000, the others 100)", count);
    tshmem_float_sum_reduce(TSHMEM_TEAM_WORLD, dst, src, count);
    /* The PE that compares stops the job; the others may return first and wait here until it
     * does. Past this barrier, no PE saw the mismatch. */
    tshmem_barrier_all();
    FAIL("an allreduce with 1000 elements on PE 1 and 100 on the others returned on every PE");
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"correct", correct}, {"backtoback", backtoback}, {"teams", teams},
        {"subteam", subteam}, {"bound", bound},           {"eager", eager},
        {"bad", bad},         {"mismatch", mismatch},
        {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
