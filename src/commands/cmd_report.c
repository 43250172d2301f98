/* traceanalyze report: the core analyses (temporal, idle, kernel types,
 * overlap) over one database, printed together. */
#include "cli.h"
#include "ta_db.h"
#include "ta_html.h"
#include "ta_people.h"
#include "commands.h"

#include <stdlib.h>
#include <string.h>

#define REPORT_IDLE_ROWS 8  /* text: the largest idle rows only */

enum { T_TEMPORAL, T_IDLE, T_TYPES, T_OVERLAP, NTABLES };
static const char *const keys[NTABLES] = { "temporal", "idle", "kernel_types",
					   "overlap" };

/* report's kernel-type table: kernels --by type, with its defaults */
static struct ta_kernels_opts report_types(void)
{
	struct ta_kernels_opts o = ta_kernels_defaults;

	o.by_type = 1;
	return o;
}

static int run_all(sqlite3 *db, const struct ta_cli *cli,
		   struct ta_table **t, struct ta_error *err)
{
	struct ta_kernels_opts types = report_types();

	if (ta_temporal_run(db, &cli->query, &t[T_TEMPORAL], err) < 0 ||
	    ta_idle_run(db, &cli->query, &ta_idle_defaults, &t[T_IDLE], err) < 0 ||
	    ta_kernels_run(db, &cli->query, &types, &t[T_TYPES], err) < 0 ||
	    ta_overlap_run(db, &cli->query, &t[T_OVERLAP], err) < 0)
		return -1;
	if (cli->format == TA_FMT_TEXT)
		ta_people_idle(t[T_IDLE]);
	return 0;
}

/* On shards (or traces with -j 2 or more): each table shard by shard,
 * by its command's rule; 0 when the merged database must answer. */
static int temporal_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
		       struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_temporal_run(db, q, out, err);
}

static int idle_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
		   struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_idle_run(db, q, &ta_idle_defaults, out, err);
}

static int types_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
		    struct ta_table **out, struct ta_error *err)
{
	struct ta_kernels_opts types = report_types();

	(void)ctx;
	return ta_kernels_run(db, q, &types, out, err);
}

static int overlap_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
		      struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_overlap_run(db, q, out, err);
}

static int run_shards(const struct ta_cli *cli, struct ta_table **t)
{
	struct ta_shards *sh = ta_shards_open(cli);
	int ok, i;

	if (!sh)
		return 0;
	ok = ta_shards_run(sh, &ta_shard_per_rank, temporal_fn, NULL, &t[T_TEMPORAL]) &&
	     ta_shards_run(sh, &ta_shard_per_rank, idle_fn, NULL, &t[T_IDLE]) &&
	     ta_shards_run(sh, &ta_shard_kernel_types, types_fn, NULL, &t[T_TYPES]) &&
	     ta_shards_run(sh, &ta_shard_with_peers, overlap_fn, NULL, &t[T_OVERLAP]);
	ta_shards_close(sh, ok);
	for (i = 0; !ok && i < NTABLES; i++) {
		ta_table_free(t[i]);
		t[i] = NULL;
	}
	if (ok && cli->format == TA_FMT_TEXT)
		ta_people_idle(t[T_IDLE]);
	return ok;
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

struct report_opts {
	const char *html;
	const char *snapshot;    /* --snapshot: an allocator snapshot of the run */
	int64_t snap_bucket;     /* its curve's bucket, in events */
};

#define O struct report_opts
static const struct ta_opt opts[] = {
	TA_STRING("html", "OUT", O, html, "one self-contained HTML page instead, with figures, written to OUT (- for standard output)"),
	TA_STRING("snapshot", "SNAP", O, snapshot, "with --html: an allocator snapshot of the same run (torch.cuda.memory._dump_snapshot): its verdict, the peak placed in the trace, and its curve"),
	TA_OPT_END
};
#undef O

/* The page's extra tables: the top kernels, diagnose, stragglers with
 * several ranks, and memory over time with [memory] events. */
enum { H_KERNELS, H_DIAGNOSE, H_FINDINGS, H_STRAGGLERS, H_MEMORY, H_MEMF, H_SNAP,
       H_SNAP_SERIES, H_ROOF, H_ROOF_STEPS, NHTML };

/* --snapshot: the snapshot's summary, its peak placed in the trace (db),
 * and its curve in about 400 points. */
static int run_snapshot(sqlite3 *db, const struct ta_cli *cli, struct report_opts *ro,
			struct ta_table **h, struct ta_error *err)
{
	const char *path = ro->snapshot;
	struct ta_memory_opts m = ta_memory_defaults;
	sqlite3 *snap = NULL;
	int64_t events;
	int rc = -1;

	if (ta_input_open(path, &cli->ingest, &snap, err) < 0)
		return -1;
	if ((events = ta_model_snapshot_events(snap)) < 0) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': not an allocator snapshot", path);
		goto out;
	}
	if (ta_model_prepare(snap, &cli->query, 0, err) < 0 ||
	    ta_snapshot_mem_run(snap, &m, &h[H_SNAP], err) < 0)
		goto out;
	m.series = 1;
	ro->snap_bucket = events / 400;
	if (ro->snap_bucket < 1)
		ro->snap_bucket = 1;
	m.bucket_events = ro->snap_bucket;
	if (ta_snapshot_mem_run(snap, &m, &h[H_SNAP_SERIES], err) < 0 ||
	    ta_snapshot_place(db, &cli->query, h[H_SNAP], err) < 0)
		goto out;
	ta_people_snapshot(h[H_SNAP]);
	rc = 0;
out:
	sqlite3_close(snap);
	return rc;
}

