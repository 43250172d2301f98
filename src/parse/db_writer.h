/* The database writer: the parser's own (ingest.c feeds it, db_writer.c
 * is it); everything else reads finished databases (ta_db.h). */
#ifndef TA_DB_WRITER_H
#define TA_DB_WRITER_H

#include "ta_db.h"
#include "ta_event.h"

struct ta_db_writer;  /* a new database, written by one SQLite connection */
struct ta_db_feed;    /* one trace file's rows on their way into it */
struct ta_parse_result;

/* Creates a new database at path (which must not be in use). threaded:
 * SQLite runs on a thread of its own, beside the parsers; lazy_indexes:
 * bits 1 << enum ta_lazy_index, those to build while loading; cache_entry:
 * NULL, or info.cache_entry's value: the cache's own (ta_ingest_opts). */
struct ta_db_writer *ta_db_writer_new(const char *path, int threaded,
				      unsigned lazy_indexes, const char *cache_entry,
				      struct ta_error *err);
/* Starts a file. Feeds of different files may be used from different
 * threads at once; one feed from one thread. rank is provisional. */
struct ta_db_feed *ta_db_feed_new(struct ta_db_writer *w, const char *path,
				  int64_t bytes, int64_t mtime_ns, int64_t rank);
int ta_db_feed_event(struct ta_db_feed *f, const struct ta_event *ev);
/* A top-level key other than traceEvents, its value as compact JSON. */
int ta_db_feed_meta(struct ta_db_feed *f, const char *key, const char *json,
		    size_t len);
/* Waits for the file's rows, gives them their final rank and records the
 * file; a ProfilerStep#N seen again on the rank (copies of a trace laid
 * end to end) is numbered on from its largest, *renumbered says how
 * many. Frees the feed, as do the next two. */
int ta_db_feed_end(struct ta_db_feed *f, int64_t rank,
		   const struct ta_parse_result *res, int64_t *renumbered,
		   struct ta_error *err);
/* Lanes: one file parsed by several threads, a feed each (split.c).
 * From ta_db_feed_hold on, the feed's rows wait until cut off as a piece
 * (everything packed since the last cut) and released: in document order,
 * each event's index moved by idx_base, or with rows 0 for the piece's new
 * names only (its rows are not the file's). Dropping a piece is for when
 * the file ends before it. ta_db_feed_room waits until the writer has
 * room for another piece of the feed. Only with a threaded writer. */
struct ta_db_piece;
void ta_db_feed_hold(struct ta_db_feed *f);
int ta_db_feed_room(struct ta_db_feed *f);
struct ta_db_piece *ta_db_feed_cut(struct ta_db_feed *f);
void ta_db_piece_release(struct ta_db_piece *p, int64_t idx_base, int rows);
void ta_db_piece_drop(struct ta_db_piece *p);
/* Takes a lane's rows (drained) into another feed of the same file and
 * frees the lane: ending or discarding that one covers both. */
int ta_db_feed_absorb(struct ta_db_feed *into, struct ta_db_feed *lane,
		      struct ta_error *err);
/* Drops what was written for the file (it was not a trace). */
int ta_db_feed_discard(struct ta_db_feed *f, struct ta_error *err);
/* Why the writer failed this feed: the file, the database, SQLite's word. */
void ta_db_feed_failure(struct ta_db_feed *f, struct ta_error *err);
/* Gives up on the file; its rows stay (the database is being abandoned). */
void ta_db_feed_free(struct ta_db_feed *f);
/* Commits, once every feed has ended. The writer is freed either way. */
int ta_db_writer_finish(struct ta_db_writer *w, struct ta_error *err);
void ta_db_writer_abort(struct ta_db_writer *w);
/* A file left out (not a trace): what was said of it, kept in info as
 * 'skipped:N', so that every later read of the database says it again
 * (and a gate trips on it). */
void ta_db_writer_skipped(struct ta_db_writer *w, const char *what);
/* A warning said of a file while it was read (no rank, steps that are
 * not steps, ...): kept as 'noted:N', path and message apart, so that a
 * cached read says it again with the path given then. */
void ta_db_writer_noted(struct ta_db_writer *w, const char *path, const char *what);

#endif
