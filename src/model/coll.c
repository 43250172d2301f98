/* The collectives of every rank (TA_NEED_COLL): one row per collective
 * GPU kernel (NCCL, RCCL, HCCL, gloo), linked through its launch call to
 * the CPU op that issued it (record_param_comms), which in torch 2.11
 * carries what the kernel does not: the process group, the collective's
 * name, message sizes and dtype (older traces carry some on the kernel:
 * the kernel's own args win). The launch call's External id is the op's;
 * some kernels carry it themselves.
 *
 *   coll (rank, idx, pg, pg_size, name, in_nelems, out_nelems, dtype,
 *         step, seq, issue_ts, ts, end_ts, stream, world)
 *
 * world: distributedInfo.world_size of the rank's trace, NULL if none.
 *
 * pg_size: the group's members (events.args pg_size: "Group size", else the
 * length of an uncut member list; the kernel's or its op's, the larger:
 * a smaller one would hide a missing rank), 0 if unknown.
 *
 * step: the ProfilerStep#N the op (else the launch call, else the kernel)
 * falls in, NULL outside every step; seq: the collective's place among
 * its rank's collectives of the same group in that step, from 1, by issue
 * time. The k-th of group G in step N on rank A is the k-th on rank B.
 *
 * A collective launched before the trace began (warm-up: its correlation
 * precedes every runtime call of the rank, so no call or op names it) runs
 * in the first step's window on one rank and may be missing on another,
 * whose profiler started later. Such collectives belong to the step before
 * the first (step = first - 1) and are numbered from the last (seq -1,
 * -2, ...): the last warm-up collective is the last on every rank.
 *
 * Every rank, whatever --ranks selects: a collective is matched with its
 * peers, which need not be selected. On a shard, every shard's (below). */
#include "model_int.h"

#include <stdio.h>
#include <string.h>

static const char coll_sql[] =
"DROP TABLE IF EXISTS temp.coll;"
/* the steps alone, for the step of each collective: the search back
 * through every record_function range from the collective to its step
 * (a DDP rank's 4800 collectives: 0.8 G instructions) goes through the
 * steps alone; ties as events_ann orders them */
"DROP TABLE IF EXISTS temp.coll_steps;"
"CREATE TEMP TABLE coll_steps AS SELECT st.rank, st.ts_ns AS ts,"
"  st.ts_ns + st.dur_ns AS end_ts, st.name, st.dur_ns AS dur, st.idx,"
"  CAST(substr(sn.name, 14) AS INTEGER) AS n"
"  FROM main.events st INDEXED BY events_ann JOIN main.names sn ON sn.name_id = st.name"
"  WHERE st.role = " TA_SQL(TA_ROLE_CPU_ANN) " AND sn.name GLOB 'ProfilerStep#[0-9]*';"
"CREATE INDEX temp.coll_steps_ts ON coll_steps (rank, ts, name, dur, idx);"
/* The step of a collective is found among the record_function ranges
 * (events_ann, few rows), not through the host index events_cpu that a
 * cached database has once diagnose ran (back through every CPU op of the
 * step for each collective). A group's size is counted before the rows
 * are sorted for their sequence: its member list (2048 ranks: 10 KB a
 * collective) made the sort spill 320 MB to disk (4.4 s; now 0.5 s). */
"CREATE TEMP TABLE coll AS"
" WITH comm_names AS (SELECT name_id FROM main.names"
"  WHERE ta_kind(name, 'kernel', 0) = " TA_SQL(TA_KIND_COMM) "),"
/* a kernel whose dur is not a usable number (NULL) is a member with no
 * length (peers.c: its wait not measured), not a collective missing on
 * its rank (its peers' then read "on one rank only", waits 0) */
