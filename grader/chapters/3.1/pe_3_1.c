/* pe_3_1.c: the PE side of chapter 3.1's tests: tshmem_alltoallmem, MoE dispatch and combine.
 *
 * alltoall scenarios fill block j of the source with pattern(me, byte, round x 31 + j), a
 * sentinel in dest, call with no barrier around, and check every block, the bytes past dest and
 * the source. MoE scenarios give every PE its tokens from a seeded generator that any PE can
 * run for any PE and layer, so every PE computes on its own what it must receive (a
 * single-process reference of the same routing) and what combine must give back. Values are
 * multiples of 1/8 and weights multiples of 1/64, small enough that every product and sum is
 * exact in float, so combine(dispatch(x)) with identity experts is exactly x times the sum of
 * the weights; with `inexact` they are not, and only a sum in slot order matches the reference
 * bit for bit (the build is ISO C, so the compiler fuses no multiply-add on its own).
 */
#include "pe_test.h"

#include <math.h>

#define SENTINEL 0xA5
#define GUARD 64
#define STAGE_BYTES 8192 /* TSHMEM_A2A_STAGE_BYTES: the most a one-shot exchange stages */

/* The algorithm the alltoall scenarios run: AUTO (tshmem_alltoallmem itself) unless a
 * scenario's name starts with oneshot_ or direct_. */
static enum tshmem_algo a2a_algo = TSHMEM_ALGO_AUTO;
static const char *a2a_algo_name = "auto";

/* ---- alltoallmem --------------------------------------------------------------------------- */
struct team_setup {
    const char *name;
    tshmem_team_t team;
    int me, n; /* -1, 0 on a PE outside a split team */
};

/* world, node, or even (the world PEs 0, 2, 4, ...: a strided split, chapter 2.5). */
static struct team_setup make_team(const char *name)
{
    struct team_setup s = {name, TSHMEM_TEAM_WORLD, 0, 0};
    if (strcmp(name, "node") == 0)
        s.team = TSHMEM_TEAM_NODE;
    else if (strcmp(name, "even") == 0) {
        int n = tshmem_n_pes();
        tshmem_team_split_strided(TSHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &s.team);
    }
    s.me = s.team == TSHMEM_TEAM_INVALID ? -1 : tshmem_team_my_pe(s.team);
    s.n = s.team == TSHMEM_TEAM_INVALID ? 0 : tshmem_team_n_pes(s.team);
    return s;
}

static int world_of(const struct team_setup *s, int team_pe)
{
    return tshmem_team_translate_pe(s->team, team_pe, TSHMEM_TEAM_WORLD);
}

static unsigned char a2a_byte(int src, int dst, size_t i, int r)
{
    return pattern(src, i, r * 31 + dst);
}

/* A comma-separated list of sizes; "max" is the largest block a one-shot exchange of n PEs
 * takes (STAGE_BYTES / n), "max+1" one more. */
