/* reducescatter.c: tshmem_TYPE_sum_reducescatter, by direct loads and around a ring.
 *
 * Chapter 3.4. source holds one block of nreduce elements for every team PE; team PE i ends
 * with the sum over the team of everyone's block i. It is the first half of the allreduce of
 * 2.2 (two-shot and ring both begin with it), and the collective ZeRO is made of: each PE
 * keeps only its shard of the summed gradient, so it needs only its block of the sum.
 *
 *   direct  Every PE loads its own block from every peer's source (the shared segment, as
 *           NVLink does) and adds them in team order 0, 1, ..., n-1. One round of "my source
 *           is ready" flags before, one of "I have finished reading yours" after, each PE's
 *           flag published in its own memory for the others to read. Each PE reads (n-1)/n
 *           of the vector once: the least any reduce-scatter moves.
 *   ring    Partial sums travel round the ring through the successor's scratch: in step j,
 *           team PE i sends its partial of block (i - j - 1) mod n to PE i+1, which adds its
 *           own block and passes it on; after n-1 steps PE i holds block i. Block b is added in
 *           the order b+1, b+2, ..., b: fixed, so repeated calls give the same bits, but not
 *           the direct order (the two agree on 1 and 2 PEs only). Each PE talks to one
 *           neighbour only, which is what a ring of network links wants.
 *
 * Both reuse 2.2's machinery: tshmem_reduce_begin numbers the call on the team's reduce
 * sequence and its flags, so reduce-scatters and allreduces interleave freely with no reset.
 */
#define TSHMEM_CHAPTER "3.4"
#include <string.h>

#include "tshmem_internal.h"

#define RS_PIECE (16u << 10) /* bytes added at a time by direct: the partial sum stays in L1 */
#define RS_SLOTS 8           /* ring: chunks in flight between two neighbours, 128 KiB each */

/* Provided: one call, checked. Every team PE describes the same call: the whole source
 * (n x nreduce elements) is the vector that tshmem_reduce_begin sees. */
struct rs_call {
    struct tshmem_reduce_call c; /* c.source: the whole source; c.count: n x nreduce */
    char *dest;                  /* my block of the sum */
    size_t block;                /* bytes per block: nreduce x elem */
};

static void rs_begin(struct rs_call *r, const char *func, tshmem_team_t team, void *dest,
                     const void *source, size_t nreduce, enum tshmem_dtype dtype)
{
    tshmem_require_live(func);
    tshmem_check_team(func, team);
    /* BEGIN SOLUTION (Checking the call): membership, sizes, both buffers symmetric and big enough, in place refused; then tshmem_reduce_begin on the whole source */
    const struct tshmem_team *t = &tshmem_g.teams[team];
    if (t->my_pe < 0)
        tshmem_fail(func, "PE %d is not a member of team %d, so it has no block of the sum to "
                    "receive. Call it only on the team's PEs (tshmem_team_my_pe(team) >= 0).",
                    tshmem_g.my_pe, team);
    size_t elem = tshmem_dtype_size(dtype), n = (size_t)t->n_pes;
    if (elem == 0)
        tshmem_fail(func, "dtype %d is not one of TSHMEM_DTYPE_FLOAT, _DOUBLE, _INT64.",
                    (int)dtype);
    if (nreduce > TSHMEM_REDUCE_MAX_BYTES / elem / n)
        tshmem_fail(func, "nreduce %zu x %zu PEs x %zu bytes is more than one call takes (2 GiB "
                    "of source): nreduce counts the elements of one block, not of the whole "
                    "source.", nreduce, n, elem);
    size_t block = nreduce * elem;
    if (block > 0) {
        /* The source must hold a block for every team PE: a size that does not split into n
         * equal blocks shows up here as a source too small for n x nreduce. */
        tshmem_collect_check_room(func, "source", source, block * n);
        tshmem_collect_check_room(func, "dest", dest, block);
        const char *d = dest, *s = source;
        if (d < s + block * n && s < d + block)
            tshmem_fail(func, "dest %p lies inside source %p (%zu blocks of %zu bytes): a "
                        "reduce-scatter cannot run in place, because the peers are still reading "
                        "your source while your block of the sum is written. Pass a separate "
                        "dest of nreduce elements.", dest, source, n, block);
    }
    /* One reduce call over the whole source: it takes a number of the team's sequence and the
     * team's flags, and checks source once more (it passes: dest = source there). */
    tshmem_reduce_begin(&r->c, func, team, (void *)(uintptr_t)source, source, nreduce * n, dtype,
                        TSHMEM_OP_SUM);
    r->dest = dest;
    r->block = block;
    /* END SOLUTION */
}

