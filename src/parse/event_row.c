/* How a parsed event becomes a row of the events table (db_schema.c):
 * its role, and the binding of its columns to an INSERT. */
#include "event_row.h"
#include "ta_db.h"
#include "ta_parse.h"

#include <string.h>

/* Parameters of one row, in the events table's column order. */
enum {
	C_RANK = 1, C_IDX, C_PH, C_CAT, C_NAME, C_PID, C_TID, C_TS, C_DUR,
	C_HTA_TS, C_HTA_DUR, C_STREAM, C_CORR, C_EXT, C_DEVICE, C_BYTES,
	C_GBPS, C_GRID, C_BLOCK, C_REGS, C_SMEM, C_DIMS, C_TYPES, C_PYID,
	C_PYPARENT, C_SEQ, C_FWD, C_CBID, C_FLOW_ID, C_FLOW_BP, C_ALLOC,
	C_RESERVED, C_MEM_ADDR, C_MEM_DEV_TYPE, C_WAIT, C_WAIT_CORR, C_COLL,
	C_PG_NAME, C_PG_RANKS, C_IN_NELEMS, C_OUT_NELEMS, C_DTYPE, C_COUNTERS,
	C_ROLE, C_NCOLS = C_ROLE
};
_Static_assert(C_NCOLS <= 64, "a row's bound columns are a 64-bit mask");

char *ta_row_insert_sql(int rows)
{
	struct ta_buf sql = { 0 };
	int r, c;

	ta_buf_adds(&sql, "INSERT INTO events VALUES ");
	for (r = 0; r < rows; r++) {
		ta_buf_adds(&sql, r ? ",(" : "(");
		for (c = 0; c < C_NCOLS; c++)
			ta_buf_adds(&sql, c ? ",?" : "?");
		ta_buf_addc(&sql, ')');
	}
	return sql.s;
}

int ta_row_role(const char *cat)
{
	static const char *const gpu[] = { TA_GPU_CATS_C, NULL };
	static const char *const runtime[] = { "cuda_runtime", "cuda_driver",
		"Runtime", "mtia_runtime", NULL };
	static const char *const cpu[] = { "cpu_op", "python_function",
		"Operator", NULL };
	size_t i;

	for (i = 0; gpu[i]; i++)
		if (strcmp(cat, gpu[i]) == 0)
			return TA_ROLE_GPU;
	for (i = 0; runtime[i]; i++)
		if (strcmp(cat, runtime[i]) == 0)
			return TA_ROLE_RUNTIME;
	if (strcmp(cat, "cuda_sync") == 0)
		return TA_ROLE_SYNC;
	for (i = 0; cpu[i]; i++)
		if (strcmp(cat, cpu[i]) == 0)
			return TA_ROLE_CPU_OP;
	if (strcmp(cat, "user_annotation") == 0)
		return TA_ROLE_CPU_ANN;
	return strcmp(cat, "gpu_user_annotation") == 0 ? TA_ROLE_GPU_ANN :
	       TA_ROLE_OTHER;
}

/* Binds a present value; returns its column bit, 0 if absent. Text stays
 * in the batch until the statement is reset, so SQLite need not copy it. */
static uint64_t bind_val(sqlite3_stmt *st, int col, const struct ta_event *ev,
			 enum ta_field f)
{
	const struct ta_val *v = &ev->f[f];

	switch (v->type) {
	case TA_VAL_INT:
		sqlite3_bind_int64(st, col, v->i);
		break;
	case TA_VAL_REAL:
		sqlite3_bind_double(st, col, v->d);
		break;
	case TA_VAL_TEXT:
		sqlite3_bind_text(st, col, ta_event_text(ev, f), (int)v->len,
				  SQLITE_STATIC);
		break;
	default:
		return 0;
	}
	return 1ull << ((col - 1) % C_NCOLS);
}

/* HTA's lenient numeric conversion: numeric text counts, the rest is -1
 * (hta-semantics 2.5). */
static int64_t lenient_int(const struct ta_event *ev, enum ta_field f)
{
	const struct ta_val *v = &ev->f[f];
	int64_t i;

	if (v->type == TA_VAL_INT)
		return v->i;
	if (v->type == TA_VAL_REAL && v->d > -9e18 && v->d < 9e18)
		return (int64_t)v->d;
	if (v->type == TA_VAL_TEXT &&
	    ta_parse_int64(ta_event_text(ev, f), v->len, &i) == 0)
		return i;
	return -1;
}

static uint64_t bind_either(sqlite3_stmt *st, int col,
			    const struct ta_event *ev, enum ta_field a,
			    enum ta_field b)
{
	return bind_val(st, col, ev, ev->f[a].type != TA_VAL_NONE ? a : b);
}

#define BIT(c) (1ull << ((c) - 1))

