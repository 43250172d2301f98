/* Bulk load of parsed events: one transaction, one prepared insert,
 * indexes after the load. The caller writes to a temp name and renames. */
#include "ta_intern.h"
#include "ta_db.h"
#include "ta_parse.h"

#include <stdlib.h>
#include <string.h>

enum {
	C_RANK = 1, C_IDX, C_PH, C_CAT, C_NAME, C_PID, C_TID, C_TS, C_DUR,
	C_HTA_TS, C_HTA_DUR, C_STREAM, C_CORR, C_EXT, C_DEVICE, C_BYTES,
	C_GBPS, C_GRID, C_BLOCK, C_REGS, C_SMEM, C_DIMS, C_TYPES, C_PYID,
	C_PYPARENT, C_SEQ, C_FWD, C_CBID, C_FLOW_ID, C_FLOW_BP, C_ALLOC,
	C_RESERVED, C_WAIT, C_COLL, C_ROLE, C_NCOLS = C_ROLE
};

static const char insert_sql[] =
	"INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
	"?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

struct ta_db_writer {
	sqlite3 *db;
	sqlite3_stmt *ins, *ins_name, *ins_meta;
	struct ta_intern *names;
	signed char *roles;    /* by name id: role of that category, -1 unknown */
	size_t nroles;
	int64_t rank;          /* provisional rank of the current file */
	int64_t first_event_rowid, first_meta_rowid;
	int64_t meta_rows;
	int64_t file_id;
	const char *file_path;
	int64_t file_bytes, file_mtime;
};

static int fail(struct ta_db_writer *w, struct ta_error *err)
{
	ta_error_set(err, TA_EXIT_SYSTEM, "database: %s", sqlite3_errmsg(w->db));
	return -1;
}

struct ta_db_writer *ta_db_writer_new(const char *path, struct ta_error *err)
{
	struct ta_db_writer *w = ta_xcalloc(1, sizeof(*w));

	if (sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		fail(w, err);
		ta_db_writer_abort(w);
		return NULL;
	}
	/* a scratch file that is renamed on success, removed on failure */
	if (ta_db_exec(w->db,
		       "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF;"
		       "PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;"
		       "PRAGMA cache_size = -16384; PRAGMA temp_store = FILE;",
		       err) < 0 ||
	    ta_db_exec(w->db, ta_db_schema_sql, err) < 0 ||
	    ta_db_exec(w->db, "BEGIN", err) < 0 ||
	    ta_db_prepare(w->db, insert_sql, &w->ins, err) < 0 ||
	    ta_db_prepare(w->db, "INSERT INTO names VALUES (?, ?)",
			  &w->ins_name, err) < 0 ||
	    ta_db_prepare(w->db, "INSERT INTO meta VALUES (?, ?, ?)",
			  &w->ins_meta, err) < 0) {
		ta_db_writer_abort(w);
		return NULL;
	}
	w->names = ta_intern_new();
	return w;
}

int ta_db_writer_begin_file(struct ta_db_writer *w, const char *path,
			    int64_t bytes, int64_t mtime_ns, int64_t rank,
			    struct ta_error *err)
{
	(void)err;
	w->rank = rank;
	w->first_event_rowid = sqlite3_last_insert_rowid(w->db);
	w->file_path = path;
	w->file_bytes = bytes;
	w->file_mtime = mtime_ns;
	w->first_meta_rowid = w->meta_rows;
	return 0;
}

static int role_of(const char *cat)
{
	static const char *const gpu[] = { "kernel", "Kernel", "gpu_memcpy",
		"Memcpy", "gpu_memset", "Memset", "mtia_ccp_events", NULL };
	static const char *const runtime[] = { "cuda_runtime", "cuda_driver",
		"Runtime", "mtia_runtime", NULL };
	static const char *const cpu[] = { "cpu_op", "user_annotation",
		"python_function", "Operator", NULL };
	size_t i;

	for (i = 0; gpu[i]; i++)
		if (strcmp(cat, gpu[i]) == 0)
			return 1;
	for (i = 0; runtime[i]; i++)
		if (strcmp(cat, runtime[i]) == 0)
			return 2;
	if (strcmp(cat, "cuda_sync") == 0)
		return 3;
	for (i = 0; cpu[i]; i++)
		if (strcmp(cat, cpu[i]) == 0)
			return 4;
	return strcmp(cat, "gpu_user_annotation") == 0 ? 5 : 0;
}

/* The category's role, computed once per distinct category. */
static int event_role(struct ta_db_writer *w, const struct ta_event *ev,
		      int64_t cat_id)
{
	if (cat_id <= 0)
		return 0;
	if ((size_t)cat_id >= w->nroles) {
		size_t n = (size_t)cat_id * 2 + 16;

		w->roles = ta_xrealloc(w->roles, n);
		memset(w->roles + w->nroles, -1, n - w->nroles);
		w->nroles = n;
	}
	if (w->roles[cat_id] < 0)
		w->roles[cat_id] = (signed char)role_of(ta_event_text(ev, TA_F_CAT));
	return w->roles[cat_id];
}

