/* Tables whose rows are final as they are added go out row by row (CSV
 * and JSON), so that a table with a row per kernel or per point takes the
 * memory of one row, not of the trace: the command hands the analysis a
 * row sink (ta_query.sink) that writes here. */
#include "ta_report.h"

#include <string.h>

/* The output opens at the first write: an analysis that fails before it
 * leaves no file behind. */
static FILE *out_of(struct ta_stream *s, const struct ta_table *t)
{
	if (!s->out && !s->failed) {
		s->out = s->open(s->ctx);
		s->failed = !s->out;
		if (s->out && s->fmt == TA_FMT_CSV)
			ta_csv_begin(s->out, t);
		else if (s->out)
			ta_json_begin(s->out);
	}
	return s->out;
}

static void sink_row(void *ctx, const struct ta_table *t, size_t r)
{
	struct ta_stream *s = ctx;
	FILE *out = out_of(s, t);

	if (out && s->fmt == TA_FMT_CSV)
		ta_csv_row(out, t, r);
	else if (out)
		ta_json_row(out, t, r, s->written);
	s->written++;
}

void ta_stream_init(struct ta_stream *s, FILE *(*open)(void *ctx), void *ctx,
		    enum ta_format fmt)
{
	memset(s, 0, sizeof(*s));
	s->open = open;
	s->ctx = ctx;
	s->fmt = fmt;
	s->sink.row = sink_row;
	s->sink.ctx = s;
}

int ta_stream_finish(struct ta_stream *s, struct ta_table *t)
{
	FILE *out;

	ta_table_flush(t);
	out = out_of(s, t);
	if (out && s->fmt == TA_FMT_JSON)
		ta_json_end(out, s->written);
	return s->failed ? -1 : 0;
}
