/* Chunked reader for gzip or plain files that reports truncation. */
#ifndef TA_GZREAD_H
#define TA_GZREAD_H

#include "ta.h"

#define TA_GZ_CHUNK (256 * 1024)

struct ta_gzr;

/* threaded: decompress on a thread of its own, ahead of the reader. */
struct ta_gzr *ta_gzr_open(const char *path, int threaded,
			   struct ta_error *err);
/* Points *chunk at the next decompressed bytes and returns their count;
 * 0 at a clean end; -1 on damage (message in ta_gzr_error). */
long ta_gzr_read(struct ta_gzr *r, const char **chunk);
const char *ta_gzr_error(const struct ta_gzr *r);
/* Compressed bytes consumed so far (for progress). */
int64_t ta_gzr_raw_offset(struct ta_gzr *r);
void ta_gzr_close(struct ta_gzr *r);

#endif
