/* The cache of parsed traces: names, sources, staleness, a size cap
 * (ta_cache.h). */
#include "ta_cache.h"
#include "ta.h"
#include "ta_db.h"
#include "ta_ingest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_MAX ((int64_t)2 << 30)

int ta_cache_dir(char *buf, size_t len)
{
	const char *env = getenv("TRACEANALYZE_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (xdg && *xdg)
		n = snprintf(buf, len, "%s/traceanalyze", xdg);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.cache/traceanalyze", home);
	else
		return -1;
	return n < 0 || (size_t)n >= len ? -2 : 0;
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static void absolute(const char *file, char *abs, size_t len)
{
	char buf[PATH_MAX];

	if (realpath(file, buf))
		snprintf(abs, len, "%s", buf);
	else
		snprintf(abs, len, "%s", file);
}

/* The rank a file's name gives it (-1: none), as the parser takes it
 * where the trace names none: a link named rank-5 to rank 0's file is
 * rank 5, not the entry of its target. */
static void name_rank(const char *file, char *buf, size_t len)
{
	snprintf(buf, len, "%lld", (long long)ta_rank_from_filename(file));
}

uint64_t ta_cache_paths_key(char **files, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	char abs[PATH_MAX], rank[32];
	size_t i;

	for (i = 0; i < n; i++) {
		absolute(files[i], abs, sizeof(abs));
		name_rank(files[i], rank, sizeof(rank));
		h = fnv(fnv(fnv(fnv(h, abs), "|"), rank), "\n");
	}
	return h;
}

/* Every file's absolute path, the rank its name gives, device, inode,
 * size, mtime and ctime (a file rewritten to the same size and touched
 * back to its old mtime still has a new ctime), and the schema and
 * version. */
uint64_t ta_cache_content_key(char **files, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < n; i++) {
		char abs[PATH_MAX], line[PATH_MAX + 256], rank[32];
		struct stat sb;

		absolute(files[i], abs, sizeof(abs));
		name_rank(files[i], rank, sizeof(rank));
		memset(&sb, 0, sizeof(sb));
		stat(files[i], &sb);
		snprintf(line, sizeof(line), "%s|%s|%llu|%llu|%lld|%lld.%09ld|%lld.%09ld"
			 "|%d|%s\n", abs, rank, (unsigned long long)sb.st_dev,
			 (unsigned long long)sb.st_ino, (long long)sb.st_size,
			 (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec,
			 (long long)sb.st_ctim.tv_sec, sb.st_ctim.tv_nsec,
			 TA_SCHEMA_VERSION, TA_VERSION);
		h = fnv(h, line);
	}
	return h;
}

int ta_cache_packs(void)
{
	const char *env = getenv("TRACEANALYZE_CACHE_COMPRESS");

	/* the words a user may mean "off" with, not only 0 */
	return !env || (strcmp(env, "0") != 0 && strcasecmp(env, "no") != 0 &&
			strcasecmp(env, "off") != 0 && strcasecmp(env, "false") != 0);
}

int64_t ta_cache_max(void)
{
	const char *env = getenv("TRACEANALYZE_CACHE_MAX");
	char *end;
	double v;

	if (!env || !*env)
		return DEFAULT_MAX;
	v = ta_strtod(env, &end);
	if (end == env || v < 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': v *= 1024, end++; break;
	case 'm': case 'M': v *= 1024 * 1024, end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024, end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	return *end || v > 9e18 ? -1 : (int64_t)v;
}

static void src_name(const char *db, char *buf, size_t len)
{
	size_t n = strlen(db);

	snprintf(buf, len, "%.*s.src", (int)(n > 3 ? n - 3 : n), db);
}

static char *read_sources(const char *db)
{
	char src[PATH_MAX], *text = NULL;
	FILE *f;
	long len;

	src_name(db, src, sizeof(src));
	if (!(f = fopen(src, "r")))
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && len < (1 << 24) &&
	    fseek(f, 0, SEEK_SET) == 0) {
		text = ta_xcalloc((size_t)len + 1, 1);
		if (fread(text, 1, (size_t)len, f) != (size_t)len) {
			free(text);
			text = NULL;
		}
	}
	fclose(f);
	return text;
}

/* Whether the entry's name still matches its sources' content key. */
static int entry_state(const char *db, const char *sources)
{
	char **files = NULL, *copy, *line, *save = NULL, want[40];
	const char *base = strrchr(db, '/');
	size_t n = 0;
	int state;

	if (!sources)
		return TA_CACHE_UNKNOWN;
	copy = ta_xstrdup(sources);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (access(line, R_OK) != 0) {
			free(files);
			free(copy);
			return TA_CACHE_STALE; /* a trace is gone */
		}
		files = ta_xrealloc(files, (n + 1) * sizeof(*files));
		files[n++] = line;
	}
	snprintf(want, sizeof(want), "-%016llx.db",
		 (unsigned long long)ta_cache_content_key(files, n));
	base = base ? base + 1 : db;
	state = strlen(base) > strlen(want) &&
		strcmp(base + strlen(base) - strlen(want), want) == 0 ?
		TA_CACHE_CURRENT : TA_CACHE_STALE;
	free(files);
	free(copy);
	return state;
}

static int by_use(const void *x, const void *y)
{
	const struct ta_cache_entry *a = x, *b = y;

	return a->used < b->used ? -1 : a->used > b->used;
}

static int own_name(const char *name)
{
	size_t i;

	if (strlen(name) != 16 + 1 + 16 + 3 || strcmp(name + 33, ".db") != 0 ||
	    name[16] != '-')
		return 0;
	for (i = 0; i < 33; i++)
		if (i != 16 && !strchr("0123456789abcdef", name[i]))
			return 0;
	return 1;
}

int ta_cache_entries(const char *dir, struct ta_cache_entry **v, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	*v = NULL;
	*n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[PATH_MAX];
		struct stat sb;

		/* only what the cache named itself (16 hex digits, '-', 16,
		 * '.db'): an ingest output or notes.db beside it are not ours to
		 * list, prune or evict */
		if (!own_name(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
			continue;
		*v = ta_xrealloc(*v, (*n + 1) * sizeof(**v));
		(*v)[*n] = (struct ta_cache_entry){ ta_xstrdup(path), sb.st_size,
			sb.st_atime, sb.st_mtime, read_sources(path), 0 };
		(*v)[*n].state = entry_state(path, (*v)[*n].sources);
		(*n)++;
	}
	closedir(d);
	ta_qsort(*v, *n, sizeof(**v), by_use);
	return 0;
}

int ta_cache_unodd(const char *path)
{
	struct stat sb, lsb;

	if (lstat(path, &lsb) < 0 || (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)))
		return 0;   /* nothing there, or a file (a link to one too) */
	return (S_ISDIR(lsb.st_mode) ? rmdir(path) : unlink(path)) == 0 ? 1 : -1;
}

size_t ta_cache_clear_odd(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t gone = 0;

	while (d && (e = readdir(d))) {
		char path[PATH_MAX];

		if (!own_name(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		gone += ta_cache_unodd(path) == 1;
	}
	if (d)
		closedir(d);
	return gone;
}

void ta_cache_entries_free(struct ta_cache_entry *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].db);
		free(v[i].sources);
	}
	free(v);
}

