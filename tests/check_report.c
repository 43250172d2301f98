/* The report layer and the command line: gates, baselines, writers'
 * escaping, option parsing. */
#include "check_main.h"
#include "../src/commands/cli.h"
#include "ta_gate.h"
#include "ta_report.h"
#include "ta_utf8.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "idle_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "total_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

/* rank 0 "gemm" 12.5 % 100 µs; rank 1 "nccl" (no idle) 40 µs; rank 2 "a,b" 3 % 7 µs */
static struct ta_table *sample(void)
{
	struct ta_table *t = ta_table_new("T", cols, 4);
	size_t r;

	r = ta_table_add_row(t);
	ta_table_set_int(t, r, 0, 0);
	ta_table_set_text(t, r, 1, "gemm");
	ta_table_set_real(t, r, 2, 12.5);
	ta_table_set_real(t, r, 3, 100);
	r = ta_table_add_row(t);
	ta_table_set_int(t, r, 0, 1);
	ta_table_set_text(t, r, 1, "nccl");
	ta_table_set_real(t, r, 3, 40);
	r = ta_table_add_row(t);
	ta_table_set_int(t, r, 0, 2);
	ta_table_set_text(t, r, 1, "a,b");
	ta_table_set_real(t, r, 2, 3);
	ta_table_set_real(t, r, 3, 7);
	return t;
}

static const struct {
	const char *expr;
	const char *trips;      /* per row: '1' trips, '0' not, 'm' missing */
} gates[] = {
	{ "idle_pct > 12", "1m0" },
	{ "idle_pct >= 3 && idle_pct < 12.5", "0m1" },
	{ "idle_pct < 100", "1m1" },              /* missing: neither */
	{ "!(idle_pct < 100)", "0m0" },           /* ... nor its negation */
	{ "idle_pct > 12 || rank == 1", "110" },  /* true whatever it is */
	{ "idle_pct > 12 && rank == 0", "100" },  /* false whatever it is */
	{ "name == \"nccl\" || rank == 2", "011" },
	{ "name != 'gemm'", "011" },
	{ "total_us > 50 && (rank == 0 || rank == 1)", "100" },
	{ "total_us > 5 && (rank == 0 || rank == 1)", "110" },
	{ "rank == 0 || rank == 1 && total_us > 50", "100" }, /* && binds tighter */
	{ "(rank == 0 || rank == 1) && total_us > 50", "100" },
	{ "rank == 2 || rank == 1 && total_us > 50", "001" },
	{ "!!(rank >= 1)", "011" },
	{ "-1 < rank", "111" },
};

/* Timestamps in µs of 16 figures read alike, whichever %g gives them an
 * exponent; what is printed reads back as the value. */
START_TEST(test_format_real_plain)
{
	static const double v[] = { 1661938466920360.0, 1661938466704074.0,
		1661938466920360.5, 0.25, 1e-4, 123456789012345.678, -2.5e15, 0 };
	char buf[64];
	size_t i;

	ta_format_real(buf, sizeof(buf), v[0]);
	ck_assert_str_eq(buf, "1661938466920360.0");
	ta_format_real(buf, sizeof(buf), v[1]);
	ck_assert_str_eq(buf, "1661938466704074.0");
	ta_format_real(buf, sizeof(buf), v[2]);
	ck_assert_str_eq(buf, "1661938466920360.5");
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ta_format_real(buf, sizeof(buf), v[i]);
		ck_assert_msg(strtod(buf, NULL) == v[i], "%s for %.17g", buf, v[i]);
		ck_assert_msg(!strchr(buf, 'e'), "%s has an exponent", buf);
	}
}
END_TEST

START_TEST(test_gate_eval)
{
	struct ta_table *t = sample();
	struct ta_error err = { 0, "", 0 };
	struct ta_gate *g = ta_gate_parse(gates[_i].expr, &err);
	size_t r;

	ck_assert_msg(g != NULL, "%s: %s", gates[_i].expr, err.msg);
	ck_assert_int_eq(ta_gate_bind(g, t, &err), 0);
	for (r = 0; r < t->nrows; r++)
		ck_assert_msg(ta_gate_eval(g, t, r) == (gates[_i].trips[r] == '1' ?
			      TA_GATE_TRIP : gates[_i].trips[r] == 'm' ? TA_GATE_MISSING :
			      TA_GATE_PASS), "%s row %zu", gates[_i].expr, r);
	ta_gate_free(g);
	ta_table_free(t);
}
END_TEST

