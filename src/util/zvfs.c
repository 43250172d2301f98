/* Cache entries stored compressed (#37: a cache at most twice the size of
 * the gzipped traces it holds; an entry as SQLite writes it is 4-6x).
 *
 * A SQLite VFS over the default one. A main database file that begins with
 * TA_ZVFS_MAGIC is a log of 64 KB blocks, each deflated on its own: a
 * header, then records appended one after another, each a block's new
 * contents or the file's new size. A block's newest record is what it
 * holds, so a write appends and overwrites nothing; a record cut short
 * (a crash, a full disk) ends the log at the last whole one, and SQLite's
 * rollback journal restores what its transaction had changed, through the
 * same appends. A read inflates the blocks it touches, so a command reads
 * what it needs, not the whole entry. Every other file (a plain database,
 * a journal, a temp file) is the default VFS's, untouched.
 *
 * The parser writes an entry plain and ta_zvfs_pack packs it before it is
 * put in place; later commands add to it (their rows, indexes) here.
 *
 * Processes share a packed file as SQLite's locks let them: the locks are
 * the file's own (the default VFS's), and a connection that takes a shared
 * lock first reads the records appended since it last looked. Nobody else
 * appends while it holds one (a writer needs the exclusive lock), so what
 * lies past the last whole record when a writer appends is a torn record,
 * and goes. */
#include "ta_zvfs.h"
#include "ta.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef TA_HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

#define BLOCK 65536
#define HEAD 32                 /* the file's header: magic, block size, gen */
#define GEN_AT 20               /* the header's count of reverts */
#define RHEAD 32                /* a record's header */
#define RMAGIC 0x7a726563u      /* "zrec" */
#define SIZE_ONLY 0xffffffffu   /* a record that sets the size, no block */
#define STORED 1u               /* a record's payload as is, not deflated */
#define ZCAP (BLOCK + 1024)     /* a payload's largest */
#define MAX_SIZE ((int64_t)1 << 38) /* 256 GB: an entry of 60 GB of gzip */

/* ---- deflate and inflate one block: ISA-L's where built in, zlib's ---- */

struct codec {
#ifdef TA_HAVE_ISAL
	struct isal_zstream zs;
	struct inflate_state is;
#else
	z_stream def, inf;
	int def_ok, inf_ok;
#endif
};

const char *ta_zvfs_codec(void)
{
#ifdef TA_HAVE_ISAL
	return "isa-l";
#else
	return "zlib";
#endif
}

static void codec_free(struct codec *c)
{
#ifndef TA_HAVE_ISAL
	if (c->def_ok)
		deflateEnd(&c->def);
	if (c->inf_ok)
		inflateEnd(&c->inf);
#endif
	free(c);
}

