/* hint.h: the help a learner asks for: the chapter's page of the book in the terminal, and
 * whether it was read (the hints themselves are `grader hint`, in commands.h). */
#ifndef GRADER_HINT_H
#define GRADER_HINT_H

#include "course.h"

/* The page as text for a terminal (pandoc -t plain when installed, else the Markdown). */
char *book_text(const struct course *c, const struct chapter *ch);
/* Shows text in $PAGER (else less -R, else more); 0 when a pager ran. */
int page_text(const char *text);
/* Marks the chapter read in the progress file. */
void mark_read(const struct course *c, const struct chapter *ch);

#endif
