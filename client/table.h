/* table.h - aligned text tables for the triage CLI: columns sized to their
 * widest cell, the last one left ragged. */
#ifndef TRIAGE_TABLE_H
#define TRIAGE_TABLE_H

#include <stdio.h>

struct table;

/* A table with ncols columns headed by headers[0..ncols). */
struct table *table_new(const char *const *headers, unsigned ncols);
void table_free(struct table *t);
/* Right-aligns column col (numbers). */
void table_align_right(struct table *t, unsigned col);
/* Adds a row of ncols cells, copied; control characters and bytes that
 * are not UTF-8 show as \xNN (format_clean). */
void table_add(struct table *t, const char *const *cells);
/* Prints the header and the rows; a row's empty cells at its end are
 * left out, not padded. */
void table_print(const struct table *t, FILE *f);

#endif
