/* How a parsed event becomes a row of the events table (db_schema.c):
 * its role, and the binding of its columns to an INSERT. */
#include "event_row.h"
#include "event_cols.h"
#include "ta_db.h"
#include "ta_parse.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Parameters of one row, in the events table's column order (from 1). */
#define C_ENUM(name, how, field, other, text) C_##name,
enum { C_NONE_, TA_EVENT_COLUMNS(C_ENUM) C_END_ };
#define C_NCOLS (C_END_ - 1)
_Static_assert(C_NCOLS <= 64, "a row's bound columns are a 64-bit mask");

char *ta_row_insert_sql(int rows)
{
	struct ta_buf sql = { 0 };
	int r, c;

	ta_buf_adds(&sql, "INSERT INTO events VALUES ");
	for (r = 0; r < rows; r++) {
		ta_buf_adds(&sql, r ? ",(" : "(");
		for (c = 0; c < C_NCOLS; c++)
			ta_buf_adds(&sql, c ? ",?" : "?");
		ta_buf_addc(&sql, ')');
	}
	return sql.s;
}

int ta_row_role(const char *cat)
{
	static const char *const gpu[] = { TA_GPU_CATS_C, NULL };
	static const char *const runtime[] = { "cuda_runtime", "cuda_driver",
		"Runtime", "mtia_runtime", NULL };
	static const char *const cpu[] = { "cpu_op", "python_function",
		"Operator", NULL };
	size_t i;

	for (i = 0; gpu[i]; i++)
		if (strcmp(cat, gpu[i]) == 0)
			return TA_ROLE_GPU;
	for (i = 0; runtime[i]; i++)
		if (strcmp(cat, runtime[i]) == 0)
			return TA_ROLE_RUNTIME;
	if (strcmp(cat, "cuda_sync") == 0)
		return TA_ROLE_SYNC;
	for (i = 0; cpu[i]; i++)
		if (strcmp(cat, cpu[i]) == 0)
			return TA_ROLE_CPU_OP;
	if (strcmp(cat, "user_annotation") == 0)
		return TA_ROLE_CPU_ANN;
	if (strcmp(cat, "ac2g") == 0 || strcmp(cat, "async_cpu_to_gpu") == 0)
		return TA_ROW_ARROW_CAT;
	return strcmp(cat, "gpu_user_annotation") == 0 ? TA_ROLE_GPU_ANN :
	       TA_ROLE_OTHER;
}

/* Kineto's ac2g flows draw each runtime call's arrow to the GPU activity
 * it launched: the pair args.correlation already gives (the launch view),
 * and nothing reads them (HTA drops every flow, TensorBoard reads fwdbwd
 * alone). They were a third of a real trace's rows, so they are not
 * stored: files.events still counts them, and idx keeps its gaps. */
int ta_row_dropped(const struct ta_event *ev, int role)
{
	const struct ta_val *ph = &ev->f[TA_F_PH];

	return role == TA_ROW_ARROW_CAT && ph->type == TA_VAL_TEXT && ph->len == 1 &&
	       strchr("sft", ta_event_text(ev, TA_F_PH)[0]);
}

/* Binds a present value; returns its column bit, 0 if absent. Text stays
 * in the batch until the statement is reset, so SQLite need not copy it. */
static uint64_t bind_val(sqlite3_stmt *st, int col, const struct ta_event *ev,
			 enum ta_field f)
{
	const struct ta_val *v = &ev->f[f];

	switch (v->type) {
	case TA_VAL_INT:
		sqlite3_bind_int64(st, col, v->i);
		break;
	case TA_VAL_REAL:
		sqlite3_bind_double(st, col, v->d);
		break;
	case TA_VAL_TEXT:
		sqlite3_bind_text(st, col, ta_event_text(ev, f), (int)v->len,
				  SQLITE_STATIC);
		break;
	default:
		return 0;
	}
	return 1ull << ((col - 1) % C_NCOLS);
}

/* HTA's lenient numeric conversion: numeric text counts, the rest is -1
 * (hta-semantics 2.5). */
static int64_t lenient_int(const struct ta_event *ev, enum ta_field f)
{
	const struct ta_val *v = &ev->f[f];
	int64_t i;

	if (v->type == TA_VAL_INT)
		return v->i;
	if (v->type == TA_VAL_REAL && v->d > -9e18 && v->d < 9e18)
		return (int64_t)v->d;
	if (v->type == TA_VAL_TEXT &&
	    ta_parse_int64(ta_event_text(ev, f), v->len, &i) == 0)
		return i;
	return -1;
}

