/* One file's JSON parsed by several threads at once (lanes).
 *
 * The decompressed document is read in chunks. In each chunk the first
 * '}' ',' '{' (whitespace between them allowed) may be the boundary
 * between two elements of traceEvents: segment k starts at chunk k's
 * candidate (segment 0 at the document's start) with a parser set up as
 * if it stood between two elements there. Whether it does, only a parser
 * that read every byte before can tell. So the lane parsing a segment
 * goes on past its first chunk and, at each later candidate, asks its
 * parser (ta_piece_boundary); at the first one where it stands between
 * two elements, the segment ends, and the segment starting there is the
 * next true one. Segments passed over (their candidate lay inside a
 * string or a nested value, or their chunk had none) are void: the true
 * segment before them parsed their bytes itself, and what they made is
 * thrown away. The rows are the sequential parse's whatever the document
 * holds; a trace as Kineto writes it has a true candidate in every chunk.
 *
 * A segment's rows wait in its lane's feed until every segment before it
 * is settled, then go to the database with their indexes moved by the
 * elements before the segment (struct ta_lane). A void segment's piece
 * still goes, for the names it introduced (its lane's later pieces use
 * them), without its rows.
 *
 * Chunks live in a ring. A lane reads chunk i only while every lane's
 * current chunk and every segment not yet taken are within the ring; a
 * segment may read at most EXT chunks past its own, so the lane furthest
 * behind can always go on. A true segment that needs more (one element
 * longer than EXT chunks) makes the whole file be parsed again in
 * sequence: TA_PARSE_AGAIN. */
#include "gzread.h"
#include "parse_int.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NSLOT 16        /* chunks held */
#define EXT 8           /* chunks a segment reads past its own */
#define NSEG 8          /* segments taken and not yet settled */
#define LANES_MAX 4
#define NONE INT64_MAX  /* a segment that ended the document */
#define OVERFLOW (INT64_MAX - 1) /* one that reached EXT without ending */

size_t ta_split_chunk = TA_GZ_CHUNK;

struct schunk {
	char *data;
	size_t len;
	int64_t off;        /* of data[0] in the document */
	int64_t raw;        /* compressed bytes read once it was */
	long cand;          /* the candidate's '{' in data, -1 none */
};

enum { FREE, TAKEN, ENDED };

struct seg {
	int state;
	int lane;
	int stop;           /* void, or past the end: stop early */
	int64_t next;       /* chunk whose candidate ended it, NONE, OVERFLOW */
	void *piece;
	struct ta_parse_result res;
	int rc;             /* ta_piece_finish's, when it ended the document */
	struct ta_error err;
};

struct split {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	const char *path;
	const struct ta_lane *lanes;
	int nlanes;
	int depth;          /* where traceEvents is: 1 the document, 2 a key */
	/* reading: one lane at a time (reading), the lock let go meanwhile */
	struct ta_gzr *r;
	const char *gz;     /* the decompressed chunk being cut up */
	size_t gz_len, gz_pos;
	int reading;
	int64_t fetched;    /* chunks read */
	int64_t doc_off;    /* bytes read */
	int64_t end_at;     /* the chunk index where the document ends, or -1 */
	int end_kind;       /* there: 1 its end, -1 a read error */
	char end_msg[256];
	struct schunk slot[NSLOT];
	int64_t need[LANES_MAX]; /* chunk each lane reads now, NONE idle */
	/* segments */
	int64_t taken, done;
	int64_t chain;      /* the next true segment */
	int64_t base;       /* elements of traceEvents before it */
	int over;           /* a true segment ended the document */
	int again;          /* a true segment overflowed */
	struct seg seg[NSEG];
	struct ta_parse_result res;
	int rc;
	struct ta_error err;
};

/* The first '}' ws ',' ws '{' whose '{' is in data: its index, or -1. */
static long candidate(const char *data, size_t len)
{
	const char *p = data, *end = data + len;

	while ((p = memchr(p, '}', (size_t)(end - p))) != NULL) {
		const char *q = p + 1;

		while (q < end && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t'))
			q++;
		if (q < end && *q == ',') {
			q++;
			while (q < end && (*q == ' ' || *q == '\n' || *q == '\r' ||
					   *q == '\t'))
				q++;
			if (q < end && *q == '{')
				return (long)(q - data);
		}
		p++;
	}
	return -1;
}

/* Where traceEvents is, from the document's first byte other than white
 * space or a byte order mark: a document that is an array is the array. */
static int events_depth(const char *data, size_t len)
{
	size_t i = 0;

	if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' ||
			   data[i] == '\t'))
		i++;
	return i < len && data[i] == '[' ? 1 : 2;
}

static int64_t min_need(const struct split *s)
{
	int64_t m = s->taken;
	int l;

	for (l = 0; l < s->nlanes; l++)
		if (s->need[l] < m)
			m = s->need[l];
	return m;
}

