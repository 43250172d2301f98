/* The critical path walked on shards, put together (ta_analyses.h): each
 * round's pieces say where their paths go on, and once no path goes on,
 * the pieces of each step add up, in the order walked, to the rows one
 * database gives (tests/shards.sh checks them byte for byte). A piece
 * carries every item, not only the top ones: the top is chosen over the
 * whole path. */
#include "critical_int.h"
#include "analyses/ranks/peers.h"
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
	INT("peer_wait_ns", 0), INT("on_peers_ns", 0), INT("kind", 0),
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 0 }, INT("ns", 0), INT("count", 0),
	INT("busy_ns", 0),
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

/* A row of some round's pieces, with the path it belongs to. */
struct ref {
	size_t path, round, row;
};

static int cmp_ref(const void *x, const void *y)
{
	const struct ref *a = x, *b = y;

	if (a->path != b->path)
		return a->path < b->path ? -1 : 1;
	if (a->round != b->round)
		return a->round < b->round ? -1 : 1;
	return a->row < b->row ? -1 : a->row > b->row;
}

/* Adds up one path's rows (in the order walked) and writes its row and
 * items. */
static int emit_path(struct ta_table *const *rounds, const struct ref *refs,
		      size_t n, const struct ta_critical_opts *o, struct ta_table *out,
		      struct ta_table *top)
{
	const struct ta_table *first = rounds[refs[0].round];
	size_t r0 = refs[0].row, i, c;
	struct acc acc;
	int64_t matched = 0;

	memset(&acc, 0, sizeof(acc));
	for (i = 0; i < n; i++) {
		const struct ta_table *t = rounds[refs[i].round];
		size_t r = refs[i].row;

		if (!null(t, r, P_KIND)) {
			cp_acc_item(&acc, (int)cell(t, r, P_KIND), ta_table_cell(t, r, P_NAME)->s,
				    cell(t, r, P_NS), cell(t, r, P_COUNT));
			continue;
		}
		matched += cell(t, r, P_MATCHED);
		for (c = 0; c < NCAT; c++)
			acc.cat[c] += cell(t, r, P_CAT + c);
	}
	cp_emit(out, top, o, &acc, matched, cell(first, r0, P_HOME),
		null(first, r0, P_STEP) ? -1 : cell(first, r0, P_STEP),
		cell(first, r0, P_LEN), null(first, r0, P_BUSY) ? 0 : cell(first, r0, P_BUSY),
		o->top);
	cp_acc_free(&acc);
	return matched > 0;
}

int ta_critical_join(struct ta_table *const *rounds, size_t n,
		     const struct ta_critical_opts *o, struct ta_table **out,
		     struct ta_table **top, struct ta_error *err)
{
	struct ta_intern *ids = ta_intern_new();  /* "home walk" -> path */
	struct ref *refs = NULL;
	size_t nrefs = 0, i, r, j, absent;
	int any = 0;

	*out = cp_path_table(o->what_kind != NULL);
	*top = cp_top_table();
	for (i = 0; i < n; i++) {
		refs = ta_xrealloc(refs, (nrefs + rounds[i]->nrows + 1) * sizeof(*refs));
		for (r = 0; r < rounds[i]->nrows; r++) {
			const struct ta_table *t = rounds[i];
			char key[64];
			int is_new;

			snprintf(key, sizeof(key), "%lld %lld", (long long)cell(t, r, P_HOME),
				 (long long)cell(t, r, P_WALK));
			refs[nrefs] = (struct ref){ (size_t)ta_intern(ids, key, strlen(key),
								      &is_new), i, r };
			/* a path starts in the first round, with its step's row */
			if (is_new && (i > 0 || !null(t, r, P_KIND) || null(t, r, P_LEN))) {
				ta_error_set(err, TA_EXIT_SYSTEM, "critical path: a piece of "
					     "no step (%s)", key);
				free(refs);
				ta_intern_free(ids);
				ta_table_free(*out);
				ta_table_free(*top);
				*out = *top = NULL;
				return -1;
			}
			nrefs++;
		}
	}
	/* each path's rows together, in the order walked; the paths in the
	 * order of the first round (by rank, then step); one path's items at
	 * a time (thousands of paths, each with its own table of items) */
	ta_qsort(refs, nrefs, sizeof(*refs), cmp_ref);
	for (i = 0; i < nrefs; i = j) {
		for (j = i + 1; j < nrefs && refs[j].path == refs[i].path; j++)
			;
		any |= emit_path(rounds, refs + i, j - i, o, *out, *top);
	}
	cp_what_if_check(*out, o, any);
	for (i = 0, absent = 0; i < n; i++)
		if (rounds[i]->ranks_absent > absent)
			absent = rounds[i]->ranks_absent;
	ta_peers_warn_absent_n(*out, absent, ABSENT_WAIT);
	cp_absent_waits(*out);
	free(refs);
	ta_intern_free(ids);
	return 0;
}
