/* calls.c: the collective calls as every PE records them, and what a PE learns by comparing.
 *
 * Provided: you do not need to edit this file. Every collective of the API opens with
 * TSHMEM_COLLECTIVE (tshmem_internal.h), in the code around your task, which comes here:
 *
 *   tshmem_call_enter   (inline, tshmem_internal.h) marks the thread as inside the runtime
 *                       (tshmem_call_now); tshmem_call_record numbers the program's call on its
 *                       team and writes its record: the function and the arguments that every
 *                       PE of the team must pass alike, into this PE's reserved area;
 *   tshmem_call_end     at the end of a call whose arguments changed since this PE's last call
 *                       of the kind, compares its record with one peer's (below: why one will do);
 *   tshmem_call_check_wait  in a long wait, compares with every peer's on this node and names
 *                       those that have not arrived.
 *
 * Collectives must be called by every PE of a team, in the same order, with the same sizes and
 * roots. A PE that does otherwise makes the others wait for signals it never sends, or write
 * past a buffer: the records turn that into a sentence that names both PEs and both calls.
 */
#include <stdio.h>
#include <string.h>

#include "tshmem_internal.h"

_Thread_local struct tshmem_call *tshmem_call_now;

/* What must agree between two PEs' calls: the same kind of collective (a barrier may meet a
 * barrier called by another name, tshmem_calloc a tshmem_malloc), and the arguments named in
 * the table. A call's end compares with a peer (`at_end`): never, when its arguments changed
 * since this PE's last call of the kind and the call moved data (a > 0), or always when it
 * moved data (the allocator's calls, which pay an MPI barrier anyway), or always. */
enum kind {
    BARRIER, ALLOC, FREE, FINALIZE, RING_SHIFT, RING_BROADCAST, RING_TOKEN, RING_PIPELINED,
    REDUCE, FCOLLECT, BROADCAST, REDUCE_NB, FCOLLECT_NB, SPLIT, DESTROY, ALLTOALL,
    REDUCESCATTER, N_KINDS
};
enum at_end { NEVER, ON_CHANGE, IF_MOVED, ALWAYS };