/* Reads the next chunk (under the lock, let go while decompressing). */
static void read_chunk(struct split *s, int lane)
{
	struct schunk *c = &s->slot[s->fetched % NSLOT];
	const struct ta_sink *sink = &s->lanes[lane].sink;
	size_t n;
	long got = 1;

	s->reading = 1;
	pthread_mutex_unlock(&s->lock);
	if (s->gz_pos == s->gz_len) {
		got = ta_gzr_read(s->r, &s->gz);
		s->gz_len = got > 0 ? (size_t)got : 0;
		s->gz_pos = 0;
	}
	if (got > 0) {
		n = s->gz_len - s->gz_pos;
		if (n > ta_split_chunk)
			n = ta_split_chunk;
		if (!c->data)
			c->data = ta_xmalloc(ta_split_chunk);
		memcpy(c->data, s->gz + s->gz_pos, n);
		s->gz_pos += n;
		c->len = n;
		c->off = s->doc_off;
		c->raw = ta_gzr_raw_offset(s->r);
		c->cand = s->fetched > 0 ? candidate(c->data, n) : -1;
		if (s->fetched == 0)
			s->depth = events_depth(c->data, n);
		if (sink->progress)
			sink->progress(sink->ctx, c->raw);
	}
	pthread_mutex_lock(&s->lock);
	if (got > 0) {
		s->doc_off += (int64_t)n;
		s->fetched++;
	} else {
		s->end_at = s->fetched;
		s->end_kind = got == 0 ? 1 : -1;
		if (got < 0)
			snprintf(s->end_msg, sizeof(s->end_msg), "%s", ta_gzr_error(s->r));
	}
	s->reading = 0;
	pthread_cond_broadcast(&s->cond);
}

/* Chunk i, or NULL where the document has ended (under the lock). */
static const struct schunk *get_chunk(struct split *s, int lane, int64_t i)
{
	s->need[lane] = i;
	pthread_cond_broadcast(&s->cond);
	for (;;) {
		if (s->end_at >= 0 && i >= s->end_at)
			return NULL;
		if (i < s->fetched)
			return &s->slot[i % NSLOT];
		if (!s->reading && s->fetched - NSLOT < min_need(s))
			read_chunk(s, lane);
		else
			pthread_cond_wait(&s->cond, &s->lock);
	}
}

/* A true segment's result into the file's. */
static void add_result(struct ta_parse_result *r, const struct ta_parse_result *g)
{
	r->events += g->events;
	r->objects += g->objects;
	r->activity += g->activity;
	r->bytes = g->bytes;
	if (g->have_rank) {
		r->have_rank = 1;
		r->rank = g->rank;
	}
	if (g->bad_rank[0])
		memcpy(r->bad_rank, g->bad_rank, sizeof(r->bad_rank));
	r->any_float_ts |= g->any_float_ts;
	r->bad_times += g->bad_times;
	if (g->have_ts) {
		if (!r->have_ts || g->min_ts_ns < r->min_ts_ns)
			r->min_ts_ns = g->min_ts_ns;
		if (!r->have_ts || g->max_ts_ns > r->max_ts_ns)
			r->max_ts_ns = g->max_ts_ns;
		r->have_ts = 1;
	}
	r->bad_steps += g->bad_steps;
	r->extra_event_arrays += g->extra_event_arrays;
	r->feeds += g->feeds;
	if (g->long_strings && !r->long_strings)
		r->long_string_offset = g->long_string_offset;
	r->long_strings += g->long_strings;
	if (g->truncated) {
		r->truncated = 1;
		r->damage_offset = g->damage_offset;
		memcpy(r->damage, g->damage, sizeof(r->damage));
	}
}

/* Settles ended segments in order (under the lock): a true one's rows go
 * in, a void one's names, anything past the end is dropped. */
static void settle(struct split *s)
{
	int64_t k;

	while (s->done < s->taken) {
		struct seg *g = &s->seg[s->done % NSEG];
		const struct ta_lane *ln = &s->lanes[g->lane];

		if (g->state != ENDED)
			break;
		if (s->over || s->again) {
			ln->drop(g->piece);
		} else if (s->done == s->chain) {
			ln->release(g->piece, s->base, 1);
			add_result(&s->res, &g->res);
			s->base += g->res.events;
			if (g->next == NONE) {
				s->over = 1;
				s->rc = g->rc;
				s->err = g->err;
			} else if (g->next == OVERFLOW) {
				s->again = 1;
			} else {
				s->chain = g->next;
			}
		} else {
			ln->release(g->piece, 0, 0);
		}
		g->piece = NULL;
		g->state = FREE;
		s->done++;
	}
	for (k = s->done; k < s->taken; k++)
		if (s->over || s->again || k < s->chain)
			s->seg[k % NSEG].stop = 1;
	pthread_cond_broadcast(&s->cond);
}

/* Feeds chunk j up to its candidate, then asks there: 1 if segment g
 * ends at it. */
