/* dash_draw.h: drawing the dashboard, and the results pane's lines. */
#ifndef GRADER_DASH_DRAW_H
#define GRADER_DASH_DRAW_H

#include "dash.h"

void draw(struct dash *d);
void pane_add(struct pane *p, enum pane_style style, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void pane_clear(struct pane *p);
void pane_text(struct pane *p, enum pane_style style, const char *text); /* one line each */
void pane_scroll(struct dash *d, int by);
int pane_height(const struct dash *d);
void set_status(struct dash *d, int style, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