static int parse_sizes(const char *list, size_t *sizes, int cap, int n_team)
{
    int n = 0;
    for (const char *p = list; *p && n < cap;) {
        char *end;
        if (strncmp(p, "max", 3) == 0) {
            sizes[n] = STAGE_BYTES / (size_t)(n_team > 0 ? n_team : 1);
            end = (char *)p + 3;
            if (*end == '+')
                sizes[n] += strtoull(end + 1, &end, 10);
            n++;
        } else
            sizes[n++] = strtoull(p, &end, 10);
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* One call of `size` bytes per block in round r; 1 if this PE's view is right. */
static int one_alltoall(const struct team_setup *s, unsigned char *dest, unsigned char *src,
                        size_t size, int r)
{
    int me = world_of(s, s->me), n = s->n;
    memset(dest, SENTINEL, size * (size_t)n + GUARD);
    for (int j = 0; j < n; j++)
        for (size_t i = 0; i < size; i++)
            src[(size_t)j * size + i] = a2a_byte(me, world_of(s, j), i, r);
    int rc = a2a_algo == TSHMEM_ALGO_AUTO
                 ? tshmem_alltoallmem(s->team, dest, src, size)
                 : tshmem_alltoallmem_algo(s->team, dest, src, size, a2a_algo);
    if (rc != 0) {
        FAIL("round %d, alltoallmem (%s) on team %s, %zu bytes per block: returned %d, expected 0",
             r, a2a_algo_name, s->name, size, rc);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        const unsigned char *b = dest + (size_t)i * size;
        for (size_t x = 0; x < size; x++) {
            unsigned char want = a2a_byte(world_of(s, i), me, x, r);
            if (b[x] != want) {
                FAIL("round %d, alltoallmem (%s) on team %s, %zu bytes per block: block %d (from "
                     "team PE %d, world PE %d), byte %zu is 0x%02x, expected 0x%02x", r,
                     a2a_algo_name, s->name, size, i, i, world_of(s, i), x, b[x], want);
                return 0;
            }
        }
    }
    for (int g = 0; g < GUARD; g++)
        if (dest[(size_t)n * size + g] != SENTINEL) {
            FAIL("round %d, alltoallmem on team %s, %zu bytes per block: the call wrote past the "
                 "end of dest (byte %d after it is 0x%02x)", r, s->name, size, g,
                 dest[(size_t)n * size + g]);
            return 0;
        }
    for (int j = 0; j < n; j++)
        for (size_t i = 0; i < size; i++)
            if (src[(size_t)j * size + i] != a2a_byte(me, world_of(s, j), i, r)) {
                FAIL("round %d, alltoallmem on team %s: my source block %d byte %zu changed", r,
                     s->name, j, i);
                return 0;
            }
    return 1;
}

/* alltoall TEAM SIZES */
static void alltoall(int argc, char **argv)
{
    size_t sizes[16], max = 0;
    pe_init();
    struct team_setup s = make_team(argc > 2 ? argv[2] : "world");
    int ns = parse_sizes(argc > 3 ? argv[3] : "0,1,7,1023", sizes, 16, s.n);
    for (int i = 0; i < ns; i++)
        max = sizes[i] > max ? sizes[i] : max;
    int nw = tshmem_n_pes();
    unsigned char *dest = tshmem_malloc(max * (size_t)nw + GUARD);
    unsigned char *src = tshmem_malloc(max * (size_t)nw + 1);
    for (int i = 0; s.me >= 0 && i < ns; i++) {
        STEP("alltoall (%s) on team %s, %zu bytes per block", a2a_algo_name, s.name, sizes[i]);
        if (!one_alltoall(&s, dest, src, sizes[i], i + 1))
            return; /* exit now: the launcher stops the PEs still waiting for us */
    }
    pe_sync();
    tshmem_finalize();
}

/* alltoall_back_to_back TEAM CALLS: sizes changing, no barrier, a PE late now and then, and
 * every PE reads (checks) its dest between calls: a PE that runs ahead must not write into a
 * dest whose owner has not entered the call yet. */
static void alltoall_back_to_back(int argc, char **argv)
{
    static const size_t all_sizes[] = {1, 7, 300, 0, 4096, 3, 20001, 64, 1};
    enum { N_SIZES = sizeof all_sizes / sizeof all_sizes[0], MAX = 20001 };
    pe_init();
    struct team_setup s = make_team(argc > 2 ? argv[2] : "world");
    /* One-shot takes at most STAGE_BYTES / n per block: larger sizes become that limit. */
    size_t sizes[N_SIZES], cap = s.n > 0 ? STAGE_BYTES / (size_t)s.n : 0;
    for (int i = 0; i < N_SIZES; i++)
        sizes[i] = a2a_algo == TSHMEM_ALGO_ONESHOT && all_sizes[i] > cap ? cap - (size_t)(i % 2)
                                                                         : all_sizes[i];
    int calls = argc > 3 ? atoi(argv[3]) : 500;
    int nw = tshmem_n_pes();
    unsigned char *dest = tshmem_malloc((size_t)MAX * (size_t)nw + GUARD);
    unsigned char *src = tshmem_malloc((size_t)MAX * (size_t)nw + 1);
    srand(977u + (unsigned)tshmem_my_pe());
    for (int c = 1; s.me >= 0 && c <= calls; c++) {
        if (c % 100 == 0)
            STEP("call %d of %d", c, calls);
        if (rand() % 8 == 0) /* late now and then: the others run ahead into this call */
            usleep((useconds_t)(rand() % 400));
        if (!one_alltoall(&s, dest, src, sizes[(size_t)c % N_SIZES], c))
            return;
    }
    pe_sync();
    tshmem_finalize();
}

/* oneshot_alltoall TEAM SIZES, oneshot_back_to_back TEAM CALLS, and the same with direct_:
 * the scenarios above with that algorithm forced through tshmem_alltoallmem_algo. */
static void forced(int argc, char **argv, enum tshmem_algo algo, const char *name,
                   void (*scenario)(int, char **))
{
    a2a_algo = algo;
    a2a_algo_name = name;
    scenario(argc, argv);
}
static void oneshot_alltoall(int argc, char **argv)
{
    forced(argc, argv, TSHMEM_ALGO_ONESHOT, "oneshot", alltoall);
}
static void oneshot_back_to_back(int argc, char **argv)
{
    forced(argc, argv, TSHMEM_ALGO_ONESHOT, "oneshot", alltoall_back_to_back);
}
static void direct_alltoall(int argc, char **argv)
{
    forced(argc, argv, TSHMEM_ALGO_DIRECT, "direct", alltoall);
}
static void direct_back_to_back(int argc, char **argv)
{
    forced(argc, argv, TSHMEM_ALGO_DIRECT, "direct", alltoall_back_to_back);
}

/* alltoall_bad KIND */
static void alltoall_bad(int argc, char **argv)
{
    const char *kind = argc > 2 ? argv[2] : "team";
    pe_init();
    int n = tshmem_n_pes();
    char *dest = tshmem_malloc(4096), *src = tshmem_malloc(4096), local[256];
    if (strcmp(kind, "team") == 0)
        tshmem_alltoallmem(9, dest, src, 8);
    else if (strcmp(kind, "dest") == 0)
        tshmem_alltoallmem(TSHMEM_TEAM_WORLD, local, src, 8);
    else if (strcmp(kind, "small") == 0)
        tshmem_alltoallmem(TSHMEM_TEAM_WORLD, dest, src, 4096 / (size_t)n + 100);
    else if (strcmp(kind, "overlap") == 0)
        tshmem_alltoallmem(TSHMEM_TEAM_WORLD, dest, dest + 8, 8);
    else if (strcmp(kind, "oneshot_big") == 0) /* one byte per PE more than a stage holds */
        tshmem_alltoallmem_algo(TSHMEM_TEAM_WORLD, dest, src, STAGE_BYTES / (size_t)n + 1,
                                TSHMEM_ALGO_ONESHOT);
    else if (strcmp(kind, "algo") == 0)
        tshmem_alltoallmem_algo(TSHMEM_TEAM_WORLD, dest, src, 8, TSHMEM_ALGO_RING);
    FAIL("bad arguments (%s) were accepted", kind);
}

/* ---- MoE dispatch and combine -------------------------------------------------------------- */
struct moe_case {
    int E, k, H, T, layers;
    const char *route; /* uniform, skewed, holes */
    int scale;         /* expert e multiplies its rows by e + 1 (else identity) */
    int inexact;       /* values and weights with full mantissas: the sum's order shows */
    unsigned tzero;    /* bit p: world PE p passes no tokens */
    const char *team;
};

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct rng {
    uint64_t s;
};
static unsigned next(struct rng *r, unsigned below)
{
    r->s = mix(r->s);
    return (unsigned)(r->s % below);
}

/* The owner of expert e among n team PEs: first(p) = p E / n, recomputed here on purpose. */
static int owner(int E, int n, int e)
{
    int p = 0;
    while (p + 1 < n && (int)((long)(p + 1) * E / n) <= e)
        p++;
    return p;
}

/* Team PE p's tokens in layer L: T, x[T][H], idx[T][k], w[T][k]. */
struct tokens {
    int T;
    float *x, *w;
    int *idx;
};

static void gen(const struct moe_case *c, int n, int p, int world_p, int L, struct tokens *tk)
{
    struct rng r = {mix((uint64_t)world_p * 1000003u + (uint64_t)L * 7919u + 17u)};
    tk->T = (c->tzero >> world_p & 1u) ? 0 : c->T - (int)((unsigned)(p * 5 + L * 3) % (unsigned)(c->T / 2 + 1));
    size_t T = (size_t)tk->T, H = (size_t)c->H, k = (size_t)c->k;
    tk->x = malloc(sizeof(float) * (T * H + 1));
    tk->w = malloc(sizeof(float) * (T * k + 1));
    tk->idx = malloc(sizeof(int) * (T * k + 1));
    for (size_t i = 0; i < T * H; i++)
        tk->x[i] = c->inexact ? (float)((int)next(&r, 2000001) - 1000000) / 999983.0f
                              : (float)((int)next(&r, 33) - 16) / 8.0f;
    /* Candidate experts: all (uniform, holes). skewed: slot 0 is always expert 0 (hot), and the
     * other slots avoid expert 1 (it gets no token at all) and every expert of the last team PE
     * (it receives nothing). */
    int cand[4096], nc = 0;
    for (int e = 0; e < c->E; e++) {
        int skip = !strcmp(c->route, "skewed") && n > 1 && (owner(c->E, n, e) == n - 1 || e == 1);
        if (!skip)
            cand[nc++] = e;
    }
    if (nc == 0)
        cand[nc++] = 0;
    for (size_t t = 0; t < T; t++) {
        int used[4096] = {0};
        for (size_t s = 0; s < k; s++) {
            int e;
            if (!strcmp(c->route, "skewed") && s == 0)
                e = 0;
            else if (!strcmp(c->route, "holes") && next(&r, 4) == 0)
                e = -1;
            else {
                e = cand[next(&r, (unsigned)nc)];
                /* Distinct when there are enough candidates; repeats otherwise (allowed). */
                for (int tries = 0; tries < 50 && used[e]; tries++)
                    e = cand[next(&r, (unsigned)nc)];
            }
            if (e >= 0)
                used[e] = 1;
            tk->idx[t * k + s] = e;
            tk->w[t * k + s] = c->inexact ? (float)(1 + next(&r, 1000000)) / 1000003.0f
                                          : (float)(1 + next(&r, 16)) / 64.0f;
        }
    }
}

static void tokens_free(struct tokens *tk)
{
    free(tk->x), free(tk->w), free(tk->idx);
}

static float expert_scale(const struct moe_case *c, int e)
{
    return c->scale ? (float)(e + 1) : 1.0f;
}

/* Checks one layer's dispatch result against the reference; 1 if right. */
static int check_recv(const struct moe_case *c, int n, int me, const int *world, int L,
                      struct tokens *all, const float *recv, const tshmem_moe_layout_t *lay)
{
    int first = (int)((long)me * c->E / n), end = (int)((long)(me + 1) * c->E / n);
    if (lay->n_local_experts != end - first || lay->first_expert != first) {
        FAIL("layer %d: layout says %d local experts from expert %d, expected %d from %d "
             "(team PE p owns experts p*E/n .. (p+1)*E/n - 1)", L, lay->n_local_experts,
             lay->first_expert, end - first, first);
        return 0;
    }
    int r = 0;
    for (int e = first; e < end; e++) {
        int l = e - first, start = r;
        if (lay->expert_offset[l] != r) {
            FAIL("layer %d: local expert %d (expert %d) starts at row %d, expected %d", L, l, e,
                 lay->expert_offset[l], r);
            return 0;
        }
        for (int j = 0; j < n; j++)
            for (int t = 0; t < all[j].T; t++)
                for (int s = 0; s < c->k; s++) {
                    if (all[j].idx[(size_t)t * c->k + s] != e)
                        continue;
                    if (r >= lay->n_rows) {
                        FAIL("layer %d: only %d rows received; expected more for expert %d (row "
                             "%d: from team PE %d, token %d, slot %d)", L, lay->n_rows, e, r, j, t,
                             s);
                        return 0;
                    }
                    if (lay->src_pe[r] != j || lay->src_token[r] != t || lay->src_slot[r] != s) {
                        FAIL("layer %d: row %d (expert %d) says it came from team PE %d token %d "
                             "slot %d, expected PE %d token %d slot %d", L, r, e, lay->src_pe[r],
                             lay->src_token[r], lay->src_slot[r], j, t, s);
                        return 0;
                    }
                    const float *want = all[j].x + (size_t)t * c->H, *got = recv + (size_t)r * c->H;
                    for (int h = 0; h < c->H; h++)
                        if (got[h] != want[h]) {
                            FAIL("layer %d: row %d (expert %d, from team PE %d (world %d) token "
                                 "%d slot %d), element %d is %g, expected %g", L, r, e, j,
                                 world[j], t, s, h, (double)got[h], (double)want[h]);
                            return 0;
                        }
                    r++;
                }
        if (lay->expert_count[l] != r - start) {
            FAIL("layer %d: expert %d: expert_count says %d rows, expected %d", L, e,
                 lay->expert_count[l], r - start);
            return 0;
        }
    }
    if (lay->n_rows != r || lay->expert_offset[end - first] != r) {
        FAIL("layer %d: %d rows received (offset end %d), expected %d", L, lay->n_rows,
             lay->expert_offset[end - first], r);
        return 0;
    }
    return 1;
}

/* The combined result of my tokens: the reference sum in slot order, bit for bit. With exact
 * values (the default) it must also equal x times the sum of the weights (identity experts).
 * With inexact ones only the same order of additions gives the same bits. */
static int check_y(const struct moe_case *c, int L, const struct tokens *mine, const float *y)
{
    for (int t = 0; t < mine->T; t++) {
        float sumw = 0;
        for (int s = 0; s < c->k; s++)
            if (mine->idx[(size_t)t * c->k + s] >= 0)
                sumw += mine->w[(size_t)t * c->k + s];
        for (int h = 0; h < c->H; h++) {
            float x = mine->x[(size_t)t * c->H + h], want = 0;
            for (int s = 0; s < c->k; s++) {
                int e = mine->idx[(size_t)t * c->k + s];
                if (e >= 0)
                    want += mine->w[(size_t)t * c->k + s] * (x * expert_scale(c, e));
            }
            float got = y[(size_t)t * c->H + h];
            if (got != want || (!c->scale && !c->inexact && got != x * sumw)) {
                /* Off by a rounding only: the terms are right, their order is not. */
                double off = fabs((double)got - (double)want), tol = 1e-5 * fabs((double)want);
                FAIL("layer %d: y[token %d][%d] is %.9g, expected %.9g (x = %.9g, experts %d..., "
                     "weights summing to %g)%s", L, t, h, (double)got, (double)want, (double)x,
                     mine->idx[(size_t)t * c->k], (double)sumw,
                     off > 0 && off <= tol ? ": the same up to rounding, so the terms are right "
                                             "but their order is not: add weight x output for "
                                             "slot 0, then 1, ... k-1"
                                           : "");
                return 0;
            }
        }
    }
    return 1;
}

static struct moe_case parse_case(int argc, char **argv)
{
    struct moe_case c = {8, 2, 16, 32, 3, "uniform", 0, 0, 0, "world"};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "E=", 2)) c.E = atoi(a + 2);
        else if (!strncmp(a, "k=", 2)) c.k = atoi(a + 2);
        else if (!strncmp(a, "H=", 2)) c.H = atoi(a + 2);
        else if (!strncmp(a, "T=", 2)) c.T = atoi(a + 2);
        else if (!strncmp(a, "layers=", 7)) c.layers = atoi(a + 7);
        else if (!strncmp(a, "route=", 6)) c.route = a + 6;
        else if (!strcmp(a, "scale")) c.scale = 1;
        else if (!strcmp(a, "inexact")) c.inexact = 1;
        else if (!strncmp(a, "tzero=", 6)) /* "1,3": these world PEs pass no tokens */
            for (const char *p = a + 6; *p; p += *p == ',')
                c.tzero |= 1u << strtol(p, (char **)&p, 10);
        else if (!strncmp(a, "team=", 5)) c.team = a + 5;
    }
    return c;
}

