/* The gzip reader: plain and gzip files, truncation, and the same damage
 * read the same through either inflater. */
#include "check_main.h"
#include "../src/parse/gzread.h"
#include "ta_parse.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* both ways of reading: on a decompression thread, and inline */
static char *read_all(const char *path, int threaded, long *total,
		      int *damaged)
{
	struct ta_error err;
	struct ta_gzr *r = ta_gzr_open(path, threaded, &err);
	char *out = NULL;
	const char *chunk;
	long n;

	ck_assert_ptr_nonnull(r);
	*total = 0;
	*damaged = 0;
	while ((n = ta_gzr_read(r, &chunk)) != 0) {
		if (n < 0) {
			*damaged = 1;
			break;
		}
		out = realloc(out, (size_t)(*total + n));
		memcpy(out + *total, chunk, (size_t)n);
		*total += n;
	}
	ta_gzr_close(r);
	return out;
}

static char *big_text(size_t n)
{
	char *s = malloc(n);
	size_t i;

	srand(1);
	for (i = 0; i < n; i++)
		s[i] = (char)('a' + rand() % 26);
	return s;
}

START_TEST(test_gzread_roundtrip)
{
	size_t n = 3 * TA_GZ_CHUNK + 17;
	char *text = big_text(n);
	char *gz = tmp_file(".gz", text, n, 1), *plain = tmp_file(".json", text, n, 0);
	long total;
	int damaged;
	char *got = read_all(gz, _i, &total, &damaged);

	ck_assert_int_eq(total, (long)n);
	ck_assert_int_eq(damaged, 0);
	ck_assert(memcmp(got, text, n) == 0);
	free(got);
	got = read_all(plain, _i, &total, &damaged);
	ck_assert_int_eq(total, (long)n);
	ck_assert(memcmp(got, text, n) == 0);
	unlink(gz);
	unlink(plain);
	free(got), free(gz), free(plain), free(text);
}
END_TEST

START_TEST(test_gzread_truncated)
{
	size_t n = 2 * TA_GZ_CHUNK;
	char *text = big_text(n);
	char *gz = tmp_file(".gz", text, n, 1);
	long total;
	int damaged;
	char *got;

	/* cut the compressed file in half */
	FILE *f = fopen(gz, "r+");
	fseek(f, 0, SEEK_END);
	ck_assert_int_eq(ftruncate(fileno(f), ftell(f) / 2), 0);
	fclose(f);
	got = read_all(gz, _i, &total, &damaged);
	ck_assert_int_eq(damaged, 1);
	ck_assert_int_lt(total, (long)n);
	ck_assert(total == 0 || memcmp(got, text, (size_t)total) == 0);
	unlink(gz);
	free(got), free(gz), free(text);
}
END_TEST

/* JSON-like text: repeats (long matches) and numbers (literals), so
 * damage lands in both */
static char *trace_text(size_t n)
{
	char *s = malloc(n + 64);
	size_t len = 0;

	srand(7);
	while (len < n)
		len += (size_t)sprintf(s + len, "{\"ph\": \"X\", \"ts\": %d, \"dur\": %d}, ",
				       rand() % 100000, rand() % 1000);
	return s;
}

/* text gzipped at level (0: stored blocks) into *len bytes */
static unsigned char *gzip_mem(const char *text, size_t n, int level, size_t *len)
{
	z_stream z;
	unsigned char *out = malloc(n + n / 100 + 1024);

	memset(&z, 0, sizeof(z));
	ck_assert_int_eq(deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)text;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)(n + n / 100 + 1024);
	ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	*len = z.total_out;
	deflateEnd(&z);
	return out;
}

/* all that one open gives: each read's length and raw offset, the bytes,
 * the message */
struct outcome {
	char trail[4096];
	char *data;
	long total;
	char err[256];
};

static void read_with(const char *path, const char *inflater, int threaded,
		      struct outcome *o)
{
	struct ta_error err;
	struct ta_gzr *r;
	const char *chunk;
	size_t at = 0;
	long n;

	setenv("TA_INFLATE", inflater, 1);
	r = ta_gzr_open(path, threaded, &err);
	ck_assert_ptr_nonnull(r);
	memset(o, 0, sizeof(*o));
	while ((n = ta_gzr_read(r, &chunk)) != 0) {
		at += (size_t)snprintf(o->trail + at, sizeof(o->trail) - at, "%ld@%lld ",
				       n, (long long)ta_gzr_raw_offset(r));
		if (n < 0)
			break;
		o->data = realloc(o->data, (size_t)(o->total + n));
		memcpy(o->data + o->total, chunk, (size_t)n);
		o->total += n;
	}
	snprintf(o->err, sizeof(o->err), "%s", n < 0 ? ta_gzr_error(r) : "");
	ta_gzr_close(r);
}

/* the damage: each case mends a copy of a clean member (or two) */
enum { CUT_HEADER, CUT_BLOCK, CUT_MIDDLE, CUT_TRAILER, BAD_CRC, BAD_SIZE,
       TWO_MEMBERS, SECOND_CUT, TRAILING_GARBAGE, TRAILING_ZEROS, RESERVED_FLAG,
       BAD_METHOD, BAD_HEADER_CRC, FLIPPED_MIDDLE, FLIPPED_EARLY, STORED_BAD_LEN,
       NCASES };

/* zlib's messages, whichever inflater read */
static const char *const expected[NCASES] = {
	"truncated gzip stream", "truncated gzip stream", "truncated gzip stream",
	"truncated gzip stream", "gzip checksum mismatch (the data may be damaged)",
	"incorrect length check", "", "truncated gzip stream", "", "",
	"unknown header flags set", "unknown compression method", "header crc mismatch",
	/* this damage decodes, to other bytes: only the trailer tells */
	"gzip checksum mismatch (the data may be damaged)",
	"invalid bit length repeat", "invalid stored block lengths",
};

