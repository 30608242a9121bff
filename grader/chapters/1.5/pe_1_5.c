/* pe_1_5.c: the PE side of chapter 1.5's tests: ring shift, ring broadcasts, the token. */
#include "pe_test.h"

/* Returns the first byte of buf that is not what PE src sent in round r, or size. */
static size_t first_bad(const unsigned char *buf, size_t size, int src, int r)
{
    for (size_t i = 0; i < size; i++)
        if (buf[i] != pattern(src, i, r))
            return i;
    return size;
}

static void fill(unsigned char *buf, size_t size, int src, int r)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = pattern(src, i, r);
}

static size_t arg_size(int argc, char **argv, int i, size_t dflt)
{
    return argc > i ? (size_t)strtoull(argv[i], NULL, 0) : dflt;
}

/* shift SIZE ROUNDS: every round each PE sends a new pattern; nothing is reset in between. */
static void shift(int argc, char **argv)
{
    size_t size = arg_size(argc, argv, 2, 64);
    int rounds = argc > 3 ? atoi(argv[3]) : 3;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes(), prev = (me + n - 1) % n;
    unsigned char *dest = tshmem_malloc(size + 1), *src = malloc(size + 1);
    for (int r = 0; r < rounds; r++) {
        fill(src, size, me, r);
        STEP("ring_shift %zu bytes, round %d", size, r);
        tshmem_ring_shift(dest, src, size);
        size_t bad = first_bad(dest, size, prev, r);
        CHECK_OR_STOP(bad == size, "round %d: after tshmem_ring_shift of %zu bytes, byte %zu of "
                      "dest is 0x%02x, expected 0x%02x from PE %d (my ring predecessor)", r, size,
                      bad, dest[bad], pattern(prev, bad, r), prev);
    }
    VALUE("rounds", "%d", rounds);
    free(src);
    tshmem_free(dest);
    tshmem_finalize();
}

/* bcast KIND SIZE ROOT ROUNDS [CHUNK] [inplace]: KIND is store (tshmem_ring_broadcast) or pipe
 * (tshmem_ring_broadcast_pipelined). The root moves one PE on every round. */
static void bcast(int argc, char **argv)
{
    int pipe = argc > 2 && strcmp(argv[2], "pipe") == 0;
    size_t size = arg_size(argc, argv, 3, 64);
    int root0 = argc > 4 ? atoi(argv[4]) : 0, rounds = argc > 5 ? atoi(argv[5]) : 3;
    size_t chunk = arg_size(argc, argv, 6, 0);
    int inplace = argc > 7 && strcmp(argv[7], "inplace") == 0;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    unsigned char *dest = tshmem_malloc(size + 1), *src = malloc(size + 1);
    for (int r = 0; r < rounds; r++) {
        int root = (root0 + r) % n;
        unsigned char *from = inplace ? dest : src;
        if (me == root)
            fill(from, size, root, r);
        STEP("%s broadcast of %zu bytes from root %d, round %d%s", pipe ? "pipelined" : "ring",
             size, root, r, inplace ? " (in place)" : "");
        if (pipe)
            tshmem_ring_broadcast_pipelined(dest, from, size, root, chunk);
        else
            tshmem_ring_broadcast(dest, from, size, root);
        size_t bad = first_bad(dest, size, root, r);
        CHECK_OR_STOP(bad == size, "round %d: after the %s broadcast of %zu bytes from root %d "
                      "(chunk %zu), byte %zu of dest is 0x%02x, expected 0x%02x", r,
                      pipe ? "pipelined" : "ring", size, root, chunk, bad, dest[bad],
                      pattern(root, bad, r));
    }
    VALUE("rounds", "%d", rounds);
    free(src);
    tshmem_free(dest);
    tshmem_finalize();
}

/* What tshmem_ring_token(laps) returns on PE me of n: the last hop count it saw. */
static uint64_t token_expected(int laps, int me, int n)
{
    if (laps == 0)
        return 0;
    return me == 0 ? (uint64_t)laps * (uint64_t)n : (uint64_t)(laps - 1) * (uint64_t)n + (uint64_t)me;
}

/* token LAPS...: several calls in a row, no reset between them. */
static void token(int argc, char **argv)
{
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    for (int i = 2; i < argc; i++) {
        int laps = atoi(argv[i]);
        STEP("token, %d laps", laps);
        uint64_t got = tshmem_ring_token(laps);
        uint64_t want = token_expected(laps, me, n);
        CHECK_OR_STOP(got == want, "tshmem_ring_token(%d) on %d PEs returned %llu on PE %d, "
                      "expected %llu (the last hop count this PE received)", laps, n,
                      (unsigned long long)got, me, (unsigned long long)want);
    }
    tshmem_finalize();
}

/* mixed ROUNDS: every call of the chapter, interleaved, sizes changing, no reset. */
static void mixed(int argc, char **argv)
{
    int rounds = argc > 2 ? atoi(argv[2]) : 50;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes(), prev = (me + n - 1) % n;
    const size_t max = 70000;
    unsigned char *dest = tshmem_malloc(max), *src = malloc(max);
    for (int r = 0; r < rounds; r++) {
        size_t size = (size_t)(r * 7919) % max;
        int root = (r * 3) % n;
        switch (r % 4) {
        case 0:
            fill(src, size, me, r);
            tshmem_ring_shift(dest, src, size);
            CHECK_OR_STOP(first_bad(dest, size, prev, r) == size, "call %d: ring_shift of %zu "
                          "bytes delivered wrong data from PE %d", r, size, prev);
            break;
        case 1:
        case 2:
            if (me == root)
                fill(src, size, root, r);
            if (r % 4 == 1)
                tshmem_ring_broadcast(dest, src, size, root);
            else
                tshmem_ring_broadcast_pipelined(dest, src, size, root, 4096);
            CHECK_OR_STOP(first_bad(dest, size, root, r) == size, "call %d: %s broadcast of %zu "
                          "bytes from root %d delivered wrong data", r,
                          r % 4 == 1 ? "ring" : "pipelined", size, root);
            break;
        default: {
            uint64_t got = tshmem_ring_token(r % 3);
            CHECK_OR_STOP(got == token_expected(r % 3, me, n), "call %d: tshmem_ring_token(%d) "
                          "returned %llu", r, r % 3, (unsigned long long)got);
        }
        }
    }
    STEP("%d mixed calls done", rounds);
    free(src);
    tshmem_free(dest);
    tshmem_finalize();
}

/* bad ROOT | bad_dest | bad_laps: each must stop with a sentence naming the value. */
static void bad(int argc, char **argv)
{
    pe_init();
    char *heap = tshmem_malloc(64);
    char local[64] = {0};
    const char *what = argc > 2 ? argv[2] : "root";
    if (strcmp(what, "root") == 0)
        tshmem_ring_broadcast(heap, local, 8, argc > 3 ? atoi(argv[3]) : tshmem_n_pes());
    else if (strcmp(what, "pipe_root") == 0)
        tshmem_ring_broadcast_pipelined(heap, local, 8, -1, 0);
    else if (strcmp(what, "dest") == 0)
        tshmem_ring_shift(local, heap, 8);
    else
        tshmem_ring_token(-2);
    FAIL("the bad call '%s' returned instead of stopping the program", what);
    tshmem_finalize();
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"shift", shift}, {"bcast", bcast}, {"token", token}, {"mixed", mixed}, {"bad", bad},
        {NULL, NULL}};
    return pe_main(argc, argv, list);
}
