/* pe_1_2.c: the PE side of chapter 1.2's tests: the segment, the allocator, tshmem_ptr. */
#include <errno.h>
#include <signal.h>

#include "pe_test.h"
#include "tshmem_internal.h" /* white box: the segment's name, to prove it was unlinked */

/* Writes my PE number into my copy, then reads every same-node peer's copy through
 * tshmem_ptr: only the same offset on every PE makes this work. */
static void check_twins(char *p, size_t size, const char *what)
{
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    memset(p, me + 1, size);
    pe_sync();
    for (int pe = 0; pe < n; pe++) {
        unsigned char *twin = tshmem_ptr(p, pe);
        if (!twin)
            continue;
        CHECK(twin[0] == pe + 1 && twin[size - 1] == pe + 1,
              "%s: PE %d's twin of my block (via tshmem_ptr) holds %d..%d, expected %d: the "
              "block is not at the same offset on every PE", what, pe, twin[0], twin[size - 1],
              pe + 1);
    }
    pe_sync();
}

static void offsets(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    static const size_t sizes[] = {1, 100, 4096, 3, 1 << 20, 255, 256, 257};
    char *first = NULL, list[400] = "";
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *p = tshmem_malloc(sizes[i]);
        CHECK(p != NULL, "tshmem_malloc(%zu) returned NULL", sizes[i]);
        if (!p)
            return;
        if (!first)
            first = p;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%ld,", (long)(p - first));
        CHECK((uintptr_t)p % 256 == 0, "tshmem_malloc(%zu) = %p is not 256-byte aligned",
              sizes[i], (void *)p);
        check_twins(p, sizes[i], "tshmem_malloc");
    }
    VALUE("offsets", "%s", list);
    tshmem_finalize();
}

static void alignment(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    for (size_t size = 1; size < 5000; size = size * 3 + 1) {
        void *p = tshmem_malloc(size);
        CHECK((uintptr_t)p % 256 == 0, "tshmem_malloc(%zu) = %p is not 256-byte aligned", size, p);
    }
    static const size_t aligns[] = {1, 8, 256, 512, 4096, 65536};
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
        char *p = tshmem_align(aligns[i], 10);
        size_t want = aligns[i] < 256 ? 256 : aligns[i];
        CHECK(p && (uintptr_t)p % want == 0, "tshmem_align(%zu, 10) = %p is not %zu-aligned",
              aligns[i], (void *)p, want);
        if (p)
            check_twins(p, 10, "tshmem_align");
    }
    CHECK(tshmem_malloc(0) == NULL, "tshmem_malloc(0) should return NULL");
    tshmem_finalize();
}

static void calloc_zeroes(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    size_t size = 100000;
    unsigned char *dirty = tshmem_malloc(size);
    memset(dirty, 0xAB, size);
    tshmem_free(dirty);
    unsigned char *p = tshmem_calloc(size / 4, 4);
    CHECK(p == dirty, "tshmem_calloc did not reuse the block just freed (%p, then %p)",
          (void *)dirty, (void *)p);
    for (size_t i = 0; p && i < size; i++)
        CHECK_OR_STOP(p[i] == 0, "tshmem_calloc: byte %zu is 0x%02x, expected 0", i, p[i]);
    CHECK(tshmem_calloc(0, 8) == NULL, "tshmem_calloc(0, 8) should return NULL");
    tshmem_finalize();
}

static void reuse(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    char *a = tshmem_malloc(1000), *b = tshmem_malloc(5000), *c = tshmem_malloc(1000);
    tshmem_free(b);
    char *d = tshmem_malloc(3000);
    CHECK(d == b, "after freeing a 5000-byte block, tshmem_malloc(3000) = %p did not reuse it "
                  "(%p): first fit takes the lowest free block that fits", (void *)d, (void *)b);
    tshmem_free(d);
    tshmem_free(a);
    tshmem_free(c);
    char *all = tshmem_malloc(8000);
    CHECK(all == a, "after freeing every block, tshmem_malloc(8000) = %p, expected %p: free "
                    "blocks next to each other must merge", (void *)all, (void *)a);
    tshmem_free(all);
    for (int i = 0; i < 200; i++) {
        char *p = tshmem_malloc(4096);
        CHECK_OR_STOP(p == a, "round %d: malloc/free of 4 KiB moved to %p (was %p)", i,
                      (void *)p, (void *)a);
        tshmem_free(p);
    }
    tshmem_finalize();
}

