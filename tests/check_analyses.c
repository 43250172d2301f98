/* Analyses on small hand-made traces with hand-computed answers. */
#include "check_main.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_ingest.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define K(name, cat, ts, dur, stream, corr) \
	"{\"ph\": \"X\", \"cat\": \"" cat "\", \"name\": \"" name "\", \"pid\": 0," \
	" \"tid\": " #stream ", \"ts\": " #ts ", \"dur\": " #dur ", \"args\":" \
	" {\"stream\": " #stream ", \"correlation\": " #corr "}}"
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
	struct ta_ingest_opts o = { 0, 1, 0 };
	struct ta_error err;

	ck_assert_msg(ta_input_open(fx->dir, &o, &fx->db, &err) == 0, "%s", err.msg);
}

static struct ta_table *temporal(struct fixture *fx, int compat)
{
	struct ta_query q = { compat, NULL, 0 };
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
		ck_assert(num(t, 0, "kernel_us") == 310);
		ck_assert(num(t, 0, "idle_us") == 120);
		ck_assert(num(t, 0, "compute_us") == 150);
		ck_assert(num(t, 0, "non_compute_us") == 40);
		ck_assert(num(t, 0, "idle_pct") == 38.71);
		ck_assert(num(t, 0, "compute_pct") == 48.39);
		ck_assert(num(t, 0, "non_compute_pct") == 12.9);
		ck_assert_int_eq(ta_table_cell(t, 1, 0)->i, 1);
		/* HTA counts the cpu_op with a stream as a kernel (§3) */
		ck_assert(num(t, 1, "kernel_us") == (compat ? 94 : 10));
		ta_table_free(t);
	}
	sqlite3_close(fx.db);
	rm_tree(fx.dir);
	free(fx.dir);
}
END_TEST

/* Two ProfilerSteps: work launched in the last one is left out. */
static const char stepped[] =
	"{\"traceEvents\": ["
	"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\","
	" \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 200},"
	"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#2\","
	" \"pid\": 1, \"tid\": 1, \"ts\": 200, \"dur\": 200},"
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
		ck_assert(num(t, 0, "kernel_us") == 210);   /* 20 .. 230 */
		ck_assert(num(t, 0, "idle_us") == 140);
		ta_table_free(t);
	}
	sqlite3_close(fx.db);
	rm_tree(fx.dir);
	free(fx.dir);
}
END_TEST

START_TEST(test_analyses_rank_selection)
{
	struct fixture fx = { tmp_dir(), NULL };
	int64_t want[] = { 1 }, missing[] = { 5 };
	struct ta_query q = { 0, want, 1 };
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
	struct ta_ingest_opts o = { 0, 1, 0 };
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

Suite *suite_analyses(void)
{
	Suite *s = suite_create("analyses");
	TCase *tc = tcase_create("temporal");

	tcase_add_test(tc, test_analyses_temporal_two_ranks);
	tcase_add_test(tc, test_analyses_temporal_step_window);
	tcase_add_test(tc, test_analyses_rank_selection);
	tcase_add_test(tc, test_analyses_duplicate_rank);
	suite_add_tcase(s, tc);
	return s;
}
