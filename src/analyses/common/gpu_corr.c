/* temp.gpu_corr: GPU time per (rank, correlation), see gpu_corr.h. */
#include "gpu_corr.h"

#include "ta_db.h"

static const char gpu_sql[] =
	"DROP TABLE IF EXISTS temp.gpu_corr;"
	"CREATE TEMP TABLE gpu_corr (rank INTEGER, correlation INTEGER, ns INTEGER,"
	"  tc_ns INTEGER, PRIMARY KEY (rank, correlation));"
	"INSERT INTO gpu_corr SELECT g.rank, g.correlation, ta_sum(g.dur),"
	"  ta_sum(CASE WHEN ta_tensor_core(n.name) THEN g.dur ELSE 0 END)"
	"  FROM gpu g LEFT JOIN label n ON n.name_id = g.name"
	"  WHERE g.correlation != -1 GROUP BY g.rank, g.correlation;";

int ta_gpu_corr_build(sqlite3 *db, struct ta_error *err)
{
	return ta_db_exec(db, gpu_sql, err);
}
