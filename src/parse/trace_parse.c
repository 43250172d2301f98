/* yajl callbacks that turn a Chrome trace into a stream of ta_events.
 * The document is never held in memory: one event at a time, plus any
 * nested value being captured as text. */
#include "gzread.h"
#include "jsoncap.h"
#include "parse_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

enum top { TOP_NONE, TOP_OBJECT, TOP_ARRAY };

struct pstate {
	const struct ta_sink *sink;
	struct ta_parse_result *res;
	enum top top;
	int depth;          /* containers open, outside skip/capture */
	int skip;           /* depth inside a value being skipped */
	int capture;        /* depth inside a value being captured */
	int events_depth;   /* depth of the traceEvents array, 0 if not in */
	int saw_events;
	int cur;            /* field or TA_KEY_* the next value belongs to */
	int cap_field;      /* field a capture fills; TA_KEY_NONE for meta */
	int di_rank_next;   /* next value is distributedInfo.rank */
	struct ta_buf topkey;
	struct ta_jsoncap cap;
	struct ta_event ev;
	char ts_text[48], dur_text[48];
	int bad_time;       /* this event's ts or dur is not a usable number */
	int stopped;
	int64_t ncb;        /* callbacks so far: none in a piece = a long token */
	int long_string;    /* the next string is a too-long one, cut short */
	int boundary;       /* the next '{' is asked: does an event start here? */
	int at_boundary;    /* its answer */
};

static int in_event(const struct pstate *p)
{
	return p->events_depth && p->depth == p->events_depth + 1;
}

static int in_args(const struct pstate *p)
{
	return p->events_depth && p->depth == p->events_depth + 2;
}

static void event_reset(struct pstate *p)
{
	struct ta_event *ev = &p->ev;

	ta_buf_reset(&ev->arena);
	ta_event_clear_fields(ev);
	ev->has_ts = ev->has_dur = ev->ts_is_float = 0;
	ev->ts_ns = ev->dur_ns = ev->hta_ts_ns = ev->hta_dur_ns = 0;
	p->ev.index = p->res->events;
	p->ts_text[0] = p->dur_text[0] = '\0';
	p->bad_time = 0;
}

static void put_text(struct pstate *p, int field, const char *s, size_t len)
{
	struct ta_val *v = &p->ev.f[field];

	TA_EVENT_SET(&p->ev, field);
	v->type = TA_VAL_TEXT;
	v->off = p->ev.arena.len;
	if (!memchr(s, '\0', len)) {
		v->len = len;
		ta_buf_add(&p->ev.arena, s, len);
	} else { /* an escaped \u0000: U+FFFD, so that names stay apart */
		size_t i;

		for (i = 0; i < len; i++)
			if (s[i])
				ta_buf_addc(&p->ev.arena, s[i]);
			else
				ta_buf_add(&p->ev.arena, "\xEF\xBF\xBD", 3);
		v->len = p->ev.arena.len - v->off;
	}
	ta_buf_addc(&p->ev.arena, '\0');
}

static void put_number(struct pstate *p, int field, const char *s, size_t len)
{
	struct ta_val *v = &p->ev.f[field];
	char tmp[64];

	TA_EVENT_SET(&p->ev, field);
	if (ta_parse_int64(s, len, &v->i) == 0) {
		v->type = TA_VAL_INT;
		return;
	}
	if (len < sizeof(tmp) && (memchr(s, '.', len) || memchr(s, 'e', len) ||
				  memchr(s, 'E', len))) {
		memcpy(tmp, s, len);
		tmp[len] = '\0';
		v->d = strtod(tmp, NULL);
		if (isfinite(v->d)) {
			v->type = TA_VAL_REAL;
			return;
		}
	}
	put_text(p, field, s, len); /* an id beyond int64: keep the digits */
}

/* Returns 0, or -1 for text too long to be a timestamp. */
static int put_time(char *dst, size_t cap, const char *s, size_t len)
{
	if (len >= cap) {
		dst[0] = '\0';
		return -1;
	}
	memcpy(dst, s, len);
	dst[len] = '\0';
	return 0;
}

