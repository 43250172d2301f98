/* traceanalyze ingest: parse traces into a database kept by the user, or
 * into shards, a database per trace file, in a directory. */
#include "cli.h"
#include "ta_files.h"
#include "commands.h"
#include "ta_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int is_dir(const char *path)
{
	struct stat sb;
	size_t n = strlen(path);

	return (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) || (n && path[n - 1] == '/');
}

/* DIR/NAME.tadb for a trace file DIR2/NAME.json[.gz]. */
static char *shard_name(const char *dir, const char *file)
{
	const char *base = strrchr(file, '/');
	char *out;
	size_t n;

	base = base ? base + 1 : file;
	n = strlen(base);
	if (n > 8 && strcmp(base + n - 8, ".json.gz") == 0)
		n -= 8;
	else if (n > 5 && strcmp(base + n - 5, ".json") == 0)
		n -= 5;
	out = ta_xmalloc(strlen(dir) + n + 8);
	sprintf(out, "%s/%.*s.tadb", dir, (int)n, base);
	return out;
}

/* One shard per trace file of every PATH: each written under a temp name
 * in DIR and renamed when complete, so that processes on other machines
 * may write other shards there at the same time (nothing is locked: NFS
 * is fine), and a reader never sees half a shard. -j N: N files at once,
 * a process and a database writer each (ta_shards_build). */
static int shards(struct ta_cli *cli, const char *dir)
{
	struct ta_error err = { 0, "", 0 };
	char **all = NULL, **outs = NULL;
	size_t n = 0, i;
	int a, rc = TA_EXIT_OK;

	if (mkdir(dir, 0755) < 0 && !is_dir(dir)) {
		fprintf(stderr, "traceanalyze: cannot make the directory '%s'\n", dir);
		return TA_EXIT_SYSTEM;
	}
	for (a = 0; a < cli->nargs && rc == TA_EXIT_OK; a++) {
		char **files = NULL;
		size_t k = 0;

		if (ta_input_list(cli->args[a], &files, &k, &err) < 0) {
			rc = ta_cli_error(&err);
			break;
		}
		all = ta_xrealloc(all, (n + k + 1) * sizeof(*all));
		outs = ta_xrealloc(outs, (n + k + 1) * sizeof(*outs));
		for (i = 0; i < k; i++, n++) {
			all[n] = files[i];
			outs[n] = shard_name(dir, files[i]);
		}
		free(files);
	}
	/* two traces of one name (a/trace.json and b/trace.json, or
	 * rank-0.json and rank-0.json.gz) would be one shard: one rank gone */
	for (i = 0; rc == TA_EXIT_OK && i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(outs[i], outs[j]) == 0) {
				fprintf(stderr, "traceanalyze: '%s' and '%s' would both be "
					"the shard '%s': rename one (shards are named after "
					"their trace's file name)\n", all[j], all[i], outs[i]);
				rc = TA_EXIT_USAGE;
				break;
			}
	/* a shard replaces a shard: a FIFO, a link or a directory of its name
	 * is left as it is */
	for (i = 0; rc == TA_EXIT_OK && i < n; i++) {
		struct stat sb;

		if (lstat(outs[i], &sb) == 0 && !S_ISREG(sb.st_mode)) {
			fprintf(stderr, "traceanalyze: '%s' is %s; a shard replaces a "
				"regular file only\n", outs[i], S_ISLNK(sb.st_mode) ?
				"a symbolic link" : ta_file_kind(sb.st_mode));
			rc = TA_EXIT_USAGE;
		}
	}
	if (rc == TA_EXIT_OK && ta_shards_build(all, outs, n, &cli->ingest, 0, NULL, &err) < 0)
		rc = ta_cli_error(&err);
	if (rc == TA_EXIT_OK && !ta_quiet)
		fprintf(stderr, "traceanalyze: %zu shard%s in %s\n", n, n == 1 ? "" : "s", dir);
	for (i = 0; i < n; i++) {
		free(all[i]);
		free(outs[i]);
	}
	free(all);
	free(outs);
	return rc;
}

static int cmd_ingest(int argc, char **argv)
{
	static const struct ta_cmd_info info = {
		"ingest", "[options] PATH -o DB | PATH... -o DIR/",
		"Parse the traces of PATH into the SQLite database DB, which every "
		"command\naccepts as PATH. The schema: 'traceanalyze schema'. With "
		"-o naming a directory\n(it exists, or ends in /): one shard per trace "
		"file, DIR/NAME.tadb, written\nsafely beside other writers, -j N files "
		"at once (a process each); every\ncommand accepts the directory as PATH.",
		NULL, NULL, NULL, NULL,
		NULL, { NULL }
	};
	struct ta_error err = { 0, "", 0 };
	struct ta_cli cli;
	char **files = NULL;
	size_t n = 0;
	int rc = ta_cli_parse(argc, argv, &info, &cli);

	if (rc != 0) {
		ta_cli_free(&cli);
		return rc > 0 ? 0 : 2;
	}
	if (cli.output && strcmp(cli.output, "-") != 0 && !cli.columns &&
	    cli.nargs >= 1 && is_dir(cli.output)) {
		/* files to keep, complete: a command never writes into a
		 * user's shard (its indexes, made when read, did) */
		cli.ingest.lazy_indexes = ~0u;
		cli.ingest.finish = ta_model_keep;
		cli.ingest.note_written = !cli.ingest.no_cache;
		rc = shards(&cli, cli.output);
		ta_cli_free(&cli);
		return rc;
	}
	if (cli.nargs != 1 || !cli.output || strcmp(cli.output, "-") == 0 ||
	    cli.columns) {
		fputs("traceanalyze: ingest needs one PATH and -o DB (a file), or "
		      "PATH... and -o DIR/\n", stderr);
		ta_cli_free(&cli);
		return TA_EXIT_USAGE;
	}
	cli.ingest.lazy_indexes = ~0u; /* a database to keep: complete */
	cli.ingest.finish = ta_model_keep;
	cli.ingest.note_written = !cli.ingest.no_cache;
	if (ta_cli_check_output(&cli, 1, &err) < 0)
		rc = ta_cli_error(&err);
	else if (ta_input_list(cli.args[0], &files, &n, &err) < 0 ||
		 ta_ingest(files, n, cli.output, &cli.ingest, &err) < 0)
		rc = ta_cli_error(&err);
	ta_input_list_free(files, n);
	ta_cli_free(&cli);
	return rc;
}

const struct ta_command ta_command_ingest = {
	"ingest", cmd_ingest, "parse traces into a database for later commands",
	TA_SPREAD_NONE, NULL, 0, { [TA_MODE_HTA] = TA_COMPAT_RULES }, NULL
};