static uint64_t bind_either(sqlite3_stmt *st, int col,
			    const struct ta_event *ev, enum ta_field a,
			    enum ta_field b)
{
	return bind_val(st, col, ev, ev->f[a].type != TA_VAL_NONE ? a : b);
}

/* A list whose entries are all "" (["", ""]: every tensor argument)
 * says nothing: NULL saves its text in every op's row. */
static uint64_t bind_nonblank(sqlite3_stmt *st, int col,
			      const struct ta_event *ev, enum ta_field f)
{
	const struct ta_val *v = &ev->f[f];
	const char *s;
	size_t i;

	if (v->type != TA_VAL_TEXT)
		return bind_val(st, col, ev, f);
	s = ta_event_text(ev, f);
	for (i = 0; i < v->len; i++)
		if (!strchr("[]\", ", s[i]))
			return bind_val(st, col, ev, f);
	return 0;
}

/* A process group's size: "Group size" as torch writes it, else the
 * items of its member list "[0, 1, 2]". Torch cuts a list past 30 ranks
 * ("[0, 1, ..., 29, ...]"): its length is then not the group's, and no
 * size is given (unknown) rather than 30, which would hide missing ranks.
 * Returns 0 for none. */
static int64_t group_size(const struct ta_event *ev, enum ta_field size,
			  enum ta_field list)
{
	const struct ta_val *v = &ev->f[list];
	int64_t n = lenient_int(ev, size);
	const char *s;
	size_t i;

	if (n <= 0 && v->type == TA_VAL_TEXT) {
		s = ta_event_text(ev, list);
		if (!memchr(s, '[', v->len) || memchr(s, '.', v->len))
			return 0;
		for (n = 0, i = 0; i < v->len; i++)
			if (s[i] >= '0' && s[i] <= '9' &&
			    (i == 0 || s[i - 1] < '0' || s[i - 1] > '9'))
				n++;
	}
	/* past 2^24 ranks a size is not one (an int64 read as a count of
	 * missing ranks would be absurd): unknown */
	return n > 0 && n <= (1 << 24) ? n : 0;
}

/* A JSON string of len bytes as they are (invalid UTF-8 included, as
 * text columns keep it; SQLite's JSON functions pass it through). */
static void json_string(struct ta_buf *b, const char *s, size_t len)
{
	size_t i;

	ta_buf_addc(b, '"');
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			ta_buf_addc(b, '\\');
			ta_buf_addc(b, (char)c);
		} else if (c < 0x20) {
			/* the short forms where JSON has them: a newline is 2
			 * bytes, not 6 (escape-heavy args grow less) */
			const char *esc = c == '\n' ? "\\n" : c == '\t' ? "\\t" :
					  c == '\r' ? "\\r" : c == '\b' ? "\\b" :
					  c == '\f' ? "\\f" : NULL;

			if (esc)
				ta_buf_adds(b, esc);
			else
				ta_buf_addf(b, "\\u%04x", c);
		} else {
			ta_buf_addc(b, (char)c);
		}
	}
	ta_buf_addc(b, '"');
}

/* A value as JSON that json_extract gives back as the column had it: an
 * integer, a real (with a point: 5.0 stays real; exact to the bit), or
 * text. */
static void json_value(struct ta_buf *b, const struct ta_event *ev,
		       enum ta_field f)
{
	const struct ta_val *v = &ev->f[f];
	char num[40];

	switch (v->type) {
	case TA_VAL_INT:
		ta_buf_addf(b, "%lld", (long long)v->i);
		break;
	case TA_VAL_REAL:
		if (isnan(v->d)) {
			ta_buf_adds(b, "null");
		} else if (isinf(v->d)) {
			ta_buf_adds(b, v->d > 0 ? "1e999" : "-1e999");
		} else {
			snprintf(num, sizeof(num), "%.17g", v->d);
			ta_buf_adds(b, num);
			if (!strpbrk(num, ".e"))
				ta_buf_adds(b, ".0");
		}
		break;
	default:
		json_string(b, ta_event_text(ev, f), v->len);
		break;
	}
}

static void json_key(struct ta_buf *b, const char *key)
{
	ta_buf_addc(b, b->len ? ',' : '{');
	ta_buf_addc(b, '"');
	ta_buf_adds(b, key);
	ta_buf_adds(b, "\":");
}

