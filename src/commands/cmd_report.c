/* traceanalyze report: the core analyses (temporal, idle, kernel types,
 * overlap) over one database, printed together. */
#include "cli.h"
#include "exec/plan.h"
#include "ta_db.h"
#include "ta_html.h"
#include "ta_ingest.h"
#include "ta_people.h"
#include "commands.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REPORT_IDLE_ROWS 8  /* text: the largest idle rows only */

enum { T_TEMPORAL, T_IDLE, T_TYPES, T_OVERLAP, NTABLES };
static const char *const keys[NTABLES] = { "temporal", "idle", "kernel_types",
					   "overlap" };

/* The four tables, each a section of the executor's (exec/plan.h): on
 * shards by its command's rule where the plan has them, else on the
 * merged database. */
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

static int kernels_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
		      struct ta_table **out, struct ta_error *err)
{
	return ta_kernels_run(db, q, ctx, out, err);
}

static int overlap_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
		      struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_overlap_run(db, q, out, err);
}

static int run_core(struct ta_plan *p, struct ta_table **t, struct ta_error *err)
{
	struct ta_kernels_opts types = ta_kernels_defaults;
	const struct {
		ta_analysis_fn fn;
		void *ctx;
		const struct ta_shard_rule *rule;
	} sections[NTABLES] = {
		[T_TEMPORAL] = { temporal_fn, NULL, &ta_shard_per_rank },
		[T_IDLE] = { idle_fn, NULL, &ta_shard_per_rank },
		[T_TYPES] = { kernels_fn, &types, &ta_shard_kernel_types },
		[T_OVERLAP] = { overlap_fn, NULL, &ta_shard_with_peers },
	};
	int i;

	types.by_type = 1;   /* kernels --by type */
	for (i = 0; i < NTABLES; i++)
		if (ta_plan_run(p, sections[i].rule, sections[i].fn, sections[i].ctx,
				NULL, NULL, &t[i], err) < 0)
			return -1;
	/* its temporal table is temporal's: named as the mode names it */
	if (ta_compat_names(p->cli->query.mode, "temporal"))
		ta_table_rename(t[T_TEMPORAL], ta_compat_names(p->cli->query.mode,
							       "temporal"));
	if (p->cli->format == TA_FMT_TEXT)
		ta_people_idle(t[T_IDLE]);
	return 0;
}

/* run_core as a section beside the page's others (report --html): may
 * run twice (ta_plan_beside), so frees what a first try left. */
