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

/* The code point at s and its length in *n; a sequence that is cut
 * short (text cut at a buffer's end) counts as one U+FFFD byte. */
static unsigned decode(const unsigned char *s, size_t *n)
{
	size_t k = s[0] < 0x80 ? 1 : s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3 : 4, i;
	unsigned c = k == 1 ? s[0] : k == 2 ? s[0] & 0x1Fu :
		     k == 3 ? s[0] & 0x0Fu : s[0] & 0x07u;

	for (i = 1; i < k; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			*n = 1;
			return 0xFFFD;
		}
		c = c << 6 | (s[i] & 0x3Fu);
	}
	*n = k;
	return c;
}

static size_t cp_width(unsigned c)
{
	static const unsigned wide[][2] = {
		{ 0x1100, 0x115F }, { 0x2E80, 0x303E }, { 0x3041, 0x33FF },
		{ 0x3400, 0x4DBF }, { 0x4E00, 0x9FFF }, { 0xA000, 0xA4CF },
		{ 0xAC00, 0xD7A3 }, { 0xF900, 0xFAFF }, { 0xFE30, 0xFE4F },
		{ 0xFF00, 0xFF60 }, { 0xFFE0, 0xFFE6 }, { 0x1F300, 0x1F64F },
		{ 0x1F900, 0x1F9FF }, { 0x20000, 0x3FFFD },
	};
	size_t i;

	if (c < 0x0300)
		return 1;
	if (c <= 0x036F || c == 0x200B)
		return 0;
	for (i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
		if (c >= wide[i][0] && c <= wide[i][1])
			return 2;
	return 1;
}

size_t ta_utf8_width_n(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t w = 0, n, at = 0;

	while (at < len && u[at]) {
		if (u[at] < 0x80) { /* most names: ASCII, one column a byte */
			w++;
			at++;
			continue;
		}
		w += cp_width(decode(u + at, &n));
		at += n;
	}
	return w;
}

size_t ta_utf8_width(const char *s)
{
	return ta_utf8_width_n(s, strlen(s));
}

size_t ta_utf8_prefix(const char *s, size_t cols)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t w = 0, n, at = 0;

	while (u[at]) {
		size_t cw = cp_width(decode(u + at, &n));

		if (w + cw > cols)
			break;
		w += cw;
		at += n;
	}
	return at;
}
