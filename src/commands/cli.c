/* Shared option parsing for every command: one table drives both getopt
 * and --help. Options may come before or after PATH. */
#include "cli.h"
#include "exec/plan.h"
#include "exec/progress.h"
#include "commands.h"
#include "ta_files.h"
#include "ta_cleanup.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	OPT_RANKS = 1, OPT_HELP, OPT_QUIET, OPT_FAIL_IF, OPT_MAX_INCREASE, OPT_JOBS,
	OPT_MISSING, OPT_CSV_RAW, OPT_WIDE, OPT_RUN, OPT_SPAN
};

#define CLI struct ta_cli
static const struct ta_opt common_opts[] = {
	TA_CHOICE("format", "FMT", CLI, format, "text|csv|json", "output format: text (default), csv, json"),
	TA_CALL("ranks", "LIST", OPT_RANKS, "ranks to analyse: all (default) or e.g. 0,2,5-7"),
	TA_SET("hta-compat", CLI, query.mode, TA_MODE_HTA, "reproduce HTA 0.6.1's numbers, quirks included"),
	TA_SET("tb-compat", CLI, query.mode, TA_MODE_TB, "reproduce the TensorBoard profiler plugin's numbers, quirks included"),
	TA_CHOICE("window", "HOW", CLI, query.window_span, "steps|span", "steps (default): each kept step's window; span: first to last GPU work"),
	TA_STRING("output", "FILE", CLI, output, "write the result to FILE instead of stdout"),
	TA_FLAG("no-cache", CLI, ingest.no_cache, "parse the traces again; do not use or fill the cache"),
	TA_FLAG("strict", CLI, ingest.strict, "a truncated or damaged trace is an error"),
	TA_CALL("jobs", "N", OPT_JOBS, "threads for parsing: N files at once, a large one on two (default: all cores)"),
	TA_CALL("run", "NAME", OPT_RUN, "a tensorboard_trace_handler log directory: its run NAME (default: the newest)"),
	TA_CALL("span", "N", OPT_SPAN, "a worker profiled in several spans (a repeating schedule): the Nth, from 1 (default: the last)"),
	TA_CALL("quiet", NULL, OPT_QUIET, "no warnings or progress on stderr"),
	TA_FLAG("verbose", CLI, ingest.verbose, "say whether the traces were parsed or the cache used"),
	TA_CALL("fail-if", "EXPR", OPT_FAIL_IF, "exit 1 if a row matches, e.g. 'idle_pct > 12' (repeatable)"),
	TA_STRING("baseline", "OLD.csv", CLI, baseline, "compare with a CSV saved from an earlier run"),
	TA_CALL("max-increase", "COL=V", OPT_MAX_INCREASE, "exit 1 if COL rose by more than V (V%, V%,min=A) (repeatable)"),
	TA_FLAG("fail-on-new", CLI, fail_on_new, "exit 1 if a row is not in the baseline (a new kernel, a new finding)"),
	TA_CHOICE("missing", "HOW", CLI, missing_pass, "fail|pass", "a gate on a missing value: fail (default) or pass"),
	TA_FLAG("allow-truncated", CLI, allow_truncated, "gate a truncated trace anyway (an error by default)"),
	TA_CALL("wide", NULL, OPT_WIDE, "text: never cut long names (else to $COLUMNS, or 60 characters)"),
	TA_CALL("csv-raw", NULL, OPT_CSV_RAW, "CSV: names as they are (else one starting with = + - @ TAB CR gets a leading ')"),
	TA_FLAG("columns", CLI, columns, "list the result's columns (name, type, unit) and exit"),
	TA_CALL("help", NULL, OPT_HELP, "show this help"),
	TA_OPT_END
};
#undef CLI

static size_t count_opts(const struct ta_opt *o)
{
	size_t n = 0;

	while (o && o[n].name)
		n++;
	return n;
}

static void print_opts(FILE *out, const struct ta_opt *o)
{
	for (; o && o->name; o++) {
		char left[64];

		snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(out, "  %-26s %s\n", left, o->help);
	}
}

/* The analysis run on an empty database of our schema: its table, with
 * the columns of these options, without a trace. What --columns and
 * --help print: the one declaration of a command's columns. */
static struct ta_table *empty_result(ta_analysis_fn fn, const struct ta_query *q,
				     void *ctx, struct ta_error *err)
{
	struct ta_table *t = NULL;
	sqlite3 *db = NULL;
	size_t i;
	int rc = -1;

	if (sqlite3_open(":memory:", &db) == SQLITE_OK &&
	    ta_db_exec(db, ta_db_schema_sql, err) == 0 &&
	    ta_db_exec(db, ta_db_index_sql, err) == 0) {
		for (i = 0, rc = 0; i < TA_NLAZY_INDEXES && rc == 0; i++)
			rc = ta_db_exec(db, ta_db_lazy_index_sql[i], err);
		if (rc == 0)
			rc = fn(db, q, ctx, &t, err);
	}
	sqlite3_close(db);
	if (rc < 0) {
		ta_table_free(t);
		return NULL;
	}
	return t;
}

