/* Bulk load of parsed events: one transaction, one prepared insert,
 * indexes after the load. The caller writes to a temp name and renames.
 *
 * SQLite runs on its own thread so that inserting overlaps parsing: the
 * parser's thread interns names and packs each event into a batch; the
 * writer thread unpacks batches and inserts them. Two batches alternate.
 * Everything else that touches the database first waits for the writer
 * to be idle, so the connection is only ever used by one thread. */
#include "ta_intern.h"
#include "ta_db.h"
#include "ta_parse.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_BYTES (1u << 20)
/* rows per INSERT: fewer statement executions; 16 x 35 parameters stay
 * far below SQLite's limit */
#define MULTI_ROWS 16

/* One unpacked event, as it waits to be bound (writer thread). */
struct unpacked {
	struct ta_event ev;
	int64_t cat, name;
	int role;
};

enum {
	C_RANK = 1, C_IDX, C_PH, C_CAT, C_NAME, C_PID, C_TID, C_TS, C_DUR,
	C_HTA_TS, C_HTA_DUR, C_STREAM, C_CORR, C_EXT, C_DEVICE, C_BYTES,
	C_GBPS, C_GRID, C_BLOCK, C_REGS, C_SMEM, C_DIMS, C_TYPES, C_PYID,
	C_PYPARENT, C_SEQ, C_FWD, C_CBID, C_FLOW_ID, C_FLOW_BP, C_ALLOC,
	C_RESERVED, C_WAIT, C_COLL, C_ROLE, C_NCOLS = C_ROLE
};
_Static_assert(C_NCOLS <= 64, "a row's bound columns are a 64-bit mask");

static const char insert_sql[] =
	"INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
	"?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

struct ta_db_writer {
	sqlite3 *db;
	sqlite3_stmt *ins, *ins_multi, *ins_name, *ins_meta;
	struct unpacked *pending;    /* events waiting for a multi-row insert */
	/* by statement row: the columns bound last time, to unbind the ones
	 * a row leaves absent (cheaper than clearing every binding) */
	uint64_t bound_multi[MULTI_ROWS], bound_one;
	struct ta_intern *names;
	signed char *roles;    /* by name id: role of that category, -1 unknown */
	size_t nroles;
	int64_t rank;          /* provisional rank of the current file */
	int64_t first_event_rowid, first_meta_rowid;
	int64_t meta_rows;
	int64_t file_id;
	const char *file_path;
	int64_t file_bytes, file_mtime;
	/* the writer thread and its two batches */
	pthread_t thread;
	int started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct ta_buf batch[2];
	struct ta_buf *cur;          /* being filled by the parser */
	struct ta_buf *full;         /* handed over, not yet taken */
	struct ta_buf *processing;   /* being inserted */
	int stop;
	int failed;
};

static void *writer_main(void *arg);
static int drain(struct ta_db_writer *w);

static int fail(struct ta_db_writer *w, struct ta_error *err)
{
	ta_error_set(err, TA_EXIT_SYSTEM, "database: %s", sqlite3_errmsg(w->db));
	return -1;
}

static int prepare_multi(struct ta_db_writer *w, struct ta_error *err)
{
	struct ta_buf sql = { 0 };
	int r, c, rc;

	ta_buf_adds(&sql, "INSERT INTO events VALUES ");
	for (r = 0; r < MULTI_ROWS; r++) {
		ta_buf_adds(&sql, r ? ",(" : "(");
		for (c = 0; c < C_NCOLS; c++)
			ta_buf_adds(&sql, c ? ",?" : "?");
		ta_buf_addc(&sql, ')');
	}
	rc = ta_db_prepare(w->db, sql.s, &w->ins_multi, err);
	ta_buf_free(&sql);
	return rc;
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
	    /* the indexes grow as rows arrive, mostly by appending (time and
	     * correlation only increase): that work happens on the writer
	     * thread, beside parsing, instead of after it */
	    ta_db_exec(w->db, ta_db_index_sql, err) < 0 ||
	    ta_db_exec(w->db, "BEGIN", err) < 0 ||
	    ta_db_prepare(w->db, insert_sql, &w->ins, err) < 0 ||
	    prepare_multi(w, err) < 0 ||
	    ta_db_prepare(w->db, "INSERT INTO names VALUES (?, ?)",
			  &w->ins_name, err) < 0 ||
	    ta_db_prepare(w->db, "INSERT INTO meta VALUES (?, ?, ?)",
			  &w->ins_meta, err) < 0) {
		ta_db_writer_abort(w);
		return NULL;
	}
	w->names = ta_intern_new();
	w->cur = &w->batch[0];
	w->pending = ta_xcalloc(MULTI_ROWS, sizeof(*w->pending));
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
		ta_error_set(err, TA_EXIT_SYSTEM, "cannot start the writer thread");
		ta_db_writer_abort(w);
		return NULL;
	}
	w->started = 1;
	return w;
}