static const struct {
	const char *expr, *msg;
} bad_gates[] = {
	{ "", "at its end: expected a column" },
	{ "idle_pct >", "at its end" },
	{ "(idle_pct > 1", "expected ')'" },
	{ "idle_pct > 1 junk", "at character 14 ('junk'): expected &&, || or the end" },
	{ "\"open", "" },
	{ "idle_pct @ 3", "('@ 3')" },
	{ "idle_pct > 12%", "percentages are plain numbers" },
	{ "idle_pct > 1 and rank == 0", "combine with &&, || and !" },
	{ "rank = 0", "compare with ==" },
	/* infinity: a gate that could never trip (helper-55) */
	{ "idle_us > 1e999", "('1e999'): not a finite number" },
	{ "idle_us > -inf", "('-inf'): expected a number" },
	/* decimal only: strtod read 0x10 as 16 */
	{ "idle_us > 0x10", "('x10'): expected &&" },
};

START_TEST(test_gate_errors)
{
	struct ta_error err = { 0, "", 0 };
	struct ta_gate *g = ta_gate_parse(bad_gates[_i].expr, &err);

	ck_assert_msg(g == NULL, "'%s' parsed", bad_gates[_i].expr);
	ck_assert_int_eq(err.code, TA_EXIT_USAGE);
	ck_assert_msg(strstr(err.msg, bad_gates[_i].msg), "%s", err.msg);
}
END_TEST

START_TEST(test_gate_unknown_column)
{
	struct ta_table *t = sample();
	struct ta_error err = { 0, "", 0 };
	struct ta_gate *g = ta_gate_parse("idle > 1", &err);

	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(ta_gate_bind(g, t, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "no column 'idle'; columns: rank, name, idle_pct, total_us"));
	ta_gate_free(g);
	ta_table_free(t);
}
END_TEST

/* Comparisons that could never be true, and a row the data lacks, are
 * errors at bind time; a tripped row is described with its values. */
START_TEST(test_gate_checks)
{
	static const char *const names[] = { "gemm", "nccl", "a,b", NULL };
	struct ta_table *t = sample();
	struct ta_error err = { 0, "", 0 };
	struct ta_buf b = { 0 };
	struct ta_gate *g;

	ta_table_set_values(t, 1, names);
	g = ta_gate_parse("idle_pct > \"x\"", &err);
	ck_assert_int_eq(ta_gate_bind(g, t, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "'idle_pct' is a number, compared with a string"));
	ta_gate_free(g);
	g = ta_gate_parse("name == \"gem\"", &err);
	ck_assert_int_eq(ta_gate_bind(g, t, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "'gem' is never a name; its values: gemm, nccl, a,b"));
	ta_gate_free(g);
	g = ta_gate_parse("rank == 7 && idle_pct > 1", &err);
	ck_assert_int_eq(ta_gate_bind(g, t, &err), 0);
	ck_assert_int_eq(ta_gate_check_keys(g, t, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "no row has rank 7"));
	ta_gate_free(g);
	g = ta_gate_parse("idle_pct > 12 && rank == 0", &err);
	ck_assert_int_eq(ta_gate_bind(g, t, &err), 0);
	ck_assert_int_eq(ta_gate_check_keys(g, t, &err), 0);
	ta_gate_describe(g, t, 0, &b);
	ck_assert_str_eq(b.s, "idle_pct 12.5");
	ta_buf_free(&b);
	ta_gate_describe(g, t, 1, &b);
	ck_assert_str_eq(b.s, "idle_pct missing");
	ta_buf_free(&b);
	ta_gate_free(g);
	ta_table_free(t);
}
END_TEST

static char *write_tmp(const char *text)
{
	char *p = strdup("/tmp/ta-report-XXXXXX");
	int fd = mkstemp(p);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return p;
}

static int new_trips;  /* --fail-on-new for the next baseline() */

static int baseline(const char *old, const char *spec, char **diag,
		    struct ta_error *err)
{
	struct ta_table *t = sample();
	struct ta_increase inc;
	char *path = write_tmp(old);
	size_t len = 0;
	FILE *f = open_memstream(diag, &len);
	int rc;

