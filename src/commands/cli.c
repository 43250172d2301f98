/* Shared option parsing for every command: one table drives both getopt
 * and --help. Options may come before or after PATH. */
#include "cli.h"
#include "exec/progress.h"
#include "commands.h"
#include "ta_files.h"
#include "ta_cleanup.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	OPT_FORMAT = 1000, OPT_RANKS, OPT_HTA, OPT_NO_CACHE, OPT_STRICT,
	OPT_HELP, OPT_QUIET, OPT_OUTPUT, OPT_FAIL_IF, OPT_BASELINE,
	OPT_MAX_INCREASE, OPT_JOBS, OPT_VERBOSE, OPT_COLUMNS, OPT_WINDOW,
	OPT_MISSING, OPT_ALLOW_TRUNCATED, OPT_FAIL_ON_NEW, OPT_CSV_RAW, OPT_WIDE
};

static const struct ta_opt common_opts[] = {
	{ "format", 1, OPT_FORMAT, "FMT", "output format: text (default), csv, json" },
	{ "ranks", 1, OPT_RANKS, "LIST", "ranks to analyse: all (default) or e.g. 0,2,5-7" },
	{ "hta-compat", 0, OPT_HTA, NULL, "reproduce HTA 0.6.1's numbers, quirks included" },
	{ "window", 1, OPT_WINDOW, "HOW", "steps (default): each kept step's window; span: first to last GPU work" },
	{ "output", 1, OPT_OUTPUT, "FILE", "write the result to FILE instead of stdout" },
	{ "no-cache", 0, OPT_NO_CACHE, NULL, "parse the traces again; do not use or fill the cache" },
	{ "strict", 0, OPT_STRICT, NULL, "a truncated or damaged trace is an error" },
	{ "jobs", 1, OPT_JOBS, "N", "threads for parsing: N files at once, a large one on two (default: all cores)" },
	{ "quiet", 0, OPT_QUIET, NULL, "no warnings or progress on stderr" },
	{ "verbose", 0, OPT_VERBOSE, NULL, "say whether the traces were parsed or the cache used" },
	{ "fail-if", 1, OPT_FAIL_IF, "EXPR", "exit 1 if a row matches, e.g. 'idle_pct > 12' (repeatable)" },
	{ "baseline", 1, OPT_BASELINE, "OLD.csv", "compare with a CSV saved from an earlier run" },
	{ "max-increase", 1, OPT_MAX_INCREASE, "COL=V", "exit 1 if COL rose by more than V (V%, V%,min=A) (repeatable)" },
	{ "fail-on-new", 0, OPT_FAIL_ON_NEW, NULL, "exit 1 if a row is not in the baseline (a new kernel, a new finding)" },
	{ "missing", 1, OPT_MISSING, "HOW", "a gate on a missing value: fail (default) or pass" },
	{ "allow-truncated", 0, OPT_ALLOW_TRUNCATED, NULL, "gate a truncated trace anyway (an error by default)" },
	{ "wide", 0, OPT_WIDE, NULL, "text: never cut long names (else to $COLUMNS, or 60 characters)" },
	{ "csv-raw", 0, OPT_CSV_RAW, NULL, "CSV: names as they are (else one starting with = + - @ TAB CR gets a leading ')" },
	{ "columns", 0, OPT_COLUMNS, NULL, "list the result's columns (name, type, unit) and exit" },
	{ "help", 0, OPT_HELP, NULL, "show this help" },
	{ NULL, 0, 0, NULL, NULL }
};

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
	static const char *const units[] = { "", "us", "pct", "ratio" };
	struct ta_error err = { 0, "" };
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
	struct ta_error err = { 0, "" };
	struct ta_table *t = empty_result(cmd->run, &q, cmd->ctx, &err);
	size_t c, at;

	if (!t)
		return;
	fputs("columns (CSV, JSON, --fail-if):", out);
	at = 31;
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

static struct option *build_longopts(const struct ta_opt *extra)
{
	size_t ne = count_opts(extra), nc = count_opts(common_opts), i, k = 0;
	struct option *lo = ta_xcalloc(ne + nc + 1, sizeof(*lo));

	for (i = 0; i < nc; i++, k++) {
		lo[k].name = common_opts[i].name;
		lo[k].has_arg = common_opts[i].has_arg;
		lo[k].val = common_opts[i].key;
	}
	for (i = 0; i < ne; i++, k++) {
		lo[k].name = extra[i].name;
		lo[k].has_arg = extra[i].has_arg;
		lo[k].val = extra[i].key;
	}
	return lo;
}

static int usage_error(const struct ta_cmd_info *cmd, const char *fmt,
		       const char *what)
{
	fprintf(stderr, "traceanalyze: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\ntraceanalyze: try 'traceanalyze %s --help'\n", cmd->name);
	return -1;
}

