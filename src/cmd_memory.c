/* traceanalyze memory: peak, growth and who allocated it, from the
 * trace's [memory] events. */
#include "cli.h"
#include "commands.h"
#include "ta_people.h"

#include <stdlib.h>
#include <string.h>

enum { OPT_BY = 1, OPT_SERIES, OPT_BUCKET, OPT_FINDINGS, OPT_LEAKS };

static const struct ta_opt opts[] = {
	{ "by", 1, OPT_BY, "op|annotation|stack", "per site instead, named by the innermost CPU op, record_function range or Python frame over each allocation: rank,device,where,allocs,bytes,live_at_peak_bytes,never_freed_bytes" },
	{ "series", 0, OPT_SERIES, NULL, "the allocated and reserved bytes over time instead: rank,device,ts,allocated_bytes,reserved_bytes" },
	{ "bucket-us", 1, OPT_BUCKET, "US", "with --series: the highest in each bucket of US" },
	{ "leaks", 0, OPT_LEAKS, NULL, "an allocator snapshot: allocations never freed whose site allocated two or more times: device,where,allocs,bytes,bytes_each" },
	{ "findings", 0, OPT_FINDINGS, NULL, "what is worth saying instead: rank,device,kind,bytes,where (memory_growth, memory_peak, memory_fragmentation)" },
	{ NULL, 0, 0, NULL, NULL }
};

struct mem_cmd {
	struct ta_memory_opts o;
	int findings;
	struct ta_table *found;   /* text: said before the steps */
};

static int on_opt(void *ctx, int key, const char *arg)
{
	struct mem_cmd *c = ctx;

	switch (key) {
	case OPT_BY:
		c->o.by_site = 1;
		c->o.by = strcmp(arg, "op") == 0 ? TA_MEM_BY_OP :
			  strcmp(arg, "annotation") == 0 ? TA_MEM_BY_ANNOTATION :
			  strcmp(arg, "stack") == 0 ? TA_MEM_BY_STACK : (enum ta_mem_by)-1;
		return (int)c->o.by < 0 ? -1 : 0;
	case OPT_SERIES:
		c->o.series = 1;
		return 0;
	case OPT_BUCKET:
		return ta_cli_parse_us(arg, &c->o.bucket_ns) < 0 || c->o.bucket_ns <= 0 ? -1 : 0;
	case OPT_FINDINGS:
		c->findings = 1;
		return 0;
	case OPT_LEAKS:
		c->o.leaks = 1;
		return 0;
	}
	return -1;
}

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	struct mem_cmd *c = ctx;
	struct ta_table *t, *f;

	if (q->hta_compat) {
		ta_error_set(err, TA_EXIT_USAGE, "memory has no HTA counterpart: "
			     "--hta-compat does not apply");
		return -1;
	}
	if (c->o.bucket_ns && !c->o.series) {
		ta_error_set(err, TA_EXIT_USAGE, "--bucket-us goes with --series");
		return -1;
	}
	if (ta_memory_run(db, q, &c->o, &t, &f, err) < 0)
		return -1;
	ta_table_free(c->found);
	c->found = NULL;
	if (c->findings) {
		ta_table_free(t);
		*out = f;
	} else {
		*out = t;
		c->found = f;
	}
	return 0;
}

static void present(struct ta_table *t, void *ctx)
{
	struct mem_cmd *c = ctx;

	if (c->found && !c->o.series)
		ta_people_memory(t, c->found);
	if (t->ncols > 1 && strcmp(t->cols[1].name, "baseline_bytes") == 0)
		ta_people_snapshot(t);
}

static void after_parse(void *ctx, struct ta_cli *cli)
{
	(void)ctx;
	cli->ingest.lazy_indexes |= ta_model_lazy_indexes(TA_NEED_HOST | TA_NEED_MEM);
}

int cmd_memory(int argc, char **argv)
{
	struct mem_cmd c = { { 0, TA_MEM_BY_ANNOTATION, 0, 0, 0 }, 0, NULL };
	const struct ta_cmd_info info = {
		"memory", "[options] PATH",
		"Per rank, device and kept step, from the allocator's [memory] events "
		"(profile with\nprofile_memory=True): the allocated bytes at the step's "
		"start and end, its peak\nand when, growth, allocations, frees and the "
		"peak of reserved bytes:\nrank,device,step,start_bytes,end_bytes,"
		"peak_bytes,peak_ts,growth_bytes,allocs,\nfrees,reserved_peak_bytes. "
		"PATH may also be an allocator snapshot (torch.cuda.memory.\n"
		"_dump_snapshot, gzipped or not): per device device,baseline_bytes,"
		"peak_bytes,\npeak_time_us,activations_bytes,reserved_at_peak_bytes,"
		"fragmentation_bytes,\nlargest_free_bytes.",
		opts, on_opt, &c, present,
		run
	};
	int rc = ta_cli_main(argc, argv, &info, run, &c, after_parse);

	ta_table_free(c.found);
	return rc;
}
