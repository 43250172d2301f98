/* Text for people: how a command's rows are shown in text mode. The rows
 * are the analysis's, the same as CSV and JSON get; here they are only
 * ordered differently and given a few lines of prose, computed from them. */
#include "ta_people.h"
#include "ta_analyses.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The column named name (it exists: the tables are ours). */
static size_t col(const struct ta_table *t, const char *name)
{
	long c = ta_table_col(t, name);

	return c < 0 ? t->ncols : (size_t)c;
}

static _Thread_local size_t sort_col;   /* report runs sections on threads */

/* Within a rank (and, when given, a text column), the largest first. */
static int cmp_largest(const struct ta_table *t, size_t a, size_t b)
{
	int64_t ra = ta_table_cell(t, a, 0)->i, rb = ta_table_cell(t, b, 0)->i;
	double x = ta_table_cell(t, a, sort_col)->d;
	double y = ta_table_cell(t, b, sort_col)->d;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return x > y ? -1 : x < y;
}

/* Within a rank, the whole GPU's rows (stream NULL) first, then the
 * largest first. */
static int cmp_idle(const struct ta_table *t, size_t a, size_t b)
{
	int na = ta_table_cell(t, a, 1)->null, nb = ta_table_cell(t, b, 1)->null;

	if (ta_table_cell(t, a, 0)->i == ta_table_cell(t, b, 0)->i && na != nb)
		return na ? -1 : 1;
	return cmp_largest(t, a, b);
}

/* Per rank: its idle time and how it splits. The whole GPU's rows say it
 * (temporal's idle time); HTA's tables have only streams, whose idle
 * times overlap: their sum is said as such. */
void ta_people_idle(struct ta_table *t)
{
	size_t cat = col(t, "category"), us = col(t, "idle_us"), r = 0;

	if (us == t->ncols) /* --stats */
		return;
	sort_col = us;
	ta_table_sort(t, cmp_idle);
	while (r < t->nrows) {
		int64_t rank = ta_table_cell(t, r, 0)->i;
		double sum[3] = { 0, 0, 0 }, whole[3] = { 0, 0, 0 }, total, *v;
		int any_whole = 0;

		for (; r < t->nrows && ta_table_cell(t, r, 0)->i == rank; r++) {
			const char *c = ta_table_cell(t, r, cat)->s;
			int w = ta_table_cell(t, r, 1)->null;

			any_whole |= w;
			(w ? whole : sum)[strcmp(c, "host_wait") == 0 ? 0 :
					  strcmp(c, "kernel_wait") == 0 ? 1 : 2] +=
				ta_table_cell(t, r, us)->d;
		}
		v = any_whole ? whole : sum;
		total = v[0] + v[1] + v[2];
		if (total <= 0)
			ta_buf_addf(&t->head, "rank %lld: no idle time between "
				    "kernels\n", (long long)rank);
		else
			ta_buf_addf(&t->head, "rank %lld: %.3f ms idle %s: host wait "
				    "%.1f %%, kernel wait %.1f %%, other %.1f %%\n",
				    (long long)rank, total / 1000.0, any_whole ?
				    "(no stream busy; stream '-' rows)" :
				    "summed over streams", 100 * v[0] / total,
				    100 * v[1] / total, 100 * v[2] / total);
	}
}

void ta_people_ops(struct ta_table *t)
{
	if (ta_table_col(t, "self_cpu_pct") < 0)
		return;   /* --tb-compat's Operator view has none */
	ta_buf_addf(&t->head, "Percentages are shares of the rank's self CPU and "
		    "self device time, as in the profiler's table.\n");
}

struct sum {
	int64_t rank, count;
	const char *kind, *where, *advice, *detail;
	double cost_us;
};