/* A scalar value outside skip/capture. */
static void scalar(struct pstate *p, const char *s, size_t len, int is_num,
		   int is_str)
{
	if (p->depth == 1 && p->top == TOP_OBJECT) {
		struct ta_jsoncap *c = &p->cap;

		ta_jsoncap_reset(c);
		if (is_str)
			ta_jsoncap_string(c, s, len);
		else
			ta_jsoncap_raw(c, s, len);
		if (p->sink->meta && p->sink->meta(p->sink->ctx, p->topkey.s,
						   c->out.s, c->out.len))
			p->stopped = 1;
		return;
	}
	if (p->events_depth && p->depth == p->events_depth) {
		p->res->events++; /* not an event, but it takes an index */
		return;
	}
	if (!in_event(p) && !in_args(p))
		return;
	if (p->cur == TA_KEY_TS || p->cur == TA_KEY_DUR) {
		char *dst = p->cur == TA_KEY_TS ? p->ts_text : p->dur_text;

		if (!is_num || put_time(dst, sizeof(p->ts_text), s, len) < 0)
			p->bad_time = 1;
	} else if (p->cur >= 0 && is_num)
		put_number(p, p->cur, s, len);
	else if (p->cur >= 0 && is_str)
		put_text(p, p->cur, s, len);
	else if (p->cur >= 0 && s[0] != 'n') /* true / false: no field we keep
					      * is a flag, and a "true" message
					      * size is not 1 element: the word;
					      * null: absent, as pandas has it */
		put_text(p, p->cur, s, len);
}

static int cap_active(struct pstate *p)
{
	return p->capture > 0;
}

/* distributedInfo.rank: a whole number from 0 (1.0 is 1, as the peers
 * of a send are read); anything else kept as written, to be named. */
static void di_rank(struct pstate *p, const char *s, size_t len)
{
	int64_t r;
	char buf[32], *end;
	double d;

	p->di_rank_next = 0;
	if (ta_parse_int64(s, len, &r) == 0 && r >= 0) {
		p->res->have_rank = 1;
		p->res->rank = r;
		return;
	}
	if (len < sizeof(buf)) {
		memcpy(buf, s, len);
		buf[len] = '\0';
		d = strtod(buf, &end);
		if (*end == '\0' && len && d >= 0 && d < 9007199254740992.0 &&
		    d == (double)(int64_t)d && strspn(buf, "0123456789.eE+") == len) {
			p->res->have_rank = 1;
			p->res->rank = (int64_t)d;
			return;
		}
	}
	snprintf(p->res->bad_rank, sizeof(p->res->bad_rank), "%.*s%s",
		 (int)(len < 20 ? len : 20), s, len < 20 ? "" : "...");
}

static int cb_null(void *ctx)
{
	struct pstate *p = ctx;

	p->ncb++;
	if (p->skip)
		return 1;
	if (cap_active(p)) {
		ta_jsoncap_raw(&p->cap, "null", 4);
		if (p->di_rank_next)
			di_rank(p, "null", 4);
		return 1;
	}
	scalar(p, "null", 4, 0, 0);
	return !p->stopped;
}

static int cb_bool(void *ctx, int b)
{
	struct pstate *p = ctx;
	const char *s = b ? "true" : "false";

	p->ncb++;
	if (p->skip)
		return 1;
	if (cap_active(p)) {
		ta_jsoncap_raw(&p->cap, s, strlen(s));
		if (p->di_rank_next)
			di_rank(p, s, strlen(s));
		return 1;
	}
	scalar(p, s, strlen(s), 0, 0);
	return !p->stopped;
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	struct pstate *p = ctx;

	p->ncb++;
	if (p->skip)
		return 1;
	if (cap_active(p)) {
		if (p->di_rank_next)
			di_rank(p, s, len);
		ta_jsoncap_raw(&p->cap, s, len);
		return 1;
	}
	scalar(p, s, len, 1, 0);
	return !p->stopped;
}

/* A string past TA_TOKEN_MAX arrives cut short (see struct feeder): it
 * counts as the empty string. */
static void long_string(struct pstate *p, const unsigned char **u, size_t *len)
{
	p->long_string = 0;
	p->res->long_strings++;
	*u = (const unsigned char *)"";
	*len = 0;
}