static int run_core_beside(struct ta_plan *p, void *ctx, struct ta_error *err)
{
	struct ta_table **t = ctx;
	int i;

	for (i = 0; i < NTABLES; i++) {
		ta_table_free(t[i]);
		t[i] = NULL;
	}
	return run_core(p, t, err);
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

/* DIR exists as a directory, or is made (its parent must exist). */
static int made_dir(const char *dir)
{
	struct stat sb;

	errno = 0;
	if (stat(dir, &sb) == 0) {
		errno = S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
		return S_ISDIR(sb.st_mode);
	}
	return mkdir(dir, 0777) == 0;
}

/* --csv-dir: each table to DIR/NAME.csv, written whole or not at all
 * (the output's own temporary name and rename). */
static int write_csv_dir(const struct ta_cli *cli, const char *dir,
			 struct ta_table **t)
{
	struct ta_cli one = *cli;
	char path[PATH_MAX];
	int i, rc = TA_EXIT_OK;

	for (i = 0; i < NTABLES && rc == TA_EXIT_OK; i++) {
		FILE *out;

		snprintf(path, sizeof(path), "%s/%s.csv", dir, keys[i]);
		one.output = path;
		if (!(out = ta_cli_output_open(&one)))
			return TA_EXIT_SYSTEM;
		ta_report_write(out, t[i], TA_FMT_CSV);
		rc = ta_cli_output_close(&one, out, &t[i], 1);
	}
	return rc;
}

struct report_opts {
	const char *html;
	const char *csv_dir;     /* a CSV file per table in it */
	const char *snapshot;    /* --snapshot: an allocator snapshot of the run */
	int64_t snap_bucket;     /* its curve's bucket, in events */
};

#define O struct report_opts
static const struct ta_opt opts[] = {
	TA_STRING("html", "OUT", O, html, "one self-contained HTML page instead, with figures, written to OUT (- for standard output)"),
	TA_STRING("csv-dir", "DIR", O, csv_dir, "CSV: each table in a file of its own, DIR/temporal.csv, idle.csv, kernel_types.csv, overlap.csv (one stream of four tables reads as one in pandas)"),
	TA_STRING("snapshot", "SNAP", O, snapshot, "with --html: an allocator snapshot of the same run (torch.cuda.memory._dump_snapshot): its verdict, the peak placed in the trace, and its curve"),
	TA_OPT_END
};
#undef O

/* The page's extra tables: the top kernels, diagnose, stragglers with
 * several ranks, and memory over time with [memory] events. */
enum { H_KERNELS, H_DIAGNOSE, H_FINDINGS, H_STRAGGLERS, H_MEMORY, H_MEMF, H_SNAP,
       H_SNAP_SERIES, H_ROOF, H_ROOF_STEPS, H_OVERVIEW, H_MODULES, H_COMM_STEPS, NHTML };

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
	ta_warn_lines(&h[H_SNAP]->warnings);   /* another run's snapshot? */
	rc = 0;
out:
	sqlite3_close(snap);
	return rc;
}

/* memory as a section: its findings as the second table (->also), which
 * shards hand back with their rows. */
static int memory_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
		     struct ta_table **out, struct ta_error *err)
{
	struct ta_table *found = NULL;

	if (ta_memory_run(db, q, ctx, out, &found, err) < 0)
		return -1;
	(*out)->also = found;
	return 0;
}

static int roofline_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
		       struct ta_table **out, struct ta_error *err)
{
	return ta_roofline_run(db, q, ctx, out, err);
}

static int stragglers_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
			 struct ta_table **out, struct ta_error *err)
{
	return ta_stragglers_run(db, q, ctx, out, err);
}

static int overview_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
		       struct ta_table **out, struct ta_error *err)
{
	return ta_overview_run(db, q, ctx, out, err);
}

static int modules_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
		      struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_modules_run(db, q, out, err);
}

static int comm_steps_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
			 struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_overlap_steps_run(db, q, out, err);
}

static int facts_fn(sqlite3 *db, const struct ta_query *q, void *ctx,
		    struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_model_facts_rows(db, q, out, err);
}

/* The page's diagnose and rooflines: beside the rest where the plan
 * allows (ta_plan_beside), the findings' roofline and the page's sharing
 * one connection's tables. Runs again on a failure there: starts over. */
struct html_beside {
	struct ta_table **h;
	struct ta_diagnose_section d;
	struct ta_roofline_opts roof, roof_steps;
};

static int run_beside(struct ta_plan *p, void *ctx, struct ta_error *err)
{
	struct html_beside *b = ctx;
	struct ta_table **h = b->h;
	struct ta_diagnose_section d = { ta_diagnose_defaults, 0, 0, NULL, 1 };
	int rc;

	ta_table_free(h[H_DIAGNOSE]);
	ta_table_free(h[H_FINDINGS]);
	ta_table_free(h[H_ROOF]);
	ta_table_free(h[H_ROOF_STEPS]);
	h[H_DIAGNOSE] = h[H_FINDINGS] = h[H_ROOF] = h[H_ROOF_STEPS] = NULL;
	b->d = d;
	b->roof = b->roof_steps = ta_roofline_defaults;
	b->roof_steps.by = TA_ROOF_BY_STEP;
	rc = ta_plan_run(p, &ta_shard_diagnose, ta_diagnose_section_run, &b->d,
			 NULL, NULL, &h[H_DIAGNOSE], err);
	h[H_FINDINGS] = b->d.found;
	return rc < 0 ||
	       ta_plan_run(p, &ta_shard_per_rank, roofline_fn, &b->roof, NULL, NULL,
			   &h[H_ROOF], err) < 0 ||
	       ta_plan_run(p, &ta_shard_per_rank, roofline_fn, &b->roof_steps, NULL, NULL,
			   &h[H_ROOF_STEPS], err) < 0 ? -1 : 0;
}

