/* traceanalyze: command table and global options. */
#include "commands/cli.h"
#include "commands/commands.h"
#include "ta.h"
#include "ta_db.h"
#include "ta_parse.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>



static void usage(FILE *out)
{
	size_t i;

	fputs("usage: traceanalyze [--version] [--help] COMMAND [options] PATH\n\n"
	      "Analyse PyTorch profiler (Kineto) traces: where GPU time went and "
	      "why the GPU\nwas idle. PATH is a directory of per-rank traces, one "
	      "trace, or a database.\n\ncommands:\n", out);
	for (i = 0; ta_commands[i]; i++)
		fprintf(out, "  %-14s %s\n", ta_commands[i]->name, ta_commands[i]->summary);
	fputs("  help CMD       show a command's options\n\n"
	      "'traceanalyze COMMAND --help' lists a command's options; "
	      "see traceanalyze(1).\n", out);
}

static int run(int argc, char **argv);

/* A command with a main of its own, or an analysis alone (its info). */
static int dispatch(const struct ta_command *c, int argc, char **argv)
{
	if (c->fn)
		return c->fn(argc, argv);
	return ta_cli_main(argc, argv, c->info, c->info->run, c->info->ctx, NULL);
}

static void not_a_command(const char *name)
{
	size_t i, best = 0, d = 99;

	for (i = 0; ta_commands[i]; i++) {
		size_t e = ta_edit_distance(name, strlen(name), ta_commands[i]->name);

		if (e < d)
			d = e, best = i;
	}
	if (d <= 2)
		fprintf(stderr, "traceanalyze: '%s' is not a command; did you mean "
			"'%s'?\n", name, ta_commands[best]->name);
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
	const struct ta_command *c;
	size_t i;

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
		printf("traceanalyze %s (inflate: %s)\n", TA_VERSION, ta_parse_inflater());
		return TA_EXIT_OK;
	}
	/* for scripts (the completion, the tests): name, spread, PATHs */
	if (strcmp(argv[1], "--list-commands") == 0) {
		for (i = 0; (c = ta_commands[i]); i++)
			printf("%s\t%s\t%d\n", c->name, ta_spread_name(c->spread), c->paths);
		return TA_EXIT_OK;
	}
	command_first(argc, argv);
	if (strcmp(argv[1], "help") == 0) {
		char *help_argv[] = { argc > 2 ? argv[2] : argv[1], "--help", NULL };

		if (argc < 3) {
			usage(stdout);
			return TA_EXIT_OK;
		}
		c = ta_command_find(argv[2]);
		if (c)
			return dispatch(c, 2, help_argv);
	} else {
		c = ta_command_find(argv[1]);
		if (c)
			return dispatch(c, argc - 1, argv + 1);
	}
	if (argv[1][0] == '-') {
		fprintf(stderr, "traceanalyze: %s: no command given; see "
			"'traceanalyze --help'\n", argv[1]);
		return TA_EXIT_USAGE;
	}
	not_a_command(argc > 2 && strcmp(argv[1], "help") == 0 ? argv[2] : argv[1]);
	return TA_EXIT_USAGE;
}
