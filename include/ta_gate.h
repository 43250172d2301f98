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
/* 1 if the row trips the gate. A missing value never does. */
int ta_gate_eval(const struct ta_gate *g, const struct ta_table *t, size_t row);
const char *ta_gate_text(const struct ta_gate *g);
void ta_gate_free(struct ta_gate *g);

/* "COLUMN=VALUE" or "COLUMN=VALUE%": how much a value may rise. */
struct ta_increase {
	char column[64];
	double limit;
	int relative;     /* limit is a percentage of the old value */
};

int ta_increase_parse(const char *spec, struct ta_increase *inc);

/* Compares t with the CSV at path (a saved run of the same command):
 * rows are matched on the key columns; each rise beyond a limit is named
 * on diag. Returns the number of rises, or -1 (err) if the file cannot be
 * read or lacks a column. */
int ta_baseline_check(const struct ta_table *t, const char *path,
		      const struct ta_increase *inc, size_t ninc, FILE *diag,
		      struct ta_error *err);

/* "rank=0 stream=7 category=host_wait": a row's key columns. */
void ta_row_key(const struct ta_table *t, size_t row, char *buf, size_t len);
/* The column names, comma-separated, for messages. */
void ta_table_columns(const struct ta_table *t, char *buf, size_t len);

#endif
