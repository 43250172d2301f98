/* --fail-if: a small expression language over a table's columns.
 *   expr := and ('||' and)*      and := unary ('&&' unary)*
 *   unary := '!' unary | cmp     cmp := atom (op atom)?
 *   atom := NUMBER | STRING | COLUMN | '(' expr ')'                    */
#include "ta_gate.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum node_type { N_NUM, N_STR, N_COL, N_CMP, N_AND, N_OR, N_NOT };
enum cmp_op { OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE };

struct node {
	enum node_type type;
	enum cmp_op op;
	double num;
	char *text;          /* string literal or column name */
	size_t col;
	struct node *l, *r;
};

struct ta_gate {
	char *expr;
	struct node *root;
};

/* Bounds that keep the recursive parser and evaluator off the end of
 * the stack, whatever the command line holds. */
#define MAX_NESTING 256
#define MAX_ATOMS 4096

struct parser {
	const char *s;
	size_t pos;
	struct ta_error *err;
	int failed;
	int nesting;        /* open '(' and '!' */
	int atoms;
};

static int nest(struct parser *p)
{
	if (++p->nesting <= MAX_NESTING)
		return 0;
	if (!p->failed)
		ta_error_set(p->err, TA_EXIT_USAGE, "bad --fail-if expression at "
			     "character %zu: nested deeper than %d", p->pos,
			     MAX_NESTING);
	p->failed = 1;
	return -1;
}

/* What people often write that the language spells otherwise. */
static const char *hint(const char *at)
{
	if (*at == '%')
		return "; percentages are plain numbers (idle_pct > 12)";
	if (*at == '=' && at[1] != '=')
		return "; compare with ==";
	if ((strncmp(at, "and", 3) == 0 || strncmp(at, "or", 2) == 0 ||
	     strncmp(at, "not", 3) == 0) && !isalnum((unsigned char)at[at[0] == 'o' ? 2 : 3]))
		return "; combine with &&, || and !";
	return "";
}

/* The error names the expression, the character and what is there. */
static void fail(struct parser *p, const char *what)
{
	const char *at = p->s + p->pos;

	if (!p->failed) {
		/* a long expression is quoted by its start: the message stays short */
		int n = strlen(p->s) > 60 ? 57 : 60;
		const char *more = strlen(p->s) > 60 ? "..." : "";

		if (*at)
			ta_error_set(p->err, TA_EXIT_USAGE, "bad --fail-if expression "
				     "'%.*s%s' at character %zu ('%.10s'): %s%s", n, p->s,
				     more, p->pos + 1, at, what, hint(at));
		else
			ta_error_set(p->err, TA_EXIT_USAGE, "bad --fail-if expression "
				     "'%.*s%s' at its end: %s", n, p->s, more, what);
	}
	p->failed = 1;
}

static void skip_space(struct parser *p)
{
	while (isspace((unsigned char)p->s[p->pos]))
		p->pos++;
}

static int accept(struct parser *p, const char *tok)
{
	size_t n = strlen(tok);

	skip_space(p);
	if (strncmp(p->s + p->pos, tok, n) != 0)
		return 0;
	p->pos += n;
	return 1;
}

static struct node *new_node(enum node_type t)
{
	struct node *n = ta_xcalloc(1, sizeof(*n));

	n->type = t;
	return n;
}

static void free_node(struct node *n)
{
	if (!n)
		return;
	free_node(n->l);
	free_node(n->r);
	free(n->text);
	free(n);
}

static struct node *parse_or(struct parser *p);

static struct node *parse_string(struct parser *p)
{
	char quote = p->s[p->pos++];
	size_t start = p->pos;
	struct node *n;

	while (p->s[p->pos] && p->s[p->pos] != quote)
		p->pos++;
	if (!p->s[p->pos]) {
		fail(p, "unterminated string");
		return NULL;
	}
	n = new_node(N_STR);
	n->text = ta_xstrndup(p->s + start, p->pos - start);
	p->pos++;
	return n;
}

static struct node *parse_atom(struct parser *p)
{
	const char *c;
	char *end;
	struct node *n;

