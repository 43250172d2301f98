/* --baseline OLD.csv --max-increase COL=V: compare with a saved run. */
#include "ta_gate.h"
#include "ta_intern.h"
#include "ta_files.h"
#include "ta_report.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ta_increase_parse(const char *spec, struct ta_increase *inc)
{
	const char *eq = strchr(spec, '=');
	char *end;

	if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof(inc->column))
		return -1;
	memcpy(inc->column, spec, (size_t)(eq - spec));
	inc->column[eq - spec] = '\0';
	inc->limit = ta_strtod(eq + 1, &end);
	inc->min = 0;
	/* inf would be no limit at all: a gate that cannot trip */
	if (end == eq + 1 || !(inc->limit >= 0) || !isfinite(inc->limit))
		return -1;
	inc->relative = *end == '%';
	if (inc->relative)
		end++;
	if (strncmp(end, ",min=", 5) == 0) {
		const char *m = end + 5;

		inc->min = ta_strtod(m, &end);
		if (end == m || !(inc->min >= 0) || !isfinite(inc->min))
			return -1;
	}
	return *end == '\0' ? 0 : -1;
}

/* The old CSV, as rows of strings. */
struct old_csv {
	char ***rows;
	size_t nrows, cap, ncols;
	char **cur;
	size_t ncur;
};

static void on_field(void *s, size_t len, void *data)
{
	struct old_csv *o = data;

	o->cur = ta_xrealloc(o->cur, (o->ncur + 1) * sizeof(*o->cur));
	/* a name the CSV writer neutralised for spreadsheets ('=...) is
	 * the name itself (csv.c) */
	if (s && len >= 2 && ((char *)s)[0] == '\'' && strchr("=+-@\t\r", ((char *)s)[1]))
		s = (char *)s + 1, len--;
	o->cur[o->ncur++] = ta_xstrndup(s ? s : "", s ? len : 0);
}

static void on_row(int c, void *data)
{
	struct old_csv *o = data;

	(void)c;
	if (o->nrows == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 64;
		o->rows = ta_xrealloc(o->rows, o->cap * sizeof(*o->rows));
	}
	o->cur = ta_xrealloc(o->cur, (o->ncur + 1) * sizeof(*o->cur));
	o->cur[o->ncur] = NULL;   /* rows end with NULL */
	o->rows[o->nrows++] = o->cur;
	o->cur = NULL;
	o->ncur = 0;
}

static void free_old(struct old_csv *o)
{
	size_t r, c;

	for (r = 0; r < o->nrows; r++) {
		for (c = 0; o->rows[r][c]; c++)
			free(o->rows[r][c]);
		free(o->rows[r]);
	}
	free(o->rows);
	for (c = 0; c < o->ncur; c++) /* a row cut short by an error */
		free(o->cur[c]);
	free(o->cur);
}

/* What a file that is not a saved CSV is, for the message. */
/* What the first bytes (head, n of them: read here, since a pipe cannot
 * seek back) say the file is, if not a CSV. */
static const char *not_csv(const unsigned char *head, size_t n)
{
	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
		return "a gzipped trace";
	if (n >= 1 && (head[0] == '{' || head[0] == '['))
		return "a JSON file (a trace, or --format json output)";
	return NULL;
}

/* Up to HEAD bytes from fd into head (fewer at its end): a byte order
 * mark and what follows it; -1 on an error. */
