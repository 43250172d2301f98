/* The gzip reader: plain and gzip files, and truncation. */
#include "check_main.h"
#include "../src/parse/gzread.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* both ways of reading: on a decompression thread, and inline */
static char *read_all(const char *path, int threaded, long *total,
		      int *damaged)
{
	struct ta_error err;
	struct ta_gzr *r = ta_gzr_open(path, threaded, &err);
	char *out = NULL;
	const char *chunk;
	long n;

	ck_assert_ptr_nonnull(r);
	*total = 0;
	*damaged = 0;
	while ((n = ta_gzr_read(r, &chunk)) != 0) {
		if (n < 0) {
			*damaged = 1;
			break;
		}
		out = realloc(out, (size_t)(*total + n));
		memcpy(out + *total, chunk, (size_t)n);
		*total += n;
	}
	ta_gzr_close(r);
	return out;
}

static char *big_text(size_t n)
{
	char *s = malloc(n);
	size_t i;

	srand(1);
	for (i = 0; i < n; i++)
		s[i] = (char)('a' + rand() % 26);
	return s;
}

START_TEST(test_gzread_roundtrip)
{
	size_t n = 3 * TA_GZ_CHUNK + 17;
	char *text = big_text(n);
	char *gz = tmp_file(".gz", text, n, 1), *plain = tmp_file(".json", text, n, 0);
	long total;
	int damaged;
	char *got = read_all(gz, _i, &total, &damaged);

	ck_assert_int_eq(total, (long)n);
	ck_assert_int_eq(damaged, 0);
	ck_assert(memcmp(got, text, n) == 0);
	free(got);
	got = read_all(plain, _i, &total, &damaged);
	ck_assert_int_eq(total, (long)n);
	ck_assert(memcmp(got, text, n) == 0);
	unlink(gz);
	unlink(plain);
	free(got), free(gz), free(plain), free(text);
}
END_TEST

START_TEST(test_gzread_truncated)
{
	size_t n = 2 * TA_GZ_CHUNK;
	char *text = big_text(n);
	char *gz = tmp_file(".gz", text, n, 1);
	long total;
	int damaged;
	char *got;

	/* cut the compressed file in half */
	FILE *f = fopen(gz, "r+");
	fseek(f, 0, SEEK_END);
	ck_assert_int_eq(ftruncate(fileno(f), ftell(f) / 2), 0);
	fclose(f);
	got = read_all(gz, _i, &total, &damaged);
	ck_assert_int_eq(damaged, 1);
	ck_assert_int_lt(total, (long)n);
	ck_assert(total == 0 || memcmp(got, text, (size_t)total) == 0);
	unlink(gz);
	free(got), free(gz), free(text);
}
END_TEST

Suite *suite_gzread(void)
{
	Suite *s = suite_create("gzread");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_gzread_roundtrip, 0, 2);
	tcase_add_loop_test(tc, test_gzread_truncated, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
