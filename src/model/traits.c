/* What the job's traces show is already in use, so that advice does not
 * recommend it again: CUDA graphs, compiled (Triton) kernels, pinned
 * copies, DataLoader worker processes. Read from the names the traces
 * hold (every rank's: these are properties of the job, not of a rank),
 * so it costs a scan of the distinct names, not of the events. */
#include "ta_model.h"

#include <stdio.h>

static const char traits_sql[] =
	"SELECT"
	" EXISTS (SELECT 1 FROM names WHERE name GLOB 'cudaGraphLaunch*'"
	"  OR name GLOB 'cuGraphLaunch*' OR name GLOB 'hipGraphLaunch*'),"
	" EXISTS (SELECT 1 FROM names WHERE name GLOB 'triton_*'),"
	" EXISTS (SELECT 1 FROM names WHERE name GLOB 'Memcpy HtoD (Pinned*'),"
	" EXISTS (SELECT 1 FROM names"
	"  WHERE name GLOB '*_MultiProcessingDataLoaderIter*'),"
	/* the trace says so in its top-level keys; or its Python frames do */
	" EXISTS (SELECT 1 FROM meta WHERE key = 'with_stack'"
	"  AND value IN ('1', 'true'))"
	" OR EXISTS (SELECT 1 FROM names WHERE name = 'python_function'),"
	/* an optimizer torch.optim cannot fuse (Shampoo: its step range
	 * names it), else a fused one (not the other _fused_ ops: SDPA's
	 * _fused_sdp_choice is in every attention), else foreach */
	" CASE WHEN EXISTS (SELECT 1 FROM names WHERE name GLOB 'Optimizer.step#*'"
	"  AND NOT (name GLOB 'Optimizer.step#Adam.*' OR name GLOB 'Optimizer.step#AdamW.*'"
	"  OR name GLOB 'Optimizer.step#SGD.*' OR name GLOB 'Optimizer.step#Adagrad.*'))"
	"  THEN 3"
	" WHEN EXISTS (SELECT 1 FROM names WHERE name GLOB 'aten::_fused_adam*'"
	"  OR name GLOB 'aten::_fused_sgd*' OR name GLOB 'aten::_fused_adagrad*')"
	"  THEN 2 WHEN EXISTS (SELECT 1 FROM names WHERE name GLOB 'aten::_foreach_*')"
	"  THEN 1 ELSE 0 END,"
	/* TorchRec's pipeline (TrainPipelineSparseDist) names its waits */
	" EXISTS (SELECT 1 FROM names WHERE name GLOB '*wait_sparse_data_dist*'),"
	/* no host activity in any trace (profiled without
	 * ProfilerActivity.CPU): no op, range or Python frame says what the
	 * host ran, and no ProfilerStep# says where steps are */
	" NOT EXISTS (SELECT 1 FROM names WHERE name IN ('cpu_op', 'user_annotation',"
	"  'python_function', 'Operator'))";

/* On a shard with every shard's part gathered ("peers", shard_run.c):
 * the job's, from each shard's own (ta_model_export_coll). */
static const char peers_traits_sql[] =
	"SELECT max(graphs), max(triton), max(pinned), max(loader_workers),"
	" max(stacks), max(optim), max(sdd_pipeline), min(no_host) FROM peers.traits";

int ta_model_traits(sqlite3 *db, struct ta_traits *t, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*t = (struct ta_traits){ 0, 0, 0, 0, 0, 0, 0, 0 };
	if (ta_db_prepare(db, ta_model_gathered(db) ? peers_traits_sql : traits_sql,
			  &st, err) < 0)
		return -1;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*t = (struct ta_traits){ sqlite3_column_int(st, 0),
			sqlite3_column_int(st, 1), sqlite3_column_int(st, 2),
			sqlite3_column_int(st, 3), sqlite3_column_int(st, 4),
			sqlite3_column_int(st, 5), sqlite3_column_int(st, 6),
			sqlite3_column_int(st, 7) };
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : ta_db_done(db, rc, err);
}

int ta_model_save_traits(sqlite3 *db, sqlite3 *out, const char *table,
			 struct ta_error *err)
{
	struct ta_traits t;
	sqlite3_stmt *st = NULL;
	char create[128], insert[128];
	int rc;

	snprintf(create, sizeof(create), "CREATE TABLE main.%s (graphs, triton, pinned,"
		 " loader_workers, stacks, optim, sdd_pipeline, no_host)", table);
	snprintf(insert, sizeof(insert), "INSERT INTO main.%s VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		 table);
	if (ta_model_traits(db, &t, err) < 0 || ta_db_exec(out, create, err) < 0 ||
	    ta_db_prepare(out, insert, &st, err) < 0)
		return -1;
	sqlite3_bind_int(st, 1, t.graphs);
	sqlite3_bind_int(st, 2, t.triton);
	sqlite3_bind_int(st, 3, t.pinned);
	sqlite3_bind_int(st, 4, t.loader_workers);
	sqlite3_bind_int(st, 5, t.stacks);
	sqlite3_bind_int(st, 6, t.optim);
	sqlite3_bind_int(st, 7, t.sdd_pipeline);
	sqlite3_bind_int(st, 8, t.no_host);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : ta_db_done(out, rc, err);
}
