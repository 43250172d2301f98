/* The model's views (ta_model.h), by the default rules or HTA's, and
 * what some of them need built first: indexes, copies, small tables. */
#include "model_int.h"

#include <string.h>

#define R(role) TA_SQL(TA_ROLE_##role)
#define IN_SEL "rank IN (SELECT rank FROM temp.sel_ranks)"

/* A CUPTI range's counters are a JSON object (json_type only once the
 * text is known to be JSON: it fails on other text) */
#define COUNTERS_OBJECT(e) \
	"CASE WHEN json_valid(" TA_ARG(e, "counters") ") THEN json_type(" \
	TA_ARG(e, "counters") ") END = 'object'"

/* The same in both modes: raw rows of the selected ranks. */
static const char common_sql[] =
"CREATE TEMP VIEW gpu AS SELECT rank, idx, name, cat, ts_ns AS ts,"
"  max(dur_ns, 0) AS dur, stream, correlation, pid, tid, blocks_per_sm,"
"  occupancy, shared_mem, device FROM main.events"
"  WHERE role = " R(GPU) " AND " IN_SEL " AND dur_ns IS NOT NULL;"
/* every complete event as written, for the tools whose algorithms read
 * them all (--tb-compat): category and name as text */
"CREATE TEMP VIEW trace_x AS SELECT e.rank, e.idx, c.name AS cat, n.name AS name,"
"  e.ts_ns AS ts, e.dur_ns AS dur, e.external_id, e.correlation, e.tid,"
"  e.input_dims, e.input_types, e.grid, e.block, e.registers, e.shared_mem, e.blocks_per_sm,"
"  e.occupancy, e.device, " TA_ARG("e", "python_id") " AS python_id,"
"  " TA_ARG("e", "python_parent_id") " AS python_parent_id,"
"  " TA_ARG("e", "python_module_id") " AS python_module_id"
"  FROM main.events e LEFT JOIN main.names c ON c.name_id = e.cat"
"  LEFT JOIN main.names n ON n.name_id = e.name"
"  WHERE e.ph = 'X' AND e." IN_SEL " AND e.ts_ns IS NOT NULL AND e.dur_ns IS NOT NULL;"
/* and the fwdbwd flows, forward op ("s") to backward op ("f") */
"CREATE TEMP VIEW trace_flow AS SELECT e.rank, e.idx, e.ph, e.flow_id AS id,"
"  e.ts_ns AS ts FROM main.events e JOIN main.names c ON c.name_id = e.cat"
"  WHERE e.ph IN ('s', 'f') AND c.name = 'fwdbwd' AND e." IN_SEL
"  AND e.ts_ns IS NOT NULL;"
/* events_ann serves it: (rank, ts, name, dur, idx) over record_function ranges */
"CREATE TEMP VIEW steps AS SELECT e.rank,"
"  CAST(substr(n.name, 14) AS INTEGER) AS step, e.name, e.ts_ns AS ts,"
"  e.dur_ns AS dur, e.ts_ns + e.dur_ns AS end_ts, e.idx"
"  FROM main.events e INDEXED BY events_ann JOIN main.names n"
"  ON n.name_id = e.name WHERE e.role = " R(CPU_ANN) " AND e." IN_SEL
"  AND n.name GLOB 'ProfilerStep#[0-9]*' AND e.ts_ns IS NOT NULL"
"  AND e.dur_ns IS NOT NULL;"
/* the same index: every record_function range but the steps */
"CREATE TEMP VIEW ranges AS SELECT e.rank, e.ts_ns AS ts, e.dur_ns AS dur,"
"  e.name FROM main.events e INDEXED BY events_ann WHERE e.role = " R(CPU_ANN)
"  AND e." IN_SEL " AND e.ts_ns IS NOT NULL AND e.dur_ns IS NOT NULL"
"  AND e.name NOT IN (SELECT name_id FROM main.names"
"   WHERE name GLOB 'ProfilerStep#*');"
"CREATE TEMP VIEW calls AS SELECT rank, idx, name, ts_ns AS ts, dur_ns AS dur,"
"  correlation, pid, tid FROM main.events WHERE role = " R(RUNTIME)
"  AND " IN_SEL ";"
/* its WHERE is events_cpu's, so that the index serves it */
"CREATE TEMP VIEW host AS SELECT rank, idx, pid, tid, ts_ns AS ts,"
"  dur_ns AS dur, role, name, cat, input_dims FROM main.events"
"  WHERE role = " R(CPU_OP) " OR role = " R(CPU_ANN) ";"
/* events_thread's WHERE and order */
"CREATE TEMP VIEW host_thread AS SELECT rank, pid, tid, ts_ns AS ts,"
"  dur_ns AS dur, role, name, cat, correlation, idx, rowid AS row, input_dims,"
"  input_types, concrete_inputs"
"  FROM main.events WHERE " TA_THREAD_ROLES
"  AND " IN_SEL " AND ts_ns IS NOT NULL AND dur_ns IS NOT NULL"
"  AND name IS NOT NULL AND cat IS NOT NULL;"
/* an op's operands by host_thread's row, for a walk that needs them for
 * few of its rows (the index holds the rest: no table read a row) */
