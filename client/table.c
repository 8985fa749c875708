/* table.c - aligned text tables for the triage CLI. Cells are cleaned of
 * control characters and bytes that are not UTF-8: a job's name must not
 * drive the user's terminal. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "table.h"
#include "xmalloc.h"

struct table {
	unsigned ncols;
	size_t nrows;		/* the header row included */
	char **cells;		/* nrows * ncols */
	size_t *widths;
	bool *right;
};

struct table *
table_new(const char *const *headers, unsigned ncols)
{
	struct table *t = xcalloc(1, sizeof *t);

	t->ncols = ncols;
	t->widths = xcalloc(ncols, sizeof *t->widths);
	t->right = xcalloc(ncols, sizeof *t->right);
	table_add(t, headers);
	return t;
}

void
table_free(struct table *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->widths);
	free(t->right);
	free(t);
}

void
table_align_right(struct table *t, unsigned col)
{
	t->right[col] = true;
}

void
table_add(struct table *t, const char *const *cells)
{
	size_t w;
	unsigned i;

	t->cells = xreallocarray(t->cells, (t->nrows + 1) * t->ncols,
	    sizeof *t->cells);
	for (i = 0; i < t->ncols; i++) {
		t->cells[t->nrows * t->ncols + i] =
		    format_clean(cells[i] != NULL ? cells[i] : "-");
		w = format_width(t->cells[t->nrows * t->ncols + i]);
		if (w > t->widths[i])
			t->widths[i] = w;
	}
	t->nrows++;
}

void
table_print(const struct table *t, FILE *f)
{
	const char *cell;
	size_t r, pad;
	unsigned i, last;

	for (r = 0; r < t->nrows; r++) {
		/* Empty cells at a row's end are not padded: no line ends in
		 * blanks. */
		for (last = t->ncols - 1; last > 0 &&
		    t->cells[r * t->ncols + last][0] == '\0'; last--)
			;
		for (i = 0; i < t->ncols; i++) {
			cell = t->cells[r * t->ncols + i];
			pad = t->widths[i] - format_width(cell);
			if (t->right[i])
				fprintf(f, "%*s", (int)pad, "");
			fputs(cell, f);
			if (i == last)
				break;
			if (!t->right[i])
				fprintf(f, "%*s", (int)pad, "");
			fputs("  ", f);
		}
		fputc('\n', f);
	}
}
