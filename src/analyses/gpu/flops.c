/* FLOPs and bytes per op call, from the shapes record_shapes writes.
 * The FLOP formulas are torch/utils/flop_counter.py's (mm_flop,
 * conv_flop_count, conv_backward_flop, sdpa_flop_count,
 * sdpa_backward_flop_count), so a step's matmul FLOPs equal what
 * FlopCounterMode counts; a causal attention's are scaled by the share of
 * the score matrix its mask leaves, which FlopCounterMode does not do
 * (its "NB: We aren't accounting for causal attention here"). Bytes: every
 * tensor argument read once and the result written once. */
#include "flops.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading the texts ---- */

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

/* One integer list "[4, 256]" at s; dims past the maximum make nd -1 (a
 * shape the formulas cannot use). Returns the text after it, NULL if it
 * is not one. */
static const char *int_list(const char *s, int *nd, int64_t *d)
{
	int n = 0;

	s = skip_ws(s);
	if (*s++ != '[')
		return NULL;
	s = skip_ws(s);
	while (*s != ']') {
		char *end;
		long long v = strtoll(s, &end, 10);

		if (end == s || v < 0)
			return NULL;
		if (n < TA_FLOPS_MAX_DIMS)
			d[n] = v;
		n++;
		s = skip_ws(end);
		if (*s == ',')
			s = skip_ws(s + 1);
		else if (*s != ']')
			return NULL;
	}
	*nd = n <= TA_FLOPS_MAX_DIMS ? n : -1;
	return s + 1;
}

static int parse_dims(struct ta_op_args *a, const char *s)
{
	int64_t scratch[TA_FLOPS_MAX_DIMS];

	s = skip_ws(s);
	if (*s++ != '[')
		return -1;
	s = skip_ws(s);
	while (*s != ']') {
		int k = a->n < TA_FLOPS_MAX_ARGS ? a->n : -1, nd;

		s = int_list(s, &nd, k >= 0 ? a->d[k] : scratch);
		if (!s)
			return -1;
		if (k >= 0)
			a->nd[k] = nd;
		a->n++;
		s = skip_ws(s);
		if (*s == ',')
			s = skip_ws(s + 1);
		else if (*s != ']')
			return -1;
	}
	if (a->n > TA_FLOPS_MAX_ARGS)
		a->n = TA_FLOPS_MAX_ARGS;
	return 0;
}

/* A list of JSON strings into out[][len], each cut to fit; -1 if it is
 * not one. */
static int parse_strings(const char *s, char (*out)[48], size_t len, int *n)
{
	*n = 0;
	s = skip_ws(s);
	if (*s++ != '[')
		return -1;
	s = skip_ws(s);
	while (*s != ']') {
		size_t k = 0;

		if (*s++ != '"')
			return -1;
		while (*s && *s != '"') {
			if (*s == '\\' && s[1])
				s++;
			if (*n < TA_FLOPS_MAX_ARGS && k + 1 < len)
				((char *)out + (size_t)*n * len)[k++] = *s;
			s++;
		}
		if (*s++ != '"')
			return -1;
		if (*n < TA_FLOPS_MAX_ARGS)
			((char *)out + (size_t)*n * len)[k] = '\0';
		(*n)++;
		s = skip_ws(s);
		if (*s == ',')
			s = skip_ws(s + 1);
		else if (*s != ']')
			return -1;
	}
	if (*n > TA_FLOPS_MAX_ARGS)
		*n = TA_FLOPS_MAX_ARGS;
	return 0;
}

int ta_op_args_parse(struct ta_op_args *a, const char *dims,
		     const char *types, const char *concrete)
{
	char types48[TA_FLOPS_MAX_ARGS][48];
	int i;

	memset(a, 0, sizeof(*a));
	if (!dims || parse_dims(a, dims) < 0) {
		a->n = 0;
		return -1;
	}
	if (types && parse_strings(types, types48, sizeof(types48[0]), &a->ntypes) == 0)
		for (i = 0; i < a->ntypes; i++)
			snprintf(a->type[i], sizeof(a->type[i]), "%.23s", types48[i]);
	else
		a->ntypes = 0;
	if (!concrete || parse_strings(concrete, a->conc, sizeof(a->conc[0]), &a->nconc) < 0)
		a->nconc = 0;
	return 0;
}

/* ---- what the arguments are ---- */