"CREATE TEMP VIEW op_inputs AS SELECT rowid AS row, input_dims, input_types,"
"  concrete_inputs FROM main.events;"
"CREATE TEMP VIEW gpu_ann AS SELECT rank, idx, pid, tid, ts_ns AS ts,"
"  dur_ns AS dur, name FROM main.events WHERE role = " R(GPU_ANN) ";"
/* the kept steps as the host ran them (step_win may reach further, into
 * the GPU work the step launched) */
"CREATE TEMP VIEW step_host AS SELECT s.rank, s.step, s.ts, s.end_ts"
"  FROM steps s WHERE EXISTS (SELECT 1 FROM temp.step_win w"
"   WHERE w.rank = s.rank AND w.step = s.step);"  /* EXISTS: the index, not a
						    * list per step (quadratic) */
/* CUPTI range profiler events and their counters (the parser kept their
 * args as JSON: a value cut short is left out, and so is one that is not
 * an object, as an edited database may hold: json_each would give it one
 * row without a key) */
"CREATE TEMP VIEW counter_ranges AS SELECT rank, idx, name, ts_ns AS ts"
"  FROM main.events e WHERE args IS NOT NULL AND " COUNTERS_OBJECT("e")
"  AND " IN_SEL ";"
"CREATE TEMP VIEW counter_vals AS SELECT e.rank, e.idx, j.key, j.value"
"  FROM main.events e, json_each(CASE WHEN " COUNTERS_OBJECT("e") " THEN "
   TA_ARG("e", "counters") " END) j"
"  WHERE e.args IS NOT NULL AND " COUNTERS_OBJECT("e")
"  AND j.type IN ('integer', 'real');"
/* the trace's clock: ts + base_ns is the Unix epoch in ns, the clock of
 * the allocator's recorder (Kineto writes baseTimeNanoseconds; a trace
 * without it has epoch times already: 0) */
"CREATE TEMP VIEW rank_clock AS SELECT f.rank, COALESCE((SELECT"
"  CAST(m.value AS INTEGER) FROM main.meta m WHERE m.rank = f.rank"
"  AND m.key = 'baseTimeNanoseconds'), 0) AS base_ns FROM main.files f;"
/* the parser's tables, as analyses read them: a name by its id, and each
 * rank's input file */
"CREATE TEMP VIEW label AS SELECT name_id, name FROM main.names;"
TA_GIVEN_PATHS_DDL
"CREATE TEMP VIEW inputs AS SELECT rank, " TA_GIVEN_PATH("f") " AS path,"
"  mtime_ns FROM main.files f;"
/* deviceProperties lists the node's GPUs: a rank's is the one its GPU
 * work ran on (the device of its first activity), or the only one; an
 * entry that is not an object is passed over (json_extract only ever
 * sees an object or NULL) */
"CREATE TEMP VIEW gpu_device AS WITH props AS (SELECT m.rank, j.key AS k,"
"   CASE WHEN j.type = 'object' THEN j.value END AS v"
"  FROM main.meta m, json_each(CASE WHEN json_valid(m.value)"
"   AND json_type(m.value) = 'array' THEN m.value ELSE '[]' END) j"
"  WHERE m.key = 'deviceProperties' AND m." IN_SEL "),"
" objs AS (SELECT rank, k, v FROM props WHERE v IS NOT NULL),"
" n AS (SELECT rank, count(*) AS cnt, (SELECT e.device FROM main.events e"
"   WHERE e.rank = o.rank AND e.role = " R(GPU) " AND e.device IS NOT NULL LIMIT 1)"
"   AS dev FROM objs o GROUP BY rank)"
" SELECT o.rank, json_extract(o.v, '$.id') AS id, json_extract(o.v, '$.name') AS name,"
"  json_extract(o.v, '$.computeMajor') AS cc_major,"
"  json_extract(o.v, '$.computeMinor') AS cc_minor,"
"  json_extract(o.v, '$.numSms') AS sms,"
"  json_extract(o.v, '$.totalGlobalMem') AS mem_bytes"
" FROM objs o JOIN n ON n.rank = o.rank"
" WHERE n.cnt = 1 OR json_extract(o.v, '$.id') = n.dev;"
/* every deviceProperties entry by its place in the list (the plugin
 * reads a GPU's at the index of its id) */
