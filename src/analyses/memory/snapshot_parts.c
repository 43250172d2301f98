/* What a snapshot's baseline is made of, from each block's stack (the
 * frames the recorder kept at its allocation):
 *   optimizer state  a Python frame in torch/optim/;
 *   parameters       a Python frame in torch/nn/ that makes or moves a
 *                    module's tensors (__init__, reset_parameters, _apply,
 *                    convert, to_empty, load_state_dict);
 *   gradients        a C++ AccumulateGrad frame, or else a block with no
 *                    Python frame (autograd's thread has none) whose size
 *                    is that of a parameter not yet matched: a gradient has
 *                    its parameter's shape;
 *   workspace        a C++ frame that sets up a library's workspace
 *                    (cuBLAS, cuBLASLt: "Workspace" in its name).
 * Bytes are the requested sizes, the tensors' own; what the allocator
 * rounds up stays in the rest. */
#include "snapshot_int.h"
#include "ta_db.h"

#include <stdlib.h>
#include <string.h>

struct frame {
	const char *name, *file;
	size_t nlen, flen;
};

/* One line of a stack, "name TAB file:line"; returns the next line. */
static const char *next_frame(const char *p, struct frame *f)
{
	const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
	const char *tab = memchr(p, '\t', (size_t)(end - p));
	const char *colon = end;

	f->name = p;
	f->nlen = tab ? (size_t)(tab - p) : (size_t)(end - p);
	f->file = tab ? tab + 1 : end;
	while (colon > f->file && colon[-1] != ':')
		colon--;
	f->flen = colon > f->file ? (size_t)(colon - 1 - f->file) : (size_t)(end - f->file);
	return nl ? nl + 1 : NULL;
}

static int has(const char *s, size_t n, const char *what)
{
	size_t w = strlen(what), i;

	for (i = 0; i + w <= n; i++)
		if (memcmp(s + i, what, w) == 0)
			return 1;
	return 0;
}

static int is_python(const struct frame *f)
{
	return f->flen && (f->file[0] == '<' ||
			   (f->flen > 3 && memcmp(f->file + f->flen - 3, ".py", 3) == 0));
}

static int is_name(const struct frame *f, const char *const *names)
{
	for (; *names; names++)
		if (f->nlen == strlen(*names) && memcmp(f->name, *names, f->nlen) == 0)
			return 1;
	return 0;
}

/* The part a stack says, or -1 for unknown; *python: it has a Python
 * frame, *cxx: a C++ one. */
static int part_of(const char *stack, int *python, int *cxx)
{
	static const char *const makers[] = { "__init__", "reset_parameters", "_apply",
		"convert", "to_empty", "load_state_dict", "_load_from_state_dict", NULL };
	struct frame f;
	const char *p = stack;
	int part = -1;

	*python = 0;
	while (p && *p) {
		p = next_frame(p, &f);
		*cxx |= !is_python(&f) && f.nlen > 0;
		if (is_python(&f)) {
			*python = 1;
			if (has(f.file, f.flen, "/torch/optim/"))
				return PART_OPTIMIZER;
			if (has(f.file, f.flen, "/torch/nn/") && is_name(&f, makers))
				part = PART_PARAMS;
		} else if (part < 0 && has(f.name, f.nlen, "AccumulateGrad")) {
			part = PART_GRADS;
		} else if (part < 0 && (has(f.name, f.nlen, "Workspace") ||
					has(f.name, f.nlen, "workspace"))) {
			part = PART_WORKSPACE;
		}
	}
	return part;
}

struct blk {
	int64_t requested;
	int part, python;
};

/* Marks an unused size equal to want in sorted v; 1 if there was one. */
static int take(const int64_t *v, char *used, size_t n, int64_t want)
{
	size_t lo = ta_lower_i64(v, n, want);

	for (; lo < n && v[lo] == want; lo++)
		if (!used[lo])
			return used[lo] = 1;
	return 0;
}

int snap_parts(sqlite3 *db, int64_t dev, int (*in_baseline)(int64_t addr, void *ctx),
	       void *ctx, int64_t sums[NPARTS], int64_t *unrecorded, int *cxx_frames,
	       struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct blk *b = NULL;
	int64_t *psize = NULL;
	char *used;
	size_t n = 0, cap = 0, np = 0, i;
	int rc;

	memset(sums, 0, NPARTS * sizeof(*sums));
	*unrecorded = 0;
	*cxx_frames = 0;
	if (ta_db_prepare(db, "SELECT addr, requested, COALESCE(stack, '') FROM snapshot_blocks"
			  " WHERE device = ? AND state = 'active_allocated' ORDER BY addr",
			  &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, dev);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int base = in_baseline(sqlite3_column_int64(st, 0), ctx);

		if (base == BASE_NO)
			continue;
		if (base == BASE_UNRECORDED) { /* its stack is not its own */
			*unrecorded += sqlite3_column_int64(st, 1);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			b = ta_xrealloc(b, cap * sizeof(*b));
		}
		b[n].requested = sqlite3_column_int64(st, 1);
		b[n].part = part_of((const char *)sqlite3_column_text(st, 2), &b[n].python,
				    cxx_frames);
		if (b[n].part == PART_PARAMS) {
			psize = ta_xrealloc(psize, (np + 1) * sizeof(*psize));
			psize[np++] = b[n].requested;
		}
		n++;
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0) {
		free(b);
		free(psize);
		return -1;
	}
	/* each parameter's size matches one gradient at most: AccumulateGrad's
	 * take theirs first */
	if (np) /* none recorded: qsort must not see NULL */
		qsort(psize, np, sizeof(*psize), ta_cmp_i64);
	used = ta_xcalloc(np ? np : 1, 1);
	for (i = 0; i < n; i++)
		if (b[i].part == PART_GRADS)
			take(psize, used, np, b[i].requested);
	for (i = 0; i < n; i++) {
		if (b[i].part < 0 && !b[i].python && take(psize, used, np, b[i].requested))
			b[i].part = PART_GRADS;
		if (b[i].part >= 0)
			sums[b[i].part] += b[i].requested;
	}
	free(used);
	free(b);
	free(psize);
	return 0;
}
