/* bench_1_3.c: chapter 1.3's put and get against a local memcpy and against MPI's one-sided
 * operations, in one run.
 *
 *   put      PE 0: tshmem_putmem to PE 1, then tshmem_quiet     vs memcpy of the same bytes,
 *            then a full fence (what quiet adds to the copy)
 *   put_rma  the same put                                       vs MPI_Put + MPI_Win_flush
 *   get      PE 0: tshmem_getmem from PE 1                      vs memcpy of the same bytes
 *            out of PE 1's slice (tshmem_ptr), lines PE 1 has just written, as the get reads
 *   get_rma  the same get                                       vs MPI_Get + MPI_Win_flush
 *
 *   make bench-programs IMPL=solutions && tools/tshrun -np 2 build/solutions/bin/bench_1_3
 *
 * Only PE 0 moves data (to or from PE 1; on one PE, to itself); the others wait at the barrier
 * that starts each iteration. On the shared-memory path a put is a memcpy into the peer's slice,
 * so memcpy is the ceiling: the figure to reach is ~1x. A put and its quiet promise that the
 * bytes are in place and ordered before whatever this PE does next, which a memcpy alone does
 * not: the put's baseline ends with the full fence such a copy needs before another core may
 * rely on it (without it, a few bytes' put read 0.6x: the fence is 10 of its 28 ns here).
 * Before every iteration the source is rewritten by the PE that owns it (PE 0 for put, PE 1 for
 * get), so a get must bring the lines over from the other core, as a real one does; so does its
 * memcpy baseline, which copies from the same place (a memcpy of PE 0's own lines, still in its
 * cache, was 4-9 times faster than any get could be). bytes is the message; busbw = algbw.
 */
#include "bench.h"

struct ctx {
    int me, n, peer, get;
    int baseline;                 /* 0: tshmem is being timed, 1: memcpy, 2: MPI */
    size_t bytes;
    unsigned char *sym_a, *sym_b; /* symmetric: put source/dest, get dest/source */
    unsigned char *priv;          /* private, for memcpy and MPI's origin buffer */
    MPI_Win win;                  /* over a private buffer of max bytes on every PE */
    unsigned char *window;        /* this PE's part of win */
};

static void prepare(void *p, int iter)
{
    struct ctx *c = p;
    unsigned char v = (unsigned char)(iter * 7 + 1);
    /* Only the source of the transfer being timed, so both sides touch the same amount of
     * memory between iterations (two buffers of `bytes`). */
    if (c->baseline == 2 && c->get && c->me == c->peer)
        memset(c->window, v, c->bytes); /* MPI_Get's source */
    else if (c->baseline == 1 && c->get && c->me == c->peer)
        memset(c->sym_b, v, c->bytes); /* the get's memcpy reads where the get reads */
    else if (c->baseline && !c->get && c->me == 0)
        memset(c->priv, v, c->bytes);
    else if (!c->baseline && c->me == (c->get ? c->peer : 0))
        memset(c->get ? c->sym_b : c->sym_a, v, c->bytes);
}

static void run_put(void *p, int iter)
{
    struct ctx *c = p;
    (void)iter;
    if (c->me != 0)
        return;
    tshmem_putmem(c->sym_b, c->sym_a, c->bytes, c->peer);
    tshmem_quiet();
}

static void run_get(void *p, int iter)
{
    struct ctx *c = p;
    (void)iter;
    if (c->me == 0)
        tshmem_getmem(c->sym_a, c->sym_b, c->bytes, c->peer);
}

static void run_memcpy(void *p, int iter)
{
    struct ctx *c = p;
    (void)iter;
    if (c->me != 0)
        return;
    memcpy(c->sym_a, c->priv, c->bytes); /* a private copy: no peer involved */
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* complete and ordered, as after a quiet */
}

static void run_memcpy_get(void *p, int iter)
{
    struct ctx *c = p;
    (void)iter;
    const void *from = tshmem_ptr(c->sym_b, c->peer); /* NULL: the peer is on another node */
    if (c->me == 0)
        memcpy(c->sym_a, from ? from : c->priv, c->bytes);
}