static const struct dtype {
	const char *type, *dtype;
	int width;
} dtypes[] = {
	{ "c10::BFloat16", "bf16", 2 }, { "c10::Half", "fp16", 2 },
	{ "float", "fp32", 4 }, { "double", "fp64", 8 },
	{ "c10::Float8_e4m3fn", "fp8", 1 }, { "c10::Float8_e5m2", "fp8", 1 },
	{ "c10::Float8_e4m3fnuz", "fp8", 1 }, { "c10::Float8_e5m2fnuz", "fp8", 1 },
	{ "signed char", "int8", 1 }, { "unsigned char", "uint8", 1 },
	{ "short int", "int16", 2 }, { "int", "int32", 4 }, { "long int", "int64", 8 },
	{ "bool", "bool", 1 },
};

static const struct dtype *dtype_of(const struct ta_op_args *a, int i)
{
	size_t k;

	if (i >= a->ntypes)
		return NULL;
	for (k = 0; k < sizeof(dtypes) / sizeof(dtypes[0]); k++)
		if (strcmp(a->type[i], dtypes[k].type) == 0)
			return &dtypes[k];
	return NULL;
}

static int is_tensor(const struct ta_op_args *a, int i, int nd)
{
	return i < a->n && a->nd[i] == nd;
}

static double numel(const struct ta_op_args *a, int i)
{
	double p = 1;
	int k;

	for (k = 0; k < a->nd[i]; k++)
		p *= (double)a->d[i][k];
	return p;
}

/* Every tensor argument's bytes (a shape and a known type); a tensor
 * of unknown type counts at the width of the first operand. */
static double bytes_in(const struct ta_op_args *a, int width)
{
	double b = 0;
	int i;

	for (i = 0; i < a->n; i++) {
		const struct dtype *t = dtype_of(a, i);

		if (a->nd[i] > 0)
			b += numel(a, i) * (t ? t->width : width);
	}
	return b;
}

/* Concrete input i as "True"/"False": 1, 0; -1 unknown. */
static int conc_bool(const struct ta_op_args *a, int i)
{
	if (i >= a->nconc)
		return -1;
	if (strcmp(a->conc[i], "True") == 0 || strcmp(a->conc[i], "1") == 0)
		return 1;
	if (strcmp(a->conc[i], "False") == 0 || strcmp(a->conc[i], "0") == 0)
		return 0;
	return -1;
}

/* Concrete input i as an int list "[2, 2]" (or one int), broadcast to
 * want entries; -1 if unknown. */
static int conc_ints(const struct ta_op_args *a, int i, int want, int64_t *v)
{
	int nd, k;
	char *end;

	if (i >= a->nconc || want > TA_FLOPS_MAX_DIMS)
		return -1;
	if (a->conc[i][0] != '[') {
		long long x = strtoll(a->conc[i], &end, 10);

		if (end == a->conc[i] || *end)
			return -1;
		for (k = 0; k < want; k++)
			v[k] = x;
		return 0;
	}
	if (!int_list(a->conc[i], &nd, v) || nd < 1 || (nd != want && nd != 1))
		return -1;
	for (k = nd; k < want; k++)
		v[k] = v[0];
	return 0;
}

/* ---- the formulas ---- */

/* The product of n sizes, doubles (d) or integers (i). */
static double prod_d(const double *d, const int64_t *i, int n)
{
	double p = 1;
	int k;

	for (k = 0; k < n; k++)
		p *= d ? d[k] : (double)i[k];
	return p;
}

static double prod(const int64_t *d, int n)
{
	double p = 1;

	while (n-- > 0)
		p *= (double)*d++;
	return p;
}

/* mm(a, b), addmm(bias, a, b): 2*M*N*K */
static int matmul(const struct ta_op_args *a, int first, int batched,
		  struct ta_work *w, int width)
{
	int nd = batched ? 3 : 2, x = first, y = first + 1;
	const int64_t *p, *q;
	double m, n, k, b = 1;

	if (!is_tensor(a, x, nd) || !is_tensor(a, y, nd))
		return -1;
	p = a->d[x], q = a->d[y];
	if (batched) {
		if (p[0] != q[0])
			return -1;
		b = (double)p[0], p++, q++;
	}
	if (p[1] != q[0])
		return -1;
	m = (double)p[0], k = (double)p[1], n = (double)q[1];
	w->flops = 2 * b * m * n * k;
	w->bytes = bytes_in(a, width) + b * m * n * width;
	return 0;
}

/* Every entry of v in [lo, 2^31): what torch accepts for a stride,
 * padding or dilation, and past which the sizes below could overflow. */
static int in_range(const int64_t *v, int n, int64_t lo)
{
	while (n-- > 0)
		if (v[n] < lo || v[n] >= (1LL << 31))
			return 0;
	return 1;
}

/* convolution/_convolution(x, w, bias, stride, padding, dilation,
 * transposed, output_padding, groups) */
