/* The critical path walked on shards, put together (ta_analyses.h): each
 * round's pieces say where their paths go on, and once no path goes on,
 * the pieces of each step add up, in the order walked, to the rows one
 * database gives (tests/shards.sh checks them byte for byte). A piece
 * carries every item, not only the top ones: the top is chosen over the
 * whole path. */
#include "critical_int.h"
#include "ta_table.h"

#include <stdlib.h>
#include <string.h>

/* In enum piece_col's order. */
#define INT(name, key) { name, TA_COL_INT, TA_UNIT_NONE, key }
static const struct ta_col piece_cols[P_NCOLS] = {
	INT("home", 1), INT("walk", 1), INT("step", 0), INT("len_ns", 0),
	INT("start_ns", 0), INT("exit_rank", 0), INT("exit_ts", 0),
	INT("matched_ns", 0), INT("cpu_ns", 0), INT("launch_ns", 0),
	INT("kernel_compute_ns", 0), INT("kernel_comm_ns", 0),
	INT("kernel_memory_ns", 0), INT("gap_ns", 0), INT("sync_ns", 0),
	INT("peer_wait_ns", 0), INT("kind", 0),
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 0 }, INT("ns", 0), INT("count", 0),
};
#undef INT

struct ta_table *cp_piece_table(void)
{
	return ta_table_new("Critical path pieces", piece_cols, P_NCOLS);
}

static int64_t cell(const struct ta_table *t, size_t r, size_t c)
{
	return ta_table_cell(t, r, c)->i;
}

static int null(const struct ta_table *t, size_t r, size_t c)
{
	return ta_table_cell(t, r, c)->null;
}

long ta_critical_exits(const struct ta_table *pieces, struct ta_intern *seen,
		       struct ta_critical_request **req)
{
	size_t r, n = 0;

	*req = NULL;
	for (r = 0; r < pieces->nrows; r++) {
		char key[96];
		int is_new;

		if (!null(pieces, r, P_KIND) || null(pieces, r, P_EXIT_RANK))
			continue;
		*req = ta_xrealloc(*req, (n + 1) * sizeof(**req));
		(*req)[n] = (struct ta_critical_request){ cell(pieces, r, P_HOME),
			cell(pieces, r, P_WALK), cell(pieces, r, P_START),
			cell(pieces, r, P_EXIT_RANK), cell(pieces, r, P_EXIT_TS) };
		/* a path back where it has been would go round for ever */
		snprintf(key, sizeof(key), "%lld %lld %lld %lld",
			 (long long)(*req)[n].home, (long long)(*req)[n].walk,
			 (long long)(*req)[n].rank, (long long)(*req)[n].ts);
		ta_intern(seen, key, strlen(key), &is_new);
		if (!is_new) {
			free(*req);
			*req = NULL;
			return -1;
		}
		n++;
	}
	return (long)n;
}

/* One step's path: its pieces added up. */
struct path {
	int64_t home, walk, step, len, matched;
	struct acc acc;
};

int ta_critical_join(struct ta_table *const *rounds, size_t n,
		     const struct ta_critical_opts *o, struct ta_table **out,
		     struct ta_table **top, struct ta_error *err)
{
	struct ta_intern *ids = ta_intern_new();  /* "home walk" -> path */
	struct path *p = NULL;
	size_t np = 0, i, r, c;
	int64_t cur = 0;

	*out = cp_path_table(o->what_kind != NULL);
	*top = cp_top_table();
	for (i = 0; i < n; i++)
		for (r = 0; r < rounds[i]->nrows; r++) {
			const struct ta_table *t = rounds[i];
			char key[64];
			int is_new;

			snprintf(key, sizeof(key), "%lld %lld", (long long)cell(t, r, P_HOME),
				 (long long)cell(t, r, P_WALK));
			cur = ta_intern(ids, key, strlen(key), &is_new);
			if (is_new) {
				if (!null(t, r, P_KIND) || null(t, r, P_LEN)) {
					ta_error_set(err, TA_EXIT_SYSTEM, "critical path: "
						     "a piece of no step (%s)", key);
					goto fail;
				}
				p = ta_xrealloc(p, (size_t)cur * sizeof(*p));
				memset(&p[cur - 1], 0, sizeof(*p));
				p[cur - 1].home = cell(t, r, P_HOME);
				p[cur - 1].walk = cell(t, r, P_WALK);
				p[cur - 1].step = null(t, r, P_STEP) ? -1 : cell(t, r, P_STEP);
				p[cur - 1].len = cell(t, r, P_LEN);
				np = (size_t)cur;
			}
			struct path *x = &p[cur - 1];

			if (!null(t, r, P_KIND)) {
				cp_acc_item(&x->acc, (int)cell(t, r, P_KIND),
					    ta_table_cell(t, r, P_NAME)->s, cell(t, r, P_NS),
					    cell(t, r, P_COUNT));
				continue;
			}
			x->matched += cell(t, r, P_MATCHED);
			for (c = 0; c < NCAT; c++)
				x->acc.cat[c] += cell(t, r, P_CAT + c);
		}
	/* in the order of the first round: by rank, then step */
	for (i = 0; i < np; i++)
		cp_emit(*out, *top, o, &p[i].acc, p[i].matched, p[i].home, p[i].step,
			p[i].len, o->top);
	for (i = 0; i < np; i++)
		cp_acc_free(&p[i].acc);
	free(p);
	ta_intern_free(ids);
	return 0;
fail:
	for (i = 0; i < np; i++)
		cp_acc_free(&p[i].acc);
	free(p);
	ta_intern_free(ids);
	ta_table_free(*out);
	ta_table_free(*top);
	*out = *top = NULL;
	return -1;
}