/* The page's overview (the plugin's view: every GPU and host row of the
 * steps, merged in time order) in a thread of its own, where -j allows a
 * fourth: it was the longest part of the page's first thread. */
struct html_overview {
	struct ta_table **h;
	struct ta_overview_opts ov;
};

static int run_overview(struct ta_plan *p, struct html_overview *o, struct ta_error *err)
{
	ta_table_free(o->h[H_OVERVIEW]);
	o->h[H_OVERVIEW] = NULL;
	o->ov = ta_overview_defaults;
	o->ov.summary = 1;
	return ta_plan_run(p, &ta_shard_per_rank, overview_fn, &o->ov, NULL, NULL,
			   &o->h[H_OVERVIEW], err);
}

static int run_overview_beside(struct ta_plan *p, void *ctx, struct ta_error *err)
{
	return run_overview(p, ctx, err);
}

/* The page's other analyses, each a section of the plan with its
 * command's rule (on shards, each rank in its own process, parts joined);
 * f: what it says of the job, for write_html too. ov: the overview, or
 * NULL where a thread of its own makes it. */
static int run_html(struct ta_plan *p, struct report_opts *ro, struct ta_job_facts *f,
		    struct ta_table **h, struct html_overview *ov, int64_t *bucket_us,
		    struct ta_error *err)
{
	struct ta_memory_opts m = ta_memory_defaults;
	struct ta_stragglers_opts s = ta_stragglers_defaults;
	struct ta_kernels_opts top = ta_kernels_defaults;
	struct ta_table *facts = NULL;
	sqlite3 *db;

	s.ranks = p->cli->query.ranks;   /* the rows shown (--ranks) */
	s.nranks = p->cli->query.nranks;
	if (ta_plan_run(p, &ta_shard_per_rank, kernels_fn, &top, NULL, NULL,
			&h[H_KERNELS], err) < 0 ||
	    (ov && run_overview(p, ov, err) < 0) ||
	    ta_plan_run(p, &ta_shard_per_rank, facts_fn, NULL, NULL, NULL, &facts, err) < 0)
		return -1;
	ta_model_facts_of(facts, f);
	ta_table_free(facts);
	/* a job of several ranks: who holds the others back, and each step's
	 * computation and communication (each rank alone) */
	if (f->ranks > 1 &&
	    (ta_plan_run(p, &ta_shard_stragglers, stragglers_fn, &s, NULL, NULL,
			 &h[H_STRAGGLERS], err) < 0 ||
	     ta_plan_run(p, &ta_shard_per_rank, comm_steps_fn, NULL, NULL, NULL,
			 &h[H_COMM_STEPS], err) < 0))
		return -1;
	/* the module tree where the traces have nn.Module frames: a walk of
	 * every thread, which a trace without them need not pay for */
	if (f->modules &&
	    ta_plan_run(p, &ta_shard_per_rank, modules_fn, NULL, NULL, NULL,
			&h[H_MODULES], err) < 0)
		return -1;
	if (f->memory_span_ns >= 0) {
		int64_t span = f->memory_span_ns;

		/* about 400 points a line */
		*bucket_us = span / 400000 > 0 ? span / 400000 : 1;
		m.series = 1;
		m.bucket_ns = *bucket_us * 1000;
		if (ta_plan_run(p, &ta_shard_per_rank, memory_fn, &m, NULL, NULL,
				&h[H_MEMORY], err) < 0)
			return -1;
		h[H_MEMF] = h[H_MEMORY]->also;
		h[H_MEMORY]->also = NULL;
	}
	/* the snapshot's peak is placed in the one database (cmd_report
	 * gives no shard rule with --snapshot) */
	if (!ro->snapshot)
		return 0;
	return (db = ta_plan_db(p, err)) ? run_snapshot(db, p->cli, ro, h, err) : -1;
}

