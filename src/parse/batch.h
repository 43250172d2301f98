/* What a file's parser hands the database writer: a byte buffer of
 * records, so that one memcpy-friendly buffer crosses between threads
 * instead of thousands of small allocations.
 *
 *   'N' a name first seen in this file: its file-local id, length, bytes
 *   'E' an event: fixed part, then each present field
 *   'M' a top-level key other than traceEvents: key, then its JSON */
#ifndef TA_BATCH_H
#define TA_BATCH_H

#include "ta_event.h"

/* One record read back. Text points into the batch. */
struct ta_batch_rec {
	char tag;
	/* 'N' */
	int64_t id;
	/* 'N': the name; 'M': the key, then the JSON */
	const char *s, *s2;
	uint32_t len, len2;
	/* 'E' */
	struct ta_event ev;
	int64_t cat, name;    /* file-local name ids, 0 if absent */
	int role;
};

void ta_batch_name(struct ta_buf *b, int64_t id, const char *s, uint32_t len);
void ta_batch_event(struct ta_buf *b, const struct ta_event *ev, int64_t cat,
		    int64_t name, int role);
void ta_batch_meta(struct ta_buf *b, const char *key, const char *json,
		   size_t len);

/* Reads the record at p into rec; returns the position after it. */
const char *ta_batch_next(const char *p, const struct ta_buf *b,
			  struct ta_batch_rec *rec);

#endif
