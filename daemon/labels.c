/* labels.c - a job's labels as params give them: checked against the
 * protocol's key syntax and the config's bounds. */
#include <string.h>

#include "config.h"
#include "labels.h"
#include "method.h"
#include "rpc-codes.h"

#define LABELS_KEY_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
	"0123456789_.-"

int
labels_check(const struct config *cfg, json_t *labels, const char *field,
    struct method_err *err)
{
	const char *key;
	size_t len;
	json_t *value;

	if (json_object_size(labels) > cfg->max_labels)
		return method_fail(err, RPC_INVALID_PARAMS, field,
		    "\"%s\" has %zu labels; the limit is %u (max_labels)",
		    field, json_object_size(labels), cfg->max_labels);
	json_object_foreach(labels, key, value) {
		len = strlen(key);
		if (len == 0 || len > LABELS_KEY_MAX ||
		    strspn(key, LABELS_KEY_CHARS) != len)
			return method_fail(err, RPC_INVALID_PARAMS, field,
			    "label keys are 1 to %d of A-Z, a-z, 0-9, '_', "
			    "'.' and '-': \"%.80s\" is not one",
			    LABELS_KEY_MAX, key);
		if (!json_is_string(value))
			return method_fail(err, RPC_INVALID_PARAMS, field,
			    "label values must be strings (\"%s\" is not)",
			    key);
		if (json_string_length(value) > cfg->max_label_value)
			return method_fail(err, RPC_INVALID_PARAMS, field,
			    "label \"%s\" has %zu bytes; the limit is %u "
			    "(max_label_value)", key,
			    json_string_length(value), cfg->max_label_value);
	}
	return 0;
}
