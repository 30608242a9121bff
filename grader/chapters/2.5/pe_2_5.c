/* pe_2_5.c: the PE side of chapter 2.5's tests: the off-node transport, teams from a split,
 * and the collectives across (virtual) nodes. The suite sets TSHMEM_PES_PER_NODE. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>

#include "pe_test.h"

static int me, npes;

/* A word of the heap that the proxy thread stores into while we read it. */
static _Atomic uint64_t *tshmem_atomic_view(uint64_t *p)
{
    return (_Atomic uint64_t *)(uintptr_t)p;
}

/* Nodes are blocks of k consecutive PEs: virtual nodes of TSHMEM_PES_PER_NODE=k on one
 * machine, or the machines of tshrun -H, which places PEs in such blocks (the first the
 * largest). Set by start(). */
static int pes_per_node;
static int per_node(void) { return pes_per_node; }
static int node_of(int pe) { return pe / per_node(); }

/* A PE on another node than `pe`: the one per_node further on, round the job. */
static int off_node_partner(int pe) { return (pe + per_node()) % npes; }

static void start(void)
{
    pe_init();
    me = tshmem_my_pe();
    npes = tshmem_n_pes();
    const char *k = getenv("TSHMEM_PES_PER_NODE");
    if (k && atoi(k) > 0) {
        pes_per_node = atoi(k);
        return;
    }
    /* Real machines: PE 0's node tells the block size; every PE checks its own block. */
    pes_per_node = tshmem_team_n_pes(TSHMEM_TEAM_NODE);
    MPI_Bcast(&pes_per_node, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int first = tshmem_team_translate_pe(TSHMEM_TEAM_NODE, 0, TSHMEM_TEAM_WORLD);
    CHECK_OR_STOP(first == me / pes_per_node * pes_per_node,
                  "my node's first PE is %d, but nodes of %d consecutive PEs would make it %d: "
                  "this test wants the machines' PEs in blocks, as tools/tshrun -H places them",
                  first, pes_per_node, me / pes_per_node * pes_per_node);
}

static size_t parse_size(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 10);
    if (*end == 'K') v <<= 10;
    if (*end == 'M') v <<= 20;
    return v;
}

/* rma SIZE...: every PE puts SIZE bytes into its own block of every other PE, then reads every
 * PE's block for it back with get. Off-node and on-node PEs alike; blocking and nbi. Between
 * the phases: tshmem_quiet, then MPI_Barrier (pe_sync), which is tshmem_barrier_all without its
 * signals: a barrier's flags cross nodes as signals (REQ_SIGNAL, or chapter 2.6's UCX
 * atomics), and this test is the first of put, get and quiet, which it checks before signals
 * are written. */
static void rma(int argc, char **argv)
{
    start();
    for (int a = 2; a < argc; a++) {
        size_t size = parse_size(argv[a]);
        int nbi = a % 2;
        STEP("rma %zu bytes (%s)", size, nbi ? "nbi" : "blocking");
        unsigned char *blocks = tshmem_malloc((size + 1) * (size_t)npes + 1);
        unsigned char *mine = malloc(size + 1), *back = malloc(size + 1);
        for (size_t i = 0; i < size; i++)
            mine[i] = pattern(me, i, a);
        for (int k = 1; k < npes; k++) {
            int to = (me + k) % npes;
            if (nbi)
                tshmem_putmem_nbi(blocks + (size_t)me * size, mine, size, to);
            else
                tshmem_putmem(blocks + (size_t)me * size, mine, size, to);
        }
        tshmem_quiet(); /* barrier_all without its signals: see above */
        pe_sync();
        for (int src = 0; src < npes; src++) {
            if (src == me)
                continue;
            for (size_t i = 0; i < size; i++)
                CHECK_OR_STOP(blocks[(size_t)src * size + i] == pattern(src, i, a),
                              "after a put of %zu bytes from PE %d (node %d), quiet and a barrier, "
                              "byte %zu is %u, expected %u", size, src, node_of(src), i,
                              blocks[(size_t)src * size + i], pattern(src, i, a));
        }
        /* Get: read what I put into every other PE back from it. */
        for (int k = 1; k < npes; k++) {
            int from = (me + k) % npes;
            memset(back, 0, size + 1);
            if (nbi) {
                tshmem_getmem_nbi(back, blocks + (size_t)me * size, size, from);
                tshmem_quiet();
            } else {
                tshmem_getmem(back, blocks + (size_t)me * size, size, from);
            }
            for (size_t i = 0; i < size; i++)
                CHECK_OR_STOP(back[i] == pattern(me, i, a), "a get of %zu bytes from PE %d "
                              "(node %d): byte %zu is %u, expected %u", size, from,
                              node_of(from), i, back[i], pattern(me, i, a));
            CHECK_OR_STOP(back[size] == 0, "a get of %zu bytes from PE %d wrote past the end",
                          size, from);
        }
        tshmem_quiet(); /* barrier_all without its signals: see above */
        pe_sync();
        tshmem_free(blocks);
        free(mine);
        free(back);
    }
    tshmem_finalize();
}

