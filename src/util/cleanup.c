/* Leftovers of an interrupted run (ta_cleanup.h). The handler may run at
 * any moment, also while an entry is added: entries are made whole before
 * they are linked at the head, and never unlinked or freed (dropping one
 * clears it), so the handler always walks a valid list, newest first:
 * children, then files, then the directories that held them. */
#include "ta_cleanup.h"
#include "ta.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct entry {
	char *path;          /* NULL once dropped or a child */
	pid_t pid;           /* 0 once dropped or a path */
	char *owned;         /* the path's string, kept (see drop) */
	struct entry *next;
};

static struct entry *volatile head;
static struct entry *parents;  /* a forked child's: kept, not acted on */
static volatile sig_atomic_t installed;

/* Signals that end the process by default. */
static const int fatal_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU,
	SIGVTALRM, SIGPROF
};

/* A database's side files SQLite may have made (a child killed in a
 * transaction leaves its journal, and the directory then cannot go):
 * path with each suffix, built without a non-reentrant call. */
static void unlink_side_files(const char *path)
{
	static const char *const suffix[] = { "-journal", "-wal", "-shm" };
	static char buf[4096];
	size_t n = 0, i, k;

	while (path[n] && n < sizeof(buf) - 16)
		n++;
	if (path[n])
		return;
	for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		for (k = 0; k < n; k++)
			buf[k] = path[k];
		for (k = 0; suffix[i][k]; k++)
			buf[n + k] = suffix[i][k];
		buf[n + k] = '\0';
		unlink(buf);
	}
}

static void on_signal(int sig)
{
	struct entry *e;
	int saved = errno;   /* the signal is delivered when we return */

	for (e = head; e; e = e->next)
		if (e->pid > 0)
			kill(e->pid, SIGTERM);
	for (e = head; e; e = e->next)
		if (e->pid > 0)
			waitpid(e->pid, NULL, 0);
	for (e = head; e; e = e->next)
		if (e->path) {
			unlink_side_files(e->path);
			if (unlink(e->path) < 0)
				rmdir(e->path);
		}
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

static void *add(char *path, pid_t pid)
{
	struct entry *e = ta_xcalloc(1, sizeof(*e));
	size_t i;

	e->path = e->owned = path;
	e->pid = pid;
	if (!installed) {
		installed = 1;
		/* one ignored when we started (nohup, a background job) stays so */
		for (i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
			if (signal(fatal_signals[i], on_signal) == SIG_IGN)
				signal(fatal_signals[i], SIG_IGN);
	}
	e->next = head;
	__atomic_store_n(&head, e, __ATOMIC_SEQ_CST);
	return e;
}

void *ta_cleanup_path(const char *path)
{
	return add(ta_xstrdup(path), 0);
}

void *ta_cleanup_child(pid_t pid)
{
	return add(NULL, pid);
}

void ta_cleanup_drop(void *handle)
{
	struct entry *e = handle;

	if (!e)
		return;
	__atomic_store_n(&e->pid, 0, __ATOMIC_SEQ_CST);
	/* the string stays (owned): the handler may be reading it */
	__atomic_store_n(&e->path, NULL, __ATOMIC_SEQ_CST);
}

void ta_cleanup_drop_under(const char *dir)
{
	size_t n = strlen(dir);
	struct entry *e;

	for (e = head; e; e = e->next)
		if (e->path && strncmp(e->path, dir, n) == 0 &&
		    (e->path[n] == '\0' || e->path[n] == '/'))
			ta_cleanup_drop(e);
}

void ta_cleanup_forked(void)
{
	parents = head;
	__atomic_store_n(&head, NULL, __ATOMIC_SEQ_CST);
}
