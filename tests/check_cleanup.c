/* What an interrupted run leaves: nothing, whenever the signal comes. */
#include "check_main.h"
#include "ta_cleanup.h"
#include "ta_files.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Makes and removes temporary files beside base until killed: most of
 * its time is spent where a file exists, so a signal often lands
 * between a file being made and being registered. */
static void *churn(void *base)
{
	for (;;) {
		char *tmp;
		void *doomed;
		int fd = ta_temp_create(base, &tmp, &doomed, NULL);

		if (fd < 0)
			continue;
		unlink(tmp);
		ta_cleanup_drop(doomed);
		close(fd);
		free(tmp);
	}
	return NULL;
}

static int count_and_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[512];
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
			n++;
		}
	closedir(d);
	return n;
}

/* Interrupted at a hundred moments, on the thread that makes the files
 * (_i even) or while another thread makes them (odd). */
START_TEST(test_interrupted_temp_leaves_nothing)
{
	char *dir = tmp_dir(), base[300];
	int i, left = 0, st;

	snprintf(base, sizeof(base), "%s/x.db", dir);
	for (i = 0; i < 100; i++) {
		int ready[2];
		pid_t pid;
		char c;

		ck_assert_int_eq(pipe(ready), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			/* SIGINT as a terminal gives it (check's runner has a
			 * handler of its own), then the parent may send it */
			ta_cleanup_forked();
			signal(SIGINT, SIG_DFL);
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			if (i % 2) {
				pthread_t t;

				pthread_create(&t, NULL, churn, base);
				for (;;)
					pause();
			}
			churn(base);
		}
		close(ready[1]);
		ck_assert_int_eq(read(ready[0], &c, 1), 1);
		close(ready[0]);
		usleep(300 + (unsigned)(i * 211) % 3000);
		kill(pid, SIGINT);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT,
			      "status %#x", st);
		left += count_and_empty(dir);
	}
	ck_assert_int_eq(left, 0);
	rm_tree(dir);
	free(dir);
}
END_TEST

Suite *suite_cleanup(void)
{
	Suite *s = suite_create("cleanup");
	TCase *tc = tcase_create("signals");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_interrupted_temp_leaves_nothing);
	suite_add_tcase(s, tc);
	return s;
}