int ta_db_writer_begin_file(struct ta_db_writer *w, const char *path,
			    int64_t bytes, int64_t mtime_ns, int64_t rank,
			    struct ta_error *err)
{
	if (drain(w) < 0)
		return fail(w, err);
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

static void put(struct ta_buf *b, const void *p, size_t n)
{
	ta_buf_add(b, p, n);
}

static void put_i64(struct ta_buf *b, int64_t v)
{
	put(b, &v, sizeof(v));
}

/* Interns a string field; a new name is packed ('N') before its event. */
static int64_t intern_field(struct ta_db_writer *w, const struct ta_event *ev,
			    enum ta_field f)
{
	int is_new;
	int64_t id;
	uint32_t len;

	if (ev->f[f].type != TA_VAL_TEXT)
		return 0;
	id = ta_intern(w->names, ta_event_text(ev, f), ev->f[f].len, &is_new);
	if (is_new) {
		len = (uint32_t)ev->f[f].len;
		ta_buf_addc(w->cur, 'N');
		put_i64(w->cur, id);
		put(w->cur, &len, sizeof(len));
		put(w->cur, ta_event_text(ev, f), len);
	}
	return id;
}

/* Binds a present value; returns its column bit, 0 if absent. Text stays
 * in the batch until the statement is reset, so SQLite need not copy it. */
static uint64_t bind_val(sqlite3_stmt *st, int col, const struct ta_event *ev,
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
				  SQLITE_STATIC);
		break;
	default:
		return 0;
	}
	return 1ull << ((col - 1) % C_NCOLS);
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

static uint64_t bind_either(sqlite3_stmt *st, int col,
			    const struct ta_event *ev, enum ta_field a,
			    enum ta_field b)
{
	return bind_val(st, col, ev, ev->f[a].type != TA_VAL_NONE ? a : b);
}

#define BIT(c) (1ull << ((c) - 1))

static uint64_t bind_int(sqlite3_stmt *st, int base, int col, int64_t v)
{
	sqlite3_bind_int64(st, base + col, v);
	return BIT(col);
}

static uint64_t bind_times(sqlite3_stmt *st, int base,
			   const struct ta_event *ev)
{
	uint64_t m = 0;

	if (ev->has_ts)
		m |= bind_int(st, base, C_TS, ev->ts_ns) |
		     bind_int(st, base, C_HTA_TS, ev->hta_ts_ns);
	if (ev->has_dur)
		m |= bind_int(st, base, C_DUR, ev->dur_ns) |
		     bind_int(st, base, C_HTA_DUR, ev->hta_dur_ns);
	return m;
}

/* Binds an event as row `row` of a (multi-row) insert (writer thread);
 * *bound holds the columns this row of the statement had bound before. */
static void bind_event(struct ta_db_writer *w, sqlite3_stmt *st, int row,
		       const struct unpacked *u, uint64_t *bound)
{
	const struct ta_event *ev = &u->ev;
	int base = row * C_NCOLS, c;
	uint64_t m, stale;

	m = bind_int(st, base, C_RANK, w->rank) |
	    bind_int(st, base, C_IDX, ev->index) |
	    bind_int(st, base, C_ROLE, u->role) |
	    bind_int(st, base, C_STREAM, lenient_int(ev, TA_F_STREAM)) |
	    bind_int(st, base, C_CORR, lenient_int(ev, TA_F_CORRELATION)) |
	    bind_times(st, base, ev);
	if (u->cat)
		m |= bind_int(st, base, C_CAT, u->cat);
	if (u->name)
		m |= bind_int(st, base, C_NAME, u->name);
	m |= bind_val(st, base + C_PH, ev, TA_F_PH) |
	     bind_val(st, base + C_PID, ev, TA_F_PID) |
	     bind_val(st, base + C_TID, ev, TA_F_TID) |
	     bind_val(st, base + C_EXT, ev, TA_F_EXTERNAL_ID) |
	     bind_either(st, base + C_DEVICE, ev, TA_F_DEVICE, TA_F_DEVICE_ID) |
	     bind_either(st, base + C_BYTES, ev, TA_F_BYTES, TA_F_MEM_BYTES) |
	     bind_val(st, base + C_GBPS, ev, TA_F_GBPS) |
	     bind_val(st, base + C_GRID, ev, TA_F_GRID) |
	     bind_val(st, base + C_BLOCK, ev, TA_F_BLOCK) |
	     bind_val(st, base + C_REGS, ev, TA_F_REGISTERS) |
	     bind_val(st, base + C_SMEM, ev, TA_F_SHARED_MEM) |
	     bind_val(st, base + C_DIMS, ev, TA_F_INPUT_DIMS) |
	     bind_val(st, base + C_TYPES, ev, TA_F_INPUT_TYPES) |
	     bind_val(st, base + C_PYID, ev, TA_F_PYTHON_ID) |
	     bind_val(st, base + C_PYPARENT, ev, TA_F_PYTHON_PARENT_ID) |
	     bind_val(st, base + C_SEQ, ev, TA_F_SEQ_NR) |
	     bind_val(st, base + C_FWD, ev, TA_F_FWD_TID) |
	     bind_val(st, base + C_CBID, ev, TA_F_CBID) |
	     bind_val(st, base + C_FLOW_ID, ev, TA_F_ID) |
	     bind_val(st, base + C_FLOW_BP, ev, TA_F_BP) |
	     bind_val(st, base + C_ALLOC, ev, TA_F_TOTAL_ALLOCATED) |
	     bind_val(st, base + C_RESERVED, ev, TA_F_TOTAL_RESERVED) |
	     bind_val(st, base + C_WAIT, ev, TA_F_WAIT_ON_STREAM) |
	     bind_val(st, base + C_COLL, ev, TA_F_COLLECTIVE);
	for (stale = *bound & ~m, c = 1; stale; stale >>= 1, c++)
		if (stale & 1)
			sqlite3_bind_null(st, base + c);
	*bound = m;
}

