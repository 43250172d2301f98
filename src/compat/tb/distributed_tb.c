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
#include "tb_map.h"

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
			     "is made of every rank at once (its communication ops matched across "
			     "ranks): leave --ranks out (without --tb-compat, --ranks picks rows)");
		return -1;
	}
	if (ta_db_prepare(db, "SELECT s.rank, i.path FROM sel_ranks s"
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
	struct tb_map seen, *last = ta_xcalloc(j->n + 1, sizeof(*last));
	size_t k, i, c, total = 0;

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
		/* a name twice (ProfilerStep's GPU copy): the chart is keyed
		 * by name, the last one shows */
		tb_map_init(&last[k], r->nsteps + 1);
		for (i = 0; i < r->nsteps; i++)
			*tb_map_at(&last[k], r->step_names[i]) = (long)i;
		total += r->nsteps;
	}
	/* the steps, in the order the ranks name them first */
	tb_map_init(&seen, total + 1);
	for (k = 0; k < j->n; k++)
		for (i = 0; i < j->w[k].c.nsteps; i++) {
			int64_t name = j->w[k].c.step_names[i];
			long *was = tb_map_at(&seen, name);
			char step[32];
			size_t kk;

			if (*was >= 0)
				continue;
			*was = 1;
			step_text(step, sizeof(step), 1, name);
			for (kk = 0; kk < j->n; kk++) {
				long m = *tb_map_at(&last[kk], name);
				double v[4];
				size_t row;

				if (m < 0)
					continue;
				row = add_row(t, &j->w[kk], step);
				bars(j->w[kk].c.overlap[m], v);
				for (c = 0; c < 4; c++)
					ta_table_set_real(t, row, 3 + c, v[c]);
			}
		}
	tb_map_free(&seen);
	for (k = 0; k < j->n; k++)
		tb_map_free(&last[k]);
	free(last);
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

/* a step's key: its name, TB_KEY_NONE for Python's None */
static int64_t step_key(int has, int64_t step)
{
	return has ? step : TB_KEY_NONE;
}

/* A rank's nodes grouped by step, in the order the nodes name them;
 * at: step key -> group. */
static struct step_sum *by_step(const struct tb_comm_rank *r, size_t *n, struct tb_map *at)
{
	struct step_sum *s = ta_xcalloc(r->nnodes + 1, sizeof(*s));
	size_t i, g;

	*n = 0;
	tb_map_init(at, r->nnodes + 1);
	for (i = 0; i < r->nnodes; i++) {
		const struct tb_comm_node *d = &r->nodes[i];
		long *slot = tb_map_at(at, step_key(d->has_step, d->step));

		if (*slot < 0) {
			g = (*n)++;
			*slot = (long)g;
			s[g].has = d->has_step;
			s[g].step = d->step;
		} else {
			g = (size_t)*slot;
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
	struct tb_map seen, *at = ta_xcalloc(j->n + 1, sizeof(*at));
	size_t *ns = ta_xcalloc(j->n + 1, sizeof(*ns)), k, g, kk, total = 0;

	for (k = 0; k < j->n; k++) {
		double all[2] = { 0, 0 };
		size_t row;

		s[k] = by_step(&j->w[k].c, &ns[k], &at[k]);
		total += ns[k];
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
	tb_map_init(&seen, total + 1);
	for (k = 0; k < j->n; k++)
		for (g = 0; g < ns[k]; g++) {
			int64_t key = step_key(s[k][g].has, s[k][g].step);
			long *was = tb_map_at(&seen, key);
			char step[32];

			if (*was >= 0)
				continue;
			*was = 1;
			step_text(step, sizeof(step), s[k][g].has, s[k][g].step);
			for (kk = 0; kk < j->n; kk++) {
				long gg = *tb_map_at(&at[kk], key);
				size_t row;

				if (gg < 0)
					continue;
				row = add_row(t, &j->w[kk], step);
				ta_table_set_real(t, row, 3, v[kk][gg][0]);
				ta_table_set_real(t, row, 4, v[kk][gg][1]);
			}
		}
	tb_map_free(&seen);
	for (k = 0; k < j->n; k++) {
		for (g = 0; g < ns[k]; g++) {
			free(s[k][g].k);
			free(s[k][g].real);
		}
		free(s[k]);
		free(v[k]);
		tb_map_free(&at[k]);
	}
	free(s);
	free(v);
	free(ns);
	free(at);
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

/* A cursor over JSON text as written ("Input Dims", "Input type"). */
static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* The string at p (at its quote): its text, length and the place after
 * it; NULL if unterminated. Escapes stay as written (no dtype name has one). */
static const char *json_string(const char *p, const char **s, size_t *n)
{
	const char *q = p + 1;

	while (*q && *q != '"')
		q += *q == '\\' && q[1] ? 2 : 1;
	if (*q != '"')
		return NULL;
	*s = p + 1;
	*n = (size_t)(q - *s);
	return q + 1;
}

/* The items of a list of strings ("Input type"): item i's text, or NULL
 * for an item that is no string. Returns the count, -1 if not a list. */
static long type_items(const char *p, const char ***txt, size_t **len)
{
	long n = 0, cap = 0;

	*txt = NULL;
	*len = NULL;
	p = ws(p);
	if (*p == '"') {   /* a string: Python indexes its characters, no dtype name */
		const char *x;
		size_t xl;

		if (!json_string(p, &x, &xl))
			return -1;
		*txt = ta_xcalloc(xl + 1, sizeof(**txt));
		*len = ta_xcalloc(xl + 1, sizeof(**len));
		return (long)xl;
	}
	if (*p != '[') {   /* a string the parser kept as its text: the same */
		char *end;
		size_t xl = strlen(p);

		strtod(p, &end);
		if (!xl || (end != p && !*ws(end)) || strcmp(p, "true") == 0 ||
		    strcmp(p, "false") == 0 || strcmp(p, "null") == 0)
			return -1;   /* a number or literal: no index */
		*txt = ta_xcalloc(xl + 1, sizeof(**txt));
		*len = ta_xcalloc(xl + 1, sizeof(**len));
		return (long)xl;
	}
	p = ws(p + 1);
	while (*p && *p != ']') {
		const char *s = NULL;
		size_t l = 0;

		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			*txt = ta_xrealloc(*txt, (size_t)cap * sizeof(**txt));
			*len = ta_xrealloc(*len, (size_t)cap * sizeof(**len));
		}
		if (*p == '"') {
			if (!(p = json_string(p, &s, &l)))
				return -1;
		} else {   /* not a string: skip it, brackets and strings counted */
			int depth = 0;

			for (; *p && (depth > 0 || (*p != ',' && *p != ']')); p++) {
				if (*p == '"') {
					const char *x;
					size_t xl;

					if (!(p = json_string(p, &x, &xl)))
						return -1;
					p--;
				} else {
					depth += (*p == '[' || *p == '{') - (*p == ']' || *p == '}');
				}
			}
		}
		(*txt)[n] = s;
		(*len)[n++] = l;
		p = ws(p);
		if (*p == ',')
			p = ws(p + 1);
	}
	return *p == ']' ? n : -1;
}

/* communication.py's bytes of a node: per input i of "Input Dims", the
 * product of its dims times the size of "Input type"[i]. 0 in *bytes and
 * 1 when the plugin reads it; 0 when it fails on it (a dim that is no
 * number, fewer types than inputs, an infinite size). */
static int node_bytes(const struct tb_comm_node *d, double *bytes)
{
	const char *p = d->dims, **txt = NULL;
	size_t *len = NULL;
	long ntypes, i = 0;
	int ok = 1;

	*bytes = 0;
	if (!p)
		return 1;   /* no Input Dims: None, skipped */
	p = ws(p);
	if (*p != '[')
		return 0;
	p = ws(p + 1);
	if (*p == ']')
		return 1;   /* [] is false: skipped */
	ntypes = d->types ? type_items(d->types, &txt, &len) : -1;
	while (ok && *p && *p != ']') {
		double prod = 1;

		if (i >= ntypes) {   /* input_type[i]: None or too short */
			ok = 0;
			break;
		}
		if (*p != '[') {   /* an int or None is no list to iterate */
			ok = 0;
			break;
		}
		p = ws(p + 1);
		while (*p && *p != ']') {
			char *end;
			double v;

			if (strncmp(p, "true", 4) == 0) {
				v = 1, end = (char *)p + 4;
			} else if (strncmp(p, "false", 5) == 0) {
				v = 0, end = (char *)p + 5;
			} else {
				v = strtod(p, &end);
				if (end == p || *p == '[' || *p == '"' || *p == 'n' ||
				    *p == 'N' || *p == 'I' || *p == 'i') {
					ok = 0;   /* a list, string or null: a TypeError */
					break;
				}
			}
			prod *= v;
			p = ws(end);
			if (*p == ',')
				p = ws(p + 1);
		}
		if (!ok || *p != ']')
			break;
		p = ws(p + 1);
		if (*p == ',')
			p = ws(p + 1);
		*bytes += prod * (txt[i] ? dtype_bytes(txt[i], len[i]) : 0);
		i++;
	}
	free(txt);
	free(len);
	if (ok && *p != ']')
		ok = 0;
	return ok && isfinite(*bytes);
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
			if (!node_bytes(d, &b))
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
		t->ranks_absent += j.n;
	}
	job_free(&j);
	*out = t;
	return 0;
}