int ta_cache_remove(const char *db)
{
	char src[PATH_MAX];

	src_name(db, src, sizeof(src));
	unlink(src);
	if (unlink(db) < 0 && errno != ENOENT)
		return -1;
	/* the journal of a write a signal cut short: left, it would be
	 * replayed onto the next entry built under this name */
	snprintf(src, sizeof(src), "%s-journal", db);
	unlink(src);
	return 0;
}

void ta_cache_touch(const char *db)
{
	const struct timespec times[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };

	utimensat(AT_FDCWD, db, times, 0); /* a read-only cache: not recorded */
}

void ta_cache_drop_older(const char *dir, uint64_t paths_key, const char *keep)
{
	struct ta_cache_entry *v;
	char prefix[24];
	size_t n, i;

	snprintf(prefix, sizeof(prefix), "%016llx-", (unsigned long long)paths_key);
	if (ta_cache_entries(dir, &v, &n) < 0)
		return;
	for (i = 0; i < n; i++) {
		const char *base = strrchr(v[i].db, '/');

		base = base ? base + 1 : v[i].db;
		if (strncmp(base, prefix, strlen(prefix)) == 0 && strcmp(v[i].db, keep) != 0)
			ta_cache_remove(v[i].db); /* a reader holding it open keeps it */
	}
	ta_cache_entries_free(v, n);
}

