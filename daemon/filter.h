/* filter.h - a selection of jobs by ids, priority, state, labels, name and
 * held (protocol.md, "Selecting many jobs"): its check, and its matching. */
#ifndef TRIAGED_FILTER_H
#define TRIAGED_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

struct config;
struct job;
struct method_ctx;
struct method_err;
struct store;

/* The most ids a filter, or a `wait`, may name. */
#define FILTER_MAX_IDS 100000

/* What a filter object may hold: FILTER_KEYS for `filter`; `list` also
 * takes held. */
#define FILTER_KEYS	0x1
#define FILTER_HELD	0x2

/*
 * Checks the filter keys of obj: ids, priority, state, labels, name (and
 * held with FILTER_HELD). A field at fault is named with prefix before it
 * ("filter." for "filter.state"). strict: any other key is an error too
 * (a `filter` object; `list` has keys of its own). 0, or -1 with err
 * filled.
 */
int filter_check(const struct method_ctx *ctx, json_t *obj, int keys,
    const char *prefix, bool strict, struct method_err *err);

struct filter;

/* qsort and bsearch's order of uint64_t ids. */
int filter_cmp_id(const void *a, const void *b);

/*
 * The filter obj (filter_check has passed it) stands for, matching the
 * jobs of uid only unless all_users: a new filter, or NULL out of memory.
 * It keeps its own copies: obj and the config may go meanwhile.
 */
struct filter *filter_new(const struct config *cfg, json_t *obj,
    bool all_users, uid_t uid);
void filter_free(struct filter *f);

bool filter_match(const struct filter *f, const struct job *job);
/* The next job after id after_id that may match (filter_match decides),
 * borrowed; NULL at the end. With ids, only those are looked up. */
struct job *filter_next(const struct filter *f, const struct store *st,
    uint64_t after_id);

#endif
