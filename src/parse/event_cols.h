/* The events table, a column a line, in its order: the INSERT binds by
 * position, and the column numbers (C_*), the CREATE TABLE (db_schema.c)
 * and the binding of each (event_row.c) all come from this one list.
 * X(NAME, HOW, FIELD, OTHER, SCHEMA TEXT): HOW is VAL (the event's FIELD
 * as it came), EITHER (FIELD, else OTHER), GROUP (a group's size: FIELD,
 * else the length of the list OTHER), NONBLANK (FIELD unless every
 * entry of its list is "": most ops' Concrete Inputs) or SELF (bound by hand in
 * ta_row_bind: numbers the parser made); a text "" is a column declared
 * on the line of the one before (`pid, tid,`). */
#ifndef TA_EVENT_COLS_H
#define TA_EVENT_COLS_H

#include "ta_event.h"

#define TA_EVENT_COLUMNS(X) \
	X(RANK, SELF, 0, 0, \
	  "  rank        INTEGER NOT NULL,\n") \
	X(IDX, SELF, 0, 0, \
	  "  idx         INTEGER NOT NULL,  -- position in traceEvents, from 0\n") \
	X(PH, VAL, TA_F_PH, 0, \
	  "  ph          TEXT,\n") \
	X(CAT, SELF, 0, 0, \
	  "  cat         INTEGER,  -- names.name_id, NULL if absent\n") \
	X(NAME, SELF, 0, 0, \
	  "  name        INTEGER,  -- names.name_id, NULL if absent\n") \
	X(PID, VAL, TA_F_PID, 0, \
	  "  pid, tid,             -- as written: integer or text\n") \
	X(TID, VAL, TA_F_TID, 0, \
	  "") \
	X(TS, SELF, 0, 0, \
	  "  ts_ns       INTEGER,  -- exact: ts (µs) x 1000; NULL if absent\n") \
	X(DUR, SELF, 0, 0, \
	  "  dur_ns      INTEGER,  -- exact; NULL if absent\n") \
	X(HTA_TS, SELF, 0, 0, \
	  "  hta_ts_off  INTEGER,  -- HTA's ceil(ts) in ns (hta-semantics 2.3) less ts_ns\n") \
	X(HTA_DUR, SELF, 0, 0, \
	  "  hta_dur_off INTEGER,  -- HTA's floor(ts + dur) - ceil(ts) in ns less dur_ns\n") \
	X(STREAM, SELF, 0, 0, \
	  "  stream      INTEGER NOT NULL DEFAULT -1,  -- args.stream, -1 if absent\n") \
	X(CORR, SELF, 0, 0, \
	  "  correlation INTEGER NOT NULL DEFAULT -1,  -- args.correlation, -1 if absent\n") \
	X(EXT, EITHER, TA_F_EXTERNAL_ID, TA_F_EXTERNAL_ID_LC, \
	  "  external_id,          -- args.\"External id\" (older traces: \"external id\")\n") \
	X(DEVICE, EITHER, TA_F_DEVICE, TA_F_DEVICE_ID, \
	  "  device      INTEGER,\n") \
	X(BYTES, EITHER, TA_F_BYTES, TA_F_MEM_BYTES, \
	  "  bytes       INTEGER,  -- args.bytes (copies), args.Bytes ([memory])\n") \
	X(GBPS, VAL, TA_F_GBPS, 0, \
	  "  gbps        REAL,     -- args.\"memory bandwidth (GB/s)\"\n") \
	X(GRID, VAL, TA_F_GRID, 0, \
	  "  grid TEXT, block TEXT, registers INTEGER, shared_mem INTEGER,\n") \
	X(BLOCK, VAL, TA_F_BLOCK, 0, \
	  "") \
	X(REGS, VAL, TA_F_REGISTERS, 0, \
	  "") \
	X(SMEM, VAL, TA_F_SHARED_MEM, 0, \
	  "") \
	X(BLOCKS_SM, VAL, TA_F_BLOCKS_PER_SM, 0, \
	  "  blocks_per_sm REAL,   -- kernels: args.\"blocks per SM\" (Kineto's)\n") \
	X(OCCUPANCY, VAL, TA_F_OCCUPANCY, 0, \
	  "  occupancy   REAL,     -- args.\"est. achieved occupancy %\" (0: not known)\n") \
	X(DIMS, VAL, TA_F_INPUT_DIMS, 0, \
	  "  input_dims  TEXT,     -- args.\"Input Dims\" as written, e.g. [[4, 256], []]\n") \
	X(TYPES, VAL, TA_F_INPUT_TYPES, 0, \
	  "  input_types TEXT,\n") \
	X(CONCRETE, NONBLANK, TA_F_CONCRETE_INPUTS, 0, \
	  "  concrete_inputs TEXT, -- args.\"Concrete Inputs\" (scalars: stride, is_causal),\n" \
	    "              -- NULL when every entry is \"\"\n") \
	X(SEQ, VAL, TA_F_SEQ_NR, 0, \
	  "  seq_nr, fwd_tid, cbid,  -- autograd's sequence number and thread; CUPTI's\n" \
	    "              -- callback id of a runtime call\n") \
	X(FWD, VAL, TA_F_FWD_TID, 0, \
	  "") \
	X(CBID, VAL, TA_F_CBID, 0, \
	  "") \
	X(FLOW_ID, VAL, TA_F_ID, 0, \
	  "  flow_id, flow_bp,     -- flow events (ph s/f/t): id and binding point\n") \
	X(FLOW_BP, VAL, TA_F_BP, 0, \
	  "") \
	X(PG_NAME, VAL, TA_F_PG_NAME, 0, \
	  "  pg_name TEXT,         -- collectives: args.\"Process Group Name\"\n") \
	X(ARGS, SELF, 0, 0, \
	  "  args        TEXT,     -- the rarer args below as a JSON object, NULL if none\n") \
	X(ROLE, SELF, 0, 0, \
	  "  role        INTEGER NOT NULL  -- from cat: 1 GPU activity (kernel, memcpy,\n" \
	    "              -- memset), 2 runtime/driver call, 3 cuda_sync, 4 CPU op or\n" \
	    "              -- Python function, 5 GPU annotation, 6 CPU annotation\n" \
	    "              -- (record_function, ProfilerStep#N), 0 other\n")

