/* Allocation, errors, warnings and the string buffer used everywhere. */
#include <ctype.h>
#include "ta.h"

#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ta_quiet;

void ta_error_set(struct ta_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	err->code = code;
	err->damaged = 0;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

const char *ta_msg_unnamed(const char *msg, const char *path)
{
	size_t n = strlen(path);

	if (n && msg[0] == '\'' && strncmp(msg + 1, path, n) == 0 &&
	    strncmp(msg + 1 + n, "': ", 3) == 0)
		return msg + n + 4;
	return msg;
}

/* A C0 or C1 control (U+0080-U+009F: CSI among them, as UTF-8) at s:
 * its length in bytes, 0 if none. */
static size_t control_at(const char *s)
{
	unsigned char c = (unsigned char)s[0];

	if (c < 0x20 || c == 0x7f)
		return 1;
	if (c == 0xc2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] <= 0x9f)
		return 2;
	return 0;
}

char *ta_no_addresses(char *s)
{
	char *in = s, *o = s;

	while (*in) {
		if (strncmp(in, " at 0x", 6) == 0 && isxdigit((unsigned char)in[6])) {
			for (in += 6; isxdigit((unsigned char)*in); in++)
				;
			continue;
		}
		*o++ = *in++;
	}
	*o = '\0';
	return s;
}

const char *ta_no_controls(char *buf, size_t len, const char *s)
{
	size_t i = 0, n;

	for (; s && *s && i + 1 < len; s += n ? n : 1)
		buf[i++] = (n = control_at(s)) ? '?' : *s;
	if (len)
		buf[i] = '\0';
	return buf;
}

/* A warning is one line: a file's name or a trace's text in it is
 * anyone's, and no control character of theirs reaches the terminal
 * (ESC sequences, a newline that forges a second warning). */
static void say(const char *prefix, const char *fmt, va_list ap)
{
	char small[1024], *line = small;
	const char *s;
	va_list again;
	size_t n;
	int len;

	if (ta_quiet)
		return;
	va_copy(again, ap);
	len = vsnprintf(small, sizeof(small), fmt, ap);
	if (len >= (int)sizeof(small)) {   /* a long path: whole, not cut */
		line = ta_xmalloc((size_t)len + 1);
		vsnprintf(line, (size_t)len + 1, fmt, again);
	}
	va_end(again);
	fputs(prefix, stderr);
	for (s = len < 0 ? "" : line; *s; s += n ? n : 1)
		fputc((n = control_at(s)) ? '?' : *s, stderr);
	fputc('\n', stderr);
	if (line != small)
		free(line);
}

void ta_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("traceanalyze: warning: ", fmt, ap);
	va_end(ap);
}

void ta_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("traceanalyze: ", fmt, ap);
	va_end(ap);
}

/* A TA_WARN_SUM line's counts and template; 0 if it is none. */
static int sum_line(const char *line, size_t *n, size_t *of, const char **tmpl)
{
	char *end;

	if (line[0] != TA_WARN_SUM)
		return 0;
	*n = strtoull(line + 1, &end, 10);
	if (*end != TA_WARN_SUM)
		return 0;
	*of = strtoull(end + 1, &end, 10);
	if (*end != TA_WARN_SUM)
		return 0;
	*tmpl = end + 1;
	return 1;
}

/* tmpl with {n}, {of} and {s} put in. */
static void say_sum(const char *tmpl, size_t n, size_t of)
{
	struct ta_buf b = { 0 };
	const char *p;

	if (n == 0)   /* each shard says its count, 0 too: none at all, nothing said */
		return;
	for (p = tmpl; *p; p++) {
		if (strncmp(p, "{n}", 3) == 0)
			ta_buf_addf(&b, "%zu", n), p += 2;
		else if (strncmp(p, "{of}", 4) == 0)
			ta_buf_addf(&b, "%zu", of), p += 3;
		else if (strncmp(p, "{s}", 3) == 0)
			ta_buf_adds(&b, n == 1 ? "" : "s"), p += 2;
		else
			ta_buf_addc(&b, *p);
	}
	ta_warn("%s", b.s ? b.s : "");
	free(b.s);
}