	skip_space(p);
	c = p->s + p->pos;
	if (accept(p, "(")) {
		if (nest(p) < 0)
			return NULL;
		n = parse_or(p);
		p->nesting--;
		if (!accept(p, ")"))
			fail(p, "expected ')'");
		return n;
	}
	if (++p->atoms > MAX_ATOMS) {
		fail(p, "more than 4096 terms");
		return NULL;
	}
	if (*c == '"' || *c == '\'')
		return parse_string(p);
	if (isdigit((unsigned char)*c) || *c == '-' || *c == '.') {
		n = new_node(N_NUM);
		n->num = ta_strtod(c, &end);
		if (end == c)
			fail(p, "expected a number");
		/* 1e999 is infinity: 'x > 1e999' could never trip (helper-55) */
		else if (!isfinite(n->num))
			fail(p, "not a finite number");
		p->pos += (size_t)(end - c);
		return n;
	}
	if (isalpha((unsigned char)*c) || *c == '_') {
		size_t len = 0;

		while (isalnum((unsigned char)c[len]) || c[len] == '_')
			len++;
		n = new_node(N_COL);
		n->text = ta_xstrndup(c, len);
		p->pos += len;
		return n;
	}
	fail(p, "expected a column, number or string");
	return NULL;
}

static struct node *parse_cmp(struct parser *p)
{
	static const struct { const char *tok; enum cmp_op op; } ops[] = {
		{ "<=", OP_LE }, { ">=", OP_GE }, { "==", OP_EQ }, { "!=", OP_NE },
		{ "<", OP_LT }, { ">", OP_GT },
	};
	struct node *l = parse_atom(p), *n;
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (accept(p, ops[i].tok)) {
			n = new_node(N_CMP);
			n->op = ops[i].op;
			n->l = l;
			n->r = parse_atom(p);
			return n;
		}
	return l;
}

static struct node *parse_unary(struct parser *p)
{
	struct node *n;

	skip_space(p);
	if (p->s[p->pos] == '!' && p->s[p->pos + 1] != '=') {
		p->pos++;
		if (nest(p) < 0)
			return NULL;
		n = new_node(N_NOT);
		n->l = parse_unary(p);
		p->nesting--;
		return n;
	}
	return parse_cmp(p);
}

static struct node *parse_binary(struct parser *p, const char *tok,
				 enum node_type t,
				 struct node *(*sub)(struct parser *))
{
	struct node *l = sub(p);

	while (!p->failed && accept(p, tok)) {
		struct node *n = new_node(t);

		n->l = l;
		n->r = sub(p);
		l = n;
	}
	return l;
}

static struct node *parse_and(struct parser *p)
{
	return parse_binary(p, "&&", N_AND, parse_unary);
}

static struct node *parse_or(struct parser *p)
{
	return parse_binary(p, "||", N_OR, parse_and);
}

struct ta_gate *ta_gate_parse(const char *expr, struct ta_error *err)
{
	struct parser p = { expr, 0, err, 0, 0, 0 };
	struct ta_gate *g = ta_xcalloc(1, sizeof(*g));

	g->expr = ta_xstrdup(expr);
	g->root = parse_or(&p);
	skip_space(&p);
	if (!p.failed && p.s[p.pos])
		fail(&p, "expected &&, || or the end");
	if (p.failed || !g->root) {
		if (!p.failed)
			fail(&p, "empty expression");
		ta_gate_free(g);
		return NULL;
	}
	return g;
}

void ta_table_columns(const struct ta_table *t, char *buf, size_t len)
{
	size_t c, used = 0;

	buf[0] = '\0';
	for (c = 0; c < t->ncols && used < len; c++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", c ? ", " : "",
					 t->cols[c].name);
}

static const char *type_name(const struct node *n, const struct ta_table *t)
{
	if (n->type == N_STR)
		return "a string";
	if (n->type == N_COL)
		return t->cols[n->col].type == TA_COL_TEXT ? "text" : "a number";
	return "a number";
}

static int is_text(const struct node *n, const struct ta_table *t)
{
	return n->type == N_STR ||
	       (n->type == N_COL && t->cols[n->col].type == TA_COL_TEXT);
}

/* A comparison of a text column with a number (or a number column with
 * a string) could never be true; a string that an enumerated column
 * never holds ("host_stalled" for "host-stalled") is a typo. Both are
 * errors, never a gate that silently passes. */
static int check_cmp(const struct node *n, const struct ta_table *t,
		     struct ta_error *err)
{
	const struct node *col = n->l->type == N_COL ? n->l : n->r;
	const struct node *lit = col == n->l ? n->r : n->l;
	const char *const *v;
	struct ta_buf list = { 0 };