static void run_mpi(void *p, int iter)
{
    struct ctx *c = p;
    (void)iter;
    if (c->me != 0)
        return;
    if (c->get)
        MPI_Get(c->priv, (int)c->bytes, MPI_BYTE, c->peer, 0, (int)c->bytes, MPI_BYTE, c->win);
    else
        MPI_Put(c->priv, (int)c->bytes, MPI_BYTE, c->peer, 0, (int)c->bytes, MPI_BYTE, c->win);
    MPI_Win_flush(c->peer, c->win);
}

/* The last iteration's bytes must have arrived: a fast wrong answer is no answer. */
static void verify(const struct ctx *c, const char *op, int last)
{
    if (c->me != (c->get ? 0 : c->peer))
        return;
    const unsigned char *at = c->get ? c->sym_a : c->sym_b;
    unsigned char want = (unsigned char)(last * 7 + 1);
    for (size_t i = 0; i < c->bytes; i++)
        if (at[i] != want) {
            fprintf(stderr, "bench_1_3: PE %d: %s of %zu bytes: byte %zu is 0x%02x, expected "
                    "0x%02x: the result is wrong, the timing worthless\n",
                    c->me, op, c->bytes, i, at[i], want);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

static void measure(const struct bench_opts *o, struct ctx *c, const char *op, int get,
                    const char *base, void (*baseline)(void *, int))
{
    if (!bench_wanted(o, op))
        return;
    c->get = get;
    c->baseline = 0;
    int iters = bench_iters(o, c->bytes);
    struct bench_result r =
        bench_measure((struct bench_fn){prepare, get ? run_get : run_put, c}, iters);
    MPI_Barrier(MPI_COMM_WORLD); /* the put is complete (quiet) before the peer looks */
    verify(c, op, iters / 10 + iters);
    bench_report(op, "tshmem", c->bytes, iters, r, 1.0);
    c->baseline = baseline == run_mpi ? 2 : 1;
    r = bench_measure((struct bench_fn){prepare, baseline, c}, iters);
    bench_report(op, base, c->bytes, iters, r, 1.0);
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    bench_heap(2 * o.max_bytes + (16u << 20)); /* two buffers of the largest size */
    tshmem_init();
    struct ctx c = {.me = tshmem_my_pe(), .n = tshmem_n_pes()};
    c.peer = 1 % c.n;
    size_t sizes[32];
    int n_sizes = bench_sizes(&o, sizes, 32);
    size_t max = sizes[n_sizes - 1];
    c.sym_a = tshmem_malloc(max);
    c.sym_b = tshmem_malloc(max);
    MPI_Win_allocate((MPI_Aint)max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c.window, &c.win);
    c.priv = malloc(max);
    if (!c.sym_a || !c.sym_b || !c.priv) {
        fprintf(stderr, "bench_1_3: cannot allocate 2 x %zu bytes; set TSHMEM_SYMMETRIC_SIZE "
                "above it or pass a smaller --max\n", max);
        return 2;
    }
    memset(c.priv, 0, max);
    MPI_Win_lock_all(0, c.win);
    for (int s = 0; s < n_sizes; s++) {
        c.bytes = sizes[s];
        measure(&o, &c, "put", 0, "memcpy", run_memcpy);
        measure(&o, &c, "put_rma", 0, "mpi", run_mpi);
        measure(&o, &c, "get", 1, "memcpy", run_memcpy_get);
        measure(&o, &c, "get_rma", 1, "mpi", run_mpi);
    }
    if (c.me == 0 && (bench_wanted(&o, "put") || bench_wanted(&o, "get")))
        printf("# put and get against memcpy: on one machine a put is that copy plus its checks, "
               "so memcpy is their ceiling (near 1x is the goal); put_rma and get_rma are the "
               "race against MPI\n");
    MPI_Win_unlock_all(c.win);
    MPI_Win_free(&c.win);
    free(c.priv);
    tshmem_free(c.sym_b);
    tshmem_free(c.sym_a);
    tshmem_finalize();
    return 0;
}
