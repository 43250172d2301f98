/* What a run that is interrupted (SIGINT, SIGTERM, ...) leaves behind:
 * nothing. Temporary files and directories it made are removed, and the
 * child processes it started are stopped and waited for first, so that
 * none of them goes on writing or burning CPU after their parent is gone.
 * SIGKILL cannot be caught: ta_temp_clean removes such leftovers later. */
#ifndef TA_CLEANUP_H
#define TA_CLEANUP_H

#include <sys/types.h>

/* Removes path (a file, or an empty directory) if a fatal signal comes;
 * register a directory before the files in it. Returns a handle. */
void *ta_cleanup_path(const char *path);
/* mkstemp(name) or mkdtemp(name) with the path made registered as
 * ta_cleanup_path's, in one step: a signal cannot come between and leave
 * it. *handle is for ta_cleanup_drop (NULL on failure, errno set). */
int ta_cleanup_mkstemp(char *name, void **handle);
char *ta_cleanup_mkdtemp(char *name, void **handle);
/* fork() with the child registered in the same step (a signal in between
 * left it running): if a fatal signal comes, it is sent SIGTERM (and
 * SIGCONT), waited for a second, then killed. In the child, 0, its
 * parent's paths and children already let go (ta_cleanup_forked); -1:
 * errno. */
pid_t ta_cleanup_fork(void **handle);
/* The path or child is dealt with: the signal leaves it alone. */
void ta_cleanup_drop(void *handle);
/* Drops dir and every path under it. */
void ta_cleanup_drop_under(const char *dir);
/* In a child just forked: its parent's paths and children are not its
 * own to remove or stop. */
void ta_cleanup_forked(void);

#endif