	if (is_text(n->l, t) != is_text(n->r, t)) {
		ta_error_set(err, TA_EXIT_USAGE, "--fail-if: %s%s%s is %s, compared "
			     "with %s", col->type == N_COL ? "column '" : "",
			     col->type == N_COL ? col->text : "a value",
			     col->type == N_COL ? "'" : "", type_name(col, t),
			     type_name(lit, t));
		return -1;
	}
	if (col->type != N_COL || lit->type != N_STR || !t->values ||
	    !(v = t->values[col->col]))
		return 0;
	for (; *v; v++)
		if (strcmp(*v, lit->text) == 0)
			return 0;
	for (v = t->values[col->col]; *v; v++)
		ta_buf_addf(&list, "%s%s", list.len ? ", " : "", *v);
	ta_error_set(err, TA_EXIT_USAGE, "--fail-if: '%s' is never a %s; its "
		     "values: %s", lit->text, col->text, list.s);
	ta_buf_free(&list);
	return -1;
}

static int bind_node(struct node *n, const struct ta_table *t,
		     struct ta_error *err)
{

	if (!n)
		return 0;
	if (n->type == N_CMP)
		return bind_node(n->l, t, err) < 0 || bind_node(n->r, t, err) < 0 ||
		       check_cmp(n, t, err) < 0 ? -1 : 0;
	if (n->type == N_COL) {
		long at = ta_table_col_typed(t, n->text);

		if (at >= 0) {
			n->col = (size_t)at;
			if (ta_table_col(t, n->text) < 0 && ta_col_renamed(t, n->text) &&
			    strcmp(ta_col_renamed(t, n->text), t->cols[at].name) == 0)
				fprintf(stderr, "traceanalyze: --fail-if: '%s' is now called "
					"'%s' (the old name is read until 2027-06)\n", n->text,
					t->cols[at].name);
			return 0;
		}
		{
			char cols[512];

			ta_table_columns(t, cols, sizeof(cols));
			ta_error_set(err, TA_EXIT_USAGE,
				     "--fail-if: no column '%s'; columns: %s",
				     n->text, cols);
		}
		return -1;
	}
	return bind_node(n->l, t, err) < 0 || bind_node(n->r, t, err) < 0 ? -1 : 0;
}

int ta_gate_bind(struct ta_gate *g, const struct ta_table *t,
		 struct ta_error *err)
{
	return bind_node(g->root, t, err);
}

/* Three-valued: a comparison with a missing value (an empty cell) is
 * neither true nor false, and so is what depends on it. */
static int eval(const struct node *n, const struct ta_table *t, size_t row);

struct value {
	int kind;           /* 0 missing, 1 number, 2 text */
	double d;
	const char *s;
};

static struct value value_of(const struct node *n, const struct ta_table *t,
			     size_t row)
{
	struct value v = { 0, 0, NULL };
	const struct ta_cell *c;
	int r;

	switch (n->type) {
	case N_NUM:
		v.kind = 1, v.d = n->num;
		break;
	case N_STR:
		v.kind = 2, v.s = n->text;
		break;
	case N_COL:
		c = ta_table_cell(t, row, n->col);
		if (c->null)
			break;
		if (t->cols[n->col].type == TA_COL_TEXT)
			v.kind = 2, v.s = c->s;
		else
			v.kind = 1, v.d = t->cols[n->col].type == TA_COL_INT ?
					  (double)c->i : c->d;
		break;
	default:
		r = eval(n, t, row);
		if (r != TA_GATE_MISSING)
			v.kind = 1, v.d = r;
	}
	return v;
}

static int compare(enum cmp_op op, int c)
{
	switch (op) {
	case OP_LT: return c < 0;
	case OP_LE: return c <= 0;
	case OP_GT: return c > 0;
	case OP_GE: return c >= 0;
	case OP_EQ: return c == 0;
	default: return c != 0;
	}
}

static int eval(const struct node *n, const struct ta_table *t, size_t row)
{
	struct value a, b;
	int x, y;

	switch (n->type) {
	case N_AND:
		x = eval(n->l, t, row);
		if (x == TA_GATE_PASS)
			return TA_GATE_PASS;
		y = eval(n->r, t, row);
		if (y == TA_GATE_PASS)
			return TA_GATE_PASS;
		return x == TA_GATE_MISSING || y == TA_GATE_MISSING ?
		       TA_GATE_MISSING : TA_GATE_TRIP;
	case N_OR:
		x = eval(n->l, t, row);
		if (x == TA_GATE_TRIP)
			return TA_GATE_TRIP;
		y = eval(n->r, t, row);
		if (y == TA_GATE_TRIP)
			return TA_GATE_TRIP;
		return x == TA_GATE_MISSING || y == TA_GATE_MISSING ?
		       TA_GATE_MISSING : TA_GATE_PASS;
	case N_NOT:
		x = eval(n->l, t, row);
		return x == TA_GATE_MISSING ? x : !x;
	case N_CMP:
		a = value_of(n->l, t, row);
		b = value_of(n->r, t, row);
		if (a.kind == 0 || b.kind == 0)
			return TA_GATE_MISSING;
		if (a.kind != b.kind)
			return TA_GATE_PASS;
		if (a.kind == 2)
			return compare(n->op, strcmp(a.s, b.s));
		return compare(n->op, (a.d > b.d) - (a.d < b.d));
	default:
		a = value_of(n, t, row);
		if (a.kind == 0)
			return TA_GATE_MISSING;
		return a.kind == 1 ? a.d != 0 : a.s[0] != '\0';
	}
}