/* Direct's flags, pulled rather than pushed on one node: step `step` of the call goes into my
 * own word from[me] in my own slice (nobody else writes it there), and I read every peer's own
 * word where it lies. Each PE writes one line and reads n - 1. Pushed (2.2's announce), each PE
 * writes its word into the same line of every peer's from[], and n - 1 writers queue for each
 * line. Across nodes a peer's word is a network get away: there, 2.2's announce and wait. */
static inline void rs_announce(const struct tshmem_reduce_call *c, uint64_t step)
{
    /* BEGIN SOLUTION (Publishing a step): on one node (c->on_node), store tag(seq, step) into my own from[me] with release; across nodes, 2.2's announce */
    if (!c->on_node) {
        tshmem_reduce_announce(c, step);
        return;
    }
    __atomic_store_n(&c->flags->from[c->me], tshmem_coll_tag(c->seq, step), __ATOMIC_RELEASE);
    /* END SOLUTION */
}

static inline void rs_wait_all(const struct tshmem_reduce_call *c, uint64_t step)
{
    /* BEGIN SOLUTION (Publishing a step): on one node, wait until every other team PE's own from[j], read in its slice (tshmem_ptr), is at least tag(seq, step), with acquire and tshmem_spin_pause; across nodes, 2.2's wait */
    if (!c->on_node) {
        tshmem_reduce_wait_all(c, step);
        return;
    }
    uint64_t want = tshmem_coll_tag(c->seq, step);
    for (int j = 0; j < c->n; j++) {
        if (j == c->me)
            continue;
        const uint64_t *w = tshmem_ptr(&c->flags->from[j], c->t->pes[j]);
        struct tshmem_spin spin;
        tshmem_spin_init(&spin, c->func, &c->flags->from[j]);
        while (__atomic_load_n(w, __ATOMIC_ACQUIRE) < want)
            tshmem_spin_pause(&spin);
    }
    /* END SOLUTION */
}

static int rs_direct(const struct rs_call *r)
{
    /* BEGIN SOLUTION (Direct): publish step 0 and wait for all (rs_announce, rs_wait_all); my block of source 0, then add every other PE's in team order, piece by piece; publish step 1 (done reading) and wait */
    const struct tshmem_reduce_call *c = &r->c;
    _Alignas(64) char bounce[RS_PIECE]; /* used only for a peer on another node */
    size_t lo = r->block * (size_t)c->me;
    rs_announce(c, 0); /* step 0: my source is ready */
    rs_wait_all(c, 0);
    for (size_t off = 0; off < r->block; off += RS_PIECE) {
        size_t len = r->block - off < RS_PIECE ? r->block - off : RS_PIECE;
        const char *at = c->source + lo + off;
        /* Team order, always: 2.4's non-blocking allreduce adds in the same order, so ZeRO's
         * gradients equal data parallelism's bit for bit. */
        memcpy(r->dest + off, tshmem_reduce_peek(c, 0, at, len, bounce), len);
        for (int j = 1; j < c->n; j++)
            tshmem_reduce_local(c->dtype, TSHMEM_OP_SUM, r->dest + off,
                                tshmem_reduce_peek(c, j, at, len, bounce), len / c->elem);
    }
    rs_announce(c, 1); /* step 1: I have finished reading your source */
    rs_wait_all(c, 1);
    return 0;
    /* END SOLUTION */
}

static int rs_ring(const struct rs_call *r)
{
    /* BEGIN SOLUTION (Ring): give credits; for every chunk of a block, n-1 steps: send my partial into the successor's scratch slot, receive the predecessor's and add my own block to it */
    const struct tshmem_reduce_call *c = &r->c;
    int n = c->n, me = c->me;
    if (n == 1) {
        memcpy(r->dest, c->source, r->block);
        return 0;
    }
    struct tshmem_coll_flags *f = c->flags;
    char *scratch = tshmem_g.reserved->scratch;
    size_t slot = TSHMEM_SCRATCH_BYTES / RS_SLOTS;
    size_t K = (r->block + slot - 1) / slot; /* chunks per block */
    int succ = c->t->pes[(me + 1) % n], pred = c->t->pes[(me + n - 1) % n];
    static _Alignas(64) char partial[TSHMEM_SCRATCH_BYTES / RS_SLOTS]; /* the next one I send */
    uint64_t k = 0; /* chunks sent so far = chunks received so far */
    /* My scratch is free: my predecessor may fill the first RS_SLOTS slots. */
    tshmem_signal_op(&f->ring_ack.value, tshmem_coll_tag(c->seq, 0), TSHMEM_SIGNAL_SET, pred);
    /* Chunk by chunk, all n-1 steps of a chunk in a row: the partial I receive in step j is
     * the one I send in step j + 1, so one chunk of private memory holds it. */
    for (size_t i = 0; i < K; i++) {
        size_t lo = i * slot, len = r->block - lo < slot ? r->block - lo : slot;
        for (int j = 0; j < n - 1; j++, k++) {
            int send = ((me - j - 1) % n + n) % n, recv = ((me - j - 2) % n + n) % n;
            char *slot_at = scratch + (k % RS_SLOTS) * slot;
            uint64_t need = k >= RS_SLOTS ? k - RS_SLOTS + 1 : 0;
            tshmem_uint64_wait_until(&f->ring_ack.value, TSHMEM_CMP_GE,
                                     tshmem_coll_tag(c->seq, need));
            const char *out = j == 0 ? c->source + (size_t)send * r->block + lo : partial;
            tshmem_putmem_signal(slot_at, out, len, &f->ring_data.value,
                                 tshmem_coll_tag(c->seq, k + 1), TSHMEM_SIGNAL_SET, succ);
            tshmem_uint64_wait_until(&f->ring_data.value, TSHMEM_CMP_GE,
                                     tshmem_coll_tag(c->seq, k + 1));
            /* The received partial plus my own block: into my dest at the last step. */
            char *into = j == n - 2 ? r->dest + lo : partial;
            tshmem_reduce_local3(c->dtype, TSHMEM_OP_SUM, into, slot_at,
                                 c->source + (size_t)recv * r->block + lo, len / c->elem);
            tshmem_signal_op(&f->ring_ack.value, tshmem_coll_tag(c->seq, k + 1),
                             TSHMEM_SIGNAL_SET, pred);
        }
    }
    /* My source may be reused once the successor has consumed every chunk I sent: the puts
     * copied it (putmem returns when the bytes are delivered), so nothing more to wait for. */
    return 0;
    /* END SOLUTION */
}