static const struct ta_opt *opt_by_key(const struct ta_cmd_info *cmd, int key)
{
	const struct ta_opt *o;

	for (o = common_opts; o->name; o++)
		if (o->key == key)
			return o;
	for (o = cmd->opts; o && o->name; o++)
		if (o->key == key)
			return o;
	return NULL;
}

/* An option getopt refused: one missing its value names what the value
 * is; an unknown one suggests the nearest that exists. */
static int bad_option(const struct ta_cmd_info *cmd, const char *word, int key)
{
	const struct ta_opt *o = key ? opt_by_key(cmd, key) : NULL, *best = NULL;
	const struct ta_opt *lists[2] = { common_opts, cmd->opts };
	const char *name = word + strspn(word, "-");
	size_t len = strcspn(name, "="), d = 99, i;

	if (o && o->arg) {
		fprintf(stderr, "traceanalyze: option '--%s' needs a value (%s): %s\n"
			"traceanalyze: try 'traceanalyze %s --help'\n", o->name, o->arg, o->help,
			cmd->name);
		return -1;
	}
	if (key && key < 256 && strchr("oj", key)) {
		fprintf(stderr, "traceanalyze: option '-%c' needs a value\n"
			"traceanalyze: try 'traceanalyze %s --help'\n", key, cmd->name);
		return -1;
	}
	for (i = 0; i < 2; i++)
		for (o = lists[i]; o && o->name; o++) {
			size_t e = ta_edit_distance(name, len, o->name);

			if (e < d)
				d = e, best = o;
		}
	if (word[0] == '-' && word[1] == '-' && best && d <= 3) {
		fprintf(stderr, "traceanalyze: unknown option '%.*s'; did you mean "
			"'--%s'?\ntraceanalyze: try 'traceanalyze %s --help'\n", (int)(len + 2), word,
			best->name, cmd->name);
		return -1;
	}
	return usage_error(cmd, "unknown option '%s'", word);
}

static int common_opt(struct ta_cli *cli, const struct ta_cmd_info *cmd,
		      int key, const char *arg)
{
	size_t n;

	switch (key) {
	case OPT_FORMAT:
		if (ta_format_parse(arg, &cli->format) < 0)
			return usage_error(cmd, "unknown format '%s' (text, csv, json)", arg);
		return 0;
	case OPT_RANKS:
		free(cli->ranks_buf);
		cli->ranks_buf = NULL;
		if (ta_cli_parse_ranks(arg, &cli->ranks_buf, &n) < 0)
			return usage_error(cmd, "bad rank list '%s' (all, or e.g. 0,2,5-7)", arg);
		cli->query.ranks = cli->ranks_buf;
		cli->query.nranks = n;
		return 0;
	case OPT_HTA:
		cli->query.hta_compat = 1;
		return 0;
	case OPT_OUTPUT:
		cli->output = arg;
		return 0;
	case OPT_NO_CACHE:
		cli->ingest.no_cache = 1;
		return 0;
	case OPT_STRICT:
		cli->ingest.strict = 1;
		return 0;
	case OPT_JOBS: {
		long j;

		if (ta_cli_parse_count(arg, 4096, &j) < 0 || j < 1)
			return usage_error(cmd, "bad --jobs '%s' (1 to 4096)", arg);
		cli->ingest.jobs = (int)j;
		return 0;
	}
	case OPT_QUIET:
		ta_quiet = 1;
		return 0;
	case OPT_VERBOSE:
		cli->ingest.verbose = 1;
		return 0;
	case OPT_COLUMNS:
		cli->columns = 1;
		return 0;
	case OPT_WINDOW:
		if (strcmp(arg, "steps") != 0 && strcmp(arg, "span") != 0)
			return usage_error(cmd, "bad --window '%s' (steps, span)", arg);
		cli->query.window_span = strcmp(arg, "span") == 0;
		return 0;
	case OPT_FAIL_IF:
		cli->gates = ta_xrealloc(cli->gates, (cli->ngates + 1) * sizeof(*cli->gates));
		cli->gates[cli->ngates++] = arg;
		return 0;
	case OPT_BASELINE:
		cli->baseline = arg;
		return 0;
	case OPT_FAIL_ON_NEW:
		cli->fail_on_new = 1;
		return 0;
	case OPT_WIDE:
		ta_text_wide = 1;
		return 0;
	case OPT_CSV_RAW:
		ta_csv_raw = 1;
		return 0;
	case OPT_ALLOW_TRUNCATED:
		cli->allow_truncated = 1;
		return 0;
	case OPT_MISSING:
		if (strcmp(arg, "fail") != 0 && strcmp(arg, "pass") != 0)
			return usage_error(cmd, "bad --missing '%s' (fail, pass)", arg);
		cli->missing_pass = strcmp(arg, "pass") == 0;
		return 0;
	case OPT_MAX_INCREASE:
		cli->increases = ta_xrealloc(cli->increases, (cli->nincreases + 1) *
					     sizeof(*cli->increases));
		if (ta_increase_parse(arg, &cli->increases[cli->nincreases]) < 0)
			return usage_error(cmd, "bad --max-increase '%s' (COLUMN=VALUE, "
					   "COLUMN=VALUE%% or COLUMN=VALUE%%,min=ABS)", arg);
		cli->nincreases++;
		return 0;
	}
	return usage_error(cmd, "%s", "unknown option");
}

