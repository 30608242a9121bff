/* words.c: what a word of the segment is, in words, for the runtime's messages.
 *
 * Provided: you do not need to edit this file. A hang warning (spin.c, calls.c) names the word a
 * wait is stuck on: one of your tshmem_malloc blocks by its heap offset, or a word of the
 * runtime's reserved area by what it is and which PE writes it ("the barrier flag of round 1 on
 * TSHMEM_TEAM_WORLD, which team PE 1 (world PE 1) writes"), from the layout of struct
 * tshmem_reserved (tshmem_internal.h).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tshmem_internal.h"

static const char *team_str(tshmem_team_t team, char *buf, size_t len)
{
    if (team == TSHMEM_TEAM_WORLD)
        return "TSHMEM_TEAM_WORLD";
    if (team == TSHMEM_TEAM_NODE)
        return "TSHMEM_TEAM_NODE";
    snprintf(buf, len, "team %d", team);
    return buf;
}

/* "team PE 1 (world PE 1)", for a team this PE belongs to. */
static const char *writer_str(tshmem_team_t team, int team_pe, char *buf, size_t len)
{
    const struct tshmem_team *t =
        team >= 0 && team < TSHMEM_MAX_TEAMS ? &tshmem_g.teams[team] : NULL;
    if (!t || t->n_pes == 0 || t->my_pe < 0 || team_pe < 0 || team_pe >= t->n_pes)
        snprintf(buf, len, "a PE of the team");
    else
        snprintf(buf, len, "team PE %d (world PE %d)", team_pe, t->pes[team_pe]);
    return buf;
}

#define SPAN(field)                                                                           \
    offsetof(struct tshmem_reserved, field), sizeof(((struct tshmem_reserved *)0)->field)

/* One of a team's collective flag areas (struct tshmem_coll_flags). */
static void coll_flags_str(const char *area, tshmem_team_t team, size_t off, char *buf, size_t len)
{
    const struct tshmem_team *t = &tshmem_g.teams[team];
    char who[64], tn[32];
    const char *tname = team_str(team, tn, sizeof tn);
    int me = t->my_pe, n = t->n_pes > 0 ? t->n_pes : 1;
    if (off < offsetof(struct tshmem_coll_flags, ring_ack))
        snprintf(buf, len, "the %s ring flag of %s that %s writes", area, tname,
                 writer_str(team, (me + n - 1) % n, who, sizeof who));
    else if (off < offsetof(struct tshmem_coll_flags, round))
        snprintf(buf, len, "the %s ring credit of %s that %s writes", area, tname,
                 writer_str(team, (me + 1) % n, who, sizeof who));
    else if (off < offsetof(struct tshmem_coll_flags, extra))
        snprintf(buf, len, "the %s flag of round %zu on %s, which that round's partner writes",
                 area, (off - offsetof(struct tshmem_coll_flags, round)) / TSHMEM_CACHE_LINE,
                 tname);
    else if (off < offsetof(struct tshmem_coll_flags, from))
        snprintf(buf, len, "the %s flag extra[%zu] on %s", area,
                 (off - offsetof(struct tshmem_coll_flags, extra)) / TSHMEM_CACHE_LINE, tname);
    else
        snprintf(buf, len, "the %s flag that %s writes on %s", area,
                 writer_str(team, (int)((off - offsetof(struct tshmem_coll_flags, from)) / 8),
                            who, sizeof who), tname);
}

const char *tshmem_word_str(const void *addr, char *buf, size_t len)
{
    const struct tshmem_state *g = &tshmem_g;
    const char *p = addr;
    if (!g->segment || p < g->segment || p >= g->segment + g->segment_bytes) {
        snprintf(buf, len, "the word at %p", addr);
        return buf;
    }
    size_t at = (size_t)(p - g->segment), local = at / g->slice_bytes, off = at % g->slice_bytes;
    int owner = -1;
    for (int pe = 0; pe < g->n_pes && owner < 0; pe++)
        if (g->pe_node[pe] == g->node && (size_t)g->pe_local[pe] == local)
            owner = pe;
    if (off >= TSHMEM_RESERVED_BYTES) {
        snprintf(buf, len, "the word at heap offset %zu of PE %d (%p)", off, owner, addr);
        return buf;
    }
    char who[64], tn[32];
    const struct {
        const char *name;
        size_t at, size;
    } areas[] = {
        {"sync", SPAN(sync)},         {"ring", SPAN(ring)},
        {"reduce", SPAN(reduce)},     {"collect", SPAN(collect)},
        {"stage", SPAN(stage)},       {"scratch", SPAN(scratch)},
        {"nb", SPAN(nb)},             {"nb_landing", SPAN(nb_landing)},
        {"alltoall", SPAN(alltoall)}, {"alltoall_stage", SPAN(alltoall_stage)},
        {"rd_eager", SPAN(rd_eager)}, {"calls", SPAN(calls)},
    };
    for (size_t i = 0; i < sizeof areas / sizeof areas[0]; i++) {
        if (off < areas[i].at || off - areas[i].at >= areas[i].size)
            continue;
        const char *name = areas[i].name;
        size_t in = off - areas[i].at, per = areas[i].size / TSHMEM_MAX_TEAMS;
        tshmem_team_t team = (tshmem_team_t)(in / per);
        size_t inner = in % per;
        const char *tname = team_str(team, tn, sizeof tn);
        const struct tshmem_team *t = &tshmem_g.teams[team];
        int n = t->n_pes > 0 ? t->n_pes : 1;
        if (!strcmp(name, "sync")) {
            int r = (int)(inner / TSHMEM_CACHE_LINE);
            snprintf(buf, len, "the barrier flag of round %d on %s, which %s writes", r, tname,
                     writer_str(team, ((t->my_pe - (1 << r)) % n + n) % n, who, sizeof who));
        } else if (!strcmp(name, "ring")) {
            snprintf(buf, len, "ring word %zu (chapter 1.5), which the %s PE writes",
                     off / TSHMEM_CACHE_LINE - areas[i].at / TSHMEM_CACHE_LINE,
                     off / TSHMEM_CACHE_LINE - areas[i].at / TSHMEM_CACHE_LINE < 3 ? "next"
                                                                                  : "previous");
        } else if (!strcmp(name, "reduce") || !strcmp(name, "collect")) {
            coll_flags_str(name[0] == 'r' ? "reduction" : "fcollect and broadcast", team, inner,
                           buf, len);
        } else if (!strcmp(name, "nb") || !strcmp(name, "alltoall")) {
            size_t word = inner / 8 % TSHMEM_COLL_MAX_PES;
            snprintf(buf, len, "the %s flag that %s writes on %s",
                     name[0] == 'n' ? "non-blocking collectives'" : "all-to-all",
                     writer_str(team, (int)word, who, sizeof who), tname);
        } else if (!strcmp(name, "stage") || !strcmp(name, "alltoall_stage")) {
            snprintf(buf, len, "the %s stage of %s on PE %d, which that PE fills",
                     name[0] == 's' ? "one-shot fcollect" : "one-shot all-to-all", tname, owner);
        } else if (!strcmp(name, "calls")) {
            snprintf(buf, len, "PE %d's record of its calls on %s", owner, tname);
        } else {
            snprintf(buf, len, "the runtime's %s area of PE %d (offset %zu)", name, owner, off);
        }
        return buf;
    }
    snprintf(buf, len, "the runtime's word at offset %zu of PE %d", off, owner);
    return buf;
}
