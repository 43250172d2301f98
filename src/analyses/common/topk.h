/* Per-name aggregation with HTA's top-k / "others" rule (hta-semantics
 * §9.4), shared by the kernel and annotation breakdowns. */
#ifndef TA_TOPK_H
#define TA_TOPK_H

#include "ta.h"

/* Statistics of one name's durations (ns), pooled with Chan's formula. */
struct agg {
	char *name;
	int64_t count;
	double sum, mean, m2, max, min;
	/* kernels: blocks per SM and occupancy, each weighted by the time of
	 * the calls it is known for; calls whose occupancy is not known */
	double bpsm_sum, bpsm_ns, occ_sum, occ_ns;
	int64_t occ_unknown;
};

void ta_agg_add(struct agg *a, double x);
/* A kernel call's launch figures: blocks per SM (<= 0: not known), its
 * occupancy % (has_occ 0: absent; unknown: Kineto could not compute it). */
void ta_agg_launch(struct agg *a, double dur, double bpsm, int has_occ,
		   double occ, int unknown);
/* Sample std; 0 for a single value, as HTA's breakdown tables show it. */
double ta_agg_std(const struct agg *a);

struct out_row {
	int64_t rank;
	int kind;
	struct agg a;
	double std;
	size_t seq;
};

struct out_rows {
	struct out_row *v;
	size_t n, cap;
};

void ta_topk_emit(struct out_rows *o, int64_t rank, int kind,
		  const struct agg *a, double std);

/* Sets count, total_us, max_us, min_us, std_us, mean_us from column col. */
struct ta_table;
void ta_topk_set_stats(struct ta_table *t, size_t row, size_t col,
		       const struct out_row *w);

/* A growing list of per-name statistics, filled in name order. */
struct agg_list {
	struct agg *v;
	size_t n, cap;
};

/* The entry for name: the last one if it has that name, else a new one. */
struct agg *ta_agg_list_name(struct agg_list *l, const char *name);
/* Frees the names and empties the list (keeps its memory). */
void ta_agg_list_clear(struct agg_list *l);

/* names: one rank's names of one kind, in name order. Appends the kept
 * names and "others" to out. totals: HTA's statistics (see topk.c, ta_rules' topk_totals). */
void ta_topk_group(struct agg *names, size_t n, int64_t rank, int kind,
		   int top, double ratio, int totals, struct out_rows *out);

#endif
