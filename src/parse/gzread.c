/* zlib's gzread reads gzip and plain files alike, but says nothing about
 * a stream cut short: that is only visible through gzerror at EOF.
 *
 * Decompression runs on its own thread, a few chunks ahead of the parser:
 * it fills a ring of buffers, the parser takes them in order. Without a
 * thread (-j 1, or as many files in flight as cores) the parser's own
 * thread decompresses into the first buffer. */
#include "gzread.h"
#include "ta_files.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define NBUF 8

struct chunk {
	char *data;
	long len;          /* > 0 data, 0 end, -1 damage */
	int64_t raw;       /* compressed bytes consumed after this chunk */
	int full;
};

struct ta_gzr {
	gzFile f;
	struct chunk ring[NBUF];
	size_t next_fill, next_take;
	int taken;         /* the parser holds ring[next_take - 1] */
	int stop, done, started;
	int64_t raw;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char err[256];
};

/* One gzread, with truncation and errors turned into -1 and a message. */
static long read_chunk(struct ta_gzr *r, char *buf)
{
	int n = gzread(r->f, buf, TA_GZ_CHUNK);
	int errnum = Z_OK;
	const char *msg;

	if (n > 0)
		return n;
	msg = gzerror(r->f, &errnum);
	if (n == 0 && errnum == Z_OK)
		return 0;
	if (errnum == Z_BUF_ERROR)
		msg = "truncated gzip stream";
	else if (errnum == Z_ERRNO)
		msg = strerror(errno);
	snprintf(r->err, sizeof(r->err), "%s", msg ? msg : "read error");
	return -1;
}

static void *reader_main(void *arg)
{
	struct ta_gzr *r = arg;
	int done = 0;

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
		c->raw = (int64_t)gzoffset(r->f);
		done = c->len <= 0;
		pthread_mutex_lock(&r->lock);
		c->full = 1;
		r->next_fill = (r->next_fill + 1) % NBUF;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
	}
	return NULL;
}

struct ta_gzr *ta_gzr_open(const char *path, int threaded,
			   struct ta_error *err)
{
	struct ta_gzr *r;
	int fd = ta_open_read(path, "", err);
	gzFile f;
	size_t i;

	if (fd < 0)
		return NULL;
	f = gzdopen(fd, "rb");
	if (!f) {
		close(fd);
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot open", path);
		return NULL;
	}
	gzbuffer(f, TA_GZ_CHUNK);
	r = ta_xcalloc(1, sizeof(*r));
	r->f = f;
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
		r->raw = (int64_t)gzoffset(r->f);
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
	gzclose_r(r->f);
	for (i = 0; i < NBUF; i++)
		free(r->ring[i].data);
	free(r);
}
