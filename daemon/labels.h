/* labels.h - a job's labels as params give them: checked against the
 * protocol's key syntax and the config's bounds. */
#ifndef TRIAGED_LABELS_H
#define TRIAGED_LABELS_H

#include <jansson.h>

struct config;
struct method_err;

/* The longest label key (protocol.md: [A-Za-z0-9_.-]{1,64}). */
#define LABELS_KEY_MAX 64

/*
 * labels, the value of param field: an object of at most max_labels
 * strings of at most max_label_value bytes, under keys of 1 to 64 of
 * [A-Za-z0-9_.-]. 0, or -1 with err (-32602 naming field).
 */
int labels_check(const struct config *cfg, json_t *labels, const char *field,
    struct method_err *err);

#endif
