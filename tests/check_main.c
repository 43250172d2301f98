/* Runs every unit-test suite. */
#include "check_main.h"
#include "ta.h"
#include "ta_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

char *tmp_file(const char *suffix, const char *text, size_t len, int gz)
{
	char *path = malloc(256);
	int fd;

	snprintf(path, 256, "/tmp/ta-test-XXXXXX%s", suffix);
	fd = mkstemps(path, (int)strlen(suffix));
	ck_assert_int_ge(fd, 0);
	if (gz) {
		gzFile g = gzdopen(fd, "wb");

		ck_assert_int_eq(gzwrite(g, text, (unsigned)len), (int)len);
		gzclose(g);
	} else {
		ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
		close(fd);
	}
	return path;
}

char *tmp_dir(void)
{
	char *path = strdup("/tmp/ta-test-dir-XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(path));
	return path;
}

void rm_tree(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

int main(void)
{
	SRunner *sr = srunner_create(suite_number());
	int failed;

	ta_quiet = 1; /* expected warnings would clutter the report */
	ta_db_global_init(); /* SQLite set up as main() does: ta_sum() */

	srunner_add_suite(sr, suite_gzread());
	srunner_add_suite(sr, suite_parse());
	srunner_add_suite(sr, suite_intervals());
	srunner_add_suite(sr, suite_classify());
	srunner_add_suite(sr, suite_analyses());
	srunner_add_suite(sr, suite_more());
	srunner_add_suite(sr, suite_hostile());
	srunner_add_suite(sr, suite_errors());
	srunner_add_suite(sr, suite_report());
	srunner_add_suite(sr, suite_split());
	srunner_add_suite(sr, suite_flops());
	srunner_add_suite(sr, suite_options());
	srunner_add_suite(sr, suite_host());
	srunner_add_suite(sr, suite_zvfs());
	srunner_add_suite(sr, suite_cleanup());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
