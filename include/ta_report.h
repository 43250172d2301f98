/* Writers for result tables: aligned text, CSV (RFC 4180), JSON. */
#ifndef TA_REPORT_H
#define TA_REPORT_H

#include <stdio.h>

#include "ta_table.h"

enum ta_format { TA_FMT_TEXT, TA_FMT_CSV, TA_FMT_JSON };

int ta_format_parse(const char *s, enum ta_format *f);

/* Shortest text that reads back as the same double ("12", "0.1"). */
void ta_format_real(char *buf, size_t len, double v);
/* A time in µs for people, in µs, ms or s: 3 decimals (text's aligned
 * columns) or, with figures, 3 or 4 significant figures (the page); sep
 * between the number and its unit, micro the sign for µs. */
void ta_format_us(char *buf, size_t len, double us, int figures, const char *sep,
		  const char *micro);

void ta_report_text(FILE *out, const struct ta_table *t);
/* A kernel's or op's name for people, at most w columns (names.c):
 * return type and parameters dropped, templates folded below one level,
 * then the middle cut. */
void ta_people_name(const char *s, size_t w, struct ta_buf *out);
/* critical-path --trace: src again at dst (gzipped if it ends in .gz, "-"
 * for stdout) with the nodes' events marked and flows along the path. */
struct ta_path_nodes;
int ta_report_overlay(const char *src, const struct ta_path_nodes *nodes,
		      const char *dst, struct ta_error *err);
/* --wide: text columns are never cut (else to $COLUMNS, or 60). */
extern int ta_text_wide;
/* --csv-raw: text cells as they are; else a cell a spreadsheet would read
 * as a formula (= + - @ TAB CR first) gets a leading ' (OWASP). */
extern int ta_csv_raw;
void ta_report_csv(FILE *out, const struct ta_table *t);
/* JSON: an array of objects keyed by column name. */
void ta_report_json(FILE *out, const struct ta_table *t);
void ta_report_write(FILE *out, const struct ta_table *t, enum ta_format f);

/* The writers a row at a time (what the functions above are made of). */
void ta_csv_begin(FILE *out, const struct ta_table *t);
void ta_csv_row(FILE *out, const struct ta_table *t, size_t r);
void ta_json_begin(FILE *out);
void ta_json_row(FILE *out, const struct ta_table *t, size_t r, size_t nth);
void ta_json_end(FILE *out, size_t rows);

/* Streaming (stream.c): CSV or JSON written row by row through the row
 * sink an analysis gives its table (ta_table_final_rows). */
struct ta_stream {
	FILE *(*open)(void *ctx);    /* opens the output at the first write */
	void *ctx;
	enum ta_format fmt;          /* TA_FMT_CSV or TA_FMT_JSON */
	FILE *out;
	size_t written;
	int failed;                  /* the output could not be opened */
	struct ta_row_sink sink;     /* what the analysis is handed */
};
void ta_stream_init(struct ta_stream *s, FILE *(*open)(void *ctx), void *ctx,
		    enum ta_format fmt);
/* Writes what is left of t; -1 if the output could not be opened. */
int ta_stream_finish(struct ta_stream *s, struct ta_table *t);

#endif
