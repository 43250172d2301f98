/* diagnose as a section of a plan (exec/plan.h), for the diagnose command
 * and report's page alike: on one database, the verdicts (or findings)
 * with the other table kept; on shards, shard by shard: each shard's
 * verdicts, from its events and every rank's collectives, and its
 * findings with them (one run, two tables); with the path, the critical
 * path walked over the shards (shard_critical.c) confirms them. Then what
 * only all rows tell: each late peer's own cause, and memory's findings
 * last (ta_diagnose_join). */
#include "commands/cli.h"
#include "ta_analyses.h"

static int summary_alone(const struct ta_diagnose_section *c, struct ta_error *err)
{
	if (!c->summary || c->findings)
		return 0;
	ta_error_set(err, TA_EXIT_USAGE, "--summary goes with --findings");
	return -1;
}

/* The table asked for, the other kept: the findings summed over the
 * steps with --summary, and for the text's sentences under the verdicts. */
static struct ta_table *pick(struct ta_diagnose_section *c, struct ta_table *verdicts,
			     struct ta_table *found)
{
	if (found && (c->summary || !c->findings))
		found = ta_findings_summary(found);
	return ta_cli_pick(verdicts, found, c->findings, &c->found);
}

int ta_diagnose_section_run(sqlite3 *db, const struct ta_query *q, void *ctx,
			    struct ta_table **out, struct ta_error *err)
{
	struct ta_diagnose_section *c = ctx;
	struct ta_table *verdicts, *found;

	if (summary_alone(c, err) < 0)
		return -1;
	if (c->findings)
		c->o.path = 0; /* the findings table does not show it */
	c->o.findings = c->want_findings;
	if (ta_diagnose_run(db, q, &c->o, &verdicts, &found, err) < 0)
		return -1;
	*out = pick(c, verdicts, found);
	return 0;
}

static int shard_tables(sqlite3 *db, const struct ta_query *q, void *ctx,
			struct ta_table **out, struct ta_error *err)
{
	const struct ta_diagnose_section *c = ctx;
	struct ta_diagnose_opts o = c->o;
	struct ta_table *found = NULL;

	if (summary_alone(c, err) < 0)
		return -1;
	o.path = 0;
	o.findings = c->want_findings;
	if (ta_diagnose_run(db, q, &o, out, &found, err) < 0)
		return -1;
	if (c->want_findings)
		(*out)->also = found;
	else
		ta_table_free(found);
	return 0;
}

static struct ta_table *join(struct ta_shards *sh, struct ta_table *t, void *ctx)
{
	struct ta_diagnose_section *c = ctx;
	struct ta_shard_critical sc = { ta_diagnose_path_opts, NULL, 0, 0 };
	struct ta_table *path = NULL, *items = NULL, *found = t->also;
	int ok = 1;

	t->also = NULL;
	if (c->o.path && !c->findings) {
		ok = ta_shards_critical(sh, &sc, &path, &items);
		if (ok)
			ta_diagnose_confirm(t, path);
		ta_table_free(path);
		ta_table_free(items);
	}
	if (!ok) {
		ta_table_free(t);
		ta_table_free(found);
		return NULL;
	}
	ta_diagnose_join(t, found);
	return pick(c, t, found);
}

const struct ta_shard_rule ta_shard_diagnose = { 1, 0, NULL, shard_tables, join };
