/* Event extraction from Chrome-trace JSON, and rank detection. */
#include "check_main.h"
#include "ta_ingest.h"
#include "ta_parse.h"

#include <stdlib.h>
#include <string.h>

struct rec {
	char name[64], cat[32], ph[4], ext[32], dims[64], stream_text[16];
	int has_ts, has_dur;
	int64_t ts, dur, hta_ts, hta_dur, stream, corr, index;
	enum ta_val_type ext_type, stream_type;
};

struct got {
	struct rec r[16];
	int n;
	char meta_keys[256];
};

static void copy_text(char *dst, size_t cap, const struct ta_event *ev,
		      enum ta_field f)
{
	dst[0] = '\0';
	if (ev->f[f].type == TA_VAL_TEXT)
		snprintf(dst, cap, "%s", ta_event_text(ev, f));
	else if (ev->f[f].type == TA_VAL_INT)
		snprintf(dst, cap, "%lld", (long long)ev->f[f].i);
}

static int on_event(void *ctx, const struct ta_event *ev)
{
	struct got *g = ctx;
	struct rec *r = &g->r[g->n++];

	ck_assert_int_le(g->n, 16);
	copy_text(r->name, sizeof(r->name), ev, TA_F_NAME);
	copy_text(r->cat, sizeof(r->cat), ev, TA_F_CAT);
	copy_text(r->ph, sizeof(r->ph), ev, TA_F_PH);
	copy_text(r->ext, sizeof(r->ext), ev, TA_F_EXTERNAL_ID);
	copy_text(r->dims, sizeof(r->dims), ev, TA_F_INPUT_DIMS);
	copy_text(r->stream_text, sizeof(r->stream_text), ev, TA_F_STREAM);
	r->ext_type = ev->f[TA_F_EXTERNAL_ID].type;
	r->stream_type = ev->f[TA_F_STREAM].type;
	r->has_ts = ev->has_ts;
	r->has_dur = ev->has_dur;
	r->ts = ev->ts_ns;
	r->dur = ev->dur_ns;
	r->hta_ts = ev->hta_ts_ns;
	r->hta_dur = ev->hta_dur_ns;
	r->corr = ev->f[TA_F_CORRELATION].type == TA_VAL_INT ?
		ev->f[TA_F_CORRELATION].i : -1;
	r->index = ev->index;
	return 0;
}

static int on_meta(void *ctx, const char *key, const char *json, size_t len)
{
	struct got *g = ctx;

	(void)json, (void)len;
	strcat(g->meta_keys, key);
	strcat(g->meta_keys, ";");
	return 0;
}

static int parse(const char *json, struct got *g, struct ta_parse_result *res)
{
	struct ta_sink sink = { g, on_event, on_meta, NULL };
	struct ta_error err;

	memset(g, 0, sizeof(*g));
	return ta_parse_buffer(json, strlen(json), &sink, res, &err);
}

static const char basic[] =
	"{\"schemaVersion\": 1, \"traceEvents\": ["
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0,"
	" \"tid\": 7, \"ts\": 1700000000000001.5, \"dur\": 2.25,"
	" \"args\": {\"stream\": 7, \"correlation\": 42, \"grid\": [1, 2, 3],"
	" \"nested\": {\"a\": [1, {\"b\": 2}]},"
	" \"External id\": 18446744073709551615}},"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"ts\": 10,"
	" \"dur\": 3, \"args\": {\"Input Dims\": [[4, 256], []]}},"
	"{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 12},"
	"7,"
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 20, \"dur\": 1,"
	" \"args\": {\"stream\": \"13\"}}"
	"], \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3}}";

START_TEST(test_parse_basic)
{
	struct ta_parse_result res;
	struct got g;

	ck_assert_int_eq(parse(basic, &g, &res), 0);
	ck_assert_int_eq(g.n, 4);
	ck_assert_int_eq(res.events, 5); /* the bare 7 takes an index too */
	ck_assert_str_eq(g.r[0].name, "gemm");
	ck_assert_str_eq(g.r[0].cat, "kernel");
	ck_assert_int_eq(g.r[0].ts, 1700000000000001500LL);
	ck_assert_int_eq(g.r[0].dur, 2250);
	ck_assert_int_eq(g.r[0].corr, 42);
	/* an id beyond int64 is kept as its digits, not a parse failure */
	ck_assert_int_eq(g.r[0].ext_type, TA_VAL_TEXT);
	ck_assert_str_eq(g.r[0].ext, "18446744073709551615");
	ck_assert_str_eq(g.r[1].dims, "[[4, 256], []]");
	ck_assert_int_eq(g.r[2].has_dur, 0);
	ck_assert_int_eq(g.r[3].index, 4);
	ck_assert_str_eq(g.r[3].stream_text, "13");
	/* rank comes after traceEvents here */
	ck_assert_int_eq(res.have_rank, 1);
	ck_assert_int_eq(res.rank, 3);
	ck_assert_int_eq(res.any_float_ts, 1);
	ck_assert_int_eq(res.truncated, 0);
	ck_assert_str_eq(g.meta_keys, "schemaVersion;distributedInfo;");
}
END_TEST

