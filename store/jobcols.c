/* jobcols.c - the table of a job's columns (jobcols.h), and the SQL both
 * databases make of it. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The name of column col as a database lists it: without quotes. */
static const char *
jobcols_bare(int col, char *buf, size_t size)
{
	const char *name = jobcols[col].name;
	size_t len = strlen(name);

	if (name[0] != '"')
		return name;
	snprintf(buf, size, "%.*s", (int)(len - 2), name + 1);
	return buf;
}

/* The index of the column named name in names, or -1. */
static int
jobcols_find(const char *const *names, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return -1;
}

static const char *const jobcols_type_names[] = {
	[JOBCOL_INTEGER] = "integer",
	[JOBCOL_REAL] = "real",
	[JOBCOL_TEXT] = "text",
};

/* Whether name is one of the list's columns, or one of own. */
static bool
jobcols_known(const char *name, const char *const *own)
{
	char buf[64];
	int col;

	for (col = 0; col < JOBROW_NCOLUMNS; col++)
		if (strcmp(name, jobcols_bare(col, buf, sizeof buf)) == 0)
			return true;
	for (; *own != NULL; own++)
		if (strcmp(name, *own) == 0)
			return true;
	return false;
}

char *
jobcols_diff(const char *const *names, const enum jobcol_type *types,
    size_t n, const char *const *own)
{
	char *s = NULL, buf[64];
	const char *name;
	size_t len, j;
	bool failed;
	FILE *f;
	int col, i;

	if ((f = open_memstream(&s, &len)) == NULL)
		return strdup("out of memory");
	for (col = 0; col < JOBROW_NCOLUMNS; col++) {
		name = jobcols_bare(col, buf, sizeof buf);
		if ((i = jobcols_find(names, n, name)) == -1)
			fprintf(f, "; %s: in the list, not in the table", name);
		else if (types[i] != jobcols[col].type)
			fprintf(f, "; %s: %s in the list, %s in the table",
			    name, jobcols_type_names[jobcols[col].type],
			    jobcols_type_names[types[i]]);
	}
	for (j = 0; j < n; j++)
		if (!jobcols_known(names[j], own))
			fprintf(f, "; %s: in the table, not in the list",
			    names[j]);
	failed = ferror(f) != 0;
	if (fclose(f) != 0 || failed) {
		free(s);
		return strdup("out of memory");
	}
	if (len == 0) {
		free(s);
		return NULL;
	}
	/* Without the first "; ". */
	memmove(s, s + 2, len - 1);
	return s;
}
