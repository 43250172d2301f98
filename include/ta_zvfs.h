/* Cache entries stored compressed (src/exec/zvfs.c): a SQLite VFS that
 * reads and writes a packed database file block by block, and passes every
 * other file to SQLite's own. */
#ifndef TA_ZVFS_H
#define TA_ZVFS_H

#include <stddef.h>

struct ta_error;

/* The first bytes of a packed file. */
#define TA_ZVFS_MAGIC "traceanalyze-z1"   /* and its NUL: 16 bytes */

/* Makes the VFS SQLite's default (once; later calls do nothing). A plain
 * database opens as before, a packed one through the blocks. 0 or -1. */
int ta_zvfs_register(void);

/* Whether the 16 bytes at head begin a packed file. */
int ta_zvfs_is_packed(const void *head, size_t len);

/* Writes the plain database file plain as the packed file out (created or
 * truncated), deflating its blocks on up to threads threads. 0, or -1 with
 * err set. */
int ta_zvfs_pack(const char *plain, const char *out, int threads,
		 struct ta_error *err);

/* Which deflater packs blocks: "isa-l" or "zlib". */
const char *ta_zvfs_codec(void);

#endif
