/* A result table: typed columns and rows. Analyses fill it, reports
 * write it, gates read it. */
#ifndef TA_TABLE_H
#define TA_TABLE_H

#include <stdio.h>

#include "ta.h"

enum ta_col_type { TA_COL_INT, TA_COL_REAL, TA_COL_TEXT };

/* How text output shows a number (CSV and JSON always show it plainly). */
/* BYTES: a size; CLOCK: a moment in µs on the traces' clock (text shows
 * both for people: MiB, ms after the table's first moment); TREE: a text
 * path "a/b/c" (text shows its last part, indented two spaces a level) */
enum ta_col_unit { TA_UNIT_NONE, TA_UNIT_US, TA_UNIT_PCT, TA_UNIT_RATIO, TA_UNIT_BYTES,
		   TA_UNIT_CLOCK, TA_UNIT_TREE };

struct ta_col {
	const char *name;
	enum ta_col_type type;
	enum ta_col_unit unit;
	int key;   /* identifies the row (rank, stream, name...): baselines match on these */
};

struct ta_intern;
struct ta_table;

/* Where final rows go as they are made (the report layer's choice: CSV or
 * JSON written row by row); the table then keeps one row. */
struct ta_row_sink {
	void (*row)(void *ctx, const struct ta_table *t, size_t r);
	void *ctx;
};

struct ta_cell {
	int null;
	int64_t i;
	double d;
	const char *s;         /* owned by the table's texts */
};

struct ta_table {
	const char *title;
	size_t ncols;
	const struct ta_col *cols;
	size_t nrows, cap;
	struct ta_cell *cells;     /* nrows x ncols */
	struct ta_buf head;        /* text mode: lines between title and table */
	struct ta_buf tail;        /* text mode: lines after the table */
	struct ta_buf notes;       /* lines for stderr in text mode */
	struct ta_buf warnings;    /* lines for stderr in every format */
	void *owned_cols;          /* freed with the table when cols was built */
	struct ta_intern *texts;   /* every text cell's string, once: tables
				    * with a row per kernel repeat names */
	const struct ta_row_sink *sink; /* rows go out as they come */
	size_t sunk;               /* rows handed to the sink so far */
	size_t bad_utf8;           /* bytes of text cells replaced by U+FFFD */
	/* ranks of the job with no trace here that the answer depends on
	 * (a cross-rank analysis: their waits are not measured): a gate on
	 * it trips, as on a file left out */
	size_t ranks_absent;
	/* selected ranks here with none of what the command reads (modules
	 * of a rank without module frames): their rows are missing, and a
	 * gate trips. Shards' parts add up (each counts its own ranks);
	 * ranks_absent, the job's, is the same on each */
	size_t ranks_empty;
	/* per column, NULL or the NULL-ended list of every value a text column
	 * can hold (verdicts, kinds): a gate comparing it with anything else
	 * is a typo */
	const char *const **values;
	/* a second table that travels with this one: what a shard's run
	 * hands back beside the rows shown (diagnose's findings for its
	 * text); freed with it */
	struct ta_table *also;
};

/* The column named name, or -1 (t NULL too). */
long ta_table_col(const struct ta_table *t, const char *name);
/* The column a user named (--fail-if, --max-increase): its name, or the
 * header text shows for it (idle for idle_us, peak for peak_bytes); -1 if
 * none. */
long ta_table_col_typed(const struct ta_table *t, const char *name);
struct ta_table *ta_table_new(const char *title, const struct ta_col *cols,
			      size_t ncols);
/* Columns called otherwise: names is "old=new ..." (names a table has
 * not are passed over). */
void ta_table_rename(struct ta_table *t, const char *names);
/* A column's name since a rename, for a name a user wrote before it
 * (gates, baselines: kernel_us is temporal's window_us), in t; NULL if
 * none. */
const char *ta_col_renamed(const struct ta_table *t, const char *old);
/* and the other way: the name a column had, or NULL */
const char *ta_col_former(const struct ta_table *t, const char *name);
/* --hta-compat's names for a command's renamed columns ("ours=compat
 * ..."), or NULL (compat/hta/names.c). */
enum ta_mode;
const char *ta_compat_names(enum ta_mode mode, const char *command);
size_t ta_table_add_row(struct ta_table *t);   /* all cells NULL */
void ta_table_set_int(struct ta_table *t, size_t row, size_t col, int64_t v);
void ta_table_set_real(struct ta_table *t, size_t row, size_t col, double v);
/* Back to NULL (a number or a text). */
void ta_table_set_null(struct ta_table *t, size_t row, size_t col);
void ta_table_set_text(struct ta_table *t, size_t row, size_t col,
		       const char *s);
const struct ta_cell *ta_table_cell(const struct ta_table *t, size_t row,
				    size_t col);
/* Declares the values text column col can take (values: NULL-ended,
 * static). */
void ta_table_set_values(struct ta_table *t, size_t col,
			 const char *const *values);
void ta_table_note(struct ta_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Something wrong in the data behind the table: a warning on stderr
 * whatever the format (unless -q). */
void ta_table_warn(struct ta_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A warning counting n (of of) of one rank's or shard's things: tmpl
 * says {n}, {of} and {s} ("s" unless n is 1). Shards' warnings of one
 * tmpl are said once, their counts added (a shard's "10 of 10 calls"
 * beside another's was "10 of 10" where one database said "20 of 20"). */
void ta_table_warn_sum(struct ta_table *t, size_t n, size_t of, const char *tmpl);
/* Stable sort of the rows; cmp gets two row numbers. */
void ta_table_sort(struct ta_table *t,
		   int (*cmp)(const struct ta_table *t, size_t a, size_t b));
/* Only the rows keep says yes to, in their order. */
void ta_table_keep(struct ta_table *t,
		   int (*keep)(const struct ta_table *t, size_t row, void *ctx), void *ctx);
void ta_table_free(struct ta_table *t);
/* For an analysis whose rows are final as it adds them: with a sink (the
 * query's, NULL if none), each row goes there once the next is added and
 * the table keeps one; ta_table_flush hands over the last. */
void ta_table_final_rows(struct ta_table *t, const struct ta_row_sink *sink);
void ta_table_flush(struct ta_table *t);

/* Tables joined from parts (report/table_wire.c): src's rows, notes,
 * warnings and second table appended to dst's, or with same_notes its
 * notes checked to be dst's; 0 when they differ in shape. The same through
 * a file: what one process writes, another appends (0 also when cut
 * short). head and tail must be empty. */
int ta_table_append(struct ta_table *dst, const struct ta_table *src, int same_notes);
void ta_table_write_wire(FILE *f, const struct ta_table *t);
int ta_table_read_wire(FILE *f, struct ta_table *dst, int same_notes);

#endif
