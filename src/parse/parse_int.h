/* Private to src/parse/. */
#ifndef TA_PARSE_INT_H
#define TA_PARSE_INT_H

#include "ta_parse.h"

/* Keys that are not plain fields. */
enum { TA_KEY_NONE = -1, TA_KEY_TS = -2, TA_KEY_DUR = -3, TA_KEY_ARGS = -4 };

int ta_event_key(const char *k, size_t len);
int ta_arg_key(const char *k, size_t len);

#endif
