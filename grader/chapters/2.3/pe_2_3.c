/* pe_2_3.c: the PE side of chapter 2.3's tests: fcollect and broadcast, every algorithm.
 *
 * Scenarios take the algorithm (ring, direct, hybrid, oneshot, auto; fcollect and broadcast take
 * a list of them too, "ring,direct", run in turn), the team (world, node) and a list of sizes.
 * Every PE fills its input with pattern(world PE, byte, round), fills the rest of dest with a
 * sentinel, calls the collective with no barrier around it, and checks every byte
 * it then holds, the bytes just past dest, and that the source is unchanged. A PE whose check
 * fails exits at once (non-zero): the launcher then stops the PEs that would wait for it
 * forever, and the failure is reported in seconds instead of as a hang.
 */
#include "pe_test.h"
#include "tshmem_internal.h" /* tshmem_collect_test_groups */

#define SENTINEL 0xA5
#define GUARD 64 /* bytes after dest that no call may touch */

struct setup {
    const char *algo_name, *team_name;
    enum tshmem_algo algo;
    tshmem_team_t team;
    int me, n; /* in the team */
};

static enum tshmem_algo parse_algo(const char *name)
{
    if (strcmp(name, "ring") == 0)
        return TSHMEM_ALGO_RING;
    if (strcmp(name, "direct") == 0)
        return TSHMEM_ALGO_DIRECT;
    if (strcmp(name, "hybrid") == 0)
        return TSHMEM_ALGO_HYBRID;
    if (strcmp(name, "oneshot") == 0)
        return TSHMEM_ALGO_ONESHOT; /* fcollect only: broadcasts then take the selector's choice */
    return TSHMEM_ALGO_AUTO;
}

/* argv: scenario ALGO TEAM ... [groups=K]. groups=K makes the hybrid treat the team as split
 * into nodes (tshmem_collect_test_groups): its leaders' ring and pulls run on one machine. */
static struct setup setup(int argc, char **argv)
{
    struct setup s = {argc > 2 ? argv[2] : "auto", argc > 3 ? argv[3] : "world",
                      TSHMEM_ALGO_AUTO, TSHMEM_TEAM_WORLD, 0, 0};
    s.algo = parse_algo(s.algo_name);
    s.team = strcmp(s.team_name, "node") == 0 ? TSHMEM_TEAM_NODE : TSHMEM_TEAM_WORLD;
    pe_init();
    for (int i = 4; i < argc; i++)
        if (strncmp(argv[i], "groups=", 7) == 0)
            tshmem_collect_test_groups = atoi(argv[i] + 7);
    s.me = tshmem_team_my_pe(s.team);
    s.n = tshmem_team_n_pes(s.team);
    return s;
}