#define ARGS_VAL(key, field, other) \
	if (ev->f[field].type != TA_VAL_NONE) { \
		json_key(b, #key); \
		json_value(b, ev, field); \
	}
#define ARGS_GROUP(key, field, other) \
	if ((n = group_size(ev, field, other)) > 0) { \
		json_key(b, #key); \
		ta_buf_addf(b, "%lld", (long long)n); \
	}
#define ARGS_TEXT ARGS_VAL
#define ARGS_FIELD(key, how, field, other, text) ARGS_##how(key, field, other)
#define ARGS_BIT(key, how, field, other, text) | 1ull << (field) | ARGS_OTHER_##how(other)
#define ARGS_OTHER_VAL(other) 0
#define ARGS_OTHER_TEXT(other) 0
#define ARGS_OTHER_GROUP(other) 1ull << (other)

/* The column args: the rarer args present (event_cols.h), as a JSON
 * object in b; 0 if none (NULL). */
static int build_args(struct ta_buf *b, const struct ta_event *ev)
{
	static const uint64_t any = 0 TA_EVENT_ARGS_JSON(ARGS_BIT);
	int64_t n;

	b->len = 0;
	if (!(ev->set & any))
		return 0;
	TA_EVENT_ARGS_JSON(ARGS_FIELD)
	if (!b->len)
		return 0;
	ta_buf_addc(b, '}');
	return 1;
}

#define BIT(c) (1ull << ((c) - 1))

static uint64_t bind_int(sqlite3_stmt *st, int base, int col, int64_t v)
{
	sqlite3_bind_int64(st, base + col, v);
	return BIT(col);
}

static uint64_t bind_times(sqlite3_stmt *st, int base,
			   const struct ta_event *ev)
{
	uint64_t m = 0;

	/* HTA's times as what they add to ours: 0 (no bytes) for whole µs,
	 * a few bytes else, where the times themselves take 8; both lie in
	 * [-2^61, 2^62] (in_range), so the difference cannot overflow */
	if (ev->has_ts)
		m |= bind_int(st, base, C_TS, ev->ts_ns) |
		     bind_int(st, base, C_HTA_TS, ev->hta_ts_ns - ev->ts_ns);
	if (ev->has_dur)
		m |= bind_int(st, base, C_DUR, ev->dur_ns) |
		     bind_int(st, base, C_HTA_DUR, ev->hta_dur_ns - ev->dur_ns);
	return m;
}

#define BIND_VAL(c, field, other) | bind_val(st, base + (c), ev, field)
#define BIND_EITHER(c, field, other) | bind_either(st, base + (c), ev, field, other)
#define BIND_NONBLANK(c, field, other) | bind_nonblank(st, base + (c), ev, field)
#define BIND_SELF(c, field, other)
#define BIND_FIELD(name, how, field, other, text) BIND_##how(C_##name, field, other)

int ta_row_bind(sqlite3_stmt *st, int row, int64_t rank,
		const struct ta_batch_rec *u, uint64_t *bound,
		struct ta_buf *scratch)
{
	const struct ta_event *ev = &u->ev;
	int base = row * C_NCOLS, c;
	uint64_t m, stale;

	m = bind_int(st, base, C_RANK, rank) |
	    bind_int(st, base, C_IDX, ev->index) |
	    bind_int(st, base, C_ROLE, u->role) |
	    bind_int(st, base, C_STREAM, lenient_int(ev, TA_F_STREAM)) |
	    bind_int(st, base, C_CORR, lenient_int(ev, TA_F_CORRELATION)) |
	    bind_times(st, base, ev);
	if (u->cat)
		m |= bind_int(st, base, C_CAT, u->cat);
	if (u->name)
		m |= bind_int(st, base, C_NAME, u->name);
	if (build_args(scratch, ev)) {
		/* past SQLite's limit (a gigabyte of args in one event): the
		 * insert fails, rather than store the row without them */
		if (scratch->len > INT_MAX ||
		    sqlite3_bind_text(st, base + C_ARGS, scratch->s, (int)scratch->len,
				      SQLITE_TRANSIENT) != SQLITE_OK)
			return -1;
		m |= BIT(C_ARGS);
	}
	/* every column the event's own fields fill (event_cols.h) */
	m |= 0 TA_EVENT_COLUMNS(BIND_FIELD);
	for (stale = *bound & ~m, c = 1; stale; stale >>= 1, c++)
		if (stale & 1)
			sqlite3_bind_null(st, base + c);
	*bound = m;
	return 0;
}
