/* What diff.c and diff_hta.c share: the names of both sides, as text. */
#ifndef TA_DIFF_INT_H
#define TA_DIFF_INT_H

#include "ta_analyses.h"
#include "ta_intern.h"

enum { DIFF_CPU_OP, DIFF_ANNOTATION, DIFF_PYTHON, DIFF_GPU, DIFF_ALL };

struct diff_name {
	int kind;
	double count[2];        /* base, test */
	int64_t ns[2];
	int64_t self[2];        /* less what nests in it (host rows) */
};

struct diff_names {
	struct ta_intern *keys;  /* "kind\x1fname" */
	struct diff_name *v;
	size_t n, cap;
	int64_t units[2];        /* rank-steps read on each side */
};

void ta_diff_add(struct diff_names *d, int side, int kind, const char *name,
		 double count, int64_t ns, int64_t self);
/* The names table; per_step: divided by each side's rank-steps. */
struct ta_table *ta_diff_table(const struct diff_names *d,
			       const struct ta_diff_opts *o, int per_step,
			       double step_us);

/* HTA's ops_diff lists (compat/hta/diff_hta.c). */
struct ta_table *ta_diff_lists(const struct diff_names *d);

#endif