/* The rarer args: a few events in a hundred carry any (collectives,
 * [memory] instants, Python frames, cuda_sync, CUPTI ranges), and a column
 * each cost every row of a trace (SQLite's work per row grows with the
 * columns, present or NULL): they share the column args, a JSON object of
 * the ones present under these keys, which the views (db_schema.c, the
 * model's) give back as columns of these names.
 * X(KEY, HOW, FIELD, OTHER, SCHEMA TEXT), HOW as above (VAL or GROUP), or
 * TEXT: VAL, read back as text (the column was declared TEXT: a number
 * became its text). */
#define TA_EVENT_ARGS_JSON(X) \
	X(collective, TEXT, TA_F_COLLECTIVE, 0, \
	  "--   collective         args.\"Collective name\"\n") \
	X(pg_size, GROUP, TA_F_GROUP_SIZE, TA_F_PG_RANKS, \
	  "--   pg_size            its group's members: args.\"Group size\", else the\n" \
	  "--                      length of \"Process Group Ranks\" unless cut\n" \
	  "--                      (\"[0, ..., 29, ...]\")\n") \
	X(in_nelems, VAL, TA_F_IN_NELEMS, 0, \
	  "--   in_nelems, out_nelems, dtype  args.\"In msg nelems\", \"Out ...\", dtype\n") \
	X(out_nelems, VAL, TA_F_OUT_NELEMS, 0, "") \
	X(dtype, VAL, TA_F_DTYPE, 0, "") \
	X(p2p_dst, VAL, TA_F_P2P_DST, 0, \
	  "--   p2p_dst, p2p_src   a send's receiver, a recv's sender: args.\"Dst Rank\",\n" \
	  "--                      \"Src Rank\" (global ranks)\n") \
	X(p2p_src, VAL, TA_F_P2P_SRC, 0, "") \
	X(total_allocated, VAL, TA_F_TOTAL_ALLOCATED, 0, \
	  "--   total_allocated, total_reserved, mem_addr, mem_device_type  [memory]\n" \
	  "--                      instants: args.\"Total Allocated\", ..., Addr,\n" \
	  "--                      \"Device Type\"\n") \
	X(total_reserved, VAL, TA_F_TOTAL_RESERVED, 0, "") \
	X(mem_addr, VAL, TA_F_MEM_ADDR, 0, "") \
	X(mem_device_type, VAL, TA_F_MEM_DEVICE_TYPE, 0, "") \
	X(python_id, VAL, TA_F_PYTHON_ID, 0, \
	  "--   python_id, python_parent_id, python_module_id  Python frames'\n") \
	X(python_parent_id, VAL, TA_F_PYTHON_PARENT_ID, 0, "") \
	X(python_module_id, VAL, TA_F_PYTHON_MODULE_ID, 0, "") \
	X(wait_on_stream, VAL, TA_F_WAIT_ON_STREAM, 0, \
	  "--   wait_on_stream, wait_corr  cuda_sync: the stream an event was\n" \
	  "--                      recorded on, and its cudaEventRecord's correlation\n") \
	X(wait_corr, VAL, TA_F_WAIT_CORR, 0, "") \
	X(counters, VAL, TA_F_COUNTERS, 0, \
	  "--   counters           cuda_profiler_range: its args (CUPTI counters),\n" \
	  "--                      JSON text\n")

#endif
