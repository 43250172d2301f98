/* libFuzzer target for the snapshot pickle reader: any bytes in, never a
 * crash, a leak, a hang or code run; what comes out is plain data, in
 * memory bounded by the input's length. */
#include "ta_pickle.h"

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

static void walk(const struct ta_pv *v, int depth)
{
	size_t i;

	/* the memo may share values, even make cycles: a bounded walk */
	if (!v || depth > 64)
		return;
	assert(v->t <= TA_PV_SET);
	if (v->t == TA_PV_DICT)
		assert(v->n % 2 == 0);
	for (i = 0; i < v->n && i < 64; i++)
		walk(v->v[i], depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ta_error err = { 0, "", 0 };
	struct ta_pickle *pk = ta_pickle_parse(data, size, "fuzz", &err);

	if (pk) {
		/* what the values take is bounded by the input: a few words a
		 * byte (an empty tuple is one byte, a value of 24, and room to
		 * grow its container) */
		assert(ta_pickle_memory(pk) <= 48 * size + 4096);
		walk(ta_pickle_root(pk), 0);
		ta_pickle_free(pk);
	} else {
		assert(err.msg[0]);
	}
	return 0;
}
