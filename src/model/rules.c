/* The rules analyses measure by, one row per mode (ta_model.h's struct
 * ta_rules says what each decides; the man page's DIFFERENCES FROM HTA
 * why the default differs). */
#include "ta_analyses.h"
#include "ta_model.h"

/* Every row sets every field, 0 or 1: a rule left out would silently be
 * the other mode's for half of them. */
static const struct ta_rules default_rules = {
	.windows = 1, .trace_frame = 0, .hta_arithmetic = 0, .idle_prev_end = 0,
	.whole_gpu = 1, .topk_totals = 0, .sweep_trunc_us = 0, .hta_order = 0,
	.notes = 1, .peers = 1, .own_thread = 1, .hta_sequences = 0,
	.on_shards = 1, .kernel_launch_stats = 1,
};

static const struct ta_rules hta_rules = {
	.windows = 0, .trace_frame = 1, .hta_arithmetic = 1, .idle_prev_end = 1,
	.whole_gpu = 0, .topk_totals = 1, .sweep_trunc_us = 1, .hta_order = 1,
	.notes = 0, .peers = 0, .own_thread = 0, .hta_sequences = 1,
	.on_shards = 0, .kernel_launch_stats = 0,
};

/* --tb-compat: a command that has the plugin's algorithm runs it
 * (compat/tb/); the model under it measures as ours does */
static const struct ta_rules *const rows[TA_NMODES] = {
	[TA_MODE_OWN] = &default_rules,
	[TA_MODE_HTA] = &hta_rules,
	[TA_MODE_TB] = &default_rules,
};

unsigned ta_rules_id(const struct ta_query *q)
{
	return q->mode < TA_NMODES ? (unsigned)q->mode : TA_MODE_OWN;
}

const struct ta_rules *ta_rules(const struct ta_query *q)
{
	return rows[ta_rules_id(q)];
}
