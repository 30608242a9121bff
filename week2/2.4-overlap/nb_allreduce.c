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
    (void)c; (void)f; (void)k;
    TSHMEM_TODO("The algorithm", "set grant[me] = k on every team PE, me included");
}

/* Reduce-scatter, sending half: my segment j of chunk ch goes to team PE j's landing buffer. */
static void send_pieces(const struct tshmem_reduce_call *c, struct tshmem_nb_flags *f,
                        const struct chunk *ch)
{
    (void)c; (void)f; (void)ch;
    TSHMEM_TODO("The algorithm", "for every team PE j (me too) whose segment is not empty: wait for its grant of this chunk, then put my segment j into its landing buffer at my slot, with signal piece[me] = k");
}

/* Sums my segment of chunk ch from the n pieces, in team order, into my dest. */
static void sum_my_segment(const struct tshmem_reduce_call *c, struct tshmem_nb_flags *f,
                           const struct chunk *ch)
{
    (void)c; (void)f; (void)ch;
    TSHMEM_TODO("The algorithm", "unless my segment is empty: wait until every piece[j] >= k, then dest segment me = piece 0 (op) piece 1 ... (op) piece n-1");
}

/* Allgather: my sum of chunk ch goes to the same place in every other team PE's dest. */
static void send_sum(const struct tshmem_reduce_call *c, struct tshmem_nb_flags *f,
                     const struct chunk *ch)
{
    (void)c; (void)f; (void)ch;
    TSHMEM_TODO("The algorithm", "unless my segment is empty: put my dest segment to every other team PE's dest, with signal gather[me] = k");
}

/* Waits until every other team PE's sum of chunk ch is in my dest. */
static void wait_sums(const struct tshmem_reduce_call *c, struct tshmem_nb_flags *f,
                      const struct chunk *ch)
{
    (void)c; (void)f; (void)ch;
    TSHMEM_TODO("The algorithm", "wait until gather[j] >= k for every other team PE j whose segment is not empty");
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
    (void)c; (void)f; (void)k;
    TSHMEM_TODO("Small calls: recursive doubling", "grant chunk k to the PEs that will put into me; gather every team PE's vector into slot j of the landing buffer k % 2 (the extra's by its core, then log2(p) rounds that double the blocks held, then the result back to the extra); sum the slots in team order");
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
