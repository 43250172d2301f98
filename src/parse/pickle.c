/* The plain-data pickle reader (ta_pickle.h): a stack machine over the
 * opcodes that make containers and scalars, nothing else. The input is
 * read in pieces; values live in chunks and may be shared (the memo), so
 * they are freed at once. What the values take is counted against one
 * budget, so a small file cannot make the reader take the machine. */
#include "ta_pickle.h"
#include "gzread.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STACK (1u << 24)        /* values on the stack at once */
#define MAX_LINE (1u << 26)         /* a protocol-0 text argument */
#define CHUNK 65536                 /* values per chunk */
#define TEXT_BLOCK (1u << 20)       /* short strings share blocks this size */
#define PIECE (1u << 18)            /* read from a file this much at a time */

struct ta_pickle {
	struct ta_pv **chunks;      /* CHUNK values each */
	size_t nchunks, used;       /* used: of the last chunk */
	char **texts;               /* text blocks and long strings */
	size_t ntexts, captexts;
	char *block;                /* the text block being filled */
	size_t block_used;
	struct ta_pv none, yes, no; /* shared, never in a chunk */
	struct ta_pv *root;
	uint64_t bytes;             /* the pickle's length */
	size_t memory;              /* what the values take */
};

struct vm {
	struct ta_pickle *pk;
	struct ta_gzr *f;           /* NULL: all of the pickle is in buf */
	const char *chunk;          /* from f, copied into own from at */
	size_t chunk_len, at;
	const unsigned char *buf;
	unsigned char *own;         /* buf when read from f */
	size_t len, pos;            /* of buf */
	uint64_t base;              /* the pickle's offset of buf[0] */
	struct ta_pv **stack;
	size_t sp, cap;
	size_t *marks;
	size_t nmarks, capmarks;
	struct ta_pv **memo;
	size_t nmemo, capmemo;
	uint64_t pushed;            /* values read: bounds memo indexes */
	const char *name;
	struct ta_error *err;
};

static int bad(struct vm *m, uint64_t at, const char *what)
{
	ta_error_set(m->err, TA_EXIT_INPUT, "'%s': %s at byte %llu", m->name, what,
		     (unsigned long long)at);
	return -1;
}

static uint64_t here(const struct vm *m)
{
	return m->base + m->pos;
}

/* Counts n more bytes of values against the budget. */
static int charge(struct vm *m, size_t n)
{
	if (n > TA_PICKLE_MAX_MEMORY - m->pk->memory)
		return bad(m, here(m), "a pickle whose values would take more than "
			   "4 GB of memory; refused");
	m->pk->memory += n;
	return 0;
}

/* Copies the file's next bytes into own after len: their count, 0 at the
 * end, -1 on damage. */
static long more(struct vm *m)
{
	size_t n;

	if (m->at == m->chunk_len) {
		long got = ta_gzr_read(m->f, &m->chunk);

		if (got < 0)
			return bad(m, m->base + m->len, ta_gzr_error(m->f));
		if (got == 0)
			return 0;
		m->chunk_len = (size_t)got;
		m->at = 0;
	}
	n = m->chunk_len - m->at < PIECE - m->len ? m->chunk_len - m->at : PIECE - m->len;
	memcpy(m->own + m->len, m->chunk + m->at, n);
	m->at += n;
	m->len += n;
	m->pk->bytes = m->base + m->len;
	return (long)n;
}

/* Makes k bytes readable at buf + pos (k is small). */
static int need(struct vm *m, size_t k)
{
	long got = 0;

	if (m->len - m->pos >= k)
		return 0;
	if (m->f) {
		memmove(m->own, m->own + m->pos, m->len - m->pos);
		m->base += m->pos;
		m->len -= m->pos;
		m->pos = 0;
		while (m->len < k && (got = more(m)) > 0)
			;
		if (got < 0)
			return -1;
		if (m->len >= k)
			return 0;
	}
	return bad(m, here(m), "the pickle ends inside an opcode");
}