static int cb_string(void *ctx, const unsigned char *u, size_t len)
{
	struct pstate *p = ctx;
	const char *s;

	p->ncb++;
	if (p->long_string)
		long_string(p, &u, &len);
	s = (const char *)u;

	if (p->skip)
		return 1;
	if (cap_active(p)) {
		if (p->di_rank_next)
			di_rank(p, s, len);
		ta_jsoncap_string(&p->cap, s, len);
		return 1;
	}
	scalar(p, s, len, 0, 1);
	return !p->stopped;
}

static int cb_key(void *ctx, const unsigned char *u, size_t len)
{
	struct pstate *p = ctx;
	const char *k;

	p->ncb++;
	if (p->long_string)
		long_string(p, &u, &len);
	k = (const char *)u;

	if (p->skip)
		return 1;
	if (cap_active(p)) {
		ta_jsoncap_key(&p->cap, k, len);
		p->di_rank_next = p->capture == 1 && p->cap_field == TA_KEY_NONE &&
			strcmp(p->topkey.s, "distributedInfo") == 0 &&
			len == 4 && memcmp(k, "rank", 4) == 0;
		return 1;
	}
	if (p->depth == 1 && p->top == TOP_OBJECT) {
		ta_buf_reset(&p->topkey);
		ta_buf_add(&p->topkey, k, len);
	} else if (in_event(p)) {
		p->cur = ta_event_key(k, len);
	} else if (in_args(p)) {
		p->cur = ta_arg_key(k, len);
	}
	return 1;
}

static void begin_capture(struct pstate *p, int field, char bracket)
{
	p->capture = 1;
	p->cap_field = field;
	p->di_rank_next = 0;
	ta_jsoncap_reset(&p->cap);
	ta_jsoncap_open(&p->cap, bracket);
}

static void end_capture(struct pstate *p)
{
	struct ta_jsoncap *c = &p->cap;

	if (p->cap_field >= 0) {
		put_text(p, p->cap_field, c->out.s, c->out.len);
	} else if (!c->overflow && p->sink->meta) {
		if (p->sink->meta(p->sink->ctx, p->topkey.s, c->out.s, c->out.len))
			p->stopped = 1;
	}
}

/* A CUPTI range profiler event: its args are hardware counters, whatever
 * their names; they are kept whole (as JSON) when its category comes
 * before them, as Kineto writes it. */
static int counter_range(const struct ta_event *ev)
{
	static const char cat[] = "cuda_profiler_range";

	return ev->f[TA_F_CAT].type == TA_VAL_TEXT &&
	       ev->f[TA_F_CAT].len == sizeof(cat) - 1 &&
	       memcmp(ta_event_text(ev, TA_F_CAT), cat, sizeof(cat) - 1) == 0;
}

static int open_container(struct pstate *p, char bracket)
{
	p->ncb++;
	if (p->skip) {
		p->skip++;
		return 1;
	}
	if (cap_active(p)) {
		p->capture++;
		p->di_rank_next = 0;
		ta_jsoncap_open(&p->cap, bracket);
		return 1;
	}
	if (p->depth == 0) {
		p->top = bracket == '{' ? TOP_OBJECT : TOP_ARRAY;
		p->depth = 1;
		if (p->top == TOP_ARRAY) {
			p->events_depth = 1;
			p->saw_events = 1;
		}
		return 1;
	}
	if (p->depth == 1 && p->top == TOP_OBJECT) {
		if (strcmp(p->topkey.s, "traceEvents") == 0 && p->saw_events) {
			p->res->extra_event_arrays++; /* only the first counts */
			p->skip = 1;
		} else if (bracket == '[' &&
			   strcmp(p->topkey.s, "traceEvents") == 0) {
			p->events_depth = 2;
			p->saw_events = 1;
			p->depth = 2;
		} else {
			begin_capture(p, TA_KEY_NONE, bracket);
		}
		return 1;
	}
	if (p->boundary)
		p->at_boundary = p->events_depth && p->depth == p->events_depth &&
				 bracket == '{';
	p->boundary = 0;
	if (p->events_depth && p->depth == p->events_depth) {
		if (bracket == '{') {
			event_reset(p);
			p->cur = TA_KEY_NONE;
			p->depth++;
		} else {
			p->skip = 1;
			p->res->events++; /* an array element takes an index too */
		}
		return 1;
	}
	if (in_event(p) && (p->cur == TA_KEY_TS || p->cur == TA_KEY_DUR))
		p->bad_time = 1; /* then skipped below */
	if (in_event(p) && p->cur == TA_KEY_ARGS && bracket == '{' &&
	    counter_range(&p->ev)) {
		begin_capture(p, TA_F_COUNTERS, bracket);
	} else if (in_event(p) && p->cur == TA_KEY_ARGS && bracket == '{') {
		p->depth++;
		p->cur = TA_KEY_NONE;
	} else if ((in_event(p) || in_args(p)) && p->cur >= 0) {
		begin_capture(p, p->cur, bracket);
	} else {
		p->skip = 1;
	}
	return 1;
}

