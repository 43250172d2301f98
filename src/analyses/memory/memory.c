/* traceanalyze memory: the allocator's [memory] events (profile_memory):
 * per rank, device and kept step the allocated bytes at its start, end
 * and peak; by site (the innermost op, range or Python frame over each
 * allocation) what was allocated, what made up the peak and what was
 * never freed; the series over time; and the leaks and peaks worth
 * saying. Allocations are matched with their frees by address. */
#include "analyses/common/intervals.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_intern.h"
#include "ta_model.h"

#include <stdlib.h>
#include <string.h>

/* The defaults: the command's, and those of every caller (report). */
const struct ta_memory_opts ta_memory_defaults = { 0, TA_MEM_BY_ANNOTATION, 0, 0, 0, 0 };

static const struct ta_col step_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "device", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "start_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "end_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "peak_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "peak_ts", TA_COL_REAL, TA_UNIT_CLOCK, 0 },
	{ "growth_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "allocs", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "frees", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "reserved_peak_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
};

static const struct ta_col site_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "device", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "where", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "allocs", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "live_at_peak_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "never_freed_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	/* the TensorBoard plugin's deallocations: of those allocations, the
	 * ones the trace saw freed (bytes = freed_bytes + never_freed_bytes,
	 * the plugin's self size increase) */
	{ "frees", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "freed_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	/* children included: what its calls allocated, and the net change of
	 * allocated memory inside them, frees of older memory included (the
	 * plugin's total size increase; may be negative) */
	{ "total_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "increase_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
};
#define NSITE_COLS (sizeof(site_cols) / sizeof(*site_cols))

static const struct ta_col series_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "device", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "ts", TA_COL_REAL, TA_UNIT_CLOCK, 1 },
	{ "allocated_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "reserved_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
};

static const struct ta_col finding_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "device", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "kind", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "where", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};

static const char *const finding_kinds[] = { "memory_growth", "memory_peak",
	"memory_fragmentation", NULL };

struct mev {                    /* one [memory] event */
	int64_t ts, tid, addr, bytes, allocated, reserved;
	int dev;                    /* index into devices */
	int64_t site;               /* name id of its site, -1: none */
	size_t anc, nanc;           /* its sites, children included: the
				     * distinct names over it (rank_mem's anc) */
	int in_window;
};

struct device {
	int64_t type, id;
	char name[32];
};

struct rank_mem {
	int64_t rank;
	struct mev *ev;
	size_t n;
	struct device *dev;
	size_t ndev;
	int64_t (*win)[3];          /* step, ts, end; step -1: no steps */
	size_t nwin;
	size_t no_total, negative;  /* bad data */
	size_t clamped;             /* sizes past 2^50 bytes, cut there */
	int64_t *anc;               /* name ids over each event (mev.anc) */
	size_t nanc, capanc;
};

static int device_of(struct rank_mem *m, int64_t type, int64_t id)
{
	size_t i;

	for (i = 0; i < m->ndev; i++)
		if (m->dev[i].type == type && m->dev[i].id == id)
			return (int)i;
	m->dev = ta_xrealloc(m->dev, (m->ndev + 1) * sizeof(*m->dev));
	m->dev[m->ndev].type = type;
	m->dev[m->ndev].id = id;
	if (type == 0)
		snprintf(m->dev[m->ndev].name, sizeof(m->dev[0].name), "cpu");
	else if (type == 1)
		snprintf(m->dev[m->ndev].name, sizeof(m->dev[0].name), "cuda:%lld",
			 (long long)id);
	else
		snprintf(m->dev[m->ndev].name, sizeof(m->dev[0].name), "type%lld:%lld",
			 (long long)type, (long long)id);
	return (int)m->ndev++;
}

/* A rank's events in time order, their totals filled in where missing
 * (the running sum), and its kept steps. */
#define MAX_BYTES ((int64_t)1 << 50)

static int64_t clamp_bytes(struct rank_mem *m, int64_t v)
{
	if (v > MAX_BYTES || v < -MAX_BYTES) {
		m->clamped++;
		return v > 0 ? MAX_BYTES : -MAX_BYTES;
	}
	return v;
}