" k AS (SELECT g.rank, g.idx, g.ts_ns AS ts, g.ts_ns + max(COALESCE(g.dur_ns, 0), 0) AS end_ts,"
"  g.stream, g.correlation, g.external_id AS ext,"
"  " TA_ARG_TEXT("g", "collective") " AS collective, g.pg_name,"
"  " TA_ARG("g", "pg_size") " AS pg_n, " TA_ARG("g", "in_nelems") " AS in_nelems,"
"  " TA_ARG("g", "out_nelems") " AS out_nelems, " TA_ARG("g", "dtype") " AS dtype,"
"  " TA_ARG("g", "p2p_dst") " AS k_dst, " TA_ARG("g", "p2p_src") " AS k_src,"
"  kn.name AS kname"
"  FROM main.events g JOIN main.names kn ON kn.name_id = g.name"
"  WHERE g.role = " TA_SQL(TA_ROLE_GPU) " AND g.ts_ns IS NOT NULL"
"  AND g.name IN comm_names),"
" c AS (SELECT k.*, r.ts_ns AS call_ts, r.external_id AS call_ext, r.tid AS call_tid FROM k"
"  LEFT JOIN main.events r ON r.role = " TA_SQL(TA_ROLE_RUNTIME)
"  AND r.rank = k.rank AND k.correlation != -1 AND r.correlation = k.correlation"
"  AND r.idx = (SELECT max(x.idx) FROM main.events x WHERE x.role = "
      TA_SQL(TA_ROLE_RUNTIME) " AND x.rank = k.rank"
"   AND x.correlation = k.correlation)),"
" o AS (SELECT c.*, p.ts_ns AS op_ts, " TA_ARG_TEXT("p", "collective") " AS op_coll,"
"  p.pg_name AS op_pg, " TA_ARG("p", "pg_size") " AS op_n,"
"  " TA_ARG("p", "in_nelems") " AS op_in, " TA_ARG("p", "out_nelems") " AS op_out,"
"  " TA_ARG("p", "dtype") " AS op_dtype, " TA_ARG("p", "p2p_dst") " AS op_dst,"
"  " TA_ARG("p", "p2p_src") " AS op_src, p.tid AS op_tid FROM c"
"  LEFT JOIN main.events p ON p.pg_name IS NOT NULL AND p.role = "
      TA_SQL(TA_ROLE_CPU_OP) " AND p.rank = c.rank"
"  AND p.external_id = COALESCE(c.ext, c.call_ext)"
"  AND p.idx = (SELECT min(y.idx) FROM main.events y WHERE y.pg_name IS NOT NULL"
"   AND y.role = " TA_SQL(TA_ROLE_CPU_OP) " AND y.rank = c.rank"
"   AND y.external_id = COALESCE(c.ext, c.call_ext))),"
" s AS (SELECT o.*, COALESCE(o.op_ts, o.call_ts, o.ts) AS issue_ts,"
"  o.op_ts IS NULL AND o.call_ts IS NULL AND o.correlation >= 0"
"  AND o.correlation < " TA_FIRST_CALL_SQL("o.rank") " AS early FROM o),"
" first AS (SELECT st.rank, min(CAST(substr(sn.name, 14) AS INTEGER)) AS n"
"  FROM main.events st INDEXED BY events_ann JOIN main.names sn ON sn.name_id = st.name"
"  WHERE st.role = " TA_SQL(TA_ROLE_CPU_ANN)
"  AND sn.name GLOB 'ProfilerStep#[0-9]*' GROUP BY st.rank),"
" t AS (SELECT s.rank, s.idx, COALESCE(s.pg_name, s.op_pg, '') AS pg,"
"  max(COALESCE(s.pg_n, 0), COALESCE(s.op_n, 0)) AS pg_size,"
"  COALESCE(s.collective, s.op_coll, s.kname) AS name,"
"  COALESCE(s.in_nelems, s.op_in) AS in_nelems,"
"  COALESCE(s.out_nelems, s.op_out) AS out_nelems,"
"  COALESCE(s.dtype, s.op_dtype) AS dtype,"
"  COALESCE(s.k_dst, s.op_dst) AS p2p_dst, COALESCE(s.k_src, s.op_src) AS p2p_src,"
"  CASE WHEN s.early THEN (SELECT f.n - 1 FROM first f WHERE f.rank = s.rank)"
"  ELSE (SELECT f.n FROM temp.coll_steps f WHERE f.rank = s.rank"
"   AND f.ts <= s.issue_ts AND f.end_ts > s.issue_ts"
"   ORDER BY f.ts DESC, f.name DESC, f.dur DESC, f.idx DESC LIMIT 1) END"
"   AS step, s.early,"
"  s.issue_ts, s.ts, s.end_ts, s.stream,"
/* the thread that issued it: a sync there may wait for it (exposed.h) */
"  COALESCE(s.op_tid, s.call_tid) AS tid,"
/* NCCL's send/recv kernel that its op names "coalesced": a batch
 * (batch_isend_irecv's), peers not known. NCCL's all-to-all, gather and
 * scatter run SendRecv kernels too, named by their ops, or, in traces of
 * PyTorch 2.0 and before, by an nccl:all_to_all range alone (no op to
 * name them: helper-67, HTA's trace_filter): those are numbered as any
 * collective, as a kernel no op names always was. */