static int next_byte(struct vm *m, unsigned char *c)
{
	if (need(m, 1) < 0)
		return -1;
	*c = m->buf[m->pos++];
	return 0;
}

/* Copies len bytes of the pickle into dst, in pieces. */
static int take(struct vm *m, unsigned char *dst, size_t len)
{
	while (len) {
		size_t k;

		if (m->pos == m->len && need(m, 1) < 0)
			return -1;
		k = m->len - m->pos < len ? m->len - m->pos : len;
		memcpy(dst, m->buf + m->pos, k);
		m->pos += k;
		dst += k;
		len -= k;
	}
	return 0;
}

static uint64_t le(const unsigned char *p, size_t k)
{
	uint64_t v = 0;

	while (k--)
		v = v << 8 | p[k];
	return v;
}

/* A little-endian length of k bytes. */
static int length(struct vm *m, size_t k, uint64_t *len)
{
	if (need(m, k) < 0)
		return -1;
	*len = le(m->buf + m->pos, k);
	m->pos += k;
	return 0;
}

static struct ta_pv *new_value(struct vm *m, enum ta_pv_type t)
{
	struct ta_pickle *pk = m->pk;
	struct ta_pv *v;

	if (charge(m, sizeof(*v)) < 0)
		return NULL;
	if (pk->nchunks == 0 || pk->used == CHUNK) {
		pk->chunks = ta_xrealloc(pk->chunks, (pk->nchunks + 1) * sizeof(*pk->chunks));
		pk->chunks[pk->nchunks++] = ta_xmalloc(CHUNK * sizeof(struct ta_pv));
		pk->used = 0;
	}
	v = &pk->chunks[pk->nchunks - 1][pk->used++];
	memset(v, 0, sizeof(*v));
	v->t = (unsigned char)t;
	return v;
}

/* Room for a string of len bytes and its NUL. */
static char *text_room(struct vm *m, size_t len)
{
	struct ta_pickle *pk = m->pk;
	char *s;

	if (charge(m, len + 1) < 0)
		return NULL;
	if (pk->ntexts == pk->captexts) {
		pk->captexts = pk->captexts ? 2 * pk->captexts : 64;
		pk->texts = ta_xrealloc(pk->texts, pk->captexts * sizeof(char *));
	}
	if (len >= TEXT_BLOCK / 16)
		return pk->texts[pk->ntexts++] = ta_xmalloc(len + 1);
	if (!pk->block || TEXT_BLOCK - pk->block_used < len + 1) {
		pk->block = pk->texts[pk->ntexts++] = ta_xmalloc(TEXT_BLOCK);
		pk->block_used = 0;
	}
	s = pk->block + pk->block_used;
	pk->block_used += len + 1;
	return s;
}

static int push(struct vm *m, struct ta_pv *v)
{
	if (!v)
		return -1;
	if (m->sp >= MAX_STACK)
		return bad(m, here(m), "a pickle deeper than 16M values");
	if (m->sp == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->stack = ta_xrealloc(m->stack, m->cap * sizeof(*m->stack));
	}
	m->stack[m->sp++] = v;
	m->pushed++;
	return 0;
}

static struct ta_pv *pop(struct vm *m)
{
	if (m->sp == 0 || (m->nmarks && m->sp == m->marks[m->nmarks - 1]))
		return NULL;
	return m->stack[--m->sp];
}

static int string_value(struct vm *m, enum ta_pv_type t, const char *s, size_t len)
{
	struct ta_pv *v = new_value(m, t);
	char *d;

	if (!v || !(d = text_room(m, len)))
		return -1;
	memcpy(d, s, len);
	d[len] = '\0';
	v->s = d;
	v->len = len;
	return push(m, v);
}

/* A string of len bytes from the pickle. A length past what the pickle
 * holds fails at its end, having taken no more than was there. */
