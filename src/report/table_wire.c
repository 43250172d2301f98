/* Tables joined from parts: appended in memory, or written to a file by
 * one process (a shard's child) and appended by another (its parent). */
#include "ta_table.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Adds src's notes and warnings to dst's, or with same_notes checks
 * they are dst's; 0 when they are not. */
static int add_notes(struct ta_table *dst, const char *notes, size_t nlen,
		     const char *warnings, size_t wlen, int same_notes)
{
	if (same_notes)
		return nlen == dst->notes.len && wlen == dst->warnings.len &&
		       (!nlen || memcmp(notes, dst->notes.s, nlen) == 0) &&
		       (!wlen || memcmp(warnings, dst->warnings.s, wlen) == 0);
	ta_buf_add(&dst->notes, notes ? notes : "", nlen);
	ta_buf_add(&dst->warnings, warnings ? warnings : "", wlen);
	return 1;
}

/* Appends src's rows and messages to dst, and its second table to dst's;
 * 0 when they differ in shape. */
int ta_table_append(struct ta_table *dst, const struct ta_table *src, int same_notes)
{
	size_t r, c;

	if (dst->ncols != src->ncols || src->head.len || src->tail.len ||
	    !dst->also != !src->also ||
	    (src->also && !ta_table_append(dst->also, src->also, same_notes)))
		return 0;
	for (c = 0; c < dst->ncols; c++)
		if (strcmp(dst->cols[c].name, src->cols[c].name) != 0 ||
		    dst->cols[c].type != src->cols[c].type)
			return 0;
	for (r = 0; r < src->nrows; r++) {
		size_t row = ta_table_add_row(dst);

		for (c = 0; c < src->ncols; c++) {
			const struct ta_cell *x = ta_table_cell(src, r, c);

			if (x->null)
				continue;
			if (src->cols[c].type == TA_COL_INT)
				ta_table_set_int(dst, row, c, x->i);
			else if (src->cols[c].type == TA_COL_REAL)
				ta_table_set_real(dst, row, c, x->d);
			else
				ta_table_set_text(dst, row, c, x->s);
		}
	}
	dst->bad_utf8 += src->bad_utf8;
	if (src->ranks_absent > dst->ranks_absent)
		dst->ranks_absent = src->ranks_absent;
	dst->ranks_empty += src->ranks_empty;
	return add_notes(dst, src->notes.s, src->notes.len, src->warnings.s,
			 src->warnings.len, same_notes);
}

/* A child's table, to its parent through a file: the cells, then notes,
 * warnings, replaced bytes and absent ranks, then its second table if it has one; head
 * and tail must be empty (append). */
static void put_i64(FILE *f, int64_t v)
{
	fwrite(&v, sizeof(v), 1, f);
}

static int64_t get_i64(FILE *f)
{
	int64_t v = -1;

	return fread(&v, sizeof(v), 1, f) == 1 ? v : -1;
}

static void put_bytes(FILE *f, const char *s, size_t n)
{
	put_i64(f, (int64_t)n);
	if (n)
		fwrite(s, 1, n, f);
}

void ta_table_write_wire(FILE *f, const struct ta_table *t)
{
	size_t r, c;

	put_i64(f, (int64_t)t->ncols);
	for (c = 0; c < t->ncols; c++) {
		put_bytes(f, t->cols[c].name, strlen(t->cols[c].name));
		put_i64(f, t->cols[c].type);
	}
	put_i64(f, (int64_t)t->nrows);
	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++) {
			const struct ta_cell *x = ta_table_cell(t, r, c);

			put_i64(f, x->null);
			if (x->null)
				continue;
			if (t->cols[c].type == TA_COL_INT)
				put_i64(f, x->i);
			else if (t->cols[c].type == TA_COL_REAL)
				fwrite(&x->d, sizeof(x->d), 1, f);
			else
				put_bytes(f, x->s, strlen(x->s));
		}
	put_bytes(f, t->notes.s, t->notes.len);
	put_bytes(f, t->warnings.s, t->warnings.len);
	put_i64(f, (int64_t)t->bad_utf8);
	put_i64(f, (int64_t)t->ranks_absent);
	put_i64(f, (int64_t)t->ranks_empty);
	put_i64(f, (int64_t)(t->head.len + t->tail.len));
	put_i64(f, t->also != NULL);
	if (t->also)
		ta_table_write_wire(f, t->also);
}

/* Up to 64 MiB of text, or NULL. */
static char *get_bytes(FILE *f, size_t *n)
{
	int64_t len = get_i64(f);
	char *s;

	if (len < 0 || len > (64 << 20))
		return NULL;
	s = ta_xmalloc((size_t)len + 1);
	if (len && fread(s, 1, (size_t)len, f) != (size_t)len) {
		free(s);
		return NULL;
	}
	s[len] = '\0';
	*n = (size_t)len;
	return s;
}

/* Appends what ta_table_write_wire wrote to dst; 0 if it differs in shape or is
 * cut short. */
int ta_table_read_wire(FILE *f, struct ta_table *dst, int same_notes)
{
	int64_t nc = get_i64(f), nr, k;
	size_t c, n, wn;
	char *s, *w = NULL;
	int ok = nc == (int64_t)dst->ncols;

	for (c = 0; ok && c < dst->ncols; c++) {
		s = get_bytes(f, &n);
		ok = s && strcmp(s, dst->cols[c].name) == 0 &&
		     get_i64(f) == (int64_t)dst->cols[c].type;
		free(s);
	}
	nr = ok ? get_i64(f) : -1;
	for (k = 0; ok && k < nr; k++) {
		size_t row = ta_table_add_row(dst);

		for (c = 0; ok && c < dst->ncols; c++) {
			int64_t null = get_i64(f);

			ok = null == 0 || null == 1;
			if (!ok || null)
				continue;
			if (dst->cols[c].type == TA_COL_INT) {
				ta_table_set_int(dst, row, c, get_i64(f));
			} else if (dst->cols[c].type == TA_COL_REAL) {
				double d = 0;

				ok = fread(&d, sizeof(d), 1, f) == 1;
				ta_table_set_real(dst, row, c, d);
			} else {
				ok = (s = get_bytes(f, &n)) != NULL;
				if (ok)
					ta_table_set_text(dst, row, c, s);
				free(s);
			}
		}
	}
	s = ok ? get_bytes(f, &n) : NULL;
	w = s ? get_bytes(f, &wn) : NULL;
	ok = w && add_notes(dst, s, n, w, wn, same_notes);
	free(s);
	free(w);
	if (ok) {
		int64_t absent, empty;

		k = get_i64(f);
		absent = get_i64(f);
		empty = get_i64(f);
		ok = k >= 0 && absent >= 0 && empty >= 0 && get_i64(f) == 0;
		dst->bad_utf8 += ok ? (size_t)k : 0;
		if (ok && (size_t)absent > dst->ranks_absent)
			dst->ranks_absent = (size_t)absent;
		dst->ranks_empty += ok ? (size_t)empty : 0;
	}
	if (ok) {
		k = get_i64(f);
		ok = (k == 0 && !dst->also) ||
		     (k == 1 && dst->also && ta_table_read_wire(f, dst->also, same_notes));
	}
	return ok;
}
