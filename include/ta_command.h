/* A command's declaration: its name and --help (options, the analysis
 * that answers it), how it spreads over a job's ranks and what
 * --hta-compat means to it. An analysis that is its own command declares
 * it in its own file (see temporal.c); src/commands/registry.c lists
 * them all; docs/ADDING.md says how to add one. */
#ifndef TA_COMMAND_H
#define TA_COMMAND_H

#include <stddef.h>

#include <sqlite3.h>

#include "ta_analyses.h"

/* An option, bound where its value goes: a field of the command's ctx
 * (or, for the common options, of struct ta_cli), by offsetof, so that one
 * row declares it, as git's parse-options does. What the value must be
 * follows from its kind; TA_OPT_CALL leaves it to the command's on_opt. */
enum ta_opt_kind {
	TA_OPT_SET,     /* a flag: the field (an int) := val */
	TA_OPT_COUNT,   /* a whole number in [lo, hi] (int, long or int64_t) */
	TA_OPT_REAL,    /* a number in [lo, hi] (a double) */
	TA_OPT_US,      /* a non-negative number of µs, kept in ns (int64_t) */
	TA_OPT_STRING,  /* the argument itself (const char *) */
	TA_OPT_CHOICE,  /* one of choices ("a|b|c"): its place in them (int) */
	TA_OPT_CALL     /* on_opt(ctx, key, arg) decides */
};

struct ta_opt {
	const char *name;
	const char *arg;     /* placeholder in --help, NULL for a flag */
	const char *help;
	enum ta_opt_kind kind;
	size_t off, size;    /* the field: offsetof and sizeof */
	double lo, hi;       /* COUNT, REAL: the range; SET: lo is the value */
	const char *choices; /* CHOICE */
	int key;             /* CALL: what on_opt receives */
};

#define TA_OPT_AT(T, f) offsetof(T, f), sizeof(((T *)0)->f)
/* --NAME sets T's field f to value (TA_FLAG: 1, TA_CLEAR: 0) */
#define TA_SET(name, T, f, value, help) \
	{ name, NULL, help, TA_OPT_SET, TA_OPT_AT(T, f), value, 0, NULL, 0 }
#define TA_FLAG(name, T, f, help) TA_SET(name, T, f, 1, help)
#define TA_CLEAR(name, T, f, help) TA_SET(name, T, f, 0, help)
#define TA_COUNT(name, arg, T, f, lo, hi, help) \
	{ name, arg, help, TA_OPT_COUNT, TA_OPT_AT(T, f), lo, hi, NULL, 0 }
#define TA_REAL(name, arg, T, f, lo, hi, help) \
	{ name, arg, help, TA_OPT_REAL, TA_OPT_AT(T, f), lo, hi, NULL, 0 }
/* lo: the least µs taken (0.001: more than nothing) */
#define TA_US(name, arg, T, f, lo, help) \
	{ name, arg, help, TA_OPT_US, TA_OPT_AT(T, f), lo, 1e12, NULL, 0 }
#define TA_STRING(name, arg, T, f, help) \
	{ name, arg, help, TA_OPT_STRING, TA_OPT_AT(T, f), 0, 0, NULL, 0 }
#define TA_CHOICE(name, arg, T, f, choices, help) \
	{ name, arg, help, TA_OPT_CHOICE, TA_OPT_AT(T, f), 0, 0, choices, 0 }
/* on_opt(ctx, key, arg) decides (arg NULL: a flag) */
#define TA_CALL(name, arg, key, help) \
	{ name, arg, help, TA_OPT_CALL, 0, 0, 0, 0, NULL, key }
#define TA_OPT_END { NULL, NULL, NULL, TA_OPT_SET, 0, 0, 0, 0, NULL, 0 }

/* Applies o to the struct at base, the value arg: 0, or -1 if arg is not
 * a value o takes (on_opt: for TA_OPT_CALL). */
int ta_opt_apply(const struct ta_opt *o, void *base, const char *arg,
		 int (*on_opt)(void *ctx, int key, const char *arg));

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
	/* options read in one mode only (names, space-separated), e.g.
	 * { [TA_MODE_HTA] = "graph" }: given in another, a usage error, said
	 * in one place (cli.c) before any input is read */
	const char *mode_only[TA_NMODES];
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

/* What a mode other than ours (--hta-compat, enum ta_mode) means to a
 * command: nothing (no counterpart: refused, in one place, with one
 * message: the value a mode the command does not name gets), that mode's
 * rules in the model (span, time origin, selection: analyses follow
 * them), or the command's own implementation of that tool's algorithm. */
enum ta_compat { TA_COMPAT_REFUSED, TA_COMPAT_RULES, TA_COMPAT_OWN };

struct ta_shard_rule;

struct ta_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	enum ta_spread spread;
	const struct ta_shard_rule *rule;   /* JOINED; PER_RANK, PEERS: NULL */
	int paths;                          /* PATHs it reads: 0, 1, 2 (diff) */
	/* per mode, e.g. { [TA_MODE_HTA] = TA_COMPAT_RULES }; TA_MODE_OWN
	 * always runs */
	enum ta_compat compat[TA_NMODES];
	/* fn NULL: the command is the analysis alone, run as info says
	 * (ta_cli_main) */
	const struct ta_cmd_info *info;
};

#endif
