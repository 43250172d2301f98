/* A reader for Python pickles of plain data (protocol 2 to 5): dicts,
 * lists, tuples, strings, bytes, integers, floats, booleans and None, as
 * torch.cuda.memory._dump_snapshot writes them. Any opcode that would
 * build an object or call code (GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ,
 * STACK_GLOBAL, PERSID, ...) is refused with its offset: reading never
 * executes anything. Depth and size are bounded. */
#ifndef TA_PICKLE_H
#define TA_PICKLE_H

#include "ta.h"

enum ta_pv_type { TA_PV_NONE, TA_PV_BOOL, TA_PV_INT, TA_PV_FLOAT, TA_PV_STR,
		  TA_PV_BYTES, TA_PV_LIST, TA_PV_TUPLE, TA_PV_DICT };

struct ta_pv {
	enum ta_pv_type t;
	int64_t i;              /* BOOL, INT (an integer past int64: clamped,
				 * big set) */
	int big;
	double d;
	const char *s;          /* STR, BYTES (in the arena; NUL-terminated) */
	size_t len;
	struct ta_pv **v;       /* LIST, TUPLE; DICT: key, value, key, ... */
	size_t n, cap;
};

struct ta_pickle;

/* Reads a whole pickle (gzipped or not) from path: NULL and err (exit 3,
 * with the byte offset) when it is damaged or not plain data. */
struct ta_pickle *ta_pickle_read(const char *path, struct ta_error *err);
/* The same from memory (the fuzzer's way in). */
struct ta_pickle *ta_pickle_parse(const unsigned char *p, size_t n,
				  const char *name, struct ta_error *err);
const struct ta_pv *ta_pickle_root(const struct ta_pickle *pk);
void ta_pickle_free(struct ta_pickle *pk);

/* Lookups that never fail: NULL when absent or of another type. */
const struct ta_pv *ta_pv_get(const struct ta_pv *dict, const char *key);
int64_t ta_pv_int(const struct ta_pv *v, int64_t dflt);
const char *ta_pv_str(const struct ta_pv *v);

#endif