static int list_columns(const struct ta_cli *cli, ta_analysis_fn fn, void *ctx)
{
	static const char *const types[] = { "int", "real", "text" };
	static const char *const units[] = { "", "us", "pct", "ratio", "bytes", "clock_us",
					     "path" };
	struct ta_error err = { 0, "", 0 };
	struct ta_table *t = empty_result(fn, &cli->query, ctx, &err);
	size_t c;

	if (!t)
		return ta_cli_error(&err);
	for (c = 0; c < t->ncols; c++)
		printf("%s\t%s\t%s%s\n", t->cols[c].name, types[t->cols[c].type],
		       units[t->cols[c].unit], t->cols[c].key ? "\tkey" : "");
	ta_table_free(t);
	return TA_EXIT_OK;
}

/* "columns: a, b, c", wrapped, for --help. */
static void print_columns(FILE *out, const struct ta_cmd_info *cmd)
{
	struct ta_query q = { 0, NULL, 0, 0, NULL, NULL };
	struct ta_error err = { 0, "", 0 };
	struct ta_table *t = empty_result(cmd->run, &q, cmd->ctx, &err);
	size_t c, at;

	if (!t)
		return;
	fputs("columns (CSV, JSON, --fail-if; a gate may also name a _us or _bytes\n"
	      "column as its text header does, idle for idle_us: the value is still\n"
	      "in µs, or bytes):", out);
	at = 78; /* the list on the next line */
	for (c = 0; c < t->ncols; c++) {
		size_t w = strlen(t->cols[c].name) + 2;

		if (at + w > 78) {
			fputs("\n ", out);
			at = 1;
		}
		fprintf(out, " %s%s", t->cols[c].name, c + 1 < t->ncols ? "," : "");
		at += w;
	}
	fputs("\n(--columns lists those of other options, with types and units)\n\n",
	      out);
	ta_table_free(t);
}

void ta_cli_usage(FILE *out, const struct ta_cmd_info *cmd)
{
	fprintf(out, "usage: traceanalyze %s %s\n\n%s\n\n", cmd->name, cmd->args,
		cmd->summary);
	if (cmd->run)
		print_columns(out, cmd);
	if (count_opts(cmd->opts)) {
		fputs("options:\n", out);
		print_opts(out, cmd->opts);
		fputc('\n', out);
	}
	fputs("common options:\n", out);
	print_opts(out, common_opts);
	fputs("  -o FILE = --output, -j N = --jobs, -q = --quiet, -v = --verbose, "
	      "-h = --help\n", out);
	fputs("\nPATH is a directory of per-rank traces (*.json, *.json.gz), one "
	      "trace file,\nor a database made by 'traceanalyze ingest'. See "
	      "traceanalyze(1).\n", out);
}

/* getopt_long's table: the common options, then the command's; an
 * option's val is 1000 + its place in that order. */
#define OPT_BASE 1000
static struct option *build_longopts(const struct ta_opt *extra)
{
	size_t ne = count_opts(extra), nc = count_opts(common_opts), i;
	struct option *lo = ta_xcalloc(ne + nc + 1, sizeof(*lo));

	for (i = 0; i < nc + ne; i++) {
		const struct ta_opt *o = i < nc ? &common_opts[i] : &extra[i - nc];

		lo[i].name = o->name;
		lo[i].has_arg = o->arg ? required_argument : no_argument;
		lo[i].val = OPT_BASE + (int)i;
	}
	return lo;
}

/* The option getopt_long gave val for. */
static const struct ta_opt *opt_by_val(const struct ta_cmd_info *cmd, int val)
{
	size_t nc = count_opts(common_opts), i = (size_t)(val - OPT_BASE);

	if (val < OPT_BASE)
		return NULL;
	return i < nc ? &common_opts[i] : i - nc < count_opts(cmd->opts) ?
	       &cmd->opts[i - nc] : NULL;
}

