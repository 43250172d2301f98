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

/* 'E', index, flags, four times, cat, name, role, then the number of
 * present fields and each as (field, type, value). */
void ta_batch_event(struct ta_buf *b, const struct ta_event *ev, int64_t cat,
		    int64_t name, int role)
{
	unsigned char flags = (unsigned char)(ev->has_ts | ev->has_dur << 1);
	unsigned char n = 0, r = (unsigned char)role;
	size_t count_at;
	int f;

	ta_buf_addc(b, 'E');
	put_i64(b, ev->index);
	put(b, &flags, 1);
	put_i64(b, ev->ts_ns);
	put_i64(b, ev->dur_ns);
	put_i64(b, ev->hta_ts_ns);
	put_i64(b, ev->hta_dur_ns);
	put_i64(b, cat);
	put_i64(b, name);
	put(b, &r, 1);
	count_at = b->len;
	put(b, &n, 1);
	for (f = 0; f < TA_NFIELDS; f++) {
		const struct ta_val *v = &ev->f[f];
		unsigned char h[2] = { (unsigned char)f, (unsigned char)v->type };

		if (v->type == TA_VAL_NONE || f == TA_F_CAT || f == TA_F_NAME)
			continue;
		put(b, h, 2);
		if (v->type == TA_VAL_INT)
			put_i64(b, v->i);
		else if (v->type == TA_VAL_REAL)
			put(b, &v->d, sizeof(v->d));
		else
			put_text(b, ta_event_text(ev, (enum ta_field)f),
				 (uint32_t)v->len);
		n++;
	}
	b->s[count_at] = (char)n;
}

/* The event's text stays in the batch: the batch is its arena. */
static const char *next_event(const char *p, const struct ta_buf *b,
			      struct ta_batch_rec *rec)
{
	struct ta_event *ev = &rec->ev;
	unsigned char flags, n, r, i;

	memset(ev->f, 0, sizeof(ev->f));
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