static int step(sqlite3_stmt *st)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		return -1;
	sqlite3_reset(st);
	return 0;
}

/* Inserts n pending events: MULTI_ROWS in one statement, or one by one. */
static int insert_pending(struct ta_db_writer *w, const struct unpacked *u,
			  int n)
{
	int i;

	if (n == MULTI_ROWS) {
		for (i = 0; i < n; i++)
			bind_event(w, w->ins_multi, i, &u[i],
				   &w->bound_multi[i]);
		return step(w->ins_multi);
	}
	for (i = 0; i < n; i++) {
		bind_event(w, w->ins, 0, &u[i], &w->bound_one);
		if (step(w->ins) < 0)
			return -1;
	}
	return 0;
}

/* Packs an event: 'E', index, flags, four times, cat, name, role, then
 * each present field as (field, type, value). Text is copied in. */
static void pack_event(struct ta_buf *b, const struct ta_event *ev,
		       int64_t cat, int64_t name, int role)
{
	unsigned char flags = (unsigned char)(ev->has_ts | ev->has_dur << 1);
	unsigned char n = 0, r = (unsigned char)role;
	size_t count_at;
	int f;

	ta_buf_addc(b, 'E');
	put_i64(b, ev->index);
	put(b, &flags, 1);
	put_i64(b, ev->ts_ns);
	put_i64(b, ev->dur_ns);
	put_i64(b, ev->hta_ts_ns);
	put_i64(b, ev->hta_dur_ns);
	put_i64(b, cat);
	put_i64(b, name);
	put(b, &r, 1);
	count_at = b->len;
	put(b, &n, 1);
	for (f = 0; f < TA_NFIELDS; f++) {
		const struct ta_val *v = &ev->f[f];
		unsigned char h[2] = { (unsigned char)f, (unsigned char)v->type };

		if (v->type == TA_VAL_NONE || f == TA_F_CAT || f == TA_F_NAME)
			continue;
		put(b, h, 2);
		if (v->type == TA_VAL_INT) {
			put_i64(b, v->i);
		} else if (v->type == TA_VAL_REAL) {
			put(b, &v->d, sizeof(v->d));
		} else {
			uint32_t len = (uint32_t)v->len;

			put(b, &len, sizeof(len));
			put(b, ta_event_text(ev, (enum ta_field)f), len);
		}
		n++;
	}
	b->s[count_at] = (char)n;
}

static const char *take(const char **p, void *dst, size_t n)
{
	memcpy(dst, *p, n);
	*p += n;
	return *p;
}

/* Unpacks one event; its text stays in the batch (arena = batch). */
static const char *unpack_event(const char *p, const struct ta_buf *b,
				struct ta_event *ev, int64_t *cat, int64_t *name,
				int *role)
{
	unsigned char flags, n, r, i;

	memset(ev->f, 0, sizeof(ev->f));
	take(&p, &ev->index, 8);
	take(&p, &flags, 1);
	ev->has_ts = flags & 1;
	ev->has_dur = flags >> 1 & 1;
	take(&p, &ev->ts_ns, 8);
	take(&p, &ev->dur_ns, 8);
	take(&p, &ev->hta_ts_ns, 8);
	take(&p, &ev->hta_dur_ns, 8);
	take(&p, cat, 8);
	take(&p, name, 8);
	take(&p, &r, 1);
	*role = r;
	take(&p, &n, 1);
	ev->arena.s = b->s;
	for (i = 0; i < n; i++) {
		unsigned char h[2];
		struct ta_val *v;
		uint32_t len;

		take(&p, h, 2);
		v = &ev->f[h[0]];
		v->type = (enum ta_val_type)h[1];
		if (v->type == TA_VAL_INT) {
			take(&p, &v->i, 8);
		} else if (v->type == TA_VAL_REAL) {
			take(&p, &v->d, 8);
		} else {
			take(&p, &len, 4);
			v->off = (size_t)(p - b->s);
			v->len = len;
			p += len;
		}
	}
	return p;
}

