/* The plain-data pickle reader (ta_pickle.h): a stack machine over the
 * opcodes that make containers and scalars, nothing else. Values live in
 * one arena and may be shared (the memo), so they are freed at once. */
#include "ta_pickle.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_STACK (1u << 24)        /* values on the stack at once */
#define MAX_FILE ((size_t)1 << 32)  /* 4 GB of pickle */

struct ta_pickle {
	struct ta_pv **all;         /* every value, for freeing */
	size_t nall, capall;
	char **texts;
	size_t ntexts, captexts;
	struct ta_pv *root;
};

struct vm {
	struct ta_pickle *pk;
	const unsigned char *p;
	size_t n, pos;
	struct ta_pv **stack;
	size_t sp, cap;
	size_t *marks;
	size_t nmarks, capmarks;
	struct ta_pv **memo;
	size_t nmemo, capmemo;
	const char *name;
	struct ta_error *err;
};

static struct ta_pv *new_value(struct vm *m, enum ta_pv_type t)
{
	struct ta_pickle *pk = m->pk;
	struct ta_pv *v = ta_xcalloc(1, sizeof(*v));

	if (pk->nall == pk->capall) {
		pk->capall = pk->capall ? 2 * pk->capall : 1024;
		pk->all = ta_xrealloc(pk->all, pk->capall * sizeof(*pk->all));
	}
	pk->all[pk->nall++] = v;
	v->t = t;
	return v;
}

static int bad(struct vm *m, size_t at, const char *what)
{
	ta_error_set(m->err, TA_EXIT_INPUT, "'%s': %s at byte %zu", m->name, what, at);
	return -1;
}

static int push(struct vm *m, struct ta_pv *v)
{
	if (m->sp >= MAX_STACK)
		return bad(m, m->pos, "a pickle deeper than 16M values");
	if (m->sp == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->stack = ta_xrealloc(m->stack, m->cap * sizeof(*m->stack));
	}
	m->stack[m->sp++] = v;
	return 0;
}

static struct ta_pv *pop(struct vm *m)
{
	if (m->sp == 0 || (m->nmarks && m->sp == m->marks[m->nmarks - 1]))
		return NULL;
	return m->stack[--m->sp];
}

static int need(struct vm *m, size_t k)
{
	return m->n - m->pos >= k ? 0 : bad(m, m->pos, "the pickle ends inside an opcode");
}

static uint64_t le(const unsigned char *p, size_t k)
{
	uint64_t v = 0;

	while (k--)
		v = v << 8 | p[k];
	return v;
}

static int text(struct vm *m, enum ta_pv_type t, size_t len)
{
	struct ta_pv *v;
	char *s;

	if (need(m, len) < 0)
		return -1;
	s = ta_xmalloc(len + 1);
	memcpy(s, m->p + m->pos, len);
	s[len] = '\0';
	m->pos += len;
	if (m->pk->ntexts == m->pk->captexts) {
		m->pk->captexts = m->pk->captexts ? 2 * m->pk->captexts : 1024;
		m->pk->texts = ta_xrealloc(m->pk->texts, m->pk->captexts * sizeof(char *));
	}
	m->pk->texts[m->pk->ntexts++] = s;
	v = new_value(m, t);
	v->s = s;
	v->len = len;
	return push(m, v);
}

static void add_item(struct ta_pv *c, struct ta_pv *x)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 8;
		c->v = ta_xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	c->v[c->n++] = x;
}

/* The values above the last mark, removed with it. */
static int since_mark(struct vm *m, size_t *from)
{
	if (!m->nmarks)
		return bad(m, m->pos - 1, "an opcode needs a MARK and there is none");
	*from = m->marks[--m->nmarks];
	return 0;
}

static int tuple_of(struct vm *m, size_t k)
{
	struct ta_pv *t = new_value(m, TA_PV_TUPLE);
	size_t i;

	if (m->sp < k || (m->nmarks && m->sp - k < m->marks[m->nmarks - 1]))
		return bad(m, m->pos - 1, "a tuple of values that are not there");
	for (i = m->sp - k; i < m->sp; i++)
		add_item(t, m->stack[i]);
	m->sp -= k;
	return push(m, t);
}

