/* Opening the user's files safely (ta_files.h). */
#include "ta_files.h"
#include "ta_cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
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

int ta_errno_exit(int e)
{
	/* the machine's limits and faults, not the file's: never a file to
	 * skip, always a system error */
	return e == EMFILE || e == ENFILE || e == ENOMEM || e == EIO || e == ENOBUFS ||
	       e == ENOSPC || e == EDQUOT ? TA_EXIT_SYSTEM : TA_EXIT_INPUT;
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
		ta_error_set(err, ta_errno_exit(errno), "%s'%s': %s", what, path,
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

static mode_t current_umask(void)
{
	mode_t m = umask(022);

	umask(m);
	return m;
}

size_t ta_temp_base_len(const char *name)
{
	size_t n = strlen(name);

	return n > 11 && memcmp(name + n - 11, ".tmp.", 5) == 0 ? n - 11 : n;
}

int ta_temp_create(const char *path, char **tmp, void **doomed,
		   struct ta_error *err)
{
	for (;;) {
		struct stat a, b;
		char *name = ta_xmalloc(strlen(path) + 16);
		void *handle = NULL;
		int fd;

		sprintf(name, "%s.tmp.XXXXXX", path);
		fd = doomed ? ta_cleanup_mkstemp(name, &handle) : mkstemp(name);
		if (fd < 0) {
			ta_error_set(err, TA_EXIT_SYSTEM, "cannot create '%s': %s",
				     name, strerror(errno));
			free(name);
			return -1;
		}
		/* mkstemp makes it private; a cache is shared like any file */
		fchmod(fd, 0666 & ~current_umask());
		/* a cleaner may have taken the name between mkstemp and flock:
		 * then the name is no longer this file; take another */
		if (flock(fd, LOCK_EX) == 0 && fstat(fd, &a) == 0 &&
		    stat(name, &b) == 0 && ta_same_file(&a, &b)) {
			*tmp = name;
			if (doomed)
				*doomed = handle;
			return fd;
		}
		ta_cleanup_drop(handle);
		close(fd);
		free(name);
	}
}

void ta_temp_clean(const char *dir, const char *prefix, const char *match)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t plen = strlen(prefix);
	time_t now = time(NULL);

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		char full[PATH_MAX];
		struct stat sb;
		int fd;

		if (strncmp(de->d_name, prefix, plen) != 0 ||
		    !strstr(de->d_name + plen, match))
			continue;
		snprintf(full, sizeof(full), "%s/%s", dir, de->d_name);
		/* a minute: a live writer between creating its file and
		 * locking it, or renaming it and opening it, is never caught */
		if (lstat(full, &sb) < 0 || !S_ISREG(sb.st_mode) ||
		    now - sb.st_mtime < 60)
			continue;
		fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlink(full);
		close(fd);
	}
	closedir(d);
}

const char *ta_tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}
