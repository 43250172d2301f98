/* libFuzzer target for the gzip reader, differential: any bytes as a
 * file, read through ISA-L's inflater and through zlib's, give the same
 * bytes, the same reads at the same raw offsets and the same message (a
 * build without ISA-L reads with zlib twice). */
#include "gzread.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct outcome {
	uint64_t hash;     /* FNV-1a over every read: length, offset, bytes */
	long total;
	char err[256];
};

static void mix(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		*h = (*h ^ *b++) * 1099511628211u;
}

static void read_with(const char *path, const char *inflater, struct outcome *o)
{
	struct ta_error err;
	struct ta_gzr *r;
	const char *chunk;
	long n;

	setenv("TA_INFLATE", inflater, 1);
	r = ta_gzr_open(path, 0, &err);
	assert(r);
	memset(o, 0, sizeof(*o));
	o->hash = 14695981039346656037u;
	while ((n = ta_gzr_read(r, &chunk)) != 0) {
		int64_t raw = ta_gzr_raw_offset(r);

		mix(&o->hash, &n, sizeof(n));
		mix(&o->hash, &raw, sizeof(raw));
		if (n < 0)
			break;
		mix(&o->hash, chunk, (size_t)n);
		o->total += n;
	}
	snprintf(o->err, sizeof(o->err), "%s", n < 0 ? ta_gzr_error(r) : "");
	ta_gzr_close(r);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	int fd = memfd_create("fuzz_gzread", 0);
	char path[64];
	struct outcome z, isal;

	assert(fd >= 0 && write(fd, data, size) == (ssize_t)size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	read_with(path, "zlib", &z);
	read_with(path, "isa-l", &isal);
	if (z.hash != isal.hash || strcmp(z.err, isal.err) != 0) {
		fprintf(stderr, "zlib: %ld bytes, '%s'; isa-l: %ld bytes, '%s'\n",
			z.total, z.err, isal.total, isal.err);
		abort();
	}
	close(fd);
	return 0;
}
