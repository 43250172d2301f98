/* How a parsed event becomes a row of the events table. */
#ifndef TA_EVENT_ROW_H
#define TA_EVENT_ROW_H

#include <sqlite3.h>

#include "batch.h"

/* INSERT INTO events of `rows` rows of parameters; the caller frees it. */
char *ta_row_insert_sql(int rows);
/* events.role of a category (see the schema), or TA_ROW_ARROW_CAT. */
int ta_row_role(const char *cat);
/* What ta_row_role says of Kineto's runtime-to-GPU flow categories: their
 * flow events (ph s, f, t) are not stored, their other events are, as
 * TA_ROLE_OTHER. */
#define TA_ROW_ARROW_CAT 100
/* Whether the event is one of those flows: no row. */
int ta_row_dropped(const struct ta_event *ev, int role);
/* Binds an event as row `row` of such an insert (scratch: room for its
 * column args, which SQLite copies). *bound holds the
 * columns this row of the statement had bound before (0 at first): those
 * the event leaves absent are unbound, the rest kept for next time.
 * -1 if a value cannot be bound (too long: SQLite's message says so). */
int ta_row_bind(sqlite3_stmt *st, int row, int64_t rank,
		const struct ta_batch_rec *u, uint64_t *bound,
		struct ta_buf *scratch);

#endif