void ta_warn_lines(struct ta_buf *b)
{
	char *line, *save = NULL, **said = NULL;
	size_t n = 0, i, k, cnt, of;
	const char *tmpl, *other;

	/* each line once: shards that each say the same of the job; a line
	 * of counts once, with every shard's added, where the first was */
	for (line = b->s ? strtok_r(b->s, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		said = ta_xrealloc(said, (n + 1) * sizeof(*said));
		said[n++] = line;
	}
	for (i = 0; i < n; i++) {
		if (!said[i])
			continue;
		if (!sum_line(said[i], &cnt, &of, &tmpl)) {
			for (k = 0; k < i && !(said[k] && strcmp(said[k], said[i]) == 0); k++)
				;
			if (k == i)
				ta_warn("%s", said[i]);
			continue;
		}
		for (k = i + 1; k < n; k++) {
			size_t c2, o2;

			if (said[k] && sum_line(said[k], &c2, &o2, &other) &&
			    strcmp(other, tmpl) == 0) {
				cnt += c2, of += o2;
				said[k] = NULL;
			}
		}
		say_sum(tmpl, cnt, of);
	}
	free(said);
	ta_buf_reset(b);
}

int ta_cores(void)
{
	cpu_set_t set;
	long n;

	/* the affinity mask, not the machine: containers and taskset */
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

void ta_die_oom(void)
{
	fputs("traceanalyze: out of memory\n", stderr);
	exit(TA_EXIT_SYSTEM);
}

void *ta_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		ta_die_oom();
	return p;
}

void *ta_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		ta_die_oom();
	return p;
}

void *ta_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		ta_die_oom();
	return p;
}

char *ta_xstrndup(const char *s, size_t n)
{
	char *p = ta_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

double ta_strtod(const char *s, char **end)
{
	const char *p = s;
	char buf[128];
	size_t digits = 0, n;
	double v;

	p += *p == '-' || *p == '+';
	for (; isdigit((unsigned char)*p); p++)
		digits++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			digits++;
	if (!digits) {
		*end = (char *)s;
		return 0;
	}
	if ((*p == 'e' || *p == 'E') &&
	    (isdigit((unsigned char)p[1]) ||
	     ((p[1] == '-' || p[1] == '+') && isdigit((unsigned char)p[2])))) {
		for (p += 2; isdigit((unsigned char)*p); p++)
			;
	}
	/* strtod on the span alone: on the whole text it would go on into
	 * "0x10"'s x */
	n = (size_t)(p - s);
	if (n >= sizeof(buf)) {
		*end = (char *)s;
		return 0;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	v = strtod(buf, NULL);
	*end = (char *)p;
	return v;
}

char *ta_xstrdup(const char *s)
{
	return ta_xstrndup(s, strlen(s));
}

void ta_buf_grow(struct ta_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need <= b->cap)
		return;
	b->cap = b->cap ? b->cap : 64;
	while (b->cap < need)
		b->cap *= 2;
	b->s = ta_xrealloc(b->s, b->cap);
}

void ta_buf_adds(struct ta_buf *b, const char *s)
{
	ta_buf_add(b, s, strlen(s));
}

void ta_buf_addf(struct ta_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	ta_buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void ta_buf_reset(struct ta_buf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

void ta_buf_free(struct ta_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

void ta_qsort(void *base, size_t n, size_t size,
	      int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

int ta_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

size_t ta_lower_i64(const int64_t *v, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t ta_edit_distance(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b), i, j, prev, cur[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (j = 0; j <= lb; j++)
		cur[j] = j;
	for (i = 1; i <= la; i++) {
		prev = cur[0];
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t sub = prev + (a[i - 1] != b[j - 1]), del = cur[j] + 1;
			size_t ins = cur[j - 1] + 1;

			prev = cur[j];
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
	}
	return cur[lb];
}

void ta_stderr_replay(FILE *f)
{
	struct ta_buf b = { 0 };

	ta_buf_read_file(&b, f);
	ta_stderr_bytes(b.s, b.len);
	ta_buf_free(&b);
}

void ta_stderr_bytes(const char *s, size_t n)
{
	if (n)
		fwrite(s, 1, n, stderr);
}

void ta_buf_read_file(struct ta_buf *b, FILE *f)
{
	char buf[4096];
	size_t n;

	rewind(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		ta_buf_add(b, buf, n);
}
