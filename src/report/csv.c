/* CSV: header row, numbers unquoted, text quoted only when it must be. */
#include "ta_report.h"

#include <csv.h>
#include <string.h>

int ta_csv_raw;

/* A spreadsheet runs a cell that starts with one of these as a formula
 * (=HYPERLINK(...) from a kernel or frame name): a leading ' makes it
 * text, and is what the spreadsheet shows. */
static int formula_like(const char *s)
{
	return *s && strchr("=+-@\t\r", *s) != NULL;
}

static void write_text(FILE *out, const char *s)
{
	if (strpbrk(s, ",\"\r\n"))
		csv_fwrite(out, s, strlen(s)); /* always quotes */
	else
		fputs(s, out);
}

static void write_cell(FILE *out, const struct ta_col *col,
		       const struct ta_cell *c)
{
	char num[64];

	if (c->null)
		return;
	if (col->type == TA_COL_TEXT) {
		if (!ta_csv_raw && formula_like(c->s)) {
			struct ta_buf b = { 0 };

			ta_buf_addf(&b, "'%s", c->s);
			write_text(out, b.s);
			ta_buf_free(&b);
		} else {
			write_text(out, c->s);
		}
	} else if (col->type == TA_COL_INT) {
		fprintf(out, "%lld", (long long)c->i);
	} else {
		ta_format_real(num, sizeof(num), c->d);
		fputs(num, out);
	}
}

void ta_csv_begin(FILE *out, const struct ta_table *t)
{
	size_t c;

	for (c = 0; c < t->ncols; c++) {
		if (c)
			fputc(',', out);
		write_text(out, t->cols[c].name);
	}
	fputc('\n', out);
}

void ta_csv_row(FILE *out, const struct ta_table *t, size_t r)
{
	size_t c;

	for (c = 0; c < t->ncols; c++) {
		if (c)
			fputc(',', out);
		write_cell(out, &t->cols[c], ta_table_cell(t, r, c));
	}
	fputc('\n', out);
}

void ta_report_csv(FILE *out, const struct ta_table *t)
{
	size_t r;

	ta_csv_begin(out, t);
	for (r = 0; r < t->nrows; r++)
		ta_csv_row(out, t, r);
}
