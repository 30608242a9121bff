/* bench_2_1.c: chapter 2.1's benchmark: a stream of messages through a buffer, against MPI.
 *
 * PE 0 sends, PE 1 receives (other PEs only take part in the barriers). One timed iteration is
 * a window of W messages of one size (W = 256 for small messages, fewer for large ones, at
 * least 1), and every figure printed is per message: median_us is the time of one message in
 * a steady stream, algbw its bytes over that time, and 1 / median_us the message rate (the
 * `rate` lines, for messages up to 4 KiB). The operations:
 *
 *   buffer_stream     tshmem: tshmem_buffer_send / tshmem_buffer_recv of a ready message
 *                     mpi:    MPI_Send / MPI_Recv of the same message
 *   buffer_zero_copy  tshmem: the sender produces the message (a byte-wise XOR of its input)
 *                     straight into reserved slots: reserve, produce, commit, one slot each
 *                     mpi:    produce into a private buffer, then MPI_Send
 *   buffer_produce_send  tshmem: produce into a private buffer, then tshmem_buffer_send; the
 *                     difference to buffer_zero_copy is the copy that zero copy saves
 *
 * The buffer has 16 slots of 64 KiB (BENCH_SLOTS and BENCH_SLOT_BYTES change that). Run:
 *   make bench-programs IMPL=solutions && tools/tshrun -np 2 build/solutions/bin/bench_2_1
 */
#include "bench.h"

#define WINDOW_BYTES (8u << 20) /* a window carries about this much, in 1 to 256 messages */

struct stream {
    tshmem_buffer_t *buf;
    size_t slot_bytes;
    size_t bytes;              /* per message */
    int window;                /* messages per timed iteration */
    int me;
    unsigned char *src, *dst;  /* the sender's input, the receiver's output */
    unsigned char *staging;    /* buffer_produce_send and MPI: where the sender produces */
    uint64_t key;              /* what the producer XORs in, new every iteration */
    int produced;              /* 1: the operation sends src XOR key, 0: src itself */
};

/* The producer: out = in XOR key, 8 bytes at a time. Every variant produces the same bytes. */
static void produce(unsigned char *out, const unsigned char *in, size_t n, uint64_t key)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, in + i, 8);
        w ^= key;
        memcpy(out + i, &w, 8);
    }
    for (; i < n; i++)
        out[i] = in[i] ^ (unsigned char)(key >> (8 * (i % 8)));
}

/* Untimed: a new input (and key) each iteration, and a check of what the last one delivered:
 * every byte of iteration i's input is i % 251, every byte of its key is i % 251 + 1. */