int ta_cli_parse(int argc, char **argv, const struct ta_cmd_info *cmd,
		 struct ta_cli *cli)
{
	struct option *lo = build_longopts(cmd->opts);
	int c, rc = 0, idx = -1;

	memset(cli, 0, sizeof(*cli));
	cli->cmd = cmd;
	optind = 0;
	opterr = 0;
	while (rc == 0 && (idx = -1,
			   c = getopt_long(argc, argv, "o:qhvj:", lo, &idx)) != -1) {
		if (c == 'h' || c == OPT_HELP) {
			ta_cli_usage(stdout, cmd);
			rc = 1;
		} else if (c == 'o') {
			cli->output = optarg;
		} else if (c == 'q') {
			ta_quiet = 1;
		} else if (c == 'j') {
			rc = common_opt(cli, cmd, OPT_JOBS, optarg);
		} else if (c == '?' || c == ':') {
			rc = bad_option(cmd, argv[optind - 1], optopt);
		} else if (c == 'v') {
			rc = common_opt(cli, cmd, OPT_VERBOSE, optarg);
		} else if (c >= OPT_FORMAT && c <= OPT_WIDE) {
			rc = common_opt(cli, cmd, c, optarg);
		} else if (!cmd->on_opt || cmd->on_opt(cmd->ctx, c, optarg) < 0) {
			char what[160];

			snprintf(what, sizeof(what), "'%s' for --%s",
				 optarg ? optarg : "", idx >= 0 ? lo[idx].name : "?");
			rc = usage_error(cmd, "bad value %s", what);
		}
	}
	free(lo);
	cli->args = argv + optind;
	cli->nargs = argc - optind;
	cli->ingest.progress = isatty(2) && !ta_quiet ? ta_progress_ingest : NULL;
	return rc;
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
	/* INT64_MAX would overflow the caller's loop */
	return end == e && errno != ERANGE && *hi < INT64_MAX && *hi >= *lo &&
	       *hi - *lo < 1000000 ? 0 : -1;
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
		for (; lo <= hi; lo++) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 8;
				*ranks = ta_xrealloc(*ranks, cap * sizeof(**ranks));
			}
			(*ranks)[(*n)++] = lo;
		}
		s = *e ? e + 1 : e;
	}
	if (*n == 0)
		return -1;
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
			trips++;
		}
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

	if (rc != TA_EXIT_OK)
		return rc;
	return trips || rises ? TA_EXIT_GATE : TA_EXIT_OK;
}

int ta_cli_open_input(const struct ta_cli *cli, sqlite3 **db)
{
	struct ta_error err = { 0, "" };

	*db = NULL;
	if (cli->nargs != 1) {
		fprintf(stderr, "traceanalyze: expected one PATH, got %d\n",
			cli->nargs);
		return TA_EXIT_USAGE;
	}
	if (ta_input_open(cli->args[0], &cli->ingest, db, &err) < 0)
		return ta_cli_error(&err);
	return TA_EXIT_OK;
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
			int fd;

			snprintf(tmp, n, "%s.tmp.XXXXXX", cli->output);
			if ((fd = mkstemp(tmp)) >= 0 && (out = fdopen(fd, "w"))) {
				/* the mode a new file would have had */
				mode_t um = umask(0);

				umask(um);
				fchmod(fd, stat(cli->output, &sb) == 0 && S_ISREG(sb.st_mode) ?
				       sb.st_mode & 07777 : 0666 & ~um);
				pending[i] = (struct pending){ out, tmp,
					ta_xstrdup(cli->output), ta_cleanup_path(tmp) };
				return out;
			}
			if (fd >= 0) {
				close(fd);
				unlink(tmp);
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

int ta_cli_damaged(sqlite3 *db, int *retried, struct ta_error *err)
{
	int code = sqlite3_errcode(db) & 0xff;
	const char *path = sqlite3_db_filename(db, "main");
	char msg[sizeof(err->msg)];

	if (code != SQLITE_CORRUPT && code != SQLITE_NOTADB)
		return 0;
	snprintf(msg, sizeof(msg), "%s", err->msg);
	if (retried && !*retried && ta_input_is_cached(path)) {
		ta_warn("cached database '%s' is damaged (%s); rebuilding it",
			path, msg);
		unlink(path);
		*retried = 1;
		return 1;
	}
	ta_error_set(err, TA_EXIT_INPUT, "'%s': damaged database (%s)",
		     path ? path : "", msg);
	if (ta_input_is_cached(path))
		unlink(path); /* the next run builds it again */
	return 0;
}

/* A gate on a truncated trace could pass on the part that is missing:
 * an error unless --allow-truncated. */
static int refuse_truncated(const struct ta_cli *cli, sqlite3 *db,
			    struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (cli->allow_truncated || (!cli->ngates && !cli->baseline))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT path, COALESCE(damage, 'damaged')"
			       " FROM files WHERE truncated LIMIT 1", -1, &st,
			       NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': %s; a gate on a truncated "
			     "trace is an error (--allow-truncated to gate what was "
			     "read)", (const char *)sqlite3_column_text(st, 0),
			     (const char *)sqlite3_column_text(st, 1));
		rc = -1;
	}
	sqlite3_finalize(st);
	return rc;
}

