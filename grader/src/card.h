/* card.h: the Markdown cards a learner pastes in a study group's chat: the progress card
 * (grader card) and the study session card (grader session end). */
#ifndef GRADER_CARD_H
#define GRADER_CARD_H

#include <jansson.h>
#include <stdio.h>
#include <time.h>

#include "roadmap.h"

/* The most characters a chat message may have (Discord's limit): the chat cards fit in one. */
#define CHAT_LIMIT 2000
/* Characters as a chat server counts them (UTF-16 units: an emoji such as 🚧 counts 2). */
size_t chat_length(const char *text);

/* The chat card (the default): one list item per chapter with ✅ / 🚧 / ⬜ and bold, weeks as
 * bold lines, the totals; no table, so that it renders in Discord. week 0: all. */
void card_write_chat(FILE *out, const struct course *c, const struct roadmap_row *rows, int week,
                     time_t now);
/* The Markdown table (--format markdown): ✅ / 🚧 / ⬜, Code / Test / Points / Perf, totals. */
void card_write(FILE *out, const struct course *c, const struct roadmap_row *rows, int week,
                time_t now);
/* The card's facts (--json): name, course, date, every chapter's status, tests, points and best
 * ratios, the totals; what card_merge reads. */
json_t *card_json(const struct course *c, const struct roadmap_row *rows, const char *name,
                  time_t now);
/* grader card --merge A.json B.json ...: the group card of several members' --json cards, for
 * chat (or a table with markdown). Returns the exit status. */
int card_merge(const struct course *c, int nfiles, char **files, int markdown);

/* Where the learner stands, to compare the end of a session with its start:
 * {"passing": {"1.3": ["test", ..]}, "done": ["1.1", ..], "hints": 3}. */
json_t *session_snapshot(struct progress *p);

struct session_diff {
    int chapters_done; /* chapters done now and not at the start */
    char done_list[512];
    int tests_fixed; /* tests passing now that did not at the start */
    char fixed_list[1024];
    int hints; /* hints taken during the session */
};
struct session_diff session_compare(json_t *snapshot, struct progress *p, const struct course *c);

/* The session card: goal, when and how long, chapters passed, tests fixed, hints used. */
void session_card_write(FILE *out, const char *goal, time_t start, time_t end, int open,
                        const struct session_diff *d, const struct roadmap_totals *now);

#endif
