/* A kernel's or op's name for people (the page's labels): a C++
 * signature read as what tells kernels apart. The return type and the
 * parameter list go; template arguments stay one level deep, deeper ones
 * fold to <…> (cutlass::Kernel2<cutlass_80_tensorop_…> keeps what names
 * the kernel, at::native::vectorized_elementwise_kernel<4, Functor<…>>
 * loses the rest); then, past the width, the middle is cut as the text
 * output cuts it. The full name stays in the table and the hover. */
#include "ta_report.h"
#include "ta_utf8.h"

#include <string.h>

static void add(struct ta_buf *b, const char *s, size_t n)
{
	ta_buf_grow(b, n + 1);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* s with the leading "void ", "(anonymous namespace)::" and the final
 * top-level parameter list dropped, templates folded below depth 1. */
static void fold(const char *whole, struct ta_buf *b)
{
	static const char anon[] = "(anonymous namespace)::";
	const char *s = whole;
	size_t n = strlen(s), end = n, i;
	int depth = 0, paren = 0;

	/* the parameter list: the last '(' whose ')' ends the name */
	if (n && s[n - 1] == ')') {
		for (i = n; i-- > 0;) {
			if (s[i] == ')')
				paren++;
			else if (s[i] == '(' && --paren == 0) {
				if (i > 0)
					end = i;
				break;
			}
		}
	}
	/* a signature: its return type is what comes before the last space
	 * outside brackets ("void ", "std::enable_if<...>::type "); a name
	 * without parameters (a kernel type: "COMPUTATION overlapping
	 * COMMUNICATION") keeps its spaces */
	if (end < n) {
		size_t cut = 0;

		for (i = 0, depth = 0; i < end; i++) {
			depth += s[i] == '<' || s[i] == '(' || s[i] == '[';
			depth -= depth > 0 && (s[i] == '>' || s[i] == ')' || s[i] == ']');
			if (s[i] == ' ' && depth == 0)
				cut = i + 1;
		}
		if (cut < end)
			s += cut, n -= cut, end -= cut;
		depth = 0;
	} else if (strncmp(s, "void ", 5) == 0 && n > 5) {
		s += 5, n -= 5, end -= 5;
	}
	for (i = 0; i < end; i++) {
		if (s[i] == '(' && strncmp(s + i, anon, sizeof(anon) - 1) == 0) {
			i += sizeof(anon) - 2;
			continue;
		}
		if (s[i] == '<') {
			if (depth++ == 1)
				add(b, "<…>", strlen("<…>"));
			if (depth == 1)
				add(b, "<", 1);
			continue;
		}
		if (s[i] == '>' && depth > 0) {
			if (--depth == 0)
				add(b, ">", 1);
			continue;
		}
		if (depth < 2)
			add(b, s + i, 1);
	}
	if (!b->len)
		add(b, whole, strlen(whole));
}

void ta_people_name(const char *s, size_t w, struct ta_buf *out)
{
	struct ta_buf f = { 0 };
	size_t sw, head, tail, i, j;

	out->len = 0;
	add(out, "", 0);
	if (!s || !*s)
		return;
	fold(s, &f);
	sw = ta_utf8_width(f.s);
	if (sw <= w || w < 4) {
		add(out, f.s, f.len);
		ta_buf_free(&f);
		return;
	}
	/* two thirds from the start, a third from the end: a kernel's name
	 * ends in what tells it apart (tile sizes, layout) */
	head = (w - 1) * 2 / 3, tail = w - 1 - head;
	i = ta_utf8_prefix(f.s, head), j = ta_utf8_prefix(f.s, sw - tail);
	add(out, f.s, i);
	add(out, "…", strlen("…"));
	add(out, f.s + j, f.len - j);
	ta_buf_free(&f);
}