static const struct ta_opt *common_by_name(const char *name)
{
	const struct ta_opt *o;

	for (o = common_opts; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

static int usage_error(const struct ta_cmd_info *cmd, const char *fmt,
		       const char *what)
{
	fprintf(stderr, "traceanalyze: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\ntraceanalyze: try 'traceanalyze %s --help'\n", cmd->name);
	return -1;
}

/* What is wrong with a file's value, or NULL: an option ("report --html
 * -q -o f.html" took -q as the page's name and wrote a file called -q;
 * "-" alone is standard output or input), nothing ('-o ""' was a system
 * error), or "-" for a directory (--csv-dir - made one called -). */
static const char *bad_path(const struct ta_opt *o, const char *arg)
{
	static const char *const paths[] = { "OUT", "FILE", "DIR", "SNAP", "PATH", "OLD.csv",
					      NULL };
	size_t i;

	if (o->kind != TA_OPT_STRING || !o->arg || !arg)
		return NULL;
	for (i = 0; paths[i] && strcmp(o->arg, paths[i]) != 0; i++)
		;
	if (!paths[i])
		return NULL;
	if (!arg[0])
		return "an empty name";
	if (strcmp(arg, "-") == 0)
		return strcmp(o->arg, "DIR") == 0 ? "'-' (a directory cannot be standard "
		       "output: name one, ./- for a directory called -)" : NULL;
	return arg[0] == '-' ? "an option" : NULL;
}

/* An option getopt refused: one missing its value names what the value
 * is; an unknown one suggests the nearest that exists. */
static int bad_option(const struct ta_cmd_info *cmd, const char *word, int val)
{
	const struct ta_opt *o = opt_by_val(cmd, val), *best = NULL;
	const struct ta_opt *lists[2] = { common_opts, cmd->opts };
	const char *name = word + strspn(word, "-");
	size_t len = strcspn(name, "="), d = 99, i;

	if (o && o->arg) {
		fprintf(stderr, "traceanalyze: option '--%s' needs a value (%s): %s\n"
			"traceanalyze: try 'traceanalyze %s --help'\n", o->name, o->arg, o->help,
			cmd->name);
		return -1;
	}
	if (val && val < 256 && strchr("oj", val)) {
		fprintf(stderr, "traceanalyze: option '-%c' needs a value\n"
			"traceanalyze: try 'traceanalyze %s --help'\n", val, cmd->name);
		return -1;
	}
	for (i = 0; i < 2; i++)
		for (o = lists[i]; o && o->name; o++) {
			size_t e = ta_edit_distance(name, len, o->name);

			if (e < d)
				d = e, best = o;
		}
	if (word[0] == '-' && word[1] == '-' && best && d == 0 && name[len] == '=') {
		fprintf(stderr, "traceanalyze: option '--%s' takes no value\n"
			"traceanalyze: try 'traceanalyze %s --help'\n", best->name, cmd->name);
		return -1;
	}
	/* a near name: at most one edit in three letters ("--step" is not
	 * "--span": helper-65) */
	if (word[0] == '-' && word[1] == '-' && best && d <= 3 && 3 * d <= len + 1) {
		fprintf(stderr, "traceanalyze: unknown option '%.*s'; did you mean "
			"'--%s'?\ntraceanalyze: try 'traceanalyze %s --help'\n", (int)(len + 2), word,
			best->name, cmd->name);
		return -1;
	}
	return usage_error(cmd, "unknown option '%s'", word);
}

/* The common options that are more than a field (on_opt of struct ta_cli). */
static int common_call(void *ctx, int key, const char *arg)
{
	struct ta_cli *cli = ctx;
	size_t n;
	long j;

	switch (key) {
	case OPT_RANKS:
		free(cli->ranks_buf);
		cli->ranks_buf = NULL;
		if (ta_cli_parse_ranks(arg, &cli->ranks_buf, &n) < 0)
			return usage_error(cli->cmd, "bad rank list '%s' (all, or e.g. 0,2,5-7)", arg);
		cli->query.ranks = cli->ranks_buf;
		cli->query.nranks = n;
		return 0;
	case OPT_JOBS:
		if (ta_cli_parse_count(arg, 4096, &j) < 0 || j < 1)
			return usage_error(cli->cmd, "bad --jobs '%s' (1 to 4096)", arg);
		cli->ingest.jobs = (int)j;
		return 0;
	case OPT_QUIET:
		ta_quiet = 1;
		return 0;
	case OPT_RUN:
	case OPT_SPAN:
		if (key == OPT_RUN)
			cli->run = arg;
		else if (ta_cli_parse_count(arg, 1000000, &j) < 0 || j < 1)
			return usage_error(cli->cmd, "bad --span '%s' (1, 2, ...)", arg);
		else
			cli->span = j;
		ta_tblog_select(cli->run, cli->span);
		return 0;
	case OPT_FAIL_IF:
		cli->gates = ta_xrealloc(cli->gates, (cli->ngates + 1) * sizeof(*cli->gates));
		cli->gates[cli->ngates++] = arg;
		return 0;
	case OPT_WIDE:
		ta_text_wide = 1;
		return 0;
	case OPT_CSV_RAW:
		ta_csv_raw = 1;
		return 0;
	case OPT_MAX_INCREASE:
		cli->increases = ta_xrealloc(cli->increases, (cli->nincreases + 1) *
					     sizeof(*cli->increases));
		if (ta_increase_parse(arg, &cli->increases[cli->nincreases]) < 0)
			return usage_error(cli->cmd, "bad --max-increase '%s' (COLUMN=VALUE, "
					   "COLUMN=VALUE%% or COLUMN=VALUE%%,min=ABS)", arg);
		cli->nincreases++;
		return 0;
	}
	return usage_error(cli->cmd, "%s", "unknown option");
}

/* A value o refused: its choices, or what it was. */
static int bad_value(const struct ta_cmd_info *cmd, const struct ta_opt *o,
		     const char *arg)
{
	char what[400];

	if (o->kind == TA_OPT_CHOICE) {
		struct ta_buf list = { 0 };
		const char *c;

		for (c = o->choices; *c; c++) {
			if (*c == '=') /* another name: not listed */
				c += strcspn(c, "|") - 1;
			else
				ta_buf_addf(&list, *c == '|' ? ", " : "%c", *c);
		}
		snprintf(what, sizeof(what), "bad --%s '%s' (%s)", o->name, arg,
			 list.s ? list.s : "");
		ta_buf_free(&list);
	} else {
		snprintf(what, sizeof(what), "bad value '%s' for --%s", arg ? arg : "",
			 o->name);
	}
	return usage_error(cmd, "%s", what);
}

/* Whether name is a word of the space-separated list. */
static int in_list(const char *name, const char *list)
{
	size_t len = strlen(name);

	while (list && *list) {
		size_t w = strcspn(list, " ");

		if (w == len && strncmp(list, name, len) == 0)
			return 1;
		list += w + strspn(list + w, " ");
	}
	return 0;
}

/* An option of cmd given (bit i: cmd->opts[i]) that the chosen mode does
 * not read: said, -1. A mode-only name that is no option of cmd would
 * never be checked: every run of the command fails (and its tests). */
static int mode_check(const struct ta_cmd_info *cmd, enum ta_mode mode,
		      unsigned long long given)
{
	const struct ta_opt *o;
	int i, m;

	for (m = 0; m < TA_NMODES; m++) {
		const char *w = cmd->mode_only[m];

		while (w && *w) {
			size_t len = strcspn(w, " ");

			for (o = cmd->opts; o && o->name; o++)
				if (strlen(o->name) == len && strncmp(o->name, w, len) == 0)
					break;
			if (!o || !o->name) {
				fprintf(stderr, "traceanalyze: %s: '%.*s' is no option (a bug)\n",
					cmd->name, (int)len, w);
				return -1;
			}
			w += len + strspn(w + len, " ");
		}
	}

	for (i = 0, o = cmd->opts; o && o->name; o++, i++)
		for (m = 0; m < TA_NMODES && (given >> i & 1); m++) {
			if ((enum ta_mode)m == mode || !in_list(o->name, cmd->mode_only[m]))
				continue;
			if (m == TA_MODE_OWN)
				fprintf(stderr, "traceanalyze: --%s is not %s's: leave it out "
					"with %s\n", o->name, ta_mode_whose(mode),
					ta_mode_flag(mode));
			else
				fprintf(stderr, "traceanalyze: --%s goes with %s\n", o->name,
					ta_mode_flag((enum ta_mode)m));
			return -1;
		}
	return 0;
}

int ta_cli_parse(int argc, char **argv, const struct ta_cmd_info *cmd,
		 struct ta_cli *cli)
{
	struct option *lo = build_longopts(cmd->opts);
	unsigned long long given = 0;
	size_t nc = count_opts(common_opts);
	int c, rc = 0, modes = 0;

	memset(cli, 0, sizeof(*cli));
	cli->cmd = cmd;
	optind = 0;
	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, "o:qhvj:", lo, NULL)) != -1) {
		static const char *const shorts[][2] = { { "o", "output" },
			{ "q", "quiet" }, { "h", "help" }, { "v", "verbose" }, { "j", "jobs" } };
		const struct ta_opt *o = opt_by_val(cmd, c);
		const char *why;
		int common;
		size_t i;

		for (i = 0; !o && c < 256 && i < sizeof(shorts) / sizeof(*shorts); i++)
			if (c == shorts[i][0][0] && c != '?' && c != ':')
				o = common_by_name(shorts[i][1]);
		if (!o) {
			rc = bad_option(cmd, argv[optind - 1], optopt);
			continue;
		}
		common = o >= common_opts && o < common_opts + nc;
		if (!common && o - cmd->opts < 64)
			given |= 1ULL << (o - cmd->opts);
		if (common && o->kind == TA_OPT_CALL && o->key == OPT_HELP) {
			ta_cli_usage(stdout, cmd);
			rc = 1;
		} else if (common && o->kind == TA_OPT_CALL) {
			rc = common_call(cli, o->key, optarg);
		} else if ((why = bad_path(o, optarg))) {
			if (strcmp(why, "an option") == 0)
				fprintf(stderr, "traceanalyze: option '--%s' needs a value (%s), "
					"not the option '%s' (a file of that name: ./%s)\n",
					o->name, o->arg, optarg, optarg);
			else
				fprintf(stderr, "traceanalyze: option '--%s' needs a value (%s), "
					"not %s\n", o->name, o->arg, why);
			fprintf(stderr, "traceanalyze: try 'traceanalyze %s --help'\n", cmd->name);
			rc = -1;
		} else if (ta_opt_apply(o, common ? (void *)cli : cmd->ctx, optarg,
				       common ? NULL : cmd->on_opt) < 0) {
			rc = bad_value(cmd, o, optarg);
		}
		/* --hta-compat, --tb-compat: one tool's numbers at a time */
		if (common && o->kind == TA_OPT_SET && o->off == offsetof(struct ta_cli, query.mode) &&
		    modes++ && rc == 0) {
			fprintf(stderr, "traceanalyze: %s: --hta-compat and --tb-compat each "
				"reproduce one tool's numbers; give one\n", cmd->name);
			rc = -1;
		}
	}
	free(lo);
	if (rc == 0 && mode_check(cmd, cli->query.mode, given) < 0)
		rc = -1;
	/* the plugin's views take its own steps: a window of ours would be
	 * accepted and not read */
	if (rc == 0 && cli->query.mode == TA_MODE_TB && cli->query.window_span) {
		fprintf(stderr, "traceanalyze: --window is not the TensorBoard plugin's "
			"(its views take its own steps): leave it out with --tb-compat\n");
		rc = -1;
	}
	/* a mode the command has no counterpart in: said once, here, for
	 * every command (those with a function of their own parse here too) */
	if (rc == 0 && ta_command_compat_check(cmd->name, cli->query.mode) < 0)
		rc = -1;
	cli->args = argv + optind;
	cli->nargs = argc - optind;
	cli->ingest.progress = isatty(2) && !ta_quiet ? ta_progress_ingest : NULL;
	cli->ingest.entry_finish = ta_model_keep_rows;
	return rc;
}

