/* String interning: each distinct name gets one id, stored once. */
#ifndef TA_INTERN_H
#define TA_INTERN_H

#include "ta.h"

struct ta_intern;

struct ta_intern *ta_intern_new(void);
/* Returns the id of s (1, 2, ...); *is_new says whether it was added. */
int64_t ta_intern(struct ta_intern *t, const char *s, size_t len, int *is_new);
/* The id of s if it is there, else 0; adds nothing. */
int64_t ta_intern_find(const struct ta_intern *t, const char *s, size_t len);
/* The stored string of an id (valid until ta_intern_free), NULL if none. */
const char *ta_intern_str(const struct ta_intern *t, int64_t id);
void ta_intern_free(struct ta_intern *t);

#endif
