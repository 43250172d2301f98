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

/* Whether a and b are the same file (device and inode). */
int ta_same_file(const struct stat *a, const struct stat *b);

#endif
