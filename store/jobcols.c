/* jobcols.c - the table of a job's columns (jobcols.h), and the SQL both
 * databases make of it. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "jobcols.h"

#define JOBCOLS_ROW(col, sql, type, role, how)				\
	[JOBROW_##col] = { sql, JOBCOL_##type, JOBCOL_##role },
const struct jobcol jobcols[JOBROW_NCOLUMNS] = {
	JOBCOLS(JOBCOLS_ROW)
};

/* Each X picks the columns of one role, with a comma. */
#define JOBCOLS_OF_FIRST(col, sql, type, role, how)			\
	JOBCOLS_FIRST_##role(JOBROW_##col)
#define JOBCOLS_FIRST_KEY(col)
#define JOBCOLS_FIRST_ONCE(col)
#define JOBCOLS_FIRST_FIRST(col) col,
#define JOBCOLS_FIRST_LIFE(col)
#define JOBCOLS_OF_LIFE(col, sql, type, role, how)			\
	JOBCOLS_LIFE_##role(JOBROW_##col)
#define JOBCOLS_LIFE_KEY(col)
#define JOBCOLS_LIFE_ONCE(col)
#define JOBCOLS_LIFE_FIRST(col)
#define JOBCOLS_LIFE_LIFE(col) col,
const enum jobrow_column jobcols_set_order[JOBCOLS_NCHANGES] = {
	JOBCOLS(JOBCOLS_OF_FIRST)
	JOBCOLS(JOBCOLS_OF_LIFE)
};

/* The parameters from first on, for jobcols_values. */
static void
jobcols_write_values(FILE *f, char mark, int first)
{
	int i;

	for (i = 0; i < JOBROW_NCOLUMNS; i++)
		fprintf(f, "%s%c%d", i > 0 ? ", " : "", mark, first + i);
}

/* The SET list, for jobcols_set. */
static void
jobcols_write_set(FILE *f, char mark, int by_column)
{
	enum jobrow_column col;
	int i;

	for (i = 0; i < JOBCOLS_NCHANGES; i++) {
		col = jobcols_set_order[i];
		fprintf(f, "%s%s = %c%d", i > 0 ? ", " : "", jobcols[col].name,
		    mark, by_column ? (int)col + 1 : i + 2);
	}
}

/* What write writes, as a new string; NULL when memory runs out. */
static char *
jobcols_text(void (*write)(FILE *, char, int), char mark, int arg)
{
	char *s = NULL;
	size_t len;
	bool failed;
	FILE *f;

	if ((f = open_memstream(&s, &len)) == NULL)
		return NULL;
	write(f, mark, arg);
	failed = ferror(f) != 0;
	if (fclose(f) != 0 || failed) {
		free(s);
		return NULL;
	}
	return s;
}

char *
jobcols_values(char mark, int first)
{
	return jobcols_text(jobcols_write_values, mark, first);
}

char *
jobcols_set(char mark, bool by_column)
{
	return jobcols_text(jobcols_write_set, mark, by_column);
}
