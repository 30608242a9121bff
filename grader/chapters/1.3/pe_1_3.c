/* pe_1_3.c: the PE side of chapter 1.3's tests: put, get, their typed and nbi forms, fence. */
#include "pe_test.h"

static const size_t sizes[] = {0, 1, 7, 4099, (2u << 20) + 5};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

static void fill(unsigned char *buf, size_t size, int src, int r)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = pattern(src, i, r);
}

/* Returns the first byte that differs from what PE src should have sent, or size. */
static size_t first_bad(const unsigned char *buf, size_t size, int src, int r)
{
    for (size_t i = 0; i < size; i++)
        if (buf[i] != pattern(src, i, r))
            return i;
    return size;
}

/* Every PE puts into slot [me] of every PE's buffer, itself included. */
static void put_sizes(int argc, char **argv)
{
    int nbi = argc > 2 && strcmp(argv[2], "nbi") == 0;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    for (size_t s = 0; s < N_SIZES; s++) {
        size_t size = sizes[s];
        unsigned char *dest = tshmem_malloc(size * (size_t)n + 1);
        unsigned char *src = malloc(size + 1);
        fill(src, size, me, (int)s);
        STEP("putting %zu bytes to every PE%s", size, nbi ? " (nbi)" : "");
        for (int k = 1; k <= n; k++) {
            int pe = (me + k) % n; /* start with the next PE: not everyone hits PE 0 first */
            if (nbi)
                tshmem_putmem_nbi(dest + size * (size_t)me, src, size, pe);
            else
                tshmem_putmem(dest + size * (size_t)me, src, size, pe);
        }
        if (nbi)
            tshmem_quiet();
        pe_sync();
        for (int from = 0; from < n; from++) {
            size_t bad = first_bad(dest + size * (size_t)from, size, from, (int)s);
            CHECK(bad == size, "%s of %zu bytes from PE %d: byte %zu is 0x%02x, expected 0x%02x",
                  nbi ? "putmem_nbi" : "putmem", size, from, bad,
                  bad < size ? dest[size * (size_t)from + bad] : 0, pattern(from, bad, (int)s));
        }
        pe_sync();
        free(src);
        tshmem_free(dest);
    }
    tshmem_finalize();
}

/* Every PE fills its own buffer, then gets every PE's, itself included. */
static void get_sizes(int argc, char **argv)
{
    int nbi = argc > 2 && strcmp(argv[2], "nbi") == 0;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    for (size_t s = 0; s < N_SIZES; s++) {
        size_t size = sizes[s];
        unsigned char *src = tshmem_malloc(size + 1), *local = malloc(size + 1);
        fill(src, size, me, (int)s);
        pe_sync();
        STEP("getting %zu bytes from every PE%s", size, nbi ? " (nbi)" : "");
        for (int k = 0; k < n; k++) {
            int pe = (me + k) % n;
            memset(local, 0, size + 1);
            if (nbi) {
                tshmem_getmem_nbi(local, src, size, pe);
                tshmem_quiet();
            } else {
                tshmem_getmem(local, src, size, pe);
            }
            size_t bad = first_bad(local, size, pe, (int)s);
            CHECK(bad == size, "%s of %zu bytes from PE %d: byte %zu is 0x%02x, expected 0x%02x",
                  nbi ? "getmem_nbi" : "getmem", size, pe, bad, bad < size ? local[bad] : 0,
                  pattern(pe, bad, (int)s));
            CHECK(local[size] == 0, "getmem of %zu bytes wrote past the end of dest", size);
        }
        pe_sync();
        free(local);
        tshmem_free(src);
    }
    tshmem_finalize();
}

static void typed(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    int *i = tshmem_malloc(sizeof(int));
    double *d = tshmem_malloc(4 * sizeof(double));
    uint64_t *u = tshmem_malloc(sizeof(uint64_t));
    char *c = tshmem_malloc(1);
    tshmem_int_p(i, 1000 + me, next);
    double vals[4] = {me + 0.5, -1.0 * me, 1e300, 3.25};
    tshmem_double_put(d, vals, 4, next);
    tshmem_uint64_p(u, UINT64_MAX - (uint64_t)me, next);
    tshmem_char_p(c, (char)('a' + me), next);
    pe_sync();
    CHECK(*i == 1000 + prev, "tshmem_int_p from PE %d: got %d, expected %d", prev, *i, 1000 + prev);
    CHECK(d[0] == prev + 0.5 && d[1] == -1.0 * prev && d[2] == 1e300 && d[3] == 3.25,
          "tshmem_double_put from PE %d: got {%g, %g, %g, %g}", prev, d[0], d[1], d[2], d[3]);
    CHECK(*u == UINT64_MAX - (uint64_t)prev, "tshmem_uint64_p from PE %d: wrong value", prev);
    CHECK(*c == (char)('a' + prev), "tshmem_char_p from PE %d: got '%c'", prev, *c);
    int g = tshmem_int_g(i, next);
    CHECK(g == 1000 + me, "tshmem_int_g from PE %d: got %d, expected %d", next, g, 1000 + me);
    double back[4] = {0};
    tshmem_double_get(back, d, 4, next);
    CHECK(back[0] == me + 0.5 && back[3] == 3.25, "tshmem_double_get from PE %d: got {%g, .., %g}",
          next, back[0], back[3]);
    pe_sync();
    tshmem_finalize();
}

