/* collect.c: what fcollect and broadcast share: numbering calls, checking buffers, node groups.
 *
 * Provided: you do not need to edit this file; fcollect.c and broadcast.c call it. Chapter 2.3's
 * algorithms keep their flags in tshmem_g.reserved->collect[team] and tell one call from the
 * next by the call's number on its team (struct tshmem_collect_call, tshmem_internal.h).
 */
#define TSHMEM_CHAPTER "2.3"
#include "tshmem_internal.h"

/* How many fcollect and broadcast calls this PE has made on each team handle. Private memory:
 * every member counts its own calls, and because every member makes the same collective calls
 * on a team in the same order, the counts agree without a word being exchanged. */
static uint64_t calls_on_team[TSHMEM_MAX_TEAMS];

void tshmem_collect_begin(struct tshmem_collect_call *call, const char *func, tshmem_team_t team)
{
    tshmem_require_live(func);
    tshmem_check_team(func, team);
    const struct tshmem_team *t = &tshmem_g.teams[team];
    if (t->my_pe < 0)
        tshmem_fail(func,
                    "this PE is not a member of team %d: only its %d members may call a "
                    "collective on it.",
                    team, t->n_pes);
    *call = (struct tshmem_collect_call){
        .func = func,
        .team = team,
        .t = t,
        .me = t->my_pe,
        .n = t->n_pes,
        .seq = ++calls_on_team[team],
        .flags = &tshmem_g.reserved->collect[team],
    };
    /* The tag keeps 32 bits for the call number: 4 billion calls on one team. */
    if (call->seq >= (UINT64_C(1) << 32))
        tshmem_fail(func, "more than 2^32 collective calls on team %d: the signal tags would wrap.",
                    team);
}

void tshmem_collect_check_room(const char *func, const char *what, const void *addr, size_t nbytes)
{
    char need[32], room[32];
    tshmem_check_symmetric(func, what, addr, nbytes);
    size_t offset = (size_t)((const char *)addr - tshmem_g.slice);
    if (offset < TSHMEM_RESERVED_BYTES)
        tshmem_fail(func,
                    "%s %p lies in the runtime's reserved area at the start of the slice. "
                    "Pass memory from tshmem_malloc.",
                    what, addr);
    for (const struct tshmem_block *b = tshmem_g.blocks; b; b = b->next) {
        if (offset < b->offset || offset - b->offset >= b->size)
            continue;
        if (!b->used)
            tshmem_fail(func,
                        "%s %p is in free heap memory (freed, or never allocated). Pass "
                        "memory from tshmem_malloc that is still allocated.",
                        what, addr);
        size_t left = b->size - (offset - b->offset);
        if (nbytes > left)
            tshmem_fail(func,
                        "%s %p is too small: this call needs %s there, but its "
                        "tshmem_malloc block has room for %s from that address. Allocate "
                        "enough on every PE (the dest of fcollect and alltoall needs team size x nbytes).",
                        what, addr, tshmem_bytes_str(nbytes, need, sizeof need),
                        tshmem_bytes_str(left, room, sizeof room));
        return;
    }
    /* No block list (an allocator that keeps its books differently): symmetric is all we know. */
}

int tshmem_collect_test_groups;

void tshmem_collect_nodes(const struct tshmem_collect_call *call,
                          struct tshmem_collect_nodes *nodes)
{
    int node_of_group[TSHMEM_COLL_MAX_PES], count[TSHMEM_COLL_MAX_PES + 1] = {0};
    if (call->n > TSHMEM_COLL_MAX_PES)
        tshmem_fail(call->func,
                    "team %d has %d PEs; the hybrid algorithm handles at most %d "
                    "(TSHMEM_COLL_MAX_PES).",
                    call->team, call->n, TSHMEM_COLL_MAX_PES);
    nodes->n_groups = 0;
    for (int i = 0; i < call->n; i++) {
        int k = tshmem_collect_test_groups, g = 0;
        int node = k > 0 ? i / k : k < 0 ? i % -k : tshmem_g.pe_node[tshmem_collect_pe(call, i)];
        while (g < nodes->n_groups && node_of_group[g] != node)
            g++;
        if (g == nodes->n_groups) {
            node_of_group[g] = node;
            count[g] = 0;
            nodes->n_groups++;
        }
        nodes->group_of[i] = g;
        count[g]++;
    }
    /* Counting sort: members of each group in team order, groups one after the other. */
    nodes->first[0] = 0;
    for (int g = 0; g < nodes->n_groups; g++)
        nodes->first[g + 1] = nodes->first[g] + count[g];
    for (int g = 0; g < nodes->n_groups; g++)
        count[g] = nodes->first[g];
    for (int i = 0; i < call->n; i++)
        nodes->member[count[nodes->group_of[i]]++] = i;
    nodes->my_group = nodes->group_of[call->me];
}
