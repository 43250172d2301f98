/* What torch.profiler.tensorboard_trace_handler writes: a log directory
 * of runs (subdirectories), each holding WORKER.SPAN.pt.trace.json[.gz]
 * files, WORKER the process (host_pid, or the name given), SPAN the time
 * the file was written, in ms; a worker has one file per span when the
 * profiler's schedule repeats. A directory of traces read as a run keeps
 * each worker's chosen span (--span N, from 1; default the last), and a
 * log directory is read as its chosen run (--run NAME; default the
 * newest). */
#include "ta_ingest.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *chosen_run;
static long chosen_span;   /* 0: the last */

void ta_tblog_select(const char *run, long span)
{
	chosen_run = run;
	chosen_span = span;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int ta_tblog_name(const char *path, size_t *worker_len, const char **span)
{
	const char *base = strrchr(path, '/'), *end, *dot;
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	if (ends_with(base, ".pt.trace.json"))
		len -= strlen(".pt.trace.json");
	else if (ends_with(base, ".pt.trace.json.gz"))
		len -= strlen(".pt.trace.json.gz");
	else
		return 0;
	end = base + len;
	for (dot = end; dot > base && dot[-1] != '.'; dot--)
		;
	if (dot == base || dot == end)
		return 0;
	/* the handler's span is a time in ms (13 digits): "rank.0" is no span */
	if (end - dot < 10)
		return 0;
	for (const char *d = dot; d < end; d++)
		if (!isdigit((unsigned char)*d))
			return 0;
	*worker_len = (size_t)(dot - 1 - base);
	*span = dot;
	return *worker_len > 0;
}

/* Names' worker part, and the base name. */
static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static int same_worker(const char *a, const char *b)
{
	size_t la, lb;
	const char *sa, *sb;

	return ta_tblog_name(a, &la, &sa) && ta_tblog_name(b, &lb, &sb) && la == lb &&
	       strncmp(base_of(a), base_of(b), la) == 0;
}

/* span numbers compare as numbers (they have no leading zeros, but may
 * differ in length) */
static int span_cmp(const char *a, const char *b)
{
	size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");

	return la != lb ? (la < lb ? -1 : 1) : strncmp(a, b, la);
}

/* By worker (a handler's name: its worker part; any other: the whole
 * name), then name: a worker's files together, "a.5.<span>" (worker
 * "a.5") not between "a.<span>" and "a.<span>" */
static int by_worker(const void *x, const void *y)
{
	const char *a = *(char *const *)x, *b = *(char *const *)y, *sa, *sb;
	size_t la, lb;
	int c;

	if (!ta_tblog_name(a, &la, &sa))
		la = strlen(base_of(a));
	if (!ta_tblog_name(b, &lb, &sb))
		lb = strlen(base_of(b));
	c = strncmp(base_of(a), base_of(b), la < lb ? la : lb);
	if (c == 0 && la != lb)
		c = la < lb ? -1 : 1;
	return c ? c : strcmp(a, b);
}

size_t ta_tblog_spans(char **files, size_t n, struct ta_buf *said)
{
	size_t i, j, k, kept = 0, most = 1;

	/* a worker's files together, its spans in name order, which is not
	 * number order if lengths differ (sorted by number below) */
	qsort(files, n, sizeof(*files), by_worker);
	for (i = 0; i < n; i = j) {
		size_t pick, count;
		const char *sp;
		size_t wl;

		for (j = i + 1; j < n && same_worker(files[i], files[j]); j++)
			;
		count = j - i;
		if (count == 1 || !ta_tblog_name(files[i], &wl, &sp)) {
			for (k = i; k < j; k++)
				files[kept++] = files[k];
			continue;
		}
		/* order this worker's spans by number */
		for (k = i + 1; k < j; k++) {
			char *f = files[k];
			size_t m = k;
			const char *fs;

			ta_tblog_name(f, &wl, &fs);
			while (m > i) {
				const char *ps;

				ta_tblog_name(files[m - 1], &wl, &ps);
				if (span_cmp(ps, fs) <= 0)
					break;
				files[m] = files[m - 1];
				m--;
			}
			files[m] = f;
		}
		pick = chosen_span > 0 ? (size_t)chosen_span - 1 : count - 1;
		if (count > most)
			most = count;
		if (pick >= count) {
			for (k = i; k < j; k++)
				free(files[k]);
			continue;
		}
		for (k = i; k < j; k++)
			if (k - i == pick)
				files[kept++] = files[k];
			else
				free(files[k]);
	}
	if (most > 1 && said)
		ta_buf_addf(said, "traceanalyze: a worker has %zu profiled spans "
			    "(tensorboard_trace_handler, a repeating schedule): reading span "
			    "%ld of each (--span N for another)\n", most,
			    chosen_span > 0 ? chosen_span : (long)most);
	return kept;
}

/* The newest trace's modification time in dir, or -1 if it holds none. */
static int64_t newest_trace(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int64_t best = -1;

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL) {
		char *full;
		struct stat sb;
		int ok;

		if (de->d_name[0] == '.' || !(ends_with(de->d_name, ".json") ||
					      ends_with(de->d_name, ".json.gz")))
			continue;
		full = ta_xmalloc(strlen(dir) + strlen(de->d_name) + 2);
		sprintf(full, "%s/%s", dir, de->d_name);
		ok = stat(full, &sb) == 0 && S_ISREG(sb.st_mode);
		free(full);
		if (ok) {
			int64_t t = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;

			if (t > best)
				best = t;
		}
	}
	closedir(d);
	return best;
}