/* A whole number written into a field of size bytes (int, long, int64_t). */
static void store_int(void *p, size_t size, long long v)
{
	if (size == sizeof(int)) {
		int i = (int)v;

		memcpy(p, &i, sizeof(i));
	} else {
		int64_t i = v;

		memcpy(p, &i, sizeof(i));
	}
}

int ta_opt_apply(const struct ta_opt *o, void *base, const char *arg,
		 int (*on_opt)(void *ctx, int key, const char *arg))
{
	char *p = (char *)base + o->off, *end;
	double x;
	int64_t ns;
	long long n;
	const char *c;
	int i;

	switch (o->kind) {
	case TA_OPT_SET:
		store_int(p, o->size, (long long)o->lo);
		return 0;
	case TA_OPT_COUNT:
		/* digits, as every number a user types: no space, no "+"
		 * (strtoll took " 2", "+2" and "-0"; helper-66) */
		if (!isdigit((unsigned char)arg[0]) &&
		    !(arg[0] == '-' && o->lo < 0 && isdigit((unsigned char)arg[1])))
			return -1;
		errno = 0;
		n = strtoll(arg, &end, 10);
		if (end == arg || *end || errno == ERANGE || n < o->lo || n > o->hi)
			return -1;
		store_int(p, o->size, n);
		return 0;
	case TA_OPT_REAL:
		if (ta_cli_parse_real(arg, o->lo, o->hi, &x) < 0)
			return -1;
		memcpy(p, &x, sizeof(x));
		return 0;
	case TA_OPT_US:
		if (ta_cli_parse_us(arg, &ns) < 0 || ns < (int64_t)(o->lo * 1000 + 0.5))
			return -1;
		memcpy(p, &ns, sizeof(ns));
		return 0;
	case TA_OPT_STRING:
		memcpy(p, &arg, sizeof(arg));
		return 0;
	case TA_OPT_CHOICE:
		/* "a=other=names|b": a, or another name of it, is choice 0 */
		for (c = o->choices, i = 0; c; c = strchr(c, '|'), c = c ? c + 1 : c, i++) {
			const char *nm = c, *stop = c + strcspn(c, "|");

			while (nm < stop) {
				size_t len = strcspn(nm, "|=");

				if (strlen(arg) == len && strncmp(nm, arg, len) == 0) {
					store_int(p, o->size, i);
					return 0;
				}
				nm += len + (nm[len] == '=');
			}
		}
		return -1;
	case TA_OPT_CALL:
		return on_opt ? on_opt(base, o->key, arg) : -1;
	}
	return -1;
}

