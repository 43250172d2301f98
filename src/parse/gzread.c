/* gzip or plain files, decompressed with an inflater driven directly
 * rather than gzread: gzread drops the bytes it decompressed in a call
 * that ends in an error, so a bad checksum at the end of a member would
 * lose the last chunk (or a small file entirely). Here every byte
 * decompressed is handed over, then the error, so damage is reported
 * where it is.
 *
 * The inflater is ISA-L's when it is built in (TA_HAVE_ISAL; the 200 MB
 * bench trace: 0.11 s of CPU, zlib's 0.30 s), else zlib's; TA_INFLATE=zlib
 * picks zlib's anyway. Both sit behind one step function (see fill), and
 * where ISA-L finds damage zlib reads the file again and says
 * (rerun_zlib), so that which one ran never shows: the same damage gives
 * the same bytes, message and offsets (tests/check_gzread.c and
 * tests/fuzz/fuzz_gzread.c hold them to it).
 *
 * Decompression runs on its own thread, a few chunks ahead of the parser:
 * it fills a ring of buffers, the parser takes them in order. Without a
 * thread (-j 1, or as many files in flight as cores) the parser's own
 * thread decompresses into the first buffer. */
#include "gzread.h"
#include "ta_files.h"
#include "ta_parse.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>
#ifdef TA_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define NBUF 8

struct chunk {
	char *data;
	long len;          /* > 0 data, 0 end, -1 damage */
	int64_t raw;       /* compressed bytes consumed after this chunk */
	int full;
};

struct ta_gzr {
	int fd;
	int gzip;          /* else plain: bytes as they are */
	z_stream z;        /* zlib's inflater, or */
#ifdef TA_HAVE_ISAL
	struct inflate_state *isal; /* ISA-L's, when not NULL */
	struct isal_gzip_header hdr; /* the member's, read by us: header_isal */
#endif
	unsigned char *in; /* compressed input */
	const unsigned char *next_in; /* of in: not inflated yet */
	size_t avail_in;
	off_t start;       /* where the file's bytes begin; -1: a pipe */
	int64_t made;      /* bytes inflated */
	int in_eof;        /* the file has no more bytes */
	int between;       /* a gzip member ended; another may follow */
	int failed;        /* the error in err comes with the next read */
	struct chunk ring[NBUF];
	size_t next_fill, next_take;
	int taken;         /* the parser holds ring[next_take - 1] */
	int stop, done, started;
	size_t head;       /* plain: bytes of in (read to tell the kind) not
			    * handed over yet */
	int64_t raw_in;    /* compressed bytes read (the decompressing side) */
	int64_t raw;       /* of which the parser has seen the result */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char err[256];
};

static long fail_read(struct ta_gzr *r, const char *msg)
{
	snprintf(r->err, sizeof(r->err), "%s", msg);
	return -1;
}