void ta_cache_added(const char *db, char **files, size_t n)
{
	char src[PATH_MAX], abs[PATH_MAX];
	FILE *f;
	size_t i;

	src_name(db, src, sizeof(src));
	if (!(f = fopen(src, "w")))
		return;
	for (i = 0; i < n; i++) {
		absolute(files[i], abs, sizeof(abs));
		fprintf(f, "%s\n", abs);
	}
	fclose(f);
}

void ta_cache_evict(const char *dir, int64_t max, const char *keep)
{
	struct ta_cache_entry *v;
	int64_t total = 0;
	size_t n, i;

	if (max <= 0 || ta_cache_entries(dir, &v, &n) < 0)
		return;
	for (i = 0; i < n; i++)
		total += v[i].bytes;
	for (i = 0; i < n && total > max; i++) /* least recently used first */
		if (!keep || strcmp(v[i].db, keep) != 0) {
			if (ta_cache_remove(v[i].db) == 0)
				total -= v[i].bytes;
		}
	ta_cache_entries_free(v, n);
}

/* DIR/checked/HASH: what stat said of a database when a whole check of it
 * passed, the kind of check (a shard's is a database's and more), and its
 * absolute path (two paths of one hash are told apart). */
static int checked_name(const char *db, const struct stat *sb, int kind, char *memo,
			size_t len, char *line, size_t line_len, int *racy)
{
	char dir[PATH_MAX - 64], abs[PATH_MAX];
	struct timespec now;

	if (ta_cache_dir(dir, sizeof(dir)) < 0 || !S_ISREG(sb->st_mode))
		return -1;
	absolute(db, abs, sizeof(abs));
	snprintf(memo, len, "%s/checked/%016llx", dir,
		 (unsigned long long)fnv(1469598103934665603ULL, abs));
	/* 4: what the check covers (3: the values' bounds too; 4: a shard's
	 * kept collectives and dev_rows' durations not below 0); a note of an
	 * earlier check is not this one's */
	snprintf(line, line_len, "4 %d %llu %llu %lld %lld.%09ld %lld.%09ld %s\n", kind,
		 (unsigned long long)sb->st_dev, (unsigned long long)sb->st_ino,
		 (long long)sb->st_size, (long long)sb->st_mtim.tv_sec,
		 sb->st_mtim.tv_nsec, (long long)sb->st_ctim.tv_sec, sb->st_ctim.tv_nsec,
		 abs);
	/* changed within the last two seconds: a change in the same tick of
	 * the file system's clock after this stat would look the same (git's
	 * "racily clean" files) */
	clock_gettime(CLOCK_REALTIME, &now);
	*racy = now.tv_sec - sb->st_mtim.tv_sec < 2 || now.tv_sec - sb->st_ctim.tv_sec < 2;
	return 0;
}

/* The note at memo into buf (a regular file's first line; "" if none: a
 * FIFO or anything else there is no note, and never waited on). */