static void many(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    enum { COUNT = 1000 };
    static char *blocks[COUNT];
    for (int i = 0; i < COUNT; i++) {
        blocks[i] = tshmem_malloc((size_t)(i % 13) + 1);
        CHECK_OR_STOP(blocks[i] != NULL, "small allocation %d returned NULL", i);
        memset(blocks[i], i % 251, (size_t)(i % 13) + 1);
    }
    for (int i = 0; i < COUNT; i++)
        for (int j = 0; j < (i % 13) + 1; j++)
            CHECK_OR_STOP((unsigned char)blocks[i][j] == i % 251,
                          "small block %d byte %d was overwritten: blocks overlap", i, j);
    char *big = tshmem_malloc(12u << 20);
    CHECK(big != NULL, "one 12 MiB allocation in a 16 MiB heap returned NULL");
    if (big)
        check_twins(big, 12u << 20, "12 MiB block");
    for (int i = 0; i < COUNT; i++)
        tshmem_free(blocks[i]);
    tshmem_free(big);
    tshmem_finalize();
}

static void exhaust(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    void *huge = tshmem_malloc((size_t)1 << 40);
    CHECK(huge == NULL, "tshmem_malloc(1 TiB) in a small heap returned %p, expected NULL", huge);
    void *p = tshmem_malloc(3u << 20), *q = tshmem_malloc(3u << 20);
    CHECK(p != NULL && q == NULL, "in a 4 MiB heap: first 3 MiB block %p (expected one), second "
                                  "%p (expected NULL)", p, q);
    void *small = tshmem_malloc(1024);
    CHECK(small != NULL, "a 1 KiB allocation after a failed one returned NULL");
    tshmem_finalize();
}

static void mismatch(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    tshmem_malloc(256); /* every PE alike */
    size_t size = tshmem_my_pe() == 1 ? 128 : 64;
    tshmem_malloc(size);
    FAIL("tshmem_malloc with different sizes on different PEs was not caught under TSHMEM_DEBUG=1");
}

/* one_pe malloc|free: an allocation every PE makes, then one that PE 0 alone makes (an extra
 * tshmem_malloc, or a tshmem_free), then one every PE makes again. */
static void one_pe(int argc, char **argv)
{
    int free_it = argc > 2 && strcmp(argv[2], "free") == 0;
    pe_init();
    char *a = tshmem_malloc(64);
    if (tshmem_my_pe() == 0) {
        STEP("PE 0 alone: %s", free_it ? "tshmem_free(a)" : "tshmem_malloc(64)");
        if (free_it)
            tshmem_free(a);
        else
            tshmem_malloc(64);
    }
    tshmem_malloc(128);
    FAIL("a tshmem_%s that only PE 0 made was not caught", free_it ? "free" : "malloc");
}

static void heap_size(int argc, char **argv)
{
    if (argc < 4) {
        FAIL("heap_size needs two sizes: one that fits, one that does not");
        return;
    }
    pe_init();
    size_t fits = (size_t)strtoull(argv[2], NULL, 0), too_big = (size_t)strtoull(argv[3], NULL, 0);
    void *p = tshmem_malloc(fits);
    CHECK(p != NULL, "TSHMEM_SYMMETRIC_SIZE=%s: tshmem_malloc(%zu) returned NULL",
          getenv("TSHMEM_SYMMETRIC_SIZE"), fits);
    tshmem_free(p);
    p = tshmem_malloc(too_big);
    CHECK(p == NULL, "TSHMEM_SYMMETRIC_SIZE=%s: tshmem_malloc(%zu) should not fit, got %p",
          getenv("TSHMEM_SYMMETRIC_SIZE"), too_big, p);
    tshmem_finalize();
}