	struct ta_baseline *b;

	ck_assert_int_eq(ta_increase_parse(spec, &inc), 0);
	b = ta_baseline_load(path, "test", err);
	rc = b ? ta_baseline_check(t, b, &inc, 1, new_trips, 0, f, err) : -1;
	ta_baseline_free(b);
	fclose(f);
	unlink(path);
	free(path);
	ta_table_free(t);
	return rc;
}

START_TEST(test_baseline_rises)
{
	struct ta_error err = { 0, "", 0 };
	char *diag;

	/* the sample: rank 0 gemm 100, rank 1 nccl 40, rank 2 "a,b" 7 */
	/* rows match on rank and name whatever their order; the quoted key
	 * "a,b" matches; an old row the new table lacks is ignored when its
	 * rank is there (a kernel gone) */
	ck_assert_int_eq(baseline("name,rank,total_us\n\"a,b\",2,5\ngemm,0,99\n"
				  "nccl,1,40\nold,0,1\n", "total_us=1", &diag, &err), 1);
	ck_assert_ptr_nonnull(strstr(diag, "rank=2 name=a,b: total_us rose from 5 to 7"));
	free(diag);
	/* and trips when its rank is not (data that is not there) */
	ck_assert_int_eq(baseline("name,rank,total_us\n\"a,b\",2,5\ngemm,0,99\n"
				  "nccl,1,40\nold,9,1\n", "total_us=1", &diag, &err), 2);
	ck_assert_ptr_nonnull(strstr(diag, "of rank this run has not"));
	free(diag);
	/* a row the baseline has not rose from 0 (nccl 40, a,b 7) */
	ck_assert_int_eq(baseline("name,rank,total_us\ngemm,0,99\n", "total_us=1",
				  &diag, &err), 2);
	ck_assert_ptr_nonnull(strstr(diag, "rank=1 name=nccl: total_us rose from nothing"));
	free(diag);
	/* a value missing in the baseline is no pass */
	ck_assert_int_eq(baseline("name,rank,total_us\n\"a,b\",2,\ngemm,0,99\nnccl,1,40\n",
				  "total_us=1", &diag, &err), 1);
	ck_assert_ptr_nonnull(strstr(diag, "total_us is missing in the baseline"));
	free(diag);
	ck_assert_int_eq(baseline("rank,name,total_us\n0,gemm,90\n1,nccl,40\n2,\"a,b\",7\n",
				  "total_us=10%", &diag, &err), 1);
	free(diag);
	ck_assert_int_eq(baseline("rank,name,total_us\n0,gemm,91\n1,nccl,40\n2,\"a,b\",7\n",
				  "total_us=10%", &diag, &err), 0);
	free(diag);
	/* a relative limit with a floor: 100 from 90 passes 10 % but not a
	 * floor of 20; 7 from 5 passes 1 % and a floor of 1 */
	ck_assert_int_eq(baseline("rank,name,total_us\n0,gemm,90\n2,\"a,b\",5\n1,nccl,40\n",
				  "total_us=1%,min=20", &diag, &err), 0);
	free(diag);
	ck_assert_int_eq(baseline("rank,name,total_us\n0,gemm,90\n2,\"a,b\",5\n1,nccl,40\n",
				  "total_us=1%,min=1", &diag, &err), 2);
	free(diag);
	/* rows new in this run are named; from nothing, they pass a floor
	 * they stay under */
	ck_assert_int_eq(baseline("rank,name,total_us\n0,gemm,100\n", "total_us=1,min=50",
				  &diag, &err), 0);
	ck_assert_ptr_nonnull(strstr(diag, "new row: rank=1 name=nccl"));
	free(diag);
	/* with --fail-on-new each trips, whatever its value */
	new_trips = 1;
	ck_assert_int_eq(baseline("rank,name,total_us\n0,gemm,100\n", "total_us=1",
				  &diag, &err), 2);
	new_trips = 0;
	free(diag);
}
END_TEST