int ta_gate_eval(const struct ta_gate *g, const struct ta_table *t, size_t row)
{
	return eval(g->root, t, row);
}

/* Appends "col value" for each column n reads, once each. */
static void describe(const struct node *n, const struct ta_table *t, size_t row,
		     struct ta_buf *b, char *seen)
{
	const struct ta_cell *c;

	if (!n)
		return;
	if (n->type != N_COL) {
		describe(n->l, t, row, b, seen);
		describe(n->r, t, row, b, seen);
		return;
	}
	if (seen[n->col] || t->cols[n->col].key)
		return;
	seen[n->col] = 1;
	c = ta_table_cell(t, row, n->col);
	/* the column's own name: "idle" reads idle_us, in µs */
	ta_buf_addf(b, "%s%s ", b->len ? ", " : "", t->cols[n->col].name);
	if (c->null)
		ta_buf_adds(b, "missing");
	else if (t->cols[n->col].type == TA_COL_TEXT)
		ta_buf_addf(b, "'%s'", c->s);
	else if (t->cols[n->col].type == TA_COL_INT)
		ta_buf_addf(b, "%lld", (long long)c->i);
	else
		ta_buf_addf(b, "%.15g", c->d);
}

void ta_gate_describe(const struct ta_gate *g, const struct ta_table *t,
		      size_t row, struct ta_buf *out)
{
	char *seen = ta_xcalloc(t->ncols + 1, 1);

	describe(g->root, t, row, out, seen);
	free(seen);
}

/* Whether some row's key column col equals the literal lit. */
static int key_seen(const struct ta_table *t, size_t col, const struct node *lit)
{
	const struct ta_cell *c;
	size_t r;

	for (r = 0; r < t->nrows; r++) {
		c = ta_table_cell(t, r, col);
		if (c->null)
			continue;
		if (lit->type == N_STR ? t->cols[col].type == TA_COL_TEXT &&
					 strcmp(c->s, lit->text) == 0 :
		    t->cols[col].type == TA_COL_INT && (double)c->i == lit->num)
			return 1;
	}
	return 0;
}

/* rank == 7 where no row has rank 7, or name == "aten::mmm" where no row
 * has that name: the gate could never trip, so it is an error (a key
 * column compared for equality with a value no row holds). A gate meant
 * to fail when a name appears fails here too, before any output: it
 * cannot tell a typo from a clean run. */
static int check_keys(const struct node *n, const struct ta_table *t,
		      struct ta_error *err)
{
	const struct node *col, *lit;

	if (!n)
		return 0;
	if (n->type != N_CMP)
		return check_keys(n->l, t, err) < 0 || check_keys(n->r, t, err) < 0 ?
		       -1 : 0;
	col = n->l->type == N_COL ? n->l : n->r;
	lit = col == n->l ? n->r : n->l;
	if (n->op != OP_EQ || col->type != N_COL || !t->cols[col->col].key ||
	    (lit->type != N_NUM && lit->type != N_STR) ||
	    key_seen(t, col->col, lit))
		return 0;
	/* an enumerated column ("category") may lack a value for good: no
	 * host_wait rows is a clean run; check_cmp caught the typos */
	if (lit->type == N_STR && t->values && t->values[col->col])
		return 0;
	if (lit->type == N_STR)
		ta_error_set(err, TA_EXIT_USAGE, "--fail-if: no row has %s '%s'; the "
			     "gate could never trip", col->text, lit->text);
	else
		ta_error_set(err, TA_EXIT_USAGE, "--fail-if: no row has %s %g; the "
			     "gate could never trip", col->text, lit->num);
	return -1;
}

int ta_gate_check_keys(const struct ta_gate *g, const struct ta_table *t,
		       struct ta_error *err)
{
	return check_keys(g->root, t, err);
}

const char *ta_gate_text(const struct ta_gate *g)
{
	return g->expr;
}

void ta_gate_free(struct ta_gate *g)
{
	if (!g)
		return;
	free_node(g->root);
	free(g->expr);
	free(g);
}
