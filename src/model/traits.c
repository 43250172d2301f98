/* What the job's traces show is already in use, so that advice does not
 * recommend it again: CUDA graphs, compiled (Triton) kernels, pinned
 * copies, DataLoader worker processes. Read from the names the traces
 * hold (every rank's: these are properties of the job, not of a rank),
 * so it costs a scan of the distinct names, not of the events. */
#include "ta_model.h"

static const char traits_sql[] =
	"SELECT"
	" EXISTS (SELECT 1 FROM names WHERE name GLOB 'cudaGraphLaunch*'"
	"  OR name GLOB 'cuGraphLaunch*' OR name GLOB 'hipGraphLaunch*'),"
	" EXISTS (SELECT 1 FROM names WHERE name GLOB 'triton_*'),"
	" EXISTS (SELECT 1 FROM names WHERE name GLOB 'Memcpy HtoD (Pinned*'),"
	" EXISTS (SELECT 1 FROM names"
	"  WHERE name GLOB '*_MultiProcessingDataLoaderIter*')";

int ta_model_traits(sqlite3 *db, struct ta_traits *t, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*t = (struct ta_traits){ 0, 0, 0, 0 };
	if (ta_db_prepare(db, traits_sql, &st, err) < 0)
		return -1;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*t = (struct ta_traits){ sqlite3_column_int(st, 0),
			sqlite3_column_int(st, 1), sqlite3_column_int(st, 2),
			sqlite3_column_int(st, 3) };
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : ta_db_done(db, rc, err);
}
