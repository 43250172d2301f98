/* Open-addressing hash table from string to id; names repeat millions of
 * times in a trace, so each is hashed once and copied once. */
#include "ta_intern.h"

#include <stdlib.h>
#include <string.h>

struct slot {
	char *s;
	size_t len;
	uint64_t hash;
	int64_t id;
};

struct ta_intern {
	struct slot *slots;
	size_t cap, count;
	const char **by_id;    /* by_id[id - 1]: the stored string */
	size_t by_id_cap;
};

/* Eight bytes per step (names are long: Python frames, kernel names), a
 * multiply to spread them, a final mix for the low bits the table uses. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t h = len * k, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = ((h << 5 | h >> 59) ^ w) * k;
	}
	w = 0;
	memcpy(&w, s, len);
	h = ((h << 5 | h >> 59) ^ w) * k;
	return h ^ h >> 29;
}

struct ta_intern *ta_intern_new(void)
{
	struct ta_intern *t = ta_xcalloc(1, sizeof(*t));

	t->cap = 1024;
	t->slots = ta_xcalloc(t->cap, sizeof(*t->slots));
	return t;
}

static void grow(struct ta_intern *t)
{
	struct slot *old = t->slots;
	size_t i, oldcap = t->cap;

	t->cap *= 2;
	t->slots = ta_xcalloc(t->cap, sizeof(*t->slots));
	for (i = 0; i < oldcap; i++) {
		size_t j;

		if (!old[i].s)
			continue;
		for (j = old[i].hash & (t->cap - 1); t->slots[j].s;
		     j = (j + 1) & (t->cap - 1))
			;
		t->slots[j] = old[i];
	}
	free(old);
}

static struct slot *find_slot(const struct ta_intern *t, const char *s,
			      size_t len, uint64_t h)
{
	size_t j;

	for (j = h & (t->cap - 1); t->slots[j].s; j = (j + 1) & (t->cap - 1)) {
		struct slot *sl = &t->slots[j];

		if (sl->hash == h && sl->len == len && memcmp(sl->s, s, len) == 0)
			return sl;
	}
	return &t->slots[j]; /* the empty slot where s would go */
}

int64_t ta_intern_find(const struct ta_intern *t, const char *s, size_t len)
{
	return find_slot(t, s, len, hash_bytes(s, len))->id;
}

int64_t ta_intern(struct ta_intern *t, const char *s, size_t len, int *is_new)
{
	uint64_t h = hash_bytes(s, len);
	struct slot *sl = find_slot(t, s, len, h);
	int64_t id;

	*is_new = sl->s == NULL;
	if (!*is_new)
		return sl->id;
	sl->s = ta_xstrndup(s, len);
	sl->len = len;
	sl->hash = h;
	sl->id = id = (int64_t)++t->count;
	if (t->count > t->by_id_cap) {
		t->by_id_cap = t->by_id_cap ? t->by_id_cap * 2 : 256;
		t->by_id = ta_xrealloc(t->by_id, t->by_id_cap * sizeof(*t->by_id));
	}
	t->by_id[id - 1] = sl->s;
	if (t->count * 2 > t->cap)
		grow(t);
	return id;
}

const char *ta_intern_str(const struct ta_intern *t, int64_t id)
{
	return id >= 1 && (size_t)id <= t->count ? t->by_id[id - 1] : NULL;
}

void ta_intern_free(struct ta_intern *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->cap; i++)
		free(t->slots[i].s);
	free(t->slots);
	free(t->by_id);
	free(t);
}
