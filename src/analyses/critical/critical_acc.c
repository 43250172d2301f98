/* A critical path's parts and items, and its rows (critical_int.h): one
 * way to write them, for the walk over one database and for the join of
 * pieces walked on shards. */
#include "critical_int.h"
#include "ta_table.h"

#include <stdlib.h>
#include <string.h>

const char *const ta_critical_parts[NCAT + 1] = { "cpu", "launch",
	"kernel_compute", "kernel_comm", "kernel_memory", "gap", "sync",
	"peer_wait", "on_peers", NULL };

static const struct ta_col path_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "path_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "cpu_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "launch_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "kernel_compute_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "kernel_comm_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "kernel_memory_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "gap_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "sync_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "peer_wait_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "on_peers_us", TA_COL_REAL, TA_UNIT_US, 0 },     /* not a part */
	{ "predicted_us", TA_COL_REAL, TA_UNIT_US, 0 },   /* --what-if only */
};

static const struct ta_col top_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "kind", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "path_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "count", TA_COL_INT, TA_UNIT_NONE, 0 },
};

struct ta_table *cp_path_table(int with_what)
{
	return ta_table_new("Critical path per step", path_cols,
			    with_what ? 4 + NCAT : 3 + NCAT);
}

struct ta_table *cp_top_table(void)
{
	struct ta_table *t = ta_table_new("On the critical path, by time", top_cols, 6);

	ta_table_set_values(t, 2, ta_critical_parts);
	return t;
}

void cp_acc_item(struct acc *a, int kind, const char *name, int64_t ns,
		 int64_t count)
{
	char digits[16];
	size_t nd = 0;
	unsigned k = kind < 0 ? 0u - (unsigned)kind : (unsigned)kind;
	struct item *it;
	int64_t id;
	int is_new;

	if (!a->keys)
		a->keys = ta_intern_new();
	/* a Python frame's object address differs from run to run: named
	 * as diagnose names it (helper-54) */
	if (strstr(name, " at 0x")) {
		ta_buf_reset(&a->plain);
		ta_buf_adds(&a->plain, name);
		name = ta_no_addresses(a->plain.s);
	}
	/* "%d\x1f%s" by hand, into a buffer kept: printf's was a tenth of
	 * the critical path on a DDP rank (an item a path segment) */
	do
		digits[nd++] = (char)('0' + k % 10);
	while ((k /= 10) > 0);
	ta_buf_reset(&a->key);
	if (kind < 0)
		ta_buf_addc(&a->key, '-');
	while (nd > 0)
		ta_buf_addc(&a->key, digits[--nd]);
	ta_buf_addc(&a->key, '\x1f');
	ta_buf_adds(&a->key, name);
	id = ta_intern(a->keys, a->key.s, a->key.len, &is_new);
	if (is_new) {
		a->items = ta_xrealloc(a->items, (size_t)id * sizeof(*a->items));
		a->items[id - 1] = (struct item){ kind, ta_xstrdup(name), 0, 0 };
		a->n = (size_t)id;
	}
	it = &a->items[id - 1];
	it->ns += ns;
	it->count += count;
}

void cp_acc_free(struct acc *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->items[i].name);
	free(a->items);
	ta_intern_free(a->keys);
	ta_buf_free(&a->key);
	ta_buf_free(&a->plain);
	memset(a, 0, sizeof(*a));
}

void cp_acc_reset(struct acc *a)
{
	cp_acc_free(a);
	a->keys = ta_intern_new();
}

/* Most time first; a tie by name. */
static int cmp_item(const void *x, const void *y)
{
	const struct item *a = x, *b = y;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

void cp_emit(struct ta_table *t, struct ta_table *top,
	     const struct ta_critical_opts *o, struct acc *a, int64_t matched,
	     int64_t rank, int64_t step, int64_t len, int64_t busy, size_t ntop)
{
	size_t r = ta_table_add_row(t), c, i;
	double predicted = (double)len - (1 - (o->what_kind ? o->what_factor : 1)) *
			   (double)matched;

	ta_table_set_int(t, r, 0, rank);
	if (step >= 0)
		ta_table_set_int(t, r, 1, step);
	ta_table_set_real(t, r, 2, (double)len / 1e3);
	for (c = 0; c < NCAT; c++)
		ta_table_set_real(t, r, 3 + c, (double)a->cat[c] / 1e3);
	/* first order: the path itself, shortened; but no shorter than the
	 * GPU's own work in the step where no kernel was made shorter
	 * (host items at 0 predicted an eager ResNet's step 4.1 ms under its
	 * 4.9 ms of kernels) */
	if (o->what_kind && strncmp(o->what_kind, "kernel", 6) != 0 &&
	    predicted < (double)busy)
		predicted = (double)busy;
	if (t->ncols > 3 + NCAT)
		ta_table_set_real(t, r, 3 + NCAT, predicted / 1e3);
	ta_qsort(a->items, a->n, sizeof(*a->items), cmp_item);
	for (i = 0; i < a->n && i < ntop; i++) {
		size_t q = ta_table_add_row(top);

		ta_table_set_int(top, q, 0, rank);
		if (step >= 0)
			ta_table_set_int(top, q, 1, step);
		ta_table_set_text(top, q, 2, ta_critical_parts[a->items[i].kind]);
		ta_table_set_text(top, q, 3, a->items[i].name);
		ta_table_set_real(top, q, 4, (double)a->items[i].ns / 1e3);
		ta_table_set_int(top, q, 5, a->items[i].count);
	}
}

void cp_absent_waits(struct ta_table *t)
{
	long c = ta_table_col(t, "peer_wait_us");
	size_t r;

	for (r = 0; t->ranks_absent && c >= 0 && r < t->nrows; r++)
		ta_table_set_null(t, r, (size_t)c);
}

void cp_what_if_check(struct ta_table *t, const struct ta_critical_opts *o, int any)
{
	if (o->what_kind && !any && t->nrows > 0)
		/* helper-61's preprocessing in a ThreadPoolExecutor: read as
		 * costing nothing, where the trace held none of it */
		ta_table_warn(t, "--what-if '%s:%s' matches nothing on any step's "
			      "critical path: its prediction is the path itself "
			      "(--top lists what lies on it%s)", o->what_kind, o->what_glob,
			      strcmp(o->what_kind, "cpu") == 0 ?
			      "; what ran on a thread the profiler does not follow, "
			      "a ThreadPoolExecutor's, is not in the trace at all" : "");
}
