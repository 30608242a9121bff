/* dash_run.h: the dashboard's view of a run, read as the child prints it, and the overview a
 * chapter's pane shows before any run. */
#ifndef GRADER_DASH_RUN_H
#define GRADER_DASH_RUN_H

#include "dash.h"

void run_output(struct dash *d);
void run_finished(struct dash *d, int status);
void chapter_overview(struct dash *d, int i);

#endif