/* moe E=.. k=.. H=.. T=.. layers=.. route=uniform|skewed|holes [scale] [tzero=1,3] [team=..] */
static void moe(int argc, char **argv)
{
    struct moe_case c = parse_case(argc, argv);
    pe_init();
    struct team_setup ts = make_team(c.team);
    tshmem_moe_config_t cfg = {c.E, c.H, c.k, c.T};
    tshmem_moe_t *m = tshmem_moe_create(ts.team, &cfg); /* INVALID outside a split team */
    if (ts.me < 0) { /* outside the split team: take part in create and destroy only */
        tshmem_moe_destroy(m);
        pe_sync();
        tshmem_finalize();
        return;
    }
    int n = ts.n, me = ts.me, world[256];
    for (int j = 0; j < n; j++)
        world[j] = world_of(&ts, j);
    for (int e = 0; e < c.E; e++)
        if (tshmem_moe_expert_pe(m, e) != owner(c.E, n, e)) {
            FAIL("tshmem_moe_expert_pe(expert %d) is %d, expected team PE %d (E %d over %d PEs)",
                 e, tshmem_moe_expert_pe(m, e), owner(c.E, n, e), c.E, n);
            return;
        }
    float *out = malloc(sizeof(float) * ((size_t)n * c.T * c.k * c.H + 1));
    float *y = malloc(sizeof(float) * ((size_t)c.T * c.H + 1));
    struct tokens all[256];
    srand(4242u + (unsigned)me);
    for (int L = 1; L <= c.layers; L++) {
        for (int j = 0; j < n; j++)
            gen(&c, n, j, world[j], L, &all[j]);
        if (rand() % 6 == 0)
            usleep((useconds_t)(rand() % 500));
        STEP("layer %d: dispatch of %d tokens", L, all[me].T);
        float *recv = NULL;
        tshmem_moe_layout_t lay;
        tshmem_moe_dispatch(m, all[me].x, all[me].T, c.k, all[me].idx, all[me].w, &recv, &lay);
        if (!check_recv(&c, n, me, world, L, all, recv, &lay))
            return;
        /* The experts: in place in the receive buffer on odd layers, into our own on even. */
        float *eo = L % 2 ? recv : out;
        for (int l = 0; l < lay.n_local_experts; l++)
            for (int r = lay.expert_offset[l]; r < lay.expert_offset[l + 1]; r++)
                for (int h = 0; h < c.H; h++)
                    eo[(size_t)r * c.H + h] = recv[(size_t)r * c.H + h] *
                                              expert_scale(&c, lay.first_expert + l);
        if (rand() % 6 == 0)
            usleep((useconds_t)(rand() % 500));
        STEP("layer %d: combine of %d rows", L, lay.n_rows);
        memset(y, 0xff, sizeof(float) * ((size_t)c.T * c.H + 1));
        tshmem_moe_combine(m, eo, y);
        if (!check_y(&c, L, &all[me], y))
            return;
        for (int j = 0; j < n; j++)
            tokens_free(&all[j]);
    }
    free(out), free(y);
    tshmem_moe_destroy(m);
    pe_sync();
    tshmem_finalize();
}

