/* Exact number parsing: trace timestamps are µs with up to 3 decimals, and
 * a double cannot hold absolute ones exactly, so scale the text itself. */
#include "ta_parse.h"

#include <stdbool.h>

static bool mul_add_overflows(uint64_t *m, unsigned digit)
{
	if (*m > (UINT64_MAX - digit) / 10)
		return true;
	*m = *m * 10 + digit;
	return false;
}

int ta_parse_int64(const char *s, size_t len, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	uint64_t m = 0;

	if (i < len && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	if (i == len)
		return -1;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (mul_add_overflows(&m, (unsigned)(s[i] - '0')))
			return -1;
	}
	if (neg ? m > (uint64_t)INT64_MAX + 1 : m > (uint64_t)INT64_MAX)
		return -1;
	*out = neg ? (int64_t)(0 - m) : (int64_t)m;
	return 0;
}

/* Reads the optional exponent part starting at s[*i]. */
static int parse_exponent(const char *s, size_t len, size_t *i, int64_t *exp)
{
	bool neg = false;
	int64_t e = 0;
	size_t start;

	if (*i < len && (s[*i] == '+' || s[*i] == '-'))
		neg = s[(*i)++] == '-';
	start = *i;
	for (; *i < len && s[*i] >= '0' && s[*i] <= '9'; (*i)++)
		if (e < 100000)
			e = e * 10 + (s[*i] - '0');
	if (*i == start)
		return -1;
	*exp = neg ? -e : e;
	return 0;
}

/* mant * 10^exp10 as int64 with round-half-away, or -1 if it overflows. */
static int scale(uint64_t mant, int64_t exp10, bool neg, int64_t *out)
{
	uint64_t rem_digit = 0;

	for (; exp10 > 0; exp10--)
		if (mant && mul_add_overflows(&mant, 0))
			return -1;
	for (; exp10 < 0 && mant; exp10++) {
		rem_digit = mant % 10;
		mant /= 10;
	}
	if (rem_digit >= 5)
		mant++;
	if (mant > (uint64_t)INT64_MAX)
		return -1;
	*out = neg ? -(int64_t)mant : (int64_t)mant;
	return 0;
}

int ta_parse_us_to_ns(const char *s, size_t len, int64_t *ns, int *is_float)
{
	size_t i = 0, digits = 0;
	bool neg = false, any = false;
	uint64_t mant = 0;
	int64_t exp10 = 3, e = 0; /* µs -> ns */

	*is_float = 0;
	if (i < len && s[i] == '-')
		neg = true, i++;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, any = true) {
		if (digits < 19) {
			mant = mant * 10 + (uint64_t)(s[i] - '0');
			digits += mant != 0;
		} else {
			exp10++; /* beyond 19 significant digits: scale only */
		}
	}
	if (i < len && s[i] == '.') {
		*is_float = 1;
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, any = true) {
			if (digits < 19) {
				mant = mant * 10 + (uint64_t)(s[i] - '0');
				digits += mant != 0;
				exp10--;
			}
		}
	}
	if (!any)
		return -1;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		*is_float = 1;
		i++;
		if (parse_exponent(s, len, &i, &e) < 0)
			return -1;
		exp10 += e;
	}
	if (i != len)
		return -1;
	return scale(mant, exp10, neg, ns);
}