/* signal ROUNDS SIZE: each PE sends ROUNDS messages of SIZE bytes with put_signal to its
 * off-node partner; the receiver waits for each signal and checks the data at once (data
 * first, then the signal). Credits come back the same way, so buffers are reused safely. */
static void put_signal(int argc, char **argv)
{
    start();
    int rounds = argc > 2 ? atoi(argv[2]) : 100;
    size_t size = argc > 3 ? parse_size(argv[3]) : 64;
    int to = off_node_partner(me), from = (me - per_node() % npes + npes) % npes;
    unsigned char *buf = tshmem_malloc(size ? size : 1);
    uint64_t *sig = tshmem_calloc(2, sizeof(uint64_t)); /* [0] data arrived, [1] credit */
    unsigned char *msg = malloc(size ? size : 1);
    STEP("put_signal %d rounds of %zu bytes to PE %d (node %d)", rounds, size, to, node_of(to));
    for (int r = 1; r <= rounds; r++) {
        if (r > 1) /* my partner has read round r - 1 out of its buffer */
            tshmem_signal_wait_until(&sig[1], TSHMEM_CMP_GE, (uint64_t)r - 1);
        for (size_t i = 0; i < size; i++)
            msg[i] = pattern(me, i, r);
        if (r % 2)
            tshmem_putmem_signal(buf, msg, size, &sig[0], (uint64_t)r, TSHMEM_SIGNAL_SET, to);
        else
            tshmem_putmem_signal_nbi(buf, msg, size, &sig[0], 1, TSHMEM_SIGNAL_ADD, to);
        uint64_t got = tshmem_signal_wait_until(&sig[0], TSHMEM_CMP_GE, (uint64_t)r);
        CHECK_OR_STOP(got == (uint64_t)r, "round %d: the signal from PE %d is %llu, expected %d",
                      r, from, (unsigned long long)got, r);
        for (size_t i = 0; i < size; i++)
            CHECK_OR_STOP(buf[i] == pattern(from, i, r), "round %d: the signal from PE %d "
                          "(node %d) was visible but byte %zu of its data is %u, expected %u "
                          "(the signal overtook the data)", r, from, node_of(from), i, buf[i],
                          pattern(from, i, r));
        tshmem_signal_op(&sig[1], (uint64_t)r, TSHMEM_SIGNAL_SET, from);
    }
    tshmem_barrier_all();
    free(msg);
    tshmem_finalize();
}

/* fence N: PE 0 writes x[i] = i + 1 with a fence after each put, then a flag, to the last PE
 * (another node); the target polls the flag and x and must never see a later put without an
 * earlier one. Then quiet: puts with nbi, quiet, and an MPI barrier (outside tshmem) before
 * the target looks. */
static void fence(int argc, char **argv)
{
    start();
    int n = argc > 2 ? atoi(argv[2]) : 200;
    uint64_t *x = tshmem_calloc((size_t)n + 1, sizeof(uint64_t));
    int target = npes - 1;
    if (node_of(target) == node_of(0)) {
        FAIL("the fence test needs PE 0 and PE %d on different nodes", target);
        return;
    }
    if (me == 0) {
        STEP("fence: %d ordered puts to PE %d", n, target);
        for (int i = 0; i < n; i++) {
            uint64_t v = (uint64_t)i + 1;
            tshmem_putmem(&x[i], &v, sizeof v, target);
            tshmem_fence();
        }
        uint64_t done = 1;
        tshmem_putmem(&x[n], &done, sizeof done, target);
        tshmem_quiet();
    } else if (me == target) {
        /* Poll: whenever x[i] is set, every x[j < i] must be set too. */
        while (atomic_load_explicit(tshmem_atomic_view(&x[n]), memory_order_acquire) == 0) {
            int seen_gap = -1;
            for (int i = n - 1; i >= 0; i--) {
                uint64_t v = atomic_load_explicit(tshmem_atomic_view(&x[i]), memory_order_acquire);
                if (v == 0 && seen_gap < 0)
                    continue;
                if (v == 0) {
                    FAIL("x[%d] is not written but x[%d] is: the puts of PE 0 were applied out "
                         "of order across a fence", i, seen_gap);
                    return;
                }
                if (seen_gap < 0)
                    seen_gap = i;
            }
            sched_yield();
        }
        for (int i = 0; i < n; i++)
            CHECK_OR_STOP(x[i] == (uint64_t)i + 1, "x[%d] is %llu after the flag, expected %d", i,
                          (unsigned long long)x[i], i + 1);
    }
    pe_sync();
    /* quiet completes nbi puts: checked with an MPI barrier, which orders nothing of ours. */
    uint64_t *y = tshmem_calloc((size_t)n, sizeof(uint64_t));
    int to = off_node_partner(me);
    for (int i = 0; i < n; i++) {
        uint64_t v = (uint64_t)(me * 1000 + i + 1);
        tshmem_uint64_put_nbi(&y[i], &v, 1, to);
    }
    tshmem_quiet();
    pe_sync();
    int from = (me - per_node() % npes + npes) % npes;
    for (int i = 0; i < n; i++)
        CHECK_OR_STOP(y[i] == (uint64_t)(from * 1000 + i + 1), "after PE %d's quiet, y[%d] is "
                      "%llu, expected %d: quiet returned before its nbi puts had landed", from,
                      i, (unsigned long long)y[i], from * 1000 + i + 1);
    tshmem_barrier_all();
    tshmem_finalize();
}

