/* traceanalyze cache: what the cache of parsed traces holds, and pruning
 * or clearing it. */
#include "cli.h"
#include "commands.h"
#include "ta_cache.h"
#include "ta_report.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct ta_col cols[] = {
	{ "entry", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "mb", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "last_used", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "made", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "state", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "traces", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};

static const char *const state_names[] = { "current", "stale", "unknown" };

static void usage(FILE *out)
{
	fputs("usage: traceanalyze cache [list|prune|clear] [--format text|csv|json]\n\n"
	      "The cache of parsed traces ($TRACEANALYZE_CACHE_DIR, else\n"
	      "$XDG_CACHE_HOME/traceanalyze, else ~/.cache/traceanalyze).\n\n"
	      "  list   each entry: size, when last used and made, whether its traces\n"
	      "         are unchanged (current), changed or gone (stale), or unknown\n"
	      "         (written by an older traceanalyze), and the traces (default)\n"
	      "  prune  remove stale and unknown entries, then the least recently used\n"
	      "         while the cache is over $TRACEANALYZE_CACHE_MAX (default 2G),\n"
	      "         and the notes of databases checked (checked/) that changed since\n"
	      "  clear  remove every entry, and every note of a database checked\n", out);
}

static void when(time_t t, char *buf, size_t len)
{
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M", &tm);
}

/* "a, b, c" (the first, and how many more past 3). */
static void traces(const char *sources, char *buf, size_t len)
{
	const char *p = sources;
	size_t n = 0, used = 0, lines = 0;

	if (!sources) {
		snprintf(buf, len, "(unknown)");
		return;
	}
	for (; *p; p++)
		lines += *p == '\n';
	buf[0] = '\0';
	for (p = sources; *p && n < 3; n++) {
		size_t l = strcspn(p, "\n");

		used += (size_t)snprintf(buf + used, used < len ? len - used : 0,
					 "%s%.*s", n ? ", " : "", (int)l, p);
		p += l + (p[l] == '\n');
	}
	if (lines > 3 && used < len)
		snprintf(buf + used, len - used, " and %zu more", lines - 3);
}

static int list(const char *dir, enum ta_format fmt)
{
	struct ta_cache_entry *v;
	struct ta_table *t = ta_table_new("Cache entries, least recently used first",
					  cols, 6);
	size_t n, i;
	double total = 0;

	if (ta_cache_entries(dir, &v, &n) < 0)
		n = 0, v = NULL; /* no cache yet: an empty list */
	for (i = 0; i < n; i++) {
		size_t r = ta_table_add_row(t);
		const char *base = strrchr(v[i].db, '/');
		char buf[1024];

		ta_table_set_text(t, r, 0, base ? base + 1 : v[i].db);
		ta_table_set_real(t, r, 1, (double)(v[i].bytes / 100000) / 10);
		when(v[i].used, buf, sizeof(buf));
		ta_table_set_text(t, r, 2, buf);
		when(v[i].made, buf, sizeof(buf));
		ta_table_set_text(t, r, 3, buf);
		ta_table_set_text(t, r, 4, state_names[v[i].state]);
		traces(v[i].sources, buf, sizeof(buf));
		ta_table_set_text(t, r, 5, buf);
		total += (double)v[i].bytes;
	}
	if (fmt == TA_FMT_TEXT)
		ta_buf_addf(&t->tail, "\n%zu entries, %.1f MB in '%s'\n", n, total / 1e6,
			    dir);
	ta_report_write(stdout, t, fmt);
	ta_table_free(t);
	ta_cache_entries_free(v, n);
	return ta_cli_finish_output(stdout, "stdout");
}

static int prune(const char *dir, int all)
{
	struct ta_cache_entry *v;
	size_t n, i, gone = 0;
	double freed = 0;
	int64_t max = ta_cache_max();

	if (max < 0) {
		fprintf(stderr, "traceanalyze: TRACEANALYZE_CACHE_MAX='%s' is not a "
			"size (such as 500M or 2G)\n", getenv("TRACEANALYZE_CACHE_MAX"));
		return TA_EXIT_USAGE;
	}
	if (ta_cache_entries(dir, &v, &n) < 0) {
		printf("removed 0 entries (no cache in '%s')\n", dir);
		return ta_cli_finish_output(stdout, "stdout");
	}
	for (i = 0; i < n; i++)
		if ((all || v[i].state != TA_CACHE_CURRENT) && ta_cache_remove(v[i].db) == 0)
			gone++, freed += (double)v[i].bytes;
	ta_cache_entries_free(v, n);
	/* what sits at an entry's name and is no entry (a dangling link, an
	 * empty directory): no entry's size, but it blocks the name */
	if (all)
		gone += ta_cache_clear_odd(dir);
	/* and what it noted of checks passed: all, or of files changed */
	ta_cache_forget_checks(dir, all);
	if (!all && ta_cache_entries(dir, &v, &n) == 0) { /* then the cap */
		double before = 0, after = 0;
		struct ta_cache_entry *w;
		size_t m;

		for (i = 0; i < n; i++)
			before += (double)v[i].bytes;
		ta_cache_evict(dir, max, NULL);
		if (ta_cache_entries(dir, &w, &m) == 0) {
			for (i = 0; i < m; i++)
				after += (double)w[i].bytes;
			gone += n - m;
			freed += before - after;
			ta_cache_entries_free(w, m);
		}
		ta_cache_entries_free(v, n);
	}
	printf("removed %zu entries, %.1f MB, from '%s'\n", gone, freed / 1e6, dir);
	return ta_cli_finish_output(stdout, "stdout");
}

static int cmd_cache(int argc, char **argv)
{
	enum ta_format fmt = TA_FMT_TEXT;
	const char *verb = "list";
	char dir[PATH_MAX];
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return ta_cli_finish_output(stdout, "stdout");
		} else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
			if (ta_format_parse(argv[++i], &fmt) < 0) {
				fprintf(stderr, "traceanalyze: unknown format '%s' (text, "
					"csv, json)\n", argv[i]);
				return TA_EXIT_USAGE;
			}
		} else if (i == 1 && argv[i][0] != '-') {
			verb = argv[i];
		} else {
			fprintf(stderr, "traceanalyze: cache: unexpected '%s'\n", argv[i]);
			usage(stderr);
			return TA_EXIT_USAGE;
		}
	}
	rc = ta_cache_dir(dir, sizeof(dir));
	if (rc < 0) {
		fprintf(stderr, "traceanalyze: no cache directory (%s)\n", rc == -1 ?
			"no HOME, XDG_CACHE_HOME or TRACEANALYZE_CACHE_DIR" :
			"name too long");
		return TA_EXIT_SYSTEM;
	}
	if (strcmp(verb, "list") == 0)
		return list(dir, fmt);
	if (strcmp(verb, "prune") == 0)
		return prune(dir, 0);
	if (strcmp(verb, "clear") == 0)
		return prune(dir, 1);
	fprintf(stderr, "traceanalyze: cache: '%s' is not list, prune or clear\n", verb);
	return TA_EXIT_USAGE;
}

const struct ta_command ta_command_cache = {
	"cache", cmd_cache, "list, prune or clear the cache of parsed traces",
	TA_SPREAD_NONE, NULL, 0, { [TA_MODE_HTA] = TA_COMPAT_RULES }, NULL
};
