/* libFuzzer target for the trace parser: any bytes in, never a crash, a
 * leak or an unbounded allocation; events out satisfy the model's rules. */
#include "ta_gate.h"
#include "ta_parse.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Small enough that inputs of max_len reach the long-token paths. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	ta_token_max = 3000;
	return 0;
}

static int on_event(void *ctx, const struct ta_event *ev)
{
	int f;

	(void)ctx;
	for (f = 0; f < TA_NFIELDS; f++)
		if (ev->f[f].type == TA_VAL_TEXT)
			assert(ev->f[f].off + ev->f[f].len <= ev->arena.len);
	assert(ev->index >= 0);
	/* times are in the range every analysis can add and subtract */
	assert(!ev->has_ts || (ev->ts_ns >= -(1LL << 61) && ev->ts_ns <= 1LL << 62));
	assert(!ev->has_dur || (ev->dur_ns <= 1LL << 50 && ev->dur_ns >= -(1LL << 50)));
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

	struct ta_gate *g;
	char *expr;

	ta_quiet = 1;
	if (ta_parse_buffer((const char *)data, size, &sink, &res, &err) == 0)
		assert(!res.truncated || res.damage_offset <= (int64_t)size + 3);
	/* the same bytes as a --fail-if expression: bounded, never a crash */
	expr = malloc(size + 1);
	memcpy(expr, data, size);
	expr[size] = '\0';
	g = ta_gate_parse(expr, &err);
	ta_gate_free(g);
	free(expr);
	return 0;
}