/* atomics N: every PE adds to counters on PE 0 and on the last PE (fetch_add, then a
 * compare_swap loop), N times each, all at once. */
static void atomics(int argc, char **argv)
{
    start();
    int n = argc > 2 ? atoi(argv[2]) : 200;
    uint64_t *c = tshmem_calloc(4, sizeof(uint64_t));
    int owners[2] = {0, npes - 1};
    STEP("atomics: %d fetch_add and %d compare_swap per PE on PEs 0 and %d", n, n, npes - 1);
    for (int i = 0; i < n; i++)
        for (int o = 0; o < 2; o++) {
            uint64_t old = tshmem_uint64_atomic_fetch_add(&c[o], 1, owners[o]);
            CHECK_OR_STOP(old < (uint64_t)n * (uint64_t)npes, "fetch_add on PE %d returned %llu, "
                          "more than all the adds of the job", owners[o], (unsigned long long)old);
            uint64_t seen = tshmem_uint64_atomic_fetch(&c[2 + o], owners[o]);
            for (;;) {
                uint64_t was = tshmem_uint64_atomic_compare_swap(&c[2 + o], seen, seen + 1,
                                                                 owners[o]);
                if (was == seen)
                    break;
                seen = was;
            }
        }
    tshmem_barrier_all();
    uint64_t want = (uint64_t)n * (uint64_t)npes;
    for (int o = 0; o < 2; o++)
        if (me == owners[o]) {
            /* Atomic loads: the proxy thread wrote these words, and what orders its writes
             * before this read (the barrier, through other PEs) is invisible to ThreadSanitizer. */
            uint64_t added = __atomic_load_n(&c[o], __ATOMIC_ACQUIRE);
            uint64_t swapped = __atomic_load_n(&c[2 + o], __ATOMIC_ACQUIRE);
            CHECK(added == want, "fetch_add counter on PE %d is %llu, expected %llu", me,
                  (unsigned long long)added, (unsigned long long)want);
            CHECK(swapped == want, "compare_swap counter on PE %d is %llu, expected %llu", me,
                  (unsigned long long)swapped, (unsigned long long)want);
        }
    /* swap and set across nodes */
    int to = off_node_partner(me);
    tshmem_uint64_atomic_set(&c[0], 0, me); /* my own word, before anyone swaps it */
    tshmem_barrier_all();
    uint64_t old = tshmem_uint64_atomic_swap(&c[0], (uint64_t)me + 100, to);
    CHECK(old == 0, "swap on PE %d returned %llu, expected 0", to, (unsigned long long)old);
    tshmem_barrier_all();
    int from = (me - per_node() % npes + npes) % npes;
    uint64_t mine = __atomic_load_n(&c[0], __ATOMIC_ACQUIRE); /* the proxy wrote it, as above */
    CHECK(mine == (uint64_t)from + 100, "after PE %d's swap my word is %llu, expected %d", from,
          (unsigned long long)mine, from + 100);
    tshmem_barrier_all();
    tshmem_finalize();
}

/* threads ROUNDS: two threads of each PE reach the other node at once, as the program and
 * chapter 2.4's progress thread do. Each thread puts its own pattern into its own region of the
 * off-node partner, quiets, gets it back and compares, and fetch-adds a counter on PE 0, ROUNDS
 * times. A header followed by the other thread's bytes, or a reply taken by the wrong thread,
 * shows up as wrong bytes or a wrong count. */
#define THR_REGION 8192
struct thr_job {
    int id, rounds, to;
    char *buf;         /* symmetric: 2 regions per PE */
    uint64_t *counter; /* symmetric, counted on PE 0 */
    char err[200];
};