/* The page's analyses; f: what it says of the job, for write_html too. */
static int run_html(sqlite3 *db, const struct ta_cli *cli, struct report_opts *ro,
		    struct ta_job_facts *f, struct ta_table **h, int64_t *bucket_us,
		    struct ta_error *err)
{
	struct ta_memory_opts m = ta_memory_defaults;
	struct ta_roofline_opts roof_steps = ta_roofline_defaults;
	const struct ta_kernels_opts *top = &ta_kernels_defaults;
	const struct ta_diagnose_opts *d = &ta_diagnose_defaults;
	const struct ta_roofline_opts *roof = &ta_roofline_defaults;

	m.series = 1;
	roof_steps.by = TA_ROOF_BY_STEP;

	if (ta_kernels_run(db, &cli->query, top, &h[H_KERNELS], err) < 0 ||
	    ta_diagnose_run(db, &cli->query, d, &h[H_DIAGNOSE], &h[H_FINDINGS], err) < 0 ||
	    ta_roofline_run(db, &cli->query, roof, &h[H_ROOF], err) < 0 ||
	    ta_roofline_run(db, &cli->query, &roof_steps, &h[H_ROOF_STEPS], err) < 0)
		return -1;
	ta_model_facts_free(f); /* a retry's first try */
	ta_model_facts(db, f);
	if (f->ranks > 1 &&
	    ta_stragglers_run(db, &cli->query, &ta_stragglers_defaults, &h[H_STRAGGLERS], err) < 0)
		return -1;
	if (f->memory_span_ns >= 0) {
		int64_t span = f->memory_span_ns;

		/* about 400 points a line */
		*bucket_us = span / 400000 > 0 ? span / 400000 : 1;
		m.bucket_ns = *bucket_us * 1000;
		if (ta_memory_run(db, &cli->query, &m, &h[H_MEMORY], &h[H_MEMF], err) < 0)
			return -1;
	}
	return ro->snapshot ? run_snapshot(db, cli, ro, h, err) : 0;
}

static int write_html(const struct ta_cli *cli, const struct report_opts *ro,
		      const struct ta_job_facts *f, struct ta_table **t,
		      struct ta_table **h, int64_t bucket_us)
{
	struct ta_cli out_cli = *cli;
	struct ta_error err = { 0, "" };
	struct ta_html_page p;
	const char *html = ro->html;
	char cmds[12][600];
	const char *cmdv[12];
	const char *path = cli->args[0];
	size_t n = 0, i;
	FILE *out;
	int rc;

	out_cli.output = html;
	if (ta_cli_check_output(&out_cli, 0, &err) < 0)
		return ta_cli_error(&err);
	snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze temporal --format csv %s", path);
	snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze idle --format csv %s", path);
	snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze diagnose --format csv %s  "
		 "# and --findings", path);
	snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze kernels --by type --format csv %s",
		 path);
	snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze kernels --format csv %s", path);
	snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze overlap --format csv %s", path);
	if (h[H_STRAGGLERS])
		snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze stragglers --format csv %s",
			 path);
	snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze roofline --format csv %s  "
		 "# and --by step", path);
	if (h[H_MEMORY])
		snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze memory --series "
			 "--bucket-us %lld --format csv %s", (long long)bucket_us, path);
	if (h[H_SNAP]) {
		snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze memory --trace %s --format "
			 "csv %s", path, ro->snapshot);
		snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze memory --series --bucket-events "
			 "%lld --format csv %s", (long long)ro->snap_bucket, ro->snapshot);
	}
	for (i = 0; i < n; i++)
		cmdv[i] = cmds[i];
	memset(&p, 0, sizeof(p));
	p.path = path;
	p.files = f->files;
	p.ranks = f->ranks;
	p.steps = f->steps;
	p.start = f->start;
	p.version = TA_VERSION;
	p.commands = cmdv;
	p.ncommands = n;
	p.temporal = t[T_TEMPORAL];
	p.idle = t[T_IDLE];
	p.types = t[T_TYPES];
	p.overlap = t[T_OVERLAP];
	p.kernels = h[H_KERNELS];
	p.diagnose = h[H_DIAGNOSE];
	p.findings = h[H_FINDINGS];
	p.stragglers = h[H_STRAGGLERS];
	p.memory = h[H_MEMORY];
	p.snapshot = h[H_SNAP];
	p.snapshot_series = h[H_SNAP_SERIES];
	p.roofline = h[H_ROOF];
	p.roofline_steps = h[H_ROOF_STEPS];
	if (!(out = ta_cli_output_open(&out_cli)))
		return TA_EXIT_SYSTEM;
	ta_report_html(out, &p);
	rc = ta_cli_output_close(&out_cli, out, t, NTABLES);
	if (rc == TA_EXIT_OK && strcmp(html, "-") != 0 && !ta_quiet)
		fprintf(stderr, "traceanalyze: wrote %s\n", html);
	return rc;
}

