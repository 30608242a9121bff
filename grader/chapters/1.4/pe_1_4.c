/* pe_1_4.c: the PE side of chapter 1.4's tests: signals, waits, atomics, barriers. */
#include "pe_test.h"

/* The tests of signals and waits (signal_visibility, signal_add_set, compare) wait for the PEs
 * with pe_sync (MPI_Barrier), not tshmem_barrier_all, and set words with signals, not atomics:
 * they pass as soon as signals and waits are written, before atomics and the barrier, in the
 * order the page gives the tasks. */

/* Ring: PE i sends rounds of data with put_signal to PE i+1, which checks that whenever it
 * sees the signal it sees the data. Acks flow back so data is never overwritten unread. */
static void signal_visibility(int argc, char **argv)
{
    (void)argc, (void)argv;
    enum { ROUNDS = 3000, WORDS = 32 };
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    uint64_t *data = tshmem_calloc(WORDS, sizeof(uint64_t));
    uint64_t *sig = tshmem_calloc(1, sizeof(uint64_t)), *ack = tshmem_calloc(1, sizeof(uint64_t));
    uint64_t out[WORDS];
    for (uint64_t r = 1; r <= ROUNDS; r++) {
        tshmem_uint64_wait_until(ack, TSHMEM_CMP_GE, r - 1);
        for (int w = 0; w < WORDS; w++)
            out[w] = r * 7919 + (uint64_t)w;
        if (r % 2)
            tshmem_putmem_signal(data, out, sizeof out, sig, r, TSHMEM_SIGNAL_SET, next);
        else
            tshmem_putmem_signal_nbi(data, out, sizeof out, sig, r, TSHMEM_SIGNAL_SET, next);
        uint64_t seen = tshmem_signal_wait_until(sig, TSHMEM_CMP_GE, r);
        CHECK_OR_STOP(seen == r, "round %llu: signal_wait_until returned %llu, expected %llu",
                      (unsigned long long)r, (unsigned long long)seen, (unsigned long long)r);
        for (int w = 0; w < WORDS; w++)
            CHECK_OR_STOP(data[w] == r * 7919 + (uint64_t)w, "round %llu: the signal from PE %d "
                          "arrived but data word %d is stale (%llu): the signal must be released "
                          "after the data", (unsigned long long)r, prev, w,
                          (unsigned long long)data[w]);
        tshmem_signal_op(ack, r, TSHMEM_SIGNAL_SET, prev);
    }
    pe_sync();
    tshmem_finalize();
}

/* Every PE adds to PE 0's signal K times; PE 0 waits for the exact total. */
static void signal_add_set(int argc, char **argv)
{
    (void)argc, (void)argv;
    enum { K = 500 };
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    uint64_t *sig = tshmem_calloc(1, sizeof(uint64_t)), *word = tshmem_calloc(1, sizeof(uint64_t));
    char *data = tshmem_calloc((size_t)n, 1);
    char mine = (char)(me + 1);
    for (int k = 0; k < K; k++) {
        if (k == K / 2)
            tshmem_putmem_signal(data + me, &mine, 1, sig, 1, TSHMEM_SIGNAL_ADD, 0);
        else
            tshmem_signal_op(sig, 1, TSHMEM_SIGNAL_ADD, 0);
    }
    /* After the barrier every PE's K signals are complete (on one node a signal is complete when
     * its call returns): the total is read once, so that a signal that overwrites instead of
     * adding shows as a wrong total, not as a wait that never ends. */
    pe_sync();
    if (me == 0) {
        uint64_t total = tshmem_signal_fetch(sig);
        CHECK(total == (uint64_t)n * K, "signal total %llu after %d PEs each signalled "
              "TSHMEM_SIGNAL_ADD of 1 %d times, expected %llu: does ADD add, atomically?",
              (unsigned long long)total, n, K, (unsigned long long)n * K);
        for (int pe = 0; pe < n; pe++)
            CHECK(data[pe] == pe + 1, "put_signal ADD from PE %d: data byte is %d, expected %d",
                  pe, data[pe], pe + 1);
    }
    pe_sync();
    tshmem_signal_op(word, 40 + (uint64_t)me, TSHMEM_SIGNAL_SET, (me + 1) % n);
    pe_sync();
    uint64_t got = tshmem_signal_fetch(word);
    CHECK(got == 40 + (uint64_t)((me + n - 1) % n), "SIGNAL_SET from PE %d: fetched %llu, expected "
          "%d", (me + n - 1) % n, (unsigned long long)got, 40 + (me + n - 1) % n);
    pe_sync();
    tshmem_finalize();
}

