/* Packing and unpacking the parser -> writer batch records (batch.h). */
#include "batch.h"

#include <string.h>

static void put(struct ta_buf *b, const void *p, size_t n)
{
	ta_buf_add(b, p, n);
}

static void put_i64(struct ta_buf *b, int64_t v)
{
	put(b, &v, sizeof(v));
}

static void put_text(struct ta_buf *b, const char *s, uint32_t len)
{
	put(b, &len, sizeof(len));
	put(b, s, len);
}

static void take(const char **p, void *dst, size_t n)
{
	memcpy(dst, *p, n);
	*p += n;
}

static const char *take_text(const char **p, uint32_t *len)
{
	const char *s;

	take(p, len, sizeof(*len));
	s = *p;
	*p += *len;
	return s;
}

void ta_batch_name(struct ta_buf *b, int64_t id, const char *s, uint32_t len)
{
	ta_buf_addc(b, 'N');
	put_i64(b, id);
	put_text(b, s, len);
}

void ta_batch_meta(struct ta_buf *b, const char *key, const char *json,
		   size_t len)
{
	ta_buf_addc(b, 'M');
	put_text(b, key, (uint32_t)strlen(key));
	put_text(b, json, (uint32_t)len);
}

/* Writes n bytes at *w: room was made beforehand. */
static void emit(char **w, const void *p, size_t n)
{
	memcpy(*w, p, n);
	*w += n;
}

/* 'E', index, flags, four times, cat, name, role, then the number of
 * present fields and each as (field, type, value). Room for the whole
 * record is made once: this runs for every event. */
void ta_batch_event(struct ta_buf *b, const struct ta_event *ev, int64_t cat,
		    int64_t name, int role)
{
	unsigned char flags = (unsigned char)(ev->has_ts | ev->has_dur << 1);
	unsigned char n = 0, r = (unsigned char)role;
	uint64_t set = ev->set & ~(1ull << TA_F_CAT | 1ull << TA_F_NAME), s;
	size_t need = 1 + 8 + 1 + 6 * 8 + 1 + 1;
	char *w, *count_at;
	int f;

	for (s = set, f = 0; s; s >>= 1, f++)
		if (s & 1)
			need += 2 + 8 + (ev->f[f].type == TA_VAL_TEXT ? ev->f[f].len : 0);
	ta_buf_grow(b, need);
	w = b->s + b->len;
	*w++ = 'E';
	emit(&w, &ev->index, 8);
	*w++ = (char)flags;
	emit(&w, &ev->ts_ns, 8);
	emit(&w, &ev->dur_ns, 8);
	emit(&w, &ev->hta_ts_ns, 8);
	emit(&w, &ev->hta_dur_ns, 8);
	emit(&w, &cat, 8);
	emit(&w, &name, 8);
	*w++ = (char)r;
	count_at = w++;
	for (f = 0; set; set >>= 1, f++) {
		const struct ta_val *v = &ev->f[f];
		uint32_t len;

		if (!(set & 1) || v->type == TA_VAL_NONE)
			continue;
		*w++ = (char)f;
		*w++ = (char)v->type;
		if (v->type == TA_VAL_INT) {
			emit(&w, &v->i, 8);
		} else if (v->type == TA_VAL_REAL) {
			emit(&w, &v->d, 8);
		} else {
			len = (uint32_t)v->len;
			emit(&w, &len, 4);
			emit(&w, ta_event_text(ev, (enum ta_field)f), len);
		}
		n++;
	}
	*count_at = (char)n;
	b->len = (size_t)(w - b->s);
	b->s[b->len] = '\0';
}

/* The event's text stays in the batch: the batch is its arena. */
static const char *next_event(const char *p, const struct ta_buf *b,
			      struct ta_batch_rec *rec)
{
	struct ta_event *ev = &rec->ev;
	unsigned char flags, n, r, i;

	/* a record is read into the same place over and over */
	ta_event_clear_fields(ev);
	take(&p, &ev->index, 8);
	take(&p, &flags, 1);
	ev->has_ts = flags & 1;
	ev->has_dur = flags >> 1 & 1;
	take(&p, &ev->ts_ns, 8);
	take(&p, &ev->dur_ns, 8);
	take(&p, &ev->hta_ts_ns, 8);
	take(&p, &ev->hta_dur_ns, 8);
	take(&p, &rec->cat, 8);
	take(&p, &rec->name, 8);
	take(&p, &r, 1);
	rec->role = r;
	take(&p, &n, 1);
	ev->arena.s = b->s;
	for (i = 0; i < n; i++) {
		unsigned char h[2];
		struct ta_val *v;
		uint32_t len;

		take(&p, h, 2);
		v = &ev->f[h[0]];
		TA_EVENT_SET(ev, h[0]);
		v->type = (enum ta_val_type)h[1];
		if (v->type == TA_VAL_INT) {
			take(&p, &v->i, 8);
		} else if (v->type == TA_VAL_REAL) {
			take(&p, &v->d, 8);
		} else {
			v->off = (size_t)(take_text(&p, &len) - b->s);
			v->len = len;
		}
	}
	return p;
}

const char *ta_batch_next(const char *p, const struct ta_buf *b,
			  struct ta_batch_rec *rec)
{
	rec->tag = *p++;
	switch (rec->tag) {
	case 'N':
		take(&p, &rec->id, 8);
		rec->s = take_text(&p, &rec->len);
		return p;
	case 'M':
		rec->s = take_text(&p, &rec->len);
		rec->s2 = take_text(&p, &rec->len2);
		return p;
	default:
		return next_event(p, b, rec);
	}
}
