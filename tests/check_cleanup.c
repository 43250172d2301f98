/* What an interrupted run leaves: nothing, whenever the signal comes. */
#include "check_main.h"
#include "ta_cleanup.h"
#include "ta_files.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
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

/* A child that takes SIGINT as a terminal gives it (check's runner has a
 * handler of its own), its parent's registrations let go: 0 in it, its
 * pid in the parent once it is ready for the signal. */
static pid_t fork_interruptible(void)
{
	int ready[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		ta_cleanup_forked();
		signal(SIGINT, SIG_DFL);
		close(ready[0]);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		close(ready[1]);
		return 0;
	}
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
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
	for (i = 0; i < (getenv("TA_CHECK_LIGHT") ? 20 : 100); i++) {
		pid_t pid = fork_interruptible();

		if (pid == 0) {
			if (i % 2) {
				pthread_t t;

				pthread_create(&t, NULL, churn, base);
				for (;;)
					pause();
			}
			churn(base);
		}
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

/* A process forking children and reaping them until killed; each child
 * writes its pid to fd and waits (ignoring SIGTERM when deaf). */
static void forker(int fd, int deaf)
{
	for (;;) {
		void *h;
		pid_t pid = ta_cleanup_fork(&h);

		if (pid == 0) {
			pid_t me = getpid();

			if (deaf)
				signal(SIGTERM, SIG_IGN);
			if (write(fd, &me, sizeof(me)) != sizeof(me))
				_exit(1);
			for (;;)
				pause();
		}
		if (pid < 0)
			continue;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ta_cleanup_drop(h);
	}
}

/* Whether pid runs (a zombie an orphan left to PID 1 does not). */
static int alive(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int run = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		run = p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	fclose(f);
	return run;
}

/* Interrupted while forking: no child outlives its parent, whenever the
 * signal comes, even one that ignores SIGTERM (killed after a grace
 * period) or one that is stopped. */
START_TEST(test_interrupted_fork_leaves_no_child)
{
	int i, left = 0, st;

	for (i = 0; i < (getenv("TA_CHECK_LIGHT") ? 10 : 40); i++) {
		int pids[2], deaf = i % 10 == 9;
		pid_t pid, c;

		ck_assert_int_eq(pipe(pids), 0);
		pid = fork_interruptible();
		if (pid == 0) {
			close(pids[0]);
			forker(pids[1], deaf);
		}
		close(pids[1]);
		usleep(2000 + (unsigned)(i * 337) % 5000);
		kill(pid, SIGINT);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT, "status %#x", st);
		while (read(pids[0], &c, sizeof(c)) == sizeof(c))
			if (alive(c)) {
				left++;
				kill(c, SIGKILL);
			}
		close(pids[0]);
	}
	ck_assert_int_eq(left, 0);
}
END_TEST

/* A child that ignores SIGTERM (as one started with it ignored does) and
 * one that is stopped: the interrupted parent ends within its grace
 * period, and neither outlives it. */
START_TEST(test_deaf_and_stopped_children)
{
	int pids[2], st, k;
	pid_t pid, c[2];
	struct timespec t0, t1;

	ck_assert_int_eq(pipe(pids), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		ta_cleanup_forked();
		signal(SIGINT, SIG_DFL);
		for (k = 0; k < 2; k++) {
			void *h;
			pid_t me = ta_cleanup_fork(&h);

			if (me == 0) {
				me = getpid();
				signal(SIGTERM, SIG_IGN);
				if (write(pids[1], &me, sizeof(me)) != sizeof(me))
					_exit(1);
				if (k == 1)
					raise(SIGSTOP);
				for (;;)
					pause();
			}
		}
		for (;;)
			pause();
	}
	close(pids[1]);
	for (k = 0; k < 2; k++)
		ck_assert_int_eq(read(pids[0], &c[k], sizeof(c[k])), sizeof(c[k]));
	close(pids[0]);
	usleep(100000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kill(pid, SIGINT);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT, "status %#x", st);
	/* a bound a stuck handler could not meet (the grace is a second) */
	ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 10);
	for (k = 0; k < 2; k++) {
		ck_assert_msg(!alive(c[k]), "child %d lives on", k);
		kill(c[k], SIGKILL);
	}
}
END_TEST

Suite *suite_cleanup(void)
{
	Suite *s = suite_create("cleanup");
	TCase *tc = tcase_create("signals");

	tcase_set_timeout(tc, 60);
	/* not under valgrind's pass (CK_FORK=no): it delivers signals to its
	 * threads its own way, so the moments these tests aim at do not
	 * exist there (make check and the sanitizer pass run them) */
	if (!getenv("CK_FORK") || strcmp(getenv("CK_FORK"), "no") != 0) {
		tcase_add_test(tc, test_interrupted_temp_leaves_nothing);
		tcase_add_test(tc, test_interrupted_fork_leaves_no_child);
		tcase_add_test(tc, test_deaf_and_stopped_children);
	}
	suite_add_tcase(s, tc);
	return s;
}
