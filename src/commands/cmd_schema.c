/* traceanalyze schema: print the database schema. */
#include "cli.h"
#include "commands.h"
#include "ta_db.h"

#include <string.h>

static int cmd_schema(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 ||
			 strcmp(argv[1], "-h") == 0)) {
		puts("usage: traceanalyze schema\n\nPrint the SQL schema of the "
		     "databases that 'ingest' writes.");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "traceanalyze: schema takes no arguments\n");
		return TA_EXIT_USAGE;
	}
	fputs(ta_db_schema_sql, stdout);
	fputs(ta_db_index_sql, stdout);
	fputs(ta_db_lazy_index_sql[TA_INDEX_HOST_TIME], stdout);
	fputs(ta_db_lazy_index_sql[TA_INDEX_THREAD], stdout);
	fputs(ta_db_lazy_index_sql[TA_INDEX_MEMORY], stdout);
	fputs(ta_db_lazy_index_sql[TA_INDEX_FLOW], stdout);
	return ta_cli_finish_output(stdout, "stdout");
}

const struct ta_command ta_command_schema = {
	"schema", cmd_schema, "print the database schema",
	TA_SPREAD_NONE, NULL, 0, { [TA_MODE_HTA] = TA_COMPAT_RULES }, NULL
};