/* Binds an interned string, adding it to the names table when new;
 * *id_out gets its id (0 when absent). */
static int bind_name(struct ta_db_writer *w, int col, const struct ta_event *ev,
		     enum ta_field f, int64_t *id_out)
{
	int is_new;
	int64_t id;

	*id_out = 0;
	if (ev->f[f].type != TA_VAL_TEXT)
		return SQLITE_OK;
	id = ta_intern(w->names, ta_event_text(ev, f), ev->f[f].len, &is_new);
	if (is_new) {
		sqlite3_bind_int64(w->ins_name, 1, id);
		sqlite3_bind_text(w->ins_name, 2, ta_event_text(ev, f),
				  (int)ev->f[f].len, SQLITE_TRANSIENT);
		if (sqlite3_step(w->ins_name) != SQLITE_DONE)
			return SQLITE_ERROR;
		sqlite3_reset(w->ins_name);
	}
	*id_out = id;
	return sqlite3_bind_int64(w->ins, col, id);
}

/* Absent values are left unbound: the statement's bindings are cleared
 * after every row, which is cheaper than binding NULL to each. */
static void bind_val(sqlite3_stmt *st, int col, const struct ta_event *ev,
		     enum ta_field f)
{
	const struct ta_val *v = &ev->f[f];

	switch (v->type) {
	case TA_VAL_INT:
		sqlite3_bind_int64(st, col, v->i);
		break;
	case TA_VAL_REAL:
		sqlite3_bind_double(st, col, v->d);
		break;
	case TA_VAL_TEXT:
		sqlite3_bind_text(st, col, ta_event_text(ev, f), (int)v->len,
				  SQLITE_TRANSIENT);
		break;
	default:
		break;
	}
}

/* HTA's lenient numeric conversion: numeric text counts, the rest is -1
 * (hta-semantics 2.5). */
static int64_t lenient_int(const struct ta_event *ev, enum ta_field f)
{
	const struct ta_val *v = &ev->f[f];
	int64_t i;

	if (v->type == TA_VAL_INT)
		return v->i;
	if (v->type == TA_VAL_REAL && v->d > -9e18 && v->d < 9e18)
		return (int64_t)v->d;
	if (v->type == TA_VAL_TEXT &&
	    ta_parse_int64(ta_event_text(ev, f), v->len, &i) == 0)
		return i;
	return -1;
}

static void bind_either(sqlite3_stmt *st, int col, const struct ta_event *ev,
			enum ta_field a, enum ta_field b)
{
	bind_val(st, col, ev, ev->f[a].type != TA_VAL_NONE ? a : b);
}

static void bind_times(sqlite3_stmt *st, const struct ta_event *ev)
{
	if (ev->has_ts) {
		sqlite3_bind_int64(st, C_TS, ev->ts_ns);
		sqlite3_bind_int64(st, C_HTA_TS, ev->hta_ts_ns);
	}
	if (ev->has_dur) {
		sqlite3_bind_int64(st, C_DUR, ev->dur_ns);
		sqlite3_bind_int64(st, C_HTA_DUR, ev->hta_dur_ns);
	}
}

int ta_db_writer_event(struct ta_db_writer *w, const struct ta_event *ev)
{
	sqlite3_stmt *st = w->ins;
	int64_t cat, name;

	sqlite3_bind_int64(st, C_RANK, w->rank);
	sqlite3_bind_int64(st, C_IDX, ev->index);
	bind_val(st, C_PH, ev, TA_F_PH);
	if (bind_name(w, C_CAT, ev, TA_F_CAT, &cat) != SQLITE_OK ||
	    bind_name(w, C_NAME, ev, TA_F_NAME, &name) != SQLITE_OK)
		return -1;
	sqlite3_bind_int(st, C_ROLE, event_role(w, ev, cat));
	bind_val(st, C_PID, ev, TA_F_PID);
	bind_val(st, C_TID, ev, TA_F_TID);
	bind_times(st, ev);
	sqlite3_bind_int64(st, C_STREAM, lenient_int(ev, TA_F_STREAM));
	sqlite3_bind_int64(st, C_CORR, lenient_int(ev, TA_F_CORRELATION));
	bind_val(st, C_EXT, ev, TA_F_EXTERNAL_ID);
	bind_either(st, C_DEVICE, ev, TA_F_DEVICE, TA_F_DEVICE_ID);
	bind_either(st, C_BYTES, ev, TA_F_BYTES, TA_F_MEM_BYTES);
	bind_val(st, C_GBPS, ev, TA_F_GBPS);
	bind_val(st, C_GRID, ev, TA_F_GRID);
	bind_val(st, C_BLOCK, ev, TA_F_BLOCK);
	bind_val(st, C_REGS, ev, TA_F_REGISTERS);
	bind_val(st, C_SMEM, ev, TA_F_SHARED_MEM);
	bind_val(st, C_DIMS, ev, TA_F_INPUT_DIMS);
	bind_val(st, C_TYPES, ev, TA_F_INPUT_TYPES);
	bind_val(st, C_PYID, ev, TA_F_PYTHON_ID);
	bind_val(st, C_PYPARENT, ev, TA_F_PYTHON_PARENT_ID);
	bind_val(st, C_SEQ, ev, TA_F_SEQ_NR);
	bind_val(st, C_FWD, ev, TA_F_FWD_TID);
	bind_val(st, C_CBID, ev, TA_F_CBID);
	bind_val(st, C_FLOW_ID, ev, TA_F_ID);
	bind_val(st, C_FLOW_BP, ev, TA_F_BP);
	bind_val(st, C_ALLOC, ev, TA_F_TOTAL_ALLOCATED);
	bind_val(st, C_RESERVED, ev, TA_F_TOTAL_RESERVED);
	bind_val(st, C_WAIT, ev, TA_F_WAIT_ON_STREAM);
	bind_val(st, C_COLL, ev, TA_F_COLLECTIVE);
	if (sqlite3_step(st) != SQLITE_DONE)
		return -1;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return 0;
}