static int load(sqlite3 *db, struct rank_mem *m, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0, i;
	int64_t *run = NULL;
	int rc;

	if (ta_db_prepare(db, "SELECT ts, tid, dev_type, dev, addr, bytes, allocated,"
			  " reserved FROM mem WHERE rank = ? ORDER BY ts, idx", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, m->rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct mev *e;

		if (m->n == cap) {
			cap = cap ? 2 * cap : 1024;
			m->ev = ta_xrealloc(m->ev, cap * sizeof(*m->ev));
		}
		e = &m->ev[m->n++];
		e->ts = sqlite3_column_int64(st, 0);
		e->tid = sqlite3_column_int64(st, 1);
		e->dev = device_of(m, sqlite3_column_int64(st, 2),
				   sqlite3_column_int64(st, 3));
		e->addr = sqlite3_column_int64(st, 4);
		/* a trace's numbers may be anything: no allocation is a PiB,
		 * and sums of such must not overflow */
		e->bytes = clamp_bytes(m, sqlite3_column_int64(st, 5));
		e->allocated = sqlite3_column_type(st, 6) == SQLITE_NULL ? INT64_MIN :
			       clamp_bytes(m, sqlite3_column_int64(st, 6));
		e->reserved = clamp_bytes(m, sqlite3_column_int64(st, 7));
		e->site = -1;
		e->in_window = 0;
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	run = ta_xcalloc(m->ndev + 1, sizeof(*run));
	for (i = 0; i < m->n; i++) {
		struct mev *e = &m->ev[i];

		if (e->allocated == INT64_MIN) {
			m->no_total++;
			e->allocated = run[e->dev] + e->bytes;
		} else if (e->allocated < 0) {
			m->negative++;
			e->allocated = run[e->dev] + e->bytes;
		}
		run[e->dev] = e->allocated;
	}
	free(run);
	if (ta_db_prepare(db, "SELECT step, ts, end_ts FROM step_host WHERE rank = ?1"
			  " UNION ALL SELECT -1, ts, end_ts FROM span WHERE rank = ?1"
			  " AND NOT EXISTS (SELECT 1 FROM step_host WHERE rank = ?1)"
			  " ORDER BY 2", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, m->rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		m->win = ta_xrealloc(m->win, (m->nwin + 1) * sizeof(*m->win));
		m->win[m->nwin][0] = sqlite3_column_int64(st, 0);
		m->win[m->nwin][1] = sqlite3_column_int64(st, 1);
		m->win[m->nwin++][2] = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	for (i = 0; i < m->n; i++) {
		size_t w;

		for (w = 0; w < m->nwin; w++)
			if (m->ev[i].ts >= m->win[w][1] && m->ev[i].ts < m->win[w][2])
				m->ev[i].in_window = 1;
	}
	return 0;
}

static void free_rank(struct rank_mem *m)
{
	free(m->ev);
	free(m->dev);
	free(m->win);
	free(m->anc);
}

/* Allocated bytes on dev just before event i (its own total less it). */
static int64_t before(const struct rank_mem *m, size_t i)
{
	return m->ev[i].allocated - m->ev[i].bytes;
}

static void step_rows(struct ta_table *t, const struct rank_mem *m)
{
	size_t d, w, i;

	for (d = 0; d < m->ndev; d++)
		for (w = 0; w < m->nwin; w++) {
			int64_t start = INT64_MIN, end = 0, peak = 0, peak_ts = 0;
			int64_t allocs = 0, frees = 0, reserved = 0, last = INT64_MIN;
			size_t r;

			for (i = 0; i < m->n; i++) {
				const struct mev *e = &m->ev[i];

				if (e->dev != (int)d)
					continue;
				if (e->ts < m->win[w][1]) {
					last = e->allocated;
					continue;
				}
				if (e->ts >= m->win[w][2])
					break;
				if (start == INT64_MIN) {
					start = last != INT64_MIN ? last : before(m, i);
					peak = start, peak_ts = e->ts;
				}
				if (e->allocated > peak)
					peak = e->allocated, peak_ts = e->ts;
				if (e->reserved > reserved)
					reserved = e->reserved;
				allocs += e->bytes > 0;
				frees += e->bytes < 0;
				end = e->allocated;
			}
			if (start == INT64_MIN) {  /* no event in the step */
				if (last == INT64_MIN)
					continue;
				start = end = peak = last;
				peak_ts = m->win[w][1];
			}
			r = ta_table_add_row(t);
			ta_table_set_int(t, r, 0, m->rank);
			ta_table_set_text(t, r, 1, m->dev[d].name);
			if (m->win[w][0] >= 0)
				ta_table_set_int(t, r, 2, m->win[w][0]);
			ta_table_set_int(t, r, 3, start);
			ta_table_set_int(t, r, 4, end);
			ta_table_set_int(t, r, 5, peak);
			ta_table_set_real(t, r, 6, (double)peak_ts / 1000.0);
			ta_table_set_int(t, r, 7, end - start);
			ta_table_set_int(t, r, 8, allocs);
			ta_table_set_int(t, r, 9, frees);
			ta_table_set_int(t, r, 10, reserved);
		}
}

struct open_row {
	int64_t end, name;
};

struct host_row {
	int64_t tid, ts, end, name;
};

/* Each allocation's site: the innermost host row of the kind over it on
 * its thread (kind: TA_MEM_BY_*). */
static int sites(sqlite3 *db, struct rank_mem *m, int by, struct ta_error *err)
{
	static const char *const cats[] = { "cpu_op", "user_annotation",
		"python_function" };
	sqlite3_stmt *st = NULL;
	struct host_row *h = NULL;
	struct open_row *stack = NULL;
	size_t nh = 0, cap = 0, i, j = 0, depth = 0;
	size_t *order;
	int rc;

	if (ta_db_prepare(db, "SELECT h.tid, h.ts, h.ts + h.dur, h.name FROM host h"
			  " WHERE h.rank = ? AND h.cat = (SELECT name_id FROM label"
			  " WHERE name = ?) AND h.ts IS NOT NULL AND h.dur IS NOT NULL"
			  " AND h.name NOT IN (SELECT name_id FROM label"
			  "  WHERE name GLOB 'ProfilerStep#*')"
			  " ORDER BY h.tid, h.ts, h.dur DESC", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, m->rank);
	sqlite3_bind_text(st, 2, cats[by], -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (nh == cap) {
			cap = cap ? 2 * cap : 1024;
			h = ta_xrealloc(h, cap * sizeof(*h));
		}
		h[nh].tid = sqlite3_column_int64(st, 0);
		h[nh].ts = sqlite3_column_int64(st, 1);
		h[nh].end = sqlite3_column_int64(st, 2);
		h[nh++].name = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0) {
		free(h);
		return -1;
	}
	/* events by thread then time (a stable insertion order: few threads) */
	order = ta_xcalloc(m->n + 1, sizeof(*order));
	for (i = 0; i < m->n; i++)
		order[i] = i;
	for (i = 1; i < m->n; i++) {
		size_t k = order[i], p = i;

		while (p > 0 && m->ev[order[p - 1]].tid > m->ev[k].tid)
			order[p] = order[p - 1], p--;
		order[p] = k;
	}
	stack = ta_xcalloc(nh + 1, sizeof(*stack));
	m->nanc = 0;
	for (i = 0; i < m->n; i++) {
		struct mev *e = &m->ev[order[i]];

		if (i > 0 && m->ev[order[i - 1]].tid != e->tid)
			depth = 0;
		while (j < nh && (h[j].tid < e->tid || (h[j].tid == e->tid && h[j].ts <= e->ts))) {
			if (h[j].tid == e->tid) {
				while (depth && stack[depth - 1].end <= h[j].ts)
					depth--;
				stack[depth].end = h[j].end;
				stack[depth++].name = h[j].name;
			}
			j++;
		}
		while (depth && stack[depth - 1].end <= e->ts)
			depth--;
		e->site = depth ? stack[depth - 1].name : -1;
		/* every name over it once (a name nested in itself is one
		 * call of it) */
		e->anc = m->nanc;
		for (size_t k = 0; k < depth; k++) {
			size_t q;

			for (q = e->anc; q < m->nanc && m->anc[q] != stack[k].name; q++)
				;
			if (q < m->nanc)
				continue;
			if (m->nanc == m->capanc) {
				m->capanc = m->capanc ? 2 * m->capanc : 1024;
				m->anc = ta_xrealloc(m->anc, m->capanc * sizeof(*m->anc));
			}
			m->anc[m->nanc++] = stack[k].name;
		}
		e->nanc = m->nanc - e->anc;
	}
	free(order);
	free(stack);
	free(h);
	return 0;
}

struct site_acc {
	int64_t allocs, bytes, live, never, frees, freed, total, increase;
};

struct sites_acc {
	struct ta_intern *keys;     /* "dev:site" */
	struct site_acc *v;
	size_t n;
};

static struct site_acc *site_acc(struct sites_acc *a, int dev, int64_t site)
{
	char key[64];
	int len = snprintf(key, sizeof(key), "%d:%lld", dev, (long long)site);
	int is_new;
	int64_t id = ta_intern(a->keys, key, (size_t)len, &is_new);

	if (is_new) {
		a->v = ta_xrealloc(a->v, (size_t)id * sizeof(*a->v));
		memset(&a->v[id - 1], 0, sizeof(*a->v));
		a->n = (size_t)id;
	}
	return &a->v[id - 1];
}

struct block {                  /* an address's latest allocation */
	int64_t bytes, site;
	int dev, in_window, live;
};

/* Allocations matched with their frees by address, in time order: what
 * each site allocated in the steps, what of it was live at the device's
 * peak in them, and what of it the trace never saw freed (a step's own
 * temporaries freed in the next step, after the last kept one, are not
 * that). */
static void site_rows(sqlite3 *db, struct ta_table *t, struct rank_mem *m,
		      size_t *unmatched, size_t *reused)
{
	struct sites_acc a = { ta_intern_new(), NULL, 0 };
	struct ta_intern *addrs = ta_intern_new();
	struct block *b = NULL;
	size_t nb = 0, i, d, k;
	int64_t *peak = ta_xcalloc(m->ndev + 1, sizeof(*peak));
	size_t *peak_at = ta_xcalloc(m->ndev + 1, sizeof(*peak_at));
	int64_t *known = ta_xcalloc(m->ndev + 1, sizeof(*known));
	sqlite3_stmt *st = NULL;
	char key[64];

	for (d = 0; d < m->ndev; d++)
		peak[d] = INT64_MIN, peak_at[d] = (size_t)-1;
	for (i = 0; i < m->n; i++)
		if (m->ev[i].in_window && m->ev[i].allocated > peak[m->ev[i].dev])
			peak[m->ev[i].dev] = m->ev[i].allocated, peak_at[m->ev[i].dev] = i;
	for (i = 0; i < m->n; i++) {
		const struct mev *e = &m->ev[i];
		int len = snprintf(key, sizeof(key), "%d:%lld", e->dev, (long long)e->addr);
		int is_new;
		int64_t id = ta_intern(addrs, key, (size_t)len, &is_new);
		struct block *x;

		if (is_new) {
			b = ta_xrealloc(b, (size_t)id * sizeof(*b));
			memset(&b[id - 1], 0, sizeof(*b));
			nb = (size_t)id;
		}
		x = &b[id - 1];
		/* inside the calls over it, children included: allocated, and
		 * the net change (an event outside every op: "(none)"'s) */
		if (e->in_window && e->bytes != 0) {
			for (k = 0; k < e->nanc; k++) {
				struct site_acc *s = site_acc(&a, e->dev, m->anc[e->anc + k]);

				s->total = ta_add_sat(s->total, e->bytes > 0 ? e->bytes : 0);
				s->increase = ta_add_sat(s->increase, e->bytes);
			}
			if (!e->nanc) {
				struct site_acc *s = site_acc(&a, e->dev, -1);

				s->total = ta_add_sat(s->total, e->bytes > 0 ? e->bytes : 0);
				s->increase = ta_add_sat(s->increase, e->bytes);
			}
		}
		if (e->bytes > 0) {
			*reused += (size_t)x->live;
			*x = (struct block){ e->bytes, e->site, e->dev, e->in_window, 1 };
			if (e->in_window) {
				struct site_acc *s = site_acc(&a, e->dev, e->site);

				s->allocs++;
				s->bytes = ta_add_sat(s->bytes, e->bytes);
			}
		} else if (e->bytes < 0) {
			*unmatched += !x->live;
			if (x->live && x->in_window) {   /* freed: its allocation's site */
				struct site_acc *s = site_acc(&a, x->dev, x->site);

				s->frees++;
				s->freed = ta_add_sat(s->freed, x->bytes);
			}
			x->live = 0;
		}
		if (peak_at[e->dev] == i)  /* what made up the peak */
			for (k = 0; k < nb; k++)
				if (b[k].live && b[k].dev == e->dev) {
					struct site_acc *s = site_acc(&a, b[k].dev, b[k].site);

					s->live = ta_add_sat(s->live, b[k].bytes);
					known[e->dev] = ta_add_sat(known[e->dev], b[k].bytes);
				}
	}
	for (k = 0; k < nb; k++)       /* allocated in the steps, still live */
		if (b[k].live && b[k].in_window) {
			struct site_acc *s = site_acc(&a, b[k].dev, b[k].site);

			s->never = ta_add_sat(s->never, b[k].bytes);
		}
	if (sqlite3_prepare_v2(db, "SELECT name FROM label WHERE name_id = ?", -1,
			       &st, NULL) != SQLITE_OK)
		st = NULL;
	for (i = 0; i < a.n; i++) {
		const char *s = ta_intern_str(a.keys, (int64_t)i + 1);
		int dev = atoi(s);
		int64_t site = strtoll(strchr(s, ':') + 1, NULL, 10);
		const char *where = "(none)";
		size_t r = ta_table_add_row(t);

		if (site >= 0 && st) {
			sqlite3_bind_int64(st, 1, site);
			if (sqlite3_step(st) == SQLITE_ROW)
				where = (const char *)sqlite3_column_text(st, 0);
		}
		ta_table_set_int(t, r, 0, m->rank);
		ta_table_set_text(t, r, 1, m->dev[dev].name);
		ta_table_set_text(t, r, 2, where);
		ta_table_set_int(t, r, 3, a.v[i].allocs);
		ta_table_set_int(t, r, 4, a.v[i].bytes);
		ta_table_set_int(t, r, 5, a.v[i].live);
		ta_table_set_int(t, r, 6, a.v[i].never);
		ta_table_set_int(t, r, 7, a.v[i].frees);
		ta_table_set_int(t, r, 8, a.v[i].freed);
		ta_table_set_int(t, r, 9, a.v[i].total);
		ta_table_set_int(t, r, 10, a.v[i].increase);
		if (st)
			sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	/* the rest of each peak was allocated before the trace began */
	for (d = 0; d < m->ndev; d++)
		if (peak_at[d] != (size_t)-1 && peak[d] > known[d]) {
			size_t r = ta_table_add_row(t);

			ta_table_set_int(t, r, 0, m->rank);
			ta_table_set_text(t, r, 1, m->dev[d].name);
			ta_table_set_text(t, r, 2, "(allocated before the trace)");
			ta_table_set_int(t, r, 3, 0);
			ta_table_set_int(t, r, 4, 0);
			ta_table_set_int(t, r, 5, peak[d] - known[d]);
			ta_table_set_int(t, r, 6, 0);
		}
	free(known);
	free(peak);
	free(peak_at);
	free(b);
	free(a.v);
	ta_intern_free(a.keys);
	ta_intern_free(addrs);
}

static void series_rows(struct ta_table *t, const struct rank_mem *m,
			int64_t bucket_ns)
{
	size_t d, i;

	for (d = 0; d < m->ndev; d++) {
		int64_t b0 = INT64_MIN, alloc = 0, res = 0;
		int open = 0;

		for (i = 0; i <= m->n; i++) {
			const struct mev *e = i < m->n ? &m->ev[i] : NULL;
			size_t r;

			if (e && e->dev != (int)d)
				continue;
			if (bucket_ns > 0 && e && open && e->ts < b0 + bucket_ns) {
				if (e->allocated > alloc)
					alloc = e->allocated;
				if (e->reserved > res)
					res = e->reserved;
				continue;
			}
			if (bucket_ns > 0 && open) {   /* the bucket ends */
				r = ta_table_add_row(t);
				ta_table_set_int(t, r, 0, m->rank);
				ta_table_set_text(t, r, 1, m->dev[d].name);
				ta_table_set_real(t, r, 2, (double)b0 / 1000.0);
				ta_table_set_int(t, r, 3, alloc);
				ta_table_set_int(t, r, 4, res);
				open = 0;
			}
			if (!e)
				break;
			if (bucket_ns > 0) {
				b0 = b0 == INT64_MIN ? e->ts :
				     b0 + (e->ts - b0) / bucket_ns * bucket_ns;
				alloc = e->allocated, res = e->reserved, open = 1;
				continue;
			}
			r = ta_table_add_row(t);
			ta_table_set_int(t, r, 0, m->rank);
			ta_table_set_text(t, r, 1, m->dev[d].name);
			ta_table_set_real(t, r, 2, (double)e->ts / 1000.0);
			ta_table_set_int(t, r, 3, e->allocated);
			ta_table_set_int(t, r, 4, e->reserved);
		}
	}
}

/* Bytes a step by which allocated memory grew over the steps, when it
 * grew in each of them (a leak's shape), else 0. */
static int64_t growth_per_step(const struct ta_table *steps, int64_t rank,
			       const char *dev, int64_t *n)
{
	int64_t first = 0, last = 0;
	size_t r;
	int all = 1;

	*n = 0;
	for (r = 0; r < steps->nrows; r++) {
		if (ta_table_cell(steps, r, 0)->i != rank ||
		    strcmp(ta_table_cell(steps, r, 1)->s, dev) != 0)
			continue;
		if ((*n)++ == 0)
			first = ta_table_cell(steps, r, 3)->i;
		last = ta_table_cell(steps, r, 4)->i;
		all &= ta_table_cell(steps, r, 7)->i > 0;
	}
	return *n > 0 && all && last > first ? (last - first) / *n : 0;
}

/* What is worth saying: growth every step with bytes never freed (named
 * by the range that allocated most of them), each device's peak and what
 * made it up, and reserved memory far above allocated at the peak. */
#define GROWTH_MIN (1 << 20)
#define FRAGMENT_MIN (256ll << 20)

static void finding(struct ta_table *f, int64_t rank, const char *dev,
		    const char *kind, int64_t bytes, const char *where)
{
	size_t row = ta_table_add_row(f);

	ta_table_set_int(f, row, 0, rank);
	ta_table_set_text(f, row, 1, dev);
	ta_table_set_text(f, row, 2, kind);
	ta_table_set_int(f, row, 3, bytes);
	ta_table_set_text(f, row, 4, where);
}

static void finding_rows(struct ta_table *f, const struct ta_table *steps,
			 const struct ta_table *sites, const struct rank_mem *m)
{
	size_t d, r;

	for (d = 0; d < m->ndev; d++) {
		const char *dev = m->dev[d].name;
		int64_t n, g = growth_per_step(steps, m->rank, dev, &n);
		int64_t peak = -1, reserved = 0, best_never = 0, best_live[3] = { 0 };
		const char *never_at = NULL, *live_at[3] = { NULL };
		char where[512];
		size_t k;

		for (r = 0; r < sites->nrows; r++) {
			int64_t nf = ta_table_cell(sites, r, 6)->i;
			int64_t lv = ta_table_cell(sites, r, 5)->i;

			if (ta_table_cell(sites, r, 0)->i != m->rank ||
			    strcmp(ta_table_cell(sites, r, 1)->s, dev) != 0)
				continue;
			if (nf > best_never)
				best_never = nf, never_at = ta_table_cell(sites, r, 2)->s;
			for (k = 0; k < 3; k++)
				if (lv > best_live[k]) {
					memmove(best_live + k + 1, best_live + k,
						(2 - k) * sizeof(*best_live));
					memmove(live_at + k + 1, live_at + k,
						(2 - k) * sizeof(*live_at));
					best_live[k] = lv, live_at[k] = ta_table_cell(sites, r, 2)->s;
					break;
				}
		}
		for (r = 0; r < steps->nrows; r++)
			if (ta_table_cell(steps, r, 0)->i == m->rank &&
			    strcmp(ta_table_cell(steps, r, 1)->s, dev) == 0 &&
			    ta_table_cell(steps, r, 5)->i > peak) {
				peak = ta_table_cell(steps, r, 5)->i;
				reserved = ta_table_cell(steps, r, 10)->i;
			}
		if (g >= GROWTH_MIN && best_never > 0)
			finding(f, m->rank, dev, finding_kinds[0], g, never_at);
		if (peak < GROWTH_MIN)   /* a few bytes: nothing to say */
			continue;
		where[0] = '\0';
		for (k = 0; k < 3 && live_at[k]; k++)
			snprintf(where + strlen(where), sizeof(where) - strlen(where),
				 "%s%s %.1f MiB", k ? ", " : "", live_at[k],
				 (double)best_live[k] / (1 << 20));
		finding(f, m->rank, dev, finding_kinds[1], peak, where);
		if (reserved - peak >= FRAGMENT_MIN && reserved > 2 * peak)
			finding(f, m->rank, dev, finding_kinds[2], reserved - peak,
				"reserved but not allocated at the peak");
	}
}

/* Leaks first, then what made up the peak, then what was allocated. */
static int cmp_site(const struct ta_table *t, size_t a, size_t b)
{
	int c;
	size_t k;

	if ((c = strcmp(ta_table_cell(t, a, 1)->s, ta_table_cell(t, b, 1)->s)) != 0 ||
	    ta_table_cell(t, a, 0)->i != ta_table_cell(t, b, 0)->i)
		return ta_table_cell(t, a, 0)->i != ta_table_cell(t, b, 0)->i ?
		       (ta_table_cell(t, a, 0)->i < ta_table_cell(t, b, 0)->i ? -1 : 1) : c;
	for (k = 6; k >= 4; k--) {
		int64_t x = ta_table_cell(t, a, k)->i, y = ta_table_cell(t, b, k)->i;

		if (x != y)
			return x > y ? -1 : 1;
	}
	return strcmp(ta_table_cell(t, a, 2)->s, ta_table_cell(t, b, 2)->s);
}

/* An allocator snapshot read as a database: its own analysis, and no
 * findings. */
static int snapshot_run(sqlite3 *db, const struct ta_memory_opts *o,
			struct ta_table **out, struct ta_table **findings,
			struct ta_error *err)
{
	if (o->by_site && o->by != TA_MEM_BY_STACK) {
		ta_error_set(err, TA_EXIT_USAGE, "an allocator snapshot has stacks, "
			     "not ops or ranges: --by stack");
		return -1;
	}
	if (ta_snapshot_mem_run(db, o, out, err) < 0)
		return -1;
	*findings = ta_table_new("Memory findings", finding_cols, 5);
	ta_table_set_values(*findings, 2, finding_kinds);
	return 0;
}

/* A trace's tables, and what its events made us count. */
struct mem_out {
	struct ta_table *steps, *by, *ann, *series, *f;
	size_t unmatched, reused, no_total, negative, clamped, events, ranks;
};

/* One rank's rows into mo's tables. */
static int rank_rows(sqlite3 *db, const struct ta_memory_opts *o, int64_t rank,
		     struct mem_out *mo, struct ta_error *err)
{
	struct rank_mem m;
	size_t u = 0, r2 = 0;
	int rc;

	memset(&m, 0, sizeof(m));
	m.rank = rank;
	mo->ranks++;
	rc = load(db, &m, err);
	if (rc == 0 && o->series)
		series_rows(mo->series, &m, o->bucket_ns);
	if (rc == 0 && !o->series) {
		step_rows(mo->steps, &m);
		/* the findings name leaks and peaks by range */
		rc = sites(db, &m, TA_MEM_BY_ANNOTATION, err);
		if (rc == 0)
			site_rows(db, mo->ann, &m, &u, &r2);
		if (rc == 0)
			finding_rows(mo->f, mo->steps, mo->ann, &m);
		if (rc == 0 && o->by != TA_MEM_BY_ANNOTATION) {
			u = r2 = 0;
			rc = sites(db, &m, o->by, err);
		}
		if (rc == 0)
			site_rows(db, mo->by, &m, &mo->unmatched, &mo->reused);
	}
	mo->no_total += m.no_total;
	mo->negative += m.negative;
	mo->clamped += m.clamped;
	mo->events += m.n;
	free_rank(&m);
	return rc;
}

/* Every selected rank's rows; nothing to answer with is an error, so that
 * no gate passes on it. */
static int trace_rows(sqlite3 *db, const struct ta_memory_opts *o,
		      struct mem_out *mo, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = 0, step_rc = SQLITE_DONE;

	if (ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY 1", &st, err) < 0)
		return -1;
	while (rc == 0 && (step_rc = sqlite3_step(st)) == SQLITE_ROW)
		rc = rank_rows(db, o, sqlite3_column_int64(st, 0), mo, err);
	sqlite3_finalize(st);
	if (rc == 0)
		rc = ta_db_done(db, step_rc, err);
	if (rc == 0 && mo->ranks > 0 && mo->events == 0)
		rc = ta_memory_none(db, err);
	return rc;
}

int ta_memory_none(sqlite3 *db, struct ta_error *err)
{
	int64_t n = ta_db_int(db, "SELECT count(*) FROM inputs WHERE rank IN"
			      " (SELECT rank FROM sel_ranks)", 0);
	char *paths = ta_db_text(db, "SELECT group_concat('''' || path || '''', ', ') FROM"
				 " inputs WHERE rank IN (SELECT rank FROM sel_ranks)");

	if (n > 1)
		ta_error_set(err, TA_EXIT_INPUT, "no [memory] events in any of %lld traces (%s): "
			     "profile with profile_memory=True", (long long)n, paths ? paths : "?");
	else
		ta_error_set(err, TA_EXIT_INPUT, "%s: no [memory] events: profile with "
			     "profile_memory=True", paths ? paths : "?");
	free(paths);
	return -1;
}

/* on t, the table shown: what any of them would say wrongly without it */
static void say_counts(const struct mem_out *mo, struct ta_table *t)
{
	if (mo->no_total)
		ta_table_warn(t, "%zu [memory] events without \"Total Allocated\": "
			      "their totals are the running sum", mo->no_total);
	if (mo->negative)
		ta_table_warn(t, "%zu [memory] events with a negative total: "
			      "replaced by the running sum", mo->negative);
	if (mo->clamped)
		ta_table_warn(t, "%zu [memory] sizes or totals past 2^50 bytes (1 PiB): "
			      "counted as 2^50, the tables' bytes are not the trace's",
			      mo->clamped);
	if (mo->reused)
		ta_table_warn(mo->by, "%zu allocations at an address still allocated: "
			      "the earlier one counts as freed", mo->reused);
	if (mo->unmatched)
		ta_table_note(mo->by, "%zu frees of memory allocated before the trace "
			      "began", mo->unmatched);
}

int ta_memory_run(sqlite3 *db, const struct ta_query *q,
		  const struct ta_memory_opts *o, struct ta_table **out,
		  struct ta_table **findings, struct ta_error *err)
{
	struct mem_out mo;
	struct ta_table **keep;
	int rc;

	*out = *findings = NULL;
	if (ta_model_prepare(db, q, 0, err) < 0)
		return -1;
	if (ta_db_int(db, "SELECT EXISTS (SELECT 1 FROM snapshot_segments) OR"
		      " EXISTS (SELECT 1 FROM snapshot_events)", 0) > 0)
		return snapshot_run(db, o, out, findings, err);
	if (o->leaks) {
		ta_error_set(err, TA_EXIT_USAGE, "--leaks reads an allocator snapshot; "
			     "for a trace, --findings names the growth");
		return -1;
	}
	memset(&mo, 0, sizeof(mo));
	mo.steps = ta_table_new("Memory per step", step_cols, 11);
	mo.by = ta_table_new("Memory by site", site_cols, NSITE_COLS);
	mo.ann = ta_table_new("", site_cols, NSITE_COLS);
	mo.series = ta_table_new("Memory over time", series_cols, 5);
	mo.f = ta_table_new("Memory findings", finding_cols, 5);
	ta_table_set_values(mo.f, 2, finding_kinds);
	rc = ta_model_prepare(db, q, TA_NEED_DEV | TA_NEED_HOST | TA_NEED_MEM, err);
	if (rc == 0)
		rc = trace_rows(db, o, &mo, err);
	keep = o->series ? &mo.series : o->by_site ? &mo.by : &mo.steps;
	say_counts(&mo, *keep);
	if (o->by_site)
		ta_table_sort(mo.by, cmp_site);
	if (rc == 0) {
		*out = *keep, *keep = NULL;
		*findings = mo.f, mo.f = NULL;
	}
	ta_table_free(mo.steps), ta_table_free(mo.by), ta_table_free(mo.ann);
	ta_table_free(mo.series), ta_table_free(mo.f);
	return rc < 0 ? -1 : 0;
}
