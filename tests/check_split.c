/* One file parsed by two threads (src/parse/split.c) makes the database
 * one thread makes, row for row and rowid for rowid: on every captured
 * trace, HTA's test traces, and documents made to mislead the cutting
 * (candidates inside strings and nested values, no candidates, one
 * element longer than the lanes look ahead, damage, the array form). The
 * pieces are made tiny so that every trace is cut hundreds of times. */
#include "check_main.h"
#include "../src/parse/parse_int.h"
#include "ta_db.h"
#include "ta_ingest.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK,
		      "%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Rows of a table in one database and not the other, either way. */
static int64_t differ(sqlite3 *db, const char *table)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "SELECT (SELECT count(*) FROM (SELECT rowid, * FROM main.%s"
		 " EXCEPT SELECT rowid, * FROM b.%s)) + (SELECT count(*) FROM"
		 " (SELECT rowid, * FROM b.%s EXCEPT SELECT rowid, * FROM main.%s))",
		 table, table, table, table);
	return query_int(db, sql);
}

static int ingest(const char *trace, const char *out, int jobs,
		  struct ta_error *err)
{
	char *files[1] = { (char *)trace };
	struct ta_ingest_opts o = { .no_cache = 1, .jobs = jobs };

	unlink(out);
	return ta_ingest(files, 1, out, &o, err);
}

/* The trace in sequence and on two lanes with pieces of `chunk` bytes:
 * the same outcome, and the same database. */
static void same(const char *trace, size_t chunk)
{
	char a[] = "/tmp/ta-split-a-XXXXXX", b[] = "/tmp/ta-split-b-XXXXXX";
	struct ta_error ea = { 0 }, eb = { 0 };
	int fa = mkstemp(a), fb = mkstemp(b), ra, rb;
	size_t old_chunk = ta_split_chunk;
	int64_t old_min = ta_split_min;
	sqlite3 *db;
	char attach[128];
	static const char *const tables[] = { "events", "meta", "names", "info" };
	size_t i;

	close(fa);
	close(fb);
	ra = ingest(trace, a, 1, &ea);
	ta_split_chunk = chunk;
	ta_split_min = 0;
	rb = ingest(trace, b, 2, &eb);
	ta_split_chunk = old_chunk;
	ta_split_min = old_min;
	ck_assert_msg(ra == rb, "%s (%zu): %d vs %d (%s / %s)", trace, chunk,
		      ra, rb, ea.msg, eb.msg);
	if (ra < 0) {
		ck_assert_str_eq(ea.msg, eb.msg);
		goto out;
	}
	ck_assert_int_eq(sqlite3_open(a, &db), SQLITE_OK);
	snprintf(attach, sizeof(attach), "ATTACH '%s' AS b", b);
	ck_assert_int_eq(sqlite3_exec(db, attach, NULL, NULL, NULL), SQLITE_OK);
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		ck_assert_msg(differ(db, tables[i]) == 0, "%s (%zu): %s differ",
			      trace, chunk, tables[i]);
	/* json_bytes: the chunk in which damage was found is read whole,
	 * and the chunks differ */
	ck_assert_msg(query_int(db, "SELECT count(*) FROM (SELECT rank, path,"
				" events, truncated, damage, hta_rounded, bad_times,"
				" min_ts_ns, max_ts_ns, CASE WHEN truncated THEN 0"
				" ELSE json_bytes END FROM main.files EXCEPT SELECT"
				" rank, path, events, truncated, damage, hta_rounded,"
				" bad_times, min_ts_ns, max_ts_ns, CASE WHEN truncated"
				" THEN 0 ELSE json_bytes END FROM b.files)") == 0,
		      "%s (%zu): files differ", trace, chunk);
	sqlite3_close(db);
out:
	unlink(a);
	unlink(b);
}

/* Every *.json / *.json.gz under dir (one level of subdirectories). */
static int each_trace(const char *dir, size_t chunk, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char path[1024];
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if ((len > 5 && strcmp(de->d_name + len - 5, ".json") == 0) ||
		    (len > 8 && strcmp(de->d_name + len - 8, ".json.gz") == 0)) {
			same(path, chunk);
			n++;
		} else if (depth > 0) {
			n += each_trace(path, chunk, depth - 1);
		}
	}
	closedir(d);
	return n;
}

/* Under valgrind (make valgrind sets TA_CHECK_LIGHT) one capture only:
 * each costs seconds there */
START_TEST(test_split_captured)
{
	each_trace("testdata/two_ranks", 512, 0);
	if (getenv("TA_CHECK_LIGHT"))
		return;
	/* ours: every capture, in pieces of 4 KB and 512 bytes */
	ck_assert_int_gt(each_trace("testdata", 4096, 1), 20);
	each_trace("testdata/train_stalled", 512, 0);
}
END_TEST

START_TEST(test_split_hta)
{
	/* CI has ../shared (TA_REQUIRE_SHARED); a checkout alone may not,
	 * and then says it skipped */
	if (getenv("TA_CHECK_LIGHT"))
		return;
	if (access("../shared/testdata/hta", R_OK) != 0) {
		ck_assert_msg(!getenv("TA_REQUIRE_SHARED"), "../shared/testdata/hta is missing");
		fprintf(stderr, "check_split: HTA's traces skipped: ../shared not found\n");
		return;
	}
	ck_assert_int_gt(each_trace("../shared/testdata/hta", 4096, 2), 5);
}
END_TEST