static int conv(const struct ta_op_args *a, struct ta_work *w, int width)
{
	int64_t stride[TA_FLOPS_MAX_DIMS], pad[TA_FLOPS_MAX_DIMS];
	int64_t dil[TA_FLOPS_MAX_DIMS], opad[TA_FLOPS_MAX_DIMS], groups[1];
	double out[TA_FLOPS_MAX_DIMS], cout;
	int nd = a->n > 0 ? a->nd[0] : 0, sp = nd - 2, t, k;
	const int64_t *x = a->d[0], *f = a->d[1];

	if (nd < 3 || !is_tensor(a, 1, nd) || (t = conc_bool(a, 6)) < 0 ||
	    conc_ints(a, 3, sp, stride) < 0 || conc_ints(a, 4, sp, pad) < 0 ||
	    conc_ints(a, 5, sp, dil) < 0 || conc_ints(a, 8, 1, groups) < 0 ||
	    (t && conc_ints(a, 7, sp, opad) < 0) || !in_range(stride, sp, 1) ||
	    !in_range(pad, sp, 0) || !in_range(dil, sp, 1) || !in_range(groups, 1, 1) ||
	    (t && !in_range(opad, sp, 0)))
		return -1;
	for (k = 0; k < sp; k++) {
		double i = (double)x[k + 2], s = (double)stride[k], p = (double)pad[k];
		double d = (double)dil[k] * ((double)f[k + 2] - 1);

		out[k] = t ? (i - 1) * s - 2 * p + d + (double)opad[k] + 1 :
			     floor((i + 2 * p - d - 1) / s) + 1;
		if (out[k] <= 0)
			return -1;
	}
	w->flops = 2 * (double)x[0] * (double)f[0] * (double)f[1] *
		   prod_d(t ? NULL : out, t ? x + 2 : NULL, sp) * prod(f + 2, sp);
	cout = t ? (double)f[1] * (double)groups[0] : (double)f[0];
	w->bytes = bytes_in(a, width) + (double)x[0] * cout * prod_d(out, NULL, sp) * width;
	return 0;
}

/* convolution_backward(grad_out, input, weight, bias_sizes, stride,
 * padding, dilation, transposed, output_padding, groups, output_mask) */
static int conv_backward(const struct ta_op_args *a, struct ta_work *w, int width)
{
	int nd = a->n > 0 ? a->nd[0] : 0, sp = nd - 2, t;
	int64_t mask[3];
	const int64_t *go = a->d[0], *x = a->d[1], *f = a->d[2];
	char m[48];
	int k = 0;
	const char *s;

	if (nd < 3 || !is_tensor(a, 1, nd) || !is_tensor(a, 2, nd) ||
	    (t = conc_bool(a, 7)) < 0 || a->nconc <= 10)
		return -1;
	/* output_mask: "[True, True, False]" */
	snprintf(m, sizeof(m), "%s", a->conc[10]);
	for (s = m; *s && k < 3; s++)
		if (strncmp(s, "True", 4) == 0 || strncmp(s, "False", 5) == 0)
			mask[k++] = *s == 'T';
	if (k != 3)
		return -1;
	w->flops = 0;
	w->bytes = bytes_in(a, width);
	if (mask[0]) {
		w->flops += prod(t ? x + 2 : go + 2, sp) * prod(f + 2, sp) *
			    (double)go[0] * (double)f[0] * (double)f[1] * 2;
		w->bytes += numel(a, 1) * width;
	}
	if (mask[1]) {
		if (t)
			w->flops += prod(f + 2, sp) * prod(x + 2, sp) * (double)go[1] *
				    (double)x[1] * (double)x[0] * 2;
		else
			w->flops += prod(f + 2, sp) * prod(go + 2, sp) * (double)x[1] *
				    (double)go[1] * (double)go[0] * 2;
		w->bytes += numel(a, 2) * width;
	}
	if (mask[2])
		w->bytes += (double)go[1] * width;
	return 0;
}

/* The share of (query, key) pairs a causal mask keeps, aligned top-left
 * as torch's is_causal is: query i sees keys 0..i. */
static double causal_share(double sq, double sk)
{
	double pairs = sq <= sk ? sq * (sq + 1) / 2 :
		       sk * (sk + 1) / 2 + (sq - sk) * sk;

	return sq > 0 && sk > 0 ? pairs / (sq * sk) : 1;
}

/* The fused attentions, forward and backward: where each keeps q, k, v
 * and is_causal among its arguments. */
