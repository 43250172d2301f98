/* Rank from a file name, for traces without distributedInfo. */
#include "ta_ingest.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

/* The number after word in base ("rank-3", "rank_3", "rank3"): -1 when
 * none follows it, -2 when it does not fit. */
static int64_t number_after(const char *base, const char *word)
{
	const char *p;
	size_t wl = strlen(word);

	for (p = base; (p = strcasestr(p, word)) != NULL; p += wl) {
		const char *d = p + wl;
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
	return -1;
}

int64_t ta_rank_from_filename(const char *path)
{
	const char *base = strrchr(path, '/');
	int64_t r;

	base = base ? base + 1 : path;
	if ((r = number_after(base, "rank")) != -1)
		return r;
	/* "worker1.pt.trace.json", as the TensorBoard plugin's own tests and
	 * many launchers name a rank's file */
	if ((r = number_after(base, "worker")) >= 0)
		return r;
	/* tensorboard_trace_handler's WORKER.SPAN.pt.trace.json: the
	 * worker's place among its directory's */
	return ta_tblog_rank(path);
}
