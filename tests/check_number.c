/* Exact µs -> ns parsing and int64 parsing. */
#include "check_main.h"
#include "ta_parse.h"

#include <string.h>

static const struct {
	const char *text;
	int ok;
	int64_t ns;
	int is_float;
} us_cases[] = {
	{ "0", 1, 0, 0 },
	{ "12", 1, 12000, 0 },
	{ "12.5", 1, 12500, 1 },
	{ "12.345", 1, 12345, 1 },
	{ "1712195495519689.047", 1, 1712195495519689047LL, 1 },
	{ "-3.25", 1, -3250, 1 },
	{ "1.5e3", 1, 1500000, 1 },
	{ "1.0", 1, 1000, 1 },
	{ "0.0004", 1, 0, 1 },      /* below 1 ns: rounds */
	{ "0.0006", 1, 1, 1 },
	{ "1e999", 0, 0, 1 },       /* does not fit */
	{ "99999999999999999999", 0, 0, 0 },
	{ "", 0, 0, 0 },
	{ "abc", 0, 0, 0 },
	{ "1.2.3", 0, 0, 1 },
};

START_TEST(test_number_us_to_ns)
{
	int64_t ns = -1;
	int f = -1;
	int rc = ta_parse_us_to_ns(us_cases[_i].text, strlen(us_cases[_i].text),
				   &ns, &f);

	ck_assert_msg((rc == 0) == us_cases[_i].ok, "'%s' ok=%d",
		      us_cases[_i].text, rc == 0);
	if (us_cases[_i].ok) {
		ck_assert_int_eq(ns, us_cases[_i].ns);
		ck_assert_int_eq(f, us_cases[_i].is_float);
	}
}
END_TEST

START_TEST(test_number_int64)
{
	int64_t v;

	ck_assert_int_eq(ta_parse_int64("42", 2, &v), 0);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(ta_parse_int64("-9223372036854775808", 20, &v), 0);
	ck_assert_int_eq(v, INT64_MIN);
	ck_assert_int_eq(ta_parse_int64("9223372036854775807", 19, &v), 0);
	ck_assert_int_eq(v, INT64_MAX);
	ck_assert_int_eq(ta_parse_int64("9223372036854775808", 19, &v), -1);
	ck_assert_int_eq(ta_parse_int64("18446744073709551616", 20, &v), -1);
	ck_assert_int_eq(ta_parse_int64("1.5", 3, &v), -1);
	ck_assert_int_eq(ta_parse_int64("", 0, &v), -1);
}
END_TEST

Suite *suite_number(void)
{
	Suite *s = suite_create("number");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_number_us_to_ns, 0,
			    sizeof(us_cases) / sizeof(us_cases[0]));
	tcase_add_test(tc, test_number_int64);
	suite_add_tcase(s, tc);
	return s;
}