static const char *cmp_name[] = {"EQ", "NE", "GT", "GE", "LT", "LE"};

/* Every comparison against values below, at and above the word's value. */
static void compare(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    uint64_t *w = tshmem_calloc(1, sizeof(uint64_t)), *late = tshmem_calloc(1, sizeof(uint64_t));
    tshmem_signal_op(w, 5, TSHMEM_SIGNAL_SET, me);
    static const int truth[6][3] = {/* vs 4, 5, 6 */
                                    {0, 1, 0}, {1, 0, 1}, {1, 0, 0},
                                    {1, 1, 0}, {0, 0, 1}, {0, 1, 1}};
    for (int cmp = TSHMEM_CMP_EQ; cmp <= TSHMEM_CMP_LE; cmp++)
        for (int v = 0; v < 3; v++) {
            int got = tshmem_uint64_test(w, cmp, (uint64_t)(4 + v));
            CHECK(got == truth[cmp][v], "tshmem_uint64_test(5 %s %d) = %d, expected %d",
                  cmp_name[cmp], 4 + v, got, truth[cmp][v]);
            if (truth[cmp][v]) {
                tshmem_uint64_wait_until(w, cmp, (uint64_t)(4 + v));
                uint64_t s = tshmem_signal_wait_until(w, cmp, (uint64_t)(4 + v));
                CHECK(s == 5, "signal_wait_until(%s %d) returned %llu, expected 5", cmp_name[cmp],
                      4 + v, (unsigned long long)s);
            }
        }
    /* A wait that must really wait: the previous PE sets our word a little later. */
    pe_sync();
    if (n > 1) {
        usleep(20000);
        tshmem_signal_op(late, 11 + (uint64_t)me, TSHMEM_SIGNAL_SET, (me + 1) % n);
        uint64_t s = tshmem_signal_wait_until(late, TSHMEM_CMP_GT, 10);
        CHECK(s == 11 + (uint64_t)((me + n - 1) % n), "signal_wait_until(GT 10) returned %llu",
              (unsigned long long)s);
    }
    pe_sync();
    tshmem_finalize();
}

