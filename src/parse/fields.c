/* Which JSON keys of an event, and of its args, the parser keeps. */
#include "parse_int.h"

#include <string.h>

struct key_map {
	const char *key;
	int field;
	size_t len;
};

#define KEY(k, f) { k, f, sizeof(k) - 1 }

static const struct key_map event_keys[] = {
	KEY("ph", TA_F_PH), KEY("cat", TA_F_CAT), KEY("name", TA_F_NAME),
	KEY("pid", TA_F_PID), KEY("tid", TA_F_TID), KEY("ts", TA_KEY_TS),
	KEY("dur", TA_KEY_DUR), KEY("args", TA_KEY_ARGS), KEY("id", TA_F_ID),
	KEY("bp", TA_F_BP),
};

static const struct key_map arg_keys[] = {
	KEY("stream", TA_F_STREAM),
	KEY("correlation", TA_F_CORRELATION),
	KEY("External id", TA_F_EXTERNAL_ID),
	KEY("device", TA_F_DEVICE),
	KEY("bytes", TA_F_BYTES),
	KEY("memory bandwidth (GB/s)", TA_F_GBPS),
	KEY("grid", TA_F_GRID),
	KEY("block", TA_F_BLOCK),
	KEY("registers per thread", TA_F_REGISTERS),
	KEY("shared memory", TA_F_SHARED_MEM),
	KEY("Input Dims", TA_F_INPUT_DIMS),
	KEY("Input type", TA_F_INPUT_TYPES),
	KEY("Python id", TA_F_PYTHON_ID),
	KEY("Python parent id", TA_F_PYTHON_PARENT_ID),
	KEY("Sequence number", TA_F_SEQ_NR),
	KEY("Fwd thread id", TA_F_FWD_TID),
	KEY("cbid", TA_F_CBID),
	KEY("Total Allocated", TA_F_TOTAL_ALLOCATED),
	KEY("Total Reserved", TA_F_TOTAL_RESERVED),
	KEY("Device Id", TA_F_DEVICE_ID),
	KEY("Bytes", TA_F_MEM_BYTES),
	KEY("Addr", TA_F_MEM_ADDR),
	KEY("Device Type", TA_F_MEM_DEVICE_TYPE),
	KEY("wait_on_stream", TA_F_WAIT_ON_STREAM),
	KEY("wait_on_cuda_event_record_corr_id", TA_F_WAIT_CORR),
	KEY("Collective name", TA_F_COLLECTIVE),
	/* collectives (record_param_comms; older traces: the kernel) */
	KEY("Process Group Name", TA_F_PG_NAME),
	KEY("Process Group Ranks", TA_F_PG_RANKS),
	KEY("In msg nelems", TA_F_IN_NELEMS),
	KEY("Out msg nelems", TA_F_OUT_NELEMS),
	KEY("dtype", TA_F_DTYPE),
};

static int lookup(const struct key_map *m, size_t n, const char *k, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (m[i].len == len && m[i].key[0] == k[0] &&
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