/* in (BLOCK bytes) into out; its length, or 0 where it does not shrink */
static size_t squeeze(struct codec *c, const unsigned char *in, unsigned char *out)
{
#ifdef TA_HAVE_ISAL
	isal_deflate_stateless_init(&c->zs);
	c->zs.level = 1;
	c->zs.gzip_flag = IGZIP_DEFLATE;
	c->zs.end_of_stream = 1;
	c->zs.flush = NO_FLUSH;
	c->zs.next_in = (uint8_t *)in;
	c->zs.avail_in = BLOCK;
	c->zs.next_out = out;
	c->zs.avail_out = BLOCK - 64;
	if (isal_deflate_stateless(&c->zs) != COMP_OK)
		return 0;
	return c->zs.total_out;
#else
	if (!c->def_ok) {
		if (deflateInit2(&c->def, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return 0;
		c->def_ok = 1;
	} else if (deflateReset(&c->def) != Z_OK) {
		return 0;
	}
	c->def.next_in = (Bytef *)in;
	c->def.avail_in = BLOCK;
	c->def.next_out = out;
	c->def.avail_out = BLOCK - 64;
	return deflate(&c->def, Z_FINISH) == Z_STREAM_END ? c->def.total_out : 0;
#endif
}

/* len bytes of deflate into BLOCK bytes at out; 0, or -1: damaged */
static int expand(struct codec *c, const unsigned char *in, size_t len,
		  unsigned char *out)
{
#ifdef TA_HAVE_ISAL
	isal_inflate_init(&c->is);
	c->is.next_in = (uint8_t *)in;
	c->is.avail_in = (uint32_t)len;
	c->is.next_out = out;
	c->is.avail_out = BLOCK;
	c->is.crc_flag = ISAL_DEFLATE;
	return isal_inflate_stateless(&c->is) == ISAL_DECOMP_OK &&
	       c->is.total_out == BLOCK ? 0 : -1;
#else
	if (!c->inf_ok) {
		if (inflateInit2(&c->inf, -15) != Z_OK)
			return -1;
		c->inf_ok = 1;
	} else if (inflateReset(&c->inf) != Z_OK) {
		return -1;
	}
	c->inf.next_in = (Bytef *)in;
	c->inf.avail_in = (uInt)len;
	c->inf.next_out = out;
	c->inf.avail_out = BLOCK;
	return inflate(&c->inf, Z_FINISH) == Z_STREAM_END &&
	       c->inf.total_out == BLOCK ? 0 : -1;
#endif
}

/* zlib's crc32, the same numbers; ISA-L's is 13x faster (55 GB/s) */
static uint32_t crc(const unsigned char *p, size_t n)
{
#ifdef TA_HAVE_ISAL
	return crc32_gzip_refl(0, p, n);
#else
	return (uint32_t)crc32(0, p, (uInt)n);
#endif
}

/* ---- the file format ---- */

static size_t blocks_of(int64_t size)
{
	return (size_t)((size + BLOCK - 1) / BLOCK);
}

struct rec {
	uint32_t block, len, flags, crc;
	int64_t size;
};

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void rec_put(unsigned char *h, const struct rec *r)
{
	put32(h, RMAGIC);
	put32(h + 4, r->block);
	put32(h + 8, (uint32_t)r->size);
	put32(h + 12, (uint32_t)((uint64_t)r->size >> 32));
	put32(h + 16, r->len);
	put32(h + 20, r->flags);
	put32(h + 24, r->crc);
	put32(h + 28, crc(h, 28));
}

/* 0, or -1: not a whole record's header */
static int rec_get(const unsigned char *h, struct rec *r)
{
	if (get32(h) != RMAGIC || get32(h + 28) != crc(h, 28))
		return -1;
	r->block = get32(h + 4);
	r->size = (int64_t)((uint64_t)get32(h + 8) | (uint64_t)get32(h + 12) << 32);
	r->len = get32(h + 16);
	r->flags = get32(h + 20);
	r->crc = get32(h + 24);
	/* a stored block is one block; a block lies within the size its
	 * record gives, and that below MAX_SIZE (the index grows with it) */
	return r->len <= ZCAP && (r->flags & ~STORED) == 0 &&
	       (!(r->flags & STORED) || r->len == BLOCK) &&
	       r->size >= 0 && r->size <= MAX_SIZE &&
	       (r->block == SIZE_ONLY || r->block < blocks_of(r->size)) ? 0 : -1;
}

static void file_head(unsigned char *h)
{
	memset(h, 0, HEAD);
	memcpy(h, TA_ZVFS_MAGIC, sizeof(TA_ZVFS_MAGIC));
	put32(h + 16, BLOCK);
}

int ta_zvfs_is_packed(const void *head, size_t len)
{
	return len >= sizeof(TA_ZVFS_MAGIC) &&
	       memcmp(head, TA_ZVFS_MAGIC, sizeof(TA_ZVFS_MAGIC)) == 0;
}

/* A block's payload: deflated (or stored), its crc, into a record. */
static void rec_fill(struct codec *c, const unsigned char *block,
		     unsigned char *payload, struct rec *r, const unsigned char **data)
{
	size_t n = squeeze(c, block, payload);

	if (n == 0) {
		r->len = BLOCK;
		r->flags = STORED;
		*data = block;
	} else {
		r->len = (uint32_t)n;
		r->flags = 0;
		*data = payload;
	}
	r->crc = crc(*data, r->len);
}

/* ---- a packed file open in SQLite ---- */

struct where {
	int64_t at;             /* its payload's offset; 0: never written */
	uint32_t len, flags, crc;
};

struct zfile {
	sqlite3_file base;
	sqlite3_file *real;     /* the default VFS's, after this struct */
	struct where *blk;
	size_t nblk;
	size_t used;            /* blocks below it may be in the index */
	int64_t size;           /* the file's, as SQLite sees it */
	int64_t end;            /* after the last whole record */
	int64_t tx_start;       /* end when this writer took its lock; 0 none */
	uint32_t gen;           /* the header's count of reverts, when scanned */
	int unlocked;           /* the index was read without a lock (open) */
	int lock;
	unsigned char *buf;     /* one block, inflated */
	int64_t buf_block;      /* which one, -1 none */
	unsigned char *zbuf;    /* one payload */
	unsigned char *held;    /* a payload as stored, to compare; lazily */
	struct codec *codec;
};

static sqlite3_vfs *root;   /* the default VFS, below ours */

/* Forgets blocks past the file's size (a truncation): those up to the
 * last one indexed, not the whole index (which a size record calls for
 * each time). */
static void clip(struct zfile *p)
{
	size_t n = blocks_of(p->size), i;

	for (i = n; i < p->used; i++)
		p->blk[i].at = 0;
	if (p->used > n)
		p->used = n;
	if (p->buf_block >= (int64_t)n)
		p->buf_block = -1;
}

static void remember(struct zfile *p, const struct rec *r, int64_t at)
{
	if (r->block != SIZE_ONLY) {
		if (r->block >= p->nblk) {
			size_t n = (size_t)r->block * 2 + 16;

			p->blk = ta_xrealloc(p->blk, n * sizeof(*p->blk));
			memset(p->blk + p->nblk, 0, (n - p->nblk) * sizeof(*p->blk));
			p->nblk = n;
		}
		p->blk[r->block] = (struct where){ at, r->len, r->flags, r->crc };
		if (r->block >= p->used)
			p->used = (size_t)r->block + 1;
		if (p->buf_block == (int64_t)r->block)
			p->buf_block = -1;
	}
	p->size = r->size;
	clip(p);
}

/* A whole record no writer of ours makes: a size that is not whole
 * pages of any size SQLite has (512 bytes at least), or a block far past
 * every block the records before it can hold. Pages are
 * written in order as a database grows (a pack writes block i as record
 * i), so a block number passes the count of records before it only by
 * pages written out of turn; one of 4 million in a 160-byte file made
 * every open index (and clear) a 256 GB file's blocks: 200 MB each. */
#define GAP_BLOCKS 1024

static int plausible(const struct zfile *p, const struct rec *r)
{
	return r->size % 512 == 0 &&
	       (r->block == SIZE_ONLY ||
		r->block <= (uint64_t)(p->end - HEAD) / RHEAD + GAP_BLOCKS);
}

/* Reads the records appended since end. */
static int scan(struct zfile *p)
{
	sqlite3_int64 phys;
	unsigned char h[RHEAD];
	struct rec r;
	int rc = p->real->pMethods->xFileSize(p->real, &phys);

	if (rc != SQLITE_OK)
		return rc;
	while (p->end + RHEAD <= phys) {
		rc = p->real->pMethods->xRead(p->real, h, RHEAD, p->end);
		if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ)
			return rc;
		if (rc != SQLITE_OK || rec_get(h, &r) < 0 ||
		    p->end + RHEAD + (int64_t)r.len > phys)
			break;  /* a torn record: the log ends before it */
		if (!plausible(p, &r))
			return SQLITE_CORRUPT;
		remember(p, &r, p->end + RHEAD);
		p->end += RHEAD + r.len;
	}
	return SQLITE_OK;
}

/* The header's count of reverts (0 in a file never reverted). */
static int read_gen(struct zfile *p, uint32_t *gen)
{
	unsigned char g[4];
	int rc = p->real->pMethods->xRead(p->real, g, 4, GEN_AT);

	if (rc == SQLITE_OK)
		*gen = get32(g);
	return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_CORRUPT : rc;
}

/* Forgets what the log held and reads it again from the start. */
static int rescan(struct zfile *p)
{
	int rc = read_gen(p, &p->gen);

	if (p->blk)     /* none yet at the open */
		memset(p->blk, 0, p->nblk * sizeof(*p->blk));
	p->used = 0;
	p->size = 0;
	p->end = HEAD;
	p->buf_block = -1;
	return rc == SQLITE_OK ? scan(p) : rc;
}

/* On taking a lock: the records appended since this connection last
 * looked, or the whole log again where a writer cut it back (revert)
 * since: an index of records no longer there would read past the end. */
static int refresh(struct zfile *p)
{
	sqlite3_int64 phys;
	uint32_t gen;
	int rc;

	if ((rc = read_gen(p, &gen)) != SQLITE_OK ||
	    (rc = p->real->pMethods->xFileSize(p->real, &phys)) != SQLITE_OK)
		return rc;
	return gen != p->gen || phys < p->end ? rescan(p) : scan(p);
}

/* Block b into out, BLOCK bytes (zeros where never written). */
static int load_into(struct zfile *p, size_t b, unsigned char *out)
{
	const struct where *w;
	unsigned char *in;
	int rc;

	if (b >= p->nblk || p->blk[b].at == 0) {
		memset(out, 0, BLOCK);
		return SQLITE_OK;
	}
	w = &p->blk[b];
	in = w->flags & STORED ? out : p->zbuf;
	rc = p->real->pMethods->xRead(p->real, in, (int)w->len, w->at);
	if (rc == SQLITE_IOERR_SHORT_READ)
		goto damaged;
	if (rc != SQLITE_OK)
		return rc;
	if (crc(in, w->len) != w->crc ||
	    (!(w->flags & STORED) && expand(p->codec, p->zbuf, w->len, out) < 0))
		goto damaged;
	return SQLITE_OK;
damaged:
	/* the log's own checks passed: a block damaged in place. SQLite's
	 * word for it, so that the entry is rebuilt as any damaged one */
	sqlite3_log(SQLITE_CORRUPT, "packed block %lld damaged", (long long)b);
	return SQLITE_CORRUPT;
}

/* Block b into p->buf, kept there for the next part of it read. */
static int load(struct zfile *p, size_t b)
{
	int rc;

	if (p->buf_block == (int64_t)b)
		return SQLITE_OK;
	p->buf_block = -1;
	rc = load_into(p, b, p->buf);
	if (rc == SQLITE_OK)
		p->buf_block = (int64_t)b;
	return rc;
}

static int z_read(sqlite3_file *f, void *out, int amt, sqlite3_int64 off)
{
	struct zfile *p = (struct zfile *)f;
	unsigned char *o = out;
	int rc;

	while (amt > 0) {
		size_t b = (size_t)(off / BLOCK), in = (size_t)(off % BLOCK);
		int n = (int)(BLOCK - in) < amt ? (int)(BLOCK - in) : amt;

		if (off >= p->size) {
			memset(o, 0, (size_t)amt);
			return SQLITE_IOERR_SHORT_READ;
		}
		if (off + n > p->size)
			n = (int)(p->size - off);
		if (n == BLOCK && p->buf_block != (int64_t)b) {
			/* a whole page: straight into SQLite's buffer */
			if ((rc = load_into(p, b, o)) != SQLITE_OK)
				return rc;
		} else if ((rc = load(p, b)) != SQLITE_OK) {
			return rc;
		} else {
			memcpy(o, p->buf + in, (size_t)n);
		}
		o += n;
		off += n;
		amt -= n;
	}
	return SQLITE_OK;
}

/* Whether record r (payload data) says what its block holds now: its
 * write changes nothing and appends nothing. What a rollback writes back
 * after revert() is all such, so it needs no space. */
static int same_as_held(struct zfile *p, const struct rec *r, const unsigned char *data)
{
	const struct where *w = r->block < p->nblk ? &p->blk[r->block] : NULL;

	if (!w || !w->at || r->size != p->size || w->len != r->len ||
	    w->flags != r->flags || w->crc != r->crc)
		return 0;
	if (!p->held)
		p->held = ta_xmalloc(ZCAP);
	return p->real->pMethods->xRead(p->real, p->held, (int)r->len, w->at) == SQLITE_OK &&
	       memcmp(p->held, data, r->len) == 0;
}

/* An append failed (a full disk, a file size limit): the file goes back
 * to what it held when this writer took its lock, the log's prefix, so
 * that SQLite's rollback of the transaction (its pager stops at the
 * error) writes back what is already there and needs no space. Without
 * it a packed entry stayed with a hot journal nothing could roll back
 * until space was freed; a plain one rolls back in place. */
static void revert(struct zfile *p)
{
	unsigned char g[4];

	/* the count first: a reader that indexed the records going (they
	 * were appended before its lock, uncommitted) sees it changed and
	 * reads the log again, before the log is cut */
	put32(g, p->gen + 1);
	if (!p->tx_start || p->real->pMethods->xWrite(p->real, g, 4, GEN_AT) != SQLITE_OK ||
	    p->real->pMethods->xTruncate(p->real, p->tx_start) != SQLITE_OK)
		return;
	rescan(p);
}

/* Appends a record: block b's contents (NULL: a size record). */
static int append(struct zfile *p, size_t b, const unsigned char *block, int64_t size)
{
	struct rec r = { SIZE_ONLY, 0, 0, 0, size };
	unsigned char h[RHEAD];
	const unsigned char *data = NULL;
	sqlite3_int64 phys;
	int rc;

	/* what lies past the last whole record is a torn one: cut it */
	if ((rc = scan(p)) != SQLITE_OK ||
	    (rc = p->real->pMethods->xFileSize(p->real, &phys)) != SQLITE_OK)
		return rc;
	if (phys > p->end && (rc = p->real->pMethods->xTruncate(p->real, p->end)) != SQLITE_OK)
		return rc;
	if (block) {
		r.block = (uint32_t)b;
		rec_fill(p->codec, block, p->zbuf, &r, &data);
		if (same_as_held(p, &r, data))
			return SQLITE_OK;
	}
	rec_put(h, &r);
	if ((rc = p->real->pMethods->xWrite(p->real, h, RHEAD, p->end)) != SQLITE_OK ||
	    (r.len && (rc = p->real->pMethods->xWrite(p->real, data, (int)r.len,
						      p->end + RHEAD)) != SQLITE_OK)) {
		revert(p);
		return rc;
	}
	remember(p, &r, p->end + RHEAD);
	p->end += RHEAD + r.len;
	return SQLITE_OK;
}

static int z_write(sqlite3_file *f, const void *data, int amt, sqlite3_int64 off)
{
	struct zfile *p = (struct zfile *)f;
	const unsigned char *d = data;
	int rc;

	while (amt > 0) {
		size_t b = (size_t)(off / BLOCK), in = (size_t)(off % BLOCK);
		int n = (int)(BLOCK - in) < amt ? (int)(BLOCK - in) : amt;
		int64_t size = off + n > p->size ? off + n : p->size;

		if (n == BLOCK) {
			rc = append(p, b, d, size);
		} else if ((rc = load(p, b)) == SQLITE_OK) {
			memcpy(p->buf + in, d, (size_t)n);
			p->buf_block = -1;
			rc = append(p, b, p->buf, size);
			if (rc == SQLITE_OK)
				p->buf_block = (int64_t)b;  /* what it holds now */
		}
		if (rc != SQLITE_OK)
			return rc;
		d += n;
		off += n;
		amt -= n;
	}
	return SQLITE_OK;
}

static int z_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct zfile *p = (struct zfile *)f;
	size_t b = (size_t)(size / BLOCK);
	int rc;

	if (size >= p->size)
		return SQLITE_OK;
	/* a block cut in the middle keeps zeros after the cut, as a file
	 * that grows again would read */
	if (size % BLOCK && b < p->nblk && p->blk[b].at) {
		if ((rc = load(p, b)) != SQLITE_OK)
			return rc;
		memset(p->buf + size % BLOCK, 0, (size_t)(BLOCK - size % BLOCK));
		p->buf_block = -1;
		return append(p, b, p->buf, size);
	}
	return append(p, 0, NULL, size);
}