/* Times every analysis can add and subtract without overflow: ts in
 * [-2^61, 2^62] ns (2^62 is the year 2116 since the epoch), |dur| at most
 * 2^50 ns (13 days), and the end no later than 2^62. */
#define TS_MIN (-((int64_t)1 << 61))
#define TS_MAX ((int64_t)1 << 62)
#define DUR_MAX ((int64_t)1 << 50)

static int in_range(const struct ta_event *ev)
{
	int64_t d = ev->has_dur ? ev->dur_ns : 0, hd = ev->has_dur ?
		    ev->hta_dur_ns : 0;

	if (d > DUR_MAX || d < -DUR_MAX || hd > DUR_MAX || hd < -DUR_MAX)
		return 0;
	if (!ev->has_ts)
		return 1;
	return ev->ts_ns >= TS_MIN && ev->ts_ns <= TS_MAX - (d > 0 ? d : 0) &&
	       ev->hta_ts_ns >= TS_MIN && ev->hta_ts_ns <= TS_MAX - (hd > 0 ? hd : 0);
}

/* Each file's extent, so that no analysis scans every row for it. */
static void note_extent(struct ta_parse_result *r, const struct ta_event *ev)
{
	if (!r->have_ts || ev->ts_ns < r->min_ts_ns)
		r->min_ts_ns = ev->ts_ns;
	if (!r->have_ts || ev->ts_ns > r->max_ts_ns)
		r->max_ts_ns = ev->ts_ns;
	r->have_ts = 1;
}

/* A ProfilerStep#N that cannot be a step: negative duration, or an N
 * that is not a whole number from 0 below 2^62 ("#1.0" would be read as
 * 1, "#-1" matched by no step query; a repeated step is numbered on past
 * the largest, which must not overflow). */
static int bad_step(const struct ta_event *ev)
{
	const struct ta_val *v = &ev->f[TA_F_NAME];
	const char *name;
	int64_t n;

	if (v->type != TA_VAL_TEXT || v->len < 14)
		return 0;
	name = ta_event_text(ev, TA_F_NAME);
	if (strncmp(name, "ProfilerStep#", 13) != 0)
		return 0;
	return ev->dur_ns < 0 || ev->hta_dur_ns < 0 ||
	       ta_parse_int64(name + 13, v->len - 13, &n) < 0 || n < 0 ||
	       n >= (int64_t)1 << 62;
}

static void finish_times(struct pstate *p)
{
	struct ta_event *ev = &p->ev;
	int dur_float = 0;

	if (p->dur_text[0] &&
	    ta_parse_us_to_ns(p->dur_text, strlen(p->dur_text), &ev->dur_ns,
			      &dur_float) == 0)
		ev->has_dur = 1;
	else if (p->dur_text[0])
		p->bad_time = 1;
	if (p->ts_text[0] &&
	    ta_parse_us_to_ns(p->ts_text, strlen(p->ts_text), &ev->ts_ns,
			      &ev->ts_is_float) == 0) {
		ev->has_ts = 1;
		if (!ev->ts_is_float && !dur_float) { /* whole µs: exact */
			ev->hta_ts_ns = ev->ts_ns;
			ev->hta_dur_ns = ev->dur_ns;
		} else {
			ta_hta_times(p->ts_text, p->dur_text, ev->ts_ns,
				     ev->dur_ns, &ev->hta_ts_ns,
				     &ev->hta_dur_ns);
		}
	} else if (p->ts_text[0]) {
		p->bad_time = 1;
	}
	if (!in_range(ev)) {
		ev->has_ts = ev->has_dur = 0;
		p->bad_time = 1;
	}
	if (ev->has_dur && bad_step(ev)) {
		ev->has_dur = 0; /* every step query needs a duration */
		p->res->bad_steps++;
	}
	p->res->bad_times += p->bad_time;
	if (ev->has_ts)
		note_extent(p->res, ev);
	if (!ev->has_ts || ev->ts_is_float)
		p->res->any_float_ts = 1;
}

