/* launch, queue, membw and annotations on hand-made traces. */
#include "check_main.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_ingest.h"
#include "ta_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define K(name, cat, ts, dur, stream, corr, extra) \
	"{\"ph\": \"X\", \"cat\": \"" cat "\", \"name\": \"" name "\", \"pid\": 0," \
	" \"tid\": " #stream ", \"ts\": " #ts ", \"dur\": " #dur ", \"args\":" \
	" {\"stream\": " #stream ", \"correlation\": " #corr extra "}}"
#define R(name, cat, ts, dur, corr) \
	"{\"ph\": \"X\", \"cat\": \"" cat "\", \"name\": \"" name "\"," \
	" \"pid\": 1, \"tid\": 1, \"ts\": " #ts ", \"dur\": " #dur "," \
	" \"args\": {\"correlation\": " #corr "}}"

/* A cudaLaunchKernel, a Triton-style cuLaunchKernel and a graph launch of
 * two kernels; the first event is a CPU op so no partner has index 0. */
static const char launches[] =
	"{\"traceEvents\": ["
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1,"
	" \"tid\": 1, \"ts\": 5, \"dur\": 200},"
	R("cudaLaunchKernel", "cuda_runtime", 10, 5, 1) ","
	R("cuLaunchKernel", "cuda_driver", 20, 4, 2) ","
	R("cudaGraphLaunch", "cuda_runtime", 30, 10, 3) ","
	K("gemm", "kernel", 40, 10, 7, 1, "") ","
	K("triton_", "kernel", 50, 5, 7, 2, "") ","
	K("g1", "kernel", 200, 3, 7, 3, "") ","
	K("g2", "kernel", 203, 3, 7, 3, "") "]}";

static sqlite3 *open_trace(char **dir, const char *text)
{
	struct ta_ingest_opts o = { .no_cache = 1 };
	struct ta_error err;
	char path[512];
	sqlite3 *db = NULL;
	FILE *f;

	*dir = tmp_dir();
	snprintf(path, sizeof(path), "%s/rank-0.json", *dir);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	ck_assert_msg(ta_input_open(*dir, &o, &db, &err) == 0, "%s", err.msg);
	return db;
}

static void close_trace(sqlite3 *db, char *dir)
{
	sqlite3_close(db);
	rm_tree(dir);
	free(dir);
}

static double cell(const struct ta_table *t, size_t r, size_t c)
{
	return ta_table_cell(t, r, c)->d;
}

START_TEST(test_more_launch)
{
	char *dir;
	sqlite3 *db = open_trace(&dir, launches);
	struct ta_query q = { 0, NULL, 0, 0, NULL, NULL };
	struct ta_launch_opts o = { 0, 0, 50000, 100000 };
	struct ta_table *t;
	struct ta_error err;

	ck_assert_int_eq(ta_launch_run(db, &q, &o, &t, &err), 0);
	ck_assert_int_eq(t->nrows, 4);
	/* cudaLaunchKernel: cpu 5, gpu 10, delay 40 - 15 = 25 */
	ck_assert(cell(t, 0, 4) == 5 && cell(t, 0, 5) == 10 && cell(t, 0, 6) == 25);
	ck_assert_int_eq(ta_table_cell(t, 0, 2)->i, 0);
	ck_assert_str_eq(ta_table_cell(t, 1, 7)->s, "cuLaunchKernel");
	ck_assert(cell(t, 1, 6) == 26);
	/* both kernels of the graph, delays from the end of cudaGraphLaunch,
	 * told apart by nth (the key columns name one row) */
	ck_assert_str_eq(ta_table_cell(t, 2, 7)->s, "cudaGraphLaunch");
	ck_assert(cell(t, 2, 6) == 160 && cell(t, 3, 6) == 163);
	ck_assert_int_eq(ta_table_cell(t, 2, 2)->i, 0);
	ck_assert_int_eq(ta_table_cell(t, 3, 2)->i, 1);
	ta_table_free(t);
	q.mode = TA_MODE_HTA; /* HTA knows cudaLaunchKernel only */
	ck_assert_int_eq(ta_launch_run(db, &q, &o, &t, &err), 0);
	ck_assert_int_eq(t->nrows, 1);
	ta_table_free(t);
	close_trace(db, dir);
}
END_TEST

