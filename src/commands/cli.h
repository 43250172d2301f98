/* Options every analysis command shares, and the run-and-report glue. */
#ifndef TA_CLI_H
#define TA_CLI_H

#include <sqlite3.h>

#include "ta_analyses.h"
#include "ta_ingest.h"
#include "ta_gate.h"
#include "ta_report.h"
#include "ta_command.h"

/* How a command's rows come from a directory of shards, each analysed on
 * its own (shard_run.c). */
struct ta_shards;
struct ta_shard_rule {
	int peers;        /* needs every shard's collectives (model: coll) */
	int same_notes;   /* its notes are about all ranks: said once */
	/* what only all rows tell: the table made whole (t or a new one);
	 * ctx: the analysis' */
	struct ta_table *(*join)(struct ta_table *t, void *ctx);
	/* what each shard runs instead of the command's analysis, or NULL */
	ta_analysis_fn fn;
	/* rounds after the first, on some shards again (a path that goes on
	 * in another rank: critical-path): the table made whole from the
	 * first round's (freed), NULL to go the merged way */
	struct ta_table *(*rounds)(struct ta_shards *sh, struct ta_table *first,
				   void *ctx);
};

/* A command whose rows for a rank come from that rank's events alone;
 * and one that needs every rank's collectives too. */
extern const struct ta_shard_rule ta_shard_per_rank, ta_shard_with_peers, ta_shard_stragglers,
	ta_shard_comms;
/* kernels --by type: each shard's time per type, added up */
extern const struct ta_shard_rule ta_shard_kernel_types;

struct ta_cli {
	enum ta_format format;
	struct ta_query query;
	struct ta_ingest_opts ingest;
	const char *output;  /* -o FILE, NULL: stdout */
	const char **gates;  /* --fail-if expressions */
	size_t ngates;
	const char *baseline;
	struct ta_increase *increases;
	size_t nincreases;
	int fail_on_new;     /* --fail-on-new: a row not in the baseline trips */
	int missing_pass;    /* --missing pass: a gate on a missing value passes */
	int allow_truncated; /* --allow-truncated: gate a damaged trace anyway */
	const char *run;     /* --run: a log directory's run */
	long span;           /* --span: a worker's span, from 1; 0: the last */
	const struct ta_cmd_info *cmd;
	int columns;         /* --columns: list them and exit */
	char **args;         /* positional arguments */
	int nargs;
	/* inputs named by options (report --snapshot, memory --trace, diff's
	 * BASE): no output may be written over them either */
	const char *more_inputs[4];
	int nmore;
	int64_t *ranks_buf;
	/* set by a command whose rule depends on its options (else by name,
	 * shard_run.c) */
	const struct ta_shard_rule *shard_rule;
};

/* 0: parsed; 1: --help printed; -1: usage error printed. */
int ta_cli_parse(int argc, char **argv, const struct ta_cmd_info *cmd,
		 struct ta_cli *cli);
void ta_cli_usage(FILE *out, const struct ta_cmd_info *cmd);
/* An input named by an option (at most 4; more are ignored). */
void ta_cli_add_input(struct ta_cli *cli, const char *path);
/* Whether writing path would write over an input of cli: a trace or
 * shard of its paths, a database, its baseline, an input of an option. */
int ta_cli_is_input(const struct ta_cli *cli, const char *path);
void ta_cli_free(struct ta_cli *cli);


/* Parses "all" or "0,2,5-7"; -1 on a bad list. */
int ta_cli_parse_ranks(const char *s, int64_t **ranks, size_t *n);


/* Opens PATH, runs the analysis, writes the table; returns an exit code. */
int ta_cli_run(const struct ta_cli *cli, ta_analysis_fn fn, void *ctx);

/* The whole of an analysis command: parse, run, report; an exit code.
 * after_parse (may be NULL) sees the parsed options before the run, and
 * may adjust them. */
int ta_cli_main(int argc, char **argv, const struct ta_cmd_info *info,
		ta_analysis_fn fn, void *ctx, void (*after_parse)(void *ctx,
		struct ta_cli *cli));