"  s.kname GLOB '*SendRecv*' AND COALESCE(s.collective, s.op_coll)"
"   IN ('coalesced', 'nccl:coalesced') AS batch FROM s),"
/* gloo's collectives run on its worker threads, each a gloo:NAME range
 * from the moment the worker takes it (the rank has arrived) to the end
 * of the exchange: matched as a kernel is, in a group of their own (a
 * group whose CPU tensors go through gloo and CUDA ones through NCCL
 * numbers each backend's collectives apart). Only where the trace names
 * one group with gloo (distributedInfo.pg_config): gloo's ranges do not
 * say their group, and two groups' ranges would be numbered as one. */
/* (an element that is not an object is text to ->>: read only objects) */
" gpe AS (SELECT m.rank, CASE WHEN j.type = 'object' THEN j.value END AS o"
"  FROM main.meta m, json_each(m.value, '$.pg_config') j"
"  WHERE m.key = 'distributedInfo' AND json_valid(m.value)"
"  AND json_type(m.value, '$.pg_config') = 'array'),"
" gpg AS (SELECT rank, min(o ->> 'pg_name') AS pg,"
"  min(CAST(o ->> 'pg_size' AS INTEGER)) AS n FROM gpe"
"  WHERE o IS NOT NULL AND json_type(o, '$.backend_config') = 'text'"
/* gloo a backend of its list ("cpu:gloo,cuda:nccl", "gloo"), not a part
 * of a word */
"  AND ',' || replace(o ->> 'backend_config', ':', ',') || ',' LIKE '%,gloo,%'"
"  GROUP BY rank HAVING count(*) = 1),"
" g AS (SELECT e.rank, e.idx, COALESCE(gpg.pg, '') || ' (gloo)' AS pg,"
"  CASE WHEN gpg.n BETWEEN 1 AND 16777216 THEN gpg.n ELSE 0 END AS pg_size, gn.name AS name,"
/* the first tensor's elements: a bucket is one flat tensor (up to four
 * dimensions of whole numbers; past 2^63, held there by the CAST) */
