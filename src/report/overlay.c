/* critical-path --trace OUT: the input trace again, every event as it was
 * written, with "critical": 1 in the args of the events on the critical
 * path and a flow (ph s/f, cat critical_path) along it, so that Perfetto
 * UI or chrome://tracing shows the path. The JSON is streamed through
 * (yajl's parser into its generator), so memory does not grow with the
 * trace; numbers keep their text. Gzipped when OUT ends in .gz. */
#include "ta_analyses.h"
#include "ta_report.h"

#include "ta_files.h"
#include "ta_cleanup.h"

#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

struct out {
	FILE *f;
	gzFile gz;
	int failed;
};

struct copy {
	yajl_gen g;
	const int64_t *marked;      /* event positions on the path, sorted */
	size_t nmarked;
	const struct ta_path_node *flow;
	size_t nflow;
	int depth;                  /* of the value being read */
	int events;                 /* inside the top-level traceEvents array */
	int64_t index;              /* the current event's position */
	int mark, saw_args;         /* the current event is on the path */
	int in_args;                /* inside its args */
	int key_events, key_args;   /* the last key read was one of these */
};

static void emit(void *ctx, const char *s, size_t len)
{
	struct out *o = ctx;

	if (o->gz)
		o->failed |= gzwrite(o->gz, s, (unsigned)len) != (int)len;
	else
		o->failed |= fwrite(s, 1, len, o->f) != len;
}

static int marked(const struct copy *c, int64_t idx)
{
	size_t a = 0, b = c->nmarked;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (c->marked[m] < idx)
			a = m + 1;
		else
			b = m;
	}
	return a < c->nmarked && c->marked[a] == idx;
}

static void key(yajl_gen g, const char *k)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

static void critical(yajl_gen g)
{
	key(g, "critical");
	yajl_gen_integer(g, 1);
}

/* ts in µs as the profiler writes it: exact from ns. */
static void ts_us(yajl_gen g, int64_t ns)
{
	char buf[40];
	int n = snprintf(buf, sizeof(buf), "%s%lld.%03lld", ns < 0 ? "-" : "",
			 (long long)llabs(ns / 1000), (long long)llabs(ns % 1000));

	yajl_gen_number(g, buf, (size_t)n);
}

/* The flows: from each node to the next later one of the same step. */
static void flows(struct copy *c)
{
	size_t i;
	long long id = 0;

	for (i = 0; i + 1 < c->nflow; i++) {
		const struct ta_path_node *a = &c->flow[i], *b = &c->flow[i + 1];
		int k;

		if (a->step != b->step || !a->ids || !b->ids)
			continue;
		id++;
		for (k = 0; k < 2; k++) {
			const struct ta_path_node *n = k ? b : a;

			yajl_gen_map_open(c->g);
			key(c->g, "ph");
			yajl_gen_string(c->g, (const unsigned char *)(k ? "f" : "s"), 1);
			if (k) {
				key(c->g, "bp");
				yajl_gen_string(c->g, (const unsigned char *)"e", 1);
			}
			key(c->g, "id");
			yajl_gen_integer(c->g, id);
			key(c->g, "cat");
			yajl_gen_string(c->g, (const unsigned char *)"critical_path", 13);
			key(c->g, "name");
			yajl_gen_string(c->g, (const unsigned char *)"critical_path", 13);
			key(c->g, "pid");
			yajl_gen_integer(c->g, n->pid);
			key(c->g, "tid");
			yajl_gen_integer(c->g, n->tid);
			key(c->g, "ts");
			ts_us(c->g, n->ts);
			yajl_gen_map_close(c->g);
		}
	}
}

static int on_null(void *ctx)
{
	struct copy *c = ctx;

	c->key_events = c->key_args = 0;
	return yajl_gen_null(c->g) == yajl_gen_status_ok;
}

static int on_bool(void *ctx, int v)
{
	struct copy *c = ctx;

	c->key_events = c->key_args = 0;
	return yajl_gen_bool(c->g, v) == yajl_gen_status_ok;
}

