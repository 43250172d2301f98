/* Writers for result tables: aligned text, CSV (RFC 4180), JSON. */
#ifndef TA_REPORT_H
#define TA_REPORT_H

#include <stdio.h>

#include "ta_table.h"

enum ta_format { TA_FMT_TEXT, TA_FMT_CSV, TA_FMT_JSON };

int ta_format_parse(const char *s, enum ta_format *f);

/* Shortest text that reads back as the same double ("12", "0.1"). */
void ta_format_real(char *buf, size_t len, double v);

void ta_report_text(FILE *out, const struct ta_table *t);
void ta_report_csv(FILE *out, const struct ta_table *t);
/* JSON: an array of objects keyed by column name. */
void ta_report_json(FILE *out, const struct ta_table *t);
void ta_report_write(FILE *out, const struct ta_table *t, enum ta_format f);

#endif
