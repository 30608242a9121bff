/* alltoall.c: tshmem_alltoallmem: block j of team PE i's source lands in block i of PE j's dest.
 *
 * Chapter 3.1. The even all-to-all, the exchange that expert parallelism is built on before its
 * blocks become uneven. Every PE sends a different block to every peer, so there is nothing to
 * forward and nothing to combine: each PE puts block j of its source straight into block `me`
 * of PE j's dest, one hop, n - 1 puts per PE, all PEs at once.
 *
 * The one hard part is the same as in chapter 2.3: calls follow each other with no barrier, and
 * the program reads its dest between them. A PE may write into a peer's dest only after that
 * peer has said "I am in this call" (a credit in from[me] on the writer), and it returns only
 * when every block meant for its dest is there. So every write into your dest happens while you
 * are inside the call, never while your program is still reading the previous result.
 */
#define TSHMEM_CHAPTER "3.1"
#include <string.h>

#include "tshmem_internal.h"

#define tag    tshmem_collect_tag
#define CREDIT TSHMEM_COLLECT_CREDIT
#define DATA   TSHMEM_COLLECT_DATA

/* BEGIN SOLUTION (Checking the arguments): helpers: how many calls this PE has made on each team */
/* How many alltoallmem calls this PE has made on each team handle. Every member makes the same
 * calls on a team in the same order, so the numbers agree without a word being exchanged. */
static uint64_t calls_on_team[TSHMEM_MAX_TEAMS];
/* END SOLUTION */

/* Provided: stops unless [addr, addr + nbytes) lies inside one live tshmem_malloc block. */
void tshmem_alltoall_check_room(const char *func, const char *what, const void *addr,
                                size_t nbytes)
{
    char need[32], room[32];
    tshmem_check_symmetric(func, what, addr, nbytes);
    size_t offset = (size_t)((const char *)addr - tshmem_g.slice);
    if (offset < TSHMEM_RESERVED_BYTES)
        tshmem_fail(func, "%s %p lies in the runtime's reserved area. Pass memory from "
                    "tshmem_malloc.", what, addr);
    for (const struct tshmem_block *b = tshmem_g.blocks; b; b = b->next) {
        if (offset < b->offset || offset - b->offset >= b->size)
            continue;
        if (!b->used)
            tshmem_fail(func, "%s %p is in free heap memory (freed, or never allocated).", what,
                        addr);
        size_t left = b->size - (offset - b->offset);
        if (nbytes > left)
            tshmem_fail(func, "%s %p is too small: this call needs %s there (team size x "
                        "nbytes), but its tshmem_malloc block has room for %s from that address.",
                        what, addr, tshmem_bytes_str(nbytes, need, sizeof need),
                        tshmem_bytes_str(left, room, sizeof room));
        return;
    }
}

int tshmem_alltoallmem(tshmem_team_t team, void *dest, const void *source, size_t nbytes)
{
    const char *func = __func__;
    tshmem_require_live(func);
    tshmem_check_team(func, team);
    const struct tshmem_team *t = &tshmem_g.teams[team];
    if (t->my_pe < 0)
        tshmem_fail(func, "this PE is not a member of team %d: only its %d members may call a "
                    "collective on it.", team, t->n_pes);
    /* BEGIN SOLUTION (Checking the arguments): number the call; check the team size, the sizes, dest and source (symmetric, room for n blocks, no overlap); a team of one copies */
    int n = t->n_pes, me = t->my_pe;
    char *d = dest;
    const char *s = source;
    uint64_t seq = ++calls_on_team[team];
    if (n > TSHMEM_COLL_MAX_PES)
        tshmem_fail(func, "team %d has %d PEs; tshmem_alltoallmem keeps one flag word per PE and "
                    "handles at most %d.", team, n, TSHMEM_COLL_MAX_PES);
    if (nbytes > SIZE_MAX / (size_t)n)
        tshmem_fail(func, "nbytes %zu times the team's %d PEs does not fit in size_t.", nbytes, n);
    size_t total = nbytes * (size_t)n;
    if (nbytes == 0)
        return 0; /* every member returns here alike: nbytes is the same on all of them */
    tshmem_alltoall_check_room(func, "dest", dest, total);
    /* source must be symmetric too (API.md), though only this PE reads it: a source that is
     * not is almost always a private buffer passed by mistake for dest's partner. */
    tshmem_alltoall_check_room(func, "source", source, total);
    if (s < d + total && d < s + total)
        tshmem_fail(func, "source %p overlaps dest %p (%zu bytes each): an all-to-all cannot "
                    "run in place, because a peer's block would overwrite a block of yours that "
                    "you have not sent yet. Pass separate buffers.", source, dest, total);
    if (n == 1) {
        memcpy(d, s, nbytes);
        return 0;
    }
    /* END SOLUTION */
    /* BEGIN SOLUTION (All-to-all): credit every peer, copy your own block, put block j into team PE j's dest as soon as its credit is here, wait for every peer's block */
    struct tshmem_alltoall_flags *f = &tshmem_g.reserved->alltoall[team];
    /* Credits first: from now on every peer may write into my dest. from[me] on a peer has
     * one writer, me, and only grows: CREDIT, DATA, then the next call's CREDIT. */
    for (int j = 0; j < n; j++)
        if (j != me)
            tshmem_signal_op(&f->from[me], tag(seq, CREDIT), TSHMEM_SIGNAL_SET, t->pes[j]);
    memcpy(d + (size_t)me * nbytes, s + (size_t)me * nbytes, nbytes);
    /* Serve whichever peer is ready, starting after me so that not everybody writes into PE 0
     * first. A late PE delays only its own block. */
    unsigned char served[TSHMEM_COLL_MAX_PES] = {0};
    struct tshmem_spin spin;
    tshmem_spin_init(&spin, func, f->from);
    for (int left = n - 1; left > 0;) {
        int progressed = 0;
        for (int step = 1; step < n; step++) {
            int j = (me + step) % n;
            if (served[j] || !tshmem_uint64_test(&f->from[j], TSHMEM_CMP_GE, tag(seq, CREDIT)))
                continue;
            /* The signal's release store makes the block visible before DATA is. */
            tshmem_putmem_signal(d + (size_t)me * nbytes, s + (size_t)j * nbytes, nbytes,
                                 &f->from[me], tag(seq, DATA), TSHMEM_SIGNAL_SET, t->pes[j]);
            served[j] = 1;
            left--;
            progressed = 1;
        }
        if (!progressed)
            tshmem_spin_pause(&spin);
    }
    /* Every block meant for my dest has arrived: only now may I return. */
    for (int j = 0; j < n; j++)
        if (j != me)
            tshmem_signal_wait_until(&f->from[j], TSHMEM_CMP_GE, tag(seq, DATA));
    return 0;
    /* END SOLUTION */
}