/* Whether an event recorded something that ran: not metadata (ph "M",
 * which Kineto writes with a ts) nor the profiler's own "Trace" span. */
static int is_activity(const struct ta_event *ev)
{
	const struct ta_val *ph = &ev->f[TA_F_PH], *cat = &ev->f[TA_F_CAT];

	if (ph->type == TA_VAL_TEXT && ph->len == 1 && ta_event_text(ev, TA_F_PH)[0] == 'M')
		return 0;
	return !(cat->type == TA_VAL_TEXT && cat->len == 5 &&
		 memcmp(ta_event_text(ev, TA_F_CAT), "Trace", 5) == 0);
}

static int close_container(struct pstate *p, char bracket)
{
	p->ncb++;
	if (p->skip) {
		p->skip--;
		return 1;
	}
	if (cap_active(p)) {
		ta_jsoncap_close(&p->cap, bracket);
		if (--p->capture == 0)
			end_capture(p);
		return !p->stopped;
	}
	p->depth--;
	if (p->events_depth && p->depth == p->events_depth && bracket == '}') {
		finish_times(p);
		if (p->sink->event && p->sink->event(p->sink->ctx, &p->ev))
			p->stopped = 1;
		p->res->events++;
		p->res->objects++;
		p->res->activity += is_activity(&p->ev);
	} else if (p->events_depth && p->depth == p->events_depth - 1) {
		p->events_depth = 0;
	} else if (in_event(p)) {
		p->cur = TA_KEY_NONE; /* end of args */
	}
	return !p->stopped;
}

static int cb_start_map(void *ctx)
{
	return open_container(ctx, '{');
}

static int cb_end_map(void *ctx)
{
	return close_container(ctx, '}');
}

static int cb_start_array(void *ctx)
{
	return open_container(ctx, '[');
}

static int cb_end_array(void *ctx)
{
	return close_container(ctx, ']');
}

static const yajl_callbacks callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_key, cb_end_map, cb_start_array, cb_end_array
};

static void *y_malloc(void *ctx, size_t n)
{
	(void)ctx;
	return ta_xmalloc(n);
}

static void *y_realloc(void *ctx, void *p, size_t n)
{
	(void)ctx;
	return ta_xrealloc(p, n);
}

static void y_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static yajl_alloc_funcs alloc_funcs = { y_malloc, y_realloc, y_free,
					      NULL };

struct parser {
	struct pstate st;
	yajl_handle h;
	int64_t offset;     /* bytes fed before the current chunk */
	int done;
};

static void parser_init(struct parser *ps, const struct ta_sink *sink,
			struct ta_parse_result *res)
{
	memset(ps, 0, sizeof(*ps));
	memset(res, 0, sizeof(*res));
	ps->st.sink = sink;
	ps->st.res = res;
	ps->st.cur = TA_KEY_NONE;
	ta_buf_adds(&ps->st.topkey, "");
	ps->h = yajl_alloc(&callbacks, &alloc_funcs, &ps->st);
	/* traces hold invalid UTF-8; =1 turns checking off */
	yajl_config(ps->h, yajl_dont_validate_strings, 1);
}

static void parser_free(struct parser *ps)
{
	yajl_free(ps->h);
	ta_buf_free(&ps->st.topkey);
	ta_buf_free(&ps->st.ev.arena);
	ta_jsoncap_free(&ps->st.cap);
}