static int memo_put(struct vm *m, size_t at, struct ta_pv *v)
{
	if (at > m->nmemo + (1u << 20))
		return bad(m, m->pos, "a memo index far past the values seen");
	while (at >= m->capmemo) {
		size_t old = m->capmemo;

		m->capmemo = m->capmemo ? 2 * m->capmemo : 256;
		m->memo = ta_xrealloc(m->memo, m->capmemo * sizeof(*m->memo));
		memset(m->memo + old, 0, (m->capmemo - old) * sizeof(*m->memo));
	}
	m->memo[at] = v;
	if (at >= m->nmemo)
		m->nmemo = at + 1;
	return 0;
}

static int memo_get(struct vm *m, size_t at)
{
	if (at >= m->nmemo || !m->memo[at])
		return bad(m, m->pos, "a memo entry that was never stored");
	return push(m, m->memo[at]);
}

static int run(struct vm *m)
{
	for (;;) {
		size_t at = m->pos, from, i;
		struct ta_pv *v, *c;
		unsigned char op;

		if (need(m, 1) < 0)
			return -1;
		op = m->p[m->pos++];
		switch (op) {
		case 0x80:                      /* PROTO */
			if (need(m, 1) < 0)
				return -1;
			m->pos++;
			break;
		case 0x95:                      /* FRAME: a length, no meaning */
			if (need(m, 8) < 0)
				return -1;
			m->pos += 8;
			break;
		case '.':                       /* STOP */
			if (m->sp != 1 || m->nmarks)
				return bad(m, at, "the pickle stops with no single value");
			m->pk->root = m->stack[0];
			return 0;
		case '}':
			if (push(m, new_value(m, TA_PV_DICT)) < 0)
				return -1;
			break;
		case ']':
			if (push(m, new_value(m, TA_PV_LIST)) < 0)
				return -1;
			break;
		case ')':
			if (push(m, new_value(m, TA_PV_TUPLE)) < 0)
				return -1;
			break;
		case '(':                       /* MARK */
			if (m->nmarks == m->capmarks) {
				m->capmarks = m->capmarks ? 2 * m->capmarks : 64;
				m->marks = ta_xrealloc(m->marks, m->capmarks * sizeof(*m->marks));
			}
			m->marks[m->nmarks++] = m->sp;
			break;
		case 't':                       /* TUPLE */
			if (since_mark(m, &from) < 0)
				return -1;
			c = new_value(m, TA_PV_TUPLE);
			for (i = from; i < m->sp; i++)
				add_item(c, m->stack[i]);
			m->sp = from;
			if (push(m, c) < 0)
				return -1;
			break;
		case 0x85: case 0x86: case 0x87:        /* TUPLE1..3 */
			if (tuple_of(m, (size_t)(op - 0x84)) < 0)
				return -1;
			break;
		case 'a':                       /* APPEND */
			v = pop(m);
			if (!v || m->sp == 0 || m->stack[m->sp - 1]->t != TA_PV_LIST)
				return bad(m, at, "APPEND to something not a list");
			add_item(m->stack[m->sp - 1], v);
			break;
		case 'e':                       /* APPENDS */
			if (since_mark(m, &from) < 0)
				return -1;
			if (from == 0 || m->stack[from - 1]->t != TA_PV_LIST)
				return bad(m, at, "APPENDS to something not a list");
			for (i = from; i < m->sp; i++)
				add_item(m->stack[from - 1], m->stack[i]);
			m->sp = from;
			break;
		case 's':                       /* SETITEM */
			if (m->sp < 3 || m->stack[m->sp - 3]->t != TA_PV_DICT ||
			    (m->nmarks && m->sp - 2 < m->marks[m->nmarks - 1]))
				return bad(m, at, "SETITEM on something not a dict");
			add_item(m->stack[m->sp - 3], m->stack[m->sp - 2]);
			add_item(m->stack[m->sp - 3], m->stack[m->sp - 1]);
			m->sp -= 2;
			break;
		case 'u':                       /* SETITEMS */
			if (since_mark(m, &from) < 0)
				return -1;
			if (from == 0 || m->stack[from - 1]->t != TA_PV_DICT ||
			    (m->sp - from) % 2)
				return bad(m, at, "SETITEMS on something not a dict");
			for (i = from; i < m->sp; i++)
				add_item(m->stack[from - 1], m->stack[i]);
			m->sp = from;
			break;
		case 'X':                       /* BINUNICODE */
			if (need(m, 4) < 0)
				return -1;
			i = (size_t)le(m->p + m->pos, 4);
			m->pos += 4;
			if (text(m, TA_PV_STR, i) < 0)
				return -1;
			break;
		case 0x8c:                      /* SHORT_BINUNICODE */
			if (need(m, 1) < 0)
				return -1;
			i = m->p[m->pos++];
			if (text(m, TA_PV_STR, i) < 0)
				return -1;
			break;
		case 0x8d: case 0x8e:           /* BINUNICODE8, BINBYTES8 */
			if (need(m, 8) < 0)
				return -1;
			{
				uint64_t len = le(m->p + m->pos, 8);

				m->pos += 8;
				if (len > m->n - m->pos)
					return bad(m, at, "a string longer than the pickle");
				if (text(m, op == 0x8d ? TA_PV_STR : TA_PV_BYTES, (size_t)len) < 0)
					return -1;
			}
			break;
		case 'C':                       /* SHORT_BINBYTES */
			if (need(m, 1) < 0)
				return -1;
			i = m->p[m->pos++];
			if (text(m, TA_PV_BYTES, i) < 0)
				return -1;
			break;
		case 'B':                       /* BINBYTES */
			if (need(m, 4) < 0)
				return -1;
			i = (size_t)le(m->p + m->pos, 4);
			m->pos += 4;
			if (text(m, TA_PV_BYTES, i) < 0)
				return -1;
			break;
		case 'J': case 'K': case 'M':   /* BININT, BININT1, BININT2 */
			i = op == 'J' ? 4 : op == 'K' ? 1 : 2;
			if (need(m, i) < 0)
				return -1;
			v = new_value(m, TA_PV_INT);
			v->i = op == 'J' ? (int64_t)(int32_t)(uint32_t)le(m->p + m->pos, 4) :
			       (int64_t)le(m->p + m->pos, i);
			m->pos += i;
			if (push(m, v) < 0)
				return -1;
			break;
		case 0x8a:                      /* LONG1: little-endian, signed */
			if (need(m, 1) < 0)
				return -1;
			i = m->p[m->pos++];
			if (need(m, i) < 0)
				return -1;
			v = new_value(m, TA_PV_INT);
			if (i > 8) {
				v->big = 1;
				v->i = m->p[m->pos + i - 1] & 0x80 ? INT64_MIN : INT64_MAX;
			} else if (i > 0) {
				uint64_t u = le(m->p + m->pos, i);

				if (i < 8 && (m->p[m->pos + i - 1] & 0x80))
					u |= ~(uint64_t)0 << (8 * i);
				v->i = (int64_t)u;
			}
			m->pos += i;
			if (push(m, v) < 0)
				return -1;
			break;
		case 'G':                       /* BINFLOAT: big-endian double */
			if (need(m, 8) < 0)
				return -1;
			{
				uint64_t u = 0;
				int k;

				for (k = 0; k < 8; k++)
					u = u << 8 | m->p[m->pos + (size_t)k];
				v = new_value(m, TA_PV_FLOAT);
				memcpy(&v->d, &u, sizeof(v->d));
			}
			m->pos += 8;
			if (push(m, v) < 0)
				return -1;
			break;
		case 0x88: case 0x89:           /* NEWTRUE, NEWFALSE */
			v = new_value(m, TA_PV_BOOL);
			v->i = op == 0x88;
			if (push(m, v) < 0)
				return -1;
			break;
		case 'N':
			if (push(m, new_value(m, TA_PV_NONE)) < 0)
				return -1;
			break;
		case 0x94:                      /* MEMOIZE */
			if (m->sp == 0)
				return bad(m, at, "MEMOIZE with nothing to store");
			if (memo_put(m, m->nmemo, m->stack[m->sp - 1]) < 0)
				return -1;
			break;
		case 'q': case 'r':             /* BINPUT, LONG_BINPUT */
			i = op == 'q' ? 1 : 4;
			if (need(m, i) < 0 || m->sp == 0)
				return m->sp ? -1 : bad(m, at, "PUT with nothing to store");
			if (memo_put(m, (size_t)le(m->p + m->pos, i), m->stack[m->sp - 1]) < 0)
				return -1;
			m->pos += i;
			break;
		case 'h': case 'j':             /* BINGET, LONG_BINGET */
			i = op == 'h' ? 1 : 4;
			if (need(m, i) < 0)
				return -1;
			{
				size_t k = (size_t)le(m->p + m->pos, i);

				m->pos += i;
				if (memo_get(m, k) < 0)
					return -1;
			}
			break;
		case '0':                       /* POP */
			if (!pop(m))
				return bad(m, at, "POP of nothing");
			break;
		default: {
			char what[96];

			snprintf(what, sizeof(what), "opcode 0x%02x is not plain data "
				 "(it would build an object or run code); refused", op);
			return bad(m, at, what);
		}
		}
	}
}

