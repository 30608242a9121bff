/* pe_2_6.c: the PE side of chapter 2.6's own tests. The cross-node scenarios of chapters 2.4 and
 * 2.5 (pe_2_4, pe_2_5) run on this network too, from the suite; here:
 *   network WANT   which network the job took (ucx or proxy, as WANT says), then each kind of
 *                  off-node call once with a known answer: put, get, signal SET and ADD, and
 *                  every atomic (fetch, set, add, fetch-add, swap, compare-swap both ways),
 *                  then 200 puts of 64 KiB with no quiet between them (12.5 MiB: more than the
 *                  network's copies hold at once, so they are reused while puts are in flight)
 *   quiet_then_message ROUNDS BYTES
 *                  each PE of the first node puts BYTES to its partner on the next node, calls
 *                  tshmem_quiet, then sends the partner an MPI message; the partner, woken by
 *                  the message alone (no call of tshmem between), checks every byte: quiet
 *                  returns only once every put has landed at its target
 */
#include "pe_test.h"
#include "tshmem_internal.h" /* white box: which network carries the off-node calls */

/* The PE that puts to `me` (its `to`). */
static int from_pe(int me, int per, int n) { return (me - per + n) % n; }

static void network(int argc, char **argv)
{
    const char *want = argc > 2 ? argv[2] : "ucx";
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    const char *net = tshmem_ucx_active() ? "ucx" : "proxy";
    VALUE("network", "%s", net);
    CHECK(strcmp(net, want) == 0, "the job runs on the %s network, expected %s (TSHMEM_NET=%s)",
          net, want, getenv("TSHMEM_NET") ? getenv("TSHMEM_NET") : "(unset)");
    const char *k = getenv("TSHMEM_PES_PER_NODE");
    int per = k && atoi(k) > 0 ? atoi(k) : 1;
    int to = (me + per) % n; /* a PE on another node */
    size_t bytes = 4097;
    unsigned char *buf = tshmem_malloc(bytes), *back = malloc(bytes);
    uint64_t *words = tshmem_calloc((size_t)n + 1, sizeof(uint64_t)); /* words[from], signal */
    unsigned char *src = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        src[i] = pattern(me, i, 1);
    tshmem_barrier_all();
    STEP("put and get to PE %d", to);
    tshmem_putmem(buf, src, bytes, to);
    tshmem_getmem(back, buf, bytes, to); /* after our own put: it sees it */
    for (size_t i = 0; i < bytes; i++)
        CHECK_OR_STOP(back[i] == src[i], "getmem of PE %d's buffer right after our putmem to it: "
                      "byte %zu is %u, the put wrote %u (a get must see an earlier put of ours)",
                      to, i, back[i], src[i]);
    STEP("atomics on PE %d", to);
    uint64_t *w = &words[me];
    tshmem_uint64_atomic_set(w, 5, to);
    uint64_t got = tshmem_uint64_atomic_fetch(w, to);
    CHECK(got == 5, "atomic_fetch after atomic_set(5) on PE %d returned %llu", to,
          (unsigned long long)got);
    tshmem_uint64_atomic_add(w, 3, to);
    got = tshmem_uint64_atomic_fetch_add(w, 10, to);
    CHECK(got == 8, "atomic_fetch_add after set(5), add(3) returned %llu, expected 8",
          (unsigned long long)got);
    got = tshmem_uint64_atomic_swap(w, 100, to);
    CHECK(got == 18, "atomic_swap after fetch_add(10) returned %llu, expected 18",
          (unsigned long long)got);
    got = tshmem_uint64_atomic_compare_swap(w, 7, 1, to);
    CHECK(got == 100, "compare_swap(cond 7, value 1) on 100 returned %llu, expected 100 (and "
          "no swap)", (unsigned long long)got);
    got = tshmem_uint64_atomic_compare_swap(w, 100, 42, to);
    CHECK(got == 100, "compare_swap(cond 100, value 42) on 100 returned %llu, expected 100",
          (unsigned long long)got);
    got = tshmem_uint64_atomic_fetch(w, to);
    CHECK(got == 42, "atomic_fetch after a compare_swap that should have stored 42 returned "
          "%llu", (unsigned long long)got);
    STEP("200 puts of 64 KiB to PE %d, then quiet", to);
    enum { SLOTS = 16, PUTS = 200 };
    size_t big = 64 << 10;
    unsigned char *slots = tshmem_malloc(SLOTS * big), *one = malloc(big);
    for (int i = 0; i < PUTS; i++) { /* slot i % SLOTS: the last SLOTS puts stay */
        for (size_t j = 0; j < big; j++)
            one[j] = pattern(me * PUTS + i, j, 3);
        tshmem_putmem(slots + (size_t)(i % SLOTS) * big, one, big, to);
    }
    tshmem_quiet();
    tshmem_barrier_all();
    for (int i = PUTS - SLOTS; i < PUTS; i++)
        for (size_t j = 0; j < big; j++)
            CHECK_OR_STOP(slots[(size_t)(i % SLOTS) * big + j] == pattern(from_pe(me, per, n) *
                          PUTS + i, j, 3), "after PE %d's 200 puts of 64 KiB and its quiet, byte "
                          "%zu of slot %d is %u, expected %u from its put %d (a put's bytes must "
                          "be the source's at the time of the call, whatever came after)",
                          from_pe(me, per, n), j, i % SLOTS,
                          slots[(size_t)(i % SLOTS) * big + j],
                          pattern(from_pe(me, per, n) * PUTS + i, j, 3), i);
    tshmem_barrier_all();
    tshmem_free(slots);
    free(one);
    STEP("signals to PE %d", to);
    tshmem_signal_op(&words[n], 7, TSHMEM_SIGNAL_SET, to);
    tshmem_signal_op(&words[n], 5, TSHMEM_SIGNAL_ADD, to);
    tshmem_quiet();
    tshmem_signal_wait_until(&words[n], TSHMEM_CMP_EQ, 12);
    tshmem_barrier_all();
    int from = (me - per + n) % n;
    CHECK(words[from] == 42, "PE %d's atomics left %llu in our word, expected 42", from,
          (unsigned long long)words[from]);
    for (size_t i = 0; i < bytes; i++)
        CHECK_OR_STOP(buf[i] == pattern(from, i, 1), "PE %d's put left byte %zu = %u, expected %u",
                      from, i, buf[i], pattern(from, i, 1));
    tshmem_barrier_all();
    tshmem_free(words);
    tshmem_free(buf);
    free(back);
    free(src);
    tshmem_finalize();
}