static void damage(struct parser *ps, int64_t off, const char *what)
{
	struct ta_parse_result *res = ps->st.res;

	if (res->truncated)
		return;
	res->truncated = 1;
	res->damage_offset = off;
	snprintf(res->damage, sizeof(res->damage), "%s", what);
	ps->done = 1;
}

/* at_end: the document ended early (no chunk is being parsed). */
static void yajl_damage(struct parser *ps, const unsigned char *chunk,
			size_t len, int at_end)
{
	unsigned char *msg = yajl_get_error(ps->h, 0, chunk, len);
	char *nl;

	nl = strchr((char *)msg, '\n');
	if (nl)
		*nl = '\0';
	damage(ps, ps->offset + (at_end ? 0 :
		       (int64_t)yajl_get_bytes_consumed(ps->h)), (char *)msg);
	yajl_free_error(ps->h, msg);
}

/* Feeds one chunk; skips a UTF-8 byte order mark at the very start. */
static void parser_feed(struct parser *ps, const char *data, size_t len)
{
	const unsigned char *u = (const unsigned char *)data;
	yajl_status s;

	if (ps->done)
		return;
	if (ps->offset == 0 && len >= 3 && u[0] == 0xEF && u[1] == 0xBB &&
	    u[2] == 0xBF) {
		u += 3;
		len -= 3;
		ps->offset = 3;
	}
	s = yajl_parse(ps->h, u, len);
	ps->st.res->feeds++;
	if (ps->st.stopped) {
		ps->done = 1;
		return;
	}
	if (s != yajl_status_ok)
		yajl_damage(ps, u, len, 0);
	ps->offset += (int64_t)len;
	ps->st.res->bytes = ps->offset;
}

static int parser_finish(struct parser *ps, struct ta_error *err,
			 const char *what)
{
	struct pstate *p = &ps->st;

	if (!ps->done && !p->stopped &&
	    yajl_complete_parse(ps->h) != yajl_status_ok)
		yajl_damage(ps, NULL, 0, 1);
	if (p->top == TOP_NONE) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': not a JSON trace%s%s",
			     what, p->res->truncated ? ": " : "",
			     p->res->truncated ? p->res->damage : "");
		return -1;
	}
	if (!p->saw_events && !p->res->truncated) {
		ta_error_set(err, TA_EXIT_INPUT,
			     "'%s': no traceEvents array: not a trace", what);
		return -1;
	}
	return 0;
}

/* yajl re-lexes a token that spans pieces from its start each time a
 * piece is fed, so one long string fed in fixed chunks costs time
 * quadratic in its length. A piece that gives no callback is inside such
 * a token: the next piece fed is then at least as long as the token so
 * far, which makes the total linear. A string longer than TA_TOKEN_MAX is
 * cut there: its end is found here, byte by byte, and yajl gets only a
 * closing quote (the callback sees the empty string and counts it). */
size_t ta_token_max = (size_t)64 << 20;

struct feeder {
	struct ta_buf pend;  /* read, waiting to make a long enough piece */
	size_t stall;        /* bytes fed since the last callback */
	int64_t stall_at;    /* offset where the stall began */
	int tail;            /* string_state at the end of the last piece fed */
	int skipping;        /* past ta_token_max, looking for the end */
	int escape;          /* while skipping: the next byte is escaped */
};

static int all_of(const char *s, size_t n, const char *set)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strchr(set, s[i]) || !s[i])
			return 0;
	return 1;
}

/* Where a piece ends inside a string, for cutting it short: 0 plain, 1
 * after a backslash, 2 to 5 after "\\u" and 0 to 3 hex digits. */
static int string_state(int st, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (st == 0)
			st = s[i] == '\\';
		else if (st == 1)
			st = s[i] == 'u' ? 2 : 0;
		else
			st = st == 5 ? 0 : st + 1;
	return st;
}

/* The state at the end of a piece in which the string began (and so
 * whose start state is unknown): from its last bytes, after the run of
 * backslashes before them. A \\u sequence that straddles the start of
 * the tail ends within it, so it cannot mislead the state at the end. */
