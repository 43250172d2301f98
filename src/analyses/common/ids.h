/* A sorted set of ids (of names, say): what SQL's IN (SELECT ...)
 * answered row by row, read once and tested in C. */
#ifndef TA_IDS_H
#define TA_IDS_H

#include "ta_db.h"

struct ta_ids {
	int64_t *v;
	size_t n;
};

/* The integers sql selects (its first column); -1 on a database error. */
int ta_ids_read(sqlite3 *db, const char *sql, struct ta_ids *set,
		struct ta_error *err);
int ta_ids_has(const struct ta_ids *set, int64_t id);

/* A growing set of (rank, id) pairs, open addressing: what a walk has
 * seen already (a launch's correlation credited with its GPU time). */
struct ta_pairs {
	int64_t (*v)[2];
	char *used;
	size_t n, cap;
};

/* Adds (rank, id); 1 if it was not there. */
int ta_pairs_add(struct ta_pairs *s, int64_t rank, int64_t id);
void ta_pairs_free(struct ta_pairs *s);

#endif