static void *thr_main(void *p)
{
    struct thr_job *j = p;
    size_t len = 4099 + (size_t)j->id * 1031;
    char *region = j->buf + ((size_t)me * 2 + (size_t)j->id) * THR_REGION;
    unsigned char *src = malloc(len), *back = malloc(len);
    for (int r = 0; r < j->rounds && !j->err[0]; r++) {
        for (size_t i = 0; i < len; i++)
            src[i] = (unsigned char)(me * 31 + j->id * 17 + r * 7 + (int)i);
        /* Many small puts in a row, without a quiet between them: the window in which the
         * other thread's messages could slip between a header and its bytes is wide open. */
        for (size_t off = 0; off < len; off += 61 + (size_t)j->id * 2)
            tshmem_putmem(region + off, src + off, len - off < 61 + (size_t)j->id * 2 ?
                          len - off : 61 + (size_t)j->id * 2, j->to);
        tshmem_quiet();
        memset(back, 0, len);
        tshmem_getmem(back, region, len, j->to);
        for (size_t i = 0; i < len; i++)
            if (back[i] != src[i]) {
                snprintf(j->err, sizeof j->err, "thread %d, round %d: byte %zu read back from PE "
                         "%d is %d, expected %d", j->id, r, i, j->to, back[i], src[i]);
                break;
            }
        tshmem_uint64_atomic_fetch_add(j->counter, 1, 0);
    }
    free(src);
    free(back);
    return NULL;
}

static void threads(int argc, char **argv)
{
    start();
    int rounds = argc > 2 ? atoi(argv[2]) : 200;
    char *buf = tshmem_malloc((size_t)npes * 2 * THR_REGION);
    uint64_t *counter = tshmem_calloc(1, sizeof(uint64_t));
    STEP("threads: 2 threads x %d rounds of put, quiet, get, fetch_add to PE %d and PE 0",
         rounds, off_node_partner(me));
    struct thr_job jobs[2];
    pthread_t t[2];
    for (int k = 0; k < 2; k++) {
        jobs[k] = (struct thr_job){.id = k, .rounds = rounds, .to = off_node_partner(me),
                                   .buf = buf, .counter = counter};
        CHECK_OR_STOP(pthread_create(&t[k], NULL, thr_main, &jobs[k]) == 0,
                      "PE %d: pthread_create failed", me);
    }
    for (int k = 0; k < 2; k++) {
        pthread_join(t[k], NULL);
        CHECK(!jobs[k].err[0], "PE %d: %s", me, jobs[k].err);
    }
    tshmem_barrier_all();
    if (me == 0)
        CHECK(*counter == (uint64_t)npes * 2 * (uint64_t)rounds, "the counter on PE 0 is %llu, "
              "expected %llu (fetch_adds lost or replies crossed)", (unsigned long long)*counter,
              (unsigned long long)npes * 2 * (unsigned long long)rounds);
    tshmem_barrier_all();
    tshmem_finalize();
}

/* barrier ROUNDS: each round every PE writes the round into its word on every PE, then
 * barrier_all; after it every word must hold this round. */
static void barrier(int argc, char **argv)
{
    start();
    int rounds = argc > 2 ? atoi(argv[2]) : 50;
    uint64_t *w = tshmem_calloc((size_t)npes, sizeof(uint64_t));
    STEP("barrier phases: %d rounds", rounds);
    for (int r = 1; r <= rounds; r++) {
        uint64_t v = (uint64_t)r;
        for (int k = 0; k < npes; k++)
            tshmem_uint64_p(&w[me], v, (me + k) % npes);
        tshmem_barrier_all();
        for (int s = 0; s < npes; s++)
            CHECK_OR_STOP(w[s] == v, "round %d: after barrier_all, the word of PE %d (node %d) "
                          "is %llu: its put of this round was not complete", r, s, node_of(s),
                          (unsigned long long)w[s]);
        tshmem_barrier_all(); /* nobody writes round r + 1 before everyone has checked r */
    }
    tshmem_finalize();
}