static int text(struct vm *m, enum ta_pv_type t, uint64_t len)
{
	struct ta_pv *v;
	char *s;

	if (!m->f && len > m->len - m->pos)
		return bad(m, here(m), "a string longer than the pickle");
	if (len > TA_PICKLE_MAX_MEMORY)
		return bad(m, here(m), "a string over 4 GB");
	if (m->f && len > m->len - m->pos) {
		/* read in pieces, growing as bytes arrive */
		unsigned char *tmp = NULL;
		size_t got = 0, cap = 0;
		int rc;

		while (got < len) {
			size_t k = len - got < PIECE ? (size_t)(len - got) : PIECE;

			if (got + k > cap) {
				cap = cap * 2 > got + k ? cap * 2 : got + k;
				tmp = ta_xrealloc(tmp, cap);
			}
			if (take(m, tmp + got, k) < 0) {
				free(tmp);
				return -1;
			}
			got += k;
		}
		rc = string_value(m, t, (const char *)tmp, got);
		free(tmp);
		return rc;
	}
	v = new_value(m, t);
	if (!v || !(s = text_room(m, (size_t)len)))
		return -1;
	memcpy(s, m->buf + m->pos, (size_t)len);
	s[len] = '\0';
	m->pos += (size_t)len;
	v->s = s;
	v->len = (size_t)len;
	return push(m, v);
}