static void quiet_then_message(int argc, char **argv)
{
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    size_t bytes = argc > 3 ? strtoul(argv[3], NULL, 10) : (size_t)4 << 20;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    const char *k = getenv("TSHMEM_PES_PER_NODE");
    int per = k && atoi(k) > 0 ? atoi(k) : 1;
    unsigned char *buf = tshmem_malloc(bytes), *src = malloc(bytes);
    for (int r = 0; r < rounds; r++) {
        tshmem_barrier_all();
        if (me < per && me + per < n) {
            int to = me + per;
            STEP("round %d: putmem of %zu bytes to PE %d, quiet, then an MPI message", r, bytes,
                 to);
            for (size_t i = 0; i < bytes; i++)
                src[i] = pattern(me * rounds + r, i, 5);
            tshmem_putmem(buf, src, bytes, to);
            tshmem_quiet();
            MPI_Send(&r, 1, MPI_INT, to, 77, MPI_COMM_WORLD);
        } else if (me >= per && me < 2 * per) {
            int from = me - per, round = -1;
            MPI_Recv(&round, 1, MPI_INT, from, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < bytes; i++)
                CHECK_OR_STOP(buf[i] == pattern(from * rounds + r, i, 5),
                              "round %d: PE %d called tshmem_putmem of %zu bytes to us, then "
                              "tshmem_quiet, then sent an MPI message; when the message came, "
                              "byte %zu was %u, expected %u (quiet returns only once every put "
                              "has landed at its target)", r, from, bytes, i, buf[i],
                              pattern(from * rounds + r, i, 5));
        }
    }
    tshmem_barrier_all();
    tshmem_free(buf);
    free(src);
    tshmem_finalize();
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {{"network", network},
                                           {"quiet_then_message", quiet_then_message},
                                           {NULL, NULL}};
    return pe_main(argc, argv, list);
}
