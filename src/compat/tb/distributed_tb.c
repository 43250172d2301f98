/* The TensorBoard profiler plugin's Distributed view (loader.py:133-179,
 * communication.py, overall_parser.py:86-112, run_generator.py:436-580;
 * kineto 790be856), quirks included: its three tables from every
 * selected rank (the plugin's worker) at once.
 *
 * Each rank's communication nodes (overview_tb.c: the nccl:/gloo: ops,
 * their own range first, NCCL's kernels of their External id after) are
 * matched across ranks by position; node i's range j gets, on every
 * rank, the shortest length any rank gave it, ending where its own ends
 * (the "real" transfer). The view exists only when every rank has
 * communication, and the ranks' node counts and each node's range counts
 * agree; else the tables are empty and a warning says why (a gate on
 * them trips). Times are the trace's µs as doubles; the "all" rows and
 * the averages are Python's int() and round() of them, as the plugin
 * shows them. */
#include "ta_analyses.h"
#include "ta_db.h"
#include "overview_tb.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct worker {
	int64_t rank;
	char *name;
	struct tb_comm_rank c;
};

struct job {
	struct worker *w;
	size_t n;
};

/* consts.py's WORKER_PATTERN: the file's name without .pt.trace.json[.gz]
 * and without a last ".digits" (the handler's span); a name of another
 * form without its .json[.gz]. */
static char *worker_name(const char *path)
{
	static const char *const ends[] = { ".pt.trace.json.gz", ".pt.trace.json",
					    ".json.gz", ".json" };
	const char *base = path ? strrchr(path, '/') : NULL;
	size_t len, i, m;
	char *s;

	base = base ? base + 1 : path ? path : "";
	len = strlen(base);
	for (i = 0; i < sizeof(ends) / sizeof(*ends); i++) {
		m = strlen(ends[i]);
		if (len > m && strcmp(base + len - m, ends[i]) == 0) {
			len -= m;
			if (i < 2) {   /* the span: the shortest worker name leaves the last */
				size_t d = len;

				while (d > 0 && base[d - 1] >= '0' && base[d - 1] <= '9')
					d--;
				if (d < len && d > 0 && base[d - 1] == '.')
					len = d - 1;
			}
			break;
		}
	}
	s = ta_xmalloc(len + 1);
	memcpy(s, base, len);
	s[len] = 0;
	return s;
}

static void job_free(struct job *j)
{
	size_t i;

	for (i = 0; i < j->n; i++) {
		free(j->w[i].name);
		tb_comm_rank_free(&j->w[i].c);
	}
	free(j->w);
}

