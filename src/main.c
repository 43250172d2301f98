/* traceanalyze: command table and global options. */
#include "cli.h"
#include "commands.h"
#include "ta.h"
#include "ta_db.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "report", cmd_report, "the core analyses together: temporal, idle, kernel types, overlap" },
	{ "temporal", cmd_temporal, "idle, compute and non-compute GPU time per rank" },
	{ "idle", cmd_idle, "idle time per stream: host wait, kernel wait, other" },
	{ "kernels", cmd_kernels, "GPU time per kernel or kernel type" },
	{ "overlap", cmd_overlap, "communication hidden under computation" },
	{ "launch", cmd_launch, "launch statistics: CPU time, GPU time, launch delay" },
	{ "queue", cmd_queue, "launch queue length per stream" },
	{ "membw", cmd_membw, "memory bandwidth per copy kind" },
	{ "annotations", cmd_annotations, "time per record_function annotation" },
	{ "ops", cmd_ops, "the profiler's key_averages table, per rank" },
	{ "diagnose", cmd_diagnose, "per step: what bounds it, and what to fix" },
	{ "stragglers", cmd_stragglers, "across ranks: who the others wait for, how long, and why" },
	{ "critical-path", cmd_critical, "per step: the chain of work the step waited on, and what it is" },
	{ "diff", cmd_diff, "two runs: what changed, per name and per step" },
	{ "counters", cmd_counters, "CUPTI hardware counters per kernel, with the op that launched it" },
	{ "steps", cmd_steps, "the profiler steps: their ranges, windows, and which are kept" },
	{ "memory", cmd_memory, "allocated memory per step: peak, growth, and who allocated it" },
	{ "ingest", cmd_ingest, "parse traces into a database for later commands" },
	{ "cache", cmd_cache, "list, prune or clear the cache of parsed traces" },
	{ "schema", cmd_schema, "print the database schema" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	size_t i;

	fputs("usage: traceanalyze [--version] [--help] COMMAND [options] PATH\n\n"
	      "Analyse PyTorch profiler (Kineto) traces: where GPU time went and "
	      "why the GPU\nwas idle. PATH is a directory of per-rank traces, one "
	      "trace, or a database.\n\ncommands:\n", out);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-14s %s\n", commands[i].name, commands[i].summary);
	fputs("  help CMD       show a command's options\n\n"
	      "'traceanalyze COMMAND --help' lists a command's options; "
	      "see traceanalyze(1).\n", out);
}

static const struct command *find(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int run(int argc, char **argv);

static void not_a_command(const char *name)
{
	size_t i, best = 0, d = 99;

	for (i = 0; i < NCOMMANDS; i++) {
		size_t e = ta_edit_distance(name, strlen(name), commands[i].name);

		if (e < d)
			d = e, best = i;
	}
	if (d <= 2)
		fprintf(stderr, "traceanalyze: '%s' is not a command; did you mean "
			"'%s'?\n", name, commands[best].name);
	else
		fprintf(stderr, "traceanalyze: '%s' is not a command; see "
			"'traceanalyze --help'\n", name);
}

/* Options given before the command (traceanalyze --hta-compat temporal
 * DIR) are the command's: the command moves to the front. These take a
 * value as the next word unless written --opt=value. */
static int takes_value(const char *opt)
{
	static const char *const with_value[] = { "--format", "--ranks",
		"--window", "--output", "-o", "--fail-if", "--baseline",
		"--max-increase", "--jobs", "-j", "--missing", NULL };
	size_t i;

	for (i = 0; with_value[i]; i++)
		if (strcmp(opt, with_value[i]) == 0)
			return 1;
	return 0;
}

static void command_first(int argc, char **argv)
{
	int k = 1, i;
	char *cmd;

	while (k < argc && argv[k][0] == '-' && argv[k][1] &&
	       strcmp(argv[k], "--") != 0)
		k += takes_value(argv[k]) ? 2 : 1;
	if (k <= 1 || k >= argc || strcmp(argv[k], "--") == 0)
		return;
	cmd = argv[k];
	for (i = k; i > 1; i--)
		argv[i] = argv[i - 1];
	argv[1] = cmd;
}

/* --help or --version into /dev/full or a closed stdout is an error too */
int main(int argc, char **argv)
{
	int rc = run(argc, argv);

	if (rc == TA_EXIT_OK)
		rc = ta_cli_finish_output(stdout, "stdout");
	return rc;
}

static int run(int argc, char **argv)
{
	const struct command *c;

	/* a closed pipe shows up as EPIPE on write, handled quietly */
	signal(SIGPIPE, SIG_IGN);
	/* a file-size limit shows up as EFBIG on write, handled as an error */
	signal(SIGXFSZ, SIG_IGN);
	ta_db_global_init();
	if (argc < 2) {
		usage(stderr);
		return TA_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return TA_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("traceanalyze %s\n", TA_VERSION);
		return TA_EXIT_OK;
	}
	command_first(argc, argv);
	if (strcmp(argv[1], "help") == 0) {
		char *help_argv[] = { argc > 2 ? argv[2] : argv[1], "--help", NULL };

		if (argc < 3) {
			usage(stdout);
			return TA_EXIT_OK;
		}
		c = find(argv[2]);
		if (c)
			return c->fn(2, help_argv);
	} else {
		c = find(argv[1]);
		if (c)
			return c->fn(argc - 1, argv + 1);
	}
	if (argv[1][0] == '-') {
		fprintf(stderr, "traceanalyze: %s: no command given; see "
			"'traceanalyze --help'\n", argv[1]);
		return TA_EXIT_USAGE;
	}
	not_a_command(argc > 2 && strcmp(argv[1], "help") == 0 ? argv[2] : argv[1]);
	return TA_EXIT_USAGE;
}
