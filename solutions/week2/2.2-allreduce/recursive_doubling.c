/* recursive_doubling.c: the recursive-doubling allreduce, with the fix-up for team sizes that
 * are not a power of two.
 *
 * Chapter 2.2. With p = 2^k PEs, round r pairs PE i with PE i XOR 2^r; the two swap their
 * whole partial result and both combine. After k rounds each PE holds the sum of all p. It
 * moves the whole vector every round (k * bytes per PE), so it is for small and middling
 * messages, where k rounds beat the ring's 2(n - 1) steps.
 *
 * Team sizes between powers of two: let p be the largest power of two <= n. The n - p "extra"
 * PEs (team numbers p .. n-1) first hand their source to a "core" PE (extra e to core e - p),
 * sit out the rounds, and receive the core's final result at the end.
 *
 * Where the data lands: the partner puts into this PE's scratch, which is cut into slots: two
 * per round (pieces alternate between them) and one for the extra's data. A partner writes
 * only after it has seen this PE's from[] word say "entered this call".
 *
 * Small calls, those that fit a slot of the team's eager area (cut as the scratch is, from
 * TSHMEM_RD_EAGER_BYTES), land there instead: no other algorithm and no other team uses it, so
 * they send no entry signal, and the partner's data comes with its first message. Across nodes
 * that is one hop per round instead of two.
 */
#define TSHMEM_CHAPTER "2.2"
#include <string.h>

#include "tshmem_internal.h"

int tshmem_allreduce_recursive_doubling(const struct tshmem_reduce_call *c)
{
    /* BEGIN SOLUTION (Recursive doubling): fix-up in, log2(p) rounds of put_signal into the partner's scratch slot (or its eager area's, for a call that fits one, with no entry signal) and combine, fix-up out; pieces of one slot */
    int n = c->n, me = c->me, p = 1, rounds = 0;
    while (p * 2 <= n)
        p *= 2, rounds++;
    int core = me >= p ? me - p : -1;       /* I am an extra: this core works for me */
    int extra = me + p < n ? me + p : -1;   /* I am a core with an extra to serve */
    /* Slots: round r, piece parity x at 2r + x; the extra's data in the last one. Each slot a
     * multiple of 64 bytes, so a multiple of every element size. */
    size_t slot = TSHMEM_SCRATCH_BYTES / (size_t)(2 * rounds + 1) / 64 * 64;
    char *scratch = tshmem_g.reserved->scratch, *fixup = scratch + (size_t)(2 * rounds) * slot;
    struct tshmem_coll_flags *f = c->flags;
    uint64_t entered = tshmem_coll_tag(c->seq, 0);
    /* A small call: one piece, into the team's eager area, cut the same way (the fix-up slot
     * only where there are extras), at its own parity: the number of small calls this team has
     * made, the same on every PE (they make the same calls with the same sizes). */
    static uint64_t eager_calls[TSHMEM_MAX_TEAMS];
    int eager_slots = 2 * rounds + (n > p); /* 0 on one PE, which sends nothing */
    size_t eager_slot = TSHMEM_RD_EAGER_BYTES / (size_t)(eager_slots ? eager_slots : 1) / 64 * 64;
    int eager = c->bytes <= eager_slot;
    uint64_t turn = 0; /* added to the piece number: which of a round's two slots */
    if (eager) {
        turn = eager_calls[c->team]++;
        slot = eager_slot;
        scratch = tshmem_g.reserved->rd_eager[c->team].area;
        fixup = scratch + (size_t)(2 * rounds) * slot;
    }

    if (core < 0 && c->dest != c->source)
        memcpy(c->dest, c->source, c->bytes); /* the partial result lives in dest */
    /* Entry: tell everyone who will write into my scratch that it is free for this call. A
     * small call needs none: my eager area is free whenever a partner may write into it. */
    if (!eager && core >= 0) {
        tshmem_signal_op(&f->from[me], entered, TSHMEM_SIGNAL_SET, c->t->pes[core]);
    } else if (!eager) {
        for (int r = 0; r < rounds; r++)
            tshmem_signal_op(&f->from[me], entered, TSHMEM_SIGNAL_SET, c->t->pes[me ^ (1 << r)]);
        if (extra >= 0)
            tshmem_signal_op(&f->from[me], entered, TSHMEM_SIGNAL_SET, c->t->pes[extra]);
    }

    uint64_t piece = 0;
    for (size_t off = 0; off < c->bytes; off += slot, piece++) {
        size_t len = c->bytes - off < slot ? c->bytes - off : slot, cnt = len / c->elem;
        uint64_t step = tshmem_coll_tag(c->seq, piece + 1);
        char *acc = c->dest + off;
        if (core >= 0) {
            /* An extra: hand this piece to the core, then wait for the result in my dest. The
             * next piece goes only after the result, so one fix-up slot is enough. */
            if (!eager)
                tshmem_uint64_wait_until(&f->from[core], TSHMEM_CMP_GE, entered);
            tshmem_putmem_signal(fixup, c->source + off, len, &f->extra[0].value, step,
                                 TSHMEM_SIGNAL_SET, c->t->pes[core]);
            tshmem_uint64_wait_until(&f->extra[1].value, TSHMEM_CMP_GE, step);
            continue;
        }
        if (extra >= 0) {
            tshmem_uint64_wait_until(&f->extra[0].value, TSHMEM_CMP_GE, step);
            tshmem_reduce_local(c->dtype, c->op, acc, fixup, cnt);
        }
        for (int r = 0; r < rounds; r++) {
            int partner = me ^ (1 << r);
            /* Two slots per round: the partner can be one piece (or small call) ahead of me,
             * never two (it needs my piece q + 1 before it can send piece q + 2). */
            char *in = scratch + (size_t)(2 * r + (int)((piece + turn) % 2)) * slot;
            if (!eager)
                tshmem_uint64_wait_until(&f->from[partner], TSHMEM_CMP_GE, entered);
            tshmem_putmem_signal(in, acc, len, &f->round[r].value, step, TSHMEM_SIGNAL_SET,
                                 c->t->pes[partner]);
            tshmem_uint64_wait_until(&f->round[r].value, TSHMEM_CMP_GE, step);
            tshmem_reduce_local(c->dtype, c->op, acc, in, cnt);
        }
        if (extra >= 0) /* the extra is waiting in the call: its dest is ours to write */
            tshmem_putmem_signal(acc, acc, len, &f->extra[1].value, step, TSHMEM_SIGNAL_SET,
                                 c->t->pes[extra]);
    }
    return 0;
    /* END SOLUTION */
}