/* Fills buf from a plain file: 0 at the end, -1 on error. */
static long read_plain(struct ta_gzr *r, char *buf)
{
	long got = (long)r->head;

	memcpy(buf, r->in, r->head);
	r->head = 0;
	while (got < TA_GZ_CHUNK) {
		ssize_t n = read(r->fd, buf + got, (size_t)(TA_GZ_CHUNK - got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return got ? got : fail_read(r, strerror(errno));
		if (n == 0)
			break;
		got += n;
		r->raw_in += n;
	}
	return got;
}

/* More compressed input; 0 at the end of the file, -1 on error. */
static int refill(struct ta_gzr *r)
{
	ssize_t n;

	do
		n = read(r->fd, r->in, TA_GZ_CHUNK);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	r->next_in = r->in;
	r->avail_in = (size_t)n;
	r->raw_in += n;
	r->in_eof = n == 0;
	return n > 0;
}

static int damage(struct ta_gzr *r, const char *msg)
{
	snprintf(r->err, sizeof(r->err), "%s", msg);
	r->failed = 1;
	return -1;
}

/* One call of zlib's inflate, from r->next_in into *out: 1 at the end of
 * a member, 0 to go on, -1 on damage (message in err). */
static int step_zlib(struct ta_gzr *r, unsigned char **out, size_t *avail)
{
	z_stream *z = &r->z;
	int ret;

	z->next_in = (unsigned char *)r->next_in;
	z->avail_in = (uInt)r->avail_in;
	z->next_out = *out;
	z->avail_out = (uInt)*avail;
	ret = inflate(z, Z_NO_FLUSH);
	r->next_in = z->next_in;
	r->avail_in = z->avail_in;
	*out = z->next_out;
	*avail = z->avail_out;
	if (ret == Z_STREAM_END)
		return 1;
	if (ret == Z_OK || ret == Z_BUF_ERROR)
		return 0;
	return damage(r, ret == Z_DATA_ERROR && z->msg &&
		      strcmp(z->msg, "incorrect data check") == 0 ?
		      "gzip checksum mismatch (the data may be damaged)" :
		      z->msg ? z->msg : "gzip data error");
}

#ifdef TA_HAVE_ISAL
#define RERUN_PIECE (64 * 1024)

static long fill(struct ta_gzr *r, unsigned char *buf, size_t size);

/* ISA-L and zlib part at damage: ISA-L writes up to a match (258 bytes)
 * past the symbol zlib stops at, accepts block headers zlib refuses (then
 * fails the checksum) and can leave the last symbols of a cut stream
 * undecoded. So at any damage ISA-L finds, the file is inflated again
 * from its start with zlib, up to the bytes handed over before the chunk
 * being filled, and zlib fills that chunk: the zlib path's bytes, message
 * and offsets, for one more pass over a damaged file (3000 damaged copies
 * of a trace, and the fuzzer, all alike). 0, or -1 on damage before that
 * point (message in err). */
static int rerun_zlib(struct ta_gzr *r, int64_t target)
{
	unsigned char *scratch;

	free(r->isal);
	r->isal = NULL;
	if (inflateInit2(&r->z, 15 + 16) != Z_OK)
		return damage(r, "cannot start zlib");
	if (lseek(r->fd, r->start + 2, SEEK_SET) < 0)
		return damage(r, strerror(errno));
	/* as ta_gzr_open left it, so that the reads and offsets are the same */
	memcpy(r->in, "\x1f\x8b", 2);
	r->next_in = r->in;
	r->avail_in = 2;
	r->raw_in = 2;
	r->made = 0;
	r->in_eof = r->between = 0;
	scratch = ta_xmalloc(RERUN_PIECE);
	while (r->made < target && !r->failed &&
	       fill(r, scratch, (size_t)(target - r->made < RERUN_PIECE ?
					 target - r->made : RERUN_PIECE)) > 0)
		;
	free(scratch);
	return r->failed ? -1 : 0;
}

/* Reads the member's header: 1 once read, 0 for more input, -1 on
 * damage. Ours rather than isal_inflate's so that its flags are seen:
 * ISA-L ignores the reserved ones, zlib refuses them (a flipped bit). */
static int header_isal(struct ta_gzr *r)
{
	int ret = isal_read_gzip_header(r->isal, &r->hdr);

	if (ret == ISAL_END_INPUT)
		return 0;
	return ret == ISAL_DECOMP_OK && !(r->hdr.flags & 0xe0) ? 1 : -1;
}

/* As step_zlib, with ISA-L's isal_inflate; on damage -1 with no
 * message, as zlib says it (rerun_zlib). */
static int step_isal(struct ta_gzr *r, unsigned char **out, size_t *avail)
{
	struct inflate_state *s = r->isal;
	int ret = 1;

	s->next_in = (uint8_t *)r->next_in;
	s->avail_in = (uint32_t)r->avail_in;
	if (!s->wrapper_flag)
		ret = header_isal(r);
	if (ret > 0) {
		s->next_out = *out;
		s->avail_out = (uint32_t)*avail;
		ret = isal_inflate(s);
		*out = s->next_out;
		*avail = s->avail_out;
	}
	if (ret < 0)
		return -1;
	r->next_in = s->next_in;
	r->avail_in = s->avail_in;
	return s->block_state == ISAL_BLOCK_FINISH;
}
#endif

static int step(struct ta_gzr *r, unsigned char **out, size_t *avail)
{
#ifdef TA_HAVE_ISAL
	if (r->isal)
		return step_isal(r, out, avail);
#endif
	return step_zlib(r, out, avail);
}

/* Ready for the next member. */
static void reset(struct ta_gzr *r)
{
#ifdef TA_HAVE_ISAL
	if (r->isal) {
		isal_inflate_reset(r->isal);
		isal_gzip_header_init(&r->hdr);
		return;
	}
#endif
	inflateReset(&r->z);
}

/* Decompresses into buf until size bytes, the end of the input or an
 * error: the bytes made, then (on the next call) -1 for the error. */
static long fill(struct ta_gzr *r, unsigned char *buf, size_t size)
{
	unsigned char *out = buf;
	size_t avail = size, before;
	int ret, cut;
#ifdef TA_HAVE_ISAL
	int64_t buf_at = r->made; /* where zlib would fill buf again */
#endif

	while (avail > 0) {
		if (r->avail_in == 0 && !r->in_eof && refill(r) < 0) {
			damage(r, strerror(errno));
			break;
		}
		if (r->between) {
			/* as gzip(1): members may follow one another; anything
			 * else after a member ends the data */
			if (r->avail_in == 0 || r->next_in[0] != 0x1f) {
				r->in_eof = 1;
				r->avail_in = 0;
				break;
			}
			reset(r);
			r->between = 0;
		}
		before = avail;
		ret = step(r, &out, &avail);
		/* cut inside a member, once the inflater has given all it
		 * holds (a full buf can leave a match of the last input) */
		cut = ret == 0 && before == avail && r->avail_in == 0 && r->in_eof;
#ifdef TA_HAVE_ISAL
		if (r->isal && (ret < 0 || cut)) {
			/* a cut is damage too: zlib fills buf again, and says */
			out = buf;
			avail = size;
			if (rerun_zlib(r, buf_at) < 0)
				break;
			continue;
		}
#endif
		if (ret < 0 || (cut && damage(r, "truncated gzip stream")))
			break;
		r->made += (int64_t)(before - avail);
		r->between = ret;
	}
	return (long)(size - avail);
}

/* One chunk: > 0 bytes, 0 at a clean end, -1 on damage (message in err). */
static long read_chunk(struct ta_gzr *r, char *buf)
{
	long n;

	if (r->failed == 2)
		return -1;
	n = r->gzip ? fill(r, (unsigned char *)buf, TA_GZ_CHUNK) : read_plain(r, buf);
	if (r->failed && n == 0) {
		r->failed = 2;
		return -1;
	}
	if (r->failed)
		r->failed = 2; /* after these bytes */
	return n;
}

static void *reader_main(void *arg)
{
	struct ta_gzr *r = arg;
	int done = 0;

	/* a few chunks ahead of the parser, at a quarter of its work: when
	 * the cores are taken (2 cores: this, the parser and the SQLite
	 * thread) the parser, which everything waits for, goes first.
	 * 200 MB trace on 2 cores: 1.03 -> 0.99 s (median of 9) */
	setpriority(PRIO_PROCESS, (id_t)gettid(), 5);

	while (!done) {
		struct chunk *c = &r->ring[r->next_fill];

		int stop;

		pthread_mutex_lock(&r->lock);
		while (c->full && !r->stop)
			pthread_cond_wait(&r->cond, &r->lock);
		stop = r->stop;
		pthread_mutex_unlock(&r->lock);
		if (stop)
			break;
		c->len = read_chunk(r, c->data);
		c->raw = r->raw_in;
		done = c->len <= 0;
		pthread_mutex_lock(&r->lock);
		c->full = 1;
		r->next_fill = (r->next_fill + 1) % NBUF;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
	}
	return NULL;
}

/* ISA-L's inflater unless TA_INFLATE=zlib (read at each open: a test
 * compares the two in one process) or it is not built in; a pipe gets
 * zlib's too, as damage needs a second read (rerun_zlib). */
static int use_isal(void)
{
#ifdef TA_HAVE_ISAL
	const char *e = getenv("TA_INFLATE");

	return !e || strcmp(e, "zlib") != 0;
#else
	return 0;
#endif
}

const char *ta_parse_inflater(void)
{
	return use_isal() ? "isa-l" : "zlib";
}

static int start_inflater(struct ta_gzr *r)
{
#ifdef TA_HAVE_ISAL
	if (use_isal() && r->start >= 0) {
		r->isal = ta_xmalloc(sizeof(*r->isal));
		isal_inflate_init(r->isal);
		r->isal->crc_flag = ISAL_GZIP; /* checks each member's trailer */
		isal_gzip_header_init(&r->hdr);
		return 0;
	}
#endif
	return inflateInit2(&r->z, 15 + 16) == Z_OK ? 0 : -1;
}

static void end_inflater(struct ta_gzr *r)
{
	if (!r->gzip)
		return;
#ifdef TA_HAVE_ISAL
	if (r->isal) {
		free(r->isal);
		return;
	}
#endif
	inflateEnd(&r->z);
}

struct ta_gzr *ta_gzr_open(const char *path, int threaded,
			   struct ta_error *err)
{
	struct ta_gzr *r;
	int fd = ta_open_read(path, "", err);
	unsigned char magic[2];
	ssize_t got = 0, n;
	size_t i;

	if (fd < 0)
		return NULL;
	r = ta_xcalloc(1, sizeof(*r));
	r->fd = fd;
	r->in = ta_xmalloc(TA_GZ_CHUNK);
	r->start = lseek(fd, 0, SEEK_CUR);
	/* gzip or not: from the magic bytes, which stay as input */
	while (got < 2 && ((n = read(fd, magic + got, (size_t)(2 - got))) > 0 ||
			   (n < 0 && errno == EINTR)))
		got += n > 0 ? n : 0;
	r->gzip = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	memcpy(r->in, magic, (size_t)got);
	r->raw_in = got;
	r->head = r->gzip ? 0 : (size_t)got;
	r->next_in = r->in;
	r->avail_in = (size_t)got;
	if (r->gzip && start_inflater(r) < 0) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot start zlib", path);
		close(fd);
		free(r->in);
		free(r);
		return NULL;
	}
	for (i = 0; i < (threaded ? NBUF : 1); i++) /* inline: one buffer */
		r->ring[i].data = ta_xmalloc(TA_GZ_CHUNK);
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	if (!threaded)
		return r;
	if (pthread_create(&r->thread, NULL, reader_main, r) != 0) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot start a thread", path);
		ta_gzr_close(r);
		return NULL;
	}
	r->started = 1;
	return r;
}