/* allreduce ALGO COUNT CALLS: int64 sums (exact) and float max on WORLD, CALLS times. */
static void allreduce(int argc, char **argv)
{
    start();
    const char *name = argc > 2 ? argv[2] : "auto";
    enum tshmem_algo algo = strcmp(name, "hierarchical") == 0 ? TSHMEM_ALGO_HIERARCHICAL
                            : strcmp(name, "ring") == 0       ? TSHMEM_ALGO_RING
                            : strcmp(name, "rd") == 0         ? TSHMEM_ALGO_RECURSIVE_DOUBLING
                                                              : TSHMEM_ALGO_AUTO;
    size_t count = argc > 3 ? parse_size(argv[3]) : 100;
    int calls = argc > 4 ? atoi(argv[4]) : 3;
    int64_t *src = tshmem_malloc((count + 1) * sizeof(int64_t));
    int64_t *dst = tshmem_malloc((count + 1) * sizeof(int64_t));
    STEP("allreduce %s: %d calls of %zu int64", name, calls, count);
    for (int call = 0; call < calls; call++) {
        for (size_t i = 0; i < count; i++)
            src[i] = (int64_t)(i * 7 + (size_t)me * 1000003 + (size_t)call * 31);
        dst[count] = -1;
        int in_place = call % 2;
        if (in_place)
            memcpy(dst, src, count * sizeof(int64_t));
        tshmem_allreduce(TSHMEM_TEAM_WORLD, dst, in_place ? dst : src, count, TSHMEM_DTYPE_INT64,
                         TSHMEM_OP_SUM, algo);
        for (size_t i = 0; i < count; i++) {
            int64_t want = 0;
            for (int p = 0; p < npes; p++)
                want += (int64_t)(i * 7 + (size_t)p * 1000003 + (size_t)call * 31);
            CHECK_OR_STOP(dst[i] == want, "allreduce %s call %d%s: element %zu is %lld, "
                          "expected %lld", name, call, in_place ? " (in place)" : "", i,
                          (long long)dst[i], (long long)want);
        }
        CHECK_OR_STOP(dst[count] == -1, "allreduce %s wrote past the end of dest", name);
    }
    /* The typed call goes through the selector: max of floats. */
    float *fs = tshmem_malloc(8 * sizeof(float)), *fd = tshmem_malloc(8 * sizeof(float));
    for (int i = 0; i < 8; i++)
        fs[i] = (float)((me * 37 + i * 11) % 23);
    tshmem_float_max_reduce(TSHMEM_TEAM_WORLD, fd, fs, 8);
    for (int i = 0; i < 8; i++) {
        float want = 0;
        for (int p = 0; p < npes; p++)
            want = fmaxf(want, (float)((p * 37 + i * 11) % 23));
        CHECK(fd[i] == want, "float max element %d is %g, expected %g", i, fd[i], want);
    }
    tshmem_barrier_all();
    tshmem_finalize();
}

/* collect ALGO NBYTES: fcollect and broadcast (every root) on WORLD across nodes. */
static void collect(int argc, char **argv)
{
    start();
    const char *name = argc > 2 ? argv[2] : "auto";
    enum tshmem_algo algo = strcmp(name, "hybrid") == 0 ? TSHMEM_ALGO_HYBRID
                            : strcmp(name, "ring") == 0 ? TSHMEM_ALGO_RING
                                                        : TSHMEM_ALGO_AUTO;
    size_t nbytes = argc > 3 ? parse_size(argv[3]) : 100;
    unsigned char *src = tshmem_malloc(nbytes + 1);
    unsigned char *dst = tshmem_malloc(nbytes * (size_t)npes + 1);
    STEP("fcollect %s: %zu bytes per PE", name, nbytes);
    for (size_t i = 0; i < nbytes; i++)
        src[i] = pattern(me, i, 3);
    tshmem_fcollectmem_algo(TSHMEM_TEAM_WORLD, dst, src, nbytes, algo);
    for (int p = 0; p < npes; p++)
        for (size_t i = 0; i < nbytes; i++)
            CHECK_OR_STOP(dst[(size_t)p * nbytes + i] == pattern(p, i, 3), "fcollect %s: byte "
                          "%zu of PE %d's block (node %d) is %u, expected %u", name, i, p,
                          node_of(p), dst[(size_t)p * nbytes + i], pattern(p, i, 3));
    for (int root = 0; root < npes; root++) {
        for (size_t i = 0; i < nbytes; i++)
            src[i] = pattern(me, i, root + 10);
        tshmem_broadcastmem_algo(TSHMEM_TEAM_WORLD, dst, src, nbytes, root, algo);
        for (size_t i = 0; i < nbytes; i++)
            CHECK_OR_STOP(dst[i] == pattern(root, i, root + 10), "broadcast %s from root %d "
                          "(node %d): byte %zu is %u, expected %u", name, root, node_of(root),
                          i, dst[i], pattern(root, i, root + 10));
    }
    tshmem_barrier_all();
    tshmem_finalize();
}

/* split: node teams and the leaders' team with tshmem_team_split_strided, used for a barrier
 * and an allreduce, then destroyed; then again, to see handles are not exhausted by two. */
