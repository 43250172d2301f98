/* Opening the user's files safely: never block on a FIFO, never write
 * over an input, never replace what is not a regular file. */
#ifndef TA_FILES_H
#define TA_FILES_H

#include <sys/stat.h>

#include "ta.h"

/* "a FIFO", "a directory", ... for a mode that is not a regular file. */
const char *ta_file_kind(mode_t mode);

/* Opens path for reading: a regular file, or "-" (standard input, any
 * kind, on purpose). A FIFO, socket, device or directory is an error
 * naming it (exit 3), found without blocking. Returns an fd or -1. */
int ta_open_read(const char *path, const char *what, struct ta_error *err);
/* The exit status for a failed system call's errno: 4 for the machine's
 * limits and faults (too many open files, no memory, I/O), 3 otherwise. */
int ta_errno_exit(int e);

/* Whether a and b are the same file (device and inode). */
int ta_same_file(const struct stat *a, const struct stat *b);

/* A unique temp name beside path (path.tmp.XXXXXX, unique across PID
 * namespaces too), held with an flock while the caller writes it, so that
 * ta_temp_clean can tell a dead writer's file from a live one. Returns
 * the fd (closing it releases the file), the name in *tmp (malloc'd).
 * With doomed, a fatal signal removes it (ta_cleanup_path's handle in
 * *doomed, registered as it is made: no moment leaves it behind). */
int ta_temp_create(const char *path, char **tmp, void **doomed,
		   struct ta_error *err);
/* How much of name is the file it will become: name less a temporary
 * name's ".tmp.XXXXXX" (ta_temp_create's), for messages. */
size_t ta_temp_base_len(const char *name);

/* Removes the leftovers of killed writers in dir: regular files whose
 * name starts with prefix and contains match, unmodified for a minute,
 * that no process holds. */
void ta_temp_clean(const char *dir, const char *prefix, const char *match);

/* Where scratch files go: $TMPDIR, or /tmp when it is unset or empty. */
const char *ta_tmpdir(void);

#endif