static int insert_name(struct ta_db_writer *w, int64_t id, const char *s,
		       uint32_t len)
{
	sqlite3_bind_int64(w->ins_name, 1, id);
	sqlite3_bind_text(w->ins_name, 2, s, (int)len, SQLITE_STATIC);
	if (sqlite3_step(w->ins_name) != SQLITE_DONE)
		return -1;
	sqlite3_reset(w->ins_name);
	return 0;
}

/* Writer thread: insert everything in a batch. */
static int process(struct ta_db_writer *w, const struct ta_buf *b)
{
	const char *p = b->s, *end = b->s + b->len;
	struct unpacked *u = w->pending;
	int n = 0;

	while (p < end) {
		char tag = *p++;

		if (tag == 'N') {
			int64_t id;
			uint32_t len;

			take(&p, &id, 8);
			take(&p, &len, 4);
			if (insert_name(w, id, p, len) < 0)
				return -1;
			p += len;
			continue;
		}
		p = unpack_event(p, b, &u[n].ev, &u[n].cat, &u[n].name, &u[n].role);
		if (++n == MULTI_ROWS) {
			if (insert_pending(w, u, n) < 0)
				return -1;
			n = 0;
		}
	}
	return insert_pending(w, u, n);
}

static void *writer_main(void *arg)
{
	struct ta_db_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct ta_buf *b;

		while (!w->full && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->full)
			break;
		b = w->full;
		w->full = NULL;
		w->processing = b;
		pthread_mutex_unlock(&w->lock);
		if (!w->failed && process(w, b) < 0)
			w->failed = 1;
		pthread_mutex_lock(&w->lock);
		b->len = 0;
		w->processing = NULL;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Hands the current batch over and continues in the other one. */
static int submit(struct ta_db_writer *w)
{
	struct ta_buf *next = w->cur == &w->batch[0] ? &w->batch[1] : &w->batch[0];

	pthread_mutex_lock(&w->lock);
	while (w->full)
		pthread_cond_wait(&w->cond, &w->lock);
	w->full = w->cur;
	pthread_cond_broadcast(&w->cond);
	while (w->full == next || w->processing == next)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
	w->cur = next;
	return w->failed ? -1 : 0;
}

/* Waits until every packed event is in the database. */
static int drain(struct ta_db_writer *w)
{
	if (!w->started)
		return 0;
	if (w->cur->len && submit(w) < 0)
		return -1;
	pthread_mutex_lock(&w->lock);
	while (w->full || w->processing)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
	return w->failed ? -1 : 0;
}

int ta_db_writer_event(struct ta_db_writer *w, const struct ta_event *ev)
{
	int64_t cat = intern_field(w, ev, TA_F_CAT);
	int64_t name = intern_field(w, ev, TA_F_NAME);

	pack_event(w->cur, ev, cat, name, event_role(w, ev, cat));
	if (w->cur->len >= BATCH_BYTES)
		return submit(w);
	return w->failed ? -1 : 0;
}

int ta_db_writer_meta(struct ta_db_writer *w, const char *key,
		      const char *json, size_t len)
{
	if (drain(w) < 0)
		return -1;
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

	if (drain(w) < 0)
		return fail(w, err);
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

	if (drain(w) < 0)
		return fail(w, err);
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

	if (drain(w) < 0) {
		fail(w, err);
		ta_db_writer_abort(w);
		return -1;
	}
	snprintf(sql, sizeof(sql),
		 "INSERT INTO info VALUES ('schema_version', %d),"
		 " ('tool_version', '%s');", TA_SCHEMA_VERSION, TA_VERSION);
	rc = ta_db_exec(w->db, sql, err);
	if (rc == 0)
		rc = ta_db_exec(w->db, "COMMIT", err);
	ta_db_writer_abort(w);
	return rc;
}

void ta_db_writer_abort(struct ta_db_writer *w)
{
	if (!w)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->lock);
		w->stop = 1;
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
	}
	ta_buf_free(&w->batch[0]);
	ta_buf_free(&w->batch[1]);
	sqlite3_finalize(w->ins);
	sqlite3_finalize(w->ins_multi);
	free(w->pending);
	sqlite3_finalize(w->ins_name);
	sqlite3_finalize(w->ins_meta);
	sqlite3_close(w->db);
	ta_intern_free(w->names);
	free(w->roles);
	free(w);
}