/* hta-semantics §2.3: ts 10.2, dur 0.5 -> end floor(10.7) = 10,
 * ts ceil(10.2) = 11, dur -1. */
START_TEST(test_parse_hta_rounding)
{
	struct ta_parse_result res;
	struct got g;

	ck_assert_int_eq(parse("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"c\","
			       " \"name\": \"n\", \"ts\": 10.2, \"dur\": 0.5}]}",
			       &g, &res), 0);
	ck_assert_int_eq(g.r[0].ts, 10200);
	ck_assert_int_eq(g.r[0].hta_ts, 11000);
	ck_assert_int_eq(g.r[0].hta_dur, -1000);
	/* absolute µs near 1.7e15: the double sum decides, as in Python */
	ck_assert_int_eq(parse("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"c\","
			       " \"name\": \"n\", \"ts\": 1712195495519688.96,"
			       " \"dur\": 63.813}]}", &g, &res), 0);
	ck_assert_int_eq(g.r[0].hta_ts, 1712195495519689000LL);
	ck_assert_int_eq(g.r[0].hta_dur, 63000);
}
END_TEST

START_TEST(test_parse_truncated)
{
	static const char cut[] =
		"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\","
		" \"ts\": 1, \"dur\": 1}, {\"ph\": \"X\", \"cat\": \"ker";
	struct ta_parse_result res;
	struct got g;

	ck_assert_int_eq(parse(cut, &g, &res), 0);
	ck_assert_int_eq(res.truncated, 1);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.r[0].name, "a");
	ck_assert_int_le(res.damage_offset, (int64_t)strlen(cut));
	ck_assert_int_gt(res.damage_offset, 60);
}
END_TEST

START_TEST(test_parse_bom_and_bare_array)
{
	struct ta_parse_result res;
	struct got g;

	ck_assert_int_eq(parse("\xEF\xBB\xBF[\"x\", null, [1, {}], {\"ph\": \"X\", \"cat\": \"kernel\","
			       " \"name\": \"a\", \"ts\": 1, \"dur\": 1}]", &g, &res), 0);
	ck_assert_int_eq(g.n, 1);
	ck_assert_int_eq(g.r[0].index, 3); /* every element takes an index */
	ck_assert_int_eq(res.truncated, 0);
}
END_TEST

START_TEST(test_parse_not_a_trace)
{
	struct ta_parse_result res;
	struct got g;

	ck_assert_int_eq(parse("{\"lr\": 0.1, \"epochs\": 3}", &g, &res), -1);
	ck_assert_int_eq(parse("hello", &g, &res), -1);
	ck_assert_int_eq(parse("", &g, &res), -1);
}
END_TEST

START_TEST(test_parse_invalid_utf8)
{
	struct ta_parse_result res;
	struct got g;

	ck_assert_int_eq(parse("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"k\","
			       " \"name\": \"bad\xff\xfe\", \"ts\": 1, \"dur\": 1}]}",
			       &g, &res), 0);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.r[0].name, "bad\xff\xfe");
}
END_TEST

static const struct {
	const char *name;
	int64_t rank;
} rank_names[] = {
	{ "rank-3.json.gz", 3 }, { "dir/rank_12.pt.trace.json", 12 },
	{ "trace_rank7.json", 7 }, { "RANK-2.json", 2 }, { "trace.json", -1 },
	{ "ranking.json", -1 }, { "/a/rank-9/x.json", -1 },
	{ "rank-1099511627776.json", 1099511627776LL },
	{ "rank-9223372036854775807.json", INT64_MAX },
	{ "rank-9223372036854775808.json", -2 },
};

START_TEST(test_parse_rank_from_filename)
{
	ck_assert_int_eq(ta_rank_from_filename(rank_names[_i].name),
			 rank_names[_i].rank);
}
END_TEST

Suite *suite_parse(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_parse_basic);
	tcase_add_test(tc, test_parse_hta_rounding);
	tcase_add_test(tc, test_parse_truncated);
	tcase_add_test(tc, test_parse_bom_and_bare_array);
	tcase_add_test(tc, test_parse_not_a_trace);
	tcase_add_test(tc, test_parse_invalid_utf8);
	tcase_add_loop_test(tc, test_parse_rank_from_filename, 0,
			    sizeof(rank_names) / sizeof(rank_names[0]));
	suite_add_tcase(s, tc);
	return s;
}