struct ta_pickle *ta_pickle_parse(const unsigned char *p, size_t n,
				  const char *name, struct ta_error *err)
{
	struct ta_pickle *pk = ta_xcalloc(1, sizeof(*pk));
	struct vm m;
	int rc;

	memset(&m, 0, sizeof(m));
	m.pk = pk;
	m.p = p;
	m.n = n;
	m.name = name;
	m.err = err;
	rc = run(&m);
	free(m.stack);
	free(m.marks);
	free(m.memo);
	if (rc < 0) {
		ta_pickle_free(pk);
		return NULL;
	}
	return pk;
}

struct ta_pickle *ta_pickle_read(const char *path, struct ta_error *err)
{
	gzFile f = gzopen(path, "rb");
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0;
	struct ta_pickle *pk;
	int got;

	if (!f) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': cannot open", path);
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= MAX_FILE) {
				gzclose(f);
				free(buf);
				ta_error_set(err, TA_EXIT_INPUT, "'%s': a pickle over 4 GB", path);
				return NULL;
			}
			cap = cap ? 2 * cap : 1 << 20;
			buf = ta_xrealloc(buf, cap);
		}
		got = gzread(f, buf + n, (unsigned)(cap - n > (1u << 30) ? 1u << 30 : cap - n));
		if (got < 0) {
			int e;
			const char *msg = gzerror(f, &e);

			ta_error_set(err, TA_EXIT_INPUT, "'%s': %s at byte %zu", path, msg, n);
			gzclose(f);
			free(buf);
			return NULL;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	gzclose(f);
	pk = ta_pickle_parse(buf, n, path, err);
	free(buf);
	return pk;
}

