/* Suites of the unit-test runner (tests/check_main.c). */
#ifndef TA_CHECK_MAIN_H
#define TA_CHECK_MAIN_H

#include <check.h>

Suite *suite_number(void);
Suite *suite_gzread(void);
Suite *suite_parse(void);
Suite *suite_intervals(void);
Suite *suite_classify(void);
Suite *suite_analyses(void);
Suite *suite_more(void);
Suite *suite_hostile(void);
Suite *suite_errors(void);
Suite *suite_report(void);
Suite *suite_split(void);
Suite *suite_flops(void);
Suite *suite_options(void);
Suite *suite_host(void);
Suite *suite_zvfs(void);
Suite *suite_cleanup(void);

/* Writes text to a fresh temp file (gzipped if gz) and returns its path. */
char *tmp_file(const char *suffix, const char *text, size_t len, int gz);
/* A temp directory; removed (with its files) by rm_tree. */
char *tmp_dir(void);
void rm_tree(const char *dir);

#endif
