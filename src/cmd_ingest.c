/* traceanalyze ingest: parse traces into a database kept by the user. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

int cmd_ingest(int argc, char **argv)
{
	static const struct ta_cmd_info info = {
		"ingest", "[options] PATH -o DB",
		"Parse the traces of PATH into the SQLite database DB, which every "
		"command\naccepts as PATH. The schema: 'traceanalyze schema'.",
		NULL, ta_cli_no_opts, NULL, NULL,
		NULL
	};
	struct ta_error err = { 0, "" };
	struct ta_cli cli;
	char **files = NULL;
	size_t n = 0;
	int rc = ta_cli_parse(argc, argv, &info, &cli);

	if (rc != 0) {
		ta_cli_free(&cli);
		return rc > 0 ? 0 : 2;
	}
	if (cli.nargs != 1 || !cli.output || strcmp(cli.output, "-") == 0 ||
	    cli.columns) {
		fputs("traceanalyze: ingest needs one PATH and -o DB (a file)\n",
		      stderr);
		ta_cli_free(&cli);
		return TA_EXIT_USAGE;
	}
	cli.ingest.lazy_indexes = ~0u; /* a database to keep: complete */
	if (ta_cli_check_output(&cli, 1, &err) < 0)
		rc = ta_cli_error(&err);
	else if (ta_input_list(cli.args[0], &files, &n, &err) < 0 ||
		 ta_ingest(files, n, cli.output, &cli.ingest, &err) < 0)
		rc = ta_cli_error(&err);
	ta_input_list_free(files, n);
	ta_cli_free(&cli);
	return rc;
}
