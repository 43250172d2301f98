/* The parser against hostile shapes (issue 13): strings and numbers
 * longer than the token limit, whatever the piece boundaries. */
#include "check_main.h"
#include "ta_parse.h"
#include "ta_utf8.h"

#include <stdlib.h>
#include <string.h>

struct names {
	int n;
	size_t len[8];
	char first[8][16];
};

static int on_event(void *ctx, const struct ta_event *ev)
{
	struct names *g = ctx;

	if (g->n < 8 && ev->f[TA_F_NAME].type == TA_VAL_TEXT) {
		g->len[g->n] = ev->f[TA_F_NAME].len;
		snprintf(g->first[g->n], sizeof(g->first[0]), "%s",
			 ta_event_text(ev, TA_F_NAME));
	}
	g->n++;
	return 0;
}

/* {"traceEvents": [{"name": "<pad><body x reps>", ...}, {"name": "k"}]} */
static char *trace_with(const char *pad, const char *body, size_t reps)
{
	static const char head[] = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"";
	static const char tail[] = "\", \"ts\": 1, \"dur\": 1}, {\"ph\": \"X\", "
		"\"name\": \"k\", \"ts\": 2, \"dur\": 1}]}";
	size_t bl = strlen(body), n = strlen(head) + strlen(pad) + bl * reps +
		    strlen(tail) + 1, i;
	char *s = malloc(n), *p = s;

	p += sprintf(p, "%s%s", head, pad);
	for (i = 0; i < reps; i++, p += bl)
		memcpy(p, body, bl);
	strcpy(p, tail);
	return s;
}

static int parse(const char *json, struct names *g, struct ta_parse_result *res)
{
	struct ta_sink sink = { g, on_event, NULL, NULL };
	struct ta_error err;

	memset(g, 0, sizeof(*g));
	return ta_parse_buffer(json, strlen(json), &sink, res, &err);
}

/* escapes and quotes inside, shifted across every piece boundary */
static const char *const bodies[] = { "n", "\\\"", "\\\\", "ab\\\"\\\\c", "\\u0041" };

START_TEST(test_long_string_skipped)
{
	struct ta_parse_result res;
	struct names g;
	size_t saved = ta_token_max;
	char pad[8] = "";
	size_t b;

	ta_token_max = 10000;
	memset(pad, 'p', (size_t)_i);
	for (b = 0; b < sizeof(bodies) / sizeof(bodies[0]); b++) {
		char *s = trace_with(pad, bodies[b], 30000 / strlen(bodies[b]));

		ck_assert_int_eq(parse(s, &g, &res), 0);
		ck_assert_msg(!res.truncated, "body %zu: %s", b, res.damage);
		ck_assert_int_eq(res.long_strings, 1);
		ck_assert_int_eq(g.n, 2);
		ck_assert_uint_eq(g.len[0], 0);
		ck_assert_str_eq(g.first[1], "k");
		free(s);
	}
	ta_token_max = saved;
}
END_TEST

START_TEST(test_string_under_limit_kept)
{
	struct ta_parse_result res;
	struct names g;
	size_t saved = ta_token_max;
	char *s = trace_with("", "n", 9000);

	ta_token_max = 10000;
	ck_assert_int_eq(parse(s, &g, &res), 0);
	ck_assert_int_eq(res.long_strings, 0);
	ck_assert_uint_eq(g.len[0], 9000);
	ck_assert_str_eq(g.first[1], "k");
	ta_token_max = saved;
	free(s);
}
END_TEST

/* 8 MB in 4 KB pieces: 2048 pieces fed one by one would make yajl lex
 * the string 2048 times over; pieces that double take a handful. */
START_TEST(test_long_string_linear)
{
	struct ta_parse_result res;
	struct names g;
	char *s = trace_with("", "n", 8 << 20);

	ck_assert_int_eq(parse(s, &g, &res), 0);
	ck_assert_uint_eq(g.len[0], 8 << 20);
	ck_assert_int_lt(res.feeds, 64);
	free(s);
}
END_TEST