"  CASE WHEN json_valid(e.input_dims) AND json_type(e.input_dims, '$[0]') = 'array'"
"   AND json_array_length(e.input_dims, '$[0]') BETWEEN 1 AND 4"
"   AND (SELECT count(*) = sum(d.type = 'integer' AND d.value BETWEEN 0 AND 4294967296)"
"    FROM json_each(e.input_dims, '$[0]') d) THEN"
"   CAST(COALESCE(json_extract(e.input_dims, '$[0][0]'), 1) *"
"    COALESCE(json_extract(e.input_dims, '$[0][1]'), 1) *"
"    COALESCE(json_extract(e.input_dims, '$[0][2]'), 1) *"
"    COALESCE(json_extract(e.input_dims, '$[0][3]'), 1) AS INTEGER) END AS in_nelems,"
"  NULL AS out_nelems,"
/* its C++ type, as record_param_comms names dtypes */
"  CASE CASE WHEN json_valid(e.input_types) THEN e.input_types ->> '$[0]' END"
"   WHEN 'float' THEN 'Float' WHEN 'double' THEN 'Double' WHEN 'c10::Half' THEN 'Half'"
"   WHEN 'c10::BFloat16' THEN 'BFloat16' WHEN 'long int' THEN 'Long' WHEN 'int' THEN 'Int'"
"   WHEN 'short int' THEN 'Short' WHEN 'signed char' THEN 'Char'"
"   WHEN 'unsigned char' THEN 'Byte' WHEN 'bool' THEN 'Bool' END AS dtype,"
"  NULL AS p2p_dst, NULL AS p2p_src,"
"  (SELECT f.n FROM temp.coll_steps f WHERE f.rank = e.rank"
"   AND f.ts <= e.ts_ns AND f.end_ts > e.ts_ns"
"   ORDER BY f.ts DESC, f.name DESC, f.dur DESC, f.idx DESC LIMIT 1) AS step,"
"  0 AS early, e.ts_ns AS issue_ts, e.ts_ns AS ts, e.ts_ns + max(COALESCE(e.dur_ns, 0), 0) AS end_ts,"
/* the thread that waits for it is not the worker's: not known */
"  NULL AS stream, NULL AS tid, 0 AS batch"
"  FROM main.events e INDEXED BY events_ann JOIN main.names gn ON gn.name_id = e.name"
"  JOIN gpg ON gpg.rank = e.rank"
"  WHERE e.role = " TA_SQL(TA_ROLE_CPU_ANN) " AND gn.name GLOB 'gloo:*'"
"  AND e.ts_ns IS NOT NULL),"
" tg AS (SELECT * FROM t UNION ALL SELECT * FROM g),"
/* Point-to-point (send, recv: NCCL's record_param_comms names them so,
 * gloo its ranges gloo:send, gloo:recv) is no collective of its group:
 * numbered with the group's collectives, a pipeline stage's sends shifted
 * every later collective's place on one rank and not on another. A
 * send from A to B is matched with B's recv from A, the k-th with the
 * k-th, in a group of their own, "PG p2p A>B" of two members; the peer
 * is the op's Dst Rank or Src Rank, else the other member of a group of
 * two (distributedInfo.pg_config; gloo records no peer). A peer not
 * known: "PG p2p", numbered apart and matched with nothing. */
" pm AS (SELECT gpe.rank, gpe.o ->> 'pg_name' AS pg,"
"  (SELECT min(r.value) FROM json_each(gpe.o, '$.ranks') r WHERE r.value != gpe.rank) AS peer"
"  FROM gpe WHERE gpe.o IS NOT NULL AND json_type(gpe.o, '$.ranks') = 'array'"
"  AND json_array_length(gpe.o, '$.ranks') = 2"
"  AND EXISTS (SELECT 1 FROM json_each(gpe.o, '$.ranks') r WHERE r.value = gpe.rank)),"
" tp AS (SELECT tg.*, CASE WHEN name IN ('send', 'isend') OR name GLOB '*:send'"
"   OR name GLOB '*:isend' THEN 1 WHEN name IN ('recv', 'irecv') OR name GLOB '*:recv'"
"   OR name GLOB '*:irecv' THEN 2 WHEN batch THEN 3 ELSE 0 END AS p2p FROM tg),"
" tr AS MATERIALIZED (SELECT tp.*, CASE WHEN p2p NOT IN (1, 2) THEN NULL ELSE COALESCE(CASE p2p WHEN 1"
"   THEN p2p_dst ELSE p2p_src END, (SELECT min(pm.peer) FROM pm WHERE pm.rank = tp.rank"
"   AND (pm.pg = tp.pg OR pm.pg || ' (gloo)' = tp.pg))) END AS raw_peer FROM tp),"
/* a peer is another rank: a whole number (1.0 and "1" are 1), not this
 * one; anything else names none (helper-66: 1.0, a rank to itself).
 * tr and tv MATERIALIZED: inlined, each use of peer copied cand's and
 * raw_peer's expressions, subquery and all (a hundred copies: preparing
 * the statement was half of a cached diagnose, helper-67) */
