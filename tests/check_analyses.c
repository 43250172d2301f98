/* Analyses on small hand-made traces with hand-computed answers. */
#include "check_main.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_ingest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define K(name, cat, ts, dur, stream, corr) \
	"{\"ph\": \"X\", \"cat\": \"" cat "\", \"name\": \"" name "\", \"pid\": 0," \
	" \"tid\": " #stream ", \"ts\": " #ts ", \"dur\": " #dur ", \"args\":" \
	" {\"stream\": " #stream ", \"correlation\": " #corr "}}"
#define STEP(n, ts, dur) \
	"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#" #n "\"," \
	" \"pid\": 1, \"tid\": 1, \"ts\": " #ts ", \"dur\": " #dur "}"
#define R(name, ts, dur, corr) \
	"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"" name "\"," \
	" \"pid\": 1, \"tid\": 1, \"ts\": " #ts ", \"dur\": " #dur "," \
	" \"args\": {\"correlation\": " #corr "}}"

/* compute [100,150) and [300,400) on stream 7, NCCL [120,180) on 13,
 * a copy [400,410): busy 190 of a 310 span. */
static const char rank0[] =
	"{\"distributedInfo\": {\"rank\": 0}, \"traceEvents\": ["
	R("cudaLaunchKernel", 90, 5, 1) ","
	R("cudaLaunchKernel", 110, 5, 2) ","
	R("cudaLaunchKernel", 250, 5, 3) ","
	R("cudaMemcpyAsync", 395, 5, 4) ","
	K("gemm", "kernel", 100, 50, 7, 1) ","
	K("ncclKernel_AllReduce_RING_LL_Sum_float", "kernel", 120, 60, 13, 2) ","
	K("gemm", "kernel", 300, 100, 7, 3) ","
	K("Memcpy HtoD (Pageable -> Device)", "gpu_memcpy", 400, 10, 7, 4) "]}";

/* rank from the file name; a Triton-style cpu_op carrying a stream */
static const char rank1[] =
	"{\"traceEvents\": ["
	K("k", "kernel", 1000, 10, 7, 5) ","
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"triton_op\", \"pid\": 1,"
	" \"tid\": 1, \"ts\": 1000, \"dur\": 94, \"args\": {\"stream\": 0}}]}";

struct fixture {
	char *dir;
	sqlite3 *db;
};

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void open_db(struct fixture *fx)
{
	struct ta_ingest_opts o = { .no_cache = 1 };
	struct ta_error err;

	ck_assert_msg(ta_input_open(fx->dir, &o, &fx->db, &err) == 0, "%s", err.msg);
}

static struct ta_table *temporal(struct fixture *fx, int compat)
{
	struct ta_query q = { compat, NULL, 0, 0, NULL, NULL };
	struct ta_table *t = NULL;
	struct ta_error err;

	ck_assert_msg(ta_temporal_run(fx->db, &q, &t, &err) == 0, "%s", err.msg);
	return t;
}

static double num(const struct ta_table *t, size_t row, const char *col)
{
	size_t c;

	for (c = 0; c < t->ncols; c++)
		if (strcmp(t->cols[c].name, col) == 0)
			return ta_table_cell(t, row, c)->d;
	ck_abort_msg("no column %s", col);
	return 0;
}

START_TEST(test_analyses_temporal_two_ranks)
{
	struct fixture fx = { tmp_dir(), NULL };
	struct ta_table *t;
	int compat;

	write_file(fx.dir, "a.json", rank0);
	write_file(fx.dir, "rank-1.json", rank1);
	write_file(fx.dir, "notes.txt", "not a trace");
	open_db(&fx);
	for (compat = 0; compat <= 1; compat++) {
		t = temporal(&fx, compat);
		ck_assert_int_eq(t->nrows, 2);
		ck_assert_int_eq(ta_table_cell(t, 0, 0)->i, 0);
		ck_assert(num(t, 0, "window_us") == 310);
		ck_assert(num(t, 0, "idle_us") == 120);
		ck_assert(num(t, 0, "compute_us") == 150);
		ck_assert(num(t, 0, "non_compute_us") == 40);
		ck_assert(num(t, 0, "idle_pct") == 38.71);
		ck_assert(num(t, 0, "compute_pct") == 48.39);
		ck_assert(num(t, 0, "non_compute_pct") == 12.9);
		ck_assert_int_eq(ta_table_cell(t, 1, 0)->i, 1);
		/* HTA counts the cpu_op with a stream as a kernel (§3) */
		ck_assert(num(t, 1, "window_us") == (compat ? 94 : 10));
		ta_table_free(t);
	}
	sqlite3_close(fx.db);
	rm_tree(fx.dir);
	free(fx.dir);
}
END_TEST