START_TEST(test_more_queue)
{
	char *dir;
	sqlite3 *db = open_trace(&dir, launches);
	struct ta_query q = { 0, NULL, 0, 0, NULL, NULL };
	struct ta_queue_opts o = { 1, 0 };
	struct ta_table *t;
	struct ta_error err;
	/* +1 at 10, 20, 30 (x2); -1 at 40, 50, 200, 203. The analysis window
	 * (no steps: first to last GPU work) is 40 .. 206: the launches
	 * before it count towards the length, only the points inside are
	 * measured. */
	static const int64_t want[] = { 3, 2, 1, 0 };
	size_t i;

	ck_assert_int_eq(ta_queue_run(db, &q, &o, &t, &err), 0);
	ck_assert_int_eq(t->nrows, 4);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(ta_table_cell(t, i, 3)->i, want[i]);
	ta_table_free(t);
	o.series = 0;
	o.blocked_at = 3; /* length >= 3 from 30 to 50, inside from 40 */
	ck_assert_int_eq(ta_queue_run(db, &q, &o, &t, &err), 0);
	ck_assert(cell(t, 0, 2) == 10);
	/* of the window's length, 40 .. 206 */
	ck_assert(fabs(cell(t, 0, 3) - 10.0 / 166) < 1e-12);
	ta_table_free(t);
	close_trace(db, dir);
}
END_TEST

/* Copies of 0.1 and 0.2 GB/s overlapping: HTA's double running sum ends
 * at 2.8e-17, a point it counts; the default ends at exactly 0. */
START_TEST(test_more_membw_residue)
{
	static const char tr[] = "{\"traceEvents\": ["
		K("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 0, 10, 7, 1,
		  ", \"memory bandwidth (GB/s)\": 0.1") ","
		K("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 5, 10, 8, 2,
		  ", \"memory bandwidth (GB/s)\": 0.2") "]}";
	char *dir;
	sqlite3 *db = open_trace(&dir, tr);
	struct ta_query q = { 1, NULL, 0, 0, NULL, NULL };
	struct ta_membw_opts o = { 0 };
	struct ta_table *t;
	struct ta_error err;

	ck_assert_int_eq(ta_membw_run(db, &q, &o, &t, &err), 0);
	ck_assert_int_eq(ta_table_cell(t, 0, 2)->i, 4); /* .1 .3 .2 residue */
	ta_table_free(t);
	q.mode = TA_MODE_OWN;
	ck_assert_int_eq(ta_membw_run(db, &q, &o, &t, &err), 0);
	ck_assert_str_eq(ta_table_cell(t, 0, 1)->s, "Memcpy HtoD");
	ck_assert_int_eq(ta_table_cell(t, 0, 2)->i, 3);
	ck_assert(fabs(cell(t, 0, 9) - 0.3) < 1e-12);
	ta_table_free(t);
	close_trace(db, dir);
}
END_TEST

START_TEST(test_more_annotations)
{
	static const char tr[] = "{\"traceEvents\": ["
		"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"fwd\","
		" \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 100},"
		"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"fwd\","
		" \"pid\": 1, \"tid\": 1, \"ts\": 200, \"dur\": 50},"
		"{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"fwd\","
		" \"pid\": 0, \"tid\": 7, \"ts\": 10, \"dur\": 100},"
		"{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"attn\","
		" \"pid\": 0, \"tid\": 7, \"ts\": 20, \"dur\": 30},"
		K("k1", "kernel", 25, 5, 7, 1, "") "," K("k2", "kernel", 60, 5, 7, 2, "")
		"]}";
	char *dir;
	sqlite3 *db = open_trace(&dir, tr);
	struct ta_query q = { 0, NULL, 0, 0, NULL, NULL };
	struct ta_annotations_opts o = { 0, 0, 1000, 0.8 };
	struct ta_table *t;
	struct ta_error err;

	ck_assert_int_eq(ta_annotations_run(db, &q, &o, &t, &err), 0);
	ck_assert_int_eq(t->nrows, 1);
	ck_assert_int_eq(ta_table_cell(t, 0, 2)->i, 2);
	ck_assert(cell(t, 0, 3) == 150 && cell(t, 0, 4) == 100 && cell(t, 0, 7) == 75);
	ta_table_free(t);
	o.kernels = 1; /* innermost range wins */
	ck_assert_int_eq(ta_annotations_run(db, &q, &o, &t, &err), 0);
	ck_assert_str_eq(ta_table_cell(t, 0, 4)->s, "attn");
	ck_assert_str_eq(ta_table_cell(t, 1, 4)->s, "fwd");
	ta_table_free(t);
	close_trace(db, dir);
}
END_TEST