long ta_gzr_read(struct ta_gzr *r, const char **chunk)
{
	struct chunk *c;

	if (r->done)
		return 0;
	if (!r->started) {
		c = &r->ring[0];
		c->len = read_chunk(r, c->data);
		r->raw = r->raw_in;
		r->done = c->len <= 0;
		*chunk = c->data;
		return c->len;
	}
	pthread_mutex_lock(&r->lock);
	if (r->taken) { /* give the previous chunk back */
		r->ring[r->next_take].full = 0;
		r->next_take = (r->next_take + 1) % NBUF;
		r->taken = 0;
		pthread_cond_broadcast(&r->cond);
	}
	c = &r->ring[r->next_take];
	while (!c->full)
		pthread_cond_wait(&r->cond, &r->lock);
	r->taken = 1;
	pthread_mutex_unlock(&r->lock);
	*chunk = c->data;
	r->raw = c->raw;
	if (c->len <= 0)
		r->done = 1;
	return c->len;
}

const char *ta_gzr_error(const struct ta_gzr *r)
{
	return r->err;
}

int64_t ta_gzr_raw_offset(struct ta_gzr *r)
{
	return r->raw;
}

void ta_gzr_close(struct ta_gzr *r)
{
	size_t i;

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = 1;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	if (r->started)
		pthread_join(r->thread, NULL);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	end_inflater(r);
	close(r->fd);
	free(r->in);
	for (i = 0; i < NBUF; i++)
		free(r->ring[i].data);
	free(r);
}
