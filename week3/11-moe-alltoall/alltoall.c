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

/* TODO (chapter 3.1, "Checking the arguments"): helpers: how many calls this PE has made on each team */

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
    (void)dest; (void)source; (void)nbytes;
    TSHMEM_TODO("Checking the arguments", "number the call; check the team size, the sizes, dest and source (symmetric, room for n blocks, no overlap); a team of one copies");
    TSHMEM_TODO("All-to-all", "credit every peer, copy your own block, put block j into team PE j's dest as soon as its credit is here, wait for every peer's block");
}