static const struct {
	const char *old, *msg;
} bad_baselines[] = {
	{ "", "empty" },
	{ "rank,name,total_us\n0,gemm\n", "row 2 has 2 fields, the header 3" },
	{ "rank,name,total_us\n0,\"gemm,1\n", "row 2: " },
	{ "rank,name,idle_pct\n0,gemm,1\n", "no numeric column 'total_us' in both tables" },
	{ "rank,name,total_us\n7,x,1\n", "no row matches this run's" },
	{ "rank,name,total_us\n0,gemm,1\n0,gemm,2\n", "row 3 repeats the key" },
	{ "rank,kernel_type,count\n0,x,1\n", "a CSV of another command" },
	{ "{\"traceEvents\": []}", "is a JSON file" },
};

START_TEST(test_baseline_errors)
{
	struct ta_error err = { 0, "", 0 };
	char *diag;

	ck_assert_int_eq(baseline(bad_baselines[_i].old, "total_us=1", &diag, &err), -1);
	ck_assert_msg(strstr(err.msg, bad_baselines[_i].msg), "%s", err.msg);
	free(diag);
}
END_TEST

START_TEST(test_increase_parse)
{
	struct ta_increase inc;

	ck_assert_int_eq(ta_increase_parse("total_us=5%", &inc), 0);
	ck_assert(inc.relative && inc.limit == 5);
	ck_assert_int_eq(ta_increase_parse("total_us=0.5", &inc), 0);
	ck_assert(!inc.relative && inc.limit == 0.5);
	ck_assert_int_eq(ta_increase_parse("total_us", &inc), -1);
	ck_assert_int_eq(ta_increase_parse("=5", &inc), -1);
	ck_assert_int_eq(ta_increase_parse("x=-1", &inc), -1);
	ck_assert_int_eq(ta_increase_parse("x=5%%", &inc), -1);
	ck_assert_int_eq(ta_increase_parse("x=nan", &inc), -1);
	ck_assert_int_eq(ta_increase_parse("total_us=5%,min=100", &inc), 0);
	ck_assert(inc.relative && inc.limit == 5 && inc.min == 100);
	ck_assert_int_eq(ta_increase_parse("total_us=5%,min=", &inc), -1);
	ck_assert_int_eq(ta_increase_parse("total_us=5%,max=1", &inc), -1);
	/* decimal only: strtod read 0x10 as 16 */
	ck_assert_int_eq(ta_increase_parse("total_us=0x10", &inc), -1);
	ck_assert_int_eq(ta_increase_parse("total_us=5%,min=0x10", &inc), -1);
	ck_assert_int_eq(ta_increase_parse("total_us= 5", &inc), -1);
	ck_assert_int_eq(ta_increase_parse("total_us=1e3", &inc), 0);
	ck_assert(inc.limit == 1000);
}
END_TEST

static char *render(const struct ta_table *t, enum ta_format f)
{
	static char *buf; /* static: gcc 12 takes open_memstream's pointer */
	static size_t len; /* to a local for a dangling one */
	FILE *out = open_memstream(&buf, &len);

	ta_report_write(out, t, f);
	fclose(out);
	return buf;
}

START_TEST(test_writers_escape)
{
	static const struct ta_col c1[] = { { "name", TA_COL_TEXT, TA_UNIT_NONE, 1 } };
	struct ta_table *t = ta_table_new("E", c1, 1);
	char *s;

	ta_table_set_text(t, ta_table_add_row(t), 0, "q\"uote,comma");
	ta_table_set_text(t, ta_table_add_row(t), 0, "line\nbreak\rcr");
	ta_table_set_text(t, ta_table_add_row(t), 0, "tab\tctl\x01 back\\slash");
	ta_table_set_text(t, ta_table_add_row(t), 0, "bad\xff utf8");
	s = render(t, TA_FMT_CSV);
	ck_assert_str_eq(s, "name\n\"q\"\"uote,comma\"\n\"line\nbreak\rcr\"\n"
			 "tab\tctl\x01 back\\slash\nbad\xef\xbf\xbd utf8\n");
	free(s);
	s = render(t, TA_FMT_JSON);
	ck_assert_str_eq(s, "[\n {\"name\": \"q\\\"uote,comma\"},\n"
			 " {\"name\": \"line\\nbreak\\u000dcr\"},\n"
			 " {\"name\": \"tab\\u0009ctl\\u0001 back\\\\slash\"},\n"
			 " {\"name\": \"bad\xef\xbf\xbd utf8\"}\n]\n");
	free(s);
	ck_assert_uint_eq(t->bad_utf8, 1);
	ta_table_free(t);
}
END_TEST

