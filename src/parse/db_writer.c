/* Bulk load of parsed events into a new database: one connection, one
 * transaction, prepared multi-row inserts, indexes filled as rows arrive.
 * The caller writes to a temp name and renames.
 *
 * Each trace file being parsed has a feed: the parser's thread interns the
 * file's names (file-local ids) and packs its events into the feed's
 * batches (batch.h). Full batches queue for the one SQLite thread, which
 * maps local name ids to the database's, and inserts. Files parsed in
 * parallel share that thread; a file's rows keep their order, but rows of
 * different files interleave, so each feed remembers the rowid spans it
 * got (to move its rows to their final rank, or drop them).
 *
 * Without a thread (-j 1) a full batch is inserted by whoever filled it.
 * The connection is used by one thread at a time: the SQLite thread, or a
 * feed ending its file, under db_lock.
 *
 * A file parsed by several threads at once (lanes, split.c) has a feed
 * per lane that holds its batches back: each piece of the document a lane
 * parsed is cut off (ta_db_feed_cut) and released in document order, its
 * events' indexes moved by the elements before it, or released for its
 * names only when the piece turned out not to be one. */
#include "db_writer.h"
#include "batch.h"
#include "event_row.h"
#include "ta_intern.h"
#include "ta_db.h"
#include "ta_files.h"
#include "ta_parse.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_BYTES (1u << 20)
/* a feed's batches: one being filled, the others queued or inserting.
 * Six, not three: two files in flight then keep both cores busy (-j 2 on
 * two 200 MB ranks 1.47 -> 1.37 s) for 3 MB more per file */
#define FEED_BATCHES 6
/* rows per INSERT: fewer statement executions; 64 x 43 parameters stay
 * far below SQLite's limit (16 -> 64: 0.9 % fewer instructions in all, callgrind) */
#define MULTI_ROWS 64

struct batch {
	struct ta_buf buf;
	struct ta_db_feed *feed;
	struct batch *next;     /* in the writer's queue, a piece, or free */
	int64_t idx_base;       /* added to its events' indexes */
	int names_only;         /* a piece that was not one: its names only */
};

/* Batches in order: the writer's queue, or those a lane filled for one
 * piece of the document, held back. */
struct ta_db_piece {
	struct batch *head, *tail;
};

/* Rowids lo..hi of one table that belong to a feed. */
struct spans {
	struct { int64_t lo, hi; } *v;
	size_t n, cap;
};

struct ta_db_feed {
	struct ta_db_writer *w;
	/* parser's side */
	struct ta_intern *names;     /* this file's names -> local ids */
	signed char *roles;          /* by local cat id: role, -1 unknown */
	size_t nroles;
	struct batch *cur;           /* being filled */
	int holding;                 /* a lane's feed: full batches wait in held */
	struct ta_db_piece held;
	/* under w->lock */
	struct batch *spare;         /* batches inserted, ready for reuse */
	int queued;                  /* batches queued or being inserted */
	/* SQLite's side */
	/* by local name id: names.name_id, 0 until an event of the file's
	 * uses it (so names get their ids in the order events use them, as
	 * in a file read in sequence, whatever a void piece announced) */
	int64_t *global;
	char **local;                /* the name, until then */
	size_t nglobal;
	struct spans events, meta;
	int64_t rank;                /* provisional, until the file ends */
	char *path;
	int64_t bytes, mtime_ns;
};

struct ta_db_writer {
	sqlite3 *db;
	char *cache_entry;           /* info.cache_entry: the cache's own */
	sqlite3_stmt *ins, *ins_multi, *ins_name, *ins_meta;
	struct ta_intern *names;     /* every name in the database */
	/* by statement row: the columns bound last time, to unbind the ones
	 * a row leaves absent (cheaper than clearing every binding) */
	uint64_t bound_multi[MULTI_ROWS], bound_one;
	struct ta_buf args;          /* a row's column args, being made */
	struct ta_batch_rec pending[MULTI_ROWS]; /* events not yet inserted */
	pthread_mutex_t db_lock;     /* the connection */
	/* the SQLite thread and its queue */
	int threaded, started;
	pthread_t thread;
	pthread_mutex_t lock;        /* queue, feeds' spare and queued, failed */
	pthread_cond_t cond;
	struct ta_db_piece queue;
	int stop;
	int failed;
	char errmsg[256];            /* SQLite's message when failed */
	struct ta_buf skipped;       /* INSERTs into info (under lock) */
	int nskipped;
};

static void *writer_main(void *arg);