static int z_close(sqlite3_file *f)
{
	struct zfile *p = (struct zfile *)f;
	int rc = p->real->pMethods ? p->real->pMethods->xClose(p->real) : SQLITE_OK;

	free(p->blk);
	free(p->buf);
	free(p->zbuf);
	free(p->held);
	codec_free(p->codec);
	return rc;
}

static int z_sync(sqlite3_file *f, int flags)
{
	struct zfile *p = (struct zfile *)f;

	return p->real->pMethods->xSync(p->real, flags);
}

static int z_size(sqlite3_file *f, sqlite3_int64 *size)
{
	*size = ((struct zfile *)f)->size;
	return SQLITE_OK;
}

static int z_lock(sqlite3_file *f, int level)
{
	struct zfile *p = (struct zfile *)f;
	int rc = p->real->pMethods->xLock(p->real, level);

	/* another process may have appended since this one last held a
	 * lock, or cut its records back (revert). The index the open read
	 * without a lock may hold records a writer cut in the middle of
	 * that read, the count of reverts already bumped: read whole,
	 * once, under the lock */
	if (rc == SQLITE_OK && p->lock == SQLITE_LOCK_NONE)
		rc = p->unlocked ? rescan(p) : refresh(p);
	if (rc == SQLITE_OK && p->lock == SQLITE_LOCK_NONE)
		p->unlocked = 0;
	/* a writer now: nobody appended while it held its shared lock */
	if (rc == SQLITE_OK && level > SQLITE_LOCK_SHARED && p->lock <= SQLITE_LOCK_SHARED)
		p->tx_start = p->end;
	if (rc == SQLITE_OK && level > p->lock)
		p->lock = level;
	return rc;
}

