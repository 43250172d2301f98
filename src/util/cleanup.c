/* Leftovers of an interrupted run (ta_cleanup.h). The handler may run at
 * any moment, also while an entry is added: entries are made whole before
 * they are linked at the head, and never unlinked or freed (dropping one
 * clears it), so the handler always walks a valid list, newest first:
 * children, then files, then the directories that held them. */
#include "ta_cleanup.h"
#include "ta.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct entry {
	char *path;          /* NULL once dropped or a child */
	pid_t pid;           /* 0 once dropped or a path */
	char *owned;         /* the path's string, kept (see drop) */
	struct entry *next;
};

static struct entry *volatile head;
static struct entry *parents;  /* a forked child's: kept, not acted on */
/* Threads between making a temporary path and linking its entry
 * (ta_cleanup_mkstemp), and whether the handler has begun: the handler
 * waits for the first to be none, and a thread that sees the second
 * makes nothing more. */
static int creating;
static int dying;

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

/* Waits for the children told to end: GRACE_MS for all of them
 * together, then kills those left. */
#define GRACE_MS 1000

static void reap_all(void)
{
	struct timespec tick = { 0, 10000000 };
	struct entry *e;
	int waited, left = 1;
	pid_t pid;

	for (waited = 0; left && waited <= GRACE_MS; waited += 10) {
		left = 0;
		for (e = head; e; e = e->next)
			if ((pid = __atomic_load_n(&e->pid, __ATOMIC_SEQ_CST)) > 0) {
				pid_t r = waitpid(pid, NULL, WNOHANG);

				if (r == pid || (r < 0 && errno != EINTR))
					__atomic_store_n(&e->pid, 0, __ATOMIC_SEQ_CST);
				else
					left = 1;
			}
		if (left)
			nanosleep(&tick, NULL);
	}
	for (e = head; e; e = e->next)
		if ((pid = __atomic_load_n(&e->pid, __ATOMIC_SEQ_CST)) > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
}

static void on_signal(int sig)
{
	struct entry *e;
	int saved = errno;   /* the signal is delivered when we return */
	struct timespec pause_ = { 0, 100000 };
	const char *path;
	pid_t pid;

	/* a path being made on another thread is linked before we walk
	 * (that thread blocks these signals, so it is not this one) */
	__atomic_store_n(&dying, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&creating, __ATOMIC_SEQ_CST) > 0)
		nanosleep(&pause_, NULL);

	/* each field read once: another thread may drop the entry meanwhile;
	 * a child stopped wakes to end, and one that ignores SIGTERM (it was
	 * ignored when we started) is killed after a grace period */
	for (e = head; e; e = e->next)
		if ((pid = __atomic_load_n(&e->pid, __ATOMIC_SEQ_CST)) > 0) {
			kill(pid, SIGTERM);
			kill(pid, SIGCONT);
		}
	reap_all();
	for (e = head; e; e = e->next)
		if ((path = __atomic_load_n(&e->path, __ATOMIC_SEQ_CST))) {
			unlink_side_files(path);
			if (unlink(path) < 0)
				rmdir(path);
		}
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

static void install_once(void)
{
	size_t i;

	/* one ignored when we started (nohup, a background job) stays so */
	for (i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		if (signal(fatal_signals[i], on_signal) == SIG_IGN)
			signal(fatal_signals[i], SIG_IGN);
}

/* Threads may register their first paths at once: none goes on before
 * the handler is in place. */
static void install(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install_once);
}

/* Links a whole entry at the head; threads may link at once. */
static void link_entry(struct entry *e)
{
	e->next = __atomic_load_n(&head, __ATOMIC_SEQ_CST);
	while (!__atomic_compare_exchange_n(&head, &e->next, e, 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

static void *add(char *path)
{
	struct entry *e = ta_xcalloc(1, sizeof(*e));

	e->path = e->owned = path;
	install();
	link_entry(e);
	return e;
}

enum made { MADE_FILE, MADE_DIR, MADE_CHILD };

/* mkstemp or mkdtemp on name, or a fork, and its entry linked, with no
 * moment between where a fatal signal would leave the path behind or the
 * child running: the signals are blocked on this thread meanwhile, and
 * the handler on another one waits for the link. Nothing in between
 * allocates (the handler may have stopped its thread inside malloc).
 * *out: the fd, or the pid (0 in the child, which gets NULL back). */
static void *make_linked(char *name, enum made what, int *out)
{
	struct entry *e = ta_xcalloc(1, sizeof(*e));
	char *copy = name ? ta_xmalloc(strlen(name) + 1) : NULL;
	sigset_t fatal, old;
	size_t i;
	int ok, saved;
	pid_t pid = -1;

	install();
	sigemptyset(&fatal);
	for (i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaddset(&fatal, fatal_signals[i]);
	pthread_sigmask(SIG_BLOCK, &fatal, &old);
	__atomic_add_fetch(&creating, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&dying, __ATOMIC_SEQ_CST)) {
		/* the process ends on the handler's thread: make nothing */
		__atomic_sub_fetch(&creating, 1, __ATOMIC_SEQ_CST);
		for (;;)
			pause();
	}
	if (what == MADE_DIR)
		ok = mkdtemp(name) != NULL;
	else if (what == MADE_FILE)
		ok = (*out = mkstemp(name)) >= 0;
	else
		ok = (*out = pid = fork()) > 0;
	saved = errno;
	if (pid == 0) {   /* the child: its parent's paths are not its own */
		ta_cleanup_forked();
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		free(e);
		return NULL;
	}
	if (ok) {
		if (what == MADE_CHILD) {
			e->pid = pid;
		} else {
			strcpy(copy, name);
			e->path = e->owned = copy;
		}
		link_entry(e);
	}
	__atomic_sub_fetch(&creating, 1, __ATOMIC_SEQ_CST);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ok) {
		free(copy);
		free(e);
		errno = saved;
		return NULL;
	}
	return e;
}

pid_t ta_cleanup_fork(void **handle)
{
	int pid = -1;

	*handle = make_linked(NULL, MADE_CHILD, &pid);
	return pid;
}

int ta_cleanup_mkstemp(char *name, void **handle)
{
	int fd = -1;

	*handle = make_linked(name, MADE_FILE, &fd);
	return *handle ? fd : -1;
}

char *ta_cleanup_mkdtemp(char *name, void **handle)
{
	*handle = make_linked(name, MADE_DIR, NULL);
	return *handle ? name : NULL;
}

void *ta_cleanup_path(const char *path)
{
	return add(ta_xstrdup(path));
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
	/* the threads that were making paths are not in this process */
	__atomic_store_n(&creating, 0, __ATOMIC_SEQ_CST);
	parents = head;
	__atomic_store_n(&head, NULL, __ATOMIC_SEQ_CST);
}
