/* UTF-8 validation and mending (ta_utf8.h). */
#include "ta.h"
#include "ta_utf8.h"

#include <string.h>

/* Length of the valid sequence at s (at most n bytes), 0 if invalid. */
static size_t seq_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
	if (c >= 0xE0 && c <= 0xEF) {
		unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;

		return n >= 3 && s[1] >= lo && s[1] <= hi &&
		       (s[2] & 0xC0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xF0 && c <= 0xF4) {
		unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;

		return n >= 4 && s[1] >= lo && s[1] <= hi &&
		       (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 ? 4 : 0;
	}
	return 0;
}

int ta_utf8_valid(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k;

	while (i < len) {
		if (u[i] < 0x80) { /* the common case: ASCII */
			i++;
			continue;
		}
		k = seq_len(u + i, len - i);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

char *ta_utf8_mend(const char *s, size_t len, size_t *replaced)
{
	const unsigned char *u = (const unsigned char *)s;
	struct ta_buf b = { 0 };
	size_t i = 0, k;

	ta_buf_grow(&b, len + 1);
	while (i < len) {
		k = seq_len(u + i, len - i);
		if (k) {
			ta_buf_add(&b, u + i, k);
			i += k;
		} else {
			ta_buf_add(&b, "\xEF\xBF\xBD", 3);
			(*replaced)++;
			i++;
		}
	}
	return b.s;
}
