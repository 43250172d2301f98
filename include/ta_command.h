/* A command's declaration: its name and --help (options, the analysis
 * that answers it), how it spreads over a job's ranks and what
 * --hta-compat means to it. An analysis that is its own command declares
 * it in its own file (see temporal.c); src/commands/registry.c lists
 * them all; docs/ADDING.md says how to add one. */
#ifndef TA_COMMAND_H
#define TA_COMMAND_H

#include <sqlite3.h>

#include "ta_analyses.h"

/* A command's own option: key is what the handler receives. */
struct ta_opt {
	const char *name;
	int has_arg;
	int key;
	const char *arg;     /* placeholder in --help, NULL for a flag */
	const char *help;
};

typedef int (*ta_analysis_fn)(sqlite3 *db, const struct ta_query *q,
			      void *ctx, struct ta_table **out,
			      struct ta_error *err);

/* A command's one declaration: --help, --columns, the completions and the
 * man page's check all come from it (and from its analysis's columns). */
struct ta_cmd_info {
	const char *name;
	const char *args;    /* e.g. "[options] PATH" */
	const char *summary;
	const struct ta_opt *opts;   /* terminated by a NULL name; may be NULL */
	/* an option of opts (NULL: none); -1: its value is bad */
	int (*on_opt)(void *ctx, int key, const char *arg);
	void *ctx;
	/* text mode only: how people see the rows (src/report/people.c);
	 * NULL: as the analysis made them */
	void (*present)(struct ta_table *t, void *ctx);
	/* the analysis (NULL for ingest, report): its columns, for --help */
	ta_analysis_fn run;
};

/* How a command's work spreads over a job's ranks, given shards or a
 * directory of traces with -j 2 or more (shard_run.c); the merged way is
 * one database of every rank. */
enum ta_spread {
	TA_SPREAD_NONE,         /* reads no trace: ingest, cache, schema */
	TA_SPREAD_MERGED,       /* the merged way only */
	TA_SPREAD_PER_RANK,     /* each shard alone, its rows in rank order */
	TA_SPREAD_PEERS,        /* each shard with every shard's collectives */
	TA_SPREAD_JOINED,       /* each shard's part, joined (its rule) */
	TA_SPREAD_BY_OPTIONS    /* one of these, by its options: the
				 * after_parse its cmd_*.c gives ta_cli_main
				 * sets cli->shard_rule (none: merged) */
};

/* What --hta-compat means to a command: HTA's rules in the model (span,
 * time origin, selection: analyses follow them), its own implementation
 * of HTA's algorithm, or nothing (no HTA counterpart: refused, in one
 * place, with one message). */
enum ta_compat { TA_COMPAT_RULES, TA_COMPAT_OWN, TA_COMPAT_REFUSED };

struct ta_shard_rule;

struct ta_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	enum ta_spread spread;
	const struct ta_shard_rule *rule;   /* JOINED; PER_RANK, PEERS: NULL */
	int paths;                          /* PATHs it reads: 0, 1, 2 (diff) */
	enum ta_compat compat;
	/* fn NULL: the command is the analysis alone, run as info says
	 * (ta_cli_main) */
	const struct ta_cmd_info *info;
};

#endif