static int write_html(const struct ta_cli *cli, const struct report_opts *ro,
		      const struct ta_job_facts *f, struct ta_table **t,
		      struct ta_table **h, int64_t bucket_us)
{
	struct ta_cli out_cli = *cli;
	struct ta_error err = { 0, "", 0 };
	struct ta_html_page p;
	const char *html = ro->html;
	char cmds[16][600];
	const char *cmdv[16];
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
		 "# and --findings --summary", path);
	snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze kernels --by type --format csv %s",
		 path);
	snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze kernels --format csv %s", path);
	snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze overlap --format csv %s", path);
	if (h[H_COMM_STEPS])
		snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze overlap --by step --format csv %s",
			 path);
	if (h[H_STRAGGLERS])
		snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze stragglers --format csv %s",
			 path);
	snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze overview --summary --format csv %s",
		 path);
	snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze roofline --format csv %s  "
		 "# and --by step", path);
	if (h[H_MODULES])
		snprintf(cmds[n++], sizeof(cmds[0]), "traceanalyze modules --format csv %s", path);
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
	p.overview = h[H_OVERVIEW];
	p.modules = h[H_MODULES];
	p.comm_steps = h[H_COMM_STEPS];
	if (!(out = ta_cli_output_open(&out_cli)))
		return TA_EXIT_SYSTEM;
	ta_report_html(out, &p);
	rc = ta_cli_output_close(&out_cli, out, t, NTABLES);
	if (rc == TA_EXIT_OK && strcmp(html, "-") != 0 && !ta_quiet)
		fprintf(stderr, "traceanalyze: wrote %s\n", html);
	return rc;
}

static void free_tables(struct ta_table **t, struct ta_table **h,
			struct ta_job_facts *facts)
{
	int i;

	for (i = 0; i < NTABLES; i++) {
		ta_table_free(t[i]);
		t[i] = NULL;
	}
	for (i = 0; i < NHTML; i++) {
		ta_table_free(h[i]);
		h[i] = NULL;
	}
	ta_model_facts_free(facts);
	memset(facts, 0, sizeof(*facts));
}

