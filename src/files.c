/* Opening the user's files safely (ta_files.h). */
#include "ta_files.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

const char *ta_file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return S_ISREG(mode) ? "a regular file" : "not a regular file";
}

int ta_open_read(const char *path, const char *what, struct ta_error *err)
{
	struct stat sb;
	int fd, flags;

	if (strcmp(path, "-") == 0) {
		fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			ta_error_set(err, TA_EXIT_INPUT, "%sstandard input: %s",
				     what, strerror(errno));
		return fd;
	}
	/* O_NONBLOCK: opening a FIFO without a writer would wait forever */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ta_error_set(err, TA_EXIT_INPUT, "%s'%s': %s", what, path,
			     strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) < 0) {
		ta_error_set(err, TA_EXIT_INPUT, "%s'%s': %s", what, path,
			     strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		ta_error_set(err, TA_EXIT_INPUT, "%s'%s': %s, not a regular file",
			     what, path, ta_file_kind(sb.st_mode));
		close(fd);
		return -1;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

int ta_same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}
