/* Number formatting shared by every writer. */
#include "ta_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ta_format_parse(const char *s, enum ta_format *f)
{
	if (strcmp(s, "text") == 0)
		*f = TA_FMT_TEXT;
	else if (strcmp(s, "csv") == 0)
		*f = TA_FMT_CSV;
	else if (strcmp(s, "json") == 0)
		*f = TA_FMT_JSON;
	else
		return -1;
	return 0;
}

void ta_format_real(char *buf, size_t len, double v)
{
	int prec;

	if (v == 0)
		v = 0; /* no "-0" */
	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* %g may choose an exponent for large or tiny values; numbers in
	 * reports are µs and ratios, where plain decimals read better, with
	 * as few decimals as give v back (a timestamp in µs is "...360.0" as
	 * its neighbours are, not "...360.000000") */
	if (strchr(buf, 'e') && v > -1e17 && v < 1e17 && (v >= 1e-4 || v <= -1e-4)) {
		for (prec = 0; prec <= 6; prec++) {
			snprintf(buf, len, "%.*f", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	}
	/* a real column stays real when a value is whole: "0" in every row
	 * of overlap's wait_us made pandas read it as integers */
	if (!strpbrk(buf, ".eEnN") && strlen(buf) + 2 < len)
		strcat(buf, ".0");
}

void ta_format_us(char *buf, size_t len, double us, int figures, const char *sep,
		  const char *micro)
{
	double a = fabs(us), v = a >= 1e6 ? us / 1e6 : a >= 1e3 ? us / 1e3 : us;
	const char *unit = a >= 1e6 ? "s" : a >= 1e3 ? "ms" : micro;
	/* 3 or 4 significant figures: 1.234, 12.34, 123.4 */
	int dec = !figures ? 3 : fabs(v) >= 100 ? 1 : fabs(v) >= 10 ? 2 : 3;

	snprintf(buf, len, "%.*f%s%s", dec, v, sep, unit);
}