static int has_index(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st = NULL;
	int found;

	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master"
					    " WHERE name = ?", -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/* The lazy indexes: not written with a cached database, each added the
 * first time it is needed (and found there the next time); written at
 * once by ingest -o. */
START_TEST(test_more_cpu_index_on_demand)
{
	char *dir, path[512], out[512];
	char *files[1] = { path };
	sqlite3 *db = open_trace(&dir, launches);
	struct ta_ingest_opts o = { .no_cache = 1 };
	struct ta_error err;

	sqlite3_close(db);
	snprintf(path, sizeof(path), "%s/rank-0.json", dir);
	snprintf(out, sizeof(out), "%s/some.db", dir);
	ck_assert_int_eq(ta_ingest(files, 1, out, &o, &err), 0);
	ck_assert_int_eq(ta_db_open(out, &db, &err), 0);
	ck_assert(!has_index(db, "events_cpu"));
	ck_assert(!has_index(db, "events_thread"));
	ck_assert_int_eq(ta_db_need_index(db, TA_INDEX_HOST_TIME, &err), 0);
	ck_assert(has_index(db, "events_cpu"));
	ck_assert(!has_index(db, "events_thread"));
	ck_assert_int_eq(ta_db_need_index(db, TA_INDEX_HOST_TIME, &err), 0);
	ck_assert_int_eq(ta_db_need_index(db, TA_INDEX_THREAD, &err), 0);
	ck_assert(has_index(db, "events_thread"));
	sqlite3_close(db);
	o.lazy_indexes = ~0u;
	snprintf(out, sizeof(out), "%s/all.db", dir);
	ck_assert_int_eq(ta_ingest(files, 1, out, &o, &err), 0);
	ck_assert_int_eq(ta_db_open(out, &db, &err), 0);
	ck_assert(has_index(db, "events_cpu"));
	ck_assert(has_index(db, "events_thread"));
	close_trace(db, dir);
}
END_TEST

/* The rarer args are JSON in events.args: a collective's name with
 * quotes, a backslash and control characters comes back as written, and
 * a newline or tab takes JSON's two-byte escape, not six (\u000a). */
START_TEST(test_more_args_escapes)
{
	static const char trace[] =
		"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\","
		" \"name\": \"record_param_comms\", \"ts\": 1, \"dur\": 2,"
		" \"args\": {\"Collective name\": \"a\\nb\\tc\\\"d\\\\e\\u0001f\","
		" \"Process Group Name\": \"0\"}}]}";
	char *dir;
	sqlite3 *db = open_trace(&dir, trace);
	char *name = ta_db_text(db, "SELECT json_extract(args, '$.collective')"
				" FROM events");
	char *args = ta_db_text(db, "SELECT args FROM events");

	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name, "a\nb\tc\"d\\e\001f");
	ck_assert_ptr_nonnull(args);
	ck_assert_ptr_nonnull(strstr(args, "\"a\\nb\\tc\\\"d\\\\e\\u0001f\""));
	free(name);
	free(args);
	close_trace(db, dir);
}
END_TEST

/* Kineto's ac2g flows are not stored (the correlation gives the pair);
 * fwdbwd's are, and so is any other event of an ac2g category. The file
 * still counts every event read, and idx keeps each event's place. */