#define HEAD 5
static ssize_t read_head(int fd, unsigned char *head)
{
	size_t got = 0;

	while (got < HEAD) {
		ssize_t n = read(fd, head + got, HEAD - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static int read_old(const char *path, const char *command, struct old_csv *o,
		    struct ta_error *err)
{
	struct csv_parser p;
	char buf[65536];
	size_t n, r;
	struct stat sb;
	int fd, bad = 0;
	FILE *f;
	const char *what;
	unsigned char head[HEAD];
	ssize_t nhead = 0, skip = 0;

	if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		ta_error_set(err, TA_EXIT_USAGE, "baseline '%s' is a directory (of "
			     "traces?), not a CSV written by 'traceanalyze %s "
			     "--format csv'", path, command);
		return -1;
	}
	fd = ta_open_read(path, "baseline ", err);
	if (fd >= 0 && (nhead = read_head(fd, head)) < 0) {
		ta_error_set(err, TA_EXIT_INPUT, "baseline '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	/* a spreadsheet's UTF-8 byte order mark is no part of the header */
	if (nhead >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf)
		skip = 3;
	if (fd >= 0 && (what = not_csv(head + skip, (size_t)(nhead - skip)))) {
		close(fd);
		ta_error_set(err, TA_EXIT_USAGE, "baseline '%s' is %s, not a CSV "
			     "written by 'traceanalyze %s --format csv'", path, what,
			     command);
		return -1;
	}
	f = fd < 0 ? NULL : fdopen(fd, "rb");

	if (!f) {
		if (fd >= 0) {
			close(fd);
			ta_error_set(err, TA_EXIT_SYSTEM, "baseline '%s': %s", path,
				     strerror(errno));
		}
		return -1;
	}
	csv_init(&p, CSV_APPEND_NULL | CSV_STRICT | CSV_STRICT_FINI);
	if (nhead > skip)
		bad = csv_parse(&p, head + skip, (size_t)(nhead - skip), on_field, on_row,
				o) != (size_t)(nhead - skip);
	while (!bad && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		bad = csv_parse(&p, buf, n, on_field, on_row, o) != n;
	if (!bad && ferror(f)) {
		ta_error_set(err, TA_EXIT_INPUT, "baseline '%s': %s", path,
			     strerror(errno));
		bad = -1;
	}
	if (!bad)
		bad = csv_fini(&p, on_field, on_row, o) != 0;
	if (bad > 0)
		ta_error_set(err, TA_EXIT_INPUT, "baseline '%s': row %zu: %s", path,
			     o->nrows + 1, csv_strerror(csv_error(&p)));
	csv_free(&p);
	fclose(f);
	if (bad)
		return -1;
	if (o->nrows == 0) {
		ta_error_set(err, TA_EXIT_INPUT, "baseline '%s': empty", path);
		return -1;
	}
	/* every row as wide as the header: cells are read by its positions */
	for (o->ncols = 0; o->rows[0][o->ncols]; o->ncols++)
		;
	for (r = 1; r < o->nrows; r++) {
		size_t k;

		for (k = 0; o->rows[r][k]; k++)
			;
		if (k != o->ncols) {
			ta_error_set(err, TA_EXIT_INPUT, "baseline '%s': row %zu has %zu "
				     "fields, the header %zu", path, r + 1, k, o->ncols);
			return -1;
		}
	}
	return 0;
}

static int old_col(const struct old_csv *o, const char *name)
{
	int c;

	for (c = 0; o->rows[0][c]; c++)
		if (strcmp(o->rows[0][c], name) == 0)
			return c;
	return -1;
}

/* A cell as the CSV writer prints it, to match old keys. */
static void cell_text(const struct ta_table *t, size_t r, size_t c, char *buf,
		      size_t len)
{
	const struct ta_cell *cell = ta_table_cell(t, r, c);

	if (cell->null)
		buf[0] = '\0';
	else if (t->cols[c].type == TA_COL_TEXT)
		snprintf(buf, len, "%s", cell->s);
	else if (t->cols[c].type == TA_COL_INT)
		snprintf(buf, len, "%lld", (long long)cell->i);
	else
		ta_format_real(buf, len, cell->d);
}

void ta_row_key(const struct ta_table *t, size_t row, char *buf, size_t len)
{
	size_t c, used = 0;
	char v[256];

	buf[0] = '\0';
	for (c = 0; c < t->ncols && used < len; c++) {
		if (!t->cols[c].key)
			continue;
		cell_text(t, row, c, v, sizeof(v));
		used += (size_t)snprintf(buf + used, len - used, "%s%s=%s",
					 used ? " " : "", t->cols[c].name, v);
	}
	/* names are anyone's: no control character reaches a terminal */
	for (c = 0; buf[c]; c++)
		if ((unsigned char)buf[c] < 0x20 || buf[c] == 0x7f)
			buf[c] = '?';
}

/* Old rows by their key columns: built once, so matching is a lookup
 * rather than a scan of the old file for every new row. */
struct old_index {
	struct ta_intern *keys;
	size_t *row;        /* by key id: the first old row with that key */
	int usable;         /* every key column exists in the old file */
	size_t twice;       /* an old row whose key an earlier row had, or 0 */
};

static void old_key(const struct old_csv *o, const int *map,
		    const struct ta_table *t, size_t r, struct ta_buf *k)
{
	size_t c;

	ta_buf_reset(k);
	for (c = 0; c < t->ncols; c++)
		if (t->cols[c].key) {
			ta_buf_adds(k, o->rows[r][map[c]]);
			ta_buf_addc(k, '\x1f');
		}
}

static void new_key(const struct ta_table *t, size_t row, struct ta_buf *k)
{
	char v[64];
	size_t c;

	ta_buf_reset(k);
	for (c = 0; c < t->ncols; c++)
		if (t->cols[c].key) {
			const struct ta_cell *x = ta_table_cell(t, row, c);

			/* a text key whole, however long (a kernel's name
			 * runs past 4 KB: cut, it matched no old row) */
			if (t->cols[c].type == TA_COL_TEXT && !x->null) {
				ta_buf_adds(k, x->s);
			} else {
				cell_text(t, row, c, v, sizeof(v));
				ta_buf_adds(k, v);
			}
			ta_buf_addc(k, '\x1f');
		}
}

static void index_old(const struct old_csv *o, const int *map,
		      const struct ta_table *t, struct old_index *ix)
{
	struct ta_buf k = { 0 };
	size_t r, c;
	int is_new;

	ix->keys = ta_intern_new();
	ix->row = ta_xcalloc(o->nrows + 1, sizeof(*ix->row));
	ix->usable = 1;
	for (c = 0; c < t->ncols; c++)
		if (t->cols[c].key && map[c] < 0)
			ix->usable = 0;
	for (r = 1; ix->usable && r < o->nrows; r++) {
		int64_t id;

		old_key(o, map, t, r, &k);
		id = ta_intern(ix->keys, k.s ? k.s : "", k.len, &is_new);
		if (is_new)
			ix->row[id] = r;
		else if (!ix->twice)
			ix->twice = r;
	}
	ta_buf_free(&k);
}

/* The old row whose key columns equal row's, or NULL. */
static char **find_old(const struct old_csv *o, const struct old_index *ix,
		       const struct ta_table *t, size_t row, struct ta_buf *k)
{
	int64_t id;

	if (!ix->usable)
		return NULL;
	new_key(t, row, k);
	id = ta_intern_find(ix->keys, k->s ? k->s : "", k->len);
	return id ? o->rows[ix->row[id]] : NULL;
}

struct ta_baseline {
	char *path, *command;
	struct old_csv o;
};

struct ta_baseline *ta_baseline_load(const char *path, const char *command,
				     struct ta_error *err)
{
	struct ta_baseline *b = ta_xcalloc(1, sizeof(*b));

	b->path = ta_xstrdup(path);
	b->command = ta_xstrdup(command ? command : "COMMAND");
	if (read_old(path, b->command, &b->o, err) < 0) {
		ta_baseline_free(b);
		return NULL;
	}
	return b;
}

void ta_baseline_free(struct ta_baseline *b)
{
	if (!b)
		return;
	free_old(&b->o);
	free(b->path);
	free(b->command);
	free(b);
}

/* Lines about rows (new, gone, changed) stop here: the count says the rest. */
#define MAX_LINES 20

/* A baseline's number: finite, and all of the cell (inf, 1e999 or abc
 * would make a limit infinite or read as 0: a gate passing on nothing). */
static int old_number(const char *s, double *v)
{
	char *end;

	*v = ta_strtod(s, &end);
	return end != s && !*end && isfinite(*v) ? 0 : -1;
}

/* old NULL: a row the baseline has not, which rose from 0 (a new
 * finding's cost, a new kernel's time). A value missing on either side is
 * no pass: it trips unless missing_pass. */
static int check_row(const struct ta_table *t, size_t row, char **old,
		     size_t old_row, const struct ta_baseline *b, const int *map,
		     const struct ta_increase *inc, size_t ninc, int missing_pass,
		     FILE *diag, struct ta_error *err)
{
	size_t i, c;
	int rises = 0;

	for (i = 0; i < ninc; i++) {
		double was = 0, now, limit;
		char key[512];

		c = (size_t)ta_table_col_typed(t, inc[i].column); /* checked: present */
		if (ta_table_cell(t, row, c)->null || (old && !old[map[c]][0])) {
			if (missing_pass)
				continue;
			ta_row_key(t, row, key, sizeof(key));
			fprintf(diag, "traceanalyze: baseline: %s: %s is missing %s "
				"(--missing pass lets it pass)\n", key, inc[i].column,
				ta_table_cell(t, row, c)->null ? "in this run" : "in the baseline");
			rises++;
			continue;
		}
		if (old && old_number(old[map[c]], &was) < 0) {
			ta_error_set(err, TA_EXIT_INPUT, "baseline '%s': row %zu, column "
				     "%s: '%.40s' is not a finite number", b->path,
				     old_row + 1, inc[i].column, old[map[c]]);
			return -1;
		}
		now = t->cols[c].type == TA_COL_INT ?
		      (double)ta_table_cell(t, row, c)->i : ta_table_cell(t, row, c)->d;
		limit = inc[i].relative ? fabs(was) * inc[i].limit / 100 : inc[i].limit;
		if (now - was <= limit || now - was < inc[i].min)
			continue;
		ta_row_key(t, row, key, sizeof(key));
		if (!old)
			fprintf(diag, "traceanalyze: baseline: %s: %s rose from nothing "
				"(a new row) to %g\n", key, inc[i].column, now);
		else if (inc[i].min > 0)
			fprintf(diag, "traceanalyze: baseline: %s: %s rose from %g to %g "
				"(%+g, limit +%g%s and at least +%g)\n", key, inc[i].column,
				was, now, now - was, inc[i].limit,
				inc[i].relative ? "%" : "", inc[i].min);
		else
			fprintf(diag, "traceanalyze: baseline: %s: %s rose from %g to %g "
				"(%+g, limit +%g%s)\n", key, inc[i].column, was, now,
				now - was, inc[i].limit, inc[i].relative ? "%" : "");
		rises++;
	}
	return rises;
}

/* Without limits, --baseline shows what changed: each numeric column of a
 * matched row that moved by 5 % or more. */
static size_t show_changes(const struct ta_table *t, size_t row, char **old,
			   const int *map, size_t shown, FILE *diag)
{
	size_t c;
	char key[512];

	for (c = 0; c < t->ncols; c++) {
		double was, now;

		if (t->cols[c].key || t->cols[c].type == TA_COL_TEXT || map[c] < 0 ||
		    ta_table_cell(t, row, c)->null || !old[map[c]][0])
			continue;
		was = strtod(old[map[c]], NULL);
		now = t->cols[c].type == TA_COL_INT ?
		      (double)ta_table_cell(t, row, c)->i : ta_table_cell(t, row, c)->d;
		if (fabs(now - was) < 0.05 * fabs(was) || now == was)
			continue;
		if (shown++ < MAX_LINES) {
			ta_row_key(t, row, key, sizeof(key));
			fprintf(diag, "traceanalyze: baseline: %s: %s %g -> %g (%+.1f %%)\n",
				key, t->cols[c].name, was, now,
				was != 0 ? 100 * (now - was) / fabs(was) : 100.0);
		}
	}
	return shown;
}

/* The baseline has t's key columns and each limit's column, and no
 * column t has not (a per-step CSV against --summary's rows: its step
 * column keys rows this table sums). */
static int check_columns(const struct ta_table *t, const struct ta_baseline *b,
			 const int *map, const struct ta_increase *inc,
			 size_t ninc, struct ta_error *err)
{
	size_t c, i;
	char have[512], want[512];

	for (c = 0; c < t->ncols; c++)
		if (t->cols[c].key && map[c] < 0)
			goto other_command;
	for (i = 0; b->o.rows[0][i]; i++)
		if (ta_table_col(t, b->o.rows[0][i]) < 0 &&
		    !ta_col_renamed(t, b->o.rows[0][i]))
			goto other_command;
	/* a column twice (or by its old name and its new): which to read? */
	for (i = 0; b->o.rows[0][i]; i++) {
		const char *x = ta_col_renamed(t, b->o.rows[0][i]);
		size_t j;

		for (j = i + 1; b->o.rows[0][j]; j++) {
			const char *y = ta_col_renamed(t, b->o.rows[0][j]);

			if (strcmp(x ? x : b->o.rows[0][i], y ? y : b->o.rows[0][j]) == 0) {
				ta_error_set(err, TA_EXIT_USAGE, "baseline '%s': the column "
					     "'%s' twice in its header", b->path,
					     x ? x : b->o.rows[0][i]);
				return -1;
			}
		}
	}
	for (c = 0; c < t->ncols && (t->cols[c].key || map[c] < 0); c++)
		;
	if (c == t->ncols) /* not one value column in common */
		goto other_command;
	for (i = 0; i < ninc; i++) {
		long at = ta_table_col_typed(t, inc[i].column);

		if (at >= 0 && ta_table_col(t, inc[i].column) < 0 &&
		    ta_col_renamed(t, inc[i].column) && !ta_quiet)
			fprintf(stderr, "traceanalyze: --max-increase: '%s' is now called "
				"'%s' (the old name is read until 2027-06)\n", inc[i].column,
				ta_col_renamed(t, inc[i].column));

		c = at < 0 ? t->ncols : (size_t)at;
		if (c < t->ncols && t->cols[c].key) {
			ta_error_set(err, TA_EXIT_USAGE, "--max-increase: '%s' names the "
				     "row (a key column), not a quantity", t->cols[c].name);
			return -1;
		}
		if (c == t->ncols || map[c] < 0 || t->cols[c].type == TA_COL_TEXT) {
			ta_table_columns(t, want, sizeof(want));
			ta_error_set(err, TA_EXIT_USAGE, "--max-increase: no numeric "
				     "column '%s' in both tables; columns: %s",
				     inc[i].column, want);
			return -1;
		}
	}
	return 0;
other_command:
	have[0] = '\0';
	for (c = 0; b->o.rows[0][c]; c++)
		snprintf(have + strlen(have), sizeof(have) - strlen(have), "%s%s",
			 c ? ", " : "", b->o.rows[0][c]);
	ta_table_columns(t, want, sizeof(want));
	ta_error_set(err, TA_EXIT_USAGE, "baseline '%s' has the columns %s; "
		     "'traceanalyze %s' with these options writes %s: a CSV of "
		     "another command or options?", b->path, have, b->command, want);
	return -1;
}

/* Whether rank (text, as the baseline has it) has a row in t. */
/* The table's ranks, sorted once: each row gone asks whether its rank
 * is still there (a scan each was quadratic in large tables). */
static int64_t *table_ranks(const struct ta_table *t, long rank_c)
{
	int64_t *v = ta_xmalloc((t->nrows + 1) * sizeof(*v));
	size_t r;

	for (r = 0; r < t->nrows; r++)
		v[r] = ta_table_cell(t, r, (size_t)rank_c)->i;
	qsort(v, t->nrows, sizeof(*v), ta_cmp_i64);
	return v;
}

static int rank_in(const int64_t *ranks, size_t n, const char *rank)
{
	int64_t x = strtoll(rank, NULL, 10);

	return bsearch(&x, ranks, n, sizeof(*ranks), ta_cmp_i64) != NULL;
}

int ta_baseline_check(const struct ta_table *t, const struct ta_baseline *b,
		      const struct ta_increase *inc, size_t ninc, int fail_on_new,
		      int missing_pass, FILE *diag, struct ta_error *err)
{
	long rank_c = ta_table_col(t, "rank");
	size_t lost = 0;
	const struct old_csv *o = &b->o;
	struct old_index ix = { NULL, NULL, 0, 0 };
	struct ta_buf key = { 0 };
	int *map = NULL, rises = 0;
	char *used = ta_xcalloc(o->nrows + 1, 1), k[512];
	size_t c, r, matched = 0, added = 0, gone = 0, changed = 0;
	int64_t *ranks = NULL;

	map = ta_xcalloc(t->ncols + 1, sizeof(*map));
	for (c = 0; c < t->ncols; c++) {
		map[c] = old_col(o, t->cols[c].name);
		/* a baseline saved before a column was renamed */
		if (map[c] < 0 && ta_col_former(t, t->cols[c].name) &&
		    (map[c] = old_col(o, ta_col_former(t, t->cols[c].name))) >= 0 &&
		    !ta_quiet)
			fprintf(diag, "traceanalyze: baseline '%s': its '%s' is now called "
				"'%s' (the old name is read until 2027-06)\n", b->path,
				ta_col_former(t, t->cols[c].name), t->cols[c].name);
	}
	if (check_columns(t, b, map, inc, ninc, err) < 0) {
		rises = -1;
		goto out;
	}
	index_old(o, map, t, &ix);
	if (ix.twice) {
		ta_error_set(err, TA_EXIT_USAGE, "baseline '%s': row %zu repeats the "
			     "key of an earlier row: a CSV of another command or "
			     "options than 'traceanalyze %s' with these?", b->path,
			     ix.twice + 1, b->command);
		rises = -1;
		goto out;
	}
	for (r = 0; r < t->nrows; r++) {
		char **old = find_old(o, &ix, t, r, &key);

		if (!old) {
			int rose;

			if (fail_on_new || added < MAX_LINES) {
				ta_row_key(t, r, k, sizeof(k));
				fprintf(diag, "traceanalyze: baseline: new row: %s\n", k);
			}
			added++;
			rises += fail_on_new;
			if (fail_on_new)
				continue;
			/* under a limit, from nothing */
			if ((rose = check_row(t, r, NULL, 0, b, map, inc, ninc, 1, diag,
					      err)) < 0) {
				rises = -1;
				goto out;
			}
			rises += rose;
			continue;
		}
		matched++;
		size_t oi = ix.row[ta_intern_find(ix.keys, key.s ? key.s : "", key.len)];
		int rose;

		used[oi] = 1;
		if ((rose = check_row(t, r, old, oi, b, map, inc, ninc, missing_pass, diag,
				      err)) < 0) {
			rises = -1;
			goto out;
		}
		rises += rose;
		if (!ninc && !ta_quiet)
			changed = show_changes(t, r, old, map, changed, diag);
	}
	for (r = 1; r < o->nrows; r++)
		if (!used[r]) {
			size_t n = 0;

			if (!ta_quiet && gone < MAX_LINES) {
				k[0] = '\0';
				for (c = 0; c < t->ncols; c++)
					if (t->cols[c].key)
						n += (size_t)snprintf(k + n, n < sizeof(k) ? sizeof(k) - n : 0,
								      "%s%s=%s", n ? " " : "",
								      t->cols[c].name, o->rows[r][map[c]]);
				fprintf(diag, "traceanalyze: baseline: gone: %s\n", k);
			}
			gone++;
			/* a rank with rows in the baseline and none now: data
			 * that is not there, not a problem fixed */
			if (rank_c >= 0 && t->cols[rank_c].key && map[rank_c] >= 0) {
				if (!ranks)
					ranks = table_ranks(t, rank_c);
				lost += !rank_in(ranks, t->nrows, o->rows[r][map[rank_c]]);
			}
		}
	if (lost && !missing_pass && (ninc || fail_on_new)) {
		fprintf(diag, "traceanalyze: baseline: %zu row%s of rank%s this run has "
			"not (--missing pass lets it pass)\n", lost, lost == 1 ? "" : "s",
			lost == 1 ? "" : "s");
		rises++;
	}
	if (t->nrows && !matched) {
		ta_error_set(err, TA_EXIT_INPUT, "baseline '%s': no row matches this "
			     "run's (%zu rows, %zu in the baseline): other steps, ranks "
			     "or another run?", b->path, t->nrows, o->nrows - 1);
		rises = -1;
		goto out;
	}
	if (!ta_quiet)
		fprintf(diag, "traceanalyze: baseline '%s': %zu rows matched, %zu new, "
			"%zu gone%s\n", b->path, matched, added, gone,
			changed > MAX_LINES ? " (changes past the first 20 not shown)" : "");
out:
	free(ranks);
	ta_intern_free(ix.keys);
	free(ix.row);
	ta_buf_free(&key);
	free(used);
	free(map);
	return rises;
}