char *ta_tblog_run(const char *path, struct ta_buf *said, struct ta_error *err)
{
	DIR *d = opendir(path);
	struct dirent *de;
	struct ta_buf names = { 0 };
	char *best = NULL, *given = NULL;
	int64_t best_t = -1;
	size_t runs = 0;

	if (!d)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		char *full;
		struct stat sb;
		int64_t t;

		if (de->d_name[0] == '.')
			continue;
		full = ta_xmalloc(strlen(path) + strlen(de->d_name) + 2);
		sprintf(full, "%s/%s", path, de->d_name);
		if (stat(full, &sb) < 0 || !S_ISDIR(sb.st_mode) || (t = newest_trace(full)) < 0) {
			free(full);
			continue;
		}
		runs++;
		ta_buf_addf(&names, "%s%s", names.len ? ", " : "", de->d_name);
		if (chosen_run && strcmp(chosen_run, de->d_name) == 0) {
			free(given);
			given = ta_xstrdup(full);
		}
		if (t > best_t || (t == best_t && best && strcmp(full, best) > 0)) {
			free(best);
			best = full;
			best_t = t;
		} else {
			free(full);
		}
	}
	closedir(d);
	if (chosen_run && !given && runs) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': no run '%s' (its runs: %s)", path,
			     chosen_run, names.s);
		free(best);
		ta_buf_free(&names);
		return NULL;
	}
	if (given) {
		free(best);
		best = given;
	} else if (best && runs > 1 && said) {
		ta_buf_addf(said, "traceanalyze: '%s' holds %zu runs (%s): reading the "
			    "newest, '%s' (--run NAME for another)\n", path, runs, names.s,
			    base_of(best));
	}
	ta_buf_free(&names);
	return best;
}

int64_t ta_tblog_rank(const char *path)
{
	char *dir;
	const char *base = base_of(path), *sp;
	size_t wl, n = 0, cap = 0, i, at = 0;
	char **workers = NULL;
	DIR *d;
	struct dirent *de;

	if (!ta_tblog_name(path, &wl, &sp))
		return -1;
	dir = base == path ? ta_xstrdup(".") : ta_xstrndup(path, (size_t)(base - path - 1));
	d = opendir(*dir ? dir : "/");
	free(dir);
	if (!d)
		return 0;
	/* the worker's place among the directory's workers, by name */
	while ((de = readdir(d)) != NULL) {
		size_t l;
		const char *s;

		if (!ta_tblog_name(de->d_name, &l, &s))
			continue;
		for (i = 0; i < n && !(strlen(workers[i]) == l &&
				       strncmp(workers[i], de->d_name, l) == 0); i++)
			;
		if (i < n)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			workers = ta_xrealloc(workers, cap * sizeof(*workers));
		}
		workers[n] = ta_xmalloc(l + 1);
		memcpy(workers[n], de->d_name, l);
		workers[n++][l] = '\0';
	}
	closedir(d);
	{
		char *mine = ta_xmalloc(wl + 1);

		memcpy(mine, base, wl);
		mine[wl] = '\0';
		for (i = 0; i < n; i++) {
			at += strcmp(workers[i], mine) < 0;
			free(workers[i]);
		}
		free(mine);
	}
	free(workers);
	return (int64_t)at;
}