/* wide characters take two columns, so the next column stays aligned */
START_TEST(test_text_wide)
{
	static const struct ta_col c2[] = {
		{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
		{ "n", TA_COL_INT, TA_UNIT_NONE, 0 },
	};
	struct ta_table *t = ta_table_new(NULL, c2, 2);
	char *s, *l1, *l2;
	size_t r;

	r = ta_table_add_row(t);
	ta_table_set_text(t, r, 0, "\xe7\xae\x97\xe5\xad\x90"); /* two CJK: 4 columns */
	ta_table_set_int(t, r, 1, 1);
	r = ta_table_add_row(t);
	ta_table_set_text(t, r, 0, "abcd");
	ta_table_set_int(t, r, 1, 2);
	s = render(t, TA_FMT_TEXT);
	l1 = strchr(s, '\n') + 1;
	l2 = strchr(l1, '\n') + 1;
	ck_assert_int_eq(strncmp(l1, "\xe7\xae\x97\xe5\xad\x90  1\n", 10), 0);
	ck_assert_int_eq(strncmp(l2, "abcd  2\n", 8), 0);
	ck_assert_uint_eq(ta_utf8_width("\xe7\xae\x97\xe5\xad\x90"), 4);
	ck_assert_uint_eq(ta_utf8_width("e\xcc\x81"), 1); /* e + combining acute */
	ck_assert_uint_eq(ta_utf8_prefix("\xe7\xae\x97\xe5\xad\x90", 3), 3);
	free(s);
	ta_table_free(t);
}
END_TEST

static int no_opts(void *ctx, int key, const char *arg)
{
	(void)ctx, (void)key, (void)arg;
	return -1;
}

static int parse(int argc, char **argv, struct ta_cli *cli)
{
	static const struct ta_cmd_info info = { "t", "PATH", "test", NULL, no_opts, NULL,
						 NULL, NULL, { NULL } };
	FILE *saved = stderr;
	int rc;

	stderr = fopen("/dev/null", "w");
	rc = ta_cli_parse(argc, argv, &info, cli);
	fclose(stderr);
	stderr = saved;
	return rc;
}

START_TEST(test_cli_parse)
{
	char *ok[] = { "t", "--format", "csv", "dir", "-o", "out", "--ranks", "0,2-3",
		       "-j", "3", "--fail-if", "idle_pct > 1", "--fail-if", "x < 2", NULL };
	char *bad_fmt[] = { "t", "--format", "xml", "dir", NULL };
	char *bad_jobs[] = { "t", "-j", "0", "dir", NULL };
	char *bad_ranks[] = { "t", "--ranks", "3-1", "dir", NULL };
	char *huge_ranks[] = { "t", "--ranks", "0-99999999999", "dir", NULL };
	char *unknown[] = { "t", "--frobnicate", "dir", NULL };
	char *missing[] = { "t", "dir", "--format", NULL };
	struct ta_cli cli;

	ck_assert_int_eq(parse(14, ok, &cli), 0);
	ck_assert_int_eq(cli.format, TA_FMT_CSV);
	ck_assert_str_eq(cli.output, "out");
	ck_assert_int_eq(cli.nargs, 1);
	ck_assert_str_eq(cli.args[0], "dir");
	ck_assert_uint_eq(cli.query.nranks, 3);
	ck_assert_int_eq(cli.query.ranks[2], 3);
	ck_assert_int_eq(cli.ingest.jobs, 3);
	ck_assert_uint_eq(cli.ngates, 2);
	ta_cli_free(&cli);
	ck_assert_int_eq(parse(4, bad_fmt, &cli), -1);
	ta_cli_free(&cli);
	ck_assert_int_eq(parse(4, bad_jobs, &cli), -1);
	ta_cli_free(&cli);
	ck_assert_int_eq(parse(4, bad_ranks, &cli), -1);
	ta_cli_free(&cli);
	ck_assert_int_eq(parse(4, huge_ranks, &cli), -1);
	ta_cli_free(&cli);
	ck_assert_int_eq(parse(3, unknown, &cli), -1);
	ta_cli_free(&cli);
	ck_assert_int_eq(parse(3, missing, &cli), -1);
	ta_cli_free(&cli);
}
END_TEST

START_TEST(test_cli_numbers)
{
	int64_t ns;
	long v;

	ck_assert_int_eq(ta_cli_parse_us("2.5", &ns), 0);
	ck_assert_int_eq(ns, 2500);
	ck_assert_int_eq(ta_cli_parse_us("-1", &ns), -1);
	ck_assert_int_eq(ta_cli_parse_us("nan", &ns), -1);
	ck_assert_int_eq(ta_cli_parse_us("1e13", &ns), -1);
	ck_assert_int_eq(ta_cli_parse_us("5us", &ns), -1);
	ck_assert_int_eq(ta_cli_parse_count("12", 100, &v), 0);
	ck_assert_int_eq(v, 12);
	ck_assert_int_eq(ta_cli_parse_count("101", 100, &v), -1);
	ck_assert_int_eq(ta_cli_parse_count("1x", 100, &v), -1);
	ck_assert_int_eq(ta_cli_parse_count("", 100, &v), -1);
	/* digits only, as the other numbers (helper-66: " 2", "+2", "-0") */
	ck_assert_int_eq(ta_cli_parse_count(" 2", 100, &v), -1);
	ck_assert_int_eq(ta_cli_parse_count("+2", 100, &v), -1);
	ck_assert_int_eq(ta_cli_parse_count("-0", 100, &v), -1);
}
END_TEST

/* The page's labels: what tells kernels apart stays, the rest folds. */
static const struct { const char *in, *out; size_t w; } names[] = {
	{ "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x256_16x3_nt_align4>"
	  "(cutlass_80_tensorop_s1688gemm_128x256_16x3_nt_align4::Params)",
	  "cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x256_16x3_nt_align4>", 80 },
	{ "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"
	  "<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, "
	  "std::array<char*, 3ul>)",
	  "at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<…>, "
	  "std::array<…> >", 200 },
	{ "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<int>(int)",
	  "at::native::multi_tensor_apply_kernel<int>", 80 },
	{ "fmha_cutlassB_bf16_aligned_64x64_k64_seqaligned_sm80(PyTorchMemEffAttention::"
	  "AttentionBackwardKernel<cutlass::arch::Sm80, float>::Params)",
	  "fmha_cutlassB_bf16_aligned_64x64_k64_seqaligned_sm80", 80 },
	{ "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize256x128x32_warpgroupsize2x1x1"
	  "_execute_segment_k_off_kernel__5x_cublas",
	  "sm90_xmma_gemm_f32f32_tf32f32_f32_…kernel__5x_cublas", 52 },
	{ "aten::mm", "aten::mm", 10 },
	{ "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, float>"
	  "(cublasGemvParamsEx<int>)", "internal::gemvx::kernel<int, float>", 80 },
	{ "COMPUTATION overlapping COMMUNICATION", "COMPUTATION overlapping COMMUNICATION", 80 },
	{ "void ", "void ", 10 },
	{ "void f<a<b>>(int)", "f<a<…>>", 10 },
	{ "(x)", "(x)", 10 },
	{ "", "", 10 },
};

START_TEST(test_people_name)
{
	struct ta_buf b = { 0 };

	ta_people_name(names[_i].in, names[_i].w, &b);
	ck_assert_str_eq(b.s, names[_i].out);
	ck_assert(ta_utf8_width(b.s) <= names[_i].w);
	ta_buf_free(&b);
}
END_TEST

Suite *suite_report(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_gate_eval, 0, sizeof(gates) / sizeof(gates[0]));
	tcase_add_loop_test(tc, test_gate_errors, 0,
			    sizeof(bad_gates) / sizeof(bad_gates[0]));
	tcase_add_test(tc, test_gate_unknown_column);
	tcase_add_test(tc, test_gate_checks);
	tcase_add_test(tc, test_baseline_rises);
	tcase_add_loop_test(tc, test_baseline_errors, 0,
			    sizeof(bad_baselines) / sizeof(bad_baselines[0]));
	tcase_add_test(tc, test_increase_parse);
	tcase_add_test(tc, test_writers_escape);
	tcase_add_test(tc, test_text_wide);
	tcase_add_test(tc, test_cli_parse);
	tcase_add_test(tc, test_cli_numbers);
	tcase_add_test(tc, test_format_real_plain);
	tcase_add_loop_test(tc, test_people_name, 0, sizeof(names) / sizeof(names[0]));
	suite_add_tcase(s, tc);
	return s;
}
