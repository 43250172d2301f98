/* Private to src/parse/. */
#ifndef TA_PARSE_INT_H
#define TA_PARSE_INT_H

#include "ta_parse.h"

/* Keys that are not plain fields. */
enum { TA_KEY_NONE = -1, TA_KEY_TS = -2, TA_KEY_DUR = -3, TA_KEY_ARGS = -4 };

int ta_event_key(const char *k, size_t len);
int ta_arg_key(const char *k, size_t len);

/* A parser over a piece of a document (trace_parse.c): from its start
 * (events_depth 0), or from the '{' of an element of traceEvents at
 * `offset`, the array being at events_depth 1 (the document is the array)
 * or 2 (its "traceEvents" key). */
struct ta_piece;
struct ta_piece *ta_piece_new(void);
void ta_piece_start(struct ta_piece *pc, const struct ta_sink *sink,
		    struct ta_parse_result *res, int64_t offset,
		    int events_depth);
void ta_piece_feed(struct ta_piece *pc, const char *data, size_t len);
/* Damage found, or the sink said stop: feeding more does nothing. */
int ta_piece_done(const struct ta_piece *pc);
/* Feeds brace, a '{': 1 if it starts an element of the traceEvents array
 * at events_depth, with nothing pending before it (the piece then ends
 * there: that element is not its to finish). */
int ta_piece_boundary(struct ta_piece *pc, const char *brace, int events_depth);
/* The input could not be read further: damage where the piece is. */
void ta_piece_read_error(struct ta_piece *pc, const char *msg);
/* The document ended: what ta_parse_file returns. */
int ta_piece_finish(struct ta_piece *pc, const char *what,
		    struct ta_error *err);
void ta_piece_free(struct ta_piece *pc);

/* A parsing thread of one file (split.c), with a sink of its own. */
struct ta_lane {
	struct ta_sink sink;
	/* what the sink was given since the last cut, held back */
	void *(*cut)(void *ctx);
	/* a piece goes to the database, its events' indexes moved by base;
	 * rows 0: only what the lane's later pieces need (their names) */
	void (*release)(void *piece, int64_t base, int rows);
	void (*drop)(void *piece);
	/* waits until the database has room for another piece of the lane */
	void (*room)(void *ctx);
};

/* The file did not split: parse it again, in sequence. */
#define TA_PARSE_AGAIN (-2)

/* ta_parse_file with n lanes (up to 4) taking pieces of the document:
 * the same rows and result. */
int ta_parse_file_lanes(const char *path, const struct ta_lane *lanes,
			int n, struct ta_parse_result *res, struct ta_error *err);

/* Bytes of a piece (tests make it small); files smaller than
 * ta_split_min on disk are parsed by one thread. */
extern size_t ta_split_chunk;
extern int64_t ta_split_min;

#endif