/* {"traceEvents": [{"name": "a"}, <n times c><tail> */
static char *after_event(char c, size_t n, const char *tail)
{
	static const char head[] = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\"}, ";
	char *s = malloc(sizeof(head) + n + strlen(tail));

	memcpy(s, head, sizeof(head) - 1);
	memset(s + sizeof(head) - 1, c, n);
	strcpy(s + sizeof(head) - 1 + n, tail);
	return s;
}

START_TEST(test_long_number_is_damage)
{
	struct ta_parse_result res;
	struct names g;
	size_t saved = ta_token_max;
	char *s = after_event('7', 40000, "]}");

	ta_token_max = 10000;
	ck_assert_int_eq(parse(s, &g, &res), 0);
	ck_assert_int_eq(res.truncated, 1);
	ck_assert_ptr_nonnull(strstr(res.damage, "number longer than the limit"));
	ck_assert_int_eq(g.n, 1);
	ta_token_max = saved;
	free(s);
}
END_TEST

START_TEST(test_long_whitespace_is_fine)
{
	struct ta_parse_result res;
	struct names g;
	size_t saved = ta_token_max;
	char *s = after_event(' ', 50000, "{\"name\": \"b\"}]}");

	ta_token_max = 10000;
	ck_assert_int_eq(parse(s, &g, &res), 0);
	ck_assert_int_eq(res.truncated, 0);
	ck_assert_int_eq(g.n, 2);
	ta_token_max = saved;
	free(s);
}
END_TEST

static const struct {
	const char *in, *out;
	size_t replaced;
} utf8_cases[] = {
	{ "plain", "plain", 0 },
	{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0 },
	{ "over\xc0\xaf", "over\xef\xbf\xbd\xef\xbf\xbd", 2 },         /* overlong '/' */
	{ "sur\xed\xa0\x80", "sur\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 3 }, /* U+D800 */
	{ "big\xf4\x90\x80\x80", "big\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 4 },
	{ "cut\xe2\x82", "cut\xef\xbf\xbd\xef\xbf\xbd", 2 },
	{ "\xff", "\xef\xbf\xbd", 1 },
};

START_TEST(test_utf8_mend)
{
	const char *in = utf8_cases[_i].in;
	size_t replaced = 0;
	char *m = ta_utf8_mend(in, strlen(in), &replaced);

	ck_assert_int_eq(ta_utf8_valid(in, strlen(in)), utf8_cases[_i].replaced == 0);
	ck_assert_str_eq(m, utf8_cases[_i].out);
	ck_assert_uint_eq(replaced, utf8_cases[_i].replaced);
	ck_assert(ta_utf8_valid(m, strlen(m)));
	free(m);
}
END_TEST

/* names that differ after an escaped NUL stay apart */
START_TEST(test_nul_in_names)
{
	static const char json[] = "{\"traceEvents\": [{\"name\": \"a\\u0000b\"},"
		" {\"name\": \"a\\u0000c\"}]}";
	struct ta_parse_result res;
	struct names g;

	ck_assert_int_eq(parse(json, &g, &res), 0);
	ck_assert_int_eq(g.n, 2);
	ck_assert_str_eq(g.first[0], "a\xef\xbf\xbd" "b");
	ck_assert_str_eq(g.first[1], "a\xef\xbf\xbd" "c");
}
END_TEST

Suite *suite_hostile(void)
{
	Suite *s = suite_create("hostile");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_long_string_skipped, 0, 8);
	tcase_add_test(tc, test_string_under_limit_kept);
	tcase_add_test(tc, test_long_string_linear);
	tcase_add_test(tc, test_long_number_is_damage);
	tcase_add_test(tc, test_long_whitespace_is_fine);
	tcase_add_loop_test(tc, test_utf8_mend, 0,
			    sizeof(utf8_cases) / sizeof(utf8_cases[0]));
	tcase_add_test(tc, test_nul_in_names);
	suite_add_tcase(s, tc);
	return s;
}