/* moe_bad KIND: one wrong call; the runtime must stop it with a clear message. */
static void moe_bad(int argc, char **argv)
{
    const char *kind = argc > 2 ? argv[2] : "expert";
    pe_init();
    int me = tshmem_my_pe();
    tshmem_moe_config_t cfg = {8, 4, 2, 4};
    if (strcmp(kind, "config") == 0 && me == 1)
        cfg.hidden = 5;
    if (strcmp(kind, "heap") == 0)
        cfg.max_tokens = 1 << 20;
    if (strcmp(kind, "topk_config") == 0)
        cfg.top_k = 9;
    tshmem_moe_t *m = tshmem_moe_create(TSHMEM_TEAM_WORLD, &cfg);
    if (strcmp(kind, "config") == 0)
        tshmem_barrier_all(); /* PE 0 waits here until PE 1's create stops the job */
    float x[4 * 4] = {0}, w[4 * 2] = {0}, *recv;
    int idx[4 * 2] = {0, 1, 2, 3, 4, 5, 6, 7};
    tshmem_moe_layout_t lay;
    if (strcmp(kind, "expert") == 0) {
        if (me == 1)
            idx[3 * 2 + 1] = 8; /* token 3, slot 1 */
        tshmem_moe_dispatch(m, x, 4, 2, idx, w, &recv, &lay);
    } else if (strcmp(kind, "negative") == 0) {
        idx[2 * 2] = -2; /* token 2, slot 0 */
        tshmem_moe_dispatch(m, x, 4, 2, idx, w, &recv, &lay);
    } else if (strcmp(kind, "tokens") == 0)
        tshmem_moe_dispatch(m, x, 5, 2, idx, w, &recv, &lay);
    else if (strcmp(kind, "topk") == 0)
        tshmem_moe_dispatch(m, x, 4, 3, idx, w, &recv, &lay);
    else if (strcmp(kind, "combine_first") == 0)
        tshmem_moe_combine(m, x, x);
    else if (strcmp(kind, "handle") == 0)
        tshmem_moe_dispatch(NULL, x, 4, 2, idx, w, &recv, &lay);
    FAIL("bad arguments (%s) were accepted", kind);
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"alltoall", alltoall},
        {"alltoall_back_to_back", alltoall_back_to_back},
        {"oneshot_alltoall", oneshot_alltoall},
        {"oneshot_back_to_back", oneshot_back_to_back},
        {"direct_alltoall", direct_alltoall},
        {"direct_back_to_back", direct_back_to_back},
        {"alltoall_bad", alltoall_bad},
        {"moe", moe},
        {"moe_bad", moe_bad},
        {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