static int fail(struct ta_db_writer *w, struct ta_error *err)
{
	ta_error_set(err, TA_EXIT_SYSTEM, "database: %s", sqlite3_errmsg(w->db));
	return -1;
}

void ta_db_feed_failure(struct ta_db_feed *f, struct ta_error *err)
{
	struct ta_db_writer *w = f->w;
	const char *db = sqlite3_db_filename(w->db, "main");
	char msg[sizeof(w->errmsg)];

	pthread_mutex_lock(&w->db_lock);
	snprintf(msg, sizeof(msg), "%s", w->errmsg[0] ? w->errmsg : sqlite3_errmsg(w->db));
	pthread_mutex_unlock(&w->db_lock);
	/* the name it was to have, not its temporary one (gone after) */
	db = db ? db : "";
	ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot write the database '%.*s': %s",
		     f->path, (int)ta_temp_base_len(db), db, msg);
}

/* A batch of this feed could not be inserted. */
static int fail_feed(struct ta_db_feed *f, struct ta_error *err)
{
	ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot write the database: %s",
		     f->path, f->w->errmsg);
	return -1;
}

static int prepare_insert(struct ta_db_writer *w, sqlite3_stmt **st, int rows,
			  struct ta_error *err)
{
	char *sql = ta_row_insert_sql(rows);
	int rc = ta_db_prepare(w->db, sql, st, err);

	free(sql);
	return rc;
}

static int lazy_indexes_now(struct ta_db_writer *w, unsigned which,
			    struct ta_error *err)
{
	int i;

	for (i = 0; i < TA_NLAZY_INDEXES; i++)
		if (which >> i & 1 &&
		    ta_db_exec(w->db, ta_db_lazy_index_sql[i], err) < 0)
			return -1;
	return 0;
}

struct ta_db_writer *ta_db_writer_new(const char *path, int threaded,
				      unsigned lazy_indexes, const char *cache_entry,
				      struct ta_error *err)
{
	struct ta_db_writer *w = ta_xcalloc(1, sizeof(*w));

	w->cache_entry = cache_entry ? ta_xstrdup(cache_entry) : NULL;
	pthread_mutex_init(&w->db_lock, NULL);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->names = ta_intern_new();
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
	    lazy_indexes_now(w, lazy_indexes, err) < 0 ||
	    ta_db_exec(w->db, "BEGIN", err) < 0 ||
	    prepare_insert(w, &w->ins, 1, err) < 0 ||
	    prepare_insert(w, &w->ins_multi, MULTI_ROWS, err) < 0 ||
	    ta_db_prepare(w->db, "INSERT INTO names VALUES (?, ?)",
			  &w->ins_name, err) < 0 ||
	    ta_db_prepare(w->db, "INSERT INTO meta VALUES (?, ?, ?)",
			  &w->ins_meta, err) < 0) {
		ta_db_writer_abort(w);
		return NULL;
	}
	w->threaded = threaded;
	if (threaded && pthread_create(&w->thread, NULL, writer_main, w) != 0) {
		ta_error_set(err, TA_EXIT_SYSTEM, "cannot start the writer thread");
		ta_db_writer_abort(w);
		return NULL;
	}
	w->started = threaded;
	return w;
}

/* The category's role, computed once per distinct category of a file. */
static int event_role(struct ta_db_feed *f, const struct ta_event *ev,
		      int64_t cat_id)
{
	if (cat_id <= 0)
		return 0;
	if ((size_t)cat_id >= f->nroles) {
		size_t n = (size_t)cat_id * 2 + 16;

		f->roles = ta_xrealloc(f->roles, n);
		memset(f->roles + f->nroles, -1, n - f->nroles);
		f->nroles = n;
	}
	if (f->roles[cat_id] < 0)
		f->roles[cat_id] = (signed char)ta_row_role(ta_event_text(ev, TA_F_CAT));
	return f->roles[cat_id];
}

/* Interns a string field in the file's table; a new name is packed
 * before the event that uses it. */
static int64_t intern_field(struct ta_db_feed *f, const struct ta_event *ev,
			    enum ta_field field)
{
	int is_new;
	int64_t id;

	if (ev->f[field].type != TA_VAL_TEXT)
		return 0;
	id = ta_intern(f->names, ta_event_text(ev, field), ev->f[field].len,
		       &is_new);
	if (is_new)
		ta_batch_name(&f->cur->buf, id, ta_event_text(ev, field),
			      (uint32_t)ev->f[field].len);
	return id;
}

