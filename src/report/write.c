/* One table in the format asked for: the only place that picks a writer
 * (the writers share format.c's numbers, and never call each other). */
#include "ta_report.h"

void ta_report_write(FILE *out, const struct ta_table *t, enum ta_format f)
{
	if (f == TA_FMT_CSV)
		ta_report_csv(out, t);
	else if (f == TA_FMT_JSON)
		ta_report_json(out, t);
	else
		ta_report_text(out, t);
}