static const struct fn_info {
    const char *name;
    enum kind kind;
    const char *a, *b, *c; /* the arguments a, b, c stand for; NULL: not compared */
    enum at_end at_end;
} fns[TSHMEM_FN_COUNT] = {
    [TSHMEM_FN_BARRIER_ALL] = {"tshmem_barrier_all", BARRIER, NULL, NULL, NULL, NEVER},
    [TSHMEM_FN_BARRIER] = {"tshmem_barrier", BARRIER, NULL, NULL, NULL, NEVER},
    [TSHMEM_FN_SYNC_ALL] = {"tshmem_sync_all", BARRIER, NULL, NULL, NULL, NEVER},
    [TSHMEM_FN_TEAM_SYNC] = {"tshmem_team_sync", BARRIER, NULL, NULL, NULL, NEVER},
    [TSHMEM_FN_MALLOC] = {"tshmem_malloc", ALLOC, "size", "alignment", NULL, IF_MOVED},
    [TSHMEM_FN_CALLOC] = {"tshmem_calloc", ALLOC, "size (count x size)", "alignment", NULL,
                          IF_MOVED},
    [TSHMEM_FN_ALIGN] = {"tshmem_align", ALLOC, "size", "alignment", NULL, IF_MOVED},
    [TSHMEM_FN_FREE] = {"tshmem_free", FREE, "ptr (its heap offset)", NULL, NULL, IF_MOVED},
    [TSHMEM_FN_FINALIZE] = {"tshmem_finalize", FINALIZE, NULL, NULL, NULL, NEVER},
    [TSHMEM_FN_RING_SHIFT] = {"tshmem_ring_shift", RING_SHIFT, "nbytes", NULL, NULL, NEVER},
    [TSHMEM_FN_RING_BROADCAST] = {"tshmem_ring_broadcast", RING_BROADCAST, "nbytes", "pe_root",
                                  NULL, NEVER},
    [TSHMEM_FN_RING_TOKEN] = {"tshmem_ring_token", RING_TOKEN, "laps", NULL, NULL, NEVER},
    [TSHMEM_FN_RING_BROADCAST_PIPELINED] = {"tshmem_ring_broadcast_pipelined", RING_PIPELINED,
                                            "nbytes", "pe_root", "chunk_bytes", NEVER},
    [TSHMEM_FN_ALLREDUCE] = {"tshmem_allreduce", REDUCE, "count", "dtype", "op", ON_CHANGE},
    [TSHMEM_FN_FLOAT_SUM_REDUCE] = {"tshmem_float_sum_reduce", REDUCE, "nreduce", "dtype", "op",
                                    ON_CHANGE},
    [TSHMEM_FN_DOUBLE_SUM_REDUCE] = {"tshmem_double_sum_reduce", REDUCE, "nreduce", "dtype",
                                     "op", ON_CHANGE},
    [TSHMEM_FN_INT64_SUM_REDUCE] = {"tshmem_int64_sum_reduce", REDUCE, "nreduce", "dtype", "op",
                                    ON_CHANGE},
    [TSHMEM_FN_FLOAT_MAX_REDUCE] = {"tshmem_float_max_reduce", REDUCE, "nreduce", "dtype", "op",
                                    ON_CHANGE},
    [TSHMEM_FN_FCOLLECTMEM] = {"tshmem_fcollectmem", FCOLLECT, "nbytes", NULL, NULL, ON_CHANGE},
    [TSHMEM_FN_FCOLLECTMEM_ALGO] = {"tshmem_fcollectmem_algo", FCOLLECT, "nbytes", NULL, NULL,
                                    ON_CHANGE},
    [TSHMEM_FN_BROADCASTMEM] = {"tshmem_broadcastmem", BROADCAST, "nbytes", "pe_root", NULL,
                                ON_CHANGE},
    [TSHMEM_FN_BROADCASTMEM_ALGO] = {"tshmem_broadcastmem_algo", BROADCAST, "nbytes", "pe_root",
                                     NULL, ON_CHANGE},
    [TSHMEM_FN_ALLREDUCE_NB] = {"tshmem_allreduce_nb", REDUCE_NB, "count", "dtype", "op", NEVER},
    [TSHMEM_FN_FCOLLECTMEM_NB] = {"tshmem_fcollectmem_nb", FCOLLECT_NB, "nbytes", NULL, NULL,
                                  NEVER},
    [TSHMEM_FN_TEAM_SPLIT_STRIDED] = {"tshmem_team_split_strided", SPLIT, "start", "stride",
                                      "size", ALWAYS},
    [TSHMEM_FN_TEAM_DESTROY] = {"tshmem_team_destroy", DESTROY, NULL, NULL, NULL, NEVER},
    [TSHMEM_FN_ALLTOALLMEM] = {"tshmem_alltoallmem", ALLTOALL, "nbytes", NULL, NULL, ON_CHANGE},
    [TSHMEM_FN_ALLTOALLMEM_ALGO] = {"tshmem_alltoallmem_algo", ALLTOALL, "nbytes", NULL, NULL,
                                    ON_CHANGE},
    [TSHMEM_FN_REDUCESCATTER] = {"tshmem_reducescatter", REDUCESCATTER, "count", "dtype", "op",
                                 ON_CHANGE},
    [TSHMEM_FN_FLOAT_SUM_REDUCESCATTER] = {"tshmem_float_sum_reducescatter", REDUCESCATTER,
                                           "nreduce", "dtype", "op", ON_CHANGE},
    [TSHMEM_FN_DOUBLE_SUM_REDUCESCATTER] = {"tshmem_double_sum_reducescatter", REDUCESCATTER,
                                            "nreduce", "dtype", "op", ON_CHANGE},
};

/* Private to this PE (the program's thread makes every collective call): how many calls it has
 * made on each team, and the last compared arguments of each kind, per team. */
static uint64_t calls_on_team[TSHMEM_MAX_TEAMS];
static struct last {
    int valid;
    uint64_t a, b, c;
} last_compared[TSHMEM_MAX_TEAMS][N_KINDS];

static const char *team_str(tshmem_team_t team, char *buf, size_t len)
{
    if (team == TSHMEM_TEAM_WORLD)
        return "TSHMEM_TEAM_WORLD";
    if (team == TSHMEM_TEAM_NODE)
        return "TSHMEM_TEAM_NODE";
    snprintf(buf, len, "team %d", team);
    return buf;
}

static const char *fn_name(uint32_t fn)
{
    return fn < TSHMEM_FN_COUNT && fns[fn].name ? fns[fn].name : "an unknown call";
}