void ta_cli_free(struct ta_cli *cli)
{
	free(cli->ranks_buf);
	free(cli->gates);
	free(cli->increases);
	cli->ranks_buf = NULL;
	cli->gates = NULL;
	cli->increases = NULL;
}

static int parse_rank_item(const char *s, const char *e, int64_t *lo,
			   int64_t *hi)
{
	const char *dash = memchr(s, '-', (size_t)(e - s));
	char *end;

	if (!isdigit((unsigned char)s[0]) || (dash && !isdigit((unsigned char)dash[1])))
		return -1;  /* no sign, no space: "0, 1" read as 0 and 1 but "0 ,1" not */
	errno = 0;
	*lo = strtoll(s, &end, 10);
	if (end == s || *lo < 0 || errno == ERANGE || *lo == INT64_MAX)
		return -1;
	if (!dash) {
		*hi = *lo;
		return end == e ? 0 : -1;
	}
	if (end != dash)
		return -1;
	*hi = strtoll(dash + 1, &end, 10);
	/* INT64_MAX would overflow the caller's loop; "0-" is no range */
	return end == e && end > dash + 1 && dash[1] != '-' && dash[1] != '+' &&
	       errno != ERANGE && *hi < INT64_MAX && *hi >= *lo &&
	       *hi - *lo < 1000000 ? 0 : -1;
}

static int cmp_rank(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int ta_cli_parse_ranks(const char *s, int64_t **ranks, size_t *n)
{
	size_t cap = 0;

	*ranks = NULL;
	*n = 0;
	if (strcmp(s, "all") == 0)
		return 0;
	while (*s) {
		const char *e = strchr(s, ',');
		int64_t lo, hi;

		if (!e)
			e = s + strlen(s);
		if (parse_rank_item(s, e, &lo, &hi) < 0) {
			free(*ranks);
			*ranks = NULL;
			return -1;
		}
		if (hi - lo >= 1000000 - (int64_t)*n) { /* a million ranks in all */
			free(*ranks);
			*ranks = NULL;
			return -1;
		}
		for (; lo <= hi; lo++) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 8;
				*ranks = ta_xrealloc(*ranks, cap * sizeof(**ranks));
			}
			(*ranks)[(*n)++] = lo;
		}
		if (*e && !e[1]) { /* "0,": a list cut short */
			free(*ranks);
			*ranks = NULL;
			return -1;
		}
		s = *e ? e + 1 : e;
	}
	if (*n == 0)
		return -1;
	/* in rank order, as everything that picks ranks reads them */
	ta_qsort(*ranks, *n, sizeof(**ranks), cmp_rank);
	return 0;
}

int ta_cli_error(const struct ta_error *err)
{
	fprintf(stderr, "traceanalyze: %s\n", err->msg);
	return err->code ? err->code : TA_EXIT_SYSTEM;
}

int ta_cli_finish_output(FILE *out, const char *name)
{
	if (fflush(out) == 0 && !ferror(out))
		return TA_EXIT_OK;
	if (errno == EPIPE)
		return TA_EXIT_OK;
	fprintf(stderr, "traceanalyze: cannot write %s: %s\n", name,
		strerror(errno));
	return TA_EXIT_SYSTEM;
}

