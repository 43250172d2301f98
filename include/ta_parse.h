/* Streaming trace reader: gzip or plain JSON in, events out. */
#ifndef TA_PARSE_H
#define TA_PARSE_H

#include "ta_event.h"

/* Receives what the parser reads; a non-zero return stops the parse. */
struct ta_sink {
	void *ctx;
	int (*event)(void *ctx, const struct ta_event *ev);
	/* a top-level key other than traceEvents, value as compact JSON */
	int (*meta)(void *ctx, const char *key, const char *json, size_t len);
	/* optional: compressed bytes read so far, after each chunk */
	void (*progress)(void *ctx, int64_t raw_bytes);
};

struct ta_parse_result {
	int64_t events;         /* elements of traceEvents seen */
	int64_t objects;        /* of which events (objects) handed over */
	int64_t activity;       /* of which neither metadata (ph "M") nor
				 * the profiler's "Trace" span: what ran */
	int64_t bytes;          /* decompressed bytes read */
	int have_rank;          /* distributedInfo.rank was found */
	int64_t rank;
	char bad_rank[24];      /* a distributedInfo.rank that is no rank, as
				 * written (cut): said, not "no rank" */
	int any_float_ts;       /* HTA would round every timestamp (§2.3) */
	int64_t bad_times;      /* events whose ts or dur is not a usable number */
	int have_ts;            /* some event has a ts; then: */
	int64_t min_ts_ns;      /* the earliest, and the latest: */
	int64_t max_ts_ns;
	int64_t bad_steps;      /* ProfilerStep#N kept without a duration */
	int64_t extra_event_arrays; /* traceEvents keys after the first, ignored */
	int64_t feeds;          /* pieces handed to the JSON lexer */
	int64_t long_strings;   /* strings longer than ta_token_max, skipped */
	int64_t long_string_offset; /* where the first began (about) */
	int truncated;          /* the input ended early or is damaged */
	int64_t damage_offset;  /* decompressed byte offset of the damage */
	char damage[256];       /* what was wrong, when truncated */
};

/* The inflater that gzip input goes through: "isa-l", or "zlib" in a
 * build without ISA-L or under TA_INFLATE=zlib. */
const char *ta_parse_inflater(void);

/* Parses one trace file; threaded: decompress on a thread of its own.
 * Damage after a readable prefix is reported in
 * res->truncated (the caller decides whether that is fatal); -1 means
 * nothing usable: unreadable file or not a trace at all. */
int ta_parse_file(const char *path, int threaded, const struct ta_sink *sink,
		  struct ta_parse_result *res, struct ta_error *err);

/* Strings longer than this many bytes are skipped (64 MB; tests lower it). */
extern size_t ta_token_max;

/* Same, from memory (tests, fuzzing). */
int ta_parse_buffer(const char *data, size_t len, const struct ta_sink *sink,
		    struct ta_parse_result *res, struct ta_error *err);

/* Number text in µs ("12", "12.345", "1.5e3") to exact ns. Returns 0, or
 * -1 when it is not a number or does not fit. */
int ta_parse_us_to_ns(const char *s, size_t len, int64_t *ns, int *is_float);

/* HTA's rounded times (hta-semantics 2.3) in ns: ceil(ts) and
 * floor(ts + dur) - ceil(ts) computed on doubles, as Python does. ts and
 * dur are the texts (dur may be empty), ts_ns and dur_ns what
 * ta_parse_us_to_ns made of them. Leaves an output alone when HTA's value
 * would not be finite or not fit. */
void ta_hta_times(const char *ts, const char *dur, int64_t ts_ns,
		  int64_t dur_ns, int64_t *hta_ts, int64_t *hta_dur);

/* Integer text to int64; -1 if it is not an integer or overflows. */
int ta_parse_int64(const char *s, size_t len, int64_t *out);

#endif