/* Two ProfilerSteps: work launched in the last one is left out. The
 * default window is the kept step's: from its CPU start (0) to the end of
 * the work launched in it (230); HTA's runs from the first kernel. */
static const char stepped[] =
	"{\"traceEvents\": ["
	STEP(1, 0, 200) ","
	STEP(2, 200, 200) ","
	R("cudaLaunchKernel", 10, 5, 1) ","
	R("cudaLaunchKernel", 150, 5, 2) ","
	R("cudaLaunchKernel", 210, 5, 3) ","
	K("a", "kernel", 20, 30, 7, 1) ","
	K("b", "kernel", 190, 40, 7, 2) ","   /* launched in step 1, runs past it */
	K("c", "kernel", 240, 50, 7, 3) "]}"; /* launched in step 2: dropped */

START_TEST(test_analyses_temporal_step_window)
{
	struct fixture fx = { tmp_dir(), NULL };
	struct ta_table *t;
	int compat;

	write_file(fx.dir, "rank-0.json", stepped);
	open_db(&fx);
	for (compat = 0; compat <= 1; compat++) {
		t = temporal(&fx, compat);
		/* HTA: 20 .. 230; default: 0 .. 230, the stall before a counts */
		ck_assert(num(t, 0, "window_us") == (compat ? 210 : 230));
		ck_assert(num(t, 0, "idle_us") == (compat ? 140 : 160));
		ta_table_free(t);
	}
	sqlite3_close(fx.db);
	rm_tree(fx.dir);
	free(fx.dir);
}
END_TEST

/* Three ProfilerSteps with a gap between the first two, the last cut.
 * Work launched before the first step (k0) moves the first window's start
 * to its end (1020); work launched in the gap (k2) belongs to no step, so
 * it does not stretch the second window past that step's end (1250); k3,
 * listed first, is the second step's. Windows 1020..1130..1250: 230, of
 * which k1 and k2 cover 1060..1250. */
static const char gapped[] =
	"{\"traceEvents\": ["
	STEP(1, 1000, 100) ","
	STEP(2, 1150, 100) ","
	STEP(3, 1300, 100) ","
	R("cudaLaunchKernel", 1200, 5, 4) ","
	K("k3", "kernel", 1210, 30, 7, 4) ","
	R("cudaLaunchKernel", 990, 5, 1) ","
	R("cudaLaunchKernel", 1050, 5, 2) ","
	R("cudaLaunchKernel", 1120, 5, 3) ","
	R("cudaLaunchKernel", 1310, 5, 5) ","
	K("k0", "kernel", 995, 25, 7, 1) ","
	K("k1", "kernel", 1060, 70, 7, 2) ","
	K("k2", "kernel", 1125, 165, 7, 3) ","
	K("k4", "kernel", 1320, 50, 7, 5) "]}";

START_TEST(test_analyses_temporal_step_gap)
{
	struct fixture fx = { tmp_dir(), NULL };
	struct ta_table *t;

	write_file(fx.dir, "rank-0.json", gapped);
	open_db(&fx);
	t = temporal(&fx, 0);
	ck_assert(num(t, 0, "window_us") == 230);
	ck_assert(num(t, 0, "idle_us") == 40);
	ta_table_free(t);
	sqlite3_close(fx.db);
	rm_tree(fx.dir);
	free(fx.dir);
}
END_TEST

START_TEST(test_analyses_rank_selection)
{
	struct fixture fx = { tmp_dir(), NULL };
	int64_t want[] = { 1 }, missing[] = { 5 };
	struct ta_query q = { 0, want, 1, 0, NULL, NULL };
	struct ta_table *t = NULL;
	struct ta_error err;

	write_file(fx.dir, "a.json", rank0);
	write_file(fx.dir, "rank-1.json", rank1);
	open_db(&fx);
	ck_assert_int_eq(ta_temporal_run(fx.db, &q, &t, &err), 0);
	ck_assert_int_eq(t->nrows, 1);
	ck_assert_int_eq(ta_table_cell(t, 0, 0)->i, 1);
	ta_table_free(t);
	q.ranks = missing;
	ck_assert_int_eq(ta_temporal_run(fx.db, &q, &t, &err), -1);
	ck_assert_str_eq(err.msg, "rank 5 is not in the trace");
	sqlite3_close(fx.db);
	rm_tree(fx.dir);
	free(fx.dir);
}
END_TEST

