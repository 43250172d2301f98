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
	const struct ta_pv *v = ta_pv_get(f, "filename");
	size_t n = v && v->t == TA_PV_STR ? v->len : 0;

	return n && (v->s[0] == '<' || (n > 3 && memcmp(v->s + n - 3, ".py", 3) == 0));
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

/* What reading the values may cost: values may be shared through the
 * memo (a block listed 10^5 times in a segment listed 10^5 times), so the
 * work is counted, and bounded by the pickle's own length. */
struct reader {
	uint64_t work, limit;
	uint64_t scanned, scan_limit;   /* bytes of strings read: a 60 MB
					 * file name shared by every frame
					 * would be read for each */
	uint64_t sizes;                 /* every size added: bounds the sums */
	const char *where;              /* "segment 3", for messages */
	struct ta_error *err;
};

#define MAX_SIZE ((int64_t)1 << 48)     /* no GPU has 256 TB */
#define MAX_SIZES ((uint64_t)1 << 62)
#define MAX_FRAMES 256                  /* of a stack, read for its site */

static int too_much(struct reader *r)
{
	if (r->work <= r->limit && r->scanned <= r->scan_limit)
		return 0;
	ta_error_set(r->err, TA_EXIT_INPUT, "its values are shared far more than a "
		     "snapshot's are (reading them would take over %llu steps, 64 a byte); "
		     "refused", (unsigned long long)r->limit);
	return -1;
}

static const struct ta_pv *get(struct reader *r, const struct ta_pv *d, const char *key)
{
	if (d && d->t == TA_PV_DICT)
		r->work += d->n / 2 + 1;
	return ta_pv_get(d, key);
}

/* A string field read for a frame: its length counted as read. */
static const char *text(struct reader *r, const struct ta_pv *d, const char *key)
{
	const struct ta_pv *v = get(r, d, key);

	if (!v || v->t != TA_PV_STR)
		return NULL;
	r->scanned += v->len;
	return v->s;
}

static const char *const type_names[] = { "None", "a bool", "an integer", "a float",
	"a string", "bytes", "a list", "a tuple", "a dict", "a set" };

static int wrong(struct reader *r, const char *key, const char *want, const struct ta_pv *v)
{
	ta_error_set(r->err, TA_EXIT_INPUT, "%s: %s is %s, not %s", r->where, key,
		     v ? type_names[v->t] : "missing", want);
	return -1;
}

/* An integer field: absent is dflt when not required; a size is
 * 0..256 TB and counted. */
enum { OPTIONAL, REQUIRED, SIZE, REQUIRED_SIZE, TIME };

static int field(struct reader *r, const struct ta_pv *d, const char *key, int how,
		 int64_t dflt, int64_t *out)
{
	const struct ta_pv *v = get(r, d, key);
	int size = how == SIZE || how == REQUIRED_SIZE;

	*out = dflt;
	if (!v && (how == OPTIONAL || how == SIZE || how == TIME))
		return 0;
	if (!v || v->t != TA_PV_INT)
		return wrong(r, key, "an integer", v);
	if ((size && (v->i < 0 || v->i > MAX_SIZE)) ||
	    (how == TIME && (v->i < 0 || v->i > ((int64_t)1 << 53)))) {
		ta_error_set(r->err, TA_EXIT_INPUT, "%s: %s is %lld, not a %s", r->where, key,
			     (long long)v->i, size ? "size (0 to 256 TB)" : "time");
		return -1;
	}
	if (size && (r->sizes += (uint64_t)v->i) > MAX_SIZES) {
		ta_error_set(r->err, TA_EXIT_INPUT, "%s: the sizes add up past 2^62 bytes", r->where);
		return -1;
	}
	*out = v->i;
	return 0;
}

/* A string field, or "" when absent. */
static int text_field(struct reader *r, const struct ta_pv *d, const char *key, int required,
		      const char **out)
{
	const struct ta_pv *v = get(r, d, key);

	*out = "";
	if (!v && !required)
		return 0;
	if (!v || v->t != TA_PV_STR)
		return wrong(r, key, "a string", v);
	*out = v->s;
	return 0;
}

/* A list field, or NULL when absent. */
static int list_field(struct reader *r, const struct ta_pv *d, const char *key,
		      const struct ta_pv **out)
{
	const struct ta_pv *v = get(r, d, key);

	*out = NULL;
	if (!v || v->t == TA_PV_NONE)
		return 0;
	if (v->t != TA_PV_LIST && v->t != TA_PV_TUPLE)
		return wrong(r, key, "a list", v);
	*out = v;
	return 0;
}

static size_t frames_of(const struct ta_pv *frames)
{
	return frames ? (frames->n < MAX_FRAMES ? frames->n : MAX_FRAMES) : 0;
}

/* The innermost Python frame of the user's own code (not torch's), else
 * the innermost Python frame, else the first C++ frame below the
 * allocator: "keep_leak at train.py(29)", "at::cuda::setWorkspaceForHandle
 * (C++)". Of the first MAX_FRAMES frames. */