/* By cost over every rank, the largest first. */
static int cmp_sum(const void *x, const void *y)
{
	const struct sum *a = x, *b = y;

	if (a->cost_us != b->cost_us)
		return a->cost_us > b->cost_us ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

#define SUMMARY_LINES 8

/* Steps whose critical path's largest part is not what the verdict
 * blames: both opinions, for a person to weigh (the verdict weighs what
 * the GPU lost; the path, what the step waited on). A verdict whose parts
 * hold half the path or more is confirmed: the path on other ranks that
 * waiting-for-peer blames is also some part (their cpu), so the largest
 * part may hold it (a gloo wait: 80 % on the late rank, 99 % cpu). */

static void path_disagrees(struct ta_table *t)
{
	size_t verdict = col(t, "verdict"), bound = col(t, "path_bound");
	size_t pct = col(t, "path_pct"), blamed = col(t, "verdict_path_pct");
	size_t r;
	int head = 0;

	for (r = 0; r < t->nrows; r++) {
		const struct ta_cell *b = ta_table_cell(t, r, blamed);
		const struct ta_cell *step = ta_table_cell(t, r, 1);

		/* the largest part is among what the verdict blames */
		if (b->null || b->d + 0.005 >= ta_table_cell(t, r, pct)->d ||
		    b->d >= 50)
			continue;
		if (!head++)
			ta_buf_adds(&t->tail, "\nWhere the critical path disagrees "
				    "(critical-path shows it):\n");
		ta_buf_addf(&t->tail, "  rank %lld", (long long)ta_table_cell(t, r, 0)->i);
		if (!step->null)
			ta_buf_addf(&t->tail, " step %lld", (long long)step->i);
		ta_buf_addf(&t->tail, ": %s, but %.0f %% of its critical path is "
			    "in what that blames; the path is %.0f %% %s\n",
			    ta_table_cell(t, r, verdict)->s, b->d,
			    ta_table_cell(t, r, pct)->d, ta_table_cell(t, r, bound)->s);
	}
}

/* A host-bound verdict was measured under the profiler, which slows the
 * host and not the GPU (tb_cnn: 72.8 % busy in the trace, about 91 %
 * with the profiler off; helper-64): said where a step reads so. */
static void profiled_host(struct ta_table *t)
{
	long verdict = ta_table_col(t, "verdict");
	size_t r;

	for (r = 0; verdict >= 0 && r < t->nrows; r++) {
		const struct ta_cell *v = ta_table_cell(t, r, (size_t)verdict);

		if (!v->null && (strcmp(v->s, "host-stalled") == 0 ||
				 strcmp(v->s, "launch-bound") == 0)) {
			ta_buf_adds(&t->tail, "\nHost-stalled and launch-bound steps are "
				    "measured with the profiler on, which slows the host's "
				    "ops and launches and not the GPU's kernels: time a few "
				    "steps with it off (torch.cuda.synchronize() around "
				    "them) before acting on them.\n");
			return;
		}
	}
}

/* After the verdicts: the findings summed over the steps (the analysis's
 * summary), the costliest over all ranks first; each rank's costliest
 * too, so that no rank's cause hides behind another's; then how many more
 * --findings lists. */
void ta_people_diagnose(struct ta_table *t, const struct ta_table *findings)
{
	long kind = ta_table_col(findings, "kind"), where = ta_table_col(findings, "where");
	long cost = ta_table_col(findings, "cost_us"), count = ta_table_col(findings, "count");
	long advice = ta_table_col(findings, "advice");
	long detail = ta_table_col(findings, "detail");
	size_t n = findings->nrows, i, j, shown = 0;
	struct sum *s = ta_xcalloc(n + 1, sizeof(*s));
	char *pick = ta_xcalloc(n + 1, 1);

	if (kind < 0 || where < 0 || cost < 0 || count < 0 || advice < 0 || detail < 0)
		n = 0; /* not the summary: nothing said */
	for (i = 0; i < n; i++)
		s[i] = (struct sum){ ta_table_cell(findings, i, 0)->i,
			ta_table_cell(findings, i, (size_t)count)->i,
			ta_table_cell(findings, i, (size_t)kind)->s,
			ta_table_cell(findings, i, (size_t)where)->s,
			ta_table_cell(findings, i, (size_t)advice)->s,
			ta_table_cell(findings, i, (size_t)detail)->s,
			ta_table_cell(findings, i, (size_t)cost)->d };
	ta_qsort(s, n, sizeof(*s), cmp_sum);
	for (i = 0; i < n; i++)  /* a leak costs no time, and is always said */
		pick[i] = i < SUMMARY_LINES || strcmp(s[i].kind, "memory_growth") == 0;
	for (i = 0; i < n; i++) { /* each rank's costliest, if not there yet */
		for (j = 0; j < i && s[j].rank != s[i].rank; j++)
			;
		if (j == i)
			pick[i] = 1;
	}
	/* the column beside main_cause is all the verdict's loss: say so,
	 * or it reads as that one cause's cost */
	ta_buf_adds(&t->tail, "(cause: the step's loss of its verdict's kind; main_cause "
		    "names its largest part)\n\nFindings over all steps, by cost:\n");
	for (i = 0; i < n; i++) {
		if (!pick[i])
			continue;
		shown++;
		ta_buf_addf(&t->tail, "  rank %lld  %-15s %10.3f ms  x%-5lld %s%s%s%s\n"
			    "    -> %s\n", (long long)s[i].rank, s[i].kind,
			    s[i].cost_us / 1e3, (long long)s[i].count, s[i].where,
			    s[i].detail ? " (" : "", s[i].detail ? s[i].detail : "",
			    s[i].detail ? ")" : "", s[i].advice);
	}
	if (shown < n)
		ta_buf_addf(&t->tail, "  ... and %zu more (--findings --summary lists "
			    "every one)\n", n - shown);
	/* helper-64: a GEMM's low_efficiency and its misaligned_gemm were
	 * added up by a reader of "by cost" */
	if (n > 1)
		ta_buf_adds(&t->tail, "  (findings of different kinds may be about the same "
			    "time, such as a GEMM's low_efficiency and misaligned_gemm: "
			    "their costs are not a sum)\n");
	free(pick);
	free(s);
	profiled_host(t);
	path_disagrees(t);
}

/* Per rank over its steps: the means of the step, its wait and its
 * lateness (step time lost), how far behind the first member it arrived,
 * the share of collectives it came last to, its straggler steps and its
 * commonest cause among them (else over all its steps). */
struct rank_sum {
	int64_t rank, steps, straggles, measured, waits, arrivals;
	double late_step_us;   /* step_us of the steps whose late is measured */
	double step_us, wait_us, late_us, arrival_us, last;
	double busy_pct;       /* summed over its steps that have one */
	int64_t busy_steps;
	const char *cause;
};

/* The sums per rank of stragglers' rows (rank order), and the worst
 * straggler among them (NULL: none); *n the ranks. */
static struct rank_sum *straggler_sums(const struct ta_table *t, size_t *n_out,
				       struct rank_sum **worst_out)
{
	size_t step_us = col(t, "step_us"), wait = col(t, "wait_us");
	size_t late = col(t, "late_us"), last = col(t, "arrived_last");
	size_t arrival = col(t, "arrival_us");
	size_t strag = col(t, "straggler"), cause = col(t, "cause");
	size_t busy = col(t, "busy_pct");
	struct rank_sum *s = ta_xcalloc(t->nrows + 1, sizeof(*s)), *worst = NULL;
	size_t n = 0, i;

	for (i = 0; i < t->nrows; i++) {
		int64_t rank = ta_table_cell(t, i, 0)->i;
		int is = ta_table_cell(t, i, strag)->i != 0;

		if (!n || s[n - 1].rank != rank)
			s[n++] = (struct rank_sum){ rank, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL };
		s[n - 1].steps++;
		s[n - 1].straggles += is;
		s[n - 1].measured += !ta_table_cell(t, i, late)->null;
		s[n - 1].waits += !ta_table_cell(t, i, wait)->null;
		s[n - 1].arrivals += !ta_table_cell(t, i, last)->null;
		if (!ta_table_cell(t, i, late)->null)
			s[n - 1].late_step_us += ta_table_cell(t, i, step_us)->d;
		s[n - 1].step_us += ta_table_cell(t, i, step_us)->d;
		s[n - 1].wait_us += ta_table_cell(t, i, wait)->d;
		s[n - 1].late_us += ta_table_cell(t, i, late)->d;
		s[n - 1].arrival_us += ta_table_cell(t, i, arrival)->d;
		s[n - 1].last += ta_table_cell(t, i, last)->d;
		if (!ta_table_cell(t, i, busy)->null) {
			s[n - 1].busy_pct += ta_table_cell(t, i, busy)->d;
			s[n - 1].busy_steps++;
		}
		if (is || !s[n - 1].cause)
			s[n - 1].cause = ta_table_cell(t, i, cause)->s;
	}
	for (i = 0; i < n; i++)
		if (s[i].straggles && (!worst || s[i].late_us > worst->late_us))
			worst = &s[i];
	*n_out = n;
	*worst_out = worst;
	return s;
}

/* every wait_us empty: nothing matched (gloo's CPU collectives) */
static int no_waits(const struct ta_table *t)
{
	long c = ta_table_col(t, "wait_us");
	size_t r;

	for (r = 0; c >= 0 && r < t->nrows; r++)
		if (!ta_table_cell(t, r, (size_t)c)->null)
			return 0;
	return c >= 0 && t->nrows > 0;
}

/* Whether rank has rows in t (rank order). */
static int shows_rank(const struct ta_table *t, int64_t rank)
{
	size_t lo = 0, hi = t->nrows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ta_table_cell(t, mid, 0)->i < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nrows && ta_table_cell(t, lo, 0)->i == rank;
}

/* --ranks left out the rank a shown one lost the most to: the pair of a
 * shown rank and a left-out peer with the most lost per step (*lost_us
 * summed over the shown rank's steps, *steps, *step_us); 0: none. */
static int hidden_peer(const struct ta_table *t, int64_t *rank, int64_t *peer,
		       double *lost_us, double *step_us, int64_t *steps)
{
	long pc = ta_table_col(t, "waited_for"), wc = ta_table_col(t, "waited_for_us");
	size_t i, j, k, m;
	double best = 0;

	if (pc < 0 || wc < 0)
		return 0;
	for (i = 0; i < t->nrows; i = j) {
		int64_t r = ta_table_cell(t, i, 0)->i, n = 0;
		double span = 0;

		for (j = i; j < t->nrows && ta_table_cell(t, j, 0)->i == r; j++) {
			n++;
			span += ta_table_cell(t, j, col(t, "step_us"))->d;
		}
		/* each left-out peer of the rank's steps, summed apart */
		for (k = i; k < j; k++) {
			const struct ta_cell *pk = ta_table_cell(t, k, (size_t)pc);
			double lost = 0;

			if (pk->null || shows_rank(t, pk->i))
				continue;
			for (m = i; m < k; m++)   /* summed at its first step */
				if (!ta_table_cell(t, m, (size_t)pc)->null &&
				    ta_table_cell(t, m, (size_t)pc)->i == pk->i)
					break;
			if (m < k)
				continue;
			for (m = k; m < j; m++)
				if (!ta_table_cell(t, m, (size_t)pc)->null &&
				    ta_table_cell(t, m, (size_t)pc)->i == pk->i)
					lost += ta_table_cell(t, m, (size_t)wc)->d;
			if (lost / (double)n > best) {
				best = lost / (double)n;
				*rank = r, *peer = pk->i, *lost_us = lost, *step_us = span;
				*steps = n;
			}
		}
	}
	return best > 0;
}

void ta_people_straggler_says(const struct ta_table *t, struct ta_buf *b)
{
	struct rank_sum *worst, *s;
	size_t n;

	struct rank_sum *lag = NULL, *most = NULL;
	size_t i;
	int64_t hid_rank = 0, hid_peer = 0, hid_steps = 0;
	double hid_lost = 0, hid_span = 0;

	s = straggler_sums(t, &n, &worst);
	for (i = 0; i < n; i++) {
		if (!lag || s[i].arrival_us > lag->arrival_us)
			lag = &s[i];
		if (!most || s[i].late_us > most->late_us)
			most = &s[i];
	}
	if (worst && worst->cause && strncmp(worst->cause, "wait_for_peer", 13) == 0 &&
	    worst->busy_steps)
		/* its own largest loss a wait, yet it passed on more than it
		 * waited (a pipeline's slow stage): its own work */
		ta_buf_addf(b, "rank %lld holds the others back: they lose "
			    "%.1f ms per step waiting for it (%.0f %% of its "
			    "step): its own work, its GPU busy %.0f %% of its step "
			    "(critical-path --ranks %lld names it; its own waits, "
			    "%s, are shorter than what it costs the others)\n",
			    (long long)worst->rank,
			    worst->late_us / (double)worst->measured / 1e3,
			    100 * worst->late_us / worst->late_step_us,
			    worst->busy_pct / (double)worst->busy_steps,
			    (long long)worst->rank, worst->cause);
	else if (worst)
		/* the step time they lost: waits their own work filled are not */
		ta_buf_addf(b, "rank %lld holds the others back: they lose "
			    "%.1f ms per step waiting for it (%.0f %% of its "
			    "step): %s\n", (long long)worst->rank,
			    worst->late_us / (double)worst->measured / 1e3,
			    100 * worst->late_us / worst->late_step_us,
			    worst->cause ? worst->cause : "cause unknown");
	else if (no_waits(t))
		ta_buf_adds(b, "who waits for whom is not measured: no collective "
			    "was matched across ranks and timed (the warnings "
			    "say why)\n");
	else if (hidden_peer(t, &hid_rank, &hid_peer, &hid_lost, &hid_span, &hid_steps) &&
		 hid_lost >= 0.01 * hid_span)
		/* the rows --ranks shows cannot say whether it is the straggler */
		ta_buf_addf(b, "rank %lld loses %.1f ms per step (%.0f %% of its step) "
			    "waiting for rank %lld, which --ranks leaves out\n",
			    (long long)hid_rank, hid_lost / (double)hid_steps / 1e3,
			    100 * hid_lost / hid_span, (long long)hid_peer);
	else if (most && most->late_step_us > 0 && most->late_us >= 0.01 * most->late_step_us)
		/* a cost, but under --late-pct */
		ta_buf_addf(b, "no straggler past --late-pct: the most, rank %lld, costs "
			    "the others %.1f ms per step (%.0f %% of its step): %s\n",
			    (long long)most->rank, most->late_us / (double)most->measured / 1e3,
			    100 * most->late_us / most->late_step_us,
			    most->cause ? most->cause : "cause unknown");
	else if (t->ranks_absent)
		/* the late one may be the rank with no trace: waits for it
		 * read as transfer, not as a wait */
		ta_buf_addf(b, "no straggler among the ranks here, but %zu rank%s "
			    "the process groups name %s no trace: a wait for %s is "
			    "not measured\n", t->ranks_absent,
			    t->ranks_absent == 1 ? "" : "s",
			    t->ranks_absent == 1 ? "has" : "have",
			    t->ranks_absent == 1 ? "it" : "them");
	else if (lag && lag->step_us > 0 && lag->arrival_us >= 0.05 * lag->step_us)
		/* why a rank last to every collective is not the straggler */
		ta_buf_addf(b, "no straggler: rank %lld arrives late to collectives "
			    "(%.1f ms per step behind the first), but the others wait "
			    "under their own work: they lose %.2f ms per step\n",
			    (long long)lag->rank, lag->arrival_us / (double)lag->steps / 1e3,
			    lag->late_us / (double)(lag->measured ? lag->measured : 1) / 1e3);
	else
		ta_buf_adds(b, "no straggler: no rank keeps the others "
			    "waiting for long\n");
	free(s);
}

void ta_people_stragglers(struct ta_table *t)
{
	struct rank_sum *worst, *s;
	size_t n, i;

	ta_people_straggler_says(t, &t->head);
	s = straggler_sums(t, &n, &worst);
	ta_buf_adds(&t->head, "\nrank  steps        step        wait        late"
		    "  arrived_last  straggler_steps\n");
	for (i = 0; i < n; i++) {
		/* each mean over the steps that measured it: nothing matched
		 * (gloo without its group), or collectives with no length,
		 * leave a column's steps empty ("-" where none is left) */
		char wait[32], late[32], last[32], strag[32];

		snprintf(wait, sizeof(wait), "%7.3f ms", s[i].wait_us /
			 (double)(s[i].waits ? s[i].waits : 1) / 1e3);
		snprintf(late, sizeof(late), "%7.3f ms", s[i].late_us /
			 (double)(s[i].measured ? s[i].measured : 1) / 1e3);
		snprintf(last, sizeof(last), "%.2f", s[i].last /
			 (double)(s[i].arrivals ? s[i].arrivals : 1));
		snprintf(strag, sizeof(strag), "%lld", (long long)s[i].straggles);
		ta_buf_addf(&t->head, "%4lld  %5lld  %7.3f ms  %10s  %10s  %12s  %15s\n",
			    (long long)s[i].rank, (long long)s[i].steps,
			    s[i].step_us / (double)s[i].steps / 1e3,
			    s[i].waits ? wait : "-", s[i].measured ? late : "-",
			    s[i].arrivals ? last : "-", s[i].measured ? strag : "-");
	}
	ta_buf_adds(&t->head, "(means per step)\n");
	free(s);
}

/* "rank 0 step 2: 78 % of the critical path is on the CPU, data_loading
 * 40.1 ms": the largest share of each step's path and its costliest item
 * of that kind. */
void ta_people_critical(struct ta_table *t, const struct ta_table *items)
{
	static const char *const says[TA_PATH_PARTS] = { "on the CPU",
		"in launches", "in compute kernels", "in communication kernels",
		"in copies", "in gaps between kernels", "in syncs",
		"waiting for ranks not analysed" };
	static const char unnamed[] = "(no op or range)";
	size_t r, c, i;
	int said_unnamed = 0;

	for (r = 0; r < t->nrows; r++) {
		double len = ta_table_cell(t, r, 2)->d, best = -1;
		size_t bc = 0;
		const struct ta_cell *step = ta_table_cell(t, r, 1);
		int64_t rank = ta_table_cell(t, r, 0)->i;
		double on_peers = ta_table_cell(t, r, 3 + TA_PATH_PARTS)->d;

		/* the parts only: --what-if's predicted_us comes after them */
		for (c = 3; c < 3 + TA_PATH_PARTS; c++)
			if (ta_table_cell(t, r, c)->d > best)
				best = ta_table_cell(t, r, c)->d, bc = c - 3;
		if (step->null)
			ta_buf_addf(&t->head, "rank %lld: ", (long long)rank);
		else
			ta_buf_addf(&t->head, "rank %lld step %lld: ", (long long)rank,
				    (long long)step->i);
		if (len <= 0) { /* its host work ran under earlier GPU work */
			ta_buf_adds(&t->head, "no window of its own (the GPU ran "
				    "earlier work throughout)\n");
			continue;
		}
		ta_buf_addf(&t->head, "%.0f %% of the critical path is %s",
			    100 * best / len, says[bc]);
		for (i = 0; i < items->nrows; i++) { /* its costliest item */
			const char *kind = ta_table_cell(items, i, 2)->s;

			if (ta_table_cell(items, i, 0)->i != rank ||
			    ta_table_cell(items, i, 1)->null != step->null ||
			    (!step->null && ta_table_cell(items, i, 1)->i != step->i))
				continue;
			if (strcmp(kind, ta_critical_parts[bc]) == 0) {
				const char *n = ta_table_cell(items, i, 3)->s;
				size_t nl = strlen(n);

				if (nl > 70) { /* a kernel's template name: its ends,
						* cut between characters */
					size_t head = 45;
					const char *tail = n + nl - 20;

					while (head && ((unsigned char)n[head] & 0xc0) == 0x80)
						head--;
					while (((unsigned char)*tail & 0xc0) == 0x80)
						tail++;
					ta_buf_addf(&t->head, ": %.*s...%s, %.1f ms", (int)head, n,
						    tail, ta_table_cell(items, i, 4)->d / 1e3);
				} else
					ta_buf_addf(&t->head, ": %s, %.1f ms", n,
						    ta_table_cell(items, i, 4)->d / 1e3);
				said_unnamed |= nl >= strlen(unnamed) &&
						strcmp(n + nl - strlen(unnamed), unnamed) == 0;
				break;
			}
		}
		if (on_peers >= 0.005 * len && len > 0)
			ta_buf_addf(&t->head, " (%.0f %% of the path on other ranks' "
				    "work)", 100 * on_peers / len);
		ta_buf_adds(&t->head, "\n");
	}
	if (said_unnamed)
		ta_buf_addf(&t->head, "%s: host time in no recorded op or range (Python "
			    "between ops, or what another thread held it for): "
			    "with_stack=True or record_function names it\n", unnamed);
}

/* critical-path --hta-compat: "rank 0: HTA's graph has 414 nodes and 415
 * edges; its critical path 315 nodes and 314 edges (159 events),
 * 241724 µs." from the graph table. */
void ta_people_critical_hta(struct ta_table *t, const struct ta_table *graph)
{
	size_t r;

	for (r = 0; r + 2 < graph->nrows; r++) {
		const char *item = ta_table_cell(graph, r, 1)->s;

		if (strcmp(item, "nodes") != 0)
			continue;
		ta_buf_addf(&t->head, "rank %lld: HTA's graph has %lld nodes and "
			    "%lld edges; its critical path %lld nodes and %lld "
			    "edges (%lld events), %.0f us long\n",
			    (long long)ta_table_cell(graph, r, 0)->i,
			    (long long)ta_table_cell(graph, r, 2)->i,
			    (long long)ta_table_cell(graph, r + 2, 2)->i,
			    (long long)ta_table_cell(graph, r, 3)->i,
			    (long long)ta_table_cell(graph, r + 2, 3)->i,
			    (long long)ta_table_cell(graph, r + 1, 3)->i,
			    ta_table_cell(graph, r + 2, 4)->d);
	}
}

/* "rank 0: step 32.85 -> 50.10 ms (+17.25 ms, +52.5 %); ..." then the
 * largest changes beyond noise, as a person reads them. */
#define DIFF_LINES 8

struct by_self {
	double key;             /* |change in self time| */
	size_t row;
};

static int cmp_self(const void *x, const void *y)
{
	const struct by_self *a = x, *b = y;

	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return a->row < b->row ? -1 : 1;
}

/* "aten::addmm (fp16): 258.8 -> 0.7 TFLOP/s, compute- -> memory-bound;
 * its kernel nvjet_... -> nvjet_...": what roofline says changed. */
static void diff_efficiency(struct ta_table *t, const struct ta_table *e)
{
	size_t r;

	if (!e->nrows)
		return;
	ta_buf_adds(&t->head, "Op efficiency that changed (roofline):\n");
	for (r = 0; r < e->nrows; r++) {
		const char *bb = ta_table_cell(e, r, 4)->s, *tb = ta_table_cell(e, r, 5)->s;
		const char *bk = ta_table_cell(e, r, 6)->s, *tk = ta_table_cell(e, r, 7)->s;

		ta_buf_addf(&t->head, "  %s (%s): %.4g -> %.4g TFLOP/s", ta_table_cell(e, r, 0)->s,
			    ta_table_cell(e, r, 1)->s, ta_table_cell(e, r, 2)->d,
			    ta_table_cell(e, r, 3)->d);
		if (bb && tb)
			ta_buf_addf(&t->head, strcmp(bb, tb) ? ", %s-bound -> %s-bound" :
				    ", %s-bound", bb, tb);
		if (bk && tk && strcmp(bk, tk))
			ta_buf_addf(&t->head, "; its kernel %.60s -> %.60s", bk, tk);
		ta_buf_adds(&t->head, "\n");
	}
}

void ta_people_diff(struct ta_table *t, const struct ta_table *steps)
{
	size_t kind = col(t, "kind"), name = col(t, "name"), flag = col(t, "flag");
	size_t dself = col(t, "diff_self_us"), dcount = col(t, "diff_count");
	size_t change = col(t, "change");
	size_t r, shown = 0, flagged = 0, n = 0, i;
	struct by_self *order;

	for (r = 0; r < steps->nrows; r++) {
		const struct ta_cell *bs = ta_table_cell(steps, r, 3);
		const struct ta_cell *ts = ta_table_cell(steps, r, 4);

		ta_buf_addf(&t->head, "rank %lld: ",
			    (long long)ta_table_cell(steps, r, 0)->i);
		if (bs->null || ts->null) {
			ta_buf_addf(&t->head, "only in %s\n", bs->null ? "TEST" : "BASE");
			continue;
		}
		ta_buf_addf(&t->head, "step %.2f -> %.2f ms (%+.2f ms, %+.1f %%); "
			    "GPU busy %.1f -> %.1f %%; idle %.2f -> %.2f ms (host wait "
			    "%.0f -> %.0f %%); %s -> %s\n",
			    bs->d / 1e3, ts->d / 1e3, (ts->d - bs->d) / 1e3,
			    bs->d > 0 ? 100 * (ts->d - bs->d) / bs->d : 0,
			    ta_table_cell(steps, r, 7)->d, ta_table_cell(steps, r, 8)->d,
			    ta_table_cell(steps, r, 9)->d / 1e3,
			    ta_table_cell(steps, r, 10)->d / 1e3,
			    ta_table_cell(steps, r, 13)->d, ta_table_cell(steps, r, 14)->d,
			    ta_table_cell(steps, r, 11)->null ? "?" :
			    ta_table_cell(steps, r, 11)->s,
			    ta_table_cell(steps, r, 12)->null ? "?" :
			    ta_table_cell(steps, r, 12)->s);
	}
	if (steps->also)
		diff_efficiency(t, steps->also);
	for (r = 0; r < t->nrows; r++)
		flagged += ta_table_cell(t, r, flag)->i != 0;
	if (!flagged) {
		ta_buf_adds(&t->head, "No change beyond noise (--noise-pct, --noise-us).\n");
		return;
	}
	ta_buf_addf(&t->head, "%zu change%s beyond noise; by the change in self "
		    "time (what nests in a range or frame is its own line):\n",
		    flagged, flagged == 1 ? "" : "s");
	order = ta_xcalloc(t->nrows + 1, sizeof(*order));
	for (r = 0; r < t->nrows; r++)
		if (ta_table_cell(t, r, flag)->i) {
			order[n].key = fabs(ta_table_cell(t, r, dself)->d);
			order[n++].row = r;
		}
	ta_qsort(order, n, sizeof(*order), cmp_self);
	for (i = 0; i < n && shown < DIFF_LINES; i++) {
		size_t r2 = order[i].row;
		double d = ta_table_cell(t, r2, dself)->d;
		double c = ta_table_cell(t, r2, dcount)->d;
		const char *ch = ta_table_cell(t, r2, change)->s;

		r = r2;
		shown++;
		ta_buf_addf(&t->head, "  %+10.3f ms/step self  %+6.1f calls/step  %-10s %s%s\n",
			    d / 1e3, c, ta_table_cell(t, r, kind)->s,
			    ta_table_cell(t, r, name)->s,
			    strcmp(ch, "added") == 0 ? " (new)" :
			    strcmp(ch, "deleted") == 0 ? " (gone)" : "");
	}
	if (shown < flagged)
		ta_buf_addf(&t->head, "  ... and %zu more (flag = 1 in the table)\n",
			    flagged - shown);
	free(order);
}

/* "rank 0 cuda:0: allocated memory grows 4.0 MiB a step, never freed,
 * allocated in leaky_cache" */
void ta_people_memory(struct ta_table *t, const struct ta_table *findings)
{
	size_t r;

	for (r = 0; r < findings->nrows; r++) {
		const char *kind = ta_table_cell(findings, r, 2)->s;
		double mib = (double)ta_table_cell(findings, r, 3)->i / (1 << 20);
		const char *where = ta_table_cell(findings, r, 4)->s;

		ta_buf_addf(&t->head, "rank %lld %s: ",
			    (long long)ta_table_cell(findings, r, 0)->i,
			    ta_table_cell(findings, r, 1)->s);
		if (strcmp(kind, "memory_growth") == 0)
			ta_buf_addf(&t->head, "allocated memory grows %.1f MiB a step "
				    "and is never freed: a leak? Most of it was "
				    "allocated in %s\n", mib, where);
		else if (strcmp(kind, "memory_peak") == 0)
			ta_buf_addf(&t->head, "peak %.1f MiB, made of %s\n", mib, where);
		else
			ta_buf_addf(&t->head, "%.1f MiB %s\n", mib, where);
	}
}

/* "cuda:0: peak 352.7 MiB: 183.2 MiB baseline + 169.5 MiB activations;
 * reserved 404.0 MiB, fragmentation 51.3 MiB", what the baseline is made
 * of, and with --trace where the peak was. */
void ta_people_snapshot(struct ta_table *t)
{
	static const char *const parts[] = { "parameters", "gradients",
		"optimizer state", "workspaces", "other" };
	size_t r, p;
	int sep;

	for (r = 0; r < t->nrows; r++) {
		double mib = 1 << 20;

		ta_buf_addf(&t->head, "%s: peak %.1f MiB: %.1f MiB baseline + %.1f MiB "
			    "activations; reserved %.1f MiB, fragmentation %.1f MiB\n",
			    ta_table_cell(t, r, 0)->s, (double)ta_table_cell(t, r, 2)->i / mib,
			    (double)ta_table_cell(t, r, 1)->i / mib,
			    (double)ta_table_cell(t, r, 4)->i / mib,
			    (double)ta_table_cell(t, r, 5)->i / mib,
			    (double)ta_table_cell(t, r, 6)->i / mib);
		if (t->ncols < 15)
			continue;
		ta_buf_addf(&t->head, "  baseline:");
		if (t->ncols > 15 && ta_table_cell(t, r, 15)->i > 0) {
			ta_buf_addf(&t->head, " %.1f MiB allocated before recording "
				    "started (what it holds, the snapshot does not say),",
				    (double)ta_table_cell(t, r, 15)->i / mib);
		}
		for (p = 0, sep = 0; p < 5; p++)
			if (!ta_table_cell(t, r, 8 + p)->null)   /* known? */
				ta_buf_addf(&t->head, "%s %.1f MiB %s", sep++ ? "," : "",
					    (double)ta_table_cell(t, r, 8 + p)->i / mib,
					    parts[p]);
		ta_buf_addf(&t->head, "%s\n", ta_table_cell(t, r, 11)->null ?
			    " (workspaces among it: recorded without C++ frames)" : "");
		if (!ta_table_cell(t, r, 14)->null && ta_table_cell(t, r, 13)->null)
			ta_buf_addf(&t->head, "  the peak: %s\n", ta_table_cell(t, r, 14)->s);
		else if (!ta_table_cell(t, r, 14)->null)
			ta_buf_addf(&t->head, "  the peak: in ProfilerStep#%lld, in %s\n",
				    (long long)ta_table_cell(t, r, 13)->i,
				    ta_table_cell(t, r, 14)->s);
	}
}

/* "rank 0 (NVIDIA H200): 9.5 % MFU over 2 steps (bf16 peak 989.5
 * TFLOP/s); GEMMs at 19.2 % of their roof, compute-bound; ...": per rank
 * from roofline's summary, its "all" row first, then its families. */
static void roofline_sentences(struct ta_table *t, const struct ta_table *sum)
{
	size_t gpu = col(sum, "gpu"), steps = col(sum, "steps"), tf = col(sum, "tflops");
	size_t mfu = col(sum, "mfu_pct"), dt = col(sum, "dtype"), pk = col(sum, "peak_tflops");
	size_t busy = col(sum, "busy_pct"), gus = col(sum, "gpu_us"), roof = col(sum, "roof_pct");
	size_t bound = col(sum, "bound"), unk = col(sum, "unknown_calls");
	size_t cov = col(sum, "coverage_pct"), i;
	size_t top = col(sum, "uncounted_top"), top_us = col(sum, "uncounted_top_us");
	int64_t unknown = 0;

	for (i = 0; i < sum->nrows; i++) {
		const struct ta_cell *m = ta_table_cell(sum, i, mfu);
		const struct ta_cell *b = ta_table_cell(sum, i, busy);
		int64_t n;

		if (strcmp(ta_table_cell(sum, i, 1)->s, "all") != 0) {
			if (!ta_table_cell(sum, i, roof)->null)
				ta_buf_addf(&t->head, "; %s at %.1f %% of the roof, %s-bound",
					    ta_table_cell(sum, i, 1)->s, ta_table_cell(sum, i, roof)->d,
					    ta_table_cell(sum, i, bound)->s);
			else
				ta_buf_addf(&t->head, "; %s %.3f ms", ta_table_cell(sum, i, 1)->s,
					    ta_table_cell(sum, i, gus)->d / 1e3);
			continue;
		}
		if (i)
			ta_buf_adds(&t->head, "\n");
		ta_buf_addf(&t->head, "rank %lld (%s): ", (long long)ta_table_cell(sum, i, 0)->i,
			    ta_table_cell(sum, i, gpu)->null ? "GPU unknown" :
			    ta_table_cell(sum, i, gpu)->s);
		if (ta_table_cell(sum, i, tf)->null)
			ta_buf_adds(&t->head, ta_table_cell(sum, i, unk)->i ? "FLOPs unknown" :
				    "no counted op");
		else if (!m->null)
			ta_buf_addf(&t->head, "%.1f %% MFU", m->d);
		else
			ta_buf_addf(&t->head, "%.1f TFLOP/s", ta_table_cell(sum, i, tf)->d);
		n = ta_table_cell(sum, i, steps)->i;
		if (n)
			ta_buf_addf(&t->head, " over %lld %s", (long long)n, n == 1 ? "step" : "steps");
		else
			ta_buf_adds(&t->head, " over its span");
		if (!m->null)
			ta_buf_addf(&t->head, " (%s peak %g TFLOP/s)", ta_table_cell(sum, i, dt)->s,
				    ta_table_cell(sum, i, pk)->d);
		/* the profiler slows the host most: a host-bound trace may be
		 * a GPU-bound run (README: where the profiler distorts) */
		/* (past 100 %: the busy time is not what ran, kernels lost
		 * from the trace: no bound; helper-66 read 11737 %) */
		if (!m->null && m->d > 0 && !b->null && b->d > 0 && b->d < 90 &&
		    m->d <= b->d)
			ta_buf_addf(&t->head, "; the GPU busy %.0f %% of it: at most %.1f %% if "
				    "the host kept it busy (the profiler slows the host)", b->d,
				    100 * m->d / b->d);
		if (!ta_table_cell(sum, i, cov)->null)
			ta_buf_addf(&t->head, "; the counted ops are %.0f %% of its kernel time",
				    ta_table_cell(sum, i, cov)->d);
		/* what the rest is: Triton's kernels and others no FLOP formula
		 * counts (helper-64: compiled_train's 46 % went unsaid) */
		if (top < sum->ncols && top_us < sum->ncols && !ta_table_cell(sum, i, top)->null &&
		    !ta_table_cell(sum, i, cov)->null && ta_table_cell(sum, i, cov)->d < 95) {
			const char *k = ta_table_cell(sum, i, top)->s;

			ta_buf_addf(&t->head, " (the rest, no op with a FLOP formula: the largest "
				    "%.*s%s, %.3f ms)", 60, k, strlen(k) > 60 ? "\u2026" : "",
				    ta_table_cell(sum, i, top_us)->d / 1e3);
		}
		unknown += ta_table_cell(sum, i, unk)->i;
	}
	if (sum->nrows)
		ta_buf_adds(&t->head, "\n");
	if (unknown)
		ta_buf_addf(&t->head, "(%lld calls without shapes: record_shapes off? Their "
			    "FLOPs are unknown.)\n", (long long)unknown);
}

void ta_people_roofline(struct ta_table *t, const struct ta_table *sum)
{
	if (sum)
		roofline_sentences(t, sum);
}