/* "0,1,7,1023" -> sizes; returns how many. */
static int parse_sizes(const char *list, size_t *sizes, int cap)
{
    int n = 0;
    for (const char *p = list; *p && n < cap;) {
        char *end;
        sizes[n++] = strtoull(p, &end, 10);
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

static int world_of(const struct setup *s, int team_pe)
{
    return tshmem_team_translate_pe(s->team, team_pe, TSHMEM_TEAM_WORLD);
}

static void fill(unsigned char *buf, size_t size, int src, int r)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = pattern(src, i, r);
}

/* Checks size bytes of buf against PE src's pattern; says which byte first differs. */
static int check_block(const unsigned char *buf, size_t size, int src, int r, const char *what)
{
    size_t bad = 0, first = size;
    for (size_t i = 0; i < size; i++)
        if (buf[i] != pattern(src, i, r)) {
            if (first == size)
                first = i;
            bad++;
        }
    if (bad)
        FAIL("%s: byte %zu is 0x%02x, expected 0x%02x (%zu of %zu bytes wrong)", what, first,
             buf[first], pattern(src, first, r), bad, size);
    return bad == 0;
}

static int check_guard(const unsigned char *after, const char *what)
{
    for (int i = 0; i < GUARD; i++)
        if (after[i] != SENTINEL) {
            FAIL("%s: the call wrote past the end of dest: byte %d after it is 0x%02x, expected "
                 "it untouched (0x%02x)", what, i, after[i], SENTINEL);
            return 0;
        }
    return 1;
}

/* One fcollect of `size` bytes per PE in round r; returns 1 if this PE's view is right. */
static int one_fcollect(const struct setup *s, unsigned char *dest, unsigned char *src, size_t size,
                        int in_place, int r)
{
    int mine = world_of(s, s->me);
    memset(dest, SENTINEL, size * (size_t)s->n + GUARD);
    unsigned char *source = in_place ? dest + (size_t)s->me * size : src;
    fill(source, size, mine, r);
    int rc = s->algo == TSHMEM_ALGO_AUTO ? tshmem_fcollectmem(s->team, dest, source, size)
                                         : tshmem_fcollectmem_algo(s->team, dest, source, size,
                                                                   s->algo);
    char what[200];
    snprintf(what, sizeof what, "round %d, fcollect %s on team %s, %zu bytes per PE%s", r,
             s->algo_name, s->team_name, size, in_place ? ", in place" : "");
    if (rc != 0) {
        FAIL("%s: returned %d, expected 0", what, rc);
        return 0;
    }
    int ok = 1;
    for (int j = 0; j < s->n; j++) {
        char block[300];
        snprintf(block, sizeof block, "%s: block %d (from team PE %d, world PE %d)", what, j, j,
                 world_of(s, j));
        ok &= check_block(dest + (size_t)j * size, size, world_of(s, j), r, block);
    }
    ok &= check_guard(dest + (size_t)s->n * size, what);
    if (!in_place) {
        char sw[260];
        snprintf(sw, sizeof sw, "%s: my source after the call", what);
        ok &= check_block(src, size, mine, r, sw);
    }
    return ok;
}

/* One broadcast from team PE root in round r. */
static int one_broadcast(const struct setup *s, unsigned char *dest, unsigned char *src,
                         size_t size, int root, int in_place, int r)
{
    int from = world_of(s, root);
    memset(dest, SENTINEL, size + GUARD);
    unsigned char *source = in_place ? dest : src;
    if (s->me == root)
        fill(source, size, from, r);
    else if (!in_place)
        memset(src, 0x5A, size); /* a non-root's source is not read */
    int rc = s->algo == TSHMEM_ALGO_AUTO || s->algo == TSHMEM_ALGO_ONESHOT
                 ? tshmem_broadcastmem(s->team, dest, source, size, root)
                 : tshmem_broadcastmem_algo(s->team, dest, source, size, root, s->algo);
    char what[260];
    snprintf(what, sizeof what, "round %d, broadcast %s on team %s from team PE %d (world PE %d), "
             "%zu bytes%s", r, s->algo_name, s->team_name, root, from, size,
             in_place ? ", in place" : "");
    if (rc != 0) {
        FAIL("%s: returned %d, expected 0", what, rc);
        return 0;
    }
    char dw[300];
    snprintf(dw, sizeof dw, "%s: my dest", what);
    int ok = check_block(dest, size, from, r, dw);
    ok &= check_guard(dest + size, what);
    if (s->me == root && !in_place) {
        snprintf(dw, sizeof dw, "%s: the root's source after the call", what);
        ok &= check_block(src, size, from, r, dw);
    }
    return ok;
}

/* ALGO may name several algorithms ("ring,direct"): the scenario runs with each in turn. */
enum { MAX_ALGOS = 8 };

/* fcollect ALGO TEAM SIZES: each size, out of place and in place. */
static void fcollect(int argc, char **argv)
{
    size_t sizes[16], max = 0;
    int ns = parse_sizes(argc > 4 ? argv[4] : "0,1,7,1023", sizes, 16);
    struct setup s = setup(argc, argv);
    const char *names[MAX_ALGOS];
    int n_names = pe_names(s.algo_name, names, MAX_ALGOS);
    for (int i = 0; i < ns; i++)
        max = sizes[i] > max ? sizes[i] : max;
    /* The same size on every PE (tshmem_malloc is collective; node teams may differ in size). */
    unsigned char *dest = tshmem_malloc(max * (size_t)tshmem_n_pes() + GUARD),
                  *src = tshmem_malloc(max + 1);
    int r = 0;
    for (int a = 0; a < n_names; a++) {
        s.algo_name = names[a];
        s.algo = parse_algo(names[a]);
        for (int i = 0; i < ns; i++)
            for (int in_place = 0; in_place < 2; in_place++) {
                STEP("fcollect %s, %zu bytes per PE%s", s.algo_name, sizes[i],
                     in_place ? ", in place" : "");
                if (!one_fcollect(&s, dest, src, sizes[i], in_place, ++r))
                    return; /* exit now: the launcher stops the PEs still waiting for us */
            }
    }
    pe_sync();
    tshmem_finalize();
}

/* broadcast ALGO TEAM SIZES: each size from every root, out of place and in place. */
static void broadcast(int argc, char **argv)
{
    size_t sizes[16], max = 0;
    int ns = parse_sizes(argc > 4 ? argv[4] : "0,1,7,1023", sizes, 16);
    struct setup s = setup(argc, argv);
    const char *names[MAX_ALGOS];
    int n_names = pe_names(s.algo_name, names, MAX_ALGOS);
    for (int i = 0; i < ns; i++)
        max = sizes[i] > max ? sizes[i] : max;
    unsigned char *dest = tshmem_malloc(max + GUARD), *src = tshmem_malloc(max + 1);
    int r = 0;
    for (int a = 0; a < n_names; a++) {
        s.algo_name = names[a];
        s.algo = parse_algo(names[a]);
        for (int i = 0; i < ns; i++)
            for (int root = 0; root < s.n; root++)
                for (int in_place = 0; in_place < 2; in_place++) {
                    STEP("broadcast %s, %zu bytes from team PE %d%s", s.algo_name, sizes[i],
                         root, in_place ? ", in place" : "");
                    if (!one_broadcast(&s, dest, src, sizes[i], root, in_place, ++r))
                        return;
                }
    }
    pe_sync();
    tshmem_finalize();
}

/* back_to_back ALGO TEAM CALLS: fcollect and broadcast in turn, sizes and roots changing, no
 * barrier between calls, a PE now and then late: whoever runs ahead must not touch a dest
 * that its owner is still checking, nor mistake an old flag for a new one. */
static void back_to_back(int argc, char **argv)
{
    static const size_t sizes[] = {1, 7, 1023, 0, 4096, 3, 70001, 64, 1};
    enum { N_SIZES = sizeof sizes / sizeof sizes[0], MAX = 70001 };
    int calls = argc > 4 ? atoi(argv[4]) : 1000;
    struct setup s = setup(argc, argv);
    /* Room for the team's blocks, the same size on every PE (tshmem_malloc is collective; node
     * teams may differ in size): every PE allocates for the whole job. */
    unsigned char *dest = tshmem_malloc(MAX * (size_t)tshmem_n_pes() + GUARD),
                  *src = tshmem_malloc(MAX + 1);
    srand(1234u + (unsigned)s.me);
    for (int c = 1; c <= calls; c++) {
        size_t size = sizes[(size_t)c % N_SIZES];
        if (c % 250 == 0)
            STEP("call %d of %d", c, calls);
        if (rand() % 16 == 0) /* late now and then: the others run ahead into this call */
            usleep((useconds_t)(rand() % 300));
        int ok = c % 3 == 0 ? one_broadcast(&s, dest, src, size, (c / 3) % s.n, c % 2, c)
                            : one_fcollect(&s, dest, src, size, c % 5 == 0, c);
        if (!ok)
            return;
    }
    pe_sync();
    tshmem_finalize();
}

/* two_teams ALGO: WORLD and NODE calls in turn on the same buffers. Without virtual nodes the
 * two teams have the same PEs but separate flags, numbers and credits. */
static void two_teams(int argc, char **argv)
{
    int calls = argc > 4 ? atoi(argv[4]) : 300;
    struct setup w = setup(argc, argv), node = w;
    node.team = TSHMEM_TEAM_NODE;
    node.team_name = "node";
    node.me = tshmem_team_my_pe(node.team);
    node.n = tshmem_team_n_pes(node.team);
    w.team_name = "world";
    size_t max = 5000;
    unsigned char *dest = tshmem_malloc(max * (size_t)w.n + GUARD), *src = tshmem_malloc(max + 1);
    for (int c = 1; c <= calls; c++) {
        const struct setup *s = c % 2 ? &w : &node;
        size_t size = (size_t)(c * 37) % max;
        int ok = c % 4 < 2 ? one_fcollect(s, dest, src, size, c % 3 == 0, c)
                           : one_broadcast(s, dest, src, size, c % s->n, c % 3 == 0, c);
        if (!ok)
            return;
    }
    pe_sync();
    tshmem_finalize();
}

/* bad_args KIND: one wrong call; the runtime must stop it with a clear message. */
static void bad_args(int argc, char **argv)
{
    const char *kind = argc > 2 ? argv[2] : "team";
    pe_init();
    int n = tshmem_n_pes();
    char *dest = tshmem_malloc(4096), *src = tshmem_malloc(4096), local[64];
    if (strcmp(kind, "team") == 0)
        tshmem_fcollectmem(7, dest, src, 8);
    else if (strcmp(kind, "broadcast_team") == 0)
        tshmem_broadcastmem(TSHMEM_TEAM_INVALID, dest, src, 8, 0);
    else if (strcmp(kind, "root") == 0)
        tshmem_broadcastmem(TSHMEM_TEAM_WORLD, dest, src, 8, n);
    else if (strcmp(kind, "negative_root") == 0)
        tshmem_broadcastmem_algo(TSHMEM_TEAM_WORLD, dest, src, 8, -1, TSHMEM_ALGO_RING);
    else if (strcmp(kind, "dest") == 0)
        tshmem_fcollectmem(TSHMEM_TEAM_WORLD, local, src, 8);
    else if (strcmp(kind, "broadcast_dest") == 0)
        tshmem_broadcastmem(TSHMEM_TEAM_WORLD, local, src, 8, 0);
    else if (strcmp(kind, "small") == 0)
        tshmem_fcollectmem(TSHMEM_TEAM_WORLD, dest, src, 4096 / (size_t)n + 300);
    else if (strcmp(kind, "source") == 0)
        tshmem_broadcastmem(TSHMEM_TEAM_WORLD, dest, local, 8, 0);
    else if (strcmp(kind, "overlap") == 0)
        tshmem_fcollectmem(TSHMEM_TEAM_WORLD, dest, dest + 1, 8);
    else if (strcmp(kind, "algo") == 0)
        tshmem_fcollectmem_algo(TSHMEM_TEAM_WORLD, dest, src, 8, (enum tshmem_algo)99);
    else if (strcmp(kind, "oneshot_across") == 0) /* run with TSHMEM_PES_PER_NODE=1 */
        tshmem_fcollectmem_algo(TSHMEM_TEAM_WORLD, dest, src, 8, TSHMEM_ALGO_ONESHOT);
    else if (strcmp(kind, "broadcast_algo") == 0)
        tshmem_broadcastmem_algo(TSHMEM_TEAM_WORLD, dest, src, 8, 0,
                                 TSHMEM_ALGO_RECURSIVE_DOUBLING);
    FAIL("bad arguments (%s) were accepted", kind);
}

/* mismatch fcollect|broadcast: a call every PE makes alike, then one whose arguments differ:
 * fcollect with 16 bytes on PE 0 and 4096 on the others, or a broadcast where each PE names
 * itself as the root. Every buffer has room for the largest. */
static void mismatch(int argc, char **argv)
{
    int bcast = argc > 2 && strcmp(argv[2], "broadcast") == 0;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    char *dest = tshmem_malloc(4096 * (size_t)n), *src = tshmem_malloc(4096);
    memset(src, me + 1, 4096);
    if (bcast) {
        tshmem_broadcastmem(TSHMEM_TEAM_WORLD, dest, src, 64, 0);
        CHECK(dest[63] == 1, "the first broadcast from PE 0 gave %d at [63], expected 1", dest[63]);
        STEP("broadcast with pe_root = my own number");
        tshmem_broadcastmem(TSHMEM_TEAM_WORLD, dest, src, 64, me);
    } else {
        tshmem_fcollectmem(TSHMEM_TEAM_WORLD, dest, src, 16);
        CHECK(dest[16 * n - 1] == n, "the first fcollect gave %d in the last block, expected %d",
              dest[16 * n - 1], n);
        STEP("fcollect of %d bytes (PE 0: 16, the others 4096)", me == 0 ? 16 : 4096);
        tshmem_fcollectmem(TSHMEM_TEAM_WORLD, dest, src, me == 0 ? 16 : 4096);
    }
    FAIL("a %s whose arguments differ between PEs returned", bcast ? "broadcast" : "fcollect");
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"fcollect", fcollect}, {"broadcast", broadcast}, {"back_to_back", back_to_back},
        {"two_teams", two_teams}, {"bad_args", bad_args}, {"mismatch", mismatch},
        {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
