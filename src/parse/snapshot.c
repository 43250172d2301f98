/* A CUDA allocator snapshot (torch.cuda.memory._dump_snapshot, a pickle of
 * plain data) into a database of our schema: its segments and blocks at
 * the dump, and each device's recorded history, each entry with the
 * frame that allocated it. */
#include "ta_db.h"
#include "ta_ingest.h"
#include "ta_pickle.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* A Python frame: a .py file or a pseudo-file such as "<string>"; the
 * recorder's default (stacks="all") mixes them with C++ frames. */
static int is_python(const struct ta_pv *f)
{
	const char *file = ta_pv_str(ta_pv_get(f, "filename"));
	size_t n = file ? strlen(file) : 0;

	return n && (file[0] == '<' || (n > 3 && strcmp(file + n - 3, ".py") == 0));
}

/* The allocator's own C++ frames and the dispatcher's, above the op that
 * asked for memory. */
static int is_plumbing(const char *name)
{
	static const char *const pre[] = { "torch::unwind", "torch::CapturedTraceback",
		"torch::cuda::", "c10::", "at::detail::", "at::Tensor c10::", "std::",
		"at::_ops::", "at::empty", "at::native::empty" };
	size_t i;

	for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (strncmp(name, pre[i], strlen(pre[i])) == 0)
			return 1;
	return name[0] == '\0' || name[0] == '_' || strncmp(name, "Py", 2) == 0 ||
	       strstr(name, "create_out") || strstr(name, "set_output") ||
	       strstr(name, "empty");
}

/* A C++ frame's function without its return type, template and
 * parameter lists: "void at::native::f<float>(int)" -> "at::native::f". */
static void cxx_name(const char *name, const char **a, const char **z)
{
	const char *p = name, *sp = NULL;

	for (; *p && *p != '<' && *p != '('; p++) {
		if (*p == ' ')
			sp = p;
	}
	while (*p == '(' && strncmp(p, "(anonymous namespace)", 21) == 0) {
		for (p += 21; *p && *p != '<' && *p != '('; p++)
			;
	}
	*a = sp ? sp + 1 : name;
	*z = p;
}

/* The innermost Python frame of the user's own code (not torch's), else
 * the innermost Python frame, else the first C++ frame below the
 * allocator: "keep_leak at train.py(29)", "at::cuda::setWorkspaceForHandle
 * (C++)". */
static void site_of(const struct ta_pv *frames, char *buf, size_t len)
{
	const struct ta_pv *pick = NULL, *py = NULL;
	const char *file, *base, *name;
	size_t i;

	snprintf(buf, len, "(no Python frame)");
	if (!frames || frames->t != TA_PV_LIST)
		return;
	for (i = 0; i < frames->n && !pick; i++) {
		if (!is_python(frames->v[i]))
			continue;
		file = ta_pv_str(ta_pv_get(frames->v[i], "filename"));
		if (!py)
			py = frames->v[i];
		if (!strstr(file, "/torch/") && !strstr(file, "/site-packages/"))
			pick = frames->v[i];
	}
	if (!pick)
		pick = py;
	if (pick) {
		file = ta_pv_str(ta_pv_get(pick, "filename"));
		base = strrchr(file, '/');
		name = ta_pv_str(ta_pv_get(pick, "name"));
		snprintf(buf, len, "%s at %s(%lld)", name ? name : "?", base ? base + 1 : file,
			 (long long)ta_pv_int(ta_pv_get(pick, "line"), 0));
		return;
	}
	for (i = 0; i < frames->n; i++) {
		name = ta_pv_str(ta_pv_get(frames->v[i], "name"));
		if (name && !is_plumbing(name)) {
			const char *a, *z;

			cxx_name(name, &a, &z);
			snprintf(buf, len, "%.*s (C++)", (int)(z - a > 200 ? 200 : z - a), a);
			return;
		}
	}
}

