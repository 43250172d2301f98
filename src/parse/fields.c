/* Which JSON keys of an event, and of its args, the parser keeps. */
#include "parse_int.h"

#include <pthread.h>
#include <string.h>

struct key_map {
	const char *key;
	int field;
	size_t len;
};

#define KEY(f, k) { k, f, sizeof(k) - 1 },

static const struct key_map arg_keys[] = { TA_EVENT_ARGS(KEY) };

/* Keys come by the million and most are not ours (Python ids, strides,
 * concrete inputs...): the entries of each length, found once, are all a
 * key is compared with. */
#define MAX_KEY 40
struct by_len {
	unsigned char n[MAX_KEY + 1];
	unsigned char at[MAX_KEY + 1][8];
};

static void index_keys(const struct key_map *m, size_t n, struct by_len *b)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (m[i].len <= MAX_KEY && b->n[m[i].len] < 8)
			b->at[m[i].len][b->n[m[i].len]++] = (unsigned char)i;
}

static int lookup(const struct key_map *m, const struct by_len *b,
		  const char *k, size_t len)
{
	size_t i;

	if (len > MAX_KEY)
		return TA_KEY_NONE;
	for (i = 0; i < b->n[len]; i++) {
		const struct key_map *e = &m[b->at[len][i]];

		if (e->key[0] == k[0] && memcmp(e->key, k, len) == 0)
			return e->field;
	}
	return TA_KEY_NONE;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static struct by_len arg_len;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void index_all(void)
{
	index_keys(arg_keys, N(arg_keys), &arg_len);
}

/* An event's own keys (ph, cat, name, pid, tid, ts, dur, args, id, bp)
 * are few and short, and every event has most of them: a switch, not a
 * search. */
int ta_event_key(const char *k, size_t len)
{
#define IS(lit) (memcmp(k, lit, sizeof(lit) - 1) == 0)
	switch (len) {
	case 2:
		return IS("ph") ? TA_F_PH : IS("ts") ? TA_KEY_TS : IS("id") ? TA_F_ID :
		       IS("bp") ? TA_F_BP : TA_KEY_NONE;
	case 3:
		return IS("cat") ? TA_F_CAT : IS("pid") ? TA_F_PID : IS("tid") ? TA_F_TID :
		       IS("dur") ? TA_KEY_DUR : TA_KEY_NONE;
	case 4:
		return IS("name") ? TA_F_NAME : IS("args") ? TA_KEY_ARGS : TA_KEY_NONE;
	default:
		return TA_KEY_NONE;
	}
#undef IS
}

int ta_arg_key(const char *k, size_t len)
{
	if (len == 0)
		return TA_KEY_NONE;
	pthread_once(&once, index_all);
	return lookup(arg_keys, &arg_len, k, len);
}