static void prepare(void *ctx, int iter)
{
    struct stream *s = ctx;
    if (s->me == 1 && iter > 0) {
        unsigned char v = (unsigned char)((iter - 1) % 251), k = (unsigned char)(v + 1);
        unsigned char want = s->produced ? v ^ k : v;
        if (s->dst[0] != want || s->dst[s->bytes - 1] != want) {
            fprintf(stderr, "bench_2_1: PE 1 received 0x%02x ... 0x%02x in a %zu-byte message, "
                    "expected 0x%02x: the stream is broken\n", s->dst[0], s->dst[s->bytes - 1],
                    s->bytes, want);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    s->key = 0x0101010101010101ull * (uint64_t)(iter % 251 + 1);
    if (s->me == 0)
        memset(s->src, iter % 251, s->bytes);
}

static void recv_all(struct stream *s)
{
    for (int w = 0; w < s->window; w++)
        tshmem_buffer_recv(s->buf, 0, s->dst, s->bytes);
}

static void run_stream(void *ctx, int iter)
{
    (void)iter;
    struct stream *s = ctx;
    if (s->me == 0)
        for (int w = 0; w < s->window; w++)
            tshmem_buffer_send(s->buf, 1, s->src, s->bytes);
    else if (s->me == 1)
        recv_all(s);
}

static void run_zero_copy(void *ctx, int iter)
{
    (void)iter;
    struct stream *s = ctx;
    if (s->me == 0) {
        for (int w = 0; w < s->window; w++)
            for (size_t done = 0; done < s->bytes; done += s->slot_bytes) {
                size_t len = s->bytes - done < s->slot_bytes ? s->bytes - done : s->slot_bytes;
                produce(tshmem_buffer_reserve(s->buf, 1, len), s->src + done, len, s->key);
                tshmem_buffer_commit(s->buf, 1);
            }
    } else if (s->me == 1) {
        for (int w = 0; w < s->window; w++)
            for (size_t done = 0; done < s->bytes; done += s->slot_bytes)
                tshmem_buffer_recv(s->buf, 0, s->dst + done, s->slot_bytes);
    }
}

static void run_produce_send(void *ctx, int iter)
{
    (void)iter;
    struct stream *s = ctx;
    if (s->me == 0)
        for (int w = 0; w < s->window; w++) {
            produce(s->staging, s->src, s->bytes, s->key);
            tshmem_buffer_send(s->buf, 1, s->staging, s->bytes);
        }
    else if (s->me == 1)
        recv_all(s);
}

static void mpi_messages(struct stream *s, int produce_first)
{
    for (int w = 0; w < s->window; w++) {
        if (s->me == 0) {
            if (produce_first)
                produce(s->staging, s->src, s->bytes, s->key);
            MPI_Send(produce_first ? s->staging : s->src, (int)s->bytes, MPI_BYTE, 1, 21,
                     MPI_COMM_WORLD);
        } else if (s->me == 1) {
            MPI_Recv(s->dst, (int)s->bytes, MPI_BYTE, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
}

static void run_mpi_stream(void *ctx, int iter)
{
    (void)iter;
    mpi_messages(ctx, 0);
}

static void run_mpi_produce_send(void *ctx, int iter)
{
    (void)iter;
    mpi_messages(ctx, 1);
}

static size_t env_size(const char *name, size_t fallback)
{
    const char *v = getenv(name);
    return v && *v ? bench_parse_size(v) : fallback;
}

/* Times one operation over `window` messages and reports per-message figures. */
static void measure(const struct bench_opts *o, const char *op, const char *impl,
                    void (*run)(void *, int), int produced, struct stream *s)
{
    if (!bench_wanted(o, op))
        return;
    s->produced = produced;
    int iters = bench_iters(o, s->bytes * (size_t)s->window);
    struct bench_result r = bench_measure((struct bench_fn){prepare, run, s}, iters);
    r.median_us /= s->window, r.min_us /= s->window, r.max_us /= s->window;
    bench_report(op, impl, s->bytes, iters, r, 1.0);
    if (s->me == 0 && s->bytes <= 4096 && r.median_us > 0)
        printf("rate op=%s impl=%s bytes=%zu msgs_per_s=%.0f\n", op, impl, s->bytes,
               1e6 / r.median_us);
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    size_t n_slots = env_size("BENCH_SLOTS", 16), slot = env_size("BENCH_SLOT_BYTES", 64u << 10);
    /* The buffer holds a ring of n_slots slots for every PE on every PE: 16 MiB at 16 PEs with
     * the default slots, past the default heap. MPI first, for the PE count; the heap then gets
     * the rings (each slot with room for its header) and 16 MiB to spare, unless the user chose
     * a size. tshmem_init sees MPI running and leaves MPI_Finalize to us. */
    int nw, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_size(MPI_COMM_WORLD, &nw);
    bench_heap(((size_t)nw * n_slots * (slot + 256) + (16u << 20)) & ~(size_t)0xfffff);
    tshmem_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    if (n < 2) {
        fprintf(stderr, "bench_2_1: run it on 2 PEs (tools/tshrun -np 2 ...): PE 0 sends, PE 1 "
                "receives.\n");
        tshmem_finalize();
        MPI_Finalize();
        return 2;
    }
    struct stream s = {.buf = tshmem_buffer_create(n_slots, slot), .slot_bytes = slot, .me = me};
    if (me == 0)
        printf("# bench_2_1: %d PEs, PE 0 -> PE 1, buffer of %zu slots x %zu bytes; figures per "
               "message in a stream\n", n, n_slots, slot);
    size_t sizes[32];
    int n_sizes = bench_sizes(&o, sizes, 32);
    s.src = malloc(o.max_bytes);
    s.dst = malloc(o.max_bytes);
    s.staging = malloc(o.max_bytes);
    memset(s.src, 0, o.max_bytes);
    memset(s.dst, 0, o.max_bytes);
    memset(s.staging, 0, o.max_bytes);
    for (int i = 0; i < n_sizes; i++) {
        s.bytes = sizes[i];
        size_t w = WINDOW_BYTES / s.bytes;
        s.window = w < 1 ? 1 : w > 256 ? 256 : (int)w;
        if (o.quick && s.window > 32)
            s.window = 32;
        measure(&o, "buffer_stream", "tshmem", run_stream, 0, &s);
        measure(&o, "buffer_stream", "mpi", run_mpi_stream, 0, &s);
        measure(&o, "buffer_zero_copy", "tshmem", run_zero_copy, 1, &s);
        measure(&o, "buffer_zero_copy", "mpi", run_mpi_produce_send, 1, &s);
        measure(&o, "buffer_produce_send", "tshmem", run_produce_send, 1, &s);
    }
    tshmem_buffer_destroy(s.buf);
    free(s.src), free(s.dst), free(s.staging);
    tshmem_finalize();
    MPI_Finalize();
    return 0;
}