static void spans_add(struct spans *s, int64_t lo, int64_t hi)
{
	if (s->n && s->v[s->n - 1].hi + 1 == lo) {
		s->v[s->n - 1].hi = hi;
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = ta_xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n].lo = lo;
	s->v[s->n++].hi = hi;
}

static int step(struct ta_db_writer *w, sqlite3_stmt *st, struct spans *s,
		int rows)
{
	int64_t last;

	if (sqlite3_step(st) != SQLITE_DONE)
		return -1;
	sqlite3_reset(st);
	/* one connection, one table: a statement's rows get consecutive
	 * rowids, the last of which SQLite reports */
	last = sqlite3_last_insert_rowid(w->db);
	spans_add(s, last - rows + 1, last);
	return 0;
}

/* Inserts n pending events of f: MULTI_ROWS in one statement, or one by
 * one. */
static int insert_pending(struct ta_db_writer *w, struct ta_db_feed *f,
			  int n)
{
	struct ta_batch_rec *u = w->pending;
	int i;

	if (n == MULTI_ROWS) {
		for (i = 0; i < n; i++)
			if (ta_row_bind(w->ins_multi, i, f->rank, &u[i],
					&w->bound_multi[i], &w->args) < 0)
				return -1;
		return step(w, w->ins_multi, &f->events, n);
	}
	for (i = 0; i < n; i++)
		if (ta_row_bind(w->ins, 0, f->rank, &u[i], &w->bound_one,
				&w->args) < 0 ||
		    step(w, w->ins, &f->events, 1) < 0)
			return -1;
	return 0;
}

/* A name new to this file: kept until an event uses it. */
static void note_name(struct ta_db_feed *f, const struct ta_batch_rec *r)
{
	if ((size_t)r->id >= f->nglobal) {
		size_t n = (size_t)r->id * 2 + 16;

		f->global = ta_xrealloc(f->global, n * sizeof(*f->global));
		f->local = ta_xrealloc(f->local, n * sizeof(*f->local));
		memset(f->global + f->nglobal, 0,
		       (n - f->nglobal) * sizeof(*f->global));
		memset(f->local + f->nglobal, 0,
		       (n - f->nglobal) * sizeof(*f->local));
		f->nglobal = n;
	}
	free(f->local[r->id]);
	f->local[r->id] = ta_xmalloc(r->len + 1);
	memcpy(f->local[r->id], r->s, r->len);
	f->local[r->id][r->len] = '\0';
	f->global[r->id] = 0;
}

/* The database's id for a local name id, the name added if new there;
 * -1 if it cannot be. */
static int64_t global_id(struct ta_db_writer *w, struct ta_db_feed *f,
			 int64_t local)
{
	const char *name;
	size_t len;
	int is_new;
	int64_t id;

	if (!local || f->global[local])
		return local ? f->global[local] : 0;
	name = f->local[local];
	len = strlen(name);
	id = ta_intern(w->names, name, len, &is_new);
	f->global[local] = id;
	if (!is_new)
		return id;
	sqlite3_bind_int64(w->ins_name, 1, id);
	sqlite3_bind_text(w->ins_name, 2, name, (int)len, SQLITE_STATIC);
	if (sqlite3_step(w->ins_name) != SQLITE_DONE)
		return -1;
	sqlite3_reset(w->ins_name);
	return id;
}

static int insert_meta(struct ta_db_writer *w, struct ta_db_feed *f,
		       const struct ta_batch_rec *r)
{
	sqlite3_bind_int64(w->ins_meta, 1, f->rank);
	sqlite3_bind_text(w->ins_meta, 2, r->s, (int)r->len, SQLITE_STATIC);
	sqlite3_bind_text(w->ins_meta, 3, r->s2, (int)r->len2, SQLITE_STATIC);
	return step(w, w->ins_meta, &f->meta, 1);
}

/* Inserts everything in a batch (under db_lock). */
static int process(struct ta_db_writer *w, const struct batch *b)
{
	struct ta_db_feed *f = b->feed;
	const char *p = b->buf.s, *end = b->buf.s + b->buf.len;
	struct ta_batch_rec *u = w->pending;
	int n = 0;

	while (p < end) {
		struct ta_batch_rec *r = &u[n];

		p = ta_batch_next(p, &b->buf, r);
		if (r->tag == 'N') {
			note_name(f, r);
		} else if (b->names_only) {
			continue;
		} else if (r->tag == 'M') {
			if (insert_pending(w, f, n) < 0 || insert_meta(w, f, r) < 0)
				return -1;
			n = 0;
		} else {
			r->ev.index += b->idx_base;
			r->cat = global_id(w, f, r->cat);
			r->name = global_id(w, f, r->name);
			if (r->cat < 0 || r->name < 0)
				return -1;
			if (++n == MULTI_ROWS) {
				if (insert_pending(w, f, n) < 0)
					return -1;
				n = 0;
			}
		}
	}
	return insert_pending(w, f, n);
}

