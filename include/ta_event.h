/* The event model: one Chrome-trace event as the parser hands it over. */
#ifndef TA_EVENT_H
#define TA_EVENT_H

#include "ta.h"

enum ta_val_type { TA_VAL_NONE, TA_VAL_INT, TA_VAL_REAL, TA_VAL_TEXT };

/* A scalar (or a nested value kept as compact JSON text). Text lives in
 * the event's arena at [off, off+len) and dies with the event. */
struct ta_val {
	enum ta_val_type type;
	int64_t i;
	double d;
	size_t off, len;
};

/* Fields the parser keeps; everything else in an event is skipped. */
enum ta_field {
	TA_F_PH, TA_F_CAT, TA_F_NAME, TA_F_PID, TA_F_TID, TA_F_ID, TA_F_BP,
	/* from args */
	TA_F_STREAM, TA_F_CORRELATION, TA_F_EXTERNAL_ID, TA_F_DEVICE,
	TA_F_BYTES, TA_F_GBPS, TA_F_GRID, TA_F_BLOCK, TA_F_REGISTERS,
	TA_F_SHARED_MEM, TA_F_INPUT_DIMS, TA_F_INPUT_TYPES, TA_F_PYTHON_ID,
	TA_F_PYTHON_PARENT_ID, TA_F_SEQ_NR, TA_F_FWD_TID, TA_F_CBID,
	TA_F_TOTAL_ALLOCATED, TA_F_TOTAL_RESERVED, TA_F_DEVICE_ID,
	TA_F_MEM_BYTES, TA_F_MEM_ADDR, TA_F_MEM_DEVICE_TYPE, TA_F_WAIT_ON_STREAM,
	TA_F_WAIT_CORR, TA_F_COLLECTIVE, TA_F_PG_NAME, TA_F_PG_RANKS,
	TA_F_IN_NELEMS, TA_F_OUT_NELEMS, TA_F_DTYPE,
	/* the whole args object of a CUPTI counter range, as JSON text */
	TA_F_COUNTERS,
	TA_NFIELDS
};

struct ta_event {
	int64_t index;          /* position in traceEvents, from 0 */
	int has_ts, has_dur;
	int ts_is_float;        /* ts written with a fraction or exponent */
	int64_t ts_ns, dur_ns;  /* exact: µs text scaled by 1000 */
	/* HTA's whole-µs rounding (hta-semantics §2.3) computed on doubles:
	 * ceil(ts) and floor(ts + dur) - ceil(ts), in ns. */
	int64_t hta_ts_ns, hta_dur_ns;
	struct ta_val f[TA_NFIELDS];
	uint64_t set;           /* bit f: f[f] is present (TA_EVENT_SET) */
	struct ta_buf arena;
};

/* Present fields are marked, so that a hundred thousand events a second
 * are cleared, packed and bound field by field, not all TA_NFIELDS. */
#define TA_EVENT_SET(ev, field) ((ev)->set |= 1ull << (field))

/* Clears the present fields (and only those): an event is reused. */
static inline void ta_event_clear_fields(struct ta_event *ev)
{
	uint64_t set;
	int f;

	for (set = ev->set, f = 0; set; set >>= 1, f++)
		if (set & 1)
			__builtin_memset(&ev->f[f], 0, sizeof(ev->f[f]));
	ev->set = 0;
}
_Static_assert(TA_NFIELDS <= 64, "ta_event.set has a bit per field");

static inline const char *ta_event_text(const struct ta_event *ev,
					enum ta_field f)
{
	return ev->arena.s + ev->f[f].off;
}

#endif