/* The algorithm TSHMEM_ALGO_AUTO runs: every member picks the same, from collective facts. */
static enum tshmem_algo select_algo(const struct rs_call *r)
{
    /* BEGIN SOLUTION (The selector): pick direct or ring from your measurements (bench_3_4), on facts every member shares */
    /* Measured with bench_3_4 (both algorithms forced, same run): direct won at every size on 2 PEs
 * of a 2-core machine and on 8 and 16 PEs of a 16-core one, where a PE's loads of its block
 * from every peer go at the memory's speed and the ring's n-1 hops each copy the data twice
 * (into the scratch, then out into the sum). The ring is for teams that span nodes, where a
 * direct load is a network get from every peer and the ring talks to one neighbour. */
    return r->c.on_node ? TSHMEM_ALGO_DIRECT : TSHMEM_ALGO_RING;
    /* END SOLUTION */
}

/* Opens the call (TSHMEM_COLLECTIVE: the team's flags and scratch are the runtime's own until
 * it returns, and every PE's nreduce and dtype are compared), then checks and runs it. */
static int reducescatter(const char *func, enum tshmem_fn fn, tshmem_team_t team, void *dest,
                         const void *source, size_t nreduce, enum tshmem_dtype dtype,
                         enum tshmem_algo algo)
{
    TSHMEM_COLLECTIVE(fn, team, nreduce, dtype, TSHMEM_OP_SUM);
    if (algo != TSHMEM_ALGO_AUTO && algo != TSHMEM_ALGO_DIRECT && algo != TSHMEM_ALGO_RING)
        tshmem_fail(func, "algo %d is not a reduce-scatter algorithm: use TSHMEM_ALGO_AUTO, "
                    "_DIRECT or _RING.", (int)algo);
    struct rs_call r;
    rs_begin(&r, func, team, dest, source, nreduce, dtype);
    if (nreduce == 0)
        return 0; /* nothing to add: no PE needs to hear from another */
    if (algo == TSHMEM_ALGO_AUTO)
        algo = select_algo(&r);
    return algo == TSHMEM_ALGO_RING ? rs_ring(&r) : rs_direct(&r);
}

int tshmem_reducescatter(tshmem_team_t team, void *dest, const void *source, size_t nreduce,
                         enum tshmem_dtype dtype, enum tshmem_algo algo)
{
    return reducescatter(__func__, TSHMEM_FN_REDUCESCATTER, team, dest, source, nreduce, dtype,
                         algo);
}

int tshmem_float_sum_reducescatter(tshmem_team_t team, float *dest, const float *source,
                                   size_t nreduce)
{
    return reducescatter(__func__, TSHMEM_FN_FLOAT_SUM_REDUCESCATTER, team, dest, source,
                         nreduce, TSHMEM_DTYPE_FLOAT, TSHMEM_ALGO_AUTO);
}

int tshmem_double_sum_reducescatter(tshmem_team_t team, double *dest, const double *source,
                                    size_t nreduce)
{
    return reducescatter(__func__, TSHMEM_FN_DOUBLE_SUM_REDUCESCATTER, team, dest, source,
                         nreduce, TSHMEM_DTYPE_DOUBLE, TSHMEM_ALGO_AUTO);
}