static int z_unlock(sqlite3_file *f, int level)
{
	struct zfile *p = (struct zfile *)f;
	int rc = p->real->pMethods->xUnlock(p->real, level);

	if (rc == SQLITE_OK)
		p->lock = level;
	if (rc == SQLITE_OK && level <= SQLITE_LOCK_SHARED)
		p->tx_start = 0;
	return rc;
}

static int z_reserved(sqlite3_file *f, int *out)
{
	struct zfile *p = (struct zfile *)f;

	return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int z_control(sqlite3_file *f, int op, void *arg)
{
	struct zfile *p = (struct zfile *)f;

	/* sizes are the log's, not the file's: no preallocation, no mmap of
	 * the records as if they were pages */
	if (op == SQLITE_FCNTL_SIZE_HINT || op == SQLITE_FCNTL_CHUNK_SIZE ||
	    op == SQLITE_FCNTL_MMAP_SIZE)
		return SQLITE_NOTFOUND;
	return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int z_sector(sqlite3_file *f)
{
	struct zfile *p = (struct zfile *)f;

	return p->real->pMethods->xSectorSize(p->real);
}

static int z_device(sqlite3_file *f)
{
	struct zfile *p = (struct zfile *)f;

	/* a page's write is a record appended, never a write in place */
	return p->real->pMethods->xDeviceCharacteristics(p->real) &
	       ~(SQLITE_IOCAP_ATOMIC | SQLITE_IOCAP_ATOMIC512 | SQLITE_IOCAP_ATOMIC1K |
		 SQLITE_IOCAP_ATOMIC2K | SQLITE_IOCAP_ATOMIC4K | SQLITE_IOCAP_ATOMIC8K |
		 SQLITE_IOCAP_ATOMIC16K | SQLITE_IOCAP_ATOMIC32K | SQLITE_IOCAP_ATOMIC64K |
		 SQLITE_IOCAP_SAFE_APPEND | SQLITE_IOCAP_BATCH_ATOMIC |
		 SQLITE_IOCAP_POWERSAFE_OVERWRITE);
}

/* version 1: no shared memory (no WAL) and no mmap */
static const sqlite3_io_methods z_methods = {
	1, z_close, z_read, z_write, z_truncate, z_sync, z_size, z_lock,
	z_unlock, z_reserved, z_control, z_sector, z_device,
	NULL, NULL, NULL, NULL, NULL, NULL
};

#define REAL_AT ((sizeof(struct zfile) + 15) & ~(size_t)15)

/* Whether the open file real is packed (its header says so). */
static int packed(sqlite3_file *real)
{
	unsigned char h[HEAD];
	sqlite3_int64 size;

	return real->pMethods->xFileSize(real, &size) == SQLITE_OK && size >= HEAD &&
	       real->pMethods->xRead(real, h, HEAD, 0) == SQLITE_OK &&
	       ta_zvfs_is_packed(h, HEAD) && get32(h + 16) == BLOCK;
}

static int z_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
		  int *out_flags)
{
	struct zfile *p = (struct zfile *)f;
	int rc;

	(void)vfs;
	if (!name || !(flags & SQLITE_OPEN_MAIN_DB) || (flags & SQLITE_OPEN_DELETEONCLOSE))
		return root->xOpen(root, name, f, flags, out_flags);
	memset(p, 0, sizeof(*p));
	p->real = (sqlite3_file *)((char *)p + REAL_AT);
	rc = root->xOpen(root, name, p->real, flags, out_flags);
	if (rc != SQLITE_OK)
		return rc;
	if (!packed(p->real)) {
		/* a plain database: the default VFS's file, as if ours were not */
		p->real->pMethods->xClose(p->real);
		return root->xOpen(root, name, f, flags, out_flags);
	}
	p->buf = ta_xmalloc(BLOCK);
	p->zbuf = ta_xmalloc(ZCAP);
	p->codec = ta_xcalloc(1, sizeof(*p->codec));
	p->buf_block = -1;
	p->end = HEAD;
	p->base.pMethods = &z_methods;
	p->unlocked = 1;
	return rescan(p);
}

/* every other call is the default VFS's */
static int z_delete(sqlite3_vfs *v, const char *n, int sync)
{
	(void)v;
	return root->xDelete(root, n, sync);
}

static int z_access(sqlite3_vfs *v, const char *n, int flags, int *out)
{
	(void)v;
	return root->xAccess(root, n, flags, out);
}

static int z_fullname(sqlite3_vfs *v, const char *n, int len, char *out)
{
	(void)v;
	return root->xFullPathname(root, n, len, out);
}

static void *z_dlopen(sqlite3_vfs *v, const char *n)
{
	(void)v;
	return root->xDlOpen(root, n);
}

static void z_dlerror(sqlite3_vfs *v, int len, char *out)
{
	(void)v;
	root->xDlError(root, len, out);
}

static void (*z_dlsym(sqlite3_vfs *v, void *h, const char *s))(void)
{
	(void)v;
	return root->xDlSym(root, h, s);
}

static void z_dlclose(sqlite3_vfs *v, void *h)
{
	(void)v;
	root->xDlClose(root, h);
}

static int z_random(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return root->xRandomness(root, n, out);
}

static int z_sleep(sqlite3_vfs *v, int us)
{
	(void)v;
	return root->xSleep(root, us);
}

static int z_time(sqlite3_vfs *v, double *t)
{
	(void)v;
	return root->xCurrentTime(root, t);
}

static int z_lasterror(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return root->xGetLastError ? root->xGetLastError(root, n, out) : 0;
}

static int z_time64(sqlite3_vfs *v, sqlite3_int64 *t)
{
	(void)v;
	return root->xCurrentTimeInt64(root, t);
}

static sqlite3_vfs z_vfs = {
	2, 0, 1024, NULL, "traceanalyze-z", NULL, z_open, z_delete, z_access,
	z_fullname, z_dlopen, z_dlerror, z_dlsym, z_dlclose, z_random, z_sleep,
	z_time, z_lasterror, z_time64, NULL, NULL, NULL
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int registered = -1;

static void do_register(void)
{
	root = sqlite3_vfs_find(NULL);
	if (!root || root->iVersion < 2 || !root->xCurrentTimeInt64)
		return;
	z_vfs.szOsFile = (int)(REAL_AT + (size_t)root->szOsFile);
	z_vfs.mxPathname = root->mxPathname;
	registered = sqlite3_vfs_register(&z_vfs, 1) == SQLITE_OK ? 0 : -1;
}

int ta_zvfs_register(void)
{
	pthread_once(&once, do_register);
	return registered;
}

/* ---- packing a plain file ---- */

#define PACK_BATCH 64           /* blocks read, deflated, written at once */
#define PACK_THREADS 4

struct pack_job {
	unsigned char *in;      /* PACK_BATCH blocks */
	unsigned char *out;     /* a payload each, ZCAP apart */
	struct rec *r;
	const unsigned char **data;
	size_t first, n;        /* of this batch: blocks [first, first + n) */
	struct codec *codec;
};

static void *pack_some(void *arg)
{
	struct pack_job *j = arg;
	size_t i;

	for (i = j->first; i < j->first + j->n; i++)
		rec_fill(j->codec, j->in + i * BLOCK, j->out + i * ZCAP, &j->r[i],
			 &j->data[i]);
	return NULL;
}

/* One batch of n blocks (in) deflated on threads, written to out. */
static int pack_batch(struct pack_job *jobs, int threads, size_t n, size_t base,
		      int64_t size, FILE *out)
{
	pthread_t t[PACK_THREADS];
	int k, started[PACK_THREADS] = { 0 };
	size_t i, per = (n + (size_t)threads - 1) / (size_t)threads;

	for (k = 0; k < threads; k++) {
		jobs[k].first = (size_t)k * per < n ? (size_t)k * per : n;
		jobs[k].n = jobs[k].first + per <= n ? per : n - jobs[k].first;
		if (k > 0 && jobs[k].n)
			started[k] = pthread_create(&t[k], NULL, pack_some, &jobs[k]) == 0;
		if (k > 0 && jobs[k].n && !started[k])
			pack_some(&jobs[k]);
	}
	pack_some(&jobs[0]);
	for (k = 1; k < threads; k++)
		if (started[k])
			pthread_join(t[k], NULL);
	for (i = 0; i < n; i++) {
		unsigned char h[RHEAD];
		struct rec *r = &jobs[0].r[i];

		r->block = (uint32_t)(base + i);
		r->size = size;
		rec_put(h, r);
		if (fwrite(h, 1, RHEAD, out) != RHEAD ||
		    fwrite(jobs[0].data[i], 1, r->len, out) != r->len)
			return -1;
	}
	return 0;
}

int ta_zvfs_pack(const char *plain, const char *out, int threads,
		 struct ta_error *err)
{
	struct pack_job jobs[PACK_THREADS];
	unsigned char head[HEAD], *in = NULL, *zout = NULL;
	struct rec *r = NULL;
	const unsigned char **data = NULL;
	FILE *src = fopen(plain, "rb"), *dst = NULL;
	int64_t size = 0, base = 0;
	int k, rc = -1;
	size_t got;

	if (threads < 1)
		threads = 1;
	if (threads > PACK_THREADS)
		threads = PACK_THREADS;
	if (!src || fseeko(src, 0, SEEK_END) < 0 || (size = ftello(src)) < 0 ||
	    fseeko(src, 0, SEEK_SET) < 0 || !(dst = fopen(out, "wb"))) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot pack: %s",
			     src ? out : plain, strerror(errno));
		goto out;
	}
	in = ta_xmalloc((size_t)PACK_BATCH * BLOCK);
	zout = ta_xmalloc((size_t)PACK_BATCH * ZCAP);
	r = ta_xcalloc(PACK_BATCH, sizeof(*r));
	data = ta_xcalloc(PACK_BATCH, sizeof(*data));
	for (k = 0; k < threads; k++)
		jobs[k] = (struct pack_job){ in, zout, r, data, 0, 0,
					     ta_xcalloc(1, sizeof(struct codec)) };
	file_head(head);
	if (fwrite(head, 1, HEAD, dst) != HEAD)
		goto write_failed;
	while ((got = fread(in, 1, (size_t)PACK_BATCH * BLOCK, src)) > 0) {
		size_t n = (got + BLOCK - 1) / BLOCK;

		memset(in + got, 0, n * BLOCK - got);   /* a last block's tail */
		if (pack_batch(jobs, threads, n, (size_t)base, size, dst) < 0)
			goto write_failed;
		base += (int64_t)n;
	}
	if (ferror(src)) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot read: %s", plain,
			     strerror(errno));
		goto out;
	}
	if (fflush(dst) != 0 || ferror(dst))
		goto write_failed;
	rc = 0;
	goto out;
write_failed:
	ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot write: %s", out, strerror(errno));
out:
	for (k = 0; in && k < threads; k++)
		codec_free(jobs[k].codec);
	if (dst && fclose(dst) != 0 && rc == 0) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot write: %s", out,
			     strerror(errno));
		rc = -1;
	}
	if (src)
		fclose(src);
	free(in);
	free(zout);
	free(r);
	free(data);
	return rc;
}