"CREATE TEMP VIEW device_props AS SELECT m.rank, CAST(j.key AS INTEGER) AS pos,"
"  json_extract(j.value, '$.name') AS name,"
"  json_extract(j.value, '$.totalGlobalMem') AS mem_bytes,"
"  json_extract(j.value, '$.computeMajor') AS cc_major,"
"  json_extract(j.value, '$.computeMinor') AS cc_minor"
"  FROM main.meta m, json_each(CASE WHEN json_valid(m.value)"
"   AND json_type(m.value) = 'array' THEN m.value ELSE '[]' END) j"
"  WHERE m.key = 'deviceProperties' AND j.type = 'object' AND m." IN_SEL ";"
/* an allocator snapshot, when that is what was read (snapshot.c) */
"CREATE TEMP VIEW snapshot_segments AS SELECT * FROM main.snap_segments;"
"CREATE TEMP VIEW snapshot_blocks AS SELECT * FROM main.snap_blocks;"
"CREATE TEMP VIEW snapshot_events AS SELECT * FROM main.snap_events;"
/* events_mem's WHERE (ph = 'i'), so that the index serves it */
"CREATE TEMP VIEW mem AS SELECT rank, idx, pid, tid, ts_ns AS ts,"
"  COALESCE(" TA_ARG("e", "mem_device_type") ", -1) AS dev_type,"
"  COALESCE(device, -1) AS dev, " TA_ARG("e", "mem_addr") " AS addr, bytes,"
"  " TA_ARG("e", "total_allocated") " AS allocated,"
"  " TA_ARG("e", "total_reserved") " AS reserved,"
/* as written, for the plugin's port (an odd type or id is no device there) */
"  " TA_ARG("e", "mem_device_type") " AS dev_type_raw, device AS dev_raw"
"  FROM main.events e WHERE ph = 'i'"
"  AND name = (SELECT name_id FROM main.names WHERE name = '[memory]')"
"  AND " IN_SEL " AND ts_ns IS NOT NULL;";

/* Default: the GPU work clipped to each rank's analysis window (span,
 * window.c): what the per-rank breakdowns measure, by time (dev_all: work
 * launched in the step the profiler cut short runs there too; work that only touches
 * an end is not in it: a call of no length would count). sort_ts, the start
 * before clipping, orders rows as ts does, and dev's (rank, ts) index
 * serves it: ORDER BY ts sorted every row (18 of 120 ms on 200 MB). */
#define DEV_WIN_SQL \
"CREATE TEMP VIEW dev_win AS SELECT d.rank, d.idx, d.name, max(d.ts, w.ts) AS ts," \
"  min(d.ts + d.dur, w.end_ts) - max(d.ts, w.ts) AS dur, d.stream," \
"  d.correlation, d.gbps, d.kind, d.idle_kernel, d.launch_ts, d.ord, d.pid," \
"  d.tid, d.blocks_per_sm, d.occupancy, d.shared_mem, d.ts AS sort_ts, d.cut" \
"  FROM dev_all d JOIN span w ON w.rank = d.rank" \
"  WHERE (d.ts < w.end_ts AND d.ts + d.dur > w.ts)" \
"   OR (d.dur = 0 AND d.ts >= w.ts AND d.ts <= w.end_ts);"

/* Default: a correlation's GPU work was launched by its last runtime or
 * driver call (any: cuLaunchKernel, cudaGraphLaunch, hip*); the queue
 * grows at the launch and shrinks at the start, and work that starts
 * before its launch call counts as launched then (never below zero);
 * annotation ranges of the analysis window. */