int ta_db_writer_meta(struct ta_db_writer *w, const char *key,
		      const char *json, size_t len)
{
	sqlite3_bind_int64(w->ins_meta, 1, w->rank);
	sqlite3_bind_text(w->ins_meta, 2, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(w->ins_meta, 3, json, (int)len, SQLITE_TRANSIENT);
	if (sqlite3_step(w->ins_meta) != SQLITE_DONE)
		return -1;
	sqlite3_reset(w->ins_meta);
	w->meta_rows++;
	return 0;
}

/* Rows were written under a provisional rank; distributedInfo may only
 * have been seen at the end of the file. */
static int move_rank(struct ta_db_writer *w, int64_t rank, struct ta_error *err)
{
	char sql[256];

	if (rank == w->rank)
		return 0;
	snprintf(sql, sizeof(sql),
		 "UPDATE events SET rank = %lld WHERE rowid > %lld;"
		 "UPDATE meta SET rank = %lld WHERE rowid > %lld;",
		 (long long)rank, (long long)w->first_event_rowid,
		 (long long)rank, (long long)w->first_meta_rowid);
	return ta_db_exec(w->db, sql, err);
}

int ta_db_writer_end_file(struct ta_db_writer *w, int64_t rank,
			  const struct ta_parse_result *res,
			  struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	char damage[320] = "";
	int rc;

	if (move_rank(w, rank, err) < 0)
		return -1;
	if (res->truncated)
		snprintf(damage, sizeof(damage), "%s at byte %lld", res->damage,
			 (long long)res->damage_offset);
	if (ta_db_prepare(w->db,
			  "INSERT INTO files (rank, path, bytes, mtime_ns, events,"
			  " json_bytes, truncated, damage, hta_rounded, bad_times)"
			  " VALUES (?,?,?,?,?,?,?,?,?,?)", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	sqlite3_bind_text(st, 2, w->file_path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, w->file_bytes);
	sqlite3_bind_int64(st, 4, w->file_mtime);
	sqlite3_bind_int64(st, 5, res->events);
	sqlite3_bind_int64(st, 6, res->bytes);
	sqlite3_bind_int(st, 7, res->truncated);
	if (res->truncated)
		sqlite3_bind_text(st, 8, damage, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 9, res->any_float_ts);
	sqlite3_bind_int64(st, 10, res->bad_times);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(w, err);
	sqlite3_finalize(st);
	return rc;
}

int ta_db_writer_discard_file(struct ta_db_writer *w, struct ta_error *err)
{
	char sql[160];

	snprintf(sql, sizeof(sql),
		 "DELETE FROM events WHERE rowid > %lld;"
		 "DELETE FROM meta WHERE rowid > %lld;",
		 (long long)w->first_event_rowid,
		 (long long)w->first_meta_rowid);
	w->meta_rows = w->first_meta_rowid;
	return ta_db_exec(w->db, sql, err);
}

int ta_db_writer_finish(struct ta_db_writer *w, struct ta_error *err)
{
	char sql[128];
	int rc;

	snprintf(sql, sizeof(sql),
		 "INSERT INTO info VALUES ('schema_version', %d),"
		 " ('tool_version', '%s');", TA_SCHEMA_VERSION, TA_VERSION);
	rc = ta_db_exec(w->db, sql, err);
	if (rc == 0)
		rc = ta_db_exec(w->db, ta_db_index_sql, err);
	if (rc == 0)
		rc = ta_db_exec(w->db, "COMMIT", err);
	ta_db_writer_abort(w);
	return rc;
}

void ta_db_writer_abort(struct ta_db_writer *w)
{
	if (!w)
		return;
	sqlite3_finalize(w->ins);
	sqlite3_finalize(w->ins_name);
	sqlite3_finalize(w->ins_meta);
	sqlite3_close(w->db);
	ta_intern_free(w->names);
	free(w->roles);
	free(w);
}