const struct ta_pv *ta_pickle_root(const struct ta_pickle *pk)
{
	return pk->root;
}

void ta_pickle_free(struct ta_pickle *pk)
{
	size_t i;

	if (!pk)
		return;
	for (i = 0; i < pk->nall; i++) {
		free(pk->all[i]->v);
		free(pk->all[i]);
	}
	for (i = 0; i < pk->ntexts; i++)
		free(pk->texts[i]);
	free(pk->all);
	free(pk->texts);
	free(pk);
}

const struct ta_pv *ta_pv_get(const struct ta_pv *d, const char *key)
{
	size_t i;

	if (!d || d->t != TA_PV_DICT)
		return NULL;
	for (i = 0; i + 1 < d->n; i += 2)
		if (d->v[i]->t == TA_PV_STR && strcmp(d->v[i]->s, key) == 0)
			return d->v[i + 1];
	return NULL;
}

int64_t ta_pv_int(const struct ta_pv *v, int64_t dflt)
{
	if (v && (v->t == TA_PV_INT || v->t == TA_PV_BOOL))
		return v->i;
	if (v && v->t == TA_PV_FLOAT)
		return (int64_t)v->d;
	return dflt;
}

const char *ta_pv_str(const struct ta_pv *v)
{
	return v && v->t == TA_PV_STR ? v->s : NULL;
}
