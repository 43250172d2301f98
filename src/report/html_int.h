/* What html.c shares with the page's sections in files of their own. */
#ifndef TA_HTML_INT_H
#define TA_HTML_INT_H

#include <stdio.h>

#include "ta_table.h"

#define TA_HTML_BLUE "#0072B2"
#define TA_HTML_ORANGE "#E69F00"

/* text into HTML, escaped */
void ta_html_esc(FILE *o, const char *s);
/* a number cell of t (0 when empty or c < 0) */
double ta_html_num(const struct ta_table *t, size_t r, long c);
/* a time for people: 3 or 4 significant figures in µs, ms or s */
void ta_html_us(char *buf, size_t len, double us);

/* The nn.Module tree (modules' table): html_modules.c. */
void ta_html_modules(FILE *o, const struct ta_table *m);

#endif
