/* The commands, in one table: each one's name, entry point, summary for
 * --help, how it spreads over ranks and what --hta-compat means to it. main.c dispatches from it, the
 * shard runner takes its rule from it, and --list-commands prints it for
 * the completion and the tests. Adding a command: a row here, its
 * cmd_*.c, its man page entry. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

const struct ta_command ta_commands[] = {
	{ "report", cmd_report, "the core analyses together: temporal, idle, kernel types, overlap",
	  TA_SPREAD_BY_OPTIONS, NULL, 1, TA_COMPAT_RULES },
	{ "temporal", cmd_temporal, "idle, compute and non-compute GPU time per rank",
	  TA_SPREAD_PER_RANK, &ta_shard_per_rank, 1, TA_COMPAT_RULES },
	{ "idle", cmd_idle, "idle time per stream: host wait, kernel wait, other",
	  TA_SPREAD_PER_RANK, &ta_shard_per_rank, 1, TA_COMPAT_RULES },
	{ "kernels", cmd_kernels, "GPU time per kernel or kernel type",
	  TA_SPREAD_BY_OPTIONS, NULL, 1, TA_COMPAT_RULES },
	{ "overlap", cmd_overlap, "communication hidden under computation",
	  TA_SPREAD_PEERS, &ta_shard_with_peers, 1, TA_COMPAT_RULES },
	{ "launch", cmd_launch, "launch statistics: CPU time, GPU time, launch delay",
	  TA_SPREAD_BY_OPTIONS, NULL, 1, TA_COMPAT_RULES },
	{ "queue", cmd_queue, "launch queue length per stream",
	  TA_SPREAD_BY_OPTIONS, NULL, 1, TA_COMPAT_RULES },
	{ "membw", cmd_membw, "memory bandwidth per copy kind",
	  TA_SPREAD_BY_OPTIONS, NULL, 1, TA_COMPAT_RULES },
	{ "annotations", cmd_annotations, "time per record_function annotation",
	  TA_SPREAD_BY_OPTIONS, NULL, 1, TA_COMPAT_RULES },
	{ "ops", cmd_ops, "the profiler's key_averages table, per rank",
	  TA_SPREAD_PER_RANK, &ta_shard_per_rank, 1, TA_COMPAT_REFUSED },
	{ "diagnose", cmd_diagnose, "per step: what bounds it, and what to fix",
	  TA_SPREAD_BY_OPTIONS, NULL, 1, TA_COMPAT_REFUSED },
	{ "stragglers", cmd_stragglers, "across ranks: who the others wait for, how long, and why",
	  TA_SPREAD_JOINED, &ta_shard_stragglers, 1, TA_COMPAT_REFUSED },
	{ "critical-path", cmd_critical, "per step: the chain of work the step waited on, and what it is",
	  TA_SPREAD_BY_OPTIONS, NULL, 1, TA_COMPAT_OWN },
	{ "diff", cmd_diff, "two runs: what changed, per name and per step",
	  TA_SPREAD_MERGED, NULL, 2, TA_COMPAT_OWN },
	{ "counters", cmd_counters, "CUPTI hardware counters per kernel, with the op that launched it",
	  TA_SPREAD_PER_RANK, &ta_shard_per_rank, 1, TA_COMPAT_REFUSED },
	{ "steps", cmd_steps, "the profiler steps: their ranges, windows, and which are kept",
	  TA_SPREAD_PER_RANK, &ta_shard_per_rank, 1, TA_COMPAT_RULES },
	{ "memory", cmd_memory, "allocated memory per step: peak, growth, and who allocated it",
	  TA_SPREAD_PER_RANK, &ta_shard_per_rank, 1, TA_COMPAT_REFUSED },
	{ "ingest", cmd_ingest, "parse traces into a database for later commands",
	  TA_SPREAD_NONE, NULL, 0, TA_COMPAT_RULES },
	{ "cache", cmd_cache, "list, prune or clear the cache of parsed traces",
	  TA_SPREAD_NONE, NULL, 0, TA_COMPAT_RULES },
	{ "schema", cmd_schema, "print the database schema",
	  TA_SPREAD_NONE, NULL, 0, TA_COMPAT_RULES },
	{ NULL, NULL, NULL, TA_SPREAD_NONE, NULL, 0, TA_COMPAT_RULES },
};

const struct ta_command *ta_command_find(const char *name)
{
	const struct ta_command *c;

	for (c = ta_commands; name && c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

int ta_command_compat_check(const char *name, int hta_compat)
{
	const struct ta_command *c = ta_command_find(name);

	if (!hta_compat || !c || c->compat != TA_COMPAT_REFUSED)
		return 0;
	fprintf(stderr, "traceanalyze: %s has no HTA counterpart: --hta-compat does "
		"not apply (see DIFFERENCES FROM HTA in traceanalyze(1))\n", name);
	return -1;
}

const char *ta_spread_name(enum ta_spread s)
{
	static const char *const names[] = { "none", "merged", "per-rank", "peers",
		"joined", "by-options" };

	return names[s];
}