static const struct attention {
	const char *op;
	int backward, q, causal;
} attentions[] = {
	{ "aten::_scaled_dot_product_flash_attention", 0, 0, 4 },
	{ "aten::_scaled_dot_product_efficient_attention", 0, 0, 6 },
	{ "aten::_scaled_dot_product_cudnn_attention", 0, 0, 6 },
	{ "aten::_scaled_dot_product_flash_attention_backward", 1, 1, 11 },
	{ "aten::_scaled_dot_product_efficient_attention_backward", 1, 1, 11 },
	{ "aten::_scaled_dot_product_cudnn_attention_backward", 1, 1, 14 },
};

static int attention(const struct attention *at, const struct ta_op_args *a,
		     struct ta_work *w, int width)
{
	const int64_t *q = a->d[at->q], *k = a->d[at->q + 1], *v = a->d[at->q + 2];
	double bh, sq, sk, d, dv, full;
	int causal = conc_bool(a, at->causal);

	/* is_causal halves the work: without it (no Concrete Inputs, or a
	 * value that says neither) the work is unknown, not guessed */
	if (causal < 0)
		return -1;
	if (!is_tensor(a, at->q, 4) || !is_tensor(a, at->q + 1, 4) ||
	    !is_tensor(a, at->q + 2, 4) || q[3] != k[3] || k[2] != v[2])
		return -1;
	bh = (double)q[0] * (double)q[1];
	sq = (double)q[2], sk = (double)k[2], d = (double)q[3], dv = (double)v[3];
	full = at->backward ? 2 * bh * sq * sk * (3 * d + 2 * dv) :
			      2 * bh * sq * sk * (d + dv);
	w->causal_share = causal == 1 ? causal_share(sq, sk) : 1;
	w->flops = full * w->causal_share;
	w->bytes = bytes_in(a, width) +
		   (at->backward ? (numel(a, at->q) + numel(a, at->q + 1) +
				    numel(a, at->q + 2)) * width : bh * sq * dv * width);
	return 0;
}

static const struct attention *attention_of(const char *op)
{
	size_t i;

	for (i = 0; i < sizeof(attentions) / sizeof(attentions[0]); i++)
		if (strcmp(op, attentions[i].op) == 0)
			return &attentions[i];
	return NULL;
}

enum kind { K_NONE, K_MM, K_ADDMM, K_BMM, K_BADDBMM, K_CONV, K_CONV_BACKWARD, K_ATTN };

static enum kind kind_of(const char *op)
{
	if (strcmp(op, "aten::mm") == 0)
		return K_MM;
	if (strcmp(op, "aten::addmm") == 0)
		return K_ADDMM;
	if (strcmp(op, "aten::bmm") == 0)
		return K_BMM;
	if (strcmp(op, "aten::baddbmm") == 0)
		return K_BADDBMM;
	if (strcmp(op, "aten::convolution") == 0 || strcmp(op, "aten::_convolution") == 0)
		return K_CONV;
	if (strcmp(op, "aten::convolution_backward") == 0)
		return K_CONV_BACKWARD;
	return attention_of(op) ? K_ATTN : K_NONE;
}

int ta_flops_counted(const char *op)
{
	return op && kind_of(op) != K_NONE;
}

int ta_flops_work(const char *op, const struct ta_op_args *a, struct ta_work *w)
{
	enum kind k = kind_of(op);
	/* the operand whose type is the op's: the first matrix (addmm's
	 * first argument is its bias) */
	int first = k == K_ADDMM || k == K_BADDBMM ? 1 :
		    k == K_ATTN ? attention_of(op)->q : 0;
	const struct dtype *t = dtype_of(a, first);
	int rc = -1;

	memset(w, 0, sizeof(*w));
	w->causal_share = 1;
	if (k == K_NONE || !t)
		return -1;
	w->dtype = t->dtype;
	switch (k) {
	case K_MM: case K_ADDMM:
		rc = matmul(a, first, 0, w, t->width);
		break;
	case K_BMM: case K_BADDBMM:
		rc = matmul(a, first, 1, w, t->width);
		break;
	case K_CONV:
		rc = conv(a, w, t->width);
		break;
	case K_CONV_BACKWARD:
		rc = conv_backward(a, w, t->width);
		break;
	case K_ATTN:
		rc = attention(attention_of(op), a, w, t->width);
		break;
	default:
		break;
	}
	/* 1e18 FLOPs is 1000 s of an H100: damage, not a call */
	if (rc < 0 || !isfinite(w->flops) || !isfinite(w->bytes) || w->flops > 1e18 ||
	    w->bytes > 1e18 || w->flops < 0 || w->bytes < 0)
		return -1;
	return 0;
}