static int report(const struct ta_cli *cli, struct report_opts *ro)
{
	const char *html = ro->html;
	struct ta_table *t[NTABLES] = { NULL };
	struct ta_table *h[NHTML] = { NULL };
	int64_t bucket_us = 0;
	struct ta_error err = { 0, "" };
	size_t keep_idle = 0;
	struct ta_job_facts facts = { 0 };
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
	/* --html and -o never write over an input, --snapshot's included */
	{
		struct ta_cli with = *cli;

		ta_cli_add_input(&with, ro->snapshot);
		if (ta_cli_check_output(&with, 0, &err) < 0)
			return ta_cli_error(&err);
		if (html && ta_cli_is_input(&with, html)) {
			ta_error_set(&err, TA_EXIT_USAGE, "'%s' is an input; refusing "
				     "to write over it", html);
			return ta_cli_error(&err);
		}
	}
	/* the page reads across ranks (diagnose, stragglers): one database */
	if (!html && run_shards(cli, t))
		goto write;
again:
	rc = ta_cli_open_input(cli, &db);
	if (rc != TA_EXIT_OK) {
		ta_model_facts_free(&facts);
		return rc;
	}
	if (run_all(db, cli, t, &err) < 0 ||
	    (html && run_html(db, cli, ro, &facts, h, &bucket_us, &err) < 0)) {
		int retry = ta_cli_damaged(db, &retried, &err);

		sqlite3_close(db);
		for (i = 0; i < NTABLES; i++) {
			ta_table_free(t[i]);
			t[i] = NULL;
		}
		for (i = 0; i < NHTML; i++) {
			ta_table_free(h[i]);
			h[i] = NULL;
		}
		if (retry)
			goto again;
		ta_model_facts_free(&facts);
		return ta_cli_error(&err);
	}
	if (html) {
		rc = write_html(cli, ro, &facts, t, h, bucket_us);
		ta_model_facts_free(&facts);
		sqlite3_close(db);
		for (i = 0; i < NHTML; i++)
			ta_table_free(h[i]);
		for (i = 0; i < NTABLES; i++)
			ta_table_free(t[i]);
		return rc;
	}
	sqlite3_close(db);
write:
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

static int cmd_report(int argc, char **argv)
{
	struct report_opts ro = { NULL, NULL, 0 };
	const struct ta_cmd_info info = {
		"report", "[options] PATH",
		"The core analyses in one run over one database: temporal breakdown, "
		"idle time\n(text: the largest rows), GPU time by kernel type, and "
		"communication overlap.\n--format json: one object with the keys "
		"temporal, idle, kernel_types, overlap;\n--format csv: the four "
		"tables, each after a line \"# NAME\". --html OUT: one self-contained "
		"page with\nfigures (and diagnose, the top kernels, stragglers and "
		"memory when there are\nseveral ranks and memory events).",
		opts, NULL, &ro, NULL,
		NULL, { NULL }
	};
	struct ta_cli cli;
	int rc = ta_cli_parse(argc, argv, &info, &cli);

	if (rc == 0 && ro.snapshot && !ro.html) {
		fputs("traceanalyze: report: --snapshot goes with --html (for text, "
		      "run memory --trace TRACE SNAP)\n", stderr);
		rc = TA_EXIT_USAGE;
	} else if (rc == 0) {
		rc = report(&cli, &ro);
	}
	else
		rc = rc > 0 ? TA_EXIT_OK : TA_EXIT_USAGE;
	ta_cli_free(&cli);
	return rc;
}

const struct ta_command ta_command_report = {
	"report", cmd_report, "the core analyses together: temporal, idle, kernel types, overlap",
	TA_SPREAD_BY_OPTIONS, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_RULES }, NULL
};