static int report(const struct ta_cli *cli, struct report_opts *ro)
{
	const char *html = ro->html;
	struct ta_table *t[NTABLES] = { NULL };
	struct ta_table *h[NHTML] = { NULL };
	int64_t bucket_us = 0;
	struct ta_error err = { 0, "", 0 };
	size_t keep_idle = 0;
	struct ta_job_facts facts = { 0 };
	struct ta_plan plan;
	struct ta_plan_beside beside, core, overview;
	struct html_beside bh;
	struct html_overview oh;
	FILE *out;
	int rc, i, pass;

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
	if ((rc = ta_plan_open(&plan, cli)) != TA_EXIT_OK)
		return rc;
	for (pass = 0;; pass++) {
		int retried = plan.retried, threaded;

		memset(&beside, 0, sizeof(beside));
		memset(&core, 0, sizeof(core));
		memset(&overview, 0, sizeof(overview));
		oh.h = h;
		/* the page's diagnose and rooflines in a thread of their own,
		 * the four core tables in another, the database opened first
		 * (the merged way; on shards, nothing) */
		bh.h = h;
		if (html && !plan.sh && !ta_plan_db(&plan, &err)) {
			rc = -1;
		} else if (html) {
			ta_plan_beside(&plan, &beside, run_beside, &bh);
			/* two cores: a third thread's pages inflated again
			 * cost more than it saves (measured) */
			if (ta_jobs(&cli->ingest) >= 3)
				ta_plan_beside(&plan, &core, run_core_beside, t);
			if (ta_jobs(&cli->ingest) >= 4)
				ta_plan_beside(&plan, &overview, run_overview_beside, &oh);
		}
		threaded = core.started;
		if (rc < 0 || (!threaded && run_core(&plan, t, &err) < 0) ||
		    (html && run_html(&plan, ro, &facts, h, overview.started ? NULL : &oh,
				      &bucket_us, &err) < 0) ||
		    (threaded && ta_plan_join(&plan, &core, &err) < 0) ||
		    (overview.started && ta_plan_join(&plan, &overview, &err) < 0) ||
		    (html && ta_plan_join(&plan, &beside, &err) < 0)) {
			ta_plan_abandon(&core);
			ta_plan_abandon(&overview);
			ta_plan_abandon(&beside);
			ta_plan_close(&plan);
			free_tables(t, h, &facts);
			return ta_cli_error(&err);
		}
		/* a damaged cache entry was rebuilt on the way: the sections
		 * before read the damaged one (pages that read as other rows
		 * are damage SQLite may not see), so all of them again, once */
		if (plan.retried == retried || pass > 0)
			break;
		free_tables(t, h, &facts);
		bucket_us = 0;
	}
	ta_plan_close(&plan);
	if (html) {
		rc = write_html(cli, ro, &facts, t, h, bucket_us);
		ta_model_facts_free(&facts);
		for (i = 0; i < NHTML; i++)
			ta_table_free(h[i]);
		for (i = 0; i < NTABLES; i++)
			ta_table_free(t[i]);
		return rc;
	}
	if (ro->csv_dir) {
		rc = write_csv_dir(cli, ro->csv_dir, t);
		goto done;
	}
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
	struct report_opts ro = { NULL, NULL, NULL, 0 };
	const struct ta_cmd_info info = {
		"report", "[options] PATH",
		"The core analyses in one run over one database: temporal breakdown, "
		"idle time\n(text: the largest rows), GPU time by kernel type, and "
		"communication overlap.\n--format json: one object with the keys "
		"temporal, idle, kernel_types, overlap;\n--format csv --csv-dir DIR: "
		"each in DIR/NAME.csv. --html OUT: one self-contained "
		"page with\nfigures (and diagnose, the top kernels, stragglers and "
		"memory when there are\nseveral ranks and memory events); on one database its "
		"diagnose and rooflines run\non a second thread when -j allows two (the page "
		"is -j 1's, byte for byte).",
		opts, NULL, &ro, NULL,
		NULL, { NULL }
	};
	struct ta_cli cli;
	int rc = ta_cli_parse(argc, argv, &info, &cli);

	if (rc == 0 && ro.csv_dir && (ro.html || cli.format != TA_FMT_CSV || cli.output)) {
		fputs("traceanalyze: report: --csv-dir goes with --format csv, without "
		      "--html or -o\n", stderr);
		rc = TA_EXIT_USAGE;
	} else if (rc == 0 && ro.csv_dir && !made_dir(ro.csv_dir)) {
		fprintf(stderr, "traceanalyze: report: --csv-dir '%s': %s\n", ro.csv_dir,
			errno ? strerror(errno) : "not a directory");
		rc = TA_EXIT_USAGE;
	} else if (rc == 0 && cli.format == TA_FMT_CSV && !ro.csv_dir && !ro.html) {
		fputs("traceanalyze: report: four tables are not one CSV: --csv-dir DIR "
		      "writes a file each (or --format json, one document)\n", stderr);
		rc = TA_EXIT_USAGE;
	} else if (rc == 0 && ro.snapshot && !ro.html) {
		fputs("traceanalyze: report: --snapshot goes with --html (for text, "
		      "run memory --trace TRACE SNAP)\n", stderr);
		rc = TA_EXIT_USAGE;
	} else if (rc == 0) {
		/* each table and section on shards where the plan has them
		 * (run_core and run_html name their rules); --snapshot is
		 * placed in the one database */
		cli.shard_rule = ro.snapshot ? NULL : &ta_shard_per_rank;
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
