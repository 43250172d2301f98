/* Facts of names by their ids (view label), each name read and judged
 * once: an analysis reads the ids in its rows and asks here, where a JOIN
 * with label per row and GLOBs on its text cost more than the row itself
 * (a kernel's name runs to hundreds of bytes, and a rank has 10^5
 * kernels of a few hundred names). */
#include "ta_intern.h"
#include "ta_model.h"

#include <stdlib.h>

struct ta_labels {
	sqlite3_stmt *text;          /* SELECT name FROM label WHERE name_id = ? */
	unsigned (*judge)(const char *name);
	struct ta_intern *ids;       /* an id's 8 bytes -> its slot */
	unsigned *facts;             /* by slot */
	size_t cap;
	sqlite3 *db;
	int failed;
	struct ta_error err;         /* the first failure's */
};

struct ta_labels *ta_labels_new(sqlite3 *db, unsigned (*judge)(const char *name),
				struct ta_error *err)
{
	struct ta_labels *l = ta_xcalloc(1, sizeof(*l));

	if (ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?", &l->text,
			  err) < 0) {
		free(l);
		return NULL;
	}
	l->db = db;
	l->judge = judge;
	l->ids = ta_intern_new();
	return l;
}

/* judge of the label's text (NULL when its name is), or TA_LABEL_NONE */
static unsigned look_up(struct ta_labels *l, int64_t id)
{
	unsigned facts = TA_LABEL_NONE;
	int rc;

	sqlite3_reset(l->text);
	sqlite3_bind_int64(l->text, 1, id);
	rc = sqlite3_step(l->text);
	if (rc == SQLITE_ROW)
		facts = l->judge ? l->judge((const char *)sqlite3_column_text(l->text, 0)) &
				   ~TA_LABEL_NONE : 0;
	else if (rc != SQLITE_DONE && !l->failed++)
		ta_db_failed(l->db, &l->err);
	sqlite3_reset(l->text);
	return facts;
}

unsigned ta_labels_get(struct ta_labels *l, sqlite3_value *id)
{
	int64_t v, slot;
	int is_new;

	/* a join on name_id (INTEGER PRIMARY KEY) matches integers alone */
	if (sqlite3_value_type(id) != SQLITE_INTEGER)
		return TA_LABEL_NONE;
	v = sqlite3_value_int64(id);
	slot = ta_intern(l->ids, (const char *)&v, sizeof(v), &is_new);
	if ((size_t)slot >= l->cap) {
		l->cap = (size_t)slot * 2 + 64;
		l->facts = ta_xrealloc(l->facts, l->cap * sizeof(*l->facts));
	}
	if (is_new)
		l->facts[slot] = look_up(l, v);
	return l->facts[slot];
}

int ta_labels_failed(const struct ta_labels *l, struct ta_error *err)
{
	if (!l->failed)
		return 0;
	if (err)
		*err = l->err;
	return -1;
}

void ta_labels_free(struct ta_labels *l)
{
	if (!l)
		return;
	sqlite3_finalize(l->text);
	ta_intern_free(l->ids);
	free(l->facts);
	free(l);
}