/* Compiles every --fail-if against the table's columns. */
static int compile_gates(const struct ta_cli *cli, const struct ta_table *t,
			 struct ta_gate **g, struct ta_error *err)
{
	size_t i;

	for (i = 0; i < cli->ngates; i++) {
		g[i] = ta_gate_parse(cli->gates[i], err);
		if (!g[i] || ta_gate_bind(g[i], t, err) < 0 ||
		    ta_gate_check_keys(g[i], t, err) < 0)
			return -1;
	}
	return 0;
}

/* Names each row that trips a gate, with the values it read; a row whose
 * value is missing trips too (unless --missing pass): a gate never passes
 * on data that is not there. The number of trips. */
/* rows a tripped gate is said for, one line each; the rest counted */
#define GATE_LINES 20

static int run_gates(const struct ta_cli *cli, struct ta_gate **g,
		     const struct ta_table *t)
{
	size_t i, r;
	int trips = 0;
	char key[512];

	for (i = 0; i < cli->ngates; i++)
		for (r = 0; r < t->nrows; r++) {
			struct ta_buf vals = { 0 };
			int v = ta_gate_eval(g[i], t, r);

			if (v == TA_GATE_PASS || (v == TA_GATE_MISSING && cli->missing_pass))
				continue;
			if (trips++ >= GATE_LINES) /* counted, not each said */
				continue;
			ta_row_key(t, r, key, sizeof(key));
			ta_gate_describe(g[i], t, r, &vals);
			if (v == TA_GATE_MISSING)
				fprintf(stderr, "traceanalyze: gate '%s' tripped on a "
					"missing value: %s: %s (--missing pass lets it "
					"pass)\n", ta_gate_text(g[i]), key[0] ? key : "(row)",
					vals.s ? vals.s : "");
			else
				fprintf(stderr, "traceanalyze: gate '%s' tripped: %s: %s\n",
					ta_gate_text(g[i]), key[0] ? key : "(row)",
					vals.s ? vals.s : "");
			ta_buf_free(&vals);
		}
	if (trips > GATE_LINES)
		fprintf(stderr, "traceanalyze: ... and %d more rows tripped a gate\n",
			trips - GATE_LINES);
	return trips;
}

/* rises: what the baseline check counted (rises, new rows). */
static int check_gates(const struct ta_cli *cli, struct ta_gate **g, int rises,
		       const struct ta_table *t, int rc)
{
	int trips = run_gates(cli, g, t);
	size_t skipped = ta_input_skipped();

	/* a rank it did not read is data that is not there */
	if (skipped && !cli->missing_pass && (cli->ngates || cli->baseline)) {
		fprintf(stderr, "traceanalyze: gate tripped: %zu input file%s left out "
			"(said above), so the answer lacks %s (--missing pass lets it "
			"pass)\n", skipped, skipped == 1 ? " was" : "s were",
			skipped == 1 ? "a rank" : "ranks");
		trips++;
	}
	/* ranks the answer lacks (stragglers of a job with a rank's trace
	 * missing measured no wait at all; modules of a rank without module
	 * frames have no row) */
	if ((t->ranks_absent || t->ranks_empty) && !cli->missing_pass &&
	    (cli->ngates || cli->baseline)) {
		size_t n = t->ranks_absent + t->ranks_empty;

		fprintf(stderr, "traceanalyze: gate tripped: %zu rank%s of the job %s no "
			"trace here, or none of what this command reads, so the answer "
			"lacks %s (said above; --missing pass lets it pass)\n",
			n, n == 1 ? "" : "s", n == 1 ? "has" : "have",
			n == 1 ? "it" : "them");
		trips++;
	}
	/* no row at all (a step that is not there, a filter that kept
	 * nothing): nothing was checked, which is not a pass */
	if (cli->ngates && t->nrows == 0 && !cli->missing_pass) {
		fprintf(stderr, "traceanalyze: gate tripped: the result has no row to "
			"check (--missing pass lets it pass)\n");
		trips++;
	}

	if (rc != TA_EXIT_OK)
		return rc;
	return trips || rises ? TA_EXIT_GATE : TA_EXIT_OK;
}

void ta_cli_add_input(struct ta_cli *cli, const char *path)
{
	if (path && cli->nmore < (int)(sizeof(cli->more_inputs) / sizeof(*cli->more_inputs)))
		cli->more_inputs[cli->nmore++] = path;
}

int ta_cli_is_input(const struct ta_cli *cli, const char *path)
{
	struct stat sb, is;
	int i;

	if (!path || strcmp(path, "-") == 0 || stat(path, &sb) < 0)
		return 0; /* a new name: nothing to lose */
	for (i = 0; i < cli->nargs; i++)
		if (ta_input_contains(cli->args[i], &sb))
			return 1;
	if (cli->baseline && strcmp(cli->baseline, "-") != 0 &&
	    stat(cli->baseline, &is) == 0 && ta_same_file(&is, &sb))
		return 1;
	for (i = 0; i < cli->nmore; i++)
		if (ta_input_contains(cli->more_inputs[i], &sb))
			return 1;
	return 0;
}

int ta_cli_check_output(const struct ta_cli *cli, int replaces,
			struct ta_error *err)
{
	struct stat sb;