static void split(int argc, char **argv)
{
    (void)argc, (void)argv;
    start();
    int k = per_node(), nodes = (npes + k - 1) / k, my_node = me / k;
    for (int again = 0; again < 2; again++) {
        tshmem_team_t node = TSHMEM_TEAM_INVALID, leaders = TSHMEM_TEAM_INVALID;
        int size = my_node == nodes - 1 ? npes - my_node * k : k;
        /* Every PE takes part in every split of WORLD; each gets its own node's team. */
        for (int n = 0; n < nodes; n++) {
            tshmem_team_t t;
            int sz = n == nodes - 1 ? npes - n * k : k;
            tshmem_team_split_strided(TSHMEM_TEAM_WORLD, n * k, 1, sz, NULL, 0, &t);
            if (n == my_node)
                node = t;
            else
                CHECK(t == TSHMEM_TEAM_INVALID, "split of node %d gave PE %d (node %d) team %d, "
                      "expected TSHMEM_TEAM_INVALID", n, me, my_node, t);
        }
        tshmem_team_split_strided(TSHMEM_TEAM_WORLD, 0, k, nodes, NULL, 0, &leaders);
        CHECK_OR_STOP(node != TSHMEM_TEAM_INVALID, "no node team for PE %d", me);
        CHECK(tshmem_team_n_pes(node) == size, "node team has %d PEs, expected %d",
              tshmem_team_n_pes(node), size);
        CHECK(tshmem_team_my_pe(node) == me % k, "my number in the node team is %d, expected %d",
              tshmem_team_my_pe(node), me % k);
        CHECK(tshmem_team_translate_pe(node, 0, TSHMEM_TEAM_WORLD) == my_node * k,
              "node team PE 0 is world PE %d, expected %d",
              tshmem_team_translate_pe(node, 0, TSHMEM_TEAM_WORLD), my_node * k);
        int is_leader = me % k == 0;
        CHECK((leaders != TSHMEM_TEAM_INVALID) == is_leader, "PE %d %s a leaders' team handle",
              me, is_leader ? "lacks" : "got");
        if (leaders != TSHMEM_TEAM_INVALID) {
            CHECK(tshmem_team_n_pes(leaders) == nodes && tshmem_team_my_pe(leaders) == my_node,
                  "leaders team: %d PEs, me %d; expected %d and %d", tshmem_team_n_pes(leaders),
                  tshmem_team_my_pe(leaders), nodes, my_node);
            CHECK(tshmem_team_translate_pe(leaders, nodes - 1, TSHMEM_TEAM_WORLD) ==
                      (nodes - 1) * k, "the last leader is not world PE %d", (nodes - 1) * k);
        }
        int64_t *v = tshmem_malloc(2 * sizeof(int64_t));
        v[0] = me;
        tshmem_team_sync(node);
        tshmem_allreduce(node, &v[1], &v[0], 1, TSHMEM_DTYPE_INT64, TSHMEM_OP_SUM,
                         TSHMEM_ALGO_AUTO);
        int64_t want = 0;
        for (int p = my_node * k; p < my_node * k + size; p++)
            want += p;
        CHECK(v[1] == want, "node team sum is %lld, expected %lld", (long long)v[1],
              (long long)want);
        if (leaders != TSHMEM_TEAM_INVALID) {
            tshmem_barrier(leaders);
            tshmem_allreduce(leaders, &v[1], &v[0], 1, TSHMEM_DTYPE_INT64, TSHMEM_OP_SUM,
                             TSHMEM_ALGO_AUTO);
            CHECK(v[1] == (int64_t)k * nodes * (nodes - 1) / 2, "leaders' sum is %lld, expected "
                  "%lld", (long long)v[1], (long long)k * nodes * (nodes - 1) / 2);
            tshmem_team_destroy(leaders);
        }
        tshmem_team_destroy(node);
        tshmem_free(v);
    }
    tshmem_barrier_all();
    tshmem_finalize();
}

/* split_bad WHAT: a split that must be refused. */
static void split_bad(int argc, char **argv)
{
    start();
    const char *what = argc > 2 ? argv[2] : "size";
    tshmem_team_t t;
    STEP("split_bad %s", what);
    if (strcmp(what, "size") == 0)
        tshmem_team_split_strided(TSHMEM_TEAM_WORLD, 0, 1, npes + 1, NULL, 0, &t);
    else if (strcmp(what, "stride") == 0)
        tshmem_team_split_strided(TSHMEM_TEAM_WORLD, 1, npes, 2, NULL, 0, &t);
    else if (strcmp(what, "destroy_world") == 0)
        tshmem_team_destroy(TSHMEM_TEAM_WORLD);
    else { /* exhaust: split until the handles run out */
        for (int i = 0; i < 64; i++)
            tshmem_team_split_strided(TSHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &t);
    }
    FAIL("split_bad %s was accepted", what);
    tshmem_finalize();
}

/* split_mismatch: a split every PE makes alike, then one where PE 0 asks for a team of all the
 * PEs and the others for a team of two. */
