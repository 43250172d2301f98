/* The roofline's walk kept in a cache entry (#37): walking every host row
 * for the counted calls is two fifths of a cached diagnose and the same
 * every run, so the first run that walks every rank keeps what it found
 * (main.roof_calls, main.roof_launches, info.roof_walk: this build's
 * TA_ROOF_ID) and later runs read those few rows. A call keeps what the
 * walk knew (its operands as written), not what was made of it: its work
 * is computed again on reading, by the build that reads. What is read
 * must hold together (a call's op a counted name, a launch's call one of
 * its rank's), or the walk is made again: a kept walk is never trusted
 * into a crash. Another database (a user's, a shard) is only read. */
#include "roofline_int.h"
#include "roof_id.inc"

#include <stdlib.h>
#include <string.h>

/* the parser's bounds on times (trace_parse.c: [-2^61, 2^62] ns), which
 * the arithmetic on them relies on */
#define TS_LO (-((int64_t)1 << 61))
#define TS_HI ((int64_t)1 << 62)

static int kept_current(sqlite3 *db)
{
	return ta_db_has(db, "table", "roof_calls") &&
	       ta_db_has(db, "table", "roof_launches") &&
	       ta_db_int(db, "SELECT value = '" TA_ROOF_ID "' FROM info"
			 " WHERE key = 'roof_walk'", 0) == 1;
}

static const char *text_or_null(sqlite3_stmt *st, int col, int *bad)
{
	int type = sqlite3_column_type(st, col);

	*bad |= type != SQLITE_TEXT && type != SQLITE_NULL;
	return type == SQLITE_TEXT ? (const char *)sqlite3_column_text(st, col) : NULL;
}

/* The kept calls of the selected ranks, in the walk's order; seqs[i]:
 * call i's number as kept. 1, 0 (does not hold together), -1. */
static int read_calls(sqlite3 *db, struct ta_roof *r, int64_t **seqs,
		      struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, bad = 0;

	/* tables of another shape (an edited entry): walked again */
	if (sqlite3_prepare_v2(db, "SELECT seq, rank, ts, op, gpu_ns, kernel, tf32, dims,"
			       " types, conc FROM main.roof_calls"
			       " WHERE rank IN (SELECT rank FROM temp.sel_ranks) ORDER BY seq",
			       -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return 0;
	}
	while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ta_roof_raw raw;
		int k;

		for (k = 0; k < 7; k++)
			bad |= sqlite3_column_type(st, k) != SQLITE_INTEGER;
		raw.rank = sqlite3_column_int64(st, 1);
		raw.ts = sqlite3_column_int64(st, 2);
		raw.op = sqlite3_column_int64(st, 3);
		raw.gpu_ns = sqlite3_column_int64(st, 4);
		raw.kernel = sqlite3_column_int64(st, 5);
		raw.tf32 = sqlite3_column_int64(st, 6) != 0;
		raw.dims = text_or_null(st, 7, &bad);
		raw.types = text_or_null(st, 8, &bad);
		raw.conc = text_or_null(st, 9, &bad);
		bad |= raw.op < 0 || (size_t)raw.op >= r->nnames || !r->names[raw.op] ||
		       raw.gpu_ns < 0 || raw.gpu_ns > TS_HI || raw.kernel < -1 ||
		       raw.ts < TS_LO || raw.ts > TS_HI;
		if (bad)
			break;
		if (r->ncalls == cap) {
			cap = cap ? 2 * cap : 256;
			*seqs = ta_xrealloc(*seqs, cap * sizeof(**seqs));
		}
		(*seqs)[r->ncalls] = sqlite3_column_int64(st, 0);
		/* ordered by seq, its primary key: strictly rising */
		bad |= r->ncalls && (*seqs)[r->ncalls] <= (*seqs)[r->ncalls - 1];
		ta_roof_add_call(r, &raw);
	}
	sqlite3_finalize(st);
	if (bad)
		return 0;
	return ta_db_done(db, rc, err) < 0 ? -1 : 1;
}

static size_t find_seq(const int64_t *seqs, size_t n, int64_t seq)
{
	size_t lo = ta_lower_i64(seqs, n, seq);

	return lo < n && seqs[lo] == seq ? lo : (size_t)-1;
}

static int read_launches(sqlite3 *db, struct ta_roof *r, const int64_t *seqs,
			 struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc, bad = 0;

	if (sqlite3_prepare_v2(db, "SELECT rank, correlation, call FROM main.roof_launches"
			       " WHERE rank IN (SELECT rank FROM temp.sel_ranks) ORDER BY rowid",
			       -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return 0;
	}
	while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ta_roof_launch l;
		int k;

		for (k = 0; k < 3; k++)
			bad |= sqlite3_column_type(st, k) != SQLITE_INTEGER;
		l.rank = sqlite3_column_int64(st, 0);
		l.correlation = sqlite3_column_int64(st, 1);
		l.call = find_seq(seqs, r->ncalls, sqlite3_column_int64(st, 2));
		bad |= l.call == (size_t)-1 || r->calls[l.call].rank != l.rank;
		if (bad)
			break;
		if (r->nlaunches == r->cap_launches) {
			r->cap_launches = r->cap_launches ? 2 * r->cap_launches : 256;
			r->launches = ta_xrealloc(r->launches,
						  r->cap_launches * sizeof(*r->launches));
		}
		r->launches[r->nlaunches++] = l;
	}
	sqlite3_finalize(st);
	if (bad)
		return 0;
	return ta_db_done(db, rc, err) < 0 ? -1 : 1;
}

