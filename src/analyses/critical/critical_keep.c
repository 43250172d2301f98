/* The critical path kept in a cache entry (#37): loading a rank's
 * kernels, calls and host rows for the walk is two fifths of a cached
 * diagnose and gives the same tables every run, so the first run keeps
 * them (main.path_kept: the tables as the shards' wire writes them and
 * their CRC, by a key of this build's TA_CRIT_ID, the rules, the ranks
 * and the options) and later runs with the same key read them. What is
 * read must be whole, in the tables' shape, with values a walk can give,
 * or the path is walked again. Another database (a
 * user's, a shard) is only read; a --no-cache one has no entry to keep.
 * A job read on shards walks its pieces there (ta_critical_pieces), as
 * before: only one database's walk is kept. */
#include "critical_int.h"
#include "crit_id.inc"
#include "ta_model.h"
#include "ta_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* at most this many keys kept (a run with --ranks, --step, --top ...) */
#define KEPT_MAX 8

/* Options whose path can be kept: not --what-if's (a pattern a run), not
 * one that collects nodes for --trace. */
static int keepable(const struct ta_critical_opts *o)
{
	return !o->what_kind && !o->nodes;
}

/* The key: this build, the rules, the ranks asked for and the traces (as
 * the roofline's walk_key), and the options the tables depend on. */