static const char default_sql[] =
DEV_WIN_SQL
/* (joined with dev, whose ranks are the selected ones) */
"CREATE TEMP VIEW launch AS SELECT r.rank, r.correlation, r.idx, r.ts_ns AS ts,"
"  r.dur_ns AS dur, r.name, r.tid FROM main.events r WHERE r.role = " R(RUNTIME)
"  AND r.correlation != -1 AND r.idx = (SELECT max(x.idx)"
"  FROM main.events x WHERE x.role = " R(RUNTIME) " AND x.rank = r.rank"
"  AND x.correlation = r.correlation);"
/* ingestion noted each file's extent */
"CREATE TEMP VIEW rank_span AS SELECT rank, min_ts_ns AS first_ts,"
"  max_ts_ns AS last_ts"
"  FROM main.files;"
"CREATE TEMP VIEW enqueue AS"
"  SELECT rank, stream, min(launch_ts, ts) AS ts, 1 AS sign FROM dev"
"  WHERE correlation != -1 AND launch_ts IS NOT NULL"
"  UNION ALL SELECT rank, stream, ts, -1 FROM dev"
"  WHERE correlation != -1 AND launch_ts IS NOT NULL;"
/* one view per category, its test first: the costlier ones (the rank,
 * the window) then run on annotation rows alone */
#define ANN_VIEW(view, cat) \
"CREATE TEMP VIEW " view " AS SELECT e.rank, e.name, max(e.dur_ns, 0) AS dur" \
"  FROM main.events e WHERE e.cat = (SELECT name_id FROM main.names" \
"   WHERE name = '" cat "') AND e." IN_SEL " AND e.dur_ns IS NOT NULL" \
"  AND e.ts_ns IS NOT NULL AND e.ts_ns < COALESCE((SELECT last_start" \
"   FROM win w WHERE w.rank = e.rank), 9223372036854775807);"
ANN_VIEW("cpu_ann", "user_annotation")
ANN_VIEW("gpu_ann_win", "gpu_user_annotation");

/* HTA §9.7: a correlation is a launch when one of its rows has one of
 * these names, and every CPU row of it counts as its call. */
#define HTA_LAUNCH_APIS "'cudaLaunchKernel', 'cudaLaunchKernelExC'," \
	" 'runFunction - job_prep_and_submit_for_execution'," \
	" 'cudaMemsetAsync', 'cudaMemcpyAsync'"
/* HTA §9.8: the queue knows launches by these names, with a partner. */
#define HTA_QUEUE_APIS "'cudaLaunchKernel', 'cudaLaunchKernelExC'," \
	" 'cuLaunchKernel', 'cuLaunchKernelEx', 'cudaMemcpyAsync'," \
	" 'cudaMemsetAsync', 'runFunction - job_prep_and_submit_for_execution'," \
	" 'hipLaunchKernel', 'hipExtModuleLaunchKernel', 'hipMemcpyAsync'," \
	" 'hipMemsetAsync', 'hipMemcpyWithStream'"

static const char hta_sql[] =
/* HTA measures every kept row: no window to clip to */
"CREATE TEMP VIEW dev_win AS SELECT *, ts AS sort_ts, 0 AS cut FROM dev;"
"CREATE TEMP VIEW launch AS SELECT c.rank, c.correlation, c.idx, c.ts, c.dur,"
"  c.name, c.tid FROM hrows c WHERE c.stream = -1 AND c.correlation != -1"
"  AND EXISTS (SELECT 1 FROM hrows x JOIN main.names xn ON xn.name_id = x.name"
"   WHERE x.rank = c.rank AND x.correlation = c.correlation"
"   AND xn.name IN (" HTA_LAUNCH_APIS "));"
/* +1 points first at equal times (the analysis sorts sign descending) */
"CREATE TEMP VIEW enqueue AS"
"  SELECT d.rank, d.stream, l.ts, 1 AS sign FROM hta_enqueue l JOIN dev d"
"  ON d.rank = l.rank AND d.correlation = l.correlation"
"  UNION ALL SELECT d.rank, d.stream, d.ts, -1 FROM dev d WHERE EXISTS"
"  (SELECT 1 FROM hta_enqueue l WHERE l.rank = d.rank"
"   AND l.correlation = d.correlation);"
"CREATE TEMP VIEW cpu_ann AS SELECT h.rank, h.name, h.dur FROM hrows h"
"  WHERE h.cat = (SELECT name_id FROM main.names WHERE name = 'user_annotation');"
"CREATE TEMP VIEW gpu_ann_win AS SELECT h.rank, h.name, h.dur FROM hrows h"
"  WHERE h.cat = (SELECT name_id FROM main.names"
"   WHERE name = 'gpu_user_annotation');"
"CREATE TEMP VIEW rank_span AS SELECT rank, min(ts) AS first_ts,"
"  max(ts) AS last_ts"
"  FROM hrows GROUP BY rank;";