static int on_number(void *ctx, const char *s, size_t len)
{
	struct copy *c = ctx;

	c->key_events = c->key_args = 0;
	return yajl_gen_number(c->g, s, len) == yajl_gen_status_ok;
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	struct copy *c = ctx;

	c->key_events = c->key_args = 0;
	return yajl_gen_string(c->g, s, len) == yajl_gen_status_ok;
}

static int on_key(void *ctx, const unsigned char *s, size_t len)
{
	struct copy *c = ctx;

	c->key_events = c->depth == 1 && len == 11 && memcmp(s, "traceEvents", 11) == 0;
	c->key_args = c->events && c->depth == 3 && len == 4 && memcmp(s, "args", 4) == 0;
	if (c->key_args && c->mark)
		c->saw_args = 1;
	return yajl_gen_string(c->g, s, len) == yajl_gen_status_ok;
}

static int on_map_open(void *ctx)
{
	struct copy *c = ctx;

	c->depth++;
	if (c->events && c->depth == 3) { /* an event */
		c->mark = marked(c, c->index);
		c->saw_args = 0;
	}
	if (c->depth == 4)
		c->in_args = c->key_args;
	c->key_events = c->key_args = 0;
	return yajl_gen_map_open(c->g) == yajl_gen_status_ok;
}

static int on_map_close(void *ctx)
{
	struct copy *c = ctx;

	if (c->events && c->mark && c->depth == 4 && c->in_args) {
		critical(c->g);
		c->in_args = 0;
	}
	if (c->events && c->depth == 3) {
		if (c->mark && !c->saw_args) {
			key(c->g, "args");
			yajl_gen_map_open(c->g);
			critical(c->g);
			yajl_gen_map_close(c->g);
		}
		c->mark = 0;
		c->index++;
	}
	c->depth--;
	c->key_events = c->key_args = 0;
	return yajl_gen_map_close(c->g) == yajl_gen_status_ok;
}

static int on_array_open(void *ctx)
{
	struct copy *c = ctx;

	c->depth++;
	if (c->key_events && c->depth == 2)
		c->events = 1;
	c->key_events = c->key_args = 0;
	return yajl_gen_array_open(c->g) == yajl_gen_status_ok;
}

static int on_array_close(void *ctx)
{
	struct copy *c = ctx;

	if (c->events && c->depth == 2) {
		flows(c);
		c->events = 0;
	}
	c->depth--;
	c->key_events = c->key_args = 0;
	return yajl_gen_array_close(c->g) == yajl_gen_status_ok;
}

static const yajl_callbacks callbacks = {
	on_null, on_bool, NULL, NULL, on_number, on_string, on_map_open, on_key,
	on_map_close, on_array_open, on_array_close
};

static int cmp_node(const void *x, const void *y)
{
	const struct ta_path_node *a = x, *b = y;

	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int same_trace(const char *src, const char *dst)
{
	struct stat a, b;

	return stat(src, &a) == 0 && stat(dst, &b) == 0 && ta_same_file(&a, &b);
}

/* A temporary file beside dst, with the mode dst would have had (the old
 * one's, or what the umask leaves: mkstemp's is 0600), removed if the run
 * is killed; NULL where dst is a device, a FIFO, a directory or not ours
 * to write beside (written in place then). */
static char *temp_beside(const char *dst, void **clean)
{
	size_t len = strlen(dst);
	char *tmp = ta_xmalloc(len + 16);
	struct stat ds;
	mode_t um;
	int fd;

	snprintf(tmp, len + 16, "%s.tmp.XXXXXX", dst);
	if ((stat(dst, &ds) == 0 && !S_ISREG(ds.st_mode)) ||
	    (fd = ta_cleanup_mkstemp(tmp, clean)) < 0) {
		free(tmp);
		return NULL;
	}
	um = umask(0);
	umask(um);
	fchmod(fd, stat(dst, &ds) == 0 ? ds.st_mode & 07777 : 0666 & ~um);
	close(fd);
	return tmp;
}

/* Copies src through c into o; -1 (err set) when it cannot be read whole
 * or o cannot be written. */
static int copy_marked(gzFile in, struct copy *c, struct out *o,
		       const char *src, const char *dst, struct ta_error *err)
{
	unsigned char buf[1 << 16];
	yajl_handle h;
	int n, rc = 0;

	c->g = yajl_gen_alloc(NULL);
	yajl_gen_config(c->g, yajl_gen_print_callback, emit, o);
	h = yajl_alloc(&callbacks, NULL, c);
	while ((n = gzread(in, buf, sizeof(buf))) > 0)
		if (yajl_parse(h, buf, (size_t)n) != yajl_status_ok)
			break;
	if (n < 0 || yajl_complete_parse(h) != yajl_status_ok) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': cannot be read again whole "
			     "(damaged?); no overlay written", src);
		rc = -1;
	}
	emit(o, "\n", 1);
	if (o->gz ? gzclose(o->gz) != Z_OK : o->f != stdout && fclose(o->f) != 0)
		o->failed = 1;
	if (!rc && o->failed) {
		ta_error_set(err, TA_EXIT_SYSTEM, "cannot write '%s'", dst);
		rc = -1;
	}
	yajl_free(h);
	yajl_gen_free(c->g);
	return rc;
}