static int up_to_candidate(struct split *s, struct ta_piece *pc,
			   const struct schunk *c)
{
	if (c->cand < 0) {
		ta_piece_feed(pc, c->data, c->len);
		return 0;
	}
	ta_piece_feed(pc, c->data, (size_t)c->cand);
	if (!ta_piece_done(pc) &&
	    ta_piece_boundary(pc, c->data + c->cand, s->depth))
		return 1;
	ta_piece_feed(pc, c->data + c->cand + 1, c->len - (size_t)c->cand - 1);
	return 0;
}

/* Parses segment k into g, from its chunk to where it ends. */
static void parse_segment(struct split *s, int lane, struct ta_piece *pc,
			  int64_t k, struct seg *g)
{
	const struct ta_sink *sink = &s->lanes[lane].sink;
	const struct schunk *c;
	int64_t j;
	int stop;

	g->next = NONE;
	pthread_mutex_lock(&s->lock);
	c = get_chunk(s, lane, k);
	stop = g->stop;
	pthread_mutex_unlock(&s->lock);
	if (k == 0) {
		ta_piece_start(pc, sink, &g->res, 0, 0);
		if (c)
			ta_piece_feed(pc, c->data, c->len);
	} else if (!c || c->cand < 0 || stop) {
		return; /* no start of its own: void, or past the end */
	} else {
		ta_piece_start(pc, sink, &g->res, c->off + c->cand, s->depth);
		ta_piece_feed(pc, c->data + c->cand, c->len - (size_t)c->cand);
	}
	for (j = k + 1; c && !ta_piece_done(pc); j++) {
		if (j > k + EXT) {
			g->next = OVERFLOW;
			return;
		}
		pthread_mutex_lock(&s->lock);
		c = get_chunk(s, lane, j);
		stop = g->stop;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			return;
		if (c && up_to_candidate(s, pc, c)) {
			g->next = j;
			return;
		}
		/* damage in a chunk fed in part: read to its end, as in one piece */
		if (c && ta_piece_done(pc) && g->res.truncated)
			g->res.bytes = c->off + (int64_t)c->len;
	}
	if (!c && s->end_kind < 0)
		ta_piece_read_error(pc, s->end_msg);
	g->rc = ta_piece_finish(pc, s->path, &g->err);
}

static void run_lane(struct split *s, int lane)
{
	const struct ta_lane *ln = &s->lanes[lane];
	struct ta_piece *pc = ta_piece_new();

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct seg *g;
		int64_t k;

		while (!s->over && !s->again && s->taken >= s->done + NSEG)
			pthread_cond_wait(&s->cond, &s->lock);
		if (s->over || s->again || (s->end_at >= 0 && s->taken >= s->end_at))
			break;
		k = s->taken++;
		g = &s->seg[k % NSEG];
		memset(g, 0, sizeof(*g));
		g->state = TAKEN;
		g->lane = lane;
		g->stop = k < s->chain;
		pthread_mutex_unlock(&s->lock);
		ln->room(ln->sink.ctx);
		parse_segment(s, lane, pc, k, g);
		g->piece = ln->cut(ln->sink.ctx);
		pthread_mutex_lock(&s->lock);
		g->state = ENDED;
		s->need[lane] = NONE;
		settle(s);
	}
	s->need[lane] = NONE;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	ta_piece_free(pc);
}

struct lane_arg {
	struct split *s;
	int lane;
};

static void *lane_main(void *arg)
{
	struct lane_arg *a = arg;

	run_lane(a->s, a->lane);
	return NULL;
}

int ta_parse_file_lanes(const char *path, const struct ta_lane *lanes,
			int n, struct ta_parse_result *res, struct ta_error *err)
{
	struct split s;
	pthread_t t[LANES_MAX];
	struct lane_arg args[LANES_MAX];
	int started = 0, l, rc;

	memset(res, 0, sizeof(*res));
	if (n > LANES_MAX)
		n = LANES_MAX;
	memset(&s, 0, sizeof(s));
	s.r = ta_gzr_open(path, 1, err);
	if (!s.r)
		return -1;
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.cond, NULL);
	s.path = path;
	s.lanes = lanes;
	s.nlanes = n;
	s.end_at = -1;
	for (l = 0; l < n; l++)
		s.need[l] = NONE;
	for (l = 1; l < n; l++) {
		args[l].s = &s;
		args[l].lane = l;
		if (pthread_create(&t[l], NULL, lane_main, &args[l]) != 0)
			break;
		started = l;
	}
	run_lane(&s, 0);
	for (l = 1; l <= started; l++)
		pthread_join(t[l], NULL);
	ta_gzr_close(s.r);
	for (l = 0; l < NSLOT; l++)
		free(s.slot[l].data);
	pthread_mutex_destroy(&s.lock);
	pthread_cond_destroy(&s.cond);
	*res = s.res;
	if (s.again)
		return TA_PARSE_AGAIN;
	rc = s.rc;
	if (rc < 0)
		*err = s.err;
	return rc;
}