START_TEST(test_analyses_duplicate_rank)
{
	struct ta_ingest_opts o = { .no_cache = 1 };
	struct fixture fx = { tmp_dir(), NULL };
	struct ta_error err;

	write_file(fx.dir, "a.json", rank0);
	write_file(fx.dir, "b.json", rank0);
	ck_assert_int_eq(ta_input_open(fx.dir, &o, &fx.db, &err), -1);
	ck_assert_int_eq(err.code, TA_EXIT_INPUT);
	ck_assert_ptr_nonnull(strstr(err.msg, "a.json' and '"));
	ck_assert_ptr_nonnull(strstr(err.msg, "are both rank 0"));
	rm_tree(fx.dir);
	free(fx.dir);
}
END_TEST

/* stream 7: gemm [100,150) [160,200) [260,300) [400,420), launched at
 * 90, 120, 140, 380: gaps 10 (kernel wait), 60 (other: launched early, gap
 * over 30), 100 (host wait: launched at 380, after the stream drained at
 * 300). stream 13: NCCL [130,230), 60 of it under compute. */
static const char core[] =
	"{\"traceEvents\": ["
	R("cudaLaunchKernel", 90, 5, 1) "," R("cudaLaunchKernel", 100, 5, 5) ","
	R("cudaLaunchKernel", 120, 5, 2) "," R("cudaLaunchKernel", 140, 5, 3) ","
	R("cudaLaunchKernel", 380, 5, 4) ","
	K("gemm", "kernel", 100, 50, 7, 1) ","
	K("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "kernel", 130, 100, 13, 5) ","
	K("gemm", "kernel", 160, 40, 7, 2) ","
	K("gemm", "kernel", 260, 40, 7, 3) ","
	K("gemm", "kernel", 400, 20, 7, 4) "]}";

static struct ta_table *run_idle(struct fixture *fx, int compat, int stats)
{
	struct ta_query q = { compat, NULL, 0, 0, NULL, NULL };
	struct ta_idle_opts o = { 30000, NULL, 0, stats };
	struct ta_table *t = NULL;
	struct ta_error err;

	ck_assert_msg(ta_idle_run(fx->db, &q, &o, &t, &err) == 0, "%s", err.msg);
	return t;
}

/* The row whose text columns read key1 (and key2). */
static size_t find_row(const struct ta_table *t, int64_t stream,
		       const char *cat)
{
	size_t r;

	for (r = 0; r < t->nrows; r++)
		if (ta_table_cell(t, r, 1)->i == stream &&
		    strcmp(ta_table_cell(t, r, 2)->s, cat) == 0)
			return r;
	ck_abort_msg("no row %lld %s", (long long)stream, cat);
	return 0;
}

START_TEST(test_analyses_idle)
{
	struct fixture fx = { tmp_dir(), NULL };
	struct ta_table *t;
	int compat;

	write_file(fx.dir, "rank-0.json", core);
	open_db(&fx);
	for (compat = 0; compat <= 1; compat++) {
		t = run_idle(&fx, compat, 0);
		ck_assert(num(t, find_row(t, 7, "host_wait"), "idle_us") == 100);
		ck_assert(num(t, find_row(t, 7, "kernel_wait"), "idle_us") == 10);
		ck_assert(num(t, find_row(t, 7, "other"), "idle_us") == 60);
		ck_assert(fabs(num(t, find_row(t, 7, "host_wait"), "idle_ratio") -
			       100.0 / 170) < (compat ? 0.005 : 1e-12));
		/* one kernel on stream 13: no gap; HTA still shows "other" */
		ck_assert(ta_table_cell(t, find_row(t, 13, "other"), 4)->null);
		ck_assert_int_eq(t->nrows, compat ? 4 : 9);
		if (!compat) { /* the whole GPU (stream NULL): temporal's 130 */
			size_t r, n = 0;
			double sum = 0;

			for (r = 0; r < t->nrows; r++) {
				if (!ta_table_cell(t, r, 1)->null)
					continue;
				n++;
				sum += ta_table_cell(t, r, 3)->d;
				if (strcmp(ta_table_cell(t, r, 2)->s, "host_wait") == 0)
					ck_assert(ta_table_cell(t, r, 3)->d == 100);
				if (strcmp(ta_table_cell(t, r, 2)->s, "other") == 0)
					ck_assert(ta_table_cell(t, r, 3)->d == 30);
			}
			ck_assert_int_eq(n, 3);
			ck_assert(sum == 130);
		}
		ta_table_free(t);
	}
	t = run_idle(&fx, 0, 1);
	ck_assert_int_eq(t->nrows, 3); /* one per category with a gap */
	ck_assert_int_eq(ta_table_cell(t, find_row(t, 7, "other"), 3)->i, 1);
	ta_table_free(t);
	t = run_idle(&fx, 1, 1);
	ck_assert_int_eq(ta_table_cell(t, find_row(t, 13, "other"), 3)->i, 0);
	ta_table_free(t);
	sqlite3_close(fx.db);
	rm_tree(fx.dir);
	free(fx.dir);
}
END_TEST

/* Overlapping kernels on one stream: HTA's gap is negative and lowers
 * kernel wait; the default measures from the latest end. */
START_TEST(test_analyses_idle_overlap_on_stream)
{
	static const char tr[] = "{\"traceEvents\": ["
		R("cudaLaunchKernel", 1, 1, 1) "," R("cudaLaunchKernel", 2, 1, 2) ","
		R("cudaLaunchKernel", 3, 1, 3) ","
		K("a", "kernel", 10, 100, 7, 1) "," K("b", "kernel", 20, 10, 7, 2) ","
		K("c", "kernel", 115, 10, 7, 3) "]}";
	struct fixture fx = { tmp_dir(), NULL };
	struct ta_table *t;

	write_file(fx.dir, "rank-0.json", tr);
	open_db(&fx);
	t = run_idle(&fx, 1, 0);  /* gaps 20 - 110 = -90 and 115 - 30 = 85 */
	ck_assert(num(t, find_row(t, 7, "kernel_wait"), "idle_us") == -90);
	ck_assert(num(t, find_row(t, 7, "other"), "idle_us") == 85);
	ta_table_free(t);
	t = run_idle(&fx, 0, 0);  /* one gap: 115 - 110 = 5 */
	ck_assert(num(t, find_row(t, 7, "kernel_wait"), "idle_us") == 5);
	ck_assert(num(t, find_row(t, 7, "other"), "idle_us") == 0);
	ta_table_free(t);
	sqlite3_close(fx.db);
	rm_tree(fx.dir);
	free(fx.dir);
}
END_TEST

START_TEST(test_analyses_overlap)
{
	struct fixture fx = { tmp_dir(), NULL };
	struct ta_query q = { 0, NULL, 0, 0, NULL, NULL };
	struct ta_table *t = NULL;
	struct ta_error err;

	write_file(fx.dir, "rank-0.json", core);
	write_file(fx.dir, "rank-1.json", rank1);
	open_db(&fx);
	ck_assert_int_eq(ta_overlap_run(fx.db, &q, &t, &err), 0);
	ck_assert(num(t, 0, "comm_us") == 100);
	ck_assert(num(t, 0, "compute_us") == 150);
	ck_assert(num(t, 0, "overlap_us") == 60);
	ck_assert(num(t, 0, "overlap_pct") == 60);
	/* no communication: 0 and an empty share, never NaN */
	ck_assert(num(t, 1, "comm_us") == 0);
	ck_assert(ta_table_cell(t, 1, 4)->null);
	ck_assert_ptr_nonnull(strstr(t->notes.s, "rank 1: no communication"));
	ta_table_free(t);
	/* the name starts with "nccl", which HTA's pattern knows too */
	q.mode = TA_MODE_HTA;
	ck_assert_int_eq(ta_overlap_run(fx.db, &q, &t, &err), 0);
	ck_assert(num(t, 0, "overlap_pct") == 60);
	ta_table_free(t);
	sqlite3_close(fx.db);
	rm_tree(fx.dir);
	free(fx.dir);
}
END_TEST

START_TEST(test_analyses_kernels)
{
	struct fixture fx = { tmp_dir(), NULL };
	struct ta_query q = { 0, NULL, 0, 0, NULL, NULL };
	struct ta_kernels_opts o = { 1, 10, 0.8, 1 };
	struct ta_table *t = NULL;
	struct ta_error err;

	write_file(fx.dir, "rank-0.json", core);
	open_db(&fx);
	ck_assert_int_eq(ta_kernels_run(fx.db, &q, &o, &t, &err), 0);
	ck_assert_int_eq(t->nrows, 3);
	ck_assert_str_eq(ta_table_cell(t, 0, 0)->s, "COMPUTATION");
	ck_assert(num(t, 0, "total_us") == 90);
	ck_assert_str_eq(ta_table_cell(t, 1, 0)->s,
			 "COMPUTATION overlapping COMMUNICATION");
	ck_assert(num(t, 1, "total_us") == 60);
	ck_assert(num(t, 2, "total_us") == 40);
	ck_assert(num(t, 0, "pct") == 47.37);
	ta_table_free(t);
	o.by_type = 0;
	ck_assert_int_eq(ta_kernels_run(fx.db, &q, &o, &t, &err), 0);
	ck_assert_int_eq(t->nrows, 2);
	/* the order text shows: computation before communication */
	ck_assert_str_eq(ta_table_cell(t, 1, 1)->s, "COMMUNICATION");
	ck_assert_str_eq(ta_table_cell(t, 0, 2)->s, "gemm");
	ck_assert_int_eq(ta_table_cell(t, 0, 3)->i, 4);
	ck_assert(num(t, 0, "total_us") == 150);
	ck_assert(num(t, 0, "max_us") == 50);
	ck_assert(num(t, 0, "min_us") == 20);
	ck_assert(num(t, 0, "mean_us") == 37.5);
	ck_assert(fabs(num(t, 0, "std_us") - sqrt(475.0 / 3)) < 1e-9);
	ta_table_free(t);
	sqlite3_close(fx.db);
	rm_tree(fx.dir);
	free(fx.dir);
}
END_TEST

/* Three names, --top 1: HTA loses the kept name's per-launch statistics;
 * the default keeps them. */
START_TEST(test_analyses_kernels_others)
{
	static const char tr[] = "{\"traceEvents\": ["
		K("big", "kernel", 0, 100, 7, 1) "," K("big", "kernel", 200, 50, 7, 2) ","
		K("mid", "kernel", 300, 30, 7, 3) "," K("small", "kernel", 400, 10, 7, 4) ","
		K("small", "kernel", 500, 20, 7, 5) "]}";
	struct fixture fx = { tmp_dir(), NULL };
	struct ta_query q = { 0, NULL, 0, 0, NULL, NULL };
	struct ta_kernels_opts o = { 0, 1, 0.8, 1 };
	struct ta_table *t = NULL;
	struct ta_error err;

	write_file(fx.dir, "rank-0.json", tr);
	open_db(&fx);
	ck_assert_int_eq(ta_kernels_run(fx.db, &q, &o, &t, &err), 0);
	ck_assert_int_eq(t->nrows, 2);
	ck_assert_str_eq(ta_table_cell(t, 0, 2)->s, "big");
	ck_assert(num(t, 0, "max_us") == 100);
	ck_assert(num(t, 0, "mean_us") == 75);
	ck_assert_str_eq(ta_table_cell(t, 1, 2)->s, "others");
	ck_assert_int_eq(ta_table_cell(t, 1, 3)->i, 3);
	ck_assert(num(t, 1, "total_us") == 60);
	ck_assert(num(t, 1, "max_us") == 30);  /* per launch */
	ta_table_free(t);
	q.mode = TA_MODE_HTA;
	ck_assert_int_eq(ta_kernels_run(fx.db, &q, &o, &t, &err), 0);
	ck_assert(num(t, 0, "max_us") == 150);  /* = its total */
	ck_assert(num(t, 0, "std_us") == 0);
	ck_assert(num(t, 1, "max_us") == 30);   /* per-name totals 30 and 30 */
	ck_assert(num(t, 1, "mean_us") == 30);
	ta_table_free(t);
	sqlite3_close(fx.db);
	rm_tree(fx.dir);
	free(fx.dir);
}
END_TEST

Suite *suite_analyses(void)
{
	Suite *s = suite_create("analyses");
	TCase *tc = tcase_create("temporal");

	tcase_add_test(tc, test_analyses_temporal_two_ranks);
	tcase_add_test(tc, test_analyses_temporal_step_window);
	tcase_add_test(tc, test_analyses_temporal_step_gap);
	tcase_add_test(tc, test_analyses_rank_selection);
	tcase_add_test(tc, test_analyses_duplicate_rank);
	tcase_add_test(tc, test_analyses_idle);
	tcase_add_test(tc, test_analyses_idle_overlap_on_stream);
	tcase_add_test(tc, test_analyses_overlap);
	tcase_add_test(tc, test_analyses_kernels);
	tcase_add_test(tc, test_analyses_kernels_others);
	suite_add_tcase(s, tc);
	return s;
}