" tq AS (SELECT tr.*, CASE WHEN typeof(raw_peer) = 'integer' THEN raw_peer"
"   WHEN typeof(raw_peer) = 'real' AND raw_peer = CAST(raw_peer AS INTEGER)"
"    AND abs(raw_peer) < 9e15 THEN CAST(raw_peer AS INTEGER)"
"   WHEN typeof(raw_peer) = 'text' AND raw_peer GLOB '[0-9]*'"
"    AND NOT raw_peer GLOB '*[^0-9]*' AND length(raw_peer) <= 18"
"    THEN CAST(raw_peer AS INTEGER) END AS cand FROM tr),"
" tv AS MATERIALIZED (SELECT tq.*, CASE WHEN cand >= 0 AND cand != rank THEN cand END AS peer FROM tq),"
" tz AS (SELECT rank, idx, CASE WHEN p2p = 0 THEN pg WHEN peer IS NULL THEN pg || ' p2p'"
"   WHEN p2p = 1 THEN pg || ' p2p ' || rank || '>' || peer"
"   ELSE pg || ' p2p ' || peer || '>' || rank END AS pg,"
"  CASE WHEN p2p = 0 THEN pg_size WHEN peer IS NULL THEN 0 ELSE 2 END AS pg_size,"
"  name, in_nelems, out_nelems, dtype, step, early, issue_ts, ts, end_ts, stream, tid,"
"  p2p, peer FROM tv)"
" SELECT rank, idx, pg, pg_size, name, in_nelems, out_nelems, dtype, step,"
"  CASE WHEN step IS NULL THEN NULL WHEN early THEN -row_number() OVER"
"   (PARTITION BY rank, pg, step ORDER BY issue_ts DESC, idx DESC)"
"  ELSE row_number() OVER"
"   (PARTITION BY rank, pg, step ORDER BY issue_ts, idx) END AS seq,"
"  issue_ts, ts, end_ts, stream,"
/* the job's size as the rank's trace says it (distributedInfo) */
"  (SELECT CAST(json_extract(m.value, '$.world_size') AS INTEGER) FROM main.meta m"
"   WHERE m.rank = t.rank AND m.key = 'distributedInfo' AND json_valid(m.value)"
"   AND json_type(m.value) = 'object') AS world, tid,"
/* 1 a send, 2 a recv (peer: the other rank, NULL not known), 3 a batch
 * of both (batch_isend_irecv: peers not known), 0 none of them:
 * peers.c reads these, not the group's name (a user's group may be
 * named "pp p2p") */
"  p2p, peer FROM tz t;"
"CREATE INDEX temp.coll_match ON coll (pg, step, seq, rank);"
"CREATE INDEX temp.coll_cpu ON coll (rank, ts) WHERE name GLOB 'gloo:*';";

/* A shard holds one rank: a cross-rank command on shards gathers every
 * shard's coll first (shard_run.c) and attaches them as schema "peers",
 * so matching sees every rank's collectives without their events. */
static const char peers_coll_sql[] =
"DROP TABLE IF EXISTS temp.coll;"
"CREATE TEMP TABLE coll AS SELECT * FROM peers.coll;"
"CREATE INDEX temp.coll_match ON coll (pg, step, seq, rank);"
"CREATE INDEX temp.coll_cpu ON coll (rank, ts) WHERE name GLOB 'gloo:*';";

