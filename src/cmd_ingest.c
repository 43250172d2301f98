/* traceanalyze ingest: parse traces into a database kept by the user, or
 * into shards, a database per trace file, in a directory. */
#include "cli.h"
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* One shard: a child's work when several run at once. */
static int one_shard(struct ta_cli *cli, const char *dir, char *file)
{
	struct ta_error err = { 0, "" };
	char *out = shard_name(dir, file);
	int rc = ta_ingest(&file, 1, out, &cli->ingest, &err) < 0 ? ta_cli_error(&err) : 0;

	free(out);
	return rc;
}

/* Waits for one child; its exit status, or TA_EXIT_SYSTEM if it died. */
static int reap(size_t *running)
{
	int status;

	if (wait(&status) < 0)
		return TA_EXIT_SYSTEM;
	(*running)--;
	return WIFEXITED(status) ? WEXITSTATUS(status) : TA_EXIT_SYSTEM;
}

/* One shard per trace file of every PATH: each written under a temp name
 * in DIR and renamed when complete, so that processes on other machines
 * may write other shards there at the same time (nothing is locked: NFS
 * is fine), and a reader never sees half a shard. -j N: N files at once,
 * a process each, each with its own writer (one writer is what limits a
 * single database). */
static int shards(struct ta_cli *cli, const char *dir)
{
	struct ta_error err = { 0, "" };
	size_t done = 0, running = 0;
	int a, rc = TA_EXIT_OK, jobs = cli->ingest.jobs > 0 ? cli->ingest.jobs : ta_cores();

	if (mkdir(dir, 0755) < 0 && !is_dir(dir)) {
		fprintf(stderr, "traceanalyze: cannot make the directory '%s'\n", dir);
		return TA_EXIT_SYSTEM;
	}
	for (a = 0; a < cli->nargs && rc == TA_EXIT_OK; a++) {
		char **files = NULL;
		size_t n = 0, i;

		if (ta_input_list(cli->args[a], &files, &n, &err) < 0) {
			rc = ta_cli_error(&err);
			break;
		}
		for (i = 0; i < n && rc == TA_EXIT_OK; i++) {
			pid_t pid;
			int r;

			if (jobs <= 1 || n == 1) {
				rc = one_shard(cli, dir, files[i]);
				done += rc == TA_EXIT_OK;
				continue;
			}
			while (running >= (size_t)jobs)
				if ((r = reap(&running)) != TA_EXIT_OK && rc == TA_EXIT_OK)
					rc = r;
				else if (r == TA_EXIT_OK)
					done++;
			if (rc != TA_EXIT_OK)
				break;
			fflush(NULL);
			pid = fork();
			if (pid == 0) {
				cli->ingest.jobs = 1;
				cli->ingest.progress = NULL;   /* one terminal, many writers */
				_exit(one_shard(cli, dir, files[i]));
			}
			if (pid < 0) {
				fprintf(stderr, "traceanalyze: cannot start a process: %s\n",
					strerror(errno));
				rc = TA_EXIT_SYSTEM;
				break;
			}
			running++;
		}
		while (running) {
			int r = reap(&running);

			if (r != TA_EXIT_OK && rc == TA_EXIT_OK)
				rc = r;
			else if (r == TA_EXIT_OK)
				done++;
		}
		ta_input_list_free(files, n);
	}
	if (rc == TA_EXIT_OK && !ta_quiet)
		fprintf(stderr, "traceanalyze: %zu shard%s in %s\n", done,
			done == 1 ? "" : "s", dir);
	return rc;
}

int cmd_ingest(int argc, char **argv)
{
	static const struct ta_cmd_info info = {
		"ingest", "[options] PATH -o DB | PATH... -o DIR/",
		"Parse the traces of PATH into the SQLite database DB, which every "
		"command\naccepts as PATH. The schema: 'traceanalyze schema'. With "
		"-o naming a directory\n(it exists, or ends in /): one shard per trace "
		"file, DIR/NAME.tadb, written\nsafely beside other writers; every "
		"command accepts the directory as PATH.",
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
	if (cli.output && strcmp(cli.output, "-") != 0 && !cli.columns &&
	    cli.nargs >= 1 && is_dir(cli.output)) {
		cli.ingest.lazy_indexes = 0; /* merged, then indexed, when read */
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
	if (ta_cli_check_output(&cli, 1, &err) < 0)
		rc = ta_cli_error(&err);
	else if (ta_input_list(cli.args[0], &files, &n, &err) < 0 ||
		 ta_ingest(files, n, cli.output, &cli.ingest, &err) < 0)
		rc = ta_cli_error(&err);
	ta_input_list_free(files, n);
	ta_cli_free(&cli);
	return rc;
}