/* A block's whole stack, a frame a line ("name\tfile:line"): what the
 * analysis reads to tell parameters, gradients, optimizer state and
 * workspaces apart. At most 128 frames. */
static void stack_of(const struct ta_pv *frames, struct ta_buf *b)
{
	size_t i;

	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
	for (i = 0; frames && frames->t == TA_PV_LIST && i < frames->n && i < 128; i++) {
		const char *name = ta_pv_str(ta_pv_get(frames->v[i], "name"));
		const char *file = ta_pv_str(ta_pv_get(frames->v[i], "filename"));

		ta_buf_addf(b, "%s%.300s\t%.300s:%lld", i ? "\n" : "", name ? name : "",
			    file ? file : "", (long long)ta_pv_int(ta_pv_get(frames->v[i], "line"), 0));
	}
}

static int load(sqlite3 *db, const struct ta_pv *root, struct ta_error *err)
{
	const struct ta_pv *segs = ta_pv_get(root, "segments");
	const struct ta_pv *traces = ta_pv_get(root, "device_traces");
	sqlite3_stmt *seg = NULL, *blk = NULL, *evt = NULL;
	struct ta_buf stack = { 0 };
	char site[512];
	size_t i, j;
	int rc = 0;

	if (!segs || segs->t != TA_PV_LIST || !traces || traces->t != TA_PV_LIST) {
		ta_error_set(err, TA_EXIT_INPUT, "a pickle, but not an allocator "
			     "snapshot (no segments and device_traces)");
		return -1;
	}
	if (ta_db_prepare(db, "INSERT INTO snap_segments VALUES (?, ?, ?, ?, ?)", &seg, err) < 0 ||
	    ta_db_prepare(db, "INSERT INTO snap_blocks VALUES (?, ?, ?, ?, ?, ?, ?, ?)", &blk, err) < 0 ||
	    ta_db_prepare(db, "INSERT INTO snap_events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", &evt, err) < 0) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < segs->n && rc == 0; i++) {
		const struct ta_pv *s = segs->v[i], *blocks = ta_pv_get(s, "blocks");
		int64_t dev = ta_pv_int(ta_pv_get(s, "device"), 0);
		int64_t addr = ta_pv_int(ta_pv_get(s, "address"), 0);

		sqlite3_bind_int64(seg, 1, dev);
		sqlite3_bind_int64(seg, 2, addr);
		sqlite3_bind_int64(seg, 3, ta_pv_int(ta_pv_get(s, "total_size"), 0));
		sqlite3_bind_int64(seg, 4, ta_pv_int(ta_pv_get(s, "allocated_size"), 0));
		sqlite3_bind_int64(seg, 5, ta_pv_int(ta_pv_get(s, "stream"), 0));
		rc = sqlite3_step(seg) == SQLITE_DONE ? 0 : -1;
		sqlite3_reset(seg);
		for (j = 0; rc == 0 && blocks && blocks->t == TA_PV_LIST && j < blocks->n; j++) {
			const struct ta_pv *b = blocks->v[j];
			const char *state = ta_pv_str(ta_pv_get(b, "state"));

			site_of(ta_pv_get(b, "frames"), site, sizeof(site));
			sqlite3_bind_int64(blk, 1, dev);
			sqlite3_bind_int64(blk, 2, addr);
			sqlite3_bind_int64(blk, 3, ta_pv_int(ta_pv_get(b, "address"), 0));
			sqlite3_bind_int64(blk, 4, ta_pv_int(ta_pv_get(b, "size"), 0));
			sqlite3_bind_int64(blk, 5, ta_pv_int(ta_pv_get(b, "requested_size"), 0));
			sqlite3_bind_text(blk, 6, state ? state : "", -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(blk, 7, site, -1, SQLITE_TRANSIENT);
			stack_of(ta_pv_get(b, "frames"), &stack);
			sqlite3_bind_text(blk, 8, stack.s ? stack.s : "", -1, SQLITE_TRANSIENT);
			rc = sqlite3_step(blk) == SQLITE_DONE ? 0 : -1;
			sqlite3_reset(blk);
		}
	}
	for (i = 0; i < traces->n && rc == 0; i++) {
		const struct ta_pv *t = traces->v[i];

		for (j = 0; rc == 0 && t && t->t == TA_PV_LIST && j < t->n; j++) {
			const struct ta_pv *e = t->v[j];
			const char *action = ta_pv_str(ta_pv_get(e, "action"));

			site_of(ta_pv_get(e, "frames"), site, sizeof(site));
			sqlite3_bind_int64(evt, 1, (int64_t)i);
			sqlite3_bind_int64(evt, 2, (int64_t)j);
			sqlite3_bind_text(evt, 3, action ? action : "", -1, SQLITE_TRANSIENT);
			sqlite3_bind_int64(evt, 4, ta_pv_int(ta_pv_get(e, "addr"), 0));
			sqlite3_bind_int64(evt, 5, ta_pv_int(ta_pv_get(e, "size"), 0));
			sqlite3_bind_int64(evt, 6, ta_pv_int(ta_pv_get(e, "stream"), 0));
			sqlite3_bind_int64(evt, 7, ta_pv_int(ta_pv_get(e, "time_us"), 0));
			sqlite3_bind_text(evt, 8, site, -1, SQLITE_TRANSIENT);
			rc = sqlite3_step(evt) == SQLITE_DONE ? 0 : -1;
			sqlite3_reset(evt);
		}
	}
	if (rc < 0)
		ta_error_set(err, TA_EXIT_SYSTEM, "database: %s", sqlite3_errmsg(db));
out:
	ta_buf_free(&stack);
	sqlite3_finalize(seg);
	sqlite3_finalize(blk);
	sqlite3_finalize(evt);
	return rc;
}