static int tail_state(const char *s, size_t n)
{
	size_t from = n > 12 ? n - 12 : 0, k = 0;

	while (k < from && s[from - 1 - k] == '\\')
		k++;
	return string_state((int)(k & 1), s + from, n - from);
}

/* While skipping: 1 when the closing quote is in data (*used: the bytes
 * up to and including it), 0 when the string goes on (*used = len). */
static int skip_string(struct feeder *f, const char *data, size_t len,
		       size_t *used)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (f->escape) {
			f->escape = 0;
		} else if (data[i] == '\\') {
			f->escape = 1;
		} else if (data[i] == '"') {
			*used = i + 1;
			return 1;
		}
	}
	*used = len;
	return 0;
}

/* What yajl gets to end a string cut short: whatever completes an open
 * escape, then the quote. */
static void close_long_string(struct parser *ps, struct feeder *f)
{
	static const char *const closers[] = {
		"\"", "\\\"", "0000\"", "000\"", "00\"", "0\""
	};
	const char *c = closers[f->tail];
	yajl_status st;

	ps->st.long_string = 1;
	if (!ps->st.res->long_strings)
		ps->st.res->long_string_offset = f->stall_at;
	st = yajl_parse(ps->h, (const unsigned char *)c, strlen(c));
	if (st != yajl_status_ok || ps->st.long_string) {
		damage(ps, f->stall_at, "a JSON token longer than the limit");
		ps->st.long_string = 0;
	}
	f->skipping = 0;
	f->stall = 0;
}

static void feed_piece(struct parser *ps, struct feeder *f, const char *data,
		       size_t len)
{
	int64_t before = ps->st.ncb;

	parser_feed(ps, data, len);
	if (ps->st.ncb != before || ps->done || all_of(data, len, " \t\r\n")) {
		f->stall = 0;
		f->tail = tail_state(data, len);
		return;
	}
	f->tail = string_state(f->tail, data, len);
	if (!f->stall)
		f->stall_at = ps->offset - (int64_t)len;
	f->stall += len;
}

static void feeder_take(struct parser *ps, struct feeder *f, const char *data,
			size_t len);

/* The token in progress would pass ta_token_max with what waits in pend:
 * a number that long is damage; a string is skipped to its end. */
static void start_skip(struct parser *ps, struct feeder *f)
{
	struct ta_buf b = f->pend;

	memset(&f->pend, 0, sizeof(f->pend));
	if (all_of(b.s, b.len, "0123456789+-.eE")) {
		damage(ps, f->stall_at, "a number longer than the limit");
	} else {
		f->skipping = 1;
		f->escape = f->tail == 1;
		feeder_take(ps, f, b.s, b.len);
	}
	ta_buf_free(&b);
}

/* Takes the next chunk read: skips, feeds, or keeps it for a longer piece. */
static void feeder_take(struct parser *ps, struct feeder *f, const char *data,
			size_t len)
{
	while (len && !ps->done) {
		size_t k;

		if (f->skipping) {
			int closed = skip_string(f, data, len, &k);

			ps->offset += (int64_t)k;
			data += k;
			len -= k;
			if (closed)
				close_long_string(ps, f);
			continue;
		}
		if (!f->stall) {
			feed_piece(ps, f, data, len);
			return;
		}
		ta_buf_add(&f->pend, data, len);
		if (f->stall + f->pend.len > ta_token_max) {
			start_skip(ps, f);
		} else if (f->pend.len >= f->stall) {
			feed_piece(ps, f, f->pend.s, f->pend.len);
			ta_buf_reset(&f->pend);
		}
		return;
	}
}

static void feeder_end(struct parser *ps, struct feeder *f)
{
	if (f->pend.len && !ps->done)
		feed_piece(ps, f, f->pend.s, f->pend.len);
	if (f->skipping)
		damage(ps, f->stall_at, "a string longer than the limit, "
		       "never closed");
	ta_buf_free(&f->pend);
}

int ta_parse_buffer(const char *data, size_t len, const struct ta_sink *sink,
		    struct ta_parse_result *res, struct ta_error *err)
{
	struct parser ps;
	struct feeder f = { 0 };
	size_t at = 0;
	int rc;

