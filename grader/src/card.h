/* card.h: the Markdown cards a learner pastes in a study group's chat: the progress card
 * (grader card); the group card is card_group.h's, the study session card session.h's. */
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
#endif
