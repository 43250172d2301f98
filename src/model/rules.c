/* The rules analyses measure by, one row per mode (ta_model.h's struct
 * ta_rules says what each decides; the man page's DIFFERENCES FROM HTA
 * why the default differs). */
#include "ta_analyses.h"
#include "ta_model.h"

static const struct ta_rules default_rules = {
	.mode = "default",
	.windows = 1,
	.whole_gpu = 1,
	.notes = 1,
	.peers = 1,
	.own_thread = 1,
};

static const struct ta_rules hta_rules = {
	.mode = "hta",
	.trace_frame = 1,
	.hta_arithmetic = 1,
	.idle_prev_end = 1,
	.topk_totals = 1,
	.sweep_trunc_us = 1,
	.hta_order = 1,
	.hta_sequences = 1,
};

const struct ta_rules *ta_rules(const struct ta_query *q)
{
	return q->hta_compat ? &hta_rules : &default_rules;
}
