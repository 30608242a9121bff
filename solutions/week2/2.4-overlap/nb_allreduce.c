/* nb_allreduce.c: the allreduce the progress thread runs for a non-blocking request.
 *
 * Chapter 2.4. A two-shot allreduce made of puts, so that nothing waits on the program's
 * thread: the vector goes in chunks; in chunk k, team PE j owns segment j. Every PE puts its
 * segment j into PE j's landing zone (reduce-scatter), PE j adds the n pieces in team order
 * 0, 1, ..., n-1 and puts the sum into segment j of every PE's dest (allgather). One PE sums
 * each segment, so every PE ends with the same bits.
 *
 * The landing zone (tshmem_g.reserved->nb_landing) has two buffers: chunk k lands in buffer
 * k % 2, and sender i's piece sits at offset i * piece_bytes(n) in it. Three flag words per
 * team PE say where a chunk stands; they carry chunk numbers, which only grow:
 *   grant[i]   "team PE i's buffer for chunk k is free": nobody puts a piece before this.
 *              The landing zone is shared by every team, so a PE grants only inside a call:
 *              chunks k and k + 1 when the call starts, chunk k + 2 once it has summed k.
 *   piece[i]   "team PE i's piece of chunk k is in your landing zone".
 *   gather[i]  "team PE i's sum of chunk k is in your dest".
 * Double buffering is what lets a PE send chunk k + 1's pieces before chunk k's sums have
 * arrived: the two steps of neighbouring chunks overlap.
 *
 * Small calls (the n vectors together up to TSHMEM_NB_RD_BYTES) take recursive doubling
 * instead: log2 n rounds with one partner each, where the two-shot has every PE flag every
 * other PE three times (at 16 PEs and 128 bytes, 47 flags against 4 rounds). The rounds
 * gather the vectors and every PE adds them in team order: the two-shot's bits. The same words
 * serve: grant[i] from the PEs that will put into me only, piece[i] from each round's partner
 * (and from my extra), gather[i] from my core, all carrying the call's one chunk number.
 */
#define TSHMEM_CHAPTER "2.4"
#include <string.h>

#include "tshmem_internal.h"

/* Bytes of one sender's piece in a landing buffer: an equal share, whole cache lines. */
static size_t piece_bytes(int n)
{
    return (TSHMEM_NB_LANDING_BYTES / (size_t)n) & ~(size_t)(TSHMEM_CACHE_LINE - 1);
}

size_t tshmem_nb_chunks(size_t bytes, size_t elem, int n)
{
    size_t per_chunk = piece_bytes(n) / elem * (size_t)n; /* elements */
    size_t count = bytes / elem;
    return (count + per_chunk - 1) / per_chunk;
}

/* Provided: where chunk k of a call lies, and team PE j's segment of it (in elements). */
struct chunk {
    uint64_t k;        /* its chunk number: the value its flags carry */
    char *landing;     /* my landing buffer for it: nb_landing[k % 2] */
    size_t off, len;   /* elements [off, off + len) of the vector */
    size_t seg;        /* elements per segment: the last ones may be shorter or empty */
};

static struct chunk chunk_at(const struct tshmem_request *req, uint64_t k)
{
    const struct tshmem_reduce_call *c = &req->call;
    size_t per_chunk = piece_bytes(c->n) / c->elem * (size_t)c->n;
    size_t off = (size_t)(k - c->seq) * per_chunk;
    size_t len = c->count - off < per_chunk ? c->count - off : per_chunk;
    return (struct chunk){.k = k, .landing = tshmem_g.reserved->nb_landing[k % 2], .off = off,
                          .len = len, .seg = (len + (size_t)c->n - 1) / (size_t)c->n};
}

static inline size_t seg_start(const struct chunk *ch, int j)
{
    size_t s = (size_t)j * ch->seg;
    return s < ch->len ? s : ch->len;
}

static inline size_t seg_len(const struct chunk *ch, int j)
{
    size_t end = seg_start(ch, j) + ch->seg;
    return (end < ch->len ? end : ch->len) - seg_start(ch, j);
}