static void site_of(struct reader *r, const struct ta_pv *frames, char *buf, size_t len)
{
	const struct ta_pv *pick = NULL, *py = NULL;
	const char *file, *base, *name;
	size_t i, n = frames_of(frames);

	snprintf(buf, len, "(no Python frame)");
	for (i = 0; i < n && !pick; i++) {
		if (!is_python(frames->v[i]))
			continue;
		file = text(r, frames->v[i], "filename");
		if (!py)
			py = frames->v[i];
		if (!strstr(file, "/torch/") && !strstr(file, "/site-packages/"))
			pick = frames->v[i];
	}
	r->work += 2 * i;
	if (!pick)
		pick = py;
	if (pick) {
		file = text(r, pick, "filename");
		base = strrchr(file, '/');
		name = text(r, pick, "name");
		snprintf(buf, len, "%.200s at %.200s(%lld)", name ? name : "?", base ? base + 1 : file,
			 (long long)ta_pv_int(get(r, pick, "line"), 0));
		return;
	}
	for (i = 0; i < n; i++) {
		name = text(r, frames->v[i], "name");
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
static void stack_of(struct reader *r, const struct ta_pv *frames, struct ta_buf *b)
{
	size_t i;

	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
	for (i = 0; i < frames_of(frames) && i < 128; i++) {
		const char *name = text(r, frames->v[i], "name");
		const char *file = text(r, frames->v[i], "filename");

		ta_buf_addf(b, "%s%.300s\t%.300s:%lld", i ? "\n" : "", name ? name : "",
			    file ? file : "", (long long)ta_pv_int(get(r, frames->v[i], "line"), 0));
	}
}

static int step(sqlite3 *db, sqlite3_stmt *st, struct ta_error *err)
{
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;

	sqlite3_reset(st);
	if (rc < 0)
		ta_error_set(err, TA_EXIT_SYSTEM, "database: %s", sqlite3_errmsg(db));
	return rc;
}

static int load_block(struct reader *r, sqlite3 *db, sqlite3_stmt *blk, int64_t dev,
		      int64_t seg, const struct ta_pv *b, struct ta_buf *stack)
{
	const struct ta_pv *frames;
	const char *state;
	int64_t addr, size, req;
	char site[512];

	if (!b || b->t != TA_PV_DICT)
		return wrong(r, "it", "a dict", b);
	if (field(r, b, "address", REQUIRED, 0, &addr) < 0 ||
	    field(r, b, "size", REQUIRED_SIZE, 0, &size) < 0 ||
	    field(r, b, "requested_size", SIZE, 0, &req) < 0 ||
	    text_field(r, b, "state", 0, &state) < 0 ||
	    list_field(r, b, "frames", &frames) < 0)
		return -1;
	site_of(r, frames, site, sizeof(site));
	stack_of(r, frames, stack);
	sqlite3_bind_int64(blk, 1, dev);
	sqlite3_bind_int64(blk, 2, seg);
	sqlite3_bind_int64(blk, 3, addr);
	sqlite3_bind_int64(blk, 4, size);
	sqlite3_bind_int64(blk, 5, req);
	sqlite3_bind_text(blk, 6, state, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(blk, 7, site, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(blk, 8, stack->s ? stack->s : "", -1, SQLITE_TRANSIENT);
	return step(db, blk, r->err);
}

static int load_segment(struct reader *r, sqlite3 *db, sqlite3_stmt *seg, sqlite3_stmt *blk,
			size_t n, const struct ta_pv *s, struct ta_buf *stack)
{
	const struct ta_pv *blocks;
	int64_t dev, addr, total, alloc, stream;
	char where[64];
	size_t j;

	snprintf(where, sizeof(where), "segment %zu", n);
	r->where = where;
	if (!s || s->t != TA_PV_DICT)
		return wrong(r, "it", "a dict", s);
	if (field(r, s, "device", REQUIRED, 0, &dev) < 0 ||
	    field(r, s, "address", REQUIRED, 0, &addr) < 0 ||
	    field(r, s, "total_size", REQUIRED_SIZE, 0, &total) < 0 ||
	    field(r, s, "allocated_size", SIZE, 0, &alloc) < 0 ||
	    field(r, s, "stream", OPTIONAL, 0, &stream) < 0 ||
	    list_field(r, s, "blocks", &blocks) < 0)
		return -1;
	if (dev < 0 || dev > 65535) {
		ta_error_set(r->err, TA_EXIT_INPUT, "%s: device %lld is not a device number",
			     where, (long long)dev);
		return -1;
	}
	sqlite3_bind_int64(seg, 1, dev);
	sqlite3_bind_int64(seg, 2, addr);
	sqlite3_bind_int64(seg, 3, total);
	sqlite3_bind_int64(seg, 4, alloc);
	sqlite3_bind_int64(seg, 5, stream);
	if (step(db, seg, r->err) < 0)
		return -1;
	for (j = 0; blocks && j < blocks->n; j++) {
		snprintf(where, sizeof(where), "segment %zu, block %zu", n, j);
		if (load_block(r, db, blk, dev, addr, blocks->v[j], stack) < 0 || too_much(r) < 0)
			return -1;
	}
	return 0;
}

static int load_event(struct reader *r, sqlite3 *db, sqlite3_stmt *evt, size_t dev,
		      size_t n, const struct ta_pv *e)
{
	const struct ta_pv *frames;
	const char *action;
	int64_t addr, size, stream, time;
	char where[64], site[512];

	snprintf(where, sizeof(where), "device %zu's trace entry %zu", dev, n);
	r->where = where;
	if (!e || e->t != TA_PV_DICT)
		return wrong(r, "it", "a dict", e);
	if (text_field(r, e, "action", 1, &action) < 0 ||
	    field(r, e, "addr", OPTIONAL, 0, &addr) < 0 ||
	    field(r, e, "size", SIZE, 0, &size) < 0 ||
	    field(r, e, "stream", OPTIONAL, 0, &stream) < 0 ||
	    field(r, e, "time_us", TIME, 0, &time) < 0 ||
	    list_field(r, e, "frames", &frames) < 0)
		return -1;
	site_of(r, frames, site, sizeof(site));
	sqlite3_bind_int64(evt, 1, (int64_t)dev);
	sqlite3_bind_int64(evt, 2, (int64_t)n);
	sqlite3_bind_text(evt, 3, action, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(evt, 4, addr);
	sqlite3_bind_int64(evt, 5, size);
	sqlite3_bind_int64(evt, 6, stream);
	sqlite3_bind_int64(evt, 7, time);
	sqlite3_bind_text(evt, 8, site, -1, SQLITE_TRANSIENT);
	return step(db, evt, r->err);
}

/* A segment listed twice would count its memory twice: refused. */
static int no_duplicates(sqlite3 *db, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_db_prepare(db, "SELECT device, addr, count(*) FROM snap_segments"
			  " GROUP BY device, addr HAVING count(*) > 1 LIMIT 1", &st, err) < 0)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		ta_error_set(err, TA_EXIT_INPUT, "the segment at address %lld of device %lld "
			     "is listed %lld times", (long long)sqlite3_column_int64(st, 1),
			     (long long)sqlite3_column_int64(st, 0),
			     (long long)sqlite3_column_int64(st, 2));
	else if (rc != SQLITE_DONE)
		ta_error_set(err, TA_EXIT_SYSTEM, "database: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int load(sqlite3 *db, const struct ta_pickle *pk, struct ta_error *err)
{
	const struct ta_pv *root = ta_pickle_root(pk), *segs, *traces;
	sqlite3_stmt *seg = NULL, *blk = NULL, *evt = NULL;
	struct ta_buf stack = { 0 };
	/* steps: 64 a byte of the pickle; bytes of strings read: 1024 a byte,
	 * and 1 GB (a real snapshot's frames share their strings: about 200) */
	struct reader r = { 0, 64 * ta_pickle_bytes(pk) + 1000000, 0,
			    1024 * ta_pickle_bytes(pk) + ((uint64_t)1 << 30), 0,
			    "the snapshot", err };
	size_t i, j;
	int rc = 0;

	segs = get(&r, root, "segments");
	traces = get(&r, root, "device_traces");
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
	for (i = 0; i < segs->n && rc == 0; i++)
		rc = load_segment(&r, db, seg, blk, i, segs->v[i], &stack);
	for (i = 0; i < traces->n && rc == 0; i++) {
		const struct ta_pv *t = traces->v[i];

		if (t->t != TA_PV_LIST) {
			r.where = "device_traces";
			rc = wrong(&r, "an entry", "a list", t);
		}
		for (j = 0; rc == 0 && j < t->n; j++)
			if ((rc = load_event(&r, db, evt, i, j, t->v[j])) == 0)
				rc = too_much(&r);
	}
	if (rc == 0)
		rc = no_duplicates(db, err);
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
	rc = load(db, pk, err);
	if (rc == 0) {
		char sql[256];

		snprintf(sql, sizeof(sql), "INSERT INTO info VALUES ('snapshot', 1),"
			 " ('schema_version', %d), ('tool_version', '%s'); COMMIT;",
			 TA_SCHEMA_VERSION, TA_VERSION);
		rc = ta_db_exec(db, sql, err);
	}
	if (rc < 0 && err->code == TA_EXIT_INPUT) {
		char msg[sizeof(err->msg)];

		snprintf(msg, sizeof(msg), "%s", err->msg);
		ta_error_set(err, TA_EXIT_INPUT, "'%.200s': %s", path, msg);
	}
done:
	sqlite3_close(db);
	ta_pickle_free(pk);
	return rc;
}