int64_t ta_model_untimed_coll(sqlite3 *db, sqlite3_stmt **st, int64_t rank,
			      int64_t step)
{
	int64_t n = -1;

	if (!*st && sqlite3_prepare_v2(db, "SELECT count(*) FROM coll c WHERE c.rank = ?1"
				       " AND c.end_ts <= c.ts AND c.name NOT GLOB 'gloo:*' AND"
				       " CASE WHEN ?2 >= 0 THEN c.step = ?2 ELSE (c.step IN"
				       " (SELECT w.step FROM step_win w WHERE w.rank = c.rank)"
				       " OR NOT EXISTS (SELECT 1 FROM step_win w WHERE w.rank ="
				       " c.rank)) END", -1, st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(*st, 1, rank);
	sqlite3_bind_int64(*st, 2, step);
	if (sqlite3_step(*st) == SQLITE_ROW)
		n = sqlite3_column_int64(*st, 0);
	sqlite3_reset(*st);
	return n;
}

int ta_model_gathered(sqlite3 *db)
{
	return ta_db_int(db, "SELECT count(*) FROM pragma_database_list"
			 " WHERE name = 'peers'", 0) > 0;
}

/* One rank's database that keeps its part (a shard, a cache entry after
 * its first coll: keep.c) has its coll already: the query above read
 * every GPU row and its launch again, a sixth of a cached diagnose. It
 * depends on no rule and no selection of ranks. */
static const char kept_coll_sql[] =
"DROP TABLE IF EXISTS temp.coll;"
"CREATE TEMP TABLE coll AS SELECT * FROM main.part_coll"
"  WHERE rank = (SELECT rank FROM main.files)" TIMES_IN_BOUNDS ";"
"CREATE INDEX temp.coll_match ON coll (pg, step, seq, rank);"
"CREATE INDEX temp.coll_cpu ON coll (rank, ts) WHERE name GLOB 'gloo:*';";

int ta_model_coll(sqlite3 *db, struct ta_error *err)
{
	return ta_db_exec(db, ta_model_gathered(db) ? peers_coll_sql :
			  ta_model_part_kept(db) ? kept_coll_sql : coll_sql, err);
}

int ta_model_save_part(sqlite3 *db, sqlite3 *out, const char *prefix,
		       struct ta_error *err)
{
	char coll[64], traits[64], clock[64];

	snprintf(coll, sizeof(coll), "%scoll", prefix);
	snprintf(traits, sizeof(traits), "%straits", prefix);
	snprintf(clock, sizeof(clock), "%sclock", prefix);
	/* and what advice asks of the whole job (traits.c), and where the
	 * job's clock starts (series relative to it: ta_model_min_ts) */
	return ta_db_copy_rows(db, "SELECT * FROM temp.coll", out, coll, err) < 0 ||
	       ta_model_save_traits(db, out, traits, err) < 0 ||
	       ta_db_copy_rows(db, "SELECT min(min_ts_ns) AS min_ts_ns FROM files",
			       out, clock, err) < 0 ? -1 : 0;
}

int ta_model_export_coll(sqlite3 *db, const struct ta_query *q,
			 const char *path, struct ta_error *err)
{
	sqlite3 *out = NULL;
	int rc = ta_model_prepare(db, q, TA_NEED_COLL, err);

	if (rc < 0)
		return -1;
	ta_model_keep_part(db, q);  /* a cache entry's, for its next run */
	if (sqlite3_open_v2(path, &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			    NULL) != SQLITE_OK) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': %s", path,
			     out ? sqlite3_errmsg(out) : "cannot open");
		sqlite3_close(out);
		return -1;
	}
	/* a scratch file of this run: nothing to journal */
	rc = ta_db_exec(out, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF", err);
	if (rc == 0)
		rc = ta_model_save_part(db, out, "", err);
	sqlite3_close(out);
	return rc;
}
