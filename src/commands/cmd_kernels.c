/* traceanalyze kernels: GPU time per kernel, or per kernel type. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kernels_cmd {
	struct ta_kernels_opts o;
	struct ta_sequences_opts s;
	int sequences, top_given;
};

enum { OPT_TOP = 1 };
enum { BY_KERNEL, BY_TYPE, BY_OP };   /* --by, as o.by_type holds it */

/* --top: names kept, and sequences kept with --sequences */
static int on_opt(void *ctx, int key, const char *arg)
{
	struct kernels_cmd *c = ctx;
	long n;

	if (key != OPT_TOP || ta_cli_parse_count(arg, 100000000, &n) < 0)
		return -1;
	c->o.top = c->s.top = (int)n;
	c->top_given = 1;
	return 0;
}

#define O struct kernels_cmd
static const struct ta_opt opts[] = {
	TA_CHOICE("by", "WHAT", O, o.by_type, "kernel|type|op", "kernel (default): per kernel name; type: per kernel type; op: per kernel and the CPU op that launched it"),
	TA_CALL("top", "N", OPT_TOP, "keep N names per rank and type, the rest in 'others' (10; 0: every name)"),
	TA_REAL("duration-ratio", "R", O, o.duration_ratio, 0, 1, "names past this share of time go to 'others' (0.8)"),
	TA_CLEAR("no-memory", O, o.include_memory, "leave memory copies and sets out"),
	TA_FLAG("sequences", O, sequences, "the kernel sequences ops launch again and again instead (fusion candidates): pattern,count,gpu_us,cpu_us,gap_us; --top 5 of them"),
	TA_STRING("op", "NAME", O, s.op, "with --sequences: only ops whose names hold NAME (HTA: required)"),
	TA_COUNT("min-len", "N", O, s.min_len, 1, 1000000, "with --sequences: ops that launched at least N kernels (3)"),
	TA_OPT_END
};
#undef O

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	struct kernels_cmd *c = ctx;

	if (c->sequences)
		return ta_sequences_run(db, q, &c->s, out, err);
	if (c->s.op || c->s.min_len != 3) {
		ta_error_set(err, TA_EXIT_USAGE, "--op and --min-len go with --sequences");
		return -1;
	}
	if (q->mode == TA_MODE_TB)
		return c->o.by_type == BY_OP ? ta_kernels_op_tb_run(db, q, out, err) :
		       ta_kernels_tb_run(db, q, out, err);
	if (c->o.by_type == BY_OP)
		return ta_kernels_by_op_run(db, q, out, err);
	return ta_kernels_run(db, q, &c->o, out, err);
}

/* --sequences on shards: each shard's patterns with exact sums, ranked
 * over all of them (ta_sequences_join) */
static int sequence_parts(sqlite3 *db, const struct ta_query *q, void *ctx,
			  struct ta_table **out, struct ta_error *err)
{
	struct kernels_cmd *c = ctx;

	return ta_sequences_parts(db, q, &c->s, out, err);
}

static struct ta_table *rank_sequences(struct ta_shards *sh, struct ta_table *parts,
				       void *ctx)
{
	struct kernels_cmd *c = ctx;

	(void)sh;
	return ta_sequences_join(parts, &c->s);
}

static int cmd_kernels(int argc, char **argv)
{
	static const struct ta_shard_rule sequences = { 0, 0, NULL, sequence_parts,
							rank_sequences };
	struct kernels_cmd o = { ta_kernels_defaults, ta_sequences_defaults, 0, 0 };
	const struct ta_cmd_info info = {
		"kernels", "[options] PATH",
		"GPU kernel breakdown per kernel name (per rank and type COMPUTATION,\n"
		"COMMUNICATION, MEMORY). With --by type, over all selected ranks, with "
		"overlaps\nas their own labels (\"COMPUTATION overlapping "
		"COMMUNICATION\"). With --by op, per rank, kernel and the CPU op that "
		"launched it\n(the innermost on the launch call's thread). With "
		"--sequences, the kernel\nsequences ops launch again and again (fusion "
		"candidates).",
		opts, on_opt, &o, NULL,
		run, { NULL }
	};
	struct ta_cli cli;
	int rc = ta_cli_parse(argc, argv, &info, &cli);

	/* the plugin's Kernel view has no options of ours */
	/* per launching op: the plugin's table, ours or its own */
	if (rc == 0 && o.o.by_type == BY_OP && cli.query.mode == TA_MODE_HTA) {
		fprintf(stderr, "traceanalyze: kernels --by op has no HTA counterpart "
			"(HTA's op to kernel table is launch --by-op --hta-compat)\n");
		rc = -1;
	}
	if (rc == 0 && o.o.by_type == BY_OP && cli.query.mode == TA_MODE_OWN &&
	    (o.sequences || o.top_given || !o.o.include_memory ||
	     o.o.duration_ratio != ta_kernels_defaults.duration_ratio)) {
		fprintf(stderr, "traceanalyze: kernels --by op lists every kernel and op: "
			"--top, --duration-ratio, --no-memory and --sequences are not its\n");
		rc = -1;
	}
	if (rc == 0 && cli.query.mode == TA_MODE_TB &&
	    (o.o.by_type == BY_TYPE || o.sequences || o.top_given || !o.o.include_memory ||
	     o.o.duration_ratio != ta_kernels_defaults.duration_ratio || o.s.op ||
	     o.s.min_len != ta_sequences_defaults.min_len)) {
		fprintf(stderr, "traceanalyze: kernels --tb-compat is the TensorBoard plugin's "
			"Kernel view: --by type, --top, --duration-ratio, --no-memory and "
			"--sequences are not its; leave them out\n");
		rc = -1;
	}
	/* on shards: per kernel name, a rank's rows are its own; --by type
	 * adds up over ranks: each shard's table, joined; --sequences too
	 * (HTA's reads rank 0 alone: the merged database) */
	if (rc == 0 && o.sequences)
		cli.shard_rule = &sequences;
	else if (rc == 0 && !o.sequences)
		cli.shard_rule = o.o.by_type == BY_TYPE ? &ta_shard_kernel_types :
				 &ta_shard_per_rank;
	if (rc == 0)
		rc = ta_cli_run(&cli, run, &o);
	else
		rc = rc > 0 ? 0 : 2;
	ta_cli_free(&cli);
	return rc;
}

const struct ta_command ta_command_kernels = {
	"kernels", cmd_kernels, "GPU time per kernel or kernel type",
	TA_SPREAD_BY_OPTIONS, NULL, 1,
	{ [TA_MODE_HTA] = TA_COMPAT_RULES, [TA_MODE_TB] = TA_COMPAT_OWN }, NULL
};