static unsigned char *damaged(int c, size_t *len)
{
	size_t n = 2 * TA_GZ_CHUNK + 1000, one, i;
	char *text = trace_text(n);
	unsigned char *gz = gzip_mem(text, n, c == STORED_BAD_LEN ? 0 : 6, &one);
	unsigned char *out = malloc(2 * one + 16);

	memcpy(out, gz, one);
	*len = one;
	switch (c) {
	case CUT_HEADER: *len = 5; break;
	case CUT_BLOCK: *len = 12; break;
	case CUT_MIDDLE: *len = one / 2; break;
	case CUT_TRAILER: *len = one - 3; break;
	case BAD_CRC: out[one - 8] ^= 0xff; break;
	case BAD_SIZE: out[one - 1] ^= 0x01; break;
	case TWO_MEMBERS: memcpy(out + one, gz, one); *len = 2 * one; break;
	case SECOND_CUT: memcpy(out + one, gz, one); *len = one + one / 3; break;
	case TRAILING_GARBAGE: memcpy(out + one, "garbage", 7); *len = one + 7; break;
	case TRAILING_ZEROS: memset(out + one, 0, 16); *len = one + 16; break;
	case RESERVED_FLAG: out[3] |= 0x20; break;
	case BAD_METHOD: out[2] = 7; break;
	case BAD_HEADER_CRC: out[3] |= 0x02; break; /* the data's first bytes as its CRC */
	case FLIPPED_MIDDLE: case FLIPPED_EARLY: /* as tests/bad/corpus.py */
		for (i = c == FLIPPED_EARLY ? 40 : one / 2; i < (c == FLIPPED_EARLY ? 104 : one / 2 + 64); i++)
			out[i] ^= 0x55;
		break;
	case STORED_BAD_LEN: out[10 + 65535 + 5 + 2] ^= 0xff; break; /* the 2nd block's LEN */
	}
	free(text), free(gz);
	return out;
}

START_TEST(test_gzread_same_damage)
{
	size_t len;
	unsigned char *gz = damaged(_i, &len);
	char *path = tmp_file(".gz", (const char *)gz, len, 0);
	struct outcome z, isal;
	int threaded;

	for (threaded = 0; threaded < 2; threaded++) {
		read_with(path, "zlib", threaded, &z);
		read_with(path, "isa-l", threaded, &isal);
		ck_assert_msg(strcmp(z.trail, isal.trail) == 0, "case %d: reads zlib %s, isa-l %s",
			      _i, z.trail, isal.trail);
		ck_assert_str_eq(z.err, expected[_i]);
		ck_assert_str_eq(isal.err, expected[_i]);
		ck_assert(z.total == isal.total && (z.total == 0 || memcmp(z.data, isal.data, (size_t)z.total) == 0));
		free(z.data), free(isal.data);
	}
	unsetenv("TA_INFLATE");
#ifdef TA_HAVE_ISAL
	ck_assert_str_eq(ta_parse_inflater(), "isa-l");
#else
	ck_assert_str_eq(ta_parse_inflater(), "zlib");
#endif
	unlink(path);
	free(path), free(gz);
}
END_TEST

/* 400 damaged copies of a real trace (seeded: bits flipped, bytes set,
 * cuts): ISA-L alone gave other bytes before the damage in 1 in 6 (it
 * writes up to a match past where zlib stops, accepts block headers zlib
 * refuses, keeps the last symbols of a cut), now read again by zlib */
START_TEST(test_gzread_same_mutations)
{
	FILE *f = fopen("testdata/decode_graph/rank-0.pt.trace.json.gz", "rb");
	unsigned char gz[1 << 16], m[1 << 16];
	size_t len, cut;
	int t, k;

	ck_assert_ptr_nonnull(f);
	len = fread(gz, 1, sizeof(gz), f);
	fclose(f);
	ck_assert(len > 1000 && len < sizeof(gz));
	srand(41);
	/* under valgrind (TA_CHECK_LIGHT) a quarter */
	for (t = 0; t < (getenv("TA_CHECK_LIGHT") ? 100 : 400); t++) {
		struct outcome z, isal;
		char *path;

		memcpy(m, gz, len);
		cut = len;
		for (k = 0; k < 1 + t % 4; k++) {
			size_t i = 10 + (size_t)rand() % (len - 10);

			switch (rand() % 4) {
			case 0: m[i] ^= (unsigned char)(1 << rand() % 8); break;
			case 1: m[i] = (unsigned char)rand(); break;
			case 2: m[i] ^= 0xff; break;
			default: cut = i < cut ? i : cut;
			}
		}
		path = tmp_file(".gz", (const char *)m, cut, 0);
		read_with(path, "zlib", 0, &z);
		read_with(path, "isa-l", 0, &isal);
		ck_assert_msg(strcmp(z.trail, isal.trail) == 0 && strcmp(z.err, isal.err) == 0 &&
			      (z.total == 0 || memcmp(z.data, isal.data, (size_t)z.total) == 0),
			      "copy %d: zlib %s'%s', isa-l %s'%s'", t, z.trail, z.err, isal.trail, isal.err);
		unlink(path);
		free(path), free(z.data), free(isal.data);
	}
}
END_TEST

Suite *suite_gzread(void)
{
	Suite *s = suite_create("gzread");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_gzread_roundtrip, 0, 2);
	tcase_add_loop_test(tc, test_gzread_truncated, 0, 2);
	tcase_add_loop_test(tc, test_gzread_same_damage, 0, NCASES);
	tcase_add_test(tc, test_gzread_same_mutations);
	suite_add_tcase(s, tc);
	return s;
}
