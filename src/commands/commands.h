/* The commands: one function each, and the registry (registry.c) main.c
 * dispatches from. */
#ifndef TA_COMMANDS_H
#define TA_COMMANDS_H

int cmd_temporal(int argc, char **argv);
int cmd_idle(int argc, char **argv);
int cmd_kernels(int argc, char **argv);
int cmd_overlap(int argc, char **argv);
int cmd_launch(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_membw(int argc, char **argv);
int cmd_annotations(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_stragglers(int argc, char **argv);
int cmd_critical(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_memory(int argc, char **argv);
int cmd_steps(int argc, char **argv);
int cmd_counters(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_schema(int argc, char **argv);

/* How a command's work spreads over a job's ranks, given shards or a
 * directory of traces with -j 2 or more (shard_run.c); the merged way is
 * one database of every rank. */
enum ta_spread {
	TA_SPREAD_NONE,         /* reads no trace: ingest, cache, schema */
	TA_SPREAD_MERGED,       /* the merged way only */
	TA_SPREAD_PER_RANK,     /* each shard alone, its rows in rank order */
	TA_SPREAD_PEERS,        /* each shard with every shard's collectives */
	TA_SPREAD_JOINED,       /* each shard's part, joined (its rule) */
	TA_SPREAD_BY_OPTIONS    /* one of these, by its options (its after_parse
				 * sets cli->shard_rule; none: merged) */
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
	const struct ta_shard_rule *rule;   /* PER_RANK, PEERS, JOINED */
	int paths;                          /* PATHs it reads: 0, 1, 2 (diff) */
	enum ta_compat compat;
};

/* The registry (registry.c), ended by a NULL name. */
extern const struct ta_command ta_commands[];
const struct ta_command *ta_command_find(const char *name);
const char *ta_spread_name(enum ta_spread s);
/* -1 (said) when --hta-compat is given to a command that refuses it. */
int ta_command_compat_check(const char *name, int hta_compat);

#endif
