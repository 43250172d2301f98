/* Rank from a file name, for traces without distributedInfo. */
#include "ta_ingest.h"

#include <ctype.h>
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
		for (; isdigit((unsigned char)*d) && r < 100000000; d++)
			r = r * 10 + (*d - '0');
		return r;
	}
	return -1;
}
