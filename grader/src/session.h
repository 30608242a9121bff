/* session.h: a study session (`grader session start "goal"` / `end`): where the learner stands
 * at its start and at its end, and the card that `end` prints. */
#ifndef GRADER_SESSION_H
#define GRADER_SESSION_H

#include <jansson.h>
#include <stdio.h>
#include <time.h>

#include "progress.h"
#include "roadmap.h"

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
