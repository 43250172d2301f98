/* Which JSON keys of an event, and of its args, the parser keeps. */
#include "parse_int.h"

#include <string.h>

struct key_map {
	const char *key;
	int field;
};

static const struct key_map event_keys[] = {
	{ "ph", TA_F_PH }, { "cat", TA_F_CAT }, { "name", TA_F_NAME },
	{ "pid", TA_F_PID }, { "tid", TA_F_TID }, { "ts", TA_KEY_TS },
	{ "dur", TA_KEY_DUR }, { "args", TA_KEY_ARGS }, { "id", TA_F_ID },
	{ "bp", TA_F_BP },
};

static const struct key_map arg_keys[] = {
	{ "stream", TA_F_STREAM },
	{ "correlation", TA_F_CORRELATION },
	{ "External id", TA_F_EXTERNAL_ID },
	{ "device", TA_F_DEVICE },
	{ "bytes", TA_F_BYTES },
	{ "memory bandwidth (GB/s)", TA_F_GBPS },
	{ "grid", TA_F_GRID },
	{ "block", TA_F_BLOCK },
	{ "registers per thread", TA_F_REGISTERS },
	{ "shared memory", TA_F_SHARED_MEM },
	{ "Input Dims", TA_F_INPUT_DIMS },
	{ "Input type", TA_F_INPUT_TYPES },
	{ "Python id", TA_F_PYTHON_ID },
	{ "Python parent id", TA_F_PYTHON_PARENT_ID },
	{ "Sequence number", TA_F_SEQ_NR },
	{ "Fwd thread id", TA_F_FWD_TID },
	{ "cbid", TA_F_CBID },
	{ "Total Allocated", TA_F_TOTAL_ALLOCATED },
	{ "Total Reserved", TA_F_TOTAL_RESERVED },
	{ "Device Id", TA_F_DEVICE_ID },
	{ "Bytes", TA_F_MEM_BYTES },
	{ "wait_on_stream", TA_F_WAIT_ON_STREAM },
	{ "Collective name", TA_F_COLLECTIVE },
};

static int lookup(const struct key_map *m, size_t n, const char *k,
		  size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (m[i].key[0] == k[0] && strlen(m[i].key) == len &&
		    memcmp(m[i].key, k, len) == 0)
			return m[i].field;
	return TA_KEY_NONE;
}

int ta_event_key(const char *k, size_t len)
{
	if (len == 0)
		return TA_KEY_NONE;
	return lookup(event_keys, sizeof(event_keys) / sizeof(event_keys[0]),
		      k, len);
}

int ta_arg_key(const char *k, size_t len)
{
	if (len == 0)
		return TA_KEY_NONE;
	return lookup(arg_keys, sizeof(arg_keys) / sizeof(arg_keys[0]), k,
		      len);
}