static int process_locked(struct ta_db_writer *w, const struct batch *b)
{
	int rc;

	pthread_mutex_lock(&w->db_lock);
	rc = process(w, b);
	if (rc < 0)
		snprintf(w->errmsg, sizeof(w->errmsg), "%s", sqlite3_errmsg(w->db));
	pthread_mutex_unlock(&w->db_lock);
	return rc;
}

/* A batch inserted goes back to its feed (under w->lock). */
static void give_back(struct batch *b)
{
	b->buf.len = 0;
	b->idx_base = 0;
	b->names_only = 0;
	b->next = b->feed->spare;
	b->feed->spare = b;
	b->feed->queued--;
}

/* A batch to fill (under w->lock). */
static struct batch *take_spare(struct ta_db_feed *f)
{
	struct batch *b = f->spare;

	if (!b) {
		b = ta_xcalloc(1, sizeof(*b));
		b->feed = f;
		return b;
	}
	f->spare = b->next;
	b->next = NULL;
	return b;
}

static void piece_add(struct ta_db_piece *p, struct batch *b)
{
	b->next = NULL;
	if (p->tail)
		p->tail->next = b;
	else
		p->head = b;
	p->tail = b;
}

static void enqueue(struct ta_db_writer *w, struct batch *b)
{
	piece_add(&w->queue, b);
	b->feed->queued++;
}