static int add_item(struct vm *m, struct ta_pv *c, struct ta_pv *x)
{
	if (c->n == UINT32_MAX)
		return bad(m, here(m), "a container of more than 4G items");
	if (c->n == c->cap) {
		size_t more = c->cap ? c->cap : 8;

		if (charge(m, more * sizeof(*c->v)) < 0)
			return -1;
		c->cap += more;
		c->v = ta_xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	c->v[c->n++] = x;
	return 0;
}

/* The values above the last mark, removed with it. */
static int since_mark(struct vm *m, size_t *from)
{
	if (!m->nmarks)
		return bad(m, here(m) - 1, "an opcode needs a MARK and there is none");
	*from = m->marks[--m->nmarks];
	return 0;
}

/* Moves the stack from `from` up into container c. */
static int fill(struct vm *m, struct ta_pv *c, size_t from)
{
	size_t i;

	for (i = from; i < m->sp; i++)
		if (add_item(m, c, m->stack[i]) < 0)
			return -1;
	m->sp = from;
	return 0;
}

/* TUPLE, LIST, DICT, FROZENSET: a new container of what is above the mark. */
static int container_of_mark(struct vm *m, enum ta_pv_type t)
{
	struct ta_pv *c;
	size_t from;

	if (since_mark(m, &from) < 0)
		return -1;
	if (t == TA_PV_DICT && (m->sp - from) % 2)
		return bad(m, here(m) - 1, "DICT of an odd number of values");
	if (!(c = new_value(m, t)) || fill(m, c, from) < 0)
		return -1;
	return push(m, c);
}

static int tuple_of(struct vm *m, size_t k)
{
	struct ta_pv *t;

	if (m->sp < k || (m->nmarks && m->sp - k < m->marks[m->nmarks - 1]))
		return bad(m, here(m) - 1, "a tuple of values that are not there");
	if (!(t = new_value(m, TA_PV_TUPLE)) || fill(m, t, m->sp - k) < 0)
		return -1;
	return push(m, t);
}

/* APPENDS, SETITEMS, ADDITEMS: what is above the mark into the container
 * below it. */
static int extend(struct vm *m, enum ta_pv_type t, const char *what)
{
	size_t from;

	if (since_mark(m, &from) < 0)
		return -1;
	if (from == 0 || m->stack[from - 1]->t != t ||
	    (t == TA_PV_DICT && (m->sp - from) % 2))
		return bad(m, here(m) - 1, what);
	return fill(m, m->stack[from - 1], from);
}

/* Python's pickler numbers the memo in order, so an index is never past
 * the values read: bounded so, the memo takes at most 8 bytes a value. */
static int memo_put(struct vm *m, uint64_t at, struct ta_pv *v)
{
	if (at > m->pushed)
		return bad(m, here(m), "a memo index past the values read");
	while (at >= m->capmemo) {
		size_t old = m->capmemo;

		m->capmemo = m->capmemo ? 2 * m->capmemo : 256;
		if (charge(m, (m->capmemo - old) * sizeof(*m->memo)) < 0)
			return -1;
		m->memo = ta_xrealloc(m->memo, m->capmemo * sizeof(*m->memo));
		memset(m->memo + old, 0, (m->capmemo - old) * sizeof(*m->memo));
	}
	m->memo[at] = v;
	if (at >= m->nmemo)
		m->nmemo = (size_t)at + 1;
	return 0;
}

static int memo_get(struct vm *m, uint64_t at)
{
	if (at >= m->nmemo || !m->memo[at])
		return bad(m, here(m), "a memo entry that was never stored");
	return push(m, m->memo[at]);
}

static int int_value(struct vm *m, int64_t i, int big)
{
	struct ta_pv *v = new_value(m, TA_PV_INT);

	if (!v)
		return -1;
	v->i = i;
	v->big = (unsigned char)big;
	return push(m, v);
}

/* LONG1, LONG4: k bytes, little-endian two's complement. */
static int long_value(struct vm *m, uint64_t k)
{
	unsigned char b[8], last = 0;
	uint64_t u = 0, i;

	if (k > 8) {
		/* past int64: only the sign is kept, the bytes are skipped */
		for (i = 0; i < k; i++)
			if (next_byte(m, &last) < 0)
				return -1;
		return int_value(m, last & 0x80 ? INT64_MIN : INT64_MAX, 1);
	}
	if (take(m, b, (size_t)k) < 0)
		return -1;
	if (k > 0) {
		u = le(b, (size_t)k);
		if (k < 8 && (b[k - 1] & 0x80))
			u |= ~(uint64_t)0 << (8 * k);
	}
	return int_value(m, (int64_t)u, 0);
}

/* A protocol-0 argument: the bytes up to the newline, NUL-terminated in
 * *line (grown as needed). */
static int read_line(struct vm *m, char **line, size_t *cap, size_t *len)
{
	unsigned char c;

	*len = 0;
	for (;;) {
		if (next_byte(m, &c) < 0)
			return -1;
		if (c == '\n')
			break;
		if (*len + 2 > *cap) {
			if (*cap >= MAX_LINE)
				return bad(m, here(m), "a text argument over 64 MB");
			*cap = *cap ? 2 * *cap : 64;
			*line = ta_xrealloc(*line, *cap);
		}
		(*line)[(*len)++] = (char)c;
	}
	if (!*line)
		*line = ta_xcalloc(1, *cap = 1);
	(*line)[*len] = '\0';
	return 0;
}

/* INT, LONG, PUT, GET: a decimal integer; a long's trailing L is allowed.
 * Returns 1 past int64 (clamped to the sign). */
static int decimal(const char *s, int64_t *out, int *big)
{
	int neg = 0;
	uint64_t u = 0;
	const char *p = s;

	*big = 0;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (!(*p >= '0' && *p <= '9'))
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (!*big && u > (UINT64_MAX - 9) / 10)
			*big = 1;
		if (!*big)
			u = u * 10 + (uint64_t)(*p - '0');
	}
	if (*p == 'L')
		p++;
	if (*p)
		return -1;
	if (!*big && u > (uint64_t)INT64_MAX + neg)
		*big = 1;
	if (*big)
		*out = neg ? INT64_MIN : INT64_MAX;
	else
		*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return 0;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static size_t put_utf8(char *d, uint32_t cp)
{
	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		cp = 0xFFFD;
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xC0 | cp >> 6);
		d[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xE0 | cp >> 12);
		d[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		d[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	d[0] = (char)(0xF0 | cp >> 18);
	d[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	d[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	d[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* UNICODE's raw-unicode-escape: \uXXXX and \UXXXXXXXX, every other byte
 * a Latin-1 character; into UTF-8 (at most 2 bytes out per byte in). */
static size_t raw_unicode(const char *s, size_t n, char *d)
{
	size_t i = 0, o = 0;

	while (i < n) {
		size_t k = s[i] == '\\' && i + 1 < n ? (s[i + 1] == 'u' ? 4 : s[i + 1] == 'U' ? 8 : 0) : 0;
		uint32_t cp = 0;
		size_t j;

		for (j = 0; k && j < k; j++) {
			int h = i + 2 + j < n ? hexval((unsigned char)s[i + 2 + j]) : -1;

			if (h < 0)
				break;
			cp = cp << 4 | (uint32_t)h;
		}
		if (k && j == k) {
			o += put_utf8(d + o, cp);
			i += 2 + k;
		} else {
			o += put_utf8(d + o, (unsigned char)s[i++]);
		}
	}
	return o;
}

/* STRING's quoted repr with Python's escapes, as bytes (at most as many
 * out as in). -1 when it is not quoted. */
static long string_escape(const char *s, size_t n, char *d)
{
	size_t i, o = 0;

	if (n < 2 || s[0] != s[n - 1] || (s[0] != '\'' && s[0] != '"'))
		return -1;
	for (i = 1; i + 1 < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '\\' && i + 2 < n) {
			static const char from[] = "\\'\"abfnrtv", to[] = "\\'\"\a\b\f\n\r\t\v";
			const char *e = strchr(from, s[++i]);

			if (s[i] && e) {
				d[o++] = to[e - from];
			} else if (s[i] == 'x' && i + 3 < n && hexval((unsigned char)s[i + 1]) >= 0 &&
				   hexval((unsigned char)s[i + 2]) >= 0) {
				d[o++] = (char)(hexval((unsigned char)s[i + 1]) << 4 |
						hexval((unsigned char)s[i + 2]));
				i += 2;
			} else if (s[i] >= '0' && s[i] <= '7') {
				int v = 0, k;

				for (k = 0; k < 3 && i + 1 < n && s[i] >= '0' && s[i] <= '7'; k++)
					v = v * 8 + (s[i++] - '0');
				i--;
				d[o++] = (char)v;
			} else if (s[i] != '\n') {
				d[o++] = '\\';
				d[o++] = s[i];
			}
		} else {
			d[o++] = (char)c;
		}
	}
	return (long)o;
}

/* The protocol-0 opcodes that take a line: INT, LONG, FLOAT, STRING,
 * UNICODE, PUT, GET. */
static int text_opcode(struct vm *m, unsigned char op, uint64_t at, char **line, size_t *cap)
{
	size_t len;
	int64_t i;
	int big;

	if (read_line(m, line, cap, &len) < 0)
		return -1;
	switch (op) {
	case 'I':
		if (strcmp(*line, "00") == 0 || strcmp(*line, "01") == 0)
			return push(m, (*line)[1] == '1' ? &m->pk->yes : &m->pk->no);
		/* fall through */
	case 'L':
		if (decimal(*line, &i, &big) < 0)
			return bad(m, at, "an integer that is not a number");
		return int_value(m, i, big);
	case 'F': {
		char *end;
		struct ta_pv *v;
		double d = strtod(*line, &end);

		if (end == *line || *end)
			return bad(m, at, "a float that is not a number");
		if (!(v = new_value(m, TA_PV_FLOAT)))
			return -1;
		v->d = d;
		return push(m, v);
	}
	case 'p': case 'g':
		if (decimal(*line, &i, &big) < 0 || big || i < 0)
			return bad(m, at, "a memo index that is not a number");
		return op == 'p' ? (m->sp ? memo_put(m, (uint64_t)i, m->stack[m->sp - 1]) :
				    bad(m, at, "PUT with nothing to store")) :
		       memo_get(m, (uint64_t)i);
	default: {      /* 'S', 'V': decoded in place of a copy */
		char *d = ta_xmalloc(2 * len + 1);
		long o = op == 'V' ? (long)raw_unicode(*line, len, d) : string_escape(*line, len, d);
		int rc = o < 0 ? bad(m, at, "STRING that is not quoted") :
			 string_value(m, TA_PV_STR, d, (size_t)o);

		free(d);
		return rc;
	}
	}
}

static int run(struct vm *m)
{
	char *line = NULL;
	size_t linecap = 0;
	int rc = -1;

	for (;;) {
		uint64_t at = here(m), len;
		size_t from;
		struct ta_pv *v;
		unsigned char op, b[8];

		if (next_byte(m, &op) < 0)
			goto out;
		switch (op) {
		case 0x80:                      /* PROTO */
			if (next_byte(m, b) < 0)
				goto out;
			break;
		case 0x95:                      /* FRAME: a length, no meaning */
			if (length(m, 8, &len) < 0)
				goto out;
			break;
		case '.':                       /* STOP */
			if (m->sp != 1 || m->nmarks) {
				bad(m, at, "the pickle stops with no single value");
				goto out;
			}
			m->pk->root = m->stack[0];
			rc = 0;
			goto out;
		case '}': case ']': case ')': case 0x8f: /* EMPTY_DICT, _LIST, _TUPLE, _SET */
			if (push(m, new_value(m, op == '}' ? TA_PV_DICT : op == ']' ? TA_PV_LIST :
					      op == ')' ? TA_PV_TUPLE : TA_PV_SET)) < 0)
				goto out;
			break;
		case '(':                       /* MARK */
			if (m->nmarks == m->capmarks) {
				if (m->capmarks >= MAX_STACK) {
					bad(m, at, "more than 16M MARKs open");
					goto out;
				}
				m->capmarks = m->capmarks ? 2 * m->capmarks : 64;
				m->marks = ta_xrealloc(m->marks, m->capmarks * sizeof(*m->marks));
			}
			m->marks[m->nmarks++] = m->sp;
			break;
		case '1':                       /* POP_MARK */
			if (since_mark(m, &from) < 0)
				goto out;
			m->sp = from;
			break;
		case 't': case 'l': case 'd': case 0x91: /* TUPLE, LIST, DICT, FROZENSET */
			if (container_of_mark(m, op == 't' ? TA_PV_TUPLE : op == 'l' ? TA_PV_LIST :
					      op == 'd' ? TA_PV_DICT : TA_PV_SET) < 0)
				goto out;
			break;
		case 0x85: case 0x86: case 0x87:        /* TUPLE1..3 */
			if (tuple_of(m, (size_t)(op - 0x84)) < 0)
				goto out;
			break;
		case 'a':                       /* APPEND */
			v = pop(m);
			if (!v || m->sp == 0 || m->stack[m->sp - 1]->t != TA_PV_LIST) {
				bad(m, at, "APPEND to something not a list");
				goto out;
			}
			if (add_item(m, m->stack[m->sp - 1], v) < 0)
				goto out;
			break;
		case 'e':                       /* APPENDS */
			if (extend(m, TA_PV_LIST, "APPENDS to something not a list") < 0)
				goto out;
			break;
		case 0x90:                      /* ADDITEMS */
			if (extend(m, TA_PV_SET, "ADDITEMS to something not a set") < 0)
				goto out;
			break;
		case 'u':                       /* SETITEMS */
			if (extend(m, TA_PV_DICT, "SETITEMS on something not a dict") < 0)
				goto out;
			break;
		case 's':                       /* SETITEM */
			if (m->sp < 3 || m->stack[m->sp - 3]->t != TA_PV_DICT ||
			    (m->nmarks && m->sp - 2 < m->marks[m->nmarks - 1])) {
				bad(m, at, "SETITEM on something not a dict");
				goto out;
			}
			if (fill(m, m->stack[m->sp - 3], m->sp - 2) < 0)
				goto out;
			break;
		case 'X': case 'B': case 'T':   /* BINUNICODE, BINBYTES, BINSTRING */
			if (length(m, 4, &len) < 0)
				goto out;
			if (op == 'T' && len > INT32_MAX) {
				bad(m, at, "BINSTRING of a negative length");
				goto out;
			}
			if (text(m, op == 'B' ? TA_PV_BYTES : TA_PV_STR, len) < 0)
				goto out;
			break;
		case 0x8c: case 'C': case 'U': /* SHORT_BINUNICODE, _BINBYTES, _BINSTRING */
			if (length(m, 1, &len) < 0 ||
			    text(m, op == 'C' ? TA_PV_BYTES : TA_PV_STR, len) < 0)
				goto out;
			break;
		case 0x8d: case 0x8e: case 0x96: /* BINUNICODE8, BINBYTES8, BYTEARRAY8 */
			if (length(m, 8, &len) < 0 ||
			    text(m, op == 0x8d ? TA_PV_STR : TA_PV_BYTES, len) < 0)
				goto out;
			break;
		case 'J': case 'K': case 'M':   /* BININT, BININT1, BININT2 */
			if (length(m, op == 'J' ? 4 : op == 'K' ? 1 : 2, &len) < 0 ||
			    int_value(m, op == 'J' ? (int64_t)(int32_t)(uint32_t)len : (int64_t)len, 0) < 0)
				goto out;
			break;
		case 0x8a: case 0x8b:           /* LONG1, LONG4 */
			if (length(m, op == 0x8a ? 1 : 4, &len) < 0)
				goto out;
			if (op == 0x8b && len > INT32_MAX) {
				bad(m, at, "LONG4 of a negative length");
				goto out;
			}
			if (long_value(m, len) < 0)
				goto out;
			break;
		case 'G':                       /* BINFLOAT: big-endian double */
			if (take(m, b, 8) < 0 || !(v = new_value(m, TA_PV_FLOAT)))
				goto out;
			{
				uint64_t u = 0;
				int k;

				for (k = 0; k < 8; k++)
					u = u << 8 | b[k];
				memcpy(&v->d, &u, sizeof(v->d));
			}
			if (push(m, v) < 0)
				goto out;
			break;
		case 0x88: case 0x89:           /* NEWTRUE, NEWFALSE */
			if (push(m, op == 0x88 ? &m->pk->yes : &m->pk->no) < 0)
				goto out;
			break;
		case 'N':
			if (push(m, &m->pk->none) < 0)
				goto out;
			break;
		case 'I': case 'L': case 'F': case 'S': case 'V': case 'p': case 'g':
			if (text_opcode(m, op, at, &line, &linecap) < 0)
				goto out;
			break;
		case 0x94:                      /* MEMOIZE */
			if (m->sp == 0) {
				bad(m, at, "MEMOIZE with nothing to store");
				goto out;
			}
			if (memo_put(m, m->nmemo, m->stack[m->sp - 1]) < 0)
				goto out;
			break;
		case 'q': case 'r':             /* BINPUT, LONG_BINPUT */
			if (length(m, op == 'q' ? 1 : 4, &len) < 0)
				goto out;
			if (m->sp == 0) {
				bad(m, at, "PUT with nothing to store");
				goto out;
			}
			if (memo_put(m, len, m->stack[m->sp - 1]) < 0)
				goto out;
			break;
		case 'h': case 'j':             /* BINGET, LONG_BINGET */
			if (length(m, op == 'h' ? 1 : 4, &len) < 0 || memo_get(m, len) < 0)
				goto out;
			break;
		case '0':                       /* POP */
			if (!pop(m)) {
				bad(m, at, "POP of nothing");
				goto out;
			}
			break;
		case '2':                       /* DUP */
			if (m->sp == 0 || (m->nmarks && m->sp == m->marks[m->nmarks - 1])) {
				bad(m, at, "DUP of nothing");
				goto out;
			}
			if (push(m, m->stack[m->sp - 1]) < 0)
				goto out;
			break;
		default: {
			char what[96];

			snprintf(what, sizeof(what), "opcode 0x%02x is not plain data "
				 "(it would build an object or run code); refused", op);
			bad(m, at, what);
			goto out;
		}
		}
	}
out:
	free(line);
	return rc;
}

static struct ta_pickle *parse(struct vm *m)
{
	struct ta_pickle *pk = ta_xcalloc(1, sizeof(*pk));
	int rc;

	pk->none.t = TA_PV_NONE;
	pk->yes.t = pk->no.t = TA_PV_BOOL;
	pk->yes.i = 1;
	m->pk = pk;
	pk->bytes = m->len;
	rc = run(m);
	free(m->stack);
	free(m->marks);
	free(m->memo);
	if (rc < 0) {
		ta_pickle_free(pk);
		return NULL;
	}
	return pk;
}

struct ta_pickle *ta_pickle_parse(const unsigned char *p, size_t n,
				  const char *name, struct ta_error *err)
{
	struct vm m;

	memset(&m, 0, sizeof(m));
	m.buf = p;
	m.len = n;
	m.name = name;
	m.err = err;
	return parse(&m);
}

/* Reads the file to its end: damage after the STOP (a bad checksum at
 * the end of the gzip member) is damage all the same. */
static int finish(struct vm *m)
{
	long got;

	do {
		m->base += m->len;
		m->pos = m->len = 0;
	} while ((got = more(m)) > 0);
	return (int)got;
}

struct ta_pickle *ta_pickle_read(const char *path, struct ta_error *err)
{
	struct ta_pickle *pk;
	struct vm m;

	memset(&m, 0, sizeof(m));
	if (!(m.f = ta_gzr_open(path, 0, err)))
		return NULL;
	m.buf = m.own = ta_xmalloc(PIECE);
	m.name = path;
	m.err = err;
	pk = parse(&m);
	if (pk && finish(&m) < 0) {
		ta_pickle_free(pk);
		pk = NULL;
	}
	ta_gzr_close(m.f);
	free(m.own);
	return pk;
}

const struct ta_pv *ta_pickle_root(const struct ta_pickle *pk)
{
	return pk->root;
}

uint64_t ta_pickle_bytes(const struct ta_pickle *pk)
{
	return pk->bytes;
}

size_t ta_pickle_memory(const struct ta_pickle *pk)
{
	return pk->memory;
}

void ta_pickle_free(struct ta_pickle *pk)
{
	size_t c, i;

	if (!pk)
		return;
	for (c = 0; c < pk->nchunks; c++) {
		size_t n = c + 1 == pk->nchunks ? pk->used : CHUNK;

		for (i = 0; i < n; i++)
			if (pk->chunks[c][i].t >= TA_PV_LIST)
				free(pk->chunks[c][i].v);
		free(pk->chunks[c]);
	}
	for (i = 0; i < pk->ntexts; i++)
		free(pk->texts[i]);
	free(pk->chunks);
	free(pk->texts);
	free(pk);
}

const struct ta_pv *ta_pv_get(const struct ta_pv *d, const char *key)
{
	const struct ta_pv *last = NULL;
	size_t i;

	if (!d || d->t != TA_PV_DICT)
		return NULL;
	/* a key set twice holds its last value, as Python's dict does */
	for (i = 0; i + 1 < d->n; i += 2)
		if (d->v[i]->t == TA_PV_STR && strcmp(d->v[i]->s, key) == 0)
			last = d->v[i + 1];
	return last;
}

int64_t ta_pv_int(const struct ta_pv *v, int64_t dflt)
{
	if (v && (v->t == TA_PV_INT || v->t == TA_PV_BOOL))
		return v->i;
	/* a float only where it is a whole number int64 holds (NaN is not) */
	if (v && v->t == TA_PV_FLOAT && v->d >= -9.2e18 && v->d <= 9.2e18)
		return (int64_t)v->d;
	return dflt;
}

const char *ta_pv_str(const struct ta_pv *v)
{
	return v && v->t == TA_PV_STR ? v->s : NULL;
}
