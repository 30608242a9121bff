/* reset.h: a chapter's files back to the generated stub, the learner's own kept in a backup
 * folder that is never reused. */
#ifndef GRADER_RESET_H
#define GRADER_RESET_H

#include <limits.h>

#include "course.h"

/* Resets a chapter's files to the stub; the backup folder goes into backup. Returns 0, 1 when
 * there was nothing to reset, -1 after printing why. */
int reset_chapter(const struct course *c, const struct chapter *ch, char backup[PATH_MAX]);

#endif