/* Tells every team PE (me too) that my landing buffers are free up to chunk number k. */
static void grant(const struct tshmem_reduce_call *c, struct tshmem_nb_flags *f, uint64_t k)
{
    /* BEGIN SOLUTION (The algorithm): set grant[me] = k on every team PE, me included */
    /* SET with release (tshmem_signal_op): my reads of the buffer's previous chunk are done
     * before any peer can see the grant and overwrite it. */
    for (int j = 0; j < c->n; j++)
        tshmem_signal_op(&f->grant[c->me], k, TSHMEM_SIGNAL_SET, c->t->pes[j]);
    /* END SOLUTION */
}

/* Reduce-scatter, sending half: my segment j of chunk ch goes to team PE j's landing buffer. */
static void send_pieces(const struct tshmem_reduce_call *c, struct tshmem_nb_flags *f,
                        const struct chunk *ch)
{
    /* BEGIN SOLUTION (The algorithm): for every team PE j (me too) whose segment is not empty: wait for its grant of this chunk, then put my segment j into its landing buffer at my slot, with signal piece[me] = k */
    size_t slot = piece_bytes(c->n) * (size_t)c->me;
    for (int j = 0; j < c->n; j++) {
        size_t bytes = seg_len(ch, j) * c->elem;
        /* An empty segment (a vector shorter than the team): its owner knows it from the
         * sizes and waits for nothing, so nothing goes there. At 16 PEs and 8 bytes, 14 of
         * the 16 owners have nothing: three rounds of 16 flags become a few. */
        if (bytes == 0)
            continue;
        tshmem_uint64_wait_until(&f->grant[j], TSHMEM_CMP_GE, ch->k);
        const char *src = c->source + (ch->off + seg_start(ch, j)) * c->elem;
        tshmem_putmem_signal_nbi(ch->landing + slot, src, bytes, &f->piece[c->me], ch->k,
                                 TSHMEM_SIGNAL_SET, c->t->pes[j]);
    }
    /* END SOLUTION */
}

/* Sums my segment of chunk ch from the n pieces, in team order, into my dest. */
static void sum_my_segment(const struct tshmem_reduce_call *c, struct tshmem_nb_flags *f,
                           const struct chunk *ch)
{
    /* BEGIN SOLUTION (The algorithm): unless my segment is empty: wait until every piece[j] >= k, then dest segment me = piece 0 (op) piece 1 ... (op) piece n-1 */
    size_t len = seg_len(ch, c->me), piece = piece_bytes(c->n);
    if (len == 0)
        return; /* nobody sent me anything for this chunk */
    /* GE: a PE that is faster may already have put its piece of the next chunk (other buffer). */
    for (int j = 0; j < c->n; j++)
        tshmem_uint64_wait_until(&f->piece[j], TSHMEM_CMP_GE, ch->k);
    char *out = c->dest + (ch->off + seg_start(ch, c->me)) * c->elem;
    /* My own source segment was copied into my own slot like everybody's, so the sum never
     * reads source after writing dest: in place is safe. */
    memcpy(out, ch->landing, len * c->elem);
    for (int j = 1; j < c->n; j++)
        tshmem_reduce_local(c->dtype, c->op, out, ch->landing + piece * (size_t)j, len);
    /* END SOLUTION */
}

/* Allgather: my sum of chunk ch goes to the same place in every other team PE's dest. */
static void send_sum(const struct tshmem_reduce_call *c, struct tshmem_nb_flags *f,
                     const struct chunk *ch)
{
    /* BEGIN SOLUTION (The algorithm): unless my segment is empty: put my dest segment to every other team PE's dest, with signal gather[me] = k */
    /* Safe to write into a peer's dest: its piece of this chunk reached me, so it is in this
     * call, and (in place) it has already sent the source bytes I overwrite. */
    size_t bytes = seg_len(ch, c->me) * c->elem;
    char *mine = c->dest + (ch->off + seg_start(ch, c->me)) * c->elem;
    for (int j = 0; j < c->n && bytes > 0; j++)
        if (j != c->me)
            tshmem_putmem_signal_nbi(mine, mine, bytes, &f->gather[c->me], ch->k,
                                     TSHMEM_SIGNAL_SET, c->t->pes[j]);
    /* END SOLUTION */
}

