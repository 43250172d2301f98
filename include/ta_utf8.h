/* Output is always valid UTF-8: traces are not (yajl's checks are off,
 * since real traces hold invalid bytes), so text is mended where it
 * enters a result table. */
#ifndef TA_UTF8_H
#define TA_UTF8_H

#include <stddef.h>

/* Whether s[0..len) is valid UTF-8: shortest forms, no surrogates, at
 * most U+10FFFF. */
int ta_utf8_valid(const char *s, size_t len);

/* A copy of s with each invalid byte replaced by U+FFFD (malloc'd,
 * NUL-terminated); *replaced counts the replacements. */
char *ta_utf8_mend(const char *s, size_t len, size_t *replaced);

/* Terminal columns of valid UTF-8 text: 2 for East Asian wide and emoji
 * code points, 0 for combining marks, 1 otherwise. */
size_t ta_utf8_width(const char *s);
/* The same for the first len bytes. */
size_t ta_utf8_width_n(const char *s, size_t len);

/* Bytes of the longest prefix of s at most cols columns wide. */
size_t ta_utf8_prefix(const char *s, size_t cols);

#endif
