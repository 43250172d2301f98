/* Common definitions: exit codes, errors, allocation, small string buffer. */
#ifndef TA_H
#define TA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TA_VERSION "0.1.0"

/* Exit codes, documented in the man page's EXIT STATUS. */
enum ta_exit {
	TA_EXIT_OK = 0,
	TA_EXIT_GATE = 1,   /* a --fail-if gate tripped */
	TA_EXIT_USAGE = 2,  /* bad command line */
	TA_EXIT_INPUT = 3,  /* bad or unusable input */
	TA_EXIT_SYSTEM = 4  /* I/O, database or other system error */
};

/* Lower layers fill this and return -1; only commands print it. */
struct ta_error {
	int code;           /* an enum ta_exit value */
	char msg[512];
	int damaged;        /* SQLite found the database damaged (exec/db.c) */
};

void ta_error_set(struct ta_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* msg after its leading "'path': " where it names path (the errors of
 * exec/db.c do), else msg: for a line that names the file itself. */
const char *ta_msg_unnamed(const char *msg, const char *path);
/* s with its control characters (a database's text is anyone's: ESC, a
 * newline that forges a line) as '?', in buf of len bytes, cut to fit. */
const char *ta_no_controls(char *buf, size_t len, const char *s);
/* s with its Python object addresses taken out, in place ("<built-in
 * method wait of Event object at 0x7f3c...>": the address differs from
 * run to run, the frame does not); s. */
char *ta_no_addresses(char *s);

/* Diagnostics on stderr, git's grammar: "traceanalyze: warning: ...". */
extern int ta_quiet;
void ta_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
struct ta_buf;
/* Each line of b as a warning; b is emptied. */
void ta_warn_lines(struct ta_buf *b);
/* Starts a line of counts ta_warn_lines adds up over shards before it
 * writes it (ta_table_warn_sum): SEP n SEP of SEP template. */
#define TA_WARN_SUM '\x1e'
/* What a child process wrote to f (its stderr), onto ours: messages of
 * work done in parallel, said in order. */
void ta_stderr_replay(FILE *f);
void ta_stderr_bytes(const char *s, size_t n);
/* Appends what f holds, from its start. */
void ta_buf_read_file(struct ta_buf *b, FILE *f);
/* What --verbose says: "traceanalyze: ...", unless quiet. */
void ta_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Cores this process may run on (at least 1). */
int ta_cores(void);
/* Edits from the first la bytes of a to b (Levenshtein), for "did you
 * mean"; 99 for names of 63 bytes or more. */
size_t ta_edit_distance(const char *a, size_t la, const char *b);
void ta_die_oom(void) __attribute__((noreturn));

/* Allocation that never returns NULL (out of memory is fatal). */
void *ta_xmalloc(size_t n);
void *ta_xcalloc(size_t n, size_t size);
void *ta_xrealloc(void *p, size_t n);
char *ta_xstrdup(const char *s);
char *ta_xstrndup(const char *s, size_t n);

/* strtod for what a user types: decimal only ([-+]digits[.digits][e[-+]digits]),
 * so "0x10", "inf", "nan" and leading spaces end at s (strtod reads 0x10
 * as 16); *end is set as strtod sets it. */
double ta_strtod(const char *s, char **end);

/* qsort that accepts an empty (NULL) array, which qsort itself may not. */
void ta_qsort(void *base, size_t n, size_t size,
	      int (*cmp)(const void *, const void *));
/* qsort's comparison of int64_t values, ascending. */
int ta_cmp_i64(const void *a, const void *b);
/* The first index of sorted v[0..n) whose value is at least x (n if none). */
size_t ta_lower_i64(const int64_t *v, size_t n, int64_t x);

/* A growable byte buffer, always NUL-terminated. */
struct ta_buf {
	char *s;
	size_t len, cap;
};
/* a + b, held at INT64_MAX or INT64_MIN rather than past them (times and
 * sums from an edited database may be anything) */
static inline int64_t ta_add_sat(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static inline int64_t ta_sub_sat(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

void ta_buf_grow(struct ta_buf *b, size_t extra);

/* Appends n bytes; inline, since the parser calls it for every value. */
static inline void ta_buf_add(struct ta_buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap)
		ta_buf_grow(b, n);
	__builtin_memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static inline void ta_buf_addc(struct ta_buf *b, char c)
{
	ta_buf_add(b, &c, 1);
}
void ta_buf_adds(struct ta_buf *b, const char *s);
void ta_buf_addf(struct ta_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ta_buf_reset(struct ta_buf *b);
void ta_buf_free(struct ta_buf *b);

#endif