static int job_load(sqlite3 *db, const struct ta_query *q, struct job *j,
		    struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	memset(j, 0, sizeof(*j));
	if (ta_model_prepare(db, q, 0, err) < 0)
		return -1;
	/* the view matches each rank's ops with every other rank's: a subset
	 * would give other numbers than the plugin's, silently */
	if (ta_db_int(db, "SELECT (SELECT count(*) FROM sel_ranks) < (SELECT count(*)"
		      " FROM inputs)", 0)) {
		ta_error_set(err, TA_EXIT_USAGE, "--tb-compat: the plugin's Distributed view "
			     "matches every rank's collectives with the others': leave --ranks "
			     "out (without --tb-compat, --ranks picks rows and keeps the matching)");
		return -1;
	}
	if (
	    ta_db_prepare(db, "SELECT s.rank, i.path FROM sel_ranks s"
			  " LEFT JOIN inputs i ON i.rank = s.rank ORDER BY s.rank", &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct worker *w;

		if (j->n == cap) {
			cap = cap ? cap * 2 : 8;
			j->w = ta_xrealloc(j->w, cap * sizeof(*j->w));
		}
		w = &j->w[j->n];
		memset(w, 0, sizeof(*w));
		w->rank = sqlite3_column_int64(st, 0);
		w->name = worker_name((const char *)sqlite3_column_text(st, 1));
		j->n++;
		if (tb_comm_rank_load(db, w->rank, &w->c, err) < 0) {
			sqlite3_finalize(st);
			job_free(j);
			return -1;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		job_free(j);
		ta_db_failed(db, err);
		return -1;
	}
	return 0;
}

/* A rank without a communication op the plugin knows: why, said. */
static void say_no_comm(sqlite3 *db, const struct worker *w, struct ta_table *t)
{
	sqlite3_stmt *st = NULL;
	const char *other = NULL;

	if (sqlite3_prepare_v2(db, "SELECT name FROM trace_x WHERE rank = ?1 AND (name GLOB"
			       " 'nccl:*' OR name GLOB 'gloo:*') LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, w->rank);
		if (sqlite3_step(st) == SQLITE_ROW)
			other = (const char *)sqlite3_column_text(st, 0);
	}
	if (w->c.nnodes == 0 && w->c.has_comm)
		ta_table_warn(t, "no distributed view: rank %lld has both nccl: and gloo: ops "
			      "(the plugin shows none then)", (long long)w->rank);
	else if (other)
		ta_table_warn(t, "no distributed view: rank %lld's collectives (%s, ...) are not "
			      "among the plugin's nccl:/gloo: broadcast, reduce, all_reduce, "
			      "all_gather, reduce_scatter (FSDP2's are not); overlap --by step and "
			      "comms without --tb-compat count them", (long long)w->rank, other);
	else
		ta_table_warn(t, "no distributed view: rank %lld has no communication op "
			      "(nccl:* or gloo:*)", (long long)w->rank);
	sqlite3_finalize(st);
}

/* On PyTorch 2.11 the nccl: ops are annotations that name no kernel: the
 * plugin then counts NCCL's kernels as computation. Said, once. */
static void say_unlinked(sqlite3 *db, const struct job *j, struct ta_table *t)
{
	size_t k, i;

	for (k = 0; k < j->n; k++)
		for (i = 0; i < j->w[k].c.nnodes; i++)
			if (j->w[k].c.nodes[i].nk > 1)
				return;
	if (ta_db_int(db, "SELECT EXISTS (SELECT 1 FROM trace_x WHERE lower(cat) = 'kernel'"
		      " AND name GLOB 'nccl*')", 0))
		ta_table_note(t, "the nccl: ops name no kernel in these traces (PyTorch 2.11): "
			      "the plugin counts NCCL's kernels as computation and their exposed "
			      "time as overlapping; overlap --by step without --tb-compat counts "
			      "them as communication");
}

/* _process_distributed_profiles: whether the view exists (else a
 * warning on t saying why), and the real transfer ranges. */
static int match_nodes(sqlite3 *db, struct job *j, struct ta_table *t)
{
	size_t i, k, r;

	if (!j->n)
		return 0;
	for (k = 0; k < j->n; k++)
		if (!j->w[k].c.has_comm || !j->w[k].c.nnodes) {
			say_no_comm(db, &j->w[k], t);
			return 0;
		}
	for (k = 1; k < j->n; k++)
		if (j->w[k].c.nnodes != j->w[0].c.nnodes) {
			ta_table_warn(t, "no distributed view: rank %lld has %zu communication "
				      "ops, rank %lld %zu", (long long)j->w[0].rank, j->w[0].c.nnodes,
				      (long long)j->w[k].rank, j->w[k].c.nnodes);
			return 0;
		}
	for (i = 0; i < j->w[0].c.nnodes; i++) {
		size_t nk = j->w[0].c.nodes[i].nk;

		for (k = 1; k < j->n; k++)
			if (j->w[k].c.nodes[i].nk != nk) {
				ta_table_warn(t, "no distributed view: communication op %zu has "
					      "%zu ranges on rank %lld, %zu on rank %lld", i + 1, nk,
					      (long long)j->w[0].rank, j->w[k].c.nodes[i].nk,
					      (long long)j->w[k].rank);
				return 0;
			}
		for (k = 0; k < j->n; k++)
			j->w[k].c.nodes[i].real = ta_xmalloc((nk + 1) * sizeof(struct tb_range));
		for (r = 0; r < nk; r++) {
			double min = 9223372036854775807.0;   /* sys.maxsize */

			for (k = 0; k < j->n; k++) {
				const struct tb_range *g = &j->w[k].c.nodes[i].k[r];

				if (g->b - g->a < min)
					min = g->b - g->a;
			}
			for (k = 0; k < j->n; k++) {
				const struct tb_range *g = &j->w[k].c.nodes[i].k[r];

				j->w[k].c.nodes[i].real[r] = (struct tb_range){ g->b - min, g->b };
			}
		}
	}
	return 1;
}

/* ---- the overlap chart (distributed.csv) ---- */

static const struct ta_col overlap_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "worker", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "step", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "computation_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "overlapping_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "communication_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "other_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

/* A step's name, or "" (NULL: the nodes in no step, Python's None). */
static void step_text(char *b, size_t n, int has, int64_t step)
{
	if (has)
		snprintf(b, n, "%lld", (long long)step);
	else
		*b = 0;
}

static size_t add_row(struct ta_table *t, const struct worker *w, const char *step)
{
	size_t row = ta_table_add_row(t);

	ta_table_set_int(t, row, 0, w->rank);
	ta_table_set_text(t, row, 1, w->name);
	if (*step)
		ta_table_set_text(t, row, 2, step);
	return row;
}

/* Python's int(): toward zero */
static double py_int(double x)
{
	return trunc(x);
}

/* the four bars of a step: computation and communication without the
 * overlap, the overlap, the rest */
static void bars(const double *o, double *v)
{
	v[0] = o[0] - o[1];
	v[1] = o[1];
	v[2] = o[2] - o[1];
	v[3] = o[3];
}

static void overlap_rows(const struct job *j, struct ta_table *t)
{
	size_t k, i, m, c;

	for (k = 0; k < j->n; k++) {   /* "all": each rank's steps' sums over their count */
		const struct tb_comm_rank *r = &j->w[k].c;
		double all[4] = { 0, 0, 0, 0 }, v[4];
		size_t row = add_row(t, &j->w[k], "all");

		for (i = 0; i < r->nsteps; i++) {
			bars(r->overlap[i], v);
			for (c = 0; c < 4; c++)
				all[c] += v[c];
		}
		for (c = 0; c < 4; c++)
			ta_table_set_real(t, row, 3 + c,
					  py_int(all[c] / (double)(r->nsteps ? r->nsteps : 1)));
	}
	/* the steps, in the order the ranks name them first */
	for (k = 0; k < j->n; k++)
		for (i = 0; i < j->w[k].c.nsteps; i++) {
			int64_t name = j->w[k].c.step_names[i];
			char step[32];
			size_t kk, ii;
			int seen = 0;

			for (kk = 0; kk < k && !seen; kk++)
				for (ii = 0; ii < j->w[kk].c.nsteps && !seen; ii++)
					seen = j->w[kk].c.step_names[ii] == name;
			for (ii = 0; ii < i && !seen; ii++)
				seen = j->w[k].c.step_names[ii] == name;
			if (seen)
				continue;
			step_text(step, sizeof(step), 1, name);
			for (kk = 0; kk < j->n; kk++) {
				/* a name twice (ProfilerStep's GPU copy): the chart is
				 * keyed by name, the last one shows */
				long last = -1;
				double v[4];
				size_t row;

				for (m = 0; m < j->w[kk].c.nsteps; m++)
					if (j->w[kk].c.step_names[m] == name)
						last = (long)m;
				if (last < 0)
					continue;
				row = add_row(t, &j->w[kk], step);
				bars(j->w[kk].c.overlap[last], v);
				for (c = 0; c < 4; c++)
					ta_table_set_real(t, row, 3 + c, v[c]);
			}
		}
}

/* ---- the wait chart and the ops table: analyze_communication_nodes ---- */

struct step_sum {
	int has;
	int64_t step;
	struct tb_range *k, *real;
	size_t nk, nreal, cap, capreal;
};

static void append(struct tb_range **v, size_t *n, size_t *cap, const struct tb_range *src,
		   size_t m)
{
	if (*n + m > *cap) {
		*cap = (*n + m) * 2;
		*v = ta_xrealloc(*v, *cap * sizeof(**v));
	}
	memcpy(*v + *n, src, m * sizeof(*src));
	*n += m;
}

/* A rank's nodes grouped by step, in the order the nodes name them. */
static struct step_sum *by_step(const struct tb_comm_rank *r, size_t *n)
{
	struct step_sum *s = ta_xcalloc(r->nnodes + 1, sizeof(*s));
	size_t i, g;

	*n = 0;
	for (i = 0; i < r->nnodes; i++) {
		const struct tb_comm_node *d = &r->nodes[i];

		for (g = 0; g < *n && !(s[g].has == d->has_step &&
					(!d->has_step || s[g].step == d->step)); g++)
			;
		if (g == *n) {
			s[g].has = d->has_step;
			s[g].step = d->step;
			(*n)++;
		}
		append(&s[g].k, &s[g].nk, &s[g].cap, d->k, d->nk);
		append(&s[g].real, &s[g].nreal, &s[g].capreal, d->real, d->nk);
	}
	return s;
}

static const struct ta_col wait_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "worker", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "step", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "transfer_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "synchronizing_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

static void wait_rows(const struct job *j, struct ta_table *t)
{
	struct step_sum **s = ta_xcalloc(j->n + 1, sizeof(*s));
	double (**v)[2] = ta_xcalloc(j->n + 1, sizeof(*v));
	size_t *ns = ta_xcalloc(j->n + 1, sizeof(*ns)), k, g, kk, gg;

	for (k = 0; k < j->n; k++) {
		double all[2] = { 0, 0 };
		size_t row;

		s[k] = by_step(&j->w[k].c, &ns[k]);
		v[k] = ta_xcalloc(ns[k] + 1, sizeof(**v));
		for (g = 0; g < ns[k]; g++) {
			double lat = tb_ranges_union(s[k][g].k, s[k][g].nk);
			double real = tb_ranges_union(s[k][g].real, s[k][g].nreal);

			v[k][g][0] = real;
			v[k][g][1] = lat - real;
			all[0] += v[k][g][0];
			all[1] += v[k][g][1];
		}
		row = add_row(t, &j->w[k], "all");
		ta_table_set_real(t, row, 3, py_int(all[0] / (double)(ns[k] ? ns[k] : 1)));
		ta_table_set_real(t, row, 4, py_int(all[1] / (double)(ns[k] ? ns[k] : 1)));
	}
	for (k = 0; k < j->n; k++)
		for (g = 0; g < ns[k]; g++) {
			char step[32];
			int seen = 0;

			for (kk = 0; kk <= k && !seen; kk++)
				for (gg = 0; gg < (kk < k ? ns[kk] : g) && !seen; gg++)
					seen = s[kk][gg].has == s[k][g].has &&
					       (!s[k][g].has || s[kk][gg].step == s[k][g].step);
			if (seen)
				continue;
			step_text(step, sizeof(step), s[k][g].has, s[k][g].step);
			for (kk = 0; kk < j->n; kk++)
				for (gg = 0; gg < ns[kk]; gg++)
					if (s[kk][gg].has == s[k][g].has &&
					    (!s[k][g].has || s[kk][gg].step == s[k][g].step)) {
						size_t row = add_row(t, &j->w[kk], step);

						ta_table_set_real(t, row, 3, v[kk][gg][0]);
						ta_table_set_real(t, row, 4, v[kk][gg][1]);
					}
		}
	for (k = 0; k < j->n; k++) {
		for (g = 0; g < ns[k]; g++) {
			free(s[k][g].k);
			free(s[k][g].real);
		}
		free(s[k]);
		free(v[k]);
	}
	free(s);
	free(v);
	free(ns);
}

static const struct ta_col ops_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "worker", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "size_bytes", TA_COL_REAL, TA_UNIT_BYTES, 0 },
	{ "avg_size_bytes", TA_COL_REAL, TA_UNIT_BYTES, 0 },
	{ "latency_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "avg_latency_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "transfer_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "avg_transfer_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

/* communication.py's six dtype strings; any other counts 0 bytes */
static int dtype_bytes(const char *s, size_t n)
{
	static const struct { const char *name; int bytes; } known[] = {
		{ "long int", 8 }, { "float", 4 }, { "int", 4 }, { "c10::Half", 2 },
		{ "c10::BFloat16", 2 }, { "unsigned char", 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(*known); i++)
		if (strlen(known[i].name) == n && memcmp(known[i].name, s, n) == 0)
			return known[i].bytes;
	return 0;
}

/* The next JSON string of a flat list of strings ("Input type"), at *p:
 * its text and length (no escapes in dtype names; one that has some
 * matches no known name either way). 0 at the list's end. */
static int next_string(const char **p, const char **s, size_t *n)
{
	const char *q = *p;

	while (*q && *q != '"' && *q != ']')
		q++;
	if (*q != '"')
		return 0;
	*s = ++q;
	while (*q && *q != '"') {
		if (*q == '\\' && q[1])
			q++;
		q++;
	}
	*n = (size_t)(q - *s);
	*p = *q ? q + 1 : q;
	return 1;
}

/* The node's bytes as the plugin sums them: per input, the product of
 * its dims times its dtype's size. -1: the plugin fails on it (a dim that
 * is not a number, fewer types than inputs). */
static double node_bytes(const struct tb_comm_node *d)
{
	const char *p = d->dims, *tp = d->types;
	double total = 0;

	if (!p)
		return 0;
	while (*p == ' ')
		p++;
	if (*p != '[')
		return -1;
	p++;
	for (;;) {   /* each input: [d0, d1, ...] */
		double prod = 1;
		const char *s;
		size_t n;
		int bytes;

		while (*p == ' ' || *p == ',')
			p++;
		if (*p == ']' || !*p)
			break;
		if (*p != '[')
			return -1;   /* a scalar input: Python iterates an int */
		p++;
		for (;;) {
			char *end;
			double v;

			while (*p == ' ' || *p == ',')
				p++;
			if (*p == ']') {
				p++;
				break;
			}
			v = strtod(p, &end);
			if (end == p || *p == '[')
				return -1;
			prod *= v;
			p = end;
		}
		if (!tp || !next_string(&tp, &s, &n))
			return -1;   /* input_type[i]: IndexError */
		bytes = dtype_bytes(s, n);
		total += prod * bytes;
	}
	return total;
}

static void ops_rows(const struct job *j, struct ta_table *t)
{
	size_t k, i, g;

	for (k = 0; k < j->n; k++) {
		const struct tb_comm_rank *r = &j->w[k].c;
		struct op_sum {
			const char *name;
			int64_t calls;
			double bytes;
			int bad;
			struct tb_range *k, *real;
			size_t nk, nreal, cap, capreal;
		} *s = ta_xcalloc(r->nnodes + 1, sizeof(*s));
		size_t n = 0;

		for (i = 0; i < r->nnodes; i++) {
			const struct tb_comm_node *d = &r->nodes[i];
			double b;

			for (g = 0; g < n && strcmp(s[g].name, d->name); g++)
				;
			if (g == n)
				s[n++].name = d->name;
			s[g].calls++;
			b = node_bytes(d);
			if (b < 0)
				s[g].bad = 1;
			else
				s[g].bytes += b;
			append(&s[g].k, &s[g].nk, &s[g].cap, d->k, d->nk);
			append(&s[g].real, &s[g].nreal, &s[g].capreal, d->real, d->nk);
		}
		for (g = 0; g < n; g++) {
			double lat = tb_ranges_union(s[g].k, s[g].nk);
			double real = tb_ranges_union(s[g].real, s[g].nreal);
			double calls = (double)s[g].calls;
			size_t row = ta_table_add_row(t);

			ta_table_set_int(t, row, 0, j->w[k].rank);
			ta_table_set_text(t, row, 1, j->w[k].name);
			ta_table_set_text(t, row, 2, s[g].name);
			ta_table_set_int(t, row, 3, s[g].calls);
			if (s[g].bad) {
				ta_table_warn(t, "rank %lld: %s: an input's dims or type the plugin "
					      "cannot read (it fails on this trace): bytes left empty",
					      (long long)j->w[k].rank, s[g].name);
			} else {
				ta_table_set_real(t, row, 4, s[g].bytes);
				ta_table_set_real(t, row, 5, nearbyint(s[g].bytes / calls));
			}
			ta_table_set_real(t, row, 6, lat);
			ta_table_set_real(t, row, 7, nearbyint(lat / calls));
			ta_table_set_real(t, row, 8, real);
			ta_table_set_real(t, row, 9, nearbyint(real / calls));
			free(s[g].k);
			free(s[g].real);
		}
		free(s);
	}
}

int ta_distributed_tb_run(sqlite3 *db, const struct ta_query *q, enum ta_dist_tb view,
			  struct ta_table **out, struct ta_error *err)
{
	struct job j;
	struct ta_table *t;

	*out = NULL;
	if (job_load(db, q, &j, err) < 0)
		return -1;
	if (view == TA_DIST_TB_OVERLAP)
		t = ta_table_new("Computation/Communication Overview (the TensorBoard plugin's "
				 "Distributed view)", overlap_cols,
				 sizeof(overlap_cols) / sizeof(*overlap_cols));
	else if (view == TA_DIST_TB_WAIT)
		t = ta_table_new("Synchronizing/Communication Overview (the TensorBoard plugin's "
				 "Distributed view)", wait_cols, sizeof(wait_cols) / sizeof(*wait_cols));
	else
		t = ta_table_new("Communication Operations Stats (the TensorBoard plugin's "
				 "Distributed view)", ops_cols, sizeof(ops_cols) / sizeof(*ops_cols));
	if (match_nodes(db, &j, t)) {
		say_unlinked(db, &j, t);
		if (view == TA_DIST_TB_OVERLAP)
			overlap_rows(&j, t);
		else if (view == TA_DIST_TB_WAIT)
			wait_rows(&j, t);
		else
			ops_rows(&j, t);
	} else {
		t->ranks_absent += (int)j.n;
	}
	job_free(&j);
	*out = t;
	return 0;
}