START_TEST(test_more_ac2g_not_stored)
{
	static const char trace[] =
		"{\"traceEvents\": ["
		R("cudaLaunchKernel", "cuda_runtime", 10, 5, 1) ","
		"{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 1,"
		" \"pid\": 1, \"tid\": 1, \"ts\": 10},"
		K("gemm", "kernel", 40, 10, 7, 1, "") ","
		"{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 1,"
		" \"pid\": 0, \"tid\": 7, \"ts\": 40, \"bp\": \"e\"},"
		"{\"ph\": \"t\", \"cat\": \"async_cpu_to_gpu\", \"name\": \"x\","
		" \"id\": 2, \"ts\": 41},"
		"{\"ph\": \"s\", \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"id\": 9,"
		" \"pid\": 1, \"tid\": 1, \"ts\": 11},"
		"{\"ph\": \"X\", \"cat\": \"ac2g\", \"name\": \"odd\", \"ts\": 50,"
		" \"dur\": 1}]}";
	char *dir;
	sqlite3 *db = open_trace(&dir, trace);

	ck_assert_int_eq(ta_db_int(db, "SELECT count(*) FROM events", -1), 4);
	ck_assert_int_eq(ta_db_int(db, "SELECT events FROM files", -1), 7);
	ck_assert_int_eq(ta_db_int(db, "SELECT sum(idx) FROM events", -1), 0 + 2 + 5 + 6);
	ck_assert_int_eq(ta_db_int(db, "SELECT count(*) FROM flows", -1), 1);
	ck_assert_int_eq(ta_db_int(db, "SELECT role FROM ev WHERE event_name = 'odd'", -1),
			 TA_ROLE_OTHER);
	close_trace(db, dir);
}
END_TEST

static FILE *stream_open(void *ctx)
{
	return ctx;
}

static const struct ta_col stream_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "us", TA_COL_REAL, TA_UNIT_US, 0 },
};

/* Rows of a streamed table go out as the next comes, and the table keeps
 * one: the bytes are those of the whole table written at the end. Loop
 * _i: 0 CSV, 1 JSON; and a table without a sink is whole. */
START_TEST(test_more_stream)
{
	static const char *const names[] = { "a", "b,c", "d\"e" };
	enum ta_format fmt = _i ? TA_FMT_JSON : TA_FMT_CSV;
	char *got = NULL, *want = NULL;
	size_t got_len = 0, want_len = 0, r;
	FILE *gf = open_memstream(&got, &got_len);
	FILE *wf = open_memstream(&want, &want_len);
	struct ta_stream s;
	struct ta_table *streamed, *whole;

	ta_stream_init(&s, stream_open, gf, fmt);
	whole = ta_table_new("t", stream_cols, 3);
	ta_table_final_rows(whole, NULL); /* no sink: stays whole */
	streamed = ta_table_new("t", stream_cols, 3);
	ta_table_final_rows(streamed, &s.sink);
	for (r = 0; r < 300; r++) {
		struct ta_table *t[2] = { streamed, whole };
		int k;

		for (k = 0; k < 2; k++) {
			size_t row = ta_table_add_row(t[k]);

			ta_table_set_int(t[k], row, 0, (int64_t)r);
			ta_table_set_text(t[k], row, 1, names[r % 3]);
			if (r % 7)
				ta_table_set_real(t[k], row, 2, (double)r / 8);
		}
		ck_assert_uint_le(streamed->nrows, 1);
	}
	ck_assert_uint_eq(whole->nrows, 300);
	ck_assert_int_eq(ta_stream_finish(&s, streamed), 0);
	ta_report_write(wf, whole, fmt);
	fclose(gf);
	fclose(wf);
	ck_assert_uint_eq(got_len, want_len);
	ck_assert(memcmp(got, want, got_len) == 0);
	ta_table_free(streamed);
	ta_table_free(whole);
	free(got);
	free(want);
}
END_TEST

Suite *suite_more(void)
{
	Suite *s = suite_create("more");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_more_launch);
	tcase_add_test(tc, test_more_cpu_index_on_demand);
	tcase_add_test(tc, test_more_ac2g_not_stored);
	tcase_add_test(tc, test_more_args_escapes);
	tcase_add_loop_test(tc, test_more_stream, 0, 2);
	tcase_add_test(tc, test_more_queue);
	tcase_add_test(tc, test_more_membw_residue);
	tcase_add_test(tc, test_more_annotations);
	suite_add_tcase(s, tc);
	return s;
}