static void read_note(const char *memo, char *buf, size_t len)
{
	int fd = open(memo, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	struct stat sb;
	ssize_t n = -1;

	buf[0] = '\0';
	if (fd < 0)
		return;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
		n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

int ta_cache_checked(const char *db, int kind)
{
	char memo[PATH_MAX], line[PATH_MAX + 128], kept[PATH_MAX + 128];
	struct stat sb;
	int racy, k;

	if (stat(db, &sb) < 0 ||
	    checked_name(db, &sb, 0, memo, sizeof(memo), line, sizeof(line), &racy) < 0 ||
	    racy)
		return 0;
	read_note(memo, kept, sizeof(kept));
	/* the same but for the kind: one that checked as much or more */
	for (k = kind; k <= 1; k++) {
		line[2] = (char)('0' + k);
		if (strcmp(kept, line) == 0)
			return 1;
	}
	return 0;
}

static void write_note(const char *memo, const char *line)
{
	char tmp[PATH_MAX + 16], dir[PATH_MAX], *slash;
	struct stat sb;
	int fd, ok;
	size_t len;

	/* the cache and its checked/ (a directory, not a link), made when
	 * first needed */
	snprintf(dir, sizeof(dir), "%s", memo);
	slash = strrchr(dir, '/');
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno == ENOENT) {
		char *up = strrchr(dir, '/');

		*up = '\0';
		mkdir(dir, 0755);
		*up = '/';
		mkdir(dir, 0755);
	}
	if (lstat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", memo);
	if ((fd = mkstemp(tmp)) < 0)
		return;  /* a read-only cache: checked again next time */
	len = strlen(line);
	ok = write(fd, line, len) == (ssize_t)len;
	if (close(fd) < 0 || !ok || rename(tmp, memo) < 0)
		unlink(tmp);
}

void ta_cache_note_checked(const char *db, int kind)
{
	char memo[PATH_MAX], line[PATH_MAX + 128];
	struct stat sb;
	int racy;

	if (stat(db, &sb) == 0 &&
	    checked_name(db, &sb, kind, memo, sizeof(memo), line, sizeof(line), &racy) == 0 &&
	    !racy)
		write_note(memo, line);
}

void ta_cache_note_written(const char *db, int fd, int kind)
{
	char memo[PATH_MAX], line[PATH_MAX + 128];
	struct stat at, mine;
	int racy;

	/* the file this process wrote, still under its name (not another
	 * writer's since): its stat now, after the rename that changed it */
	if (stat(db, &at) == 0 && fstat(fd, &mine) == 0 && at.st_dev == mine.st_dev &&
	    at.st_ino == mine.st_ino &&
	    checked_name(db, &at, kind, memo, sizeof(memo), line, sizeof(line), &racy) == 0)
		write_note(memo, line);
}

/* A name the cache gave a note (16 hex digits), or a note being written
 * (the same, '.', 6 more). */
static int note_name(const char *name, int *temp)
{
	size_t n = strlen(name), i;

	if (n != 16 && !(n == 23 && name[16] == '.'))
		return 0;
	for (i = 0; i < 16; i++)
		if (!strchr("0123456789abcdef", name[i]))
			return 0;
	*temp = n == 23;
	return 1;
}

void ta_cache_forget_checks(const char *dir, int all)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int fd;

	snprintf(path, sizeof(path), "%s/checked", dir);
	/* not through a link: the notes are the cache's own, nothing else */
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) < 0)
		return;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((e = readdir(d))) {
		char note[PATH_MAX + 128], line[PATH_MAX + 128], memo[PATH_MAX + 300], *db;
		struct stat sb;
		int temp, racy;

		if (!note_name(e->d_name, &temp))
			continue;
		if (fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(sb.st_mode))
			continue;
		if (all || (temp && time(NULL) - sb.st_mtime > 60)) {
			unlinkat(fd, e->d_name, 0);
			continue;
		}
		if (temp)
			continue;
		/* prune: a note of a file gone or changed since */
		snprintf(memo, sizeof(memo), "%s/%s", path, e->d_name);
		read_note(memo, note, sizeof(note));
		db = strchr(note, '/');
		if (db)
			db[strcspn(db, "\n")] = '\0';
		if (!db || stat(db, &sb) < 0 ||
		    checked_name(db, &sb, note[2] - '0', memo, sizeof(memo), line,
				 sizeof(line), &racy) < 0 ||
		    (line[strlen(line) - 1] = '\0', strcmp(line, note) != 0))
			unlinkat(fd, e->d_name, 0);
	}
	closedir(d);
	if (all)
		rmdir(path);
}