	if (!cli->output || (!replaces && strcmp(cli->output, "-") == 0))
		return 0;
	/* a link (dangling or not) would be replaced by the rename, not
	 * written through: refused like any file that is not a regular one */
	if (replaces && lstat(cli->output, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		ta_error_set(err, TA_EXIT_USAGE, "'%s' is a symbolic link; -o replaces a "
			     "regular file only", cli->output);
		return -1;
	}
	if (stat(cli->output, &sb) < 0)
		return 0; /* a new name (or one we will fail to open, saying why) */
	if (replaces && !S_ISREG(sb.st_mode)) {
		ta_error_set(err, TA_EXIT_USAGE, "'%s' is %s; -o replaces a regular "
			     "file only", cli->output, ta_file_kind(sb.st_mode));
		return -1;
	}
	if (!ta_cli_is_input(cli, cli->output))
		return 0;
	ta_error_set(err, TA_EXIT_USAGE, "'%s' is an input; refusing to write "
		     "over it", cli->output);
	return -1;
}

/* Outputs to regular files are written under a temporary name beside
 * them and renamed over them once whole: a failed write (a full disk,
 * ulimit -f, a kill) leaves the old file as it was, never half a new one.
 * A device or FIFO is written as it is. */
static struct pending {
	FILE *f;
	char *tmp, *final;
	void *cleanup;
} pending[4];

FILE *ta_cli_output_open(const struct ta_cli *cli)
{
	struct stat sb;
	FILE *out;
	size_t i;

	if (!cli->output || strcmp(cli->output, "-") == 0)
		return stdout;
	if (stat(cli->output, &sb) < 0 || S_ISREG(sb.st_mode)) {
		for (i = 0; i < sizeof(pending) / sizeof(*pending) && pending[i].f; i++)
			;
		if (i < sizeof(pending) / sizeof(*pending)) {
			size_t n = strlen(cli->output) + 16;
			char *tmp = ta_xmalloc(n);
			void *doomed = NULL;
			int fd;

			snprintf(tmp, n, "%s.tmp.XXXXXX", cli->output);
			if ((fd = ta_cleanup_mkstemp(tmp, &doomed)) >= 0 &&
			    (out = fdopen(fd, "w"))) {
				/* the mode a new file would have had */
				mode_t um = umask(0);

				umask(um);
				fchmod(fd, stat(cli->output, &sb) == 0 && S_ISREG(sb.st_mode) ?
				       sb.st_mode & 07777 : 0666 & ~um);
				pending[i] = (struct pending){ out, tmp,
					ta_xstrdup(cli->output), doomed };
				return out;
			}
			if (fd >= 0) {
				close(fd);
				unlink(tmp);
				ta_cleanup_drop(doomed);
			}
			free(tmp); /* a directory we may not write: open in place */
		}
	}
	out = fopen(cli->output, "w");
	if (!out)
		fprintf(stderr, "traceanalyze: cannot write '%s': %s\n",
			cli->output, strerror(errno));
	return out;
}

/* Closes out: renamed over its name if written whole, else removed. */
static int output_fclose(FILE *out, int ok)
{
	size_t i;
	int rc = fclose(out);

	for (i = 0; i < sizeof(pending) / sizeof(*pending); i++) {
		struct pending *p = &pending[i];

		if (p->f != out)
			continue;
		if (ok && rc == 0 && rename(p->tmp, p->final) < 0) {
			fprintf(stderr, "traceanalyze: cannot write '%s': %s\n",
				p->final, strerror(errno));
			rc = -1;
		}
		if (!ok || rc != 0)
			unlink(p->tmp);
		ta_cleanup_drop(p->cleanup);
		free(p->tmp);
		free(p->final);
		memset(p, 0, sizeof(*p));
	}
	return rc;
}

int ta_cli_output_close(const struct ta_cli *cli, FILE *out,
			struct ta_table *const *t, size_t n)
{
	int rc = ta_cli_finish_output(out, cli->output ? cli->output : "stdout");
	size_t i;

	if (out != stdout && output_fclose(out, rc == TA_EXIT_OK) != 0 && rc == TA_EXIT_OK)
		rc = TA_EXIT_SYSTEM;
	for (i = 0; i < n; i++)
		ta_warn_lines(&t[i]->warnings);
	for (i = 0; i < n; i++)
		if (t[i]->bad_utf8)
			ta_warn("%zu bytes of invalid UTF-8 in names were replaced "
				"with U+FFFD in the output", t[i]->bad_utf8);
	if (cli->format == TA_FMT_TEXT && !ta_quiet)
		for (i = 0; i < n; i++) { /* each line "traceanalyze: ..." */
			char *line, *save = NULL;

			for (line = t[i]->notes.s ? strtok_r(t[i]->notes.s, "\n", &save) : NULL;
			     line; line = strtok_r(NULL, "\n", &save))
				ta_note("%s", line);
		}
	return rc;
}

static FILE *open_output(void *cli)
{
	return ta_cli_output_open(cli);
}

/* A table that went out row by row (ta_report.h): finish and close. */
static int finish_stream(const struct ta_cli *cli, struct ta_stream *s,
			 struct ta_table *t)
{
	int rc = ta_stream_finish(s, t) < 0 ? TA_EXIT_SYSTEM :
		 ta_cli_output_close(cli, s->out, &t, 1);

