/* Options bound by offsetof (ta_command.h): each kind parses, range-checks
 * and stores into its field, and refuses what it does not take. */
#include "check_main.h"
#include "ta_command.h"
#include "commands/cli.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct toy {
	int flag, choice, small;
	int64_t big, ns;
	double real;
	const char *str;
	int called;
};

static int toy_call(void *ctx, int key, const char *arg)
{
	struct toy *t = ctx;

	t->called = key;
	return arg && strcmp(arg, "ok") == 0 ? 0 : -1;
}

#define T struct toy
static const struct ta_opt toy_opts[] = {
	TA_FLAG("flag", T, flag, "h"),
	TA_CHOICE("choice", "X", T, choice, "a|bb=other=names|c", "h"),
	TA_COUNT("small", "N", T, small, 1, 10, "h"),
	TA_COUNT("big", "N", T, big, 0, 9e18, "h"),
	TA_US("us", "US", T, ns, 0.001, "h"),
	TA_REAL("real", "R", T, real, 0, 1, "h"),
	TA_STRING("str", "S", T, str, "h"),
	TA_CALL("call", "C", 7, "h"),
	TA_OPT_END
};
#undef T

START_TEST(test_kinds_store_into_their_fields)
{
	struct toy t;

	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(ta_opt_apply(&toy_opts[0], &t, NULL, NULL), 0);
	ck_assert_int_eq(t.flag, 1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[1], &t, "bb", NULL), 0);
	ck_assert_int_eq(t.choice, 1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[1], &t, "c", NULL), 0);
	ck_assert_int_eq(t.choice, 2);
	/* another name of bb (ops --sort takes torch's) */
	ck_assert_int_eq(ta_opt_apply(&toy_opts[1], &t, "names", NULL), 0);
	ck_assert_int_eq(t.choice, 1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[1], &t, "other", NULL), 0);
	ck_assert_int_eq(t.choice, 1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[2], &t, "10", NULL), 0);
	ck_assert_int_eq(t.small, 10);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[3], &t, "5000000000", NULL), 0);
	ck_assert(t.big == 5000000000LL);
	ck_assert_int_eq(t.small, 10);   /* the neighbour untouched */
	ck_assert_int_eq(ta_opt_apply(&toy_opts[4], &t, "2.5", NULL), 0);
	ck_assert(t.ns == 2500);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[5], &t, "0.25", NULL), 0);
	ck_assert(t.real == 0.25);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[6], &t, "x", NULL), 0);
	ck_assert_str_eq(t.str, "x");
	ck_assert_int_eq(ta_opt_apply(&toy_opts[7], &t, "ok", toy_call), 0);
	ck_assert_int_eq(t.called, 7);
}
END_TEST

START_TEST(test_kinds_refuse_what_they_do_not_take)
{
	struct toy t;

	memset(&t, 0, sizeof(t));
	/* a choice is a whole word of the list, not a prefix or a part */
	ck_assert_int_eq(ta_opt_apply(&toy_opts[1], &t, "b", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[1], &t, "a|bb", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[1], &t, "", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[1], &t, "bb=other", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[1], &t, "=", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[1], &t, "oth", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[2], &t, "0", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[2], &t, "11", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[2], &t, "3x", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[3], &t, "99999999999999999999", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[4], &t, "0", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[4], &t, "-1", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[5], &t, "nan", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[5], &t, "1.5", NULL), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[7], &t, "no", toy_call), -1);
	ck_assert_int_eq(ta_opt_apply(&toy_opts[7], &t, "ok", NULL), -1);
	ck_assert_int_eq(t.small, 0);
	ck_assert(t.ns == 0 && t.real == 0);
}
END_TEST

/* --ranks: a list is whole or refused (a trailing comma or dash once
 * read as the list before it) */
START_TEST(test_rank_lists)
{
	static const char *const bad[] = { "0,", "0-", ",0", "0,,1", "1-0", "-1",
		"0-+1", "a", "", "99999999999999999999", "0-9223372036854775807",
		" 0", "+1", "0, 1", "0 ,1", "0-999999,0-999999" };
	int64_t *v = NULL;
	size_t n = 0, i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		ck_assert_msg(ta_cli_parse_ranks(bad[i], &v, &n) < 0, "'%s' accepted", bad[i]);
		ck_assert_ptr_null(v);
	}
	ck_assert_int_eq(ta_cli_parse_ranks("0,2,5-7", &v, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert(v[0] == 0 && v[1] == 2 && v[2] == 5 && v[4] == 7);
	free(v);
	ck_assert_int_eq(ta_cli_parse_ranks("all", &v, &n), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

Suite *suite_options(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_kinds_store_into_their_fields);
	tcase_add_test(tc, test_kinds_refuse_what_they_do_not_take);
	tcase_add_test(tc, test_rank_lists);
	suite_add_tcase(s, tc);
	return s;
}
