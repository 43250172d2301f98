/* The cache of parsed traces (src/exec/cache.c): one database per set of
 * trace files, named PATHS-CONTENT.db, where PATHS hashes the files'
 * absolute paths and CONTENT their identity (device, inode, size, times),
 * with PATHS-CONTENT.src listing the paths. When the files change, the
 * entry of the same paths is stale and goes; past a size cap the least
 * recently used go. */
#ifndef TA_CACHE_H
#define TA_CACHE_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The cache directory: $TRACEANALYZE_CACHE_DIR, else
 * $XDG_CACHE_HOME/traceanalyze, else ~/.cache/traceanalyze. -1: none of
 * them is set; -2: the name is too long. */
int ta_cache_dir(char *buf, size_t len);

uint64_t ta_cache_paths_key(char **files, size_t n);
uint64_t ta_cache_content_key(char **files, size_t n);

/* $TRACEANALYZE_CACHE_MAX in bytes (a number with K, M or G; 0: no cap),
 * default 2G; -1 if it does not parse. */
int64_t ta_cache_max(void);

/* Whether new entries are packed (ta_zvfs.h): unless
 * $TRACEANALYZE_CACHE_COMPRESS is 0, to read them with sqlite3. */
int ta_cache_packs(void);

struct ta_cache_entry {
	char *db;           /* its path */
	off_t bytes;
	time_t used, made;  /* last used (atime, set on every use), written */
	char *sources;      /* the traces' paths, one per line; NULL: unknown */
	int state;          /* TA_CACHE_CURRENT, _STALE, _UNKNOWN */
};
enum { TA_CACHE_CURRENT, TA_CACHE_STALE, TA_CACHE_UNKNOWN };

/* Every entry of dir, least recently used first. */
int ta_cache_entries(const char *dir, struct ta_cache_entry **v, size_t *n);
void ta_cache_entries_free(struct ta_cache_entry *v, size_t n);
/* What sits at an entry's name and is not a file: a dangling or looping
 * link, a FIFO, an empty directory. 1 if it was removed, 0 if there is
 * nothing there or a file (or a link to one), -1 if it could not be (a
 * directory with files in it). */
int ta_cache_unodd(const char *path);
/* Every such thing of dir named as an entry, removed (cache clear): how
 * many went. */
size_t ta_cache_clear_odd(const char *dir);
/* Removes an entry (its database and its list of sources). */
int ta_cache_remove(const char *db);

/* After a use: the entry was used now (its atime, whatever the mount). */
void ta_cache_touch(const char *db);
/* Before a new entry for these paths: older entries of the same paths
 * (the files changed since) go. */
void ta_cache_drop_older(const char *dir, uint64_t paths_key, const char *keep);
/* After a new entry: its sources are written, and the least recently used
 * entries go while the cache is over max bytes (never keep). */
void ta_cache_added(const char *db, char **files, size_t n);
void ta_cache_evict(const char *dir, int64_t max, const char *keep);

/* A whole check of a database (ta_db_validate: every page read) costs a
 * second per 100 MB, every command: one that passed is remembered in the
 * cache (DIR/checked/) by what stat says of the file (device, inode,
 * size, modification and change times) and the kind of check (1: a
 * shard's, 0: a database's). ta_cache_checked: 1 when the file is
 * unchanged since a check of that kind or more passed.
 * ta_cache_note_checked: remember one that passed now; a file changed in
 * the last two seconds is not remembered (a change in the same tick would
 * not show). ta_cache_note_written: remember the database this process
 * just wrote and put in place (fd still open on it: the name must still
 * be that file), checked by being written. */
int ta_cache_checked(const char *db, int kind);
void ta_cache_note_checked(const char *db, int kind);
void ta_cache_note_written(const char *db, int fd, int kind);
/* The notes of dir's: every one (cache clear, all), or those of files
 * gone or changed since and leftovers of killed writers (cache prune);
 * never a name the cache did not give, nor through a link. */
void ta_cache_forget_checks(const char *dir, int all);

#endif
