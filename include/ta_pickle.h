/* A reader for Python pickles of plain data (protocols 0 to 5): dicts,
 * lists, tuples, sets, strings, bytes, integers, floats, booleans and
 * None, as torch.cuda.memory._dump_snapshot writes them. Any opcode that
 * would build an object or call code (GLOBAL, REDUCE, BUILD, INST, OBJ,
 * NEWOBJ, STACK_GLOBAL, PERSID, EXT, out-of-band buffers) is refused with
 * its offset: reading never executes anything.
 *
 * The input is streamed, never held whole. Values are compact (24 bytes,
 * 8 per container item, None and booleans shared) and bounded: the stack
 * depth, memo indexes (never past the values read), and the memory all
 * values take (TA_PICKLE_MAX_MEMORY); past a bound the read fails with
 * exit 3. Values may be shared through the memo, so a reader that walks
 * them must bound its own work (see ta_pickle_bytes). */
#ifndef TA_PICKLE_H
#define TA_PICKLE_H

#include "ta.h"

#define TA_PICKLE_MAX_MEMORY ((size_t)4 << 30)

enum ta_pv_type { TA_PV_NONE, TA_PV_BOOL, TA_PV_INT, TA_PV_FLOAT, TA_PV_STR,
		  TA_PV_BYTES, TA_PV_LIST, TA_PV_TUPLE, TA_PV_DICT, TA_PV_SET };

struct ta_pv {
	unsigned char t;        /* enum ta_pv_type */
	unsigned char big;      /* INT: past int64, clamped to its sign */
	uint32_t n;             /* LIST, TUPLE, SET: items; DICT: 2 x pairs */
	union {
		int64_t i;      /* BOOL, INT */
		double d;       /* FLOAT */
		struct {        /* STR, BYTES: NUL-terminated */
			const char *s;
			size_t len;
		};
		struct {        /* LIST, TUPLE, SET; DICT: key, value, ... */
			struct ta_pv **v;
			size_t cap;
		};
	};
};

struct ta_pickle;

/* Reads a whole pickle (gzipped or not) from path: NULL and err (exit 3,
 * with the byte offset) when it is damaged, not plain data or past a
 * bound. */
struct ta_pickle *ta_pickle_read(const char *path, struct ta_error *err);
/* The same from memory (the fuzzer's way in). */
struct ta_pickle *ta_pickle_parse(const unsigned char *p, size_t n,
				  const char *name, struct ta_error *err);
const struct ta_pv *ta_pickle_root(const struct ta_pickle *pk);
/* The pickle's length, uncompressed: what a reader's work is bounded by. */
uint64_t ta_pickle_bytes(const struct ta_pickle *pk);
/* Bytes the values take (for the bounds' tests). */
size_t ta_pickle_memory(const struct ta_pickle *pk);
void ta_pickle_free(struct ta_pickle *pk);

/* Lookups that never fail: NULL when absent or of another type; a key
 * set twice gives its last value, as in Python. */
const struct ta_pv *ta_pv_get(const struct ta_pv *dict, const char *key);
int64_t ta_pv_int(const struct ta_pv *v, int64_t dflt);
const char *ta_pv_str(const struct ta_pv *v);

#endif