static char *path_key(sqlite3 *db, const struct ta_query *q,
		      const struct ta_critical_opts *o)
{
	sqlite3_stmt *st = NULL;
	struct ta_buf k = { 0 };
	char *key = NULL;
	size_t i;

	ta_buf_addf(&k, "%s\x1f%u\x1f%d\x1f%lld\x1f%zu\x1f", TA_CRIT_ID, ta_rules_id(q),
		    q->window_span, (long long)o->step, o->top);
	if (!q->ranks)
		ta_buf_addf(&k, "all");
	for (i = 0; q->ranks && i < q->nranks; i++)
		ta_buf_addf(&k, "%s%lld", i ? "," : "", (long long)q->ranks[i]);
	if (sqlite3_prepare_v2(db, "SELECT group_concat(path || ':' || mtime_ns || ':' || rank,"
			       " '|') FROM inputs", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		const char *in = (const char *)sqlite3_column_text(st, 0);

		ta_buf_addf(&k, "\x1f%s", in ? in : "");
		key = ta_xstrdup(k.s);
	}
	sqlite3_finalize(st);
	ta_buf_free(&k);
	return key;
}

static int cell_finite(const struct ta_cell *c)
{
	return !c->null && isfinite(c->d);
}

/* Whether rank is one of the ranks asked for (the model's sel_ranks). */
static int selected(sqlite3_stmt *sel, const struct ta_cell *rank)
{
	int in;

	if (rank->null)
		return 0;
	sqlite3_bind_int64(sel, 1, rank->i);
	in = sqlite3_step(sel) == SQLITE_ROW && sqlite3_column_int(sel, 0) == 1;
	sqlite3_reset(sel);
	return in;
}

/* Whether the tables read hold what a walk gives: ranks the run asked
 * for, times as finite numbers (a damaged trace's may be negative) whose
 * parts add up to the path, kinds the parts' names (the CRC caught what
 * changed by accident; this, what was changed into other rows). */
static int holds(sqlite3 *db, const struct ta_table *path, const struct ta_table *top)
{
	sqlite3_stmt *sel = NULL;
	size_t r, c;
	int ok = sqlite3_prepare_v2(db, "SELECT EXISTS (SELECT 1 FROM temp.sel_ranks"
				    " WHERE rank = ?)", -1, &sel, NULL) == SQLITE_OK;

	for (r = 0; ok && r < path->nrows; r++) {
		double len = ta_table_cell(path, r, 2)->d, sum = 0;

		ok = selected(sel, ta_table_cell(path, r, 0));
		for (c = 2; ok && c < path->ncols; c++)
			ok = cell_finite(ta_table_cell(path, r, c));
		for (c = 3; ok && c < 3 + TA_PATH_PARTS; c++)
			sum += ta_table_cell(path, r, c)->d;
		/* each part a whole number of ns over 1e3: a rounding's worth */
		ok = ok && fabs(sum - len) <= 1e-9 * fabs(len) + 1e-6;
	}
	for (r = 0; ok && r < top->nrows; r++) {
		const struct ta_cell *kind = ta_table_cell(top, r, 2);
		size_t k;

		ok = selected(sel, ta_table_cell(top, r, 0)) && !kind->null &&
		     !ta_table_cell(top, r, 3)->null && cell_finite(ta_table_cell(top, r, 4)) &&
		     !ta_table_cell(top, r, 5)->null && ta_table_cell(top, r, 5)->i >= 0;
		for (k = 0; ok && ta_critical_parts[k] && strcmp(ta_critical_parts[k], kind->s); k++)
			;
		ok = ok && ta_critical_parts[k];
	}
	sqlite3_finalize(sel);
	return ok;
}

static int64_t crc_of(const void *p, size_t n)
{
	return (int64_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

int cp_kept(sqlite3 *db, const struct ta_query *q, const struct ta_critical_opts *o,
	    struct ta_table **out, struct ta_table **top)
{
	sqlite3_stmt *st = NULL;
	struct ta_error e = { 0, "", 0 };
	char *key;
	int ok = 0;

	*out = *top = NULL;
	/* the model's views (inputs), not its rows: a path read needs none;
	 * where that fails, the walk says why */
	if (!keepable(o) || !ta_db_has(db, "table", "path_kept") ||
	    ta_model_prepare(db, q, 0, &e) < 0 || !(key = path_key(db, q, o)))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT wire, crc FROM main.path_kept WHERE key = ?", -1,
			       &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_BLOB &&
		    sqlite3_column_bytes(st, 0) > 0 &&
		    sqlite3_column_type(st, 1) == SQLITE_INTEGER &&
		    sqlite3_column_int64(st, 1) == crc_of(sqlite3_column_blob(st, 0),
							  (size_t)sqlite3_column_bytes(st, 0))) {
			FILE *f = fmemopen((void *)sqlite3_column_blob(st, 0),
					   (size_t)sqlite3_column_bytes(st, 0), "rb");

			*out = cp_path_table(0);
			*top = cp_top_table();
			ok = f && ta_table_read_wire(f, *out, 0) && ta_table_read_wire(f, *top, 0) &&
			     fgetc(f) == EOF && holds(db, *out, *top);
			if (f)
				fclose(f);
		}
	}
	sqlite3_finalize(st);
	free(key);
	if (!ok) {
		ta_table_free(*out);
		ta_table_free(*top);
		*out = *top = NULL;
	}
	return ok;
}

struct keep {
	const char *key;
	const char *wire;
	size_t len;
};

static int write_kept(sqlite3 *rw, void *arg, struct ta_error *err)
{
	const struct keep *k = arg;
	sqlite3_stmt *st = NULL;
	int rc;

	/* a table of another shape (an edited entry) is made again; keys
	 * of other builds go; past KEPT_MAX, the oldest */
	if (ta_db_int(rw, "SELECT group_concat(name, ',') = 'key,wire,crc' FROM (SELECT name"
		      " FROM pragma_table_info('path_kept') ORDER BY cid)", 0) != 1 &&
	    ta_db_exec(rw, "DROP TABLE IF EXISTS main.path_kept;", err) < 0)
		return -1;
	if (ta_db_exec(rw, "CREATE TABLE IF NOT EXISTS main.path_kept"
		       " (key TEXT PRIMARY KEY, wire BLOB, crc INTEGER);"
		       "DELETE FROM main.path_kept WHERE substr(key, 1, length('" TA_CRIT_ID
		       "') + 1) != '" TA_CRIT_ID "' || char(31);", err) < 0 ||
	    ta_db_prepare(rw, "INSERT OR REPLACE INTO main.path_kept VALUES (?, ?, ?)", &st,
			  err) < 0)
		return -1;
	sqlite3_bind_text(st, 1, k->key, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, k->wire, (int)k->len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, crc_of(k->wire, k->len));
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (ta_db_done(rw, rc, err) < 0)
		return -1;
	return ta_db_exec(rw, "DELETE FROM main.path_kept WHERE rowid NOT IN (SELECT rowid"
			  " FROM main.path_kept ORDER BY rowid DESC LIMIT "
			  TA_SQL(KEPT_MAX) ")", err);
}

void cp_keep(sqlite3 *db, const struct ta_query *q, const struct ta_critical_opts *o,
	     const struct ta_table *out, const struct ta_table *top)
{
	struct keep k = { NULL, NULL, 0 };
	char *wire = NULL;
	size_t len = 0;
	FILE *f;

	if (!keepable(o) || out->also || !(k.key = path_key(db, q, o)))
		return;
	if ((f = open_memstream(&wire, &len))) {
		ta_table_write_wire(f, out);
		ta_table_write_wire(f, top);
		if (fclose(f) == 0 && len < (64u << 20)) {
			k.wire = wire;
			k.len = len;
			ta_model_write_entry(db, write_kept, &k);
		}
	}
	free(wire);
	free((char *)k.key);
}