/* Writes src with the path's nodes marked into dst (tmp: beside it). */
static int overlay(gzFile in, struct copy *c, const char *src, const char *dst,
		   const char *tmp, struct ta_error *err)
{
	struct out o = { NULL, NULL, 0 };
	size_t len = strlen(dst);

	if (strcmp(dst, "-") == 0)
		o.f = stdout;
	else if (len > 3 && strcmp(dst + len - 3, ".gz") == 0)
		o.gz = gzopen(tmp ? tmp : dst, "wb6");
	else
		o.f = fopen(tmp ? tmp : dst, "w");
	if (!o.f && !o.gz) {
		ta_error_set(err, TA_EXIT_SYSTEM, "cannot write '%s': %s", dst, strerror(errno));
		return -1;
	}
	if (copy_marked(in, c, &o, src, dst, err) < 0)
		return -1;
	if (tmp && rename(tmp, dst) < 0) {
		ta_error_set(err, TA_EXIT_SYSTEM, "cannot write '%s': %s", dst, strerror(errno));
		return -1;
	}
	return 0;
}

int ta_report_overlay(const char *src, const struct ta_path_nodes *nodes,
		      const char *dst, struct ta_error *err)
{
	struct copy c;
	int64_t *idx = ta_xcalloc(nodes->n + 1, sizeof(*idx));
	struct ta_path_node *flow = ta_xcalloc(nodes->n + 1, sizeof(*flow));
	gzFile in = gzopen(src, "rb");
	char *tmp = NULL;
	void *tmp_clean = NULL;
	size_t i;
	int rc;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < nodes->n; i++)
		idx[i] = nodes->v[i].idx;
	ta_qsort(idx, nodes->n, sizeof(*idx), ta_cmp_i64);
	if (nodes->n) /* an empty path: v may be NULL */
		memcpy(flow, nodes->v, nodes->n * sizeof(*flow));
	ta_qsort(flow, nodes->n, sizeof(*flow), cmp_node);
	c.marked = idx;
	c.nmarked = nodes->n;
	c.flow = flow;
	c.nflow = nodes->n;
	if (!in) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': %s", src, strerror(errno));
		rc = -1;
	} else if (same_trace(src, dst)) { /* never over the trace it reads */
		ta_error_set(err, TA_EXIT_USAGE, "'%s' is the trace it reads; "
			     "refusing to write over it", dst);
		rc = -1;
		gzclose(in);
	} else {
		/* written beside dst and renamed once whole: a trace that
		 * cannot be read again, or a full disk, leaves an old dst as
		 * it was */
		if (strcmp(dst, "-") != 0)
			tmp = temp_beside(dst, &tmp_clean);
		rc = overlay(in, &c, src, dst, tmp, err);
		gzclose(in);
	}
	if (tmp) {
		if (rc)
			unlink(tmp);
		ta_cleanup_drop(tmp_clean);
		free(tmp);
	}
	free(idx);
	free(flow);
	return rc;
}
