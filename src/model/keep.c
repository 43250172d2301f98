/* What a database the tool writes for the user (ingest -o) keeps for the
 * commands that read it later: the model's device rows (dev_rows, as a
 * cache entry keeps them from its first run) and, in a shard, its part of
 * a cross-rank command (ta_model_export_coll's tables), so that a
 * command on a directory of shards gathers those parts rather than
 * making each in a process of its own (#37: the per-rank work done once,
 * where the shard is made; the join reads small parts). A cache entry of
 * one file keeps its part the first time one is exported from it. Both
 * carry TA_MODEL_ID: another build's are made again, as before. */
#include "model_int.h"
#include "model_id.inc"

#define LO TA_PART_LO
#define HI TA_PART_HI

/* One rank's database: a shard, or a cache entry of one file. */
static int one_rank(sqlite3 *db)
{
	return ta_db_int(db, "SELECT count(*) FROM files", 0) == 1;
}

/* db keeps a part this build made. */
static int part_current(sqlite3 *db)
{
	return ta_db_int(db, "SELECT value = '" TA_MODEL_ID "' FROM info"
			 " WHERE key = 'part'", 0) == 1 &&
	       ta_db_has(db, "table", "part_traits") &&
	       ta_db_has(db, "table", "part_clock") &&
	       ta_db_has(db, "table", "part_coll");
}

int ta_model_part_kept(sqlite3 *db)
{
	return part_current(db) && one_rank(db);
}

/* A part as q asks it: made for every rank by the rules ingest -o's
 * query has (the default's), with the windows by steps. */
static int part_fits(const struct ta_query *q)
{
	struct ta_query every = { 0, NULL, 0, 0, NULL, NULL };

	return ta_rules_id(q) == ta_rules_id(&every) && !q->window_span && !q->ranks;
}

/* The part read through db (its coll made) into memory, before a second
 * connection writes it to db's file: read while that connection wrote,
 * the file waited on its lock once its page cache spilled to the file
 * (helper-49: 36 k collectives a rank, a run that never ended). */
static sqlite3 *staged_part(sqlite3 *db, struct ta_error *err)
{
	sqlite3 *mem = NULL;

	if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		ta_error_set(err, TA_EXIT_SYSTEM, "cannot open a database in memory");
		sqlite3_close(mem);
		return NULL;
	}
	if (ta_model_save_part(db, mem, "part_", err) < 0) {
		sqlite3_close(mem);
		return NULL;
	}
	return mem;
}

/* ctx: the part staged in memory (staged_part). */
static int write_part(sqlite3 *rw, void *ctx, struct ta_error *err)
{
	sqlite3 *mem = ctx;

	if (part_current(rw))
		return 0; /* another process was first */
	return ta_db_exec(rw, "DROP TABLE IF EXISTS main.part_coll;"
			  "DROP TABLE IF EXISTS main.part_traits;"
			  "DROP TABLE IF EXISTS main.part_clock;"
			  "DELETE FROM info WHERE key = 'part';", err) < 0 ||
	       ta_db_copy_rows(mem, "SELECT * FROM part_coll", rw, "part_coll", err) < 0 ||
	       ta_db_copy_rows(mem, "SELECT * FROM part_traits", rw, "part_traits", err) < 0 ||
	       ta_db_copy_rows(mem, "SELECT * FROM part_clock", rw, "part_clock", err) < 0 ||
	       ta_db_exec(rw, "INSERT INTO info VALUES ('part', '" TA_MODEL_ID "')",
			  err) < 0 ? -1 : 0;
}

int ta_model_keep(const char *path, struct ta_error *err)
{
	struct ta_query every = { 0, NULL, 0, 0, NULL, NULL };
	sqlite3 *db = NULL;
	int rc = ta_db_open(path, &db, err) < 0 ||
		 ta_db_write(db, ta_model_write_dev_rows, NULL, err) < 0 ? -1 : 0;

	/* a shard: one rank, whose part a join gathers */
	if (rc == 0 && one_rank(db)) {
		sqlite3 *mem = NULL;

		rc = ta_model_prepare(db, &every, TA_NEED_COLL, err) < 0 ||
		     !(mem = staged_part(db, err)) ||
		     ta_db_write(db, write_part, mem, err) < 0 ? -1 : 0;
		sqlite3_close(mem);
	}
	sqlite3_close(db);
	return rc;
}

int ta_model_keep_rows(const char *path, struct ta_error *err)
{
	sqlite3 *db = NULL;
	int rc = ta_db_open(path, &db, err) < 0 ||
		 ta_db_write(db, ta_model_write_dev_rows, NULL, err) < 0 ? -1 : 0;

	sqlite3_close(db);
	return rc;
}

void ta_model_keep_part(sqlite3 *db, const struct ta_query *q)
{
	sqlite3 *mem;

	if (part_fits(q) && !part_current(db) && one_rank(db) &&
	    (mem = staged_part(db, NULL)) != NULL) {
		ta_model_write_entry(db, write_part, mem);
		sqlite3_close(mem);
	}
}

int ta_model_read_part(sqlite3 *shard, const struct ta_query *q, sqlite3 *out,
		       struct ta_error *err)
{
	if (!part_fits(q) || !part_current(shard))
		return 0;
	/* the shard's own rank's rows, a row each of the others (an edited
	 * part may not speak for another shard), and times within the
	 * parser's bounds (trace_parse.c: [-2^61, 2^62] ns), which the
	 * arithmetic on them relies on */
	return ta_db_copy_rows(shard, "SELECT * FROM main.part_coll WHERE rank ="
			       " (SELECT rank FROM main.files)" TIMES_IN_BOUNDS,
			       out, "coll", err) < 0 ||
	       ta_db_copy_rows(shard, "SELECT graphs, triton, pinned, loader_workers,"
			       " stacks, optim, sdd_pipeline, no_host FROM main.part_traits LIMIT 1", out, "traits", err) < 0 ||
	       ta_db_copy_rows(shard, "SELECT min_ts_ns FROM main.part_clock WHERE"
			       " min_ts_ns IS NULL OR min_ts_ns BETWEEN " LO " AND " HI
			       " LIMIT 1", out, "clock", err) < 0 ? -1 : 1;
}
