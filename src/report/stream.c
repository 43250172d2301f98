/* Tables whose rows are final as they are added go out row by row (CSV
 * and JSON), so that a table with a row per kernel or per point takes the
 * memory of one row, not of the trace. The command offers a stream; an
 * analysis that adds final rows takes it; the table writes its previous
 * row each time it gets a new one. */
#include "ta_report.h"

static struct ta_stream *offered;

void ta_stream_offer(struct ta_stream *s)
{
	offered = s;
}

void ta_table_stream(struct ta_table *t)
{
	t->stream = offered;
	offered = NULL;
}

/* The output opens at the first write: an analysis that fails before it
 * leaves no file behind. */
static FILE *out_of(struct ta_table *t)
{
	struct ta_stream *s = t->stream;

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

void ta_stream_row(struct ta_table *t)
{
	struct ta_stream *s = t->stream;
	FILE *out = out_of(t);

	if (out && s->fmt == TA_FMT_CSV)
		ta_csv_row(out, t, 0);
	else if (out)
		ta_json_row(out, t, 0, s->written);
	s->written++;
	t->nrows = 0; /* the row's storage takes the next row */
}

int ta_stream_finish(struct ta_table *t)
{
	struct ta_stream *s = t->stream;
	FILE *out;

	if (t->nrows)
		ta_stream_row(t);
	out = out_of(t);
	if (out && s->fmt == TA_FMT_JSON)
		ta_json_end(out, s->written);
	return s->failed ? -1 : 0;
}
