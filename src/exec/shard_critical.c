/* The critical path on a directory of shards (critical-path, and
 * diagnose's check of its verdicts): each shard walks its own steps; a
 * path that reaches a late member in another shard stops there, and in
 * the next round that shard goes on with it; once no path goes on, the
 * pieces add up to the rows one database gives. What travels between
 * shards is every shard's collectives (gathered once, "peers") and the
 * pieces, never the events. */
#include "commands/cli.h"
#include "ta_analyses.h"
#include "ta_intern.h"

#include <stdlib.h>

/* Every shard's collectives first: the walk needs the late members. */
static const struct ta_shard_rule with_peers = { 1, 0, NULL, NULL, NULL };

int ta_shard_critical_pieces(sqlite3 *db, const struct ta_query *q, void *ctx,
			     struct ta_table **out, struct ta_error *err)
{
	const struct ta_shard_critical *sc = ctx;

	return ta_critical_pieces(db, q, &sc->o, sc->req, sc->nreq, out, err);
}

static int by_rank(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The ranks the requests go to, sorted, each once. */
static size_t request_ranks(const struct ta_critical_request *req, size_t n,
			    int64_t *ranks)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		ranks[i] = req[i].rank;
	ta_qsort(ranks, n, sizeof(*ranks), by_rank);
	for (i = 0; i < n; i++)
		if (!k || ranks[k - 1] != ranks[i])
			ranks[k++] = ranks[i];
	return k;
}

int ta_shards_critical_rounds(struct ta_shards *sh, struct ta_table *first,
			      struct ta_shard_critical *sc, struct ta_table **path,
			      struct ta_table **items)
{
	struct ta_table **round = ta_xcalloc(1, sizeof(*round));
	struct ta_intern *seen = ta_intern_new();
	struct ta_error err = { 0, "", 0 };
	size_t n = 1, i;
	long nreq = 0;
	int ok = 1;

	*path = *items = NULL;
	round[0] = first;
	while (ok && (nreq = ta_critical_exits(round[n - 1], seen, &sc->req)) > 0) {
		int64_t *ranks = ta_xcalloc((size_t)nreq, sizeof(*ranks));
		size_t nr = request_ranks(sc->req, (size_t)nreq, ranks);

		sc->nreq = (size_t)nreq;
		round = ta_xrealloc(round, (n + 1) * sizeof(*round));
		ok = ta_shards_run_ranks(sh, &with_peers, ta_shard_critical_pieces, sc,
					 ranks, nr, &round[n]);
		n += ok;
		free(ranks);
		free(sc->req);
		sc->req = NULL;
		sc->nreq = 0;
	}
	/* nreq < 0: a path came back where it had been; the merged way
	 * says so */
	ok = ok && nreq == 0 && ta_critical_join(round, n, &sc->o, path, items, &err) == 0;
	sc->rounds = n;
	for (i = 0; i < n; i++)
		ta_table_free(round[i]);
	free(round);
	ta_intern_free(seen);
	return ok;
}

int ta_shards_critical(struct ta_shards *sh, struct ta_shard_critical *sc,
		       struct ta_table **path, struct ta_table **items)
{
	struct ta_table *first = NULL;

	*path = *items = NULL;
	sc->req = NULL;
	sc->nreq = 0;
	if (!ta_shards_run(sh, &with_peers, ta_shard_critical_pieces, sc, &first))
		return 0;
	return ta_shards_critical_rounds(sh, first, sc, path, items);
}
