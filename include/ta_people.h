/* Text for people (src/report/people.c): a command's rows as text mode
 * shows them, reordered and with prose computed from the same rows. CSV
 * and JSON get the rows as the analysis made them. */
#ifndef TA_PEOPLE_H
#define TA_PEOPLE_H

#include "ta_table.h"

void ta_people_idle(struct ta_table *t);
void ta_people_ops(struct ta_table *t);
/* findings: diagnose's findings table, summarised after the verdicts. */
void ta_people_diagnose(struct ta_table *t, const struct ta_table *findings);

/* stragglers: a sentence per run and a summary per rank, before the
 * per-step rows. */
void ta_people_stragglers(struct ta_table *t);
/* Its first sentence alone: who holds the others back, or no one. */
void ta_people_straggler_says(const struct ta_table *t, struct ta_buf *b);

/* critical-path: a sentence per step on what bounds it, from the first
 * items on its path. */
void ta_people_critical(struct ta_table *t, const struct ta_table *items);
/* diff: each rank's steps side by side (steps: the --steps table) and
 * the changes beyond noise, before the names. */
void ta_people_diff(struct ta_table *t, const struct ta_table *steps);
/* memory: the findings (growth, peak, fragmentation) in words before
 * the steps. */
void ta_people_memory(struct ta_table *t, const struct ta_table *findings);
/* memory on a snapshot: a verdict line per device. */
void ta_people_snapshot(struct ta_table *t);
/* roofline: a sentence per rank from its summary rows (MFU, how busy the
 * GPU was, each family of ops against its roof) */
void ta_people_roofline(struct ta_table *t, const struct ta_table *sum);
/* critical-path --hta-compat: the sizes of each rank's graph and path. */
void ta_people_critical_hta(struct ta_table *t, const struct ta_table *graph);

/* overview: per rank, its average step by category, its GPU summary and
 * what to do about it (people_overview.c), from the summary rows; which
 * ranks had no step, from steps' (rank, step) rows (NULL: t's own). */
void ta_people_overview(struct ta_table *t, const struct ta_table *sum,
			const struct ta_table *steps);

#endif