/* Waits until every other team PE's sum of chunk ch is in my dest. */
static void wait_sums(const struct tshmem_reduce_call *c, struct tshmem_nb_flags *f,
                      const struct chunk *ch)
{
    /* BEGIN SOLUTION (The algorithm): wait until gather[j] >= k for every other team PE j whose segment is not empty */
    for (int j = 0; j < c->n; j++)
        if (j != c->me && seg_len(ch, j) > 0)
            tshmem_uint64_wait_until(&f->gather[j], TSHMEM_CMP_GE, ch->k);
    /* END SOLUTION */
}

/* Small calls: recursive doubling, as in chapter 2.2, but what travels is the vectors, not their
 * sums: after the rounds every PE holds every team PE's vector, in my landing buffer k % 2 at
 * slot j for team PE j, and adds them in team order 0, 1, ..., n-1, exactly as the two-shot adds
 * each segment. Same bits as the two-shot, on every PE (chapter 3.4 checks it against ZeRO). */
static int small_call(const struct tshmem_request *req)
{
    const struct tshmem_reduce_call *c = &req->call;
    return req->n_chunks == 1 && (size_t)c->n * c->bytes <= TSHMEM_NB_RD_BYTES;
}

static void recursive_doubling(const struct tshmem_reduce_call *c, struct tshmem_nb_flags *f,
                               uint64_t k)
{
    /* BEGIN SOLUTION (Small calls: recursive doubling): grant chunk k to the PEs that will put into me; gather every team PE's vector into slot j of the landing buffer k % 2 (the extra's by its core, then log2(p) rounds that double the blocks held, then the result back to the extra); sum the slots in team order */
    int n = c->n, me = c->me, p = 1, rounds = 0;
    while (p * 2 <= n)
        p *= 2, rounds++;
    int core = me >= p ? me - p : -1;     /* I am an extra: this core works for me */
    int extra = me + p < n ? me + p : -1; /* I am a core with an extra to serve */
    size_t slot = (c->bytes + TSHMEM_CACHE_LINE - 1) & ~(size_t)(TSHMEM_CACHE_LINE - 1);
    char *land = tshmem_g.reserved->nb_landing[k % 2];
    if (core >= 0) {
        /* An extra: my vector to the core's slot me, then its result arrives in my dest. No
         * grant: nobody puts into my landing buffer, and the core writes my dest only after my
         * vector has told it that I am in this call. */
        tshmem_uint64_wait_until(&f->grant[core], TSHMEM_CMP_GE, k);
        tshmem_putmem_signal(land + (size_t)me * slot, c->source, c->bytes, &f->piece[me], k,
                             TSHMEM_SIGNAL_SET, c->t->pes[core]);
        tshmem_uint64_wait_until(&f->gather[core], TSHMEM_CMP_GE, k);
        return;
    }
    /* My buffer is free for chunk k (I run one request at a time): grant it to those who put
     * into it, my round partners and my extra, and nobody else. */
    for (int r = 0; r < rounds; r++)
        tshmem_signal_op(&f->grant[me], k, TSHMEM_SIGNAL_SET, c->t->pes[me ^ (1 << r)]);
    if (extra >= 0)
        tshmem_signal_op(&f->grant[me], k, TSHMEM_SIGNAL_SET, c->t->pes[extra]);
    memcpy(land + (size_t)me * slot, c->source, c->bytes); /* my own block */
    if (extra >= 0)
        tshmem_uint64_wait_until(&f->piece[extra], TSHMEM_CMP_GE, k);
    for (int r = 0; r < rounds; r++) {
        /* Before round r I hold the blocks of the 2^r cores of my aligned group and of their
         * extras: two runs of slots, sent as they lie, the signal with the last. */
        int partner = me ^ (1 << r), base = me & ~((1 << r) - 1), top = base + (1 << r);
        int ex_lo = base + p, ex_hi = top + p < n ? top + p : n;
        char *cores = land + (size_t)base * slot, *extras = land + (size_t)ex_lo * slot;
        tshmem_uint64_wait_until(&f->grant[partner], TSHMEM_CMP_GE, k);
        if (ex_lo < ex_hi) {
            tshmem_putmem(cores, cores, (size_t)(top - base) * slot, c->t->pes[partner]);
            tshmem_putmem_signal(extras, extras, (size_t)(ex_hi - ex_lo) * slot, &f->piece[me],
                                 k, TSHMEM_SIGNAL_SET, c->t->pes[partner]);
        } else {
            tshmem_putmem_signal(cores, cores, (size_t)(top - base) * slot, &f->piece[me], k,
                                 TSHMEM_SIGNAL_SET, c->t->pes[partner]);
        }
        tshmem_uint64_wait_until(&f->piece[partner], TSHMEM_CMP_GE, k);
    }
    /* Every vector is here: add them in team order, as the two-shot adds a segment. The
     * source was copied into slot me before dest is written: in place is safe. */
    memcpy(c->dest, land, c->bytes);
    for (int j = 1; j < n; j++)
        tshmem_reduce_local(c->dtype, c->op, c->dest, land + (size_t)j * slot, c->count);
    if (extra >= 0) /* the extra waits in the call: its dest is ours to write */
        tshmem_putmem_signal(c->dest, c->dest, c->bytes, &f->gather[me], k, TSHMEM_SIGNAL_SET,
                             c->t->pes[extra]);
    /* END SOLUTION */
}

