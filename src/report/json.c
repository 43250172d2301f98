/* JSON: an array with one object per row, keys as in the CSV header. */
#include "ta_report.h"

static void write_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", out);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

void ta_json_begin(FILE *out)
{
	fputc('[', out);
}

/* Row r of t, the nth written (from 0). */
void ta_json_row(FILE *out, const struct ta_table *t, size_t r, size_t nth)
{
	size_t c;
	char num[64];

	fputs(nth ? ",\n {" : "\n {", out);
	for (c = 0; c < t->ncols; c++) {
		const struct ta_cell *cell = ta_table_cell(t, r, c);

		if (c)
			fputs(", ", out);
		write_string(out, t->cols[c].name);
		fputs(": ", out);
		if (cell->null) {
			fputs("null", out);
		} else if (t->cols[c].type == TA_COL_TEXT) {
			write_string(out, cell->s);
		} else if (t->cols[c].type == TA_COL_INT) {
			fprintf(out, "%lld", (long long)cell->i);
		} else {
			ta_format_real(num, sizeof(num), cell->d);
			fputs(num, out);
		}
	}
	fputc('}', out);
}

void ta_json_end(FILE *out, size_t rows)
{
	fputs(rows ? "\n]\n" : "]\n", out);
}

void ta_report_json(FILE *out, const struct ta_table *t)
{
	size_t r;

	ta_json_begin(out);
	for (r = 0; r < t->nrows; r++)
		ta_json_row(out, t, r, r);
	ta_json_end(out, t->nrows);
}