/* PE i sends to PE i+1 many times: data, fence, then a flag. The receiver polls the flag
 * and must then see that round's data. Acks come back the same way. */
static void fence(int argc, char **argv)
{
    (void)argc, (void)argv;
    enum { ROUNDS = 3000, WORDS = 64 };
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    uint64_t *data = tshmem_calloc(WORDS, sizeof(uint64_t));
    uint64_t *flag = tshmem_calloc(1, sizeof(uint64_t)), *ack = tshmem_calloc(1, sizeof(uint64_t));
    uint64_t out[WORDS];
    for (uint64_t r = 1; r <= ROUNDS; r++) {
        while (atomic_load_explicit((_Atomic uint64_t *)ack, memory_order_acquire) < r - 1)
            sched_yield(); /* the next PE has read round r-1: data may be overwritten */
        for (int w = 0; w < WORDS; w++)
            out[w] = r * 1000 + (uint64_t)w;
        tshmem_putmem(data, out, sizeof out, next);
        tshmem_fence();
        tshmem_putmem(flag, &r, sizeof r, next);
        while (atomic_load_explicit((_Atomic uint64_t *)flag, memory_order_acquire) < r)
            sched_yield();
        for (int w = 0; w < WORDS; w++)
            CHECK_OR_STOP(data[w] == r * 1000 + (uint64_t)w, "round %llu: saw the flag from PE %d "
                          "but word %d of its data is %llu, expected %llu: the flag overtook the "
                          "data", (unsigned long long)r, prev, w, (unsigned long long)data[w],
                          (unsigned long long)(r * 1000 + (uint64_t)w));
        tshmem_fence();
        tshmem_putmem(ack, &r, sizeof r, prev);
    }
    pe_sync();
    tshmem_finalize();
}

static void bad_pe(int argc, char **argv)
{
    pe_init();
    int n = tshmem_n_pes(), pe = strcmp(argv[2], "n") == 0 ? n : atoi(argv[2]);
    char *buf = tshmem_malloc(64), local[8] = {0};
    if (argc > 3 && strcmp(argv[3], "get") == 0)
        tshmem_getmem(local, buf, 8, pe);
    else
        tshmem_putmem(buf, local, 8, pe);
    FAIL("a put/get to PE %d of %d returned instead of stopping with an error", pe, n);
}

static void bad_addr(int argc, char **argv)
{
    pe_init();
    char *buf = tshmem_malloc(64), local[8] = {0};
    if (argc > 2 && strcmp(argv[2], "overrun") == 0)
        tshmem_putmem(buf, local, (size_t)64 << 30, 0);
    else
        tshmem_putmem(local, buf, 8, 0);
    FAIL("a put to a non-symmetric or too long destination returned instead of stopping");
}

/* reserved [get]: a put (or get) that works, then one at the runtime's reserved area, the 2 MiB
 * before the first tshmem_malloc block, where the barrier flags live. */
static void reserved(int argc, char **argv)
{
    int get = argc > 2 && strcmp(argv[2], "get") == 0;
    pe_init();
    int me = tshmem_my_pe(), peer = (me + 1) % tshmem_n_pes();
    uint64_t *first = tshmem_malloc(64), ones = ~(uint64_t)0, got = 0;
    tshmem_putmem(first, &ones, sizeof ones, peer);
    tshmem_getmem(&got, first, sizeof got, peer);
    pe_sync();
    char *reserved_area = (char *)first - (2u << 20);
    STEP("%s at the reserved area, 2 MiB before the first block", get ? "get" : "put");
    if (get)
        tshmem_getmem(&got, reserved_area + 64, sizeof got, peer);
    else
        tshmem_putmem(reserved_area, &ones, sizeof ones, peer);
    FAIL("a %s at the runtime's reserved area (2 MiB before the first tshmem_malloc block) "
         "returned instead of stopping", get ? "get" : "put");
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"put_sizes", put_sizes}, {"get_sizes", get_sizes}, {"typed", typed},
        {"fence", fence},         {"bad_pe", bad_pe},       {"bad_addr", bad_addr},
        {"reserved", reserved},   {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
