/* libFuzzer target for the trace parser: any bytes in, never a crash, a
 * leak or an unbounded allocation; events out satisfy the model's rules. */
#include "ta_parse.h"

#include <assert.h>
#include <string.h>

static int on_event(void *ctx, const struct ta_event *ev)
{
	int f;

	(void)ctx;
	for (f = 0; f < TA_NFIELDS; f++)
		if (ev->f[f].type == TA_VAL_TEXT)
			assert(ev->f[f].off + ev->f[f].len <= ev->arena.len);
	assert(ev->index >= 0);
	return 0;
}

static int on_meta(void *ctx, const char *key, const char *json, size_t len)
{
	(void)ctx;
	assert(key && json && strlen(json) <= len);
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct ta_sink sink = { NULL, on_event, on_meta, NULL };
	struct ta_parse_result res;
	struct ta_error err;

	ta_quiet = 1;
	if (ta_parse_buffer((const char *)data, size, &sink, &res, &err) == 0)
		assert(!res.truncated || res.damage_offset <= (int64_t)size + 3);
	return 0;
}