static const char ev[] =
	"  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op%d\","
	" \"pid\": 1, \"tid\": 2,\n    \"ts\": %d, \"dur\": 3,\n"
	"    \"args\": {\"External id\": %d%s}\n  }";

/* A document of n events, each with extra args text x, then tail. */
static char *doc(int n, const char *head, const char *x, const char *tail,
		 size_t *len)
{
	struct ta_buf b = { 0 };
	int i;

	ta_buf_adds(&b, head);
	for (i = 0; i < n; i++) {
		/* names come back: a lane meets some first in a piece that
		 * turns out void, then again */
		ta_buf_addf(&b, ev, i * 7 % 23, 1000 + i * 5, i, x);
		ta_buf_adds(&b, i + 1 < n ? ",\n" : "\n");
	}
	ta_buf_adds(&b, tail);
	*len = b.len;
	return b.s;
}

static void same_doc(const char *text, size_t len, int gz)
{
	static const size_t chunks[] = { 64, 200, 1024 };
	char *path = tmp_file(gz ? ".json.gz" : ".json", text, len, gz);
	size_t i;

	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
		same(path, chunks[i]);
	unlink(path);
	free(path);
}

/* doc() then same_doc() */
static void same_made(int n, const char *head, const char *x, const char *tail,
		      int gz)
{
	size_t len;
	char *t = doc(n, head, x, tail, &len);

	same_doc(t, len, gz);
	free(t);
}

#define HEAD "{\"schemaVersion\": 1,\n\"traceEvents\": [\n"
#define TAIL "],\n\"distributedInfo\": {\"rank\": 3},\n\"traceName\": \"x\"}\n"

/* Candidates where no element starts: in strings, in nested values */
START_TEST(test_split_misleading)
{
	static const char *const extras[] = {
		"",
		", \"s\": \"}, {\"",
		", \"list\": [{\"a\": 1},\n {\"b\": 2},\n {\"c\": [3]}]",
		", \"deep\": {\"x\": {\"y\": 1},\n \"z\": [{}, {}]}",
		", \"esc\": \"\\\"}, {\\\\\"",
	};
	size_t i;

	for (i = 0; i < sizeof(extras) / sizeof(extras[0]); i++)
		same_made(300, HEAD, extras[i], TAIL, (int)(i % 2));
}
END_TEST

/* Forms: the bare array, minified, metadata around the events, a byte
 * order mark, no events, nothing after the array */
START_TEST(test_split_forms)
{
	same_made(300, "[\n", "", "]\n", 0);
	same_made(300, "\xEF\xBB\xBF" HEAD, "", TAIL, 1);
	same_made(0, HEAD, "", TAIL, 0);
	same_doc("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":2},{\"ph\":\"X\","
		 "\"ts\":3},{\"ph\":\"i\",\"ts\":4}],\"x\":[{},{}]}", 90, 0);
	same_made(300, "{\"deviceProperties\": [{\"id\": 0},\n {\"id\": 1}],"
		"\n\"traceEvents\": [\n", "", "]}", 1);
}
END_TEST

/* Events before traceEvents, under another key: pieces started there
 * read them as events, names and all, and are void; their lanes meet
 * those names again in pieces that are not */
START_TEST(test_split_decoy)
{
	struct ta_buf b = { 0 };
	size_t n;
	char *head = doc(30, "{\"otherEvents\": [\n", "",
			 "],\n\"traceEvents\": [\n", &n);
	char *events = doc(300, "", "", "", &n);

	ta_buf_adds(&b, head);
	ta_buf_adds(&b, events);
	ta_buf_adds(&b, TAIL);
	same_doc(b.s, b.len, 0);
	ta_buf_free(&b);
	free(head);
	free(events);
}
END_TEST

/* Damage: cut short anywhere, garbage in the middle, a second
 * traceEvents, elements that are not objects */
START_TEST(test_split_damage)
{
	size_t len, cut;
	char *t = doc(300, HEAD, "", TAIL, &len);

	for (cut = len / 7; cut < len; cut += len / 5)
		same_doc(t, cut, cut % 2);
	memcpy(t + len / 2, "}}}}", 4);
	same_doc(t, len, 0);
	free(t);
	same_made(300, HEAD, "", "], \"traceEvents\": [{\"ph\": \"X\"}]}", 1);
	same_made(300, "[1, \"a\", [2, {\"b\": 3}],\n", "", "]", 0);
}
END_TEST

/* An element longer than the lanes look ahead: parsed again in sequence */
START_TEST(test_split_long_element)
{
	struct ta_buf x = { 0 };
	int i;

	ta_buf_adds(&x, ", \"stack\": [");
	for (i = 0; i < 2000; i++)
		ta_buf_addf(&x, "%s\"frame %d\"", i ? ", " : "", i);
	ta_buf_adds(&x, "]");
	same_made(20, HEAD, x.s, TAIL, 1);
	ta_buf_free(&x);
}
END_TEST

Suite *suite_split(void)
{
	Suite *s = suite_create("split");
	TCase *tc = tcase_create("split");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_split_misleading);
	tcase_add_test(tc, test_split_forms);
	tcase_add_test(tc, test_split_decoy);
	tcase_add_test(tc, test_split_damage);
	tcase_add_test(tc, test_split_long_element);
	tcase_add_test(tc, test_split_captured);
	tcase_add_test(tc, test_split_hta);
	suite_add_tcase(s, tc);
	return s;
}
