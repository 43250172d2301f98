/* Rank from a file name, for traces without distributedInfo. */
#include "ta_ingest.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

int64_t ta_rank_from_filename(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *p;

	base = base ? base + 1 : path;
	for (p = base; (p = strcasestr(p, "rank")) != NULL; p += 4) {
		const char *d = p + 4;
		int64_t r = 0;

		if (*d == '-' || *d == '_' || *d == '.')
			d++;
		if (!isdigit((unsigned char)*d))
			continue;
		for (; isdigit((unsigned char)*d); d++) {
			if (r > (INT64_MAX - (*d - '0')) / 10)
				return -2; /* does not fit: no rank from the name */
			r = r * 10 + (*d - '0');
		}
		return r;
	}
	/* tensorboard_trace_handler's WORKER.SPAN.pt.trace.json: the
	 * worker's place among its directory's */
	return ta_tblog_rank(path);
}