static void ptr(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes(), local = 0;
    int *x = tshmem_malloc(sizeof(int));
    CHECK(tshmem_ptr(x, me) == x, "tshmem_ptr(x, my own PE) must be x itself");
    for (int pe = 0; pe < n; pe++) {
        int same = tshmem_team_translate_pe(TSHMEM_TEAM_WORLD, pe, TSHMEM_TEAM_NODE) >= 0;
        void *twin = tshmem_ptr(x, pe);
        CHECK(same == (twin != NULL), "tshmem_ptr(x, %d) = %p, but PE %d is %s", pe, twin, pe,
              same ? "on this node (expected an address)" : "on another node (expected NULL)");
        CHECK(tshmem_addr_accessible(x, pe) == 1, "tshmem_addr_accessible(x, %d) != 1", pe);
    }
    CHECK(tshmem_addr_accessible(&local, 0) == 0, "a stack variable is not symmetric");
    CHECK(tshmem_addr_accessible(x, n) == 0, "PE %d does not exist", n);
    CHECK(tshmem_addr_accessible(x, -1) == 0, "PE -1 does not exist");
    pe_sync();
    tshmem_finalize();
}

static void ptr_not_symmetric(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int local = 0;
    void *p = tshmem_ptr(&local, 0);
    FAIL("tshmem_ptr(&a_stack_variable, 0) returned %p instead of stopping with an error", p);
}

static void free_bad(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    char *p = tshmem_malloc(512);
    tshmem_free(p + 256);
    FAIL("tshmem_free of a pointer into the middle of a block did not stop with an error");
}

/* The allocator's refusals, one per argument: the four that stop the job run into their
 * tshmem_fail and never reach the FAIL after them; "huge" must come back NULL and leave the heap
 * usable. Each first makes one good allocation, so that the stub stops in its own TODO. */
static void refuse(int argc, char **argv)
{
    const char *what = argc > 2 ? argv[2] : "";
    pe_init();
    char *good = tshmem_malloc(512);
    CHECK(good != NULL, "tshmem_malloc(512) returned NULL in an empty heap");
    if (!strcmp(what, "align3")) {
        tshmem_align(3, 64);
        FAIL("tshmem_align(3, 64): an alignment that is not a power of two did not stop the job");
    } else if (!strcmp(what, "align_big")) {
        tshmem_align((size_t)4 << 20, 64);
        FAIL("tshmem_align(4 MiB, 64): an alignment above 2 MiB did not stop the job");
    } else if (!strcmp(what, "calloc_overflow")) {
        tshmem_calloc(SIZE_MAX / 2, 4);
        FAIL("tshmem_calloc(SIZE_MAX / 2, 4): a count * size that overflows did not stop the job");
    } else if (!strcmp(what, "free_outside")) {
        static char outside[512]; /* the program's own memory, not the symmetric heap */
        tshmem_free(outside);
        FAIL("tshmem_free of a pointer outside the symmetric heap did not stop the job");
    } else if (!strcmp(what, "huge")) {
        /* Rounded up to 256-byte units before the check, this size wraps to a small one. */
        void *p = tshmem_malloc(SIZE_MAX - 100);
        CHECK(p == NULL, "tshmem_malloc(SIZE_MAX - 100) returned %p, expected NULL: check size "
              "against the heap before rounding it up (rounded first, it wraps around to a few "
              "bytes)", p);
        void *q = tshmem_malloc(1024);
        CHECK(q != NULL, "a 1 KiB allocation after a refused huge one returned NULL");
        tshmem_finalize();
    } else {
        FAIL("refuse: unknown argument '%s'", what);
    }
}

/* The segment's name must be gone from /dev/shm as soon as tshmem_init returns. */
static void unlinked(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    const char *name = tshmem_g.segment_name;
    char path[160];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    CHECK(name[0] == '/', "no segment name recorded: was the segment created?");
    CHECK(tshmem_g.segment != NULL, "the segment is not mapped after tshmem_init");
    CHECK(access(path, F_OK) != 0 && errno == ENOENT, "%s still exists after tshmem_init: unlink "
          "it once every PE of the node has mapped it", path);
    VALUE("segment", "%s", name);
    pe_sync();
    if (argc > 2 && strcmp(argv[2], "kill") == 0 && tshmem_my_pe() == tshmem_n_pes() - 1) {
        STEP("killing myself with SIGKILL");
        raise(SIGKILL);
    }
    pe_sync();
    tshmem_finalize();
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"offsets", offsets},     {"alignment", alignment}, {"calloc", calloc_zeroes},
        {"reuse", reuse},         {"many", many},           {"exhaust", exhaust},
        {"mismatch", mismatch},   {"heap_size", heap_size}, {"ptr", ptr},
        {"ptr_not_symmetric", ptr_not_symmetric},           {"free_bad", free_bad},
        {"unlinked", unlinked},   {"one_pe", one_pe},       {"refuse", refuse},
        {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