/* A whole number in [0, max]; -1 if it is not one. */
int ta_cli_parse_count(const char *arg, long max, long *v);
/* A number in [lo, hi]; -1 if it is not one (NaN never is). */
int ta_cli_parse_real(const char *arg, double lo, double hi, double *v);
/* A non-negative number of µs to ns; -1 if it is not one. */
int ta_cli_parse_us(const char *arg, int64_t *ns);

/* Of an analysis' two tables, the one asked for: second if want_second
 * (first freed, nothing kept), else first, with second kept in *kept for
 * the text's sentences; what *kept held before is freed. */
struct ta_table *ta_cli_pick(struct ta_table *first, struct ta_table *second,
			     int want_second, struct ta_table **kept);

/* -o FILE is never an input; replaces (ingest, which renames over it):
 * it must also be a regular file or a new name. -1 with err set. */
int ta_cli_check_output(const struct ta_cli *cli, int replaces,
			struct ta_error *err);
/* -o FILE or stdout; NULL (error printed) if FILE cannot be opened. */
FILE *ta_cli_output_open(const struct ta_cli *cli);
/* Flushes and closes out, then prints the tables' notes on stderr in text
 * mode; an exit code. */
int ta_cli_output_close(const struct ta_cli *cli, FILE *out,
			struct ta_table *const *t, size_t n);

/* Prints "traceanalyze: <msg>" and returns err->code. */
int ta_cli_error(const struct ta_error *err);

/* Flushes stdout and checks for write errors; a closed pipe is quiet. */
int ta_cli_finish_output(FILE *out, const char *name);

/* A command on a directory of shards (or of traces, with -j 2 or more:
 * each file a shard), run shard by shard by a rule (shard_run.c; the
 * executor, exec/plan.c, decides when): open gives NULL when they do not
 * apply; run 1 with the table in *out, 0 when the merged database must
 * answer; close says parsing's warnings if used. */
struct ta_shards *ta_shards_open(const struct ta_cli *cli);
int ta_shards_run(struct ta_shards *sh, const struct ta_shard_rule *rule,
		  ta_analysis_fn fn, void *ctx, struct ta_table **out);
/* The same on the shards of some ranks only (sorted, each once); 0 also
 * when one of them has no shard. */
int ta_shards_run_ranks(struct ta_shards *sh, const struct ta_shard_rule *rule,
			ta_analysis_fn fn, void *ctx, const int64_t *ranks,
			size_t n, struct ta_table **out);
void ta_shards_close(struct ta_shards *sh, int used);

/* diagnose as a section (shard_diagnose.c): its options, which table is
 * the result (findings, else the verdicts), whether shards gather the
 * findings too, and the other table, kept (freed by the caller). */
struct ta_diagnose_section {
	struct ta_diagnose_opts o;
	int findings;
	int summary;          /* the findings summed over the kept steps */
	struct ta_table *found;
	int want_findings;
};
int ta_diagnose_section_run(sqlite3 *db, const struct ta_query *q, void *ctx,
			    struct ta_table **out, struct ta_error *err);
extern const struct ta_shard_rule ta_shard_diagnose;

/* The critical path on shards (shard_critical.c): o for every walk; req,
 * nreq: the paths going on in the round running. */
struct ta_shard_critical {
	struct ta_critical_opts o;
	struct ta_critical_request *req;
	size_t nreq;
	size_t rounds;      /* how many it took */
};
/* One shard's pieces (ctx: a struct ta_shard_critical). */
int ta_shard_critical_pieces(sqlite3 *db, const struct ta_query *q, void *ctx,
			     struct ta_table **out, struct ta_error *err);
/* After the first round's pieces (first, freed), the rounds after: 1 with
 * ta_critical_run's two tables, 0 when the merged way must answer. */
int ta_shards_critical_rounds(struct ta_shards *sh, struct ta_table *first,
			      struct ta_shard_critical *sc, struct ta_table **path,
			      struct ta_table **items);
/* Every round, the first too. */
int ta_shards_critical(struct ta_shards *sh, struct ta_shard_critical *sc,
		       struct ta_table **path, struct ta_table **items);

#endif
