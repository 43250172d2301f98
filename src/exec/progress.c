/* Progress on stderr, for a terminal only: ingestion's bytes and an
 * analysis' ranks. The caller decides whether to show it (isatty, --quiet). */
#include "exec/progress.h"

#include <stdio.h>
#include <time.h>

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Progress on a terminal: the file being read (with -j, the latest to
 * report), the bytes of all files read so far and the rate, at most every
 * 0.2 s and at least every 0.5 s while bytes come; then a summary line
 * that stays. Called under ingestion's lock. */
void ta_progress_ingest(const char *path, int64_t done, int64_t total, size_t i,
		     size_t n)
{
	static double start, last;
	double now = seconds();

	if (done < 0) {
		fprintf(stderr, "\rtraceanalyze: read %zu of %zu files, %lld events"
			"\033[K\n", i, n, (long long)total);
		start = last = 0;
		return;
	}
	if (start == 0)
		start = now;
	if (now - last < 0.2 && done != total)
		return;
	last = now;
	fprintf(stderr, "\rtraceanalyze: reading %s (%zu/%zu): %.0f of %.0f MB, "
		"%.0f MB/s\033[K", path, i + 1, n, (double)done / 1e6,
		(double)total / 1e6, now > start ? (double)done / 1e6 / (now - start) : 0.0);
}

/* Progress of an analysis on a terminal: shown once it has run a second,
 * so quick runs print nothing, and wiped when done. */
void ta_progress_work(const char *what, size_t done, size_t total)
{
	static struct timespec start;
	static int shown;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (done <= 1 && !shown)
		start = now;
	if (done >= total) {
		if (shown)
			fputs("\r\033[K", stderr);
		shown = 0;
		return;
	}
	if (now.tv_sec - start.tv_sec < 1)
		return;
	shown = 1;
	fprintf(stderr, "\rtraceanalyze: %s: rank %zu of %zu\033[K", what, done, total);
}
