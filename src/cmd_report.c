/* traceanalyze report: the core analyses (temporal, idle, kernel types,
 * overlap) over one database, printed together. */
#include "cli.h"
#include "ta_people.h"
#include "commands.h"

#include <string.h>

#define REPORT_IDLE_ROWS 8  /* text: the largest idle rows only */

enum { T_TEMPORAL, T_IDLE, T_TYPES, T_OVERLAP, NTABLES };
static const char *const keys[NTABLES] = { "temporal", "idle", "kernel_types",
					   "overlap" };

static int run_all(sqlite3 *db, const struct ta_cli *cli,
		   struct ta_table **t, struct ta_error *err)
{
	struct ta_idle_opts idle = { 30000, NULL, 0, 0 };
	struct ta_kernels_opts types = { 1, 10, 0.8, 1 };

	if (ta_temporal_run(db, &cli->query, &t[T_TEMPORAL], err) < 0 ||
	    ta_idle_run(db, &cli->query, &idle, &t[T_IDLE], err) < 0 ||
	    ta_kernels_run(db, &cli->query, &types, &t[T_TYPES], err) < 0 ||
	    ta_overlap_run(db, &cli->query, &t[T_OVERLAP], err) < 0)
		return -1;
	if (cli->format == TA_FMT_TEXT)
		ta_people_idle(t[T_IDLE]);
	return 0;
}

static void write_all(FILE *out, struct ta_table **t, enum ta_format f)
{
	int i;

	if (f == TA_FMT_JSON)
		fputc('{', out);
	for (i = 0; i < NTABLES; i++) {
		if (f == TA_FMT_JSON) {
			fprintf(out, "%s\"%s\": ", i ? ",\n " : "\n ", keys[i]);
		} else if (f == TA_FMT_CSV) {
			fprintf(out, "%s# %s\n", i ? "\n" : "", keys[i]);
		} else {
			if (i)
				fputc('\n', out);
			if (i == T_IDLE && t[i]->nrows > REPORT_IDLE_ROWS)
				t[i]->nrows = REPORT_IDLE_ROWS; /* cells freed later */
		}
		ta_report_write(out, t[i], f);
	}
	if (f == TA_FMT_JSON)
		fputs("}\n", out);
}

static int report(const struct ta_cli *cli)
{
	struct ta_table *t[NTABLES] = { NULL };
	struct ta_error err = { 0, "" };
	size_t keep_idle = 0;
	sqlite3 *db = NULL;
	FILE *out;
	int rc, i, retried = 0;

	if (cli->columns) {
		fputs("traceanalyze: report has four tables; ask each analysis "
		      "for its --columns\n", stderr);
		return TA_EXIT_USAGE;
	}
	if (cli->ngates || cli->baseline || cli->nincreases) {
		fputs("traceanalyze: report takes no gates; use them with the "
		      "analysis itself (e.g. temporal --fail-if)\n", stderr);
		return TA_EXIT_USAGE;
	}
	if (ta_cli_check_output(cli, 0, &err) < 0)
		return ta_cli_error(&err);
again:
	rc = ta_cli_open_input(cli, &db);
	if (rc != TA_EXIT_OK)
		return rc;
	if (run_all(db, cli, t, &err) < 0) {
		int retry = ta_cli_damaged(db, &retried, &err);

		sqlite3_close(db);
		for (i = 0; i < NTABLES; i++) {
			ta_table_free(t[i]);
			t[i] = NULL;
		}
		if (retry)
			goto again;
		return ta_cli_error(&err);
	}
	sqlite3_close(db);
	if (!(out = ta_cli_output_open(cli))) {
		rc = TA_EXIT_SYSTEM;
		goto done;
	}
	keep_idle = t[T_IDLE]->nrows;
	write_all(out, t, cli->format);
	t[T_IDLE]->nrows = keep_idle;
	rc = ta_cli_output_close(cli, out, t, NTABLES);
done:
	for (i = 0; i < NTABLES; i++)
		ta_table_free(t[i]);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	static const struct ta_cmd_info info = {
		"report", "[options] PATH",
		"The core analyses in one run over one database: temporal breakdown, "
		"idle time\n(text: the largest rows), GPU time by kernel type, and "
		"communication overlap.\n--format json: one object with the keys "
		"temporal, idle, kernel_types, overlap;\n--format csv: the four "
		"tables, each after a line \"# NAME\".",
		NULL, ta_cli_no_opts, NULL, NULL,
		NULL
	};
	struct ta_cli cli;
	int rc = ta_cli_parse(argc, argv, &info, &cli);

	if (rc == 0)
		rc = report(&cli);
	else
		rc = rc > 0 ? TA_EXIT_OK : TA_EXIT_USAGE;
	ta_cli_free(&cli);
	return rc;
}