	/* in small pieces, so that tests and fuzzing meet piece boundaries */
	parser_init(&ps, sink, res);
	while (at < len && !ps.done) {
		size_t n = len - at < 4096 ? len - at : 4096;

		feeder_take(&ps, &f, data + at, n);
		at += n;
	}
	feeder_end(&ps, &f);
	rc = parser_finish(&ps, err, "<buffer>");
	parser_free(&ps);
	return rc;
}

/* One parser over a piece of a document: the whole of it, or (split.c)
 * from an element of traceEvents in the middle onwards. */
struct ta_piece {
	struct parser ps;
	struct feeder f;
	int live;
};

struct ta_piece *ta_piece_new(void)
{
	return ta_xcalloc(1, sizeof(struct ta_piece));
}

static void piece_clear(struct ta_piece *pc)
{
	if (pc->live) {
		ta_buf_free(&pc->f.pend);
		parser_free(&pc->ps);
	}
	memset(&pc->f, 0, sizeof(pc->f));
	pc->live = 0;
}

void ta_piece_free(struct ta_piece *pc)
{
	if (!pc)
		return;
	piece_clear(pc);
	free(pc);
}

void ta_piece_start(struct ta_piece *pc, const struct ta_sink *sink,
		    struct ta_parse_result *res, int64_t offset,
		    int events_depth)
{
	/* what puts a new parser where one that read the document from its
	 * start is between two elements of traceEvents */
	static const char *const prefix[] = { "", "[", "{\"traceEvents\":[" };

	piece_clear(pc);
	parser_init(&pc->ps, sink, res);
	pc->live = 1;
	if (events_depth > 0) {
		size_t n = strlen(prefix[events_depth]);

		pc->ps.offset = offset - (int64_t)n;
		parser_feed(&pc->ps, prefix[events_depth], n);
	}
}

void ta_piece_feed(struct ta_piece *pc, const char *data, size_t len)
{
	feeder_take(&pc->ps, &pc->f, data, len);
}

int ta_piece_done(const struct ta_piece *pc)
{
	return pc->ps.done;
}

int ta_piece_boundary(struct ta_piece *pc, const char *brace, int events_depth)
{
	struct pstate *p = &pc->ps.st;
	int64_t before = p->ncb;

	/* in the middle of a token, the brace is part of it */
	if (pc->ps.done || pc->f.stall || pc->f.skipping) {
		feeder_take(&pc->ps, &pc->f, brace, 1);
		return 0;
	}
	p->boundary = 1;
	p->at_boundary = 0;
	feed_piece(&pc->ps, &pc->f, brace, 1);
	p->boundary = 0;
	/* the brace alone gave a callback: no token was pending before it */
	return p->at_boundary && p->ncb == before + 1 && !pc->ps.done &&
	       p->events_depth == events_depth;
}

void ta_piece_read_error(struct ta_piece *pc, const char *msg)
{
	feeder_end(&pc->ps, &pc->f);
	damage(&pc->ps, pc->ps.offset, msg);
}

int ta_piece_finish(struct ta_piece *pc, const char *what,
		    struct ta_error *err)
{
	feeder_end(&pc->ps, &pc->f);
	return parser_finish(&pc->ps, err, what);
}

int ta_parse_file(const char *path, int threaded, const struct ta_sink *sink,
		  struct ta_parse_result *res, struct ta_error *err)
{
	struct ta_piece *pc;
	struct ta_gzr *r;
	const char *chunk;
	long n;
	int rc;

	r = ta_gzr_open(path, threaded, err);
	if (!r) {
		memset(res, 0, sizeof(*res));
		return -1;
	}
	pc = ta_piece_new();
	ta_piece_start(pc, sink, res, 0, 0);
	while (!ta_piece_done(pc) && (n = ta_gzr_read(r, &chunk)) != 0) {
		if (n < 0) {
			ta_piece_read_error(pc, ta_gzr_error(r));
			break;
		}
		ta_piece_feed(pc, chunk, (size_t)n);
		if (sink->progress)
			sink->progress(sink->ctx, ta_gzr_raw_offset(r));
	}
	rc = ta_piece_finish(pc, path, err);
	ta_piece_free(pc);
	ta_gzr_close(r);
	return rc;
}
