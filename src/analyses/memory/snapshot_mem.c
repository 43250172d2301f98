/* memory on an allocator snapshot: each device's recorded history
 * replayed from its state at the dump. Allocated bytes before the
 * recording = those at the dump less what the history added; the peak,
 * what of it was freed again before the end (the activations: the
 * step's working set) and what stayed (the baseline: weights, gradients,
 * optimizer state, workspaces); reserved bytes and fragmentation; the
 * blocks live at the peak by site; allocations never freed by site.
 * The baseline is split by the blocks' stacks (snapshot_parts.c's rules):
 * parameters, their gradients, optimizer state, workspaces, the rest. */
#include "snapshot_int.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_intern.h"
#include "ta_model.h"

#include <stdlib.h>
#include <string.h>

static const struct ta_col sum_cols[] = {
	{ "device", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "baseline_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "peak_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "peak_time_us", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "activations_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "reserved_at_peak_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "fragmentation_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "largest_free_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "parameters_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "gradients_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "optimizer_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "workspace_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "other_baseline_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "peak_step", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "peak_op", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "unrecorded_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
};
#define NSUM (sizeof(sum_cols) / sizeof(sum_cols[0]))

static const struct ta_col site_cols[] = {
	{ "device", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "where", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "blocks", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
};

static const struct ta_col leak_cols[] = {
	{ "device", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "where", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "allocs", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "bytes_each", TA_COL_INT, TA_UNIT_NONE, 0 },
};

static const struct ta_col series_cols[] = {
	{ "device", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "time_us", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "allocated_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "reserved_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
};

struct sev {
	int64_t addr, size, time;
	int change;                 /* 1 alloc, -1 free, 2 segment +, -2 segment - */
	int64_t site;               /* interned */
};

struct live {
	int64_t size, site;
	size_t at;                  /* its alloc event */
	int on;
};

struct device_run {
	int64_t dev;
	struct sev *e;
	size_t n;
	int64_t a_end, r_end, largest_free;
};

static int load_device(sqlite3 *db, struct device_run *d, struct ta_intern *sites,
		       struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, is_new;

	d->a_end = ta_db_int(db, "SELECT 0", 0);
	if (ta_db_prepare(db, "SELECT COALESCE(ta_sum(allocated_size), 0),"
			  " COALESCE(ta_sum(total_size), 0) FROM snapshot_segments WHERE device = ?",
			  &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, d->dev);
	if (sqlite3_step(st) == SQLITE_ROW) {
		d->a_end = sqlite3_column_int64(st, 0);
		d->r_end = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (ta_db_prepare(db, "SELECT COALESCE(max(size), 0) FROM snapshot_blocks"
			  " WHERE device = ? AND state = 'inactive'", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, d->dev);
	d->largest_free = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (ta_db_prepare(db, "SELECT action, addr, size, time_us, site FROM snapshot_events"
			  " WHERE device = ? ORDER BY seq", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, d->dev);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *a = (const char *)sqlite3_column_text(st, 0);
		const char *site = (const char *)sqlite3_column_text(st, 4);
		int change = strcmp(a, "alloc") == 0 ? 1 : strcmp(a, "free_completed") == 0 ? -1 :
			   strcmp(a, "segment_alloc") == 0 || strcmp(a, "segment_map") == 0 ? 2 :
			   strcmp(a, "segment_free") == 0 || strcmp(a, "segment_unmap") == 0 ? -2 : 0;

		if (!change)
			continue;          /* free_requested, snapshot, oom: no change */
		if (d->n == cap) {
			cap = cap ? 2 * cap : 1024;
			d->e = ta_xrealloc(d->e, cap * sizeof(*d->e));
		}
		d->e[d->n++] = (struct sev){ sqlite3_column_int64(st, 1),
			sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3), change,
			ta_intern(sites, site ? site : "", site ? strlen(site) : 0, &is_new) };
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

struct acc {
	struct ta_intern *keys;     /* "device\x1fwhere" */
	int64_t (*v)[2];            /* count, bytes */
	size_t n;
};

static void acc_add_n(struct acc *a, const char *dev, const char *where,
		      int64_t count, int64_t bytes)
{
	struct ta_buf k = { 0 };
	int64_t id;
	int is_new;

	ta_buf_addf(&k, "%s\x1f%s", dev, where);
	id = ta_intern(a->keys, k.s, k.len, &is_new);
	ta_buf_free(&k);
	if (is_new) {
		a->v = ta_xrealloc(a->v, (size_t)id * sizeof(*a->v));
		a->v[id - 1][0] = a->v[id - 1][1] = 0;
		a->n = (size_t)id;
	}
	a->v[id - 1][0] += count;
	a->v[id - 1][1] += bytes;
}

static void acc_add(struct acc *a, const char *dev, const char *where, int64_t bytes)
{
	acc_add_n(a, dev, where, 1, bytes);
}

struct baseline_ctx {
	const struct ta_intern *addrs;
	const struct live *lv;
	size_t peak_at;
};

/* A block live at the dump is part of the baseline when it was live at
 * the peak too: allocated before the recording, or last at or before the
 * peak. */
static int in_baseline(int64_t addr, void *ctx)
{
	const struct baseline_ctx *b = ctx;
	char key[48];
	int len = snprintf(key, sizeof(key), "%lld", (long long)addr);
	int64_t id = ta_intern_find(b->addrs, key, (size_t)len);

	if (id <= 0)
		return BASE_UNRECORDED;
	return b->peak_at == (size_t)-1 || !b->lv[id - 1].on ||
	       b->lv[id - 1].at <= b->peak_at ? BASE_YES : BASE_NO;
}

/* The device's highest point: allocated (a) and reserved (r) there, its
 * event (at, (size_t)-1 when the start was highest) and time. */
struct peak {
	int64_t a, r, time;
	size_t at;
};

/* Replays the events from the levels at the start (the end's, less what
 * the events changed): the peak, and with series a row per bucket (its
 * highest point). */
static struct peak levels(const struct device_run *d, const char *dev,
			  struct ta_table *series, int64_t bucket_us,
			  int64_t bucket_events)
{
	size_t srow = (size_t)-1, i;
	int64_t cur_bucket = -1, net = 0, rnet = 0, a, r;
	struct peak pk;

	for (i = 0; i < d->n; i++) {
		if (d->e[i].change == 1)
			net += d->e[i].size;
		else if (d->e[i].change == -1)
			net -= d->e[i].size;
		else
			rnet += d->e[i].change > 0 ? d->e[i].size : -d->e[i].size;
	}
	a = d->a_end - net;
	r = d->r_end - rnet;
	pk = (struct peak){ a, r, 0, (size_t)-1 };
	for (i = 0; i < d->n; i++) {
		const struct sev *e = &d->e[i];

		if (e->change == 1)
			a += e->size;
		else if (e->change == -1)
			a -= e->size;
		else
			r += e->change > 0 ? e->size : -e->size;
		if (series) {
			/* with a bucket: its highest point */
			int64_t b = bucket_events > 0 ? (int64_t)i / bucket_events :
				    bucket_us > 0 ? (e->time - d->e[0].time) / bucket_us : (int64_t)i;

			if (srow == (size_t)-1 || b != cur_bucket) {
				srow = ta_table_add_row(series);
				cur_bucket = b;
				ta_table_set_text(series, srow, 0, dev);
			} else if (a <= ta_table_cell(series, srow, 2)->i) {
				b = -1;
			}
			if (b >= 0) {
				ta_table_set_int(series, srow, 1, e->time);
				ta_table_set_int(series, srow, 2, a);
				ta_table_set_int(series, srow, 3, r);
			}
		}
		if (a > pk.a)
			pk = (struct peak){ a, r, e->time, i };
	}
	return pk;
}

/* The blocks by address (*lv, *nlv, their ids in addrs): which were live
 * at the peak (into at_peak), which never freed (into leaks); returns
 * what was freed after the peak. */
static int64_t blocks(const struct device_run *d, const char *dev,
		      const struct ta_intern *sites, const struct peak *pk,
		      struct ta_intern *addrs, struct live **lvp, size_t *nlvp,
		      struct acc *at_peak, struct acc *leaks)
{
	struct live *lv = NULL;
	size_t nlv = 0, i, k;
	int64_t pre_live = pk->a, freed_after = 0;
	char key[48];

	for (i = 0; i < d->n; i++) {
		const struct sev *e = &d->e[i];
		int len, is_new;
		int64_t id;

		if (e->change != 1 && e->change != -1)
			continue;
		len = snprintf(key, sizeof(key), "%lld", (long long)e->addr);
		id = ta_intern(addrs, key, (size_t)len, &is_new);
		if (is_new) {
			lv = ta_xrealloc(lv, (size_t)id * sizeof(*lv));
			memset(&lv[id - 1], 0, sizeof(*lv));
			nlv = (size_t)id;
		}
		if (e->change == 1) {
			lv[id - 1] = (struct live){ e->size, e->site, i, 1 };
		} else {
			/* freed after the peak: part of it that went away again,
			 * a block from before the recording or after it */
			if (pk->at != (size_t)-1 && i > pk->at &&
			    (!lv[id - 1].on || lv[id - 1].at <= pk->at))
				freed_after += e->size;
			lv[id - 1].on = 0;
		}
		if (i == pk->at)   /* what made up the peak */
			for (k = 0; k < nlv; k++)
				if (lv[k].on) {
					acc_add(at_peak, dev, ta_intern_str(sites, lv[k].site),
						lv[k].size);
					pre_live -= lv[k].size;
				}
	}
	if (pk->at != (size_t)-1 && pre_live > 0)   /* its blocks unknown */
		acc_add_n(at_peak, dev, "(allocated before the recording)", 0, pre_live);
	for (k = 0; k < nlv; k++)       /* never freed in the recording */
		if (lv[k].on)
			acc_add(leaks, dev, ta_intern_str(sites, lv[k].site), lv[k].size);
	*lvp = lv;
	*nlvp = nlv;
	return freed_after;
}

/* The device's row of the summary: its peak, and the peak's parts. */
static int summary_row(sqlite3 *db, const struct device_run *d, const char *dev,
		       const struct peak *pk, int64_t freed_after,
		       struct baseline_ctx *bc, struct ta_table *sum,
		       struct ta_error *err)
{
	int64_t parts[NPARTS], known = 0, unrecorded = 0, peak = pk->a;
	size_t row = ta_table_add_row(sum), p;
	int cxx = 0, rc = snap_parts(db, d->dev, in_baseline, bc, parts,
				     &unrecorded, &cxx, err);

	ta_table_set_text(sum, row, 0, dev);
	ta_table_set_int(sum, row, 1, peak - freed_after);
	ta_table_set_int(sum, row, 2, peak);
	if (pk->at != (size_t)-1)
		ta_table_set_int(sum, row, 3, pk->time);
	ta_table_set_int(sum, row, 4, freed_after);
	ta_table_set_int(sum, row, 5, pk->r);
	ta_table_set_int(sum, row, 6, pk->r - peak);
	ta_table_set_int(sum, row, 7, d->largest_free);
	for (p = 0; p < NPARTS; p++) {
		/* recorded without C++ frames: workspaces unknown */
		if (p == PART_WORKSPACE && !cxx)
			continue;
		/* blocks without history may be of any part: none found is
		 * not none there */
		if (parts[p] == 0 && unrecorded > 0)
			continue;
		ta_table_set_int(sum, row, 8 + p, parts[p]);
		known += parts[p];
	}
	known += unrecorded;
	ta_table_set_int(sum, row, NSUM - 1, unrecorded);
	/* the rest: inputs, caches, the allocator's rounding */
	ta_table_set_int(sum, row, 8 + NPARTS,
			 peak - freed_after > known ? peak - freed_after - known : 0);
	return rc;
}

/* Replays one device: the summary row, the sites live at the peak, the
 * allocations never freed. */
static int replay(sqlite3 *db, const struct device_run *d, const char *dev,
		  struct ta_intern *sites, struct ta_table *sum, struct acc *at_peak,
		  struct acc *leaks, struct ta_table *series, int64_t bucket_us,
		  int64_t bucket_events, struct ta_error *err)
{
	struct ta_intern *addrs = ta_intern_new();
	struct peak pk = levels(d, dev, series, bucket_us, bucket_events);
	struct live *lv;
	size_t nlv;
	int64_t freed_after = blocks(d, dev, sites, &pk, addrs, &lv, &nlv,
				     at_peak, leaks);
	struct baseline_ctx bc = { addrs, lv, pk.at };
	int rc = summary_row(db, d, dev, &pk, freed_after, &bc, sum, err);

	free(lv);
	ta_intern_free(addrs);
	return rc;
}

static int cmp_bytes(const struct ta_table *t, size_t a, size_t b)
{
	int64_t x = ta_table_cell(t, a, 3)->i, y = ta_table_cell(t, b, 3)->i;
	int c = strcmp(ta_table_cell(t, a, 0)->s, ta_table_cell(t, b, 0)->s);

	if (c)
		return c;
	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(ta_table_cell(t, a, 1)->s, ta_table_cell(t, b, 1)->s);
}

static struct ta_table *acc_table(const struct acc *a, const char *title,
				  const struct ta_col *cols, size_t ncols, int leaks)
{
	struct ta_table *t = ta_table_new(title, cols, ncols);
	size_t i;

	for (i = 0; i < a->n; i++) {
		const char *k = ta_intern_str(a->keys, (int64_t)i + 1);
		const char *sep = strchr(k, '\x1f');
		char *dev = ta_xstrndup(k, (size_t)(sep - k));
		size_t r;

		/* a leak repeats: one allocation never freed is not one */
		if (leaks && a->v[i][0] < 2) {
			free(dev);
			continue;
		}
		r = ta_table_add_row(t);
		ta_table_set_text(t, r, 0, dev);
		ta_table_set_text(t, r, 1, sep + 1);
		ta_table_set_int(t, r, 2, a->v[i][0]);
		ta_table_set_int(t, r, 3, a->v[i][1]);
		if (leaks)
			ta_table_set_int(t, r, 4, a->v[i][1] / a->v[i][0]);
		free(dev);
	}
	ta_table_sort(t, cmp_bytes);
	return t;
}

int ta_snapshot_mem_run(sqlite3 *db, const struct ta_memory_opts *o,
			struct ta_table **out, struct ta_error *err)
{
	struct ta_table *sum = ta_table_new("Memory (allocator snapshot)", sum_cols, NSUM);
	struct ta_table *series = o->series ? ta_table_new("Memory over time", series_cols, 4) : NULL;
	struct ta_intern *sites = ta_intern_new();
	struct acc at_peak = { ta_intern_new(), NULL, 0 }, leaks = { ta_intern_new(), NULL, 0 };
	sqlite3_stmt *st = NULL;
	int rc = 0, step_rc = SQLITE_DONE;

	*out = NULL;
	if (ta_db_prepare(db, "SELECT device FROM snapshot_segments UNION SELECT device"
			  " FROM snapshot_events ORDER BY 1", &st, err) < 0)
		rc = -1;
	while (rc == 0 && (step_rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct device_run d;
		char dev[32];

		memset(&d, 0, sizeof(d));
		d.dev = sqlite3_column_int64(st, 0);
		snprintf(dev, sizeof(dev), "cuda:%lld", (long long)d.dev);
		rc = load_device(db, &d, sites, err);
		if (rc == 0)
			rc = replay(db, &d, dev, sites, sum, &at_peak, &leaks, series,
				    o->bucket_ns / 1000, o->bucket_events, err);
		free(d.e);
	}
	sqlite3_finalize(st);
	if (rc == 0)
		rc = ta_db_done(db, step_rc, err);
	if (rc == 0) {
		if (o->series) {
			*out = series;
			series = NULL;
		} else if (o->by_site) {
			*out = acc_table(&at_peak, "Live at the peak, by site", site_cols, 4, 0);
		} else if (o->leaks) {
			*out = acc_table(&leaks, "Never freed in the recording, by site "
					 "(two or more allocations)", leak_cols, 5, 1);
		} else {
			*out = sum;
			sum = NULL;
		}
	}
	ta_table_free(sum);
	ta_table_free(series);
	ta_intern_free(sites);
	ta_intern_free(at_peak.keys);
	free(at_peak.v);
	ta_intern_free(leaks.keys);
	free(leaks.v);
	return rc;
}