/* ---- Writing and reading records --------------------------------------------------------------
 * A seqlock: the writer marks the slot (TSHMEM_CALL_WRITING), fills it, then stores the number
 * with release; a reader takes the number with acquire, the fields, then the number again, and
 * keeps what it read only if both numbers agree and neither was marked. */
static void record(const struct tshmem_call *call)
{
    struct tshmem_call_record *r = &tshmem_g.reserved->calls[call->team].slot[call->number % 2];
    __atomic_store_n(&r->number, call->number | TSHMEM_CALL_WRITING, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&r->fn, (uint32_t)call->fn, __ATOMIC_RELAXED);
    __atomic_store_n(&r->c, (uint32_t)call->c, __ATOMIC_RELAXED);
    __atomic_store_n(&r->a, call->a, __ATOMIC_RELAXED);
    __atomic_store_n(&r->b, call->b, __ATOMIC_RELAXED);
    __atomic_store_n(&r->number, call->number, __ATOMIC_RELEASE);
}

static int load_slot(const struct tshmem_call_record *r, struct tshmem_call_record *out)
{
    uint64_t first = __atomic_load_n(&r->number, __ATOMIC_ACQUIRE);
    out->fn = __atomic_load_n(&r->fn, __ATOMIC_RELAXED);
    out->c = __atomic_load_n(&r->c, __ATOMIC_RELAXED);
    out->a = __atomic_load_n(&r->a, __ATOMIC_RELAXED);
    out->b = __atomic_load_n(&r->b, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    out->number = first;
    return first == __atomic_load_n(&r->number, __ATOMIC_RELAXED) &&
           !(first & TSHMEM_CALL_WRITING);
}

/* World PE pe's records of `team`, if pe shares this node: straight from its slice. */
static const struct tshmem_call_records *records_on_node(int pe, tshmem_team_t team)
{
    struct tshmem_state *g = &tshmem_g;
    if (g->pe_node[pe] != g->node)
        return NULL;
    size_t at = (size_t)((const char *)&g->reserved->calls[team] - g->slice);
    return (const void *)(g->segment + (size_t)g->pe_local[pe] * g->slice_bytes + at);
}

/* Both slots of pe's records of `team`: slot i is in out[i] where ok[i]. Off the node with two
 * gets: a copy is kept only where the second shows the same number (the copy of one get is not
 * atomic). `remote` 0 skips PEs off the node (from a wait: no get from there). Returns 0 when
 * nothing could be read. */
static int read_records(int pe, tshmem_team_t team, int remote, struct tshmem_call_record out[2],
                        int ok[2])
{
    const struct tshmem_call_records *there = records_on_node(pe, team);
    if (there) {
        for (int i = 0; i < 2; i++)
            ok[i] = load_slot(&there->slot[i], &out[i]);
        return 1;
    }
    if (!remote)
        return 0;
    struct tshmem_call_records first, again;
    tshmem_getmem(&first, &tshmem_g.reserved->calls[team], sizeof first, pe);
    tshmem_getmem(&again, &tshmem_g.reserved->calls[team], sizeof again, pe);
    for (int i = 0; i < 2; i++) {
        out[i] = first.slot[i];
        ok[i] = first.slot[i].number == again.slot[i].number &&
                !(first.slot[i].number & TSHMEM_CALL_WRITING);
    }
    return 1;
}

/* The highest call number pe's records show (0: none yet, or not readable). */
static uint64_t latest(const struct tshmem_call_record rec[2], const int ok[2], int *which)
{
    uint64_t best = 0;
    for (int i = 0; i < 2; i++)
        if (ok[i] && rec[i].number > best) {
            best = rec[i].number;
            *which = i;
        }
    return best;
}

/* ---- Comparing ---------------------------------------------------------------------------- */
static int args_agree(const struct fn_info *f, const struct tshmem_call *mine,
                      const struct tshmem_call_record *theirs, int *which)
{
    uint64_t m[3] = {mine->a, mine->b, (uint32_t)mine->c}, t[3] = {theirs->a, theirs->b, theirs->c};
    const char *label[3] = {f->a, f->b, f->c};
    for (int i = 0; i < 3; i++)
        if (label[i] && m[i] != t[i]) {
            *which = i;
            return 0;
        }
    return 1;
}

/* Stops the job: this PE's call and world PE pe's call number `mine->number` on the team
 * differ. The sentence reads the same whichever of the two PEs writes it. */
_Noreturn static void mismatch(const struct tshmem_call *mine, int pe,
                               const struct tshmem_call_record *theirs)
{
    const struct fn_info *f = &fns[mine->fn];
    char team[32];
    const char *tname = team_str(mine->team, team, sizeof team);
    int me = tshmem_g.my_pe, lo = me < pe ? me : pe, hi = me < pe ? pe : me;
    int which = 0;
    if (theirs->fn >= TSHMEM_FN_COUNT || fns[theirs->fn].kind != f->kind ||
        args_agree(f, mine, theirs, &which)) {
        const char *my_name = f->name, *their_name = fn_name(theirs->fn);
        tshmem_fail(f->name, "PE %d called %s and PE %d called %s, as their call %llu on %s: "
                    "every PE of a team must make the same collective calls on it, in the same "
                    "order. Look for a collective that only some PEs reach (inside an if, or "
                    "after an early return).", lo, lo == me ? my_name : their_name, hi,
                    hi == me ? my_name : their_name, (unsigned long long)mine->number, tname);
    }
    uint64_t m[3] = {mine->a, mine->b, (uint32_t)mine->c}, t[3] = {theirs->a, theirs->b, theirs->c};
    const char *label = which == 0 ? f->a : which == 1 ? f->b : f->c;
    unsigned long long v_lo = lo == me ? m[which] : t[which], v_hi = hi == me ? m[which] : t[which];
    tshmem_fail(f->name, "PE %d passed %s %llu and PE %d passed %s %llu to %s, as their call %llu "
                "on %s: every PE of the team must pass the same %s.", lo, label, v_lo, hi,
                label, v_hi, lo == me ? f->name : fn_name(theirs->fn),
                (unsigned long long)mine->number, tname, label);
}

/* Compares `call` with world PE pe's record of the same call, if pe has made it and its record
 * still holds it. Returns 1 if it compared, 0 if pe is behind, -1 if pe is ahead (the slot
 * holds a later call). */
static int compare_with(const struct tshmem_call *call, int pe, int remote)
{
    struct tshmem_call_record rec[2];
    int ok[2] = {0, 0}, which = 0;
    if (!read_records(pe, call->team, remote, rec, ok))
        return 0;
    int i = (int)(call->number % 2);
    if (ok[i] && rec[i].number == call->number) {
        if (rec[i].fn >= TSHMEM_FN_COUNT || fns[rec[i].fn].kind != fns[call->fn].kind ||
            !args_agree(&fns[call->fn], call, &rec[i], &which))
            mismatch(call, pe, &rec[i]);
        return 1;
    }
    return latest(rec, ok, &which) > call->number ? -1 : 0;
}

/* Under TSHMEM_DEBUG=1, on entry: wait for every team PE's record of this call and compare. A
 * PE that made another call in its place is caught here, before any flag of the call moves. */
static void compare_with_all(const struct tshmem_call *call)
{
    const struct tshmem_team *t = &tshmem_g.teams[call->team];
    for (int j = 0; j < t->n_pes; j++) {
        if (j == t->my_pe)
            continue;
        const struct tshmem_call_records *there = records_on_node(t->pes[j], call->team);
        struct tshmem_spin spin; /* a long wait names the peer's record, where it can be seen */
        tshmem_spin_init(&spin, fns[call->fn].name,
                         there ? (const void *)there : (const void *)&tshmem_g.reserved->calls);
        while (compare_with(call, t->pes[j], 1) == 0)
            tshmem_spin_pause(&spin);
    }
}

/* Whether the end of this call compares with a peer: when it moved data (a > 0, but always for a
 * split, whose start may be 0), on a team of two or more, and for ON_CHANGE only when this PE's
 * arguments differ from its last call of the kind on the team. One peer is enough. Say the PEs
 * agreed on their last call of the kind, and on this one some changed their arguments and not
 * all to the same: take a run of consecutive PEs that changed; its last one compares with its
 * successor, which did not change, so they differ; or all changed, and going round the team some
 * PE differs from its successor. The successor has entered the call by the end: a reduction, an
 * fcollect, an all-to-all cannot end on one PE before every PE brought its part, and the
 * allocator's calls end with a barrier. It has not left the call after next either (that would
 * need this PE's part of the next), so its record of this call is still in its slot. A
 * broadcast's PEs compare with the root instead, which they heard from (the root with its
 * successor); where the record is gone or not yet written, the call is not compared and the
 * long-wait check remains. */
static int compares_at_end(const struct tshmem_call *call)
{
    const struct fn_info *f = &fns[call->fn];
    if (f->at_end == NEVER || tshmem_g.teams[call->team].n_pes < 2 ||
        (f->at_end != ALWAYS && call->a == 0))
        return 0;
    if (f->at_end == ON_CHANGE) {
        struct last *l = &last_compared[call->team][f->kind];
        if (l->valid && l->a == call->a && l->b == call->b && l->c == call->c)
            return 0;
        *l = (struct last){1, call->a, call->b, call->c};
    }
    return 1;
}

void tshmem_call_end(struct tshmem_call *call)
{
    const struct tshmem_team *t = &tshmem_g.teams[call->team];
    int peer = (t->my_pe + 1) % t->n_pes;
    if (fns[call->fn].kind == BROADCAST && call->b < (uint64_t)t->n_pes &&
        (int)call->b != t->my_pe)
        peer = (int)call->b;
    compare_with(call, t->pes[peer], 1);
}

void tshmem_call_record(struct tshmem_call *call)
{
    tshmem_team_t team = call->team;
    /* Recorded: the program's own call, on a team this PE belongs to, once there is a heap.
     * Anything else is left to the call's own checks. */
    if (!tshmem_g.initialized || !tshmem_g.reserved || team < 0 || team >= TSHMEM_MAX_TEAMS ||
        tshmem_g.teams[team].n_pes == 0 || tshmem_g.teams[team].my_pe < 0)
        return;
    call->number = ++calls_on_team[team];
    record(call);
    call->compare_at_end = compares_at_end(call);
    if (tshmem_g.debug)
        compare_with_all(call);
}

void tshmem_refuse_reserved(const char *func, const char *what, const void *addr, size_t nbytes)
{
    uintptr_t lo = (uintptr_t)tshmem_g.slice, at = (uintptr_t)addr;
    if (lo && at - lo < TSHMEM_RESERVED_BYTES)
        tshmem_bad_symmetric(func, what, addr, nbytes);
}

/* ---- What a wait inside a call says ------------------------------------------------------- */
/* The program's call this thread is in (the outermost), or NULL. */
static const struct tshmem_call *current_call(void)
{
    const struct tshmem_call *c = tshmem_call_now;
    while (c && c->outer)
        c = c->outer;
    return c;
}

int tshmem_call_check_wait(const void *addr, long waited_s, int report)
{
    const struct tshmem_call *call = current_call();
    if (!call)
        return 0;
    char team[32], word[200], late[400] = "";
    const char *tname = team_str(call->team, team, sizeof team);
    tshmem_word_str(addr, word, sizeof word);
    if (!call->number) { /* a helper thread's work: nothing recorded to compare */
        if (report)
            tshmem_warn(fns[call->fn].name, "has waited %ld s in its work on %s for %s. Is a PE "
                        "missing the call, or waiting for us in turn?", waited_s, tname, word);
        return 1;
    }
    const struct tshmem_team *t = &tshmem_g.teams[call->team];
    size_t used = 0;
    int off_node = 0, missing = 0;
    for (int j = 0; j < t->n_pes; j++) {
        struct tshmem_call_record rec[2];
        int ok[2] = {0, 0}, which = 0;
        if (j == t->my_pe)
            continue;
        if (compare_with(call, t->pes[j], 0) != 0) /* stops the job on a mismatch */
            continue;
        if (!read_records(t->pes[j], call->team, 0, rec, ok)) {
            off_node++;
            continue;
        }
        uint64_t at = latest(rec, ok, &which);
        if (at >= call->number)
            continue;
        missing++;
        if (used < sizeof late && at)
            used += (size_t)snprintf(late + used, sizeof late - used, "%s PE %d (at its call %llu, "
                                     "%s)", missing > 1 ? "," : "", t->pes[j],
                                     (unsigned long long)at, fn_name(rec[which].fn));
        else if (used < sizeof late)
            used += (size_t)snprintf(late + used, sizeof late - used, "%s PE %d (no call yet)",
                                     missing > 1 ? "," : "", t->pes[j]);
    }
    if (report)
        tshmem_warn(fns[call->fn].name, "has waited %ld s in its call %llu on %s, for %s; %s%s%s. "
                    "Is a PE missing the call, or waiting for us in turn?", waited_s,
                    (unsigned long long)call->number, tname, word,
                    missing ? "not yet entered by:" : "every PE of the team on this node has "
                                                       "entered it",
                    late, off_node ? " (PEs on other nodes not inspected)" : "");
    return 1;
}
