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

/* The args the parser keeps, X(FIELD, "key"): one list for the field
 * enum and the parser's key table (fields.c). */
#define TA_EVENT_ARGS(X) \
	X(TA_F_STREAM, "stream") \
	X(TA_F_CORRELATION, "correlation") \
	X(TA_F_EXTERNAL_ID, "External id") \
	X(TA_F_DEVICE, "device") \
	X(TA_F_BYTES, "bytes") \
	X(TA_F_GBPS, "memory bandwidth (GB/s)") \
	X(TA_F_GRID, "grid") \
	X(TA_F_BLOCK, "block") \
	X(TA_F_REGISTERS, "registers per thread") \
	X(TA_F_SHARED_MEM, "shared memory") \
	X(TA_F_BLOCKS_PER_SM, "blocks per SM") \
	X(TA_F_OCCUPANCY, "est. achieved occupancy %") \
	X(TA_F_INPUT_DIMS, "Input Dims") \
	X(TA_F_INPUT_TYPES, "Input type") \
	X(TA_F_CONCRETE_INPUTS, "Concrete Inputs") \
	X(TA_F_PYTHON_ID, "Python id") \
	X(TA_F_PYTHON_PARENT_ID, "Python parent id") \
	X(TA_F_PYTHON_MODULE_ID, "Python module id") \
	X(TA_F_SEQ_NR, "Sequence number") \
	X(TA_F_FWD_TID, "Fwd thread id") \
	X(TA_F_CBID, "cbid") \
	X(TA_F_TOTAL_ALLOCATED, "Total Allocated") \
	X(TA_F_TOTAL_RESERVED, "Total Reserved") \
	X(TA_F_DEVICE_ID, "Device Id") \
	X(TA_F_MEM_BYTES, "Bytes") \
	X(TA_F_MEM_ADDR, "Addr") \
	X(TA_F_MEM_DEVICE_TYPE, "Device Type") \
	X(TA_F_WAIT_ON_STREAM, "wait_on_stream") \
	X(TA_F_WAIT_CORR, "wait_on_cuda_event_record_corr_id") \
	X(TA_F_COLLECTIVE, "Collective name") \
	/* collectives (record_param_comms; older traces: the kernel) */ \
	X(TA_F_PG_NAME, "Process Group Name") \
	X(TA_F_PG_RANKS, "Process Group Ranks") \
	X(TA_F_GROUP_SIZE, "Group size") \
	X(TA_F_IN_NELEMS, "In msg nelems") \
	X(TA_F_OUT_NELEMS, "Out msg nelems") \
	X(TA_F_DTYPE, "dtype") \
	/* point-to-point: the peer's global rank (record_param_comms) */ \
	X(TA_F_P2P_DST, "Dst Rank") \
	X(TA_F_P2P_SRC, "Src Rank") \
	/* older Kineto (and the TensorBoard plugin's tests) write it so */ \
	X(TA_F_EXTERNAL_ID_LC, "external id")

/* Fields the parser keeps; everything else in an event is skipped. */
#define TA_FIELD_ENUM_(field, key) field,
enum ta_field {
	TA_F_PH, TA_F_CAT, TA_F_NAME, TA_F_PID, TA_F_TID, TA_F_ID, TA_F_BP,
	TA_EVENT_ARGS(TA_FIELD_ENUM_)
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