int ta_roof_kept(sqlite3 *db, struct ta_roof *r, struct ta_error *err)
{
	int64_t *seqs = NULL;
	int rc;

	if (!kept_current(db))
		return 0;
	/* rows of a rank the database has not: not read, and not whole */
	if (ta_db_int(db, "SELECT EXISTS (SELECT 1 FROM main.roof_calls WHERE rank IS NULL"
		      " OR rank NOT IN (SELECT rank FROM inputs)) OR EXISTS (SELECT 1"
		      " FROM main.roof_launches WHERE rank IS NULL OR rank NOT IN"
		      " (SELECT rank FROM inputs))", 1) != 0)
		return 2;
	rc = ta_roof_load_names(db, r, err);
	if (rc == 0)
		rc = read_calls(db, r, &seqs, err);
	if (rc > 0)
		rc = read_launches(db, r, seqs, err);
	free(seqs);
	return rc == 0 ? 2 : rc;
}

struct keep {
	const struct ta_roof *r;
	int replace;
};

static int write_kept(sqlite3 *rw, void *arg, struct ta_error *err)
{
	const struct keep *k = arg;
	const struct ta_roof *r = k->r;
	sqlite3_stmt *call = NULL, *launch = NULL;
	size_t i;
	int rc = SQLITE_DONE;

	if (!k->replace && kept_current(rw))
		return 0;   /* another process was first */
	if (ta_db_exec(rw, "DROP TABLE IF EXISTS main.roof_calls;"
		       "DROP TABLE IF EXISTS main.roof_launches;"
		       "DELETE FROM info WHERE key = 'roof_walk';"
		       "CREATE TABLE main.roof_calls (seq INTEGER PRIMARY KEY, rank INTEGER,"
		       " ts INTEGER, op INTEGER, gpu_ns INTEGER, kernel INTEGER, tf32 INTEGER,"
		       " dims TEXT, types TEXT, conc TEXT);"
		       "CREATE TABLE main.roof_launches (rank INTEGER, correlation INTEGER,"
		       " call INTEGER);", err) < 0 ||
	    ta_db_prepare(rw, "INSERT INTO main.roof_calls VALUES (?, ?, ?, ?, ?, ?, ?,"
			  " ?, ?, ?)", &call, err) < 0 ||
	    ta_db_prepare(rw, "INSERT INTO main.roof_launches VALUES (?, ?, ?)",
			  &launch, err) < 0) {
		sqlite3_finalize(call);
		return -1;
	}
	for (i = 0; rc == SQLITE_DONE && i < r->ncalls; i++) {
		const struct ta_roof_call *c = &r->calls[i];

		sqlite3_bind_int64(call, 1, (int64_t)i);
		sqlite3_bind_int64(call, 2, c->rank);
		sqlite3_bind_int64(call, 3, c->ts);
		sqlite3_bind_int64(call, 4, c->op_id);
		sqlite3_bind_int64(call, 5, c->gpu_ns);
		sqlite3_bind_int64(call, 6, c->kernel);
		sqlite3_bind_int(call, 7, c->tf32);
		if (c->no_dims)
			sqlite3_bind_null(call, 8);
		else
			sqlite3_bind_text(call, 8, c->shape, -1, SQLITE_STATIC);
		if (c->types)
			sqlite3_bind_text(call, 9, c->types, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(call, 9);
		if (c->conc)
			sqlite3_bind_text(call, 10, c->conc, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(call, 10);
		rc = sqlite3_step(call);
		sqlite3_reset(call);
	}
	for (i = 0; rc == SQLITE_DONE && i < r->nlaunches; i++) {
		sqlite3_bind_int64(launch, 1, r->launches[i].rank);
		sqlite3_bind_int64(launch, 2, r->launches[i].correlation);
		sqlite3_bind_int64(launch, 3, (int64_t)r->launches[i].call);
		rc = sqlite3_step(launch);
		sqlite3_reset(launch);
	}
	sqlite3_finalize(call);
	sqlite3_finalize(launch);
	if (ta_db_done(rw, rc, err) < 0)
		return -1;
	return ta_db_exec(rw, "INSERT INTO info VALUES ('roof_walk', '" TA_ROOF_ID "');",
			  err);
}

void ta_roof_keep(sqlite3 *db, const struct ta_roof *r, int replace)
{
	struct keep k = { r, replace };

	ta_model_write_entry(db, write_kept, &k);
}