static uint64_t bind_int(sqlite3_stmt *st, int base, int col, int64_t v)
{
	sqlite3_bind_int64(st, base + col, v);
	return BIT(col);
}

static uint64_t bind_times(sqlite3_stmt *st, int base,
			   const struct ta_event *ev)
{
	uint64_t m = 0;

	if (ev->has_ts)
		m |= bind_int(st, base, C_TS, ev->ts_ns) |
		     bind_int(st, base, C_HTA_TS, ev->hta_ts_ns);
	if (ev->has_dur)
		m |= bind_int(st, base, C_DUR, ev->dur_ns) |
		     bind_int(st, base, C_HTA_DUR, ev->hta_dur_ns);
	return m;
}

void ta_row_bind(sqlite3_stmt *st, int row, int64_t rank,
		       const struct ta_batch_rec *u, uint64_t *bound)
{
	const struct ta_event *ev = &u->ev;
	int base = row * C_NCOLS, c;
	uint64_t m, stale;

	m = bind_int(st, base, C_RANK, rank) |
	    bind_int(st, base, C_IDX, ev->index) |
	    bind_int(st, base, C_ROLE, u->role) |
	    bind_int(st, base, C_STREAM, lenient_int(ev, TA_F_STREAM)) |
	    bind_int(st, base, C_CORR, lenient_int(ev, TA_F_CORRELATION)) |
	    bind_times(st, base, ev);
	if (u->cat)
		m |= bind_int(st, base, C_CAT, u->cat);
	if (u->name)
		m |= bind_int(st, base, C_NAME, u->name);
	m |= bind_val(st, base + C_PH, ev, TA_F_PH) |
	     bind_val(st, base + C_PID, ev, TA_F_PID) |
	     bind_val(st, base + C_TID, ev, TA_F_TID) |
	     bind_val(st, base + C_EXT, ev, TA_F_EXTERNAL_ID) |
	     bind_either(st, base + C_DEVICE, ev, TA_F_DEVICE, TA_F_DEVICE_ID) |
	     bind_either(st, base + C_BYTES, ev, TA_F_BYTES, TA_F_MEM_BYTES) |
	     bind_val(st, base + C_GBPS, ev, TA_F_GBPS) |
	     bind_val(st, base + C_GRID, ev, TA_F_GRID) |
	     bind_val(st, base + C_BLOCK, ev, TA_F_BLOCK) |
	     bind_val(st, base + C_REGS, ev, TA_F_REGISTERS) |
	     bind_val(st, base + C_SMEM, ev, TA_F_SHARED_MEM) |
	     bind_val(st, base + C_DIMS, ev, TA_F_INPUT_DIMS) |
	     bind_val(st, base + C_TYPES, ev, TA_F_INPUT_TYPES) |
	     bind_val(st, base + C_PYID, ev, TA_F_PYTHON_ID) |
	     bind_val(st, base + C_PYPARENT, ev, TA_F_PYTHON_PARENT_ID) |
	     bind_val(st, base + C_SEQ, ev, TA_F_SEQ_NR) |
	     bind_val(st, base + C_FWD, ev, TA_F_FWD_TID) |
	     bind_val(st, base + C_CBID, ev, TA_F_CBID) |
	     bind_val(st, base + C_FLOW_ID, ev, TA_F_ID) |
	     bind_val(st, base + C_FLOW_BP, ev, TA_F_BP) |
	     bind_val(st, base + C_ALLOC, ev, TA_F_TOTAL_ALLOCATED) |
	     bind_val(st, base + C_RESERVED, ev, TA_F_TOTAL_RESERVED) |
	     bind_val(st, base + C_MEM_ADDR, ev, TA_F_MEM_ADDR) |
	     bind_val(st, base + C_MEM_DEV_TYPE, ev, TA_F_MEM_DEVICE_TYPE) |
	     bind_val(st, base + C_WAIT, ev, TA_F_WAIT_ON_STREAM) |
	     bind_val(st, base + C_WAIT_CORR, ev, TA_F_WAIT_CORR) |
	     bind_val(st, base + C_COLL, ev, TA_F_COLLECTIVE) |
	     bind_val(st, base + C_PG_NAME, ev, TA_F_PG_NAME) |
	     bind_val(st, base + C_PG_RANKS, ev, TA_F_PG_RANKS) |
	     bind_val(st, base + C_IN_NELEMS, ev, TA_F_IN_NELEMS) |
	     bind_val(st, base + C_OUT_NELEMS, ev, TA_F_OUT_NELEMS) |
	     bind_val(st, base + C_DTYPE, ev, TA_F_DTYPE) |
	     bind_val(st, base + C_COUNTERS, ev, TA_F_COUNTERS);
	for (stale = *bound & ~m, c = 1; stale; stale >>= 1, c++)
		if (stale & 1)
			sqlite3_bind_null(st, base + c);
	*bound = m;
}