int ta_cli_run(const struct ta_cli *cli, ta_analysis_fn fn, void *ctx)
{
	struct ta_gate **gates = NULL;
	struct ta_baseline *base = NULL;
	size_t i;
	struct ta_error err = { 0, "" };
	struct ta_table *t = NULL;
	sqlite3 *db = NULL;
	struct ta_query q = cli->query;
	struct ta_stream stream;
	FILE *out;
	int rc, retried = 0, rises;

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
	/* a directory of shards, a per-rank command: shard by shard */
	if (ta_shard_run(cli, fn, ctx, &t) == 1)
		goto have_table;
again:
	rc = ta_cli_open_input(cli, &db);
	if (rc != TA_EXIT_OK) {
		ta_baseline_free(base);
		return rc;
	}
	if (refuse_truncated(cli, db, &err) < 0) {
		sqlite3_close(db);
		ta_baseline_free(base);
		return ta_cli_error(&err);
	}
	/* CSV and JSON without gates may go out while the analysis runs */
	ta_stream_init(&stream, open_output, (void *)cli, cli->format);
	q.sink = cli->format != TA_FMT_TEXT && !cli->ngates && !cli->baseline ?
		 &stream.sink : NULL;
	q.progress = isatty(2) && !ta_quiet ? ta_progress_work : NULL;
	rc = fn(db, &q, ctx, &t, &err);
	/* a damaged cached database is built again, if nothing went out */
	if (rc < 0 && ta_cli_damaged(db, stream.out ? NULL : &retried, &err)) {
		sqlite3_close(db);
		goto again;
	}
	sqlite3_close(db);
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
have_table:
	if (cli->format == TA_FMT_TEXT && cli->cmd && cli->cmd->present)
		cli->cmd->present(t, ctx);
	gates = ta_xcalloc(cli->ngates + 1, sizeof(*gates));
	rises = 0;
	/* gates compile, and the baseline matches, before anything goes out */
	if (compile_gates(cli, t, gates, &err) < 0 ||
	    (base && (rises = ta_baseline_check(t, base, cli->increases,
						cli->nincreases, cli->fail_on_new,
						stderr, &err)) < 0)) {
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

	if (rc == 0 && ta_command_compat_check(info->name, cli.query.hta_compat) < 0) {
		rc = TA_EXIT_USAGE;
	} else if (rc == 0) {
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
	double us = strtod(arg, &end);

	if (end == arg || *end || !(us >= 0) || us > 1e12)
		return -1;
	*ns = (int64_t)(us * 1000 + 0.5);
	return 0;
}

int ta_cli_parse_real(const char *arg, double lo, double hi, double *v)
{
	char *end;
	double x = strtod(arg, &end);

	if (end == arg || *end || !(x >= lo && x <= hi))
		return -1;
	*v = x;
	return 0;
}

int ta_cli_parse_count(const char *arg, long max, long *v)
{
	char *end;

	*v = strtol(arg, &end, 10);
	return end != arg && !*end && *v >= 0 && *v <= max ? 0 : -1;
}

struct ta_table *ta_cli_pick(struct ta_table *first, struct ta_table *second,
			     int want_second, struct ta_table **kept)
{
	ta_table_free(*kept);
	*kept = NULL;
	if (want_second) {
		ta_table_free(first);
		return second;
	}
	*kept = second;
	return first;
}