	ta_table_free(t);
	return rc;
}

int ta_cli_run(const struct ta_cli *cli, ta_analysis_fn fn, void *ctx)
{
	struct ta_gate **gates = NULL;
	struct ta_baseline *base = NULL;
	size_t i;
	struct ta_error err = { 0, "", 0 };
	struct ta_table *t = NULL;
	struct ta_query q = cli->query;
	struct ta_stream stream;
	struct ta_plan plan;
	FILE *out;
	const char *renames;
	int rc, rises;

	if (cli->columns)
		return list_columns(cli, fn, ctx);
	if (ta_cli_check_output(cli, 0, &err) < 0)
		return ta_cli_error(&err);
	if ((cli->nincreases || cli->fail_on_new) && !cli->baseline) {
		fprintf(stderr, "traceanalyze: %s needs --baseline\n",
			cli->nincreases ? "--max-increase" : "--fail-on-new");
		return TA_EXIT_USAGE;
	}
	/* a wrong baseline is an error before any output */
	if (cli->baseline && !(base = ta_baseline_load(cli->baseline,
			cli->cmd ? cli->cmd->name : NULL, &err)))
		return ta_cli_error(&err);
	if ((rc = ta_plan_open(&plan, cli)) != TA_EXIT_OK) {
		ta_baseline_free(base);
		return rc;
	}
	/* CSV and JSON without gates may go out while the analysis runs */
	ta_stream_init(&stream, open_output, (void *)cli, cli->format);
	/* a column --hta-compat names otherwise: the table is renamed
	 * whole, before its header goes out */
	renames = ta_compat_names(cli->query.mode, cli->cmd ? cli->cmd->name : NULL);
	q.sink = cli->format != TA_FMT_TEXT && !cli->ngates && !cli->baseline &&
		 !renames ? &stream.sink : NULL;
	rc = ta_plan_run(&plan, NULL, fn, ctx, &q, &stream, &t, &err);
	ta_plan_close(&plan);
	if (rc < 0) {
		if (stream.out && stream.out != stdout)
			output_fclose(stream.out, 0); /* the old file stays */
		ta_baseline_free(base);
		return ta_cli_error(&err);
	}
	if (t->sink) {
		ta_baseline_free(base);
		return finish_stream(cli, &stream, t);
	}
	if (renames)
		ta_table_rename(t, renames);
	if (cli->format == TA_FMT_TEXT && cli->cmd && cli->cmd->present)
		cli->cmd->present(t, ctx);
	gates = ta_xcalloc(cli->ngates + 1, sizeof(*gates));
	rises = 0;
	/* gates compile, and the baseline matches, before anything goes out */
	if (compile_gates(cli, t, gates, &err) < 0 ||
	    (base && (rises = ta_baseline_check(t, base, cli->increases,
						cli->nincreases, cli->fail_on_new,
						cli->missing_pass, stderr, &err)) < 0)) {
		rc = ta_cli_error(&err);
		goto done;
	}
	if (!(out = ta_cli_output_open(cli))) {
		rc = TA_EXIT_SYSTEM;
		goto done;
	}
	ta_report_write(out, t, cli->format);
	rc = check_gates(cli, gates, rises, t, ta_cli_output_close(cli, out, &t, 1));
done:
	for (i = 0; i < cli->ngates; i++)
		ta_gate_free(gates[i]);
	free(gates);
	ta_baseline_free(base);
	ta_table_free(t);
	return rc;
}

int ta_cli_main(int argc, char **argv, const struct ta_cmd_info *info,
		ta_analysis_fn fn, void *ctx, void (*after_parse)(void *ctx,
		struct ta_cli *cli))
{
	struct ta_cli cli;
	int rc = ta_cli_parse(argc, argv, info, &cli);

	if (rc == 0) {
		if (after_parse)
			after_parse(ctx, &cli);
		rc = ta_cli_run(&cli, fn, ctx);
	} else {
		rc = rc > 0 ? TA_EXIT_OK : TA_EXIT_USAGE;
	}
	ta_cli_free(&cli);
	return rc;
}

int ta_cli_parse_us(const char *arg, int64_t *ns)
{
	char *end;
	double us = ta_strtod(arg, &end);

	if (end == arg || *end || !(us >= 0) || us > 1e12)
		return -1;
	*ns = (int64_t)(us * 1000 + 0.5);
	return 0;
}

int ta_cli_parse_real(const char *arg, double lo, double hi, double *v)
{
	char *end;
	double x = ta_strtod(arg, &end);

	if (end == arg || *end || !(x >= lo && x <= hi))
		return -1;
	*v = x;
	return 0;
}

int ta_cli_parse_count(const char *arg, long max, long *v)
{
	char *end;

	if (!isdigit((unsigned char)arg[0]))   /* no sign, no space */
		return -1;
	errno = 0;
	*v = strtol(arg, &end, 10);
	return end != arg && !*end && errno != ERANGE && *v >= 0 && *v <= max ? 0 : -1;
}

struct ta_table *ta_cli_pick(struct ta_table *first, struct ta_table *second,
			     int want_second, struct ta_table **kept)
{
	struct ta_table *out = want_second ? second : first;
	struct ta_table *other = want_second ? first : second;

	ta_table_free(*kept);
	*kept = NULL;
	/* what is wrong in the data is said whichever table goes out */
	if (out && other && other->warnings.len)
		ta_buf_add(&out->warnings, other->warnings.s, other->warnings.len);
	if (want_second) {
		ta_table_free(first);
		return second;
	}
	*kept = second;
	return first;
}
