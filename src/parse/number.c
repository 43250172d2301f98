/* Exact number parsing: trace timestamps are µs with up to 3 decimals, and
 * a double cannot hold absolute ones exactly, so scale the text itself. */
#include "ta_parse.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

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

/* Whether ta_parse_us_to_ns reads s exactly: a plain decimal with at most
 * 3 decimals and few enough digits that none are dropped. */
static bool exact_ns_text(const char *s)
{
	size_t digits = 0, decimals = 0;
	bool frac = false;

	if (*s == '-')
		s++;
	for (; *s; s++) {
		if (*s >= '0' && *s <= '9') {
			digits++;
			decimals += frac;
		} else if (*s == '.' && !frac) {
			frac = true;
		} else {
			return false;
		}
	}
	return digits && digits <= 18 && decimals <= 3;
}

/* 2^44 µs in ns. Below it a double is within 0.98 ns of a time given in
 * whole ns, and ts + dur (three roundings) within 2.93 ns. */
#define EXACT_LIMIT_NS (17592186044416LL * 1000)

/* Python's arithmetic, on strtod's correctly rounded doubles. */
static void hta_times_double(const char *ts, const char *dur, int64_t *hta_ts,
			     int64_t *hta_dur)
{
	double t = strtod(ts, NULL), start, end;

	if (!isfinite(t) || fabs(t) >= 9e15)
		return;
	start = ceil(t);
	*hta_ts = (int64_t)start * 1000;
	if (!dur || !dur[0])
		return;
	end = floor(t + strtod(dur, NULL));
	if (isfinite(end) && fabs(end) < 9e15)
		*hta_dur = ((int64_t)end - (int64_t)start) * 1000;
}

void ta_hta_times(const char *ts, const char *dur, int64_t ts_ns,
		  int64_t dur_ns, int64_t *hta_ts, int64_t *hta_dur)
{
	bool has_dur = dur && dur[0];
	int64_t end = ts_ns + (has_dur ? dur_ns : 0);

	/* Exact in ns, small enough, and ts + dur not within 3 ns of a whole
	 * µs: the doubles cannot round across one, so integers give the
	 * same answer. Anything else takes the double route. */
	if (ts_ns >= 0 && ts_ns < EXACT_LIMIT_NS && exact_ns_text(ts) &&
	    (!has_dur || (dur_ns >= 0 && dur_ns < EXACT_LIMIT_NS - ts_ns &&
			  exact_ns_text(dur) && end % 1000 >= 3 &&
			  end % 1000 <= 997))) {
		int64_t start = (ts_ns + 999) / 1000;

		*hta_ts = start * 1000;
		if (has_dur)
			*hta_dur = (end / 1000 - start) * 1000;
		return;
	}
	hta_times_double(ts, dur, hta_ts, hta_dur);
}