void tshmem_nb_allreduce_run(const struct tshmem_request *req)
{
    /* The request's work, on the progress thread or a waiting program thread: the nb[] flags and
     * landing zone in the reserved area are the runtime's own meanwhile, and a long wait names
     * the call (TSHMEM_COLLECTIVE_WORK; the program's thread recorded the call at its start). */
    TSHMEM_COLLECTIVE_WORK(req->kind == TSHMEM_NB_FCOLLECT ? TSHMEM_FN_FCOLLECTMEM_NB
                                                          : TSHMEM_FN_ALLREDUCE_NB,
                           req->call.team);
    if (req->kind == TSHMEM_NB_FCOLLECT) { /* chapter 3.4's true allgather */
        tshmem_nb_fcollect_run(req);
        tshmem_quiet();
        return;
    }
    const struct tshmem_reduce_call *c = &req->call;
    struct tshmem_nb_flags *f = &tshmem_g.reserved->nb[c->team];
    if (small_call(req)) {
        recursive_doubling(c, f, c->seq); /* its one chunk number */
        tshmem_quiet();
        return;
    }
    uint64_t first = c->seq, last = c->seq + req->n_chunks - 1;
    /* The schedule (provided): which chunk's step runs when. Double buffering is the grant of
     * two chunks at the start and of chunk k + 2 as soon as chunk k is summed, and the pieces
     * of chunk k + 1 sent before waiting for chunk k's sums. */
    grant(c, f, first + 1 <= last ? first + 1 : first); /* both buffers are free */
    struct chunk ch = chunk_at(req, first);
    send_pieces(c, f, &ch);
    for (uint64_t k = first; k <= last; k++) {
        ch = chunk_at(req, k);
        sum_my_segment(c, f, &ch);
        if (k + 2 <= last)
            grant(c, f, k + 2); /* buffer k % 2 is read: the chunk after next may land there */
        send_sum(c, f, &ch);
        if (k + 1 <= last) { /* the overlap: chunk k + 1's pieces travel while k's sums do */
            struct chunk next = chunk_at(req, k + 1);
            send_pieces(c, f, &next);
        }
        wait_sums(c, f, &ch);
    }
    tshmem_quiet(); /* every put of this call is complete before the request says done */
}