static void split_mismatch(int argc, char **argv)
{
    (void)argc, (void)argv;
    start();
    tshmem_team_t all, t;
    tshmem_team_split_strided(TSHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &all);
    CHECK(tshmem_team_n_pes(all) == npes, "the first split made a team of %d PEs, expected %d",
          tshmem_team_n_pes(all), npes);
    int size = me == 0 ? npes : 2;
    STEP("split with size %d (PE 0: %d, the others 2)", size, npes);
    tshmem_team_split_strided(TSHMEM_TEAM_WORLD, 0, 1, size, NULL, 0, &t);
    FAIL("a split with size %d on PE 0 and 2 on the others returned", npes);
    tshmem_finalize();
}

/* idle: off-node traffic, then one second of idle waiting in a barrier's spin: the PE (proxy
 * thread included) must not burn a core meanwhile. */
static void idle(int argc, char **argv)
{
    (void)argc, (void)argv;
    start();
    uint64_t *w = tshmem_calloc(1, sizeof(uint64_t));
    tshmem_uint64_atomic_add(w, 1, off_node_partner(me));
    tshmem_barrier_all();
    CHECK(*w == 1, "my word is %llu after my partner's add, expected 1", (unsigned long long)*w);
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    struct timespec t = {1, 0};
    nanosleep(&t, NULL);
    getrusage(RUSAGE_SELF, &b);
    double cpu = (double)(b.ru_utime.tv_sec - a.ru_utime.tv_sec + b.ru_stime.tv_sec -
                          a.ru_stime.tv_sec) +
                 1e-6 * (double)(b.ru_utime.tv_usec - a.ru_utime.tv_usec + b.ru_stime.tv_usec -
                                 a.ru_stime.tv_usec);
    VALUE("idle_cpu", "%.3f", cpu);
    CHECK(cpu < 0.3, "while the program slept 1 s this PE used %.2f s of CPU: the proxy thread "
          "spins instead of backing off", cpu);
    tshmem_barrier_all();
    tshmem_finalize();
}

/* How many cores the thread of this process named `name` may run on, 0 if there is none; and
 * its scheduling policy in *policy. */
static int cores_of_thread(const char *name, int *policy)
{
    DIR *d = opendir("/proc/self/task");
    int cores = 0;
    struct dirent *e;
    *policy = -1;
    while (d && (e = readdir(d)) && !cores) {
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = 0;
        fclose(f);
        cpu_set_t cpus;
        int tid = atoi(e->d_name);
        if (strcmp(comm, name) == 0 && sched_getaffinity(tid, sizeof cpus, &cpus) == 0) {
            cores = CPU_COUNT(&cpus);
            *policy = sched_getscheduler(tid);
        }
    }
    if (d)
        closedir(d);
    return cores;
}

/* bound: each PE binds itself to one core before tshmem_init, as Open MPI binds 2 PEs on 2
 * cores. Its proxy thread and 2.4's progress thread, started after, carry their names and may
 * run on every online core: on the program's core alone they would wait out its time slices
 * whenever it computes or blocks in MPI. Woken, neither takes the core from its program
 * (SCHED_BATCH). */
static void bound(int argc, char **argv)
{
    (void)argc, (void)argv;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
    int pinned = sched_setaffinity(0, sizeof one, &one) == 0;
    start();
    uint64_t *w = tshmem_calloc(1, sizeof(uint64_t));
    float *x = tshmem_calloc(4, sizeof(float));
    tshmem_uint64_atomic_add(w, 1, off_node_partner(me)); /* through the proxy */
    for (int i = 0; i < 4; i++)
        x[i] = 1.0f;
    tshmem_request_t req;
    tshmem_allreduce_nb(TSHMEM_TEAM_WORLD, x, x, 4, TSHMEM_DTYPE_FLOAT, TSHMEM_OP_SUM, &req);
    tshmem_wait(&req); /* the progress thread has started */
    tshmem_barrier_all();
    CHECK(*w == 1 && x[0] == (float)npes, "the add and the allreduce_nb gave %llu and %g, "
          "expected 1 and %d", (unsigned long long)*w, x[0], npes);
    int proxy_policy, progress_policy;
    int proxy = cores_of_thread("tshmem-proxy", &proxy_policy);
    int progress = cores_of_thread("tshmem-progress", &progress_policy);
    VALUE("online", "%ld", online);
    VALUE("proxy_cores", "%d", proxy);
    VALUE("progress_cores", "%d", progress);
    CHECK(proxy > 0 && progress > 0, "no thread named tshmem-proxy (%d) or tshmem-progress (%d) "
          "in /proc/self/task: are they started with tshmem_thread_start?", proxy, progress);
    if (pinned && online > 1)
        CHECK(proxy > 1 && progress > 1, "this PE is bound to one core and the machine has %ld, "
              "but its proxy thread may run on %d and its progress thread on %d: they inherited "
              "the binding (tshmem_thread_start spreads them)", online, proxy, progress);
    /* Woken, neither takes the core from its program (SCHED_BATCH): the proxy everywhere, the
     * progress thread where the PE is bound to one core. */
    CHECK(proxy_policy == SCHED_BATCH, "the proxy thread's scheduling policy is %d, expected "
          "SCHED_BATCH (%d): tshmem_thread_start with TSHMEM_THREAD_DEFERS", proxy_policy,
          SCHED_BATCH);
    if (pinned && online > 1)
        CHECK(progress_policy == SCHED_BATCH, "bound to one core, the progress thread's "
              "scheduling policy is %d, expected SCHED_BATCH (%d)", progress_policy, SCHED_BATCH);
    tshmem_barrier_all();
    tshmem_finalize();
}

