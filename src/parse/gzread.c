/* zlib's gzread reads gzip and plain files alike, but says nothing about
 * a stream cut short: that is only visible through gzerror at EOF. */
#include "gzread.h"

#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <zlib.h>

struct ta_gzr {
	gzFile f;
	char *buf;
	char err[256];
};

struct ta_gzr *ta_gzr_open(const char *path, struct ta_error *err)
{
	struct ta_gzr *r;
	gzFile f = gzopen(path, "rb");

	if (!f) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': %s", path,
			     errno ? strerror(errno) : "cannot open");
		return NULL;
	}
	gzbuffer(f, TA_GZ_CHUNK);
	r = ta_xcalloc(1, sizeof(*r));
	r->f = f;
	r->buf = ta_xmalloc(TA_GZ_CHUNK);
	return r;
}

long ta_gzr_read(struct ta_gzr *r, const char **chunk)
{
	int n = gzread(r->f, r->buf, TA_GZ_CHUNK);
	int errnum = Z_OK;
	const char *msg;

	*chunk = r->buf;
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

const char *ta_gzr_error(const struct ta_gzr *r)
{
	return r->err;
}

int64_t ta_gzr_raw_offset(struct ta_gzr *r)
{
	return (int64_t)gzoffset(r->f);
}

void ta_gzr_close(struct ta_gzr *r)
{
	if (!r)
		return;
	gzclose_r(r->f);
	free(r->buf);
	free(r);
}