/* §9.8: launch rows by name whose partner index (§4) is > 0, so a launch
 * whose kernel is the file's first event does not count. */
static const char hta_enqueue_sql[] =
"CREATE TEMP TABLE hta_enqueue AS SELECT h.rank, h.correlation, h.ts"
"  FROM hrows h JOIN main.names n ON n.name_id = h.name"
"  WHERE h.correlation != -1 AND n.name IN (" HTA_QUEUE_APIS ")"
"  AND EXISTS (SELECT 1 FROM hrows g WHERE g.rank = h.rank"
"   AND g.correlation = h.correlation AND g.is_gpu AND +g.idx > 0);"
"CREATE INDEX temp.hta_enqueue_corr ON hta_enqueue (rank, correlation);";

/* host, when events_cpu cannot be added (a database we may not write, or
 * one whose writer would keep us waiting): a copy for this run. */
static const char host_copy_sql[] =
"DROP VIEW temp.host;"
"CREATE TEMP TABLE host AS SELECT rank, idx, pid, tid, ts_ns AS ts,"
"  dur_ns AS dur, role, name, cat, input_dims FROM main.events"
"  WHERE role = " R(CPU_OP) " OR role = " R(CPU_ANN) ";"
"CREATE INDEX temp.host_time ON host (rank, ts, dur);";

/* Both rules: each rank's first launch call (warm-up's work came before
 * it). */
#define FIRST_CALL_VIEW \
"CREATE TEMP VIEW first_call AS SELECT s.rank, " TA_FIRST_CALL_SQL("s.rank") \
"  AS correlation FROM sel_ranks s;"

static const char *const view_names[] = {
	"gpu", "steps", "ranges", "calls", "host", "host_thread", "gpu_ann", "gpu_device", "device_props", "step_host", "mem", "counter_ranges", "counter_vals", "snapshot_segments", "snapshot_blocks", "snapshot_events", "rank_clock", "dev_win", "launch",
	"enqueue", "cpu_ann", "gpu_ann_win", "rank_span", "first_call", "label", "inputs", "op_inputs", "trace_x", "trace_flow", NULL
};

/* Drops a TEMP view or table of that name, whichever it is. */
static int drop(sqlite3 *db, const char *name, struct ta_error *err)
{
	char sql[128];
	int64_t views;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM sqlite_temp_master"
		 " WHERE type = 'view' AND name = '%s'", name);
	if (ta_db_get_int(db, sql, 0, &views, err) < 0)
		return -1;
	snprintf(sql, sizeof(sql), views ? "DROP VIEW temp.%s" :
		 "DROP TABLE IF EXISTS temp.%s", name);
	return ta_db_exec(db, sql, err);
}

int ta_model_views(sqlite3 *db, int trace_frame, struct ta_error *err)
{
	size_t i;

	for (i = 0; view_names[i]; i++)
		if (drop(db, view_names[i], err) < 0)
			return -1;
	return ta_db_exec(db, common_sql, err) < 0 ||
	       ta_db_exec(db, FIRST_CALL_VIEW, err) < 0 ||
	       ta_db_exec(db, trace_frame ? hta_sql : default_sql, err) < 0 ? -1 : 0;
}

int ta_model_build(sqlite3 *db, int trace_frame, unsigned need,
		   struct ta_error *err)
{
	/* the index on a database we cannot write: a copy for this run */
	if ((need & TA_NEED_HOST) &&
	    ta_db_need_index(db, TA_INDEX_HOST_TIME, NULL) < 0 &&
	    ta_db_exec(db, host_copy_sql, err) < 0)
		return -1;
	/* without its index (same reason), SQLite sorts instead */
	if (need & TA_NEED_THREAD)
		ta_db_need_index(db, TA_INDEX_THREAD, NULL);
	if (need & TA_NEED_MEM)
		ta_db_need_index(db, TA_INDEX_MEMORY, NULL);
	if (need & TA_NEED_FLOW)
		ta_db_need_index(db, TA_INDEX_FLOW, NULL);
	if ((need & TA_NEED_COLL) && ta_model_coll(db, err) < 0)
		return -1;
	if ((need & TA_NEED_QUEUE) && trace_frame &&
	    ta_db_exec(db, hta_enqueue_sql, err) < 0)
		return -1;
	return 0;
}
