/* CI gates over a result table: --fail-if expressions and baselines. */
#ifndef TA_GATE_H
#define TA_GATE_H

#include <stdio.h>

#include "ta_table.h"

struct ta_gate;

/* Parses EXPR: columns, numbers, "strings", < <= > >= == !=, && || ! and
 * parentheses. -1 with a message in err on a syntax error. */
struct ta_gate *ta_gate_parse(const char *expr, struct ta_error *err);
/* Resolves column names against t; -1 (listing the columns) if unknown. */
int ta_gate_bind(struct ta_gate *g, const struct ta_table *t,
		 struct ta_error *err);
/* Whether the row trips the gate: a comparison with a missing value
 * (an empty cell) is neither true nor false, and neither is what depends
 * on it. */
enum { TA_GATE_PASS = 0, TA_GATE_TRIP = 1, TA_GATE_MISSING = 2 };
int ta_gate_eval(const struct ta_gate *g, const struct ta_table *t, size_t row);
/* "idle_pct 26.24": the row's values of the columns the gate reads. */
void ta_gate_describe(const struct ta_gate *g, const struct ta_table *t,
		      size_t row, struct ta_buf *out);
/* An error if the gate compares a key column (rank, step) with a value no
 * row has: it could never trip. */
int ta_gate_check_keys(const struct ta_gate *g, const struct ta_table *t,
		       struct ta_error *err);
const char *ta_gate_text(const struct ta_gate *g);
void ta_gate_free(struct ta_gate *g);

/* "COLUMN=VALUE", "COLUMN=VALUE%" or "COLUMN=VALUE%,min=ABS": how much a
 * value may rise (a relative limit with an absolute floor: a rise must
 * pass both to count, so 3 µs cannot fail a build). */
struct ta_increase {
	char column[64];
	double limit;
	int relative;     /* limit is a percentage of the old value */
	double min;       /* and the rise must be at least this (0: none) */
};

int ta_increase_parse(const char *spec, struct ta_increase *inc);

/* A CSV saved from an earlier run of the same command (--baseline),
 * read before the analysis runs, so that a wrong file is an error before
 * any output. command names the command in messages. */
struct ta_baseline;
struct ta_baseline *ta_baseline_load(const char *path, const char *command,
				     struct ta_error *err);
void ta_baseline_free(struct ta_baseline *b);

/* Compares t with the baseline: rows are matched on the key columns.
 * Each rise beyond a limit is named on diag and counted (a row not in the
 * baseline rose from 0); so is each row not in the baseline when
 * fail_on_new, a limit's value missing on either side, and a rank the
 * baseline has and t has not, unless missing_pass. Rows new and gone are named, and
 * without limits the changes are shown. -1 (err) if the baseline lacks
 * one of t's key columns or a limit's column, or no row matches. */
int ta_baseline_check(const struct ta_table *t, const struct ta_baseline *b,
		      const struct ta_increase *inc, size_t ninc, int fail_on_new,
		      int missing_pass, FILE *diag, struct ta_error *err);

/* "rank=0 stream=7 category=host_wait": a row's key columns. */
void ta_row_key(const struct ta_table *t, size_t row, char *buf, size_t len);
/* The column names, comma-separated, for messages. */
void ta_table_columns(const struct ta_table *t, char *buf, size_t len);

#endif
