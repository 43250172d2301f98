/* An int64 -> index map of a fixed capacity, for the plugin's Python
 * dicts keyed by correlation or External id (absent: a key of its own,
 * TB_KEY_NONE, as Python's None is). */
#ifndef TB_MAP_H
#define TB_MAP_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct ta_intern;

#define TB_KEY_NONE INT64_MIN

struct tb_map {
	int64_t *k;
	long *v;
	size_t cap;
};

/* A value for a key that was there and is gone (dict.pop): -1 would end
 * the probes of keys placed past it. */
#define TB_TAKEN (-2)

/* Room for n keys; every value starts as -1 (absent). */
void tb_map_init(struct tb_map *m, size_t n);
/* The value slot of key (added, holding -1, when new). */
long *tb_map_at(struct tb_map *m, int64_t key);
void tb_map_free(struct tb_map *m);

/* Column col as a Python dict key: an integer (or a float of an integer
 * value) as itself, absent as TB_KEY_NONE, any other value a key of its
 * own from keys (above TB_KEY_NONE). */
int64_t tb_key(struct ta_intern *keys, sqlite3_stmt *st, int col);

#endif