int ta_snapshot_ingest(const char *path, const char *out, struct ta_error *err)
{
	struct ta_pickle *pk = ta_pickle_read(path, err);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	struct stat sb;
	int rc = -1;

	if (!pk)
		return -1;
	if (sqlite3_open(out, &db) != SQLITE_OK) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot create the database", out);
		goto done;
	}
	if (ta_db_exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
		       "BEGIN;", err) < 0 ||
	    ta_db_exec(db, ta_db_schema_sql, err) < 0 ||
	    ta_db_exec(db, ta_db_index_sql, err) < 0)
		goto done;
	if (stat(path, &sb) < 0)
		memset(&sb, 0, sizeof(sb));
	if (ta_db_prepare(db, "INSERT INTO files (file_id, rank, path, bytes, mtime_ns,"
			  " events, truncated) VALUES (1, 0, ?, ?, ?, 0, 0)", &st, err) < 0)
		goto done;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (int64_t)sb.st_size);
	sqlite3_bind_int64(st, 3, (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
	sqlite3_finalize(st);
	if (rc < 0) {
		ta_error_set(err, TA_EXIT_SYSTEM, "database: %s", sqlite3_errmsg(db));
		goto done;
	}
	rc = load(db, ta_pickle_root(pk), err);
	if (rc == 0) {
		char sql[256];

		snprintf(sql, sizeof(sql), "INSERT INTO info VALUES ('snapshot', 1),"
			 " ('schema_version', %d), ('tool_version', '%s'); COMMIT;",
			 TA_SCHEMA_VERSION, TA_VERSION);
		rc = ta_db_exec(db, sql, err);
	}
	if (rc < 0 && strncmp(err->msg, "a pickle", 8) == 0)
		ta_error_set(err, TA_EXIT_INPUT, "'%.200s': a pickle, but not an "
			     "allocator snapshot (no segments and device_traces)", path);
done:
	sqlite3_close(db);
	ta_pickle_free(pk);
	return rc;
}
