/* card_group.h: the group card: several members' cards (each made with `grader card --json`)
 * side by side, for chat or as a Markdown table. */
#ifndef GRADER_CARD_GROUP_H
#define GRADER_CARD_GROUP_H

#include "course.h"

/* grader card --merge A.json B.json ...: the group card of several members' --json cards, for
 * chat (or a table with markdown); week 0: every chapter, else that week's. Each member's line
 * says when their card was made, and how many days ago when it is stale. Returns the exit
 * status. */
int card_merge(const struct course *c, int nfiles, char **files, int markdown, int week);

#endif