static void atomics(int argc, char **argv)
{
    (void)argc, (void)argv;
    enum { K = 1000 };
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    uint64_t *ctr = tshmem_calloc(1, sizeof(uint64_t)), *word = tshmem_calloc(1, sizeof(uint64_t));
    uint64_t *olds = malloc(sizeof(uint64_t) * K), *all = malloc(sizeof(uint64_t) * K * (size_t)n);
    for (int k = 0; k < K; k++)
        olds[k] = tshmem_uint64_atomic_fetch_add(ctr, 1, 0);
    for (int k = 0; k < K; k++)
        tshmem_uint64_atomic_add(ctr, 2, 0);
    tshmem_barrier_all();
    uint64_t total = tshmem_uint64_atomic_fetch(ctr, 0);
    CHECK(total == (uint64_t)n * K * 3, "after %d PEs each did %d fetch_add(1) and %d add(2), the "
          "counter is %llu, expected %llu", n, K, K, (unsigned long long)total,
          (unsigned long long)n * K * 3);
    /* The values fetch_add returned: each of 0 .. n*K*3 at most once (adds interleave). */
    MPI_Gather(olds, K, MPI_UINT64_T, all, K, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (me == 0) {
        char *seen = calloc((size_t)n * K * 3, 1);
        for (int i = 0; i < n * K; i++) {
            CHECK_OR_STOP(all[i] < (uint64_t)n * K * 3 && !seen[all[i]],
                          "fetch_add returned %llu twice or out of range: two PEs got the same "
                          "ticket", (unsigned long long)all[i]);
            seen[all[i]] = 1;
        }
        free(seen);
    }
    /* compare_swap elects exactly one winner, round after round. */
    for (uint64_t r = 0; r < 200; r++) {
        uint64_t old = tshmem_uint64_atomic_compare_swap(word, r, r + 1, 0);
        int won = old == r, winners = 0;
        MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK_OR_STOP(winners == 1, "compare_swap round %llu: %d PEs won, expected exactly 1",
                      (unsigned long long)r, winners);
    }
    tshmem_barrier_all();
    uint64_t old = tshmem_uint64_atomic_swap(word, 1000 + (uint64_t)me, (me + 1) % n);
    tshmem_barrier_all();
    uint64_t mine = tshmem_uint64_atomic_fetch(word, me);
    CHECK(mine >= 1000 && mine < 1000 + (uint64_t)n, "after swaps my word is %llu",
          (unsigned long long)mine);
    (void)old;
    tshmem_barrier_all(); /* everyone has read its word before anyone sets it again */
    tshmem_uint64_atomic_set(word, 77, (me + 1) % n);
    tshmem_barrier_all();
    CHECK(*word == 77, "atomic_set from PE %d: word is %llu, expected 77", (me + n - 1) % n,
          (unsigned long long)*word);
    tshmem_barrier_all();
    free(olds);
    free(all);
    tshmem_finalize();
}

/* Each round every PE writes the round number into its slot on every PE of the team, then a
 * barrier; after it every slot must hold this round, and a second barrier keeps the next
 * round's writes out until everyone has checked. */
static void phases(int argc, char **argv)
{
    const char *kind = argc > 2 ? argv[2] : "barrier_all";
    int rounds = argc > 3 ? atoi(argv[3]) : 1000;
    pe_init();
    tshmem_team_t team = strcmp(kind, "node") == 0 ? TSHMEM_TEAM_NODE : TSHMEM_TEAM_WORLD;
    int me = tshmem_team_my_pe(team), n = tshmem_team_n_pes(team);
    uint64_t *slot = tshmem_calloc((size_t)tshmem_n_pes(), sizeof(uint64_t));
    for (uint64_t r = 1; r <= (uint64_t)rounds; r++) {
        if (r % 500 == 0)
            STEP("round %llu", (unsigned long long)r);
        for (int k = 0; k < n; k++)
            tshmem_uint64_p(&slot[me], r, tshmem_team_translate_pe(team, k, TSHMEM_TEAM_WORLD));
        for (int pass = 0; pass < 2; pass++) {
            if (strcmp(kind, "sync_all") == 0) {
                tshmem_quiet();
                tshmem_sync_all();
            } else if (strcmp(kind, "barrier_all") == 0) {
                tshmem_barrier_all();
            } else if (pass == 0) {
                tshmem_barrier(team);
            } else {
                tshmem_quiet();
                tshmem_team_sync(team);
            }
            if (pass == 1)
                break;
            for (int k = 0; k < n; k++)
                CHECK_OR_STOP(slot[k] == r, "round %llu of %s: team PE %d's write is %llu, not "
                              "yet %llu, after the barrier", (unsigned long long)r, kind, k,
                              (unsigned long long)slot[k], (unsigned long long)r);
        }
    }
    pe_sync(); /* not barrier_all: with virtual nodes the world spans nodes (chapter 2.5) */
    tshmem_finalize();
}

static void bad_args(int argc, char **argv)
{
    pe_init();
    uint64_t *w = tshmem_calloc(1, sizeof(uint64_t));
    if (argc > 2 && strcmp(argv[2], "cmp") == 0)
        tshmem_uint64_wait_until(w, 99, 0);
    else
        tshmem_signal_op(w, 1, 7, 0);
    FAIL("a bad comparison or signal operation was accepted");
}

/* reserved signal|atomic|wait: a signal and an atomic that work, then the same call at a word
 * of the runtime's reserved area, the 2 MiB before the first tshmem_malloc block. */
static void reserved(int argc, char **argv)
{
    const char *what = argc > 2 ? argv[2] : "signal";
    pe_init();
    int me = tshmem_my_pe(), peer = (me + 1) % tshmem_n_pes();
    uint64_t *w = tshmem_calloc(1, sizeof(uint64_t));
    tshmem_signal_op(w, 1, TSHMEM_SIGNAL_ADD, peer);
    tshmem_uint64_atomic_add(w, 1, peer);
    tshmem_uint64_wait_until(w, TSHMEM_CMP_GE, 2);
    tshmem_barrier_all();
    uint64_t *flag = (uint64_t *)(void *)((char *)w - (2u << 20)); /* a barrier flag */
    STEP("%s at the reserved area", what);
    if (strcmp(what, "atomic") == 0)
        tshmem_uint64_atomic_add(flag, 1, peer);
    else if (strcmp(what, "wait") == 0)
        tshmem_uint64_wait_until(flag, TSHMEM_CMP_GE, 0);
    else
        tshmem_signal_op(flag, ~(uint64_t)0, TSHMEM_SIGNAL_SET, peer);
    FAIL("%s at a barrier flag of the runtime's reserved area returned instead of stopping", what);
}

/* unaligned atomic|signal: an atomic that works, then one at a word 3 bytes into a block. */
static void unaligned(int argc, char **argv)
{
    int signal = argc > 2 && strcmp(argv[2], "signal") == 0;
    pe_init();
    int peer = (tshmem_my_pe() + 1) % tshmem_n_pes();
    char *buf = tshmem_calloc(4, sizeof(uint64_t));
    tshmem_uint64_atomic_fetch_add((uint64_t *)(void *)buf, 1, peer);
    tshmem_barrier_all();
    uint64_t *odd = (uint64_t *)(void *)(buf + 3);
    STEP("%s at buf + 3", signal ? "signal" : "atomic");
    if (signal)
        tshmem_signal_op(odd, 1, TSHMEM_SIGNAL_ADD, peer);
    else
        tshmem_uint64_atomic_fetch_add(odd, 1, peer);
    FAIL("an %s at an address that is not a multiple of 8 was accepted",
         signal ? "signal" : "atomic");
}

/* skip_barrier: a barrier every PE makes, then one that PE 1 skips: it goes on to finalize. */
static void skip_barrier(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    tshmem_barrier_all();
    if (tshmem_my_pe() != 1) {
        STEP("second barrier (PE 1 skips it)");
        tshmem_barrier_all();
        FAIL("a barrier that PE 1 skipped returned");
    }
    tshmem_finalize();
}

/* late SECONDS: PE 1 reaches the second barrier SECONDS late; the others wait in it (and, with a
 * small TSHMEM_HANG_WARN, say what they wait for). */
static void late(int argc, char **argv)
{
    double seconds = argc > 2 ? atof(argv[2]) : 3;
    pe_init();
    tshmem_barrier_all();
    if (tshmem_my_pe() == 1) {
        STEP("sleeping %.1f s before the second barrier", seconds);
        usleep((useconds_t)(seconds * 1e6));
    }
    tshmem_barrier_all();
    tshmem_finalize();
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"signal_visibility", signal_visibility}, {"signal_add_set", signal_add_set},
        {"compare", compare}, {"atomics", atomics}, {"phases", phases},
        {"bad_args", bad_args}, {"reserved", reserved}, {"unaligned", unaligned},
        {"skip_barrier", skip_barrier}, {"late", late}, {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