static void *writer_main(void *arg)
{
	struct ta_db_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct batch *b;
		int failed;

		while (!w->queue.head && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->queue.head)
			break;
		b = w->queue.head;
		w->queue.head = b->next;
		if (!w->queue.head)
			w->queue.tail = NULL;
		failed = w->failed;
		pthread_mutex_unlock(&w->lock);
		if (!failed && process_locked(w, b) < 0)
			failed = 1;
		pthread_mutex_lock(&w->lock);
		w->failed |= failed;
		give_back(b);
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Hands the feed's current batch over (or, holding, aside) and continues
 * in another. */
static int submit(struct ta_db_feed *f)
{
	struct ta_db_writer *w = f->w;
	struct batch *b = f->cur;
	int failed;

	if (!w->threaded) {
		if (!w->failed && process_locked(w, b) < 0)
			w->failed = 1;
		b->buf.len = 0;
		return w->failed ? -1 : 0;
	}
	pthread_mutex_lock(&w->lock);
	if (f->holding) {
		piece_add(&f->held, b);
	} else {
		enqueue(w, b);
		pthread_cond_broadcast(&w->cond);
		while (f->queued >= FEED_BATCHES)
			pthread_cond_wait(&w->cond, &w->lock);
	}
	f->cur = take_spare(f);
	failed = w->failed;
	pthread_mutex_unlock(&w->lock);
	return failed ? -1 : 0;
}

/* Waits until at most `most` of the feed's batches are queued. */
static int wait_queued(struct ta_db_feed *f, int most)
{
	struct ta_db_writer *w = f->w;
	int failed;

	pthread_mutex_lock(&w->lock);
	while (f->queued > most)
		pthread_cond_wait(&w->cond, &w->lock);
	failed = w->failed;
	pthread_mutex_unlock(&w->lock);
	return failed ? -1 : 0;
}

/* Waits until every record the feed packed is in the database. */
static int drain(struct ta_db_feed *f)
{
	if (!f->holding && f->cur->buf.len && submit(f) < 0)
		return -1;
	return wait_queued(f, 0);
}

void ta_db_feed_hold(struct ta_db_feed *f)
{
	f->holding = f->w->threaded;
}

int ta_db_feed_room(struct ta_db_feed *f)
{
	return wait_queued(f, FEED_BATCHES - 1);
}

struct ta_db_piece *ta_db_feed_cut(struct ta_db_feed *f)
{
	struct ta_db_piece *p = ta_xmalloc(sizeof(*p));

	pthread_mutex_lock(&f->w->lock);
	if (f->cur->buf.len) {
		piece_add(&f->held, f->cur);
		f->cur = take_spare(f);
	}
	pthread_mutex_unlock(&f->w->lock);
	*p = f->held;
	f->held.head = f->held.tail = NULL;
	return p;
}

/* A piece's batches queued (keep) or given back unused; the piece freed.
 * They are all of one feed. */
static void piece_end(struct ta_db_piece *p, int keep, int64_t idx_base,
		      int rows)
{
	struct batch *b, *next;
	struct ta_db_writer *w;

	if (!p)
		return;
	if (p->head) {
		w = p->head->feed->w;
		pthread_mutex_lock(&w->lock);
		for (b = p->head; b; b = next) {
			next = b->next;
			if (keep) {
				b->idx_base = idx_base;
				b->names_only = !rows;
				enqueue(w, b);
			} else {
				b->feed->queued++;   /* give_back counts it out */
				give_back(b);
			}
		}
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
	}
	free(p);
}

void ta_db_piece_release(struct ta_db_piece *p, int64_t idx_base, int rows)
{
	piece_end(p, 1, idx_base, rows);
}

void ta_db_piece_drop(struct ta_db_piece *p)
{
	piece_end(p, 0, 0, 0);
}

struct ta_db_feed *ta_db_feed_new(struct ta_db_writer *w, const char *path,
				  int64_t bytes, int64_t mtime_ns, int64_t rank)
{
	struct ta_db_feed *f = ta_xcalloc(1, sizeof(*f));

	f->w = w;
	f->names = ta_intern_new();
	f->cur = take_spare(f);
	f->rank = rank;
	f->path = ta_xstrdup(path);
	f->bytes = bytes;
	f->mtime_ns = mtime_ns;
	return f;
}

int ta_db_feed_event(struct ta_db_feed *f, const struct ta_event *ev)
{
	int64_t cat = intern_field(f, ev, TA_F_CAT);
	int64_t name = intern_field(f, ev, TA_F_NAME);
	int role = event_role(f, ev, cat);

	if (ta_row_dropped(ev, role))
		return 0;
	if (role == TA_ROW_ARROW_CAT)
		role = TA_ROLE_OTHER;
	ta_batch_event(&f->cur->buf, ev, cat, name, role);
	if (f->cur->buf.len >= BATCH_BYTES)
		return submit(f);
	return 0;
}

int ta_db_feed_meta(struct ta_db_feed *f, const char *key, const char *json,
		    size_t len)
{
	ta_batch_meta(&f->cur->buf, key, json, len);
	if (f->cur->buf.len >= BATCH_BYTES)
		return submit(f);
	return 0;
}

/* Runs sql with ?1 = value, ?2..?3 = each span of table rows (under
 * db_lock: called once the feed is drained). */
static int each_span(struct ta_db_writer *w, const char *sql, int64_t value,
		     const struct spans *s, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc = 0;

	if (ta_db_prepare(w->db, sql, &st, err) < 0)
		return -1;
	for (i = 0; i < s->n && rc == 0; i++) {
		sqlite3_bind_int64(st, 1, value);
		sqlite3_bind_int64(st, 2, s->v[i].lo);
		sqlite3_bind_int64(st, 3, s->v[i].hi);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(w, err);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

/* The file's rows were written under a provisional rank: distributedInfo
 * may only come after traceEvents. */
static int move_rank(struct ta_db_feed *f, int64_t rank, struct ta_error *err)
{
	if (rank == f->rank)
		return 0;
	return each_span(f->w, "UPDATE events SET rank = ?1"
			 " WHERE rowid BETWEEN ?2 AND ?3", rank, &f->events, err) < 0 ||
	       each_span(f->w, "UPDATE meta SET rank = ?1"
			 " WHERE rowid BETWEEN ?2 AND ?3", rank, &f->meta, err) < 0 ?
		-1 : 0;
}

static int add_file(struct ta_db_feed *f, int64_t rank,
		    const struct ta_parse_result *res, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	char damage[320] = "";
	int rc;

	if (res->truncated)
		snprintf(damage, sizeof(damage), "%s at byte %lld", res->damage,
			 (long long)res->damage_offset);
	if (ta_db_prepare(f->w->db,
			  "INSERT INTO files (rank, path, bytes, mtime_ns, events,"
			  " json_bytes, truncated, damage, hta_rounded, bad_times,"
			  " min_ts_ns, max_ts_ns)"
			  " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	sqlite3_bind_text(st, 2, f->path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, f->bytes);
	sqlite3_bind_int64(st, 4, f->mtime_ns);
	sqlite3_bind_int64(st, 5, res->events);
	sqlite3_bind_int64(st, 6, res->bytes);
	sqlite3_bind_int(st, 7, res->truncated);
	if (res->truncated)
		sqlite3_bind_text(st, 8, damage, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 9, res->any_float_ts);
	sqlite3_bind_int64(st, 10, res->bad_times);
	if (res->have_ts) {
		sqlite3_bind_int64(st, 11, res->min_ts_ns);
		sqlite3_bind_int64(st, 12, res->max_ts_ns);
	}
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(f->w, err);
	sqlite3_finalize(st);
	return rc;
}

/* The step ranges of one role of a rank, in time order, with their
 * stream (GPU annotations: one range per stream a step's work ran on).
 * Their indexes (events_ann, events_gpu_ann) find them: a few rows, not
 * a scan of the file's. The rank may be another file's too while that
 * file's rows wait for their own (move_rank): the rows are the file's by
 * rowid. */
static const char *const step_rows_sql[2] = {
	"SELECT e.rowid, n.name, 0, 0 FROM events e INDEXED BY events_ann JOIN names n"
	" ON n.name_id = e.name WHERE e.rank = ?1 AND e.role = " TA_SQL(TA_ROLE_CPU_ANN)
	" AND n.name GLOB 'ProfilerStep#[0-9]*' AND e.dur_ns IS NOT NULL"
	" ORDER BY e.ts_ns, e.idx",
	"SELECT e.rowid, n.name, e.pid, e.tid FROM events e INDEXED BY events_gpu_ann"
	" JOIN names n ON n.name_id = e.name WHERE e.rank = ?1 AND e.role = "
	TA_SQL(TA_ROLE_GPU_ANN) " AND n.name GLOB 'ProfilerStep#[0-9]*'"
	" AND e.dur_ns IS NOT NULL ORDER BY e.ts_ns, e.idx",
};
static const char step_rename_sql[] = "UPDATE events SET name = ?2 WHERE rowid = ?1";

static int cmp_span(const void *x, const void *y)
{
	const int64_t *a = x, *b = y;

	return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* The spans by their first rowid (the lanes' come after the main feed's,
 * interleaved with them in rowids). */
static void spans_sorted(const struct spans *from, struct spans *to)
{
	to->n = to->cap = from->n;
	to->v = ta_xcalloc(from->n + 1, sizeof(*to->v));
	if (from->n)   /* a file of no events has no spans (v NULL) */
		memcpy(to->v, from->v, from->n * sizeof(*to->v));
	ta_qsort(to->v, to->n, sizeof(*to->v), cmp_span);
}

/* Whether rowid is in the spans (ascending). */
static int in_spans(const struct spans *s, int64_t rowid)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].hi < rowid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->v[lo].lo <= rowid;
}

/* A step range: its stream (pid, tid: 0 on the host), its number, its
 * place in time and how many of its stream and number came before it. */
struct step_row {
	int64_t pid, tid, num, order, occ, rowid, renamed;
};

static int cmp_copy(const void *x, const void *y)
{
	const struct step_row *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->num != b->num)
		return a->num < b->num ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static int cmp_order(const void *x, const void *y)
{
	const struct step_row *a = x, *b = y;

	return a->order < b->order ? -1 : a->order > b->order;
}

/* The rows of a role, each with occ (its copy of the number, from 0). */
static int step_rows(struct ta_db_writer *w, const struct spans *sp, int64_t rank,
		     int role, struct step_row **out, size_t *n, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0, i;
	int rc;

	*out = NULL;
	*n = 0;
	if (ta_db_prepare(w->db, step_rows_sql[role], &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!in_spans(sp, sqlite3_column_int64(st, 0)))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			*out = ta_xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[*n] = (struct step_row){ sqlite3_column_int64(st, 2),
			sqlite3_column_int64(st, 3),
			strtoll((const char *)sqlite3_column_text(st, 1) + 13, NULL, 10),
			(int64_t)*n, 0, sqlite3_column_int64(st, 0), -1 };
		++*n;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return fail(w, err);
	ta_qsort(*out, *n, sizeof(**out), cmp_copy);
	for (i = 1; i < *n; i++)
		if ((*out)[i].pid == (*out)[i - 1].pid && (*out)[i].tid == (*out)[i - 1].tid &&
		    (*out)[i].num == (*out)[i - 1].num)
			(*out)[i].occ = (*out)[i - 1].occ + 1;
	return 0;
}

static int rename_step(struct ta_db_writer *w, sqlite3_stmt *up, int64_t rowid,
		       int64_t num, struct ta_error *err)
{
	char name[40];
	int is_new, rc = 0;
	int64_t id;

	snprintf(name, sizeof(name), "ProfilerStep#%lld", (long long)num);
	id = ta_intern(w->names, name, strlen(name), &is_new);
	if (is_new) {
		sqlite3_bind_int64(w->ins_name, 1, id);
		sqlite3_bind_text(w->ins_name, 2, name, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(w->ins_name) == SQLITE_DONE ? 0 : fail(w, err);
		sqlite3_reset(w->ins_name);
	}
	sqlite3_bind_int64(up, 1, rowid);
	sqlite3_bind_int64(up, 2, id);
	if (rc == 0)
		rc = sqlite3_step(up) == SQLITE_DONE ? 0 : fail(w, err);
	sqlite3_reset(up);
	return rc;
}

/* Renumbers the rank's steps seen again on the host: each later copy of
 * a number takes the next past the largest, in time order (steps 1-3
 * twice read 1-6), so that a step is one range, never joined with every
 * copy of its number; the GPU's ranges of a copy follow it (the k-th
 * "ProfilerStep#2" of a stream is the k-th on the host). Under db_lock. */
static int renumber_steps(struct ta_db_feed *f, int64_t rank, int64_t *renumbered,
			  struct ta_error *err)
{
	struct step_row *h = NULL, *g = NULL;
	sqlite3_stmt *up = NULL;
	size_t nh = 0, ng = 0, i, lo, hi;
	int64_t top = INT64_MIN;
	struct ta_db_writer *w = f->w;
	struct spans sp;
	int rc;

	spans_sorted(&f->events, &sp);
	rc = step_rows(w, &sp, rank, 0, &h, &nh, err);

	for (i = 0; i < nh; i++)
		if (h[i].num > top)
			top = h[i].num;
	for (i = 0; i < nh && h[i].occ == 0; i++)
		;
	if (rc < 0 || i == nh)   /* every number once: nothing to do */
		goto done;
	ta_qsort(h, nh, sizeof(*h), cmp_order);
	if (ta_db_prepare(w->db, step_rename_sql, &up, err) < 0)
		rc = -1;
	for (i = 0; rc == 0 && i < nh && top < INT64_MAX; i++) {
		if (h[i].occ == 0)
			continue;
		h[i].renamed = ++top;
		rc = rename_step(w, up, h[i].rowid, top, err);
		++*renumbered;
	}
	if (rc == 0)
		rc = step_rows(w, &sp, rank, 1, &g, &ng, err);
	ta_qsort(h, nh, sizeof(*h), cmp_copy);  /* by number, then copy */
	for (i = 0; rc == 0 && i < ng; i++) {
		if (g[i].occ == 0)
			continue;
		for (lo = 0, hi = nh; lo < hi;) {
			size_t mid = lo + (hi - lo) / 2;

			if (h[mid].num < g[i].num ||
			    (h[mid].num == g[i].num && h[mid].occ < g[i].occ))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nh && h[lo].num == g[i].num && h[lo].occ == g[i].occ &&
		    h[lo].renamed >= 0)
			rc = rename_step(w, up, g[i].rowid, h[lo].renamed, err);
	}
	sqlite3_finalize(up);
done:
	free(h);
	free(g);
	free(sp.v);
	return rc;
}

int ta_db_feed_end(struct ta_db_feed *f, int64_t rank,
		   const struct ta_parse_result *res, int64_t *renumbered,
		   struct ta_error *err)
{
	struct ta_db_writer *w = f->w;
	int rc;

	*renumbered = 0;
	if (drain(f) < 0) {
		fail_feed(f, err);
		ta_db_feed_free(f);
		return -1;
	}
	pthread_mutex_lock(&w->db_lock);
	rc = move_rank(f, rank, err) < 0 || add_file(f, rank, res, err) < 0 ||
	     renumber_steps(f, rank, renumbered, err) < 0 ? -1 : 0;
	pthread_mutex_unlock(&w->db_lock);
	ta_db_feed_free(f);
	return rc;
}

static void spans_take(struct spans *into, const struct spans *from)
{
	size_t i;

	for (i = 0; i < from->n; i++)
		spans_add(into, from->v[i].lo, from->v[i].hi);
}

int ta_db_feed_absorb(struct ta_db_feed *into, struct ta_db_feed *lane,
		      struct ta_error *err)
{
	int rc = drain(lane);

	if (rc < 0) {
		fail_feed(lane, err);
	} else {
		pthread_mutex_lock(&into->w->db_lock);
		spans_take(&into->events, &lane->events);
		spans_take(&into->meta, &lane->meta);
		pthread_mutex_unlock(&into->w->db_lock);
	}
	ta_db_feed_free(lane);
	return rc;
}

int ta_db_feed_discard(struct ta_db_feed *f, struct ta_error *err)
{
	struct ta_db_writer *w = f->w;
	int rc = -1;

	if (drain(f) == 0) {
		pthread_mutex_lock(&w->db_lock);
		rc = each_span(w, "DELETE FROM events WHERE ?1 AND rowid"
			       " BETWEEN ?2 AND ?3", 1, &f->events, err) < 0 ||
		     each_span(w, "DELETE FROM meta WHERE ?1 AND rowid"
			       " BETWEEN ?2 AND ?3", 1, &f->meta, err) < 0 ? -1 : 0;
		pthread_mutex_unlock(&w->db_lock);
	} else {
		fail_feed(f, err);
	}
	ta_db_feed_free(f);
	return rc;
}

void ta_db_feed_free(struct ta_db_feed *f)
{
	struct batch *b, *next;
	size_t i;

	if (!f)
		return;
	/* the SQLite thread may still hold a batch of a failed feed */
	pthread_mutex_lock(&f->w->lock);
	while (f->queued > 0)
		pthread_cond_wait(&f->w->cond, &f->w->lock);
	pthread_mutex_unlock(&f->w->lock);
	f->cur->next = f->spare;
	for (b = f->cur; b; b = next) {
		next = b->next;
		ta_buf_free(&b->buf);
		free(b);
	}
	for (b = f->held.head; b; b = next) {
		next = b->next;
		ta_buf_free(&b->buf);
		free(b);
	}
	ta_intern_free(f->names);
	free(f->roles);
	free(f->global);
	for (i = 0; i < f->nglobal; i++)
		free(f->local[i]);
	free(f->local);
	free(f->events.v);
	free(f->meta.v);
	free(f->path);
	free(f);
}

static void stop_thread(struct ta_db_writer *w)
{
	if (!w->started)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	w->started = 0;
}

int ta_db_writer_finish(struct ta_db_writer *w, struct ta_error *err)
{
	char *sql;
	int rc;

	stop_thread(w);
	if (w->failed) {
		ta_error_set(err, TA_EXIT_SYSTEM, "database: %s", w->errmsg);
		ta_db_writer_abort(w);
		return -1;
	}
	sql = sqlite3_mprintf("INSERT INTO info VALUES ('schema_version', %d),"
			      " ('tool_version', '%q');", TA_SCHEMA_VERSION, TA_VERSION);
	rc = ta_db_exec(w->db, sql, err);
	sqlite3_free(sql);
	if (rc == 0 && w->cache_entry) {
		sql = sqlite3_mprintf("INSERT INTO info VALUES ('cache_entry', %Q);",
				      w->cache_entry);
		rc = ta_db_exec(w->db, sql, err);
		sqlite3_free(sql);
	}
	if (rc == 0 && w->skipped.len)
		rc = ta_db_exec(w->db, w->skipped.s, err);
	if (rc == 0)
		rc = ta_db_exec(w->db, "COMMIT", err);
	ta_db_writer_abort(w);
	return rc;
}

void ta_db_writer_skipped(struct ta_db_writer *w, const char *what)
{
	char *sql;

	pthread_mutex_lock(&w->lock);
	sql = sqlite3_mprintf("INSERT OR REPLACE INTO info VALUES ('skipped:%d', %Q);",
			      w->nskipped++, what);
	ta_buf_adds(&w->skipped, sql);
	sqlite3_free(sql);
	pthread_mutex_unlock(&w->lock);
}

void ta_db_writer_noted(struct ta_db_writer *w, const char *path, const char *what)
{
	char *sql;

	pthread_mutex_lock(&w->lock);
	sql = sqlite3_mprintf("INSERT OR REPLACE INTO info VALUES ('noted:%d',"
			      " json_array(%Q, %Q));", w->nskipped++, path, what);
	ta_buf_adds(&w->skipped, sql);
	sqlite3_free(sql);
	pthread_mutex_unlock(&w->lock);
}

void ta_db_writer_abort(struct ta_db_writer *w)
{
	if (!w)
		return;
	ta_buf_free(&w->skipped);
	ta_buf_free(&w->args);
	stop_thread(w);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->db_lock);
	sqlite3_finalize(w->ins);
	sqlite3_finalize(w->ins_multi);
	sqlite3_finalize(w->ins_name);
	sqlite3_finalize(w->ins_meta);
	sqlite3_close(w->db);
	ta_intern_free(w->names);
	free(w->cache_entry);
	free(w);
}