/* no_finalize: PEs exchange off-node puts; the last PE then leaves main without
 * tshmem_finalize while the others call it. */
static void no_finalize(int argc, char **argv)
{
    (void)argc, (void)argv;
    start();
    uint64_t *w = tshmem_calloc(1, sizeof(uint64_t));
    tshmem_uint64_p(w, 7, off_node_partner(me));
    tshmem_barrier_all();
    STEP("exchanged");
    if (me == npes - 1)
        exit(0); /* the bug: no tshmem_finalize */
    tshmem_finalize();
}

/* kill AT: PEs stream off-node puts to their partners; PE 1 kills itself (SIGKILL) after AT
 * puts, in the middle of the stream. The others stream on until the launcher ends them, or for
 * 20 s (the suite allows the job 30): a count of puts would end sooner on a fast machine than
 * the launcher takes to notice the death on a busy one. */
static void kill_one(int argc, char **argv)
{
    start();
    int at = argc > 2 ? atoi(argv[2]) : 50;
    size_t size = 64 * 1024;
    unsigned char *buf = tshmem_malloc(size), *msg = calloc(size, 1);
    int to = off_node_partner(me);
    STEP("streaming puts of %zu bytes to PE %d (node %d)", size, to, node_of(to));
    double t0 = MPI_Wtime();
    long i = 0;
    for (; MPI_Wtime() - t0 < 20; i++) {
        if (me == 1 && i == at) {
            STEP("raising SIGKILL after %ld puts", i);
            raise(SIGKILL);
        }
        tshmem_putmem_nbi(buf, msg, size, to);
        if (i % 16 == 0)
            tshmem_quiet();
    }
    FAIL("PE %d streamed %ld puts for 20 s: PE 1's death did not end the job", me, i);
    tshmem_finalize();
}

/* nodes N: the job runs on N machines (tshrun -H). Open MPI must see them: MPI_Comm_split_type
 * with MPI_COMM_TYPE_SHARED gives N node communicators; and tshmem's node team, and the PEs
 * that tshmem_ptr reaches, are exactly the PEs of my machine (same hostname). */
static void nodes(int argc, char **argv)
{
    start();
    int want = argc > 2 ? atoi(argv[2]) : 1;
    MPI_Comm shared;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &shared);
    int local, leaders;
    MPI_Comm_rank(shared, &local);
    int leader = local == 0;
    MPI_Allreduce(&leader, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_free(&shared);
    char host[64] = {0};
    gethostname(host, sizeof host - 1);
    char(*hosts)[64] = malloc(sizeof *hosts * (size_t)npes);
    MPI_Allgather(host, 64, MPI_CHAR, hosts, 64, MPI_CHAR, MPI_COMM_WORLD);
    VALUE("host", "%s", host);
    VALUE("mpi_nodes", "%d", leaders);
    CHECK(leaders == want, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) made %d node "
          "communicators, expected %d (one per machine)", leaders, want);
    int *word = tshmem_malloc(sizeof(int));
    for (int pe = 0; pe < npes; pe++) {
        int same = strcmp(hosts[pe], host) == 0;
        int in_team = tshmem_team_translate_pe(TSHMEM_TEAM_WORLD, pe, TSHMEM_TEAM_NODE) >= 0;
        CHECK(same == in_team, "PE %d runs on %s, I on %s, yet it is %sin my node team", pe,
              hosts[pe], host, in_team ? "" : "not ");
        CHECK(same == (tshmem_ptr(word, pe) != NULL), "PE %d runs on %s, I on %s, yet "
              "tshmem_ptr to it is %s", pe, hosts[pe], host, same ? "NULL" : "not NULL");
    }
    free(hosts);
    tshmem_barrier_all();
    tshmem_free(word);
    tshmem_finalize();
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"rma", rma},       {"signal", put_signal},  {"fence", fence},
        {"atomics", atomics}, {"barrier", barrier},  {"allreduce", allreduce},
        {"collect", collect}, {"split", split},      {"split_bad", split_bad},
        {"split_mismatch", split_mismatch},
        {"idle", idle},     {"no_finalize", no_finalize}, {"kill", kill_one},
        {"threads", threads}, {"nodes", nodes}, {"bound", bound},
        {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
