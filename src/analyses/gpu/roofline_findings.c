/* diagnose's low_efficiency findings: the op groups (op, type) of each
 * rank whose GPU time is furthest beyond what their roof allows, from
 * roofline's rows, over the whole trace (no step: roofline counts every
 * call). Their where names the op, the type and the side of the ridge,
 * no numbers, so a baseline keys them across runs. */
#include "ta_analyses.h"
#include "analyses/host/advice.h"

#include <stdio.h>

static void add_row(struct ta_table *f, const struct ta_table *t, size_t r,
		    double excess_us, const struct ta_traits *run)
{
	char where[300];
	size_t row = ta_table_add_row(f);

	snprintf(where, sizeof(where), "%s (%s, %s-bound)", ta_table_cell(t, r, 1)->s,
		 ta_table_cell(t, r, 2)->s, ta_table_cell(t, r, 11)->s);
	ta_table_set_int(f, row, 0, ta_table_cell(t, r, 0)->i);
	ta_table_set_text(f, row, 2, ta_finding_names[F_LOW_EFF]);
	ta_table_set_real(f, row, 3, excess_us);
	ta_table_set_int(f, row, 4, ta_table_cell(t, r, 3)->i);
	ta_table_set_text(f, row, 5, where);
	ta_table_set_text(f, row, 6, ta_advice(F_LOW_EFF, where, run));
}

int ta_roofline_findings(sqlite3 *db, const struct ta_query *q, struct ta_table *f,
			 const struct ta_traits *run, struct ta_error *err)
{
	struct ta_roofline_opts o = { TA_ROOF_BY_OP, 0, 0, 0 };
	struct ta_table *t;
	size_t r;

	if (ta_roofline_run(db, q, &o, &t, err) < 0)
		return -1;
	/* columns: rank, op, dtype, calls, flops, bytes, intensity, gpu_us,
	 * tflops, gbps, peak_pct, bound */
	for (r = 0; r < t->nrows; r++) {
		const struct ta_cell *pct = ta_table_cell(t, r, 10);
		double gpu = ta_table_cell(t, r, 7)->d, excess;

		if (pct->null || pct->d >= TA_ROOF_LOW_PCT)
			continue;
		/* beyond the time at the attainable share of the roof */
		excess = gpu * (1 - pct->d / 100 / TA_ROOF_ATTAINABLE);
		if (excess >= 500)
			add_row(f, t, r, excess, run);
	}
	ta_table_free(t);
	return 0;
}
