/* serieswait.c - for the tests of series_json: what a priority's waits in
 * the window must look like. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "serieswait.h"

void
serieswait_assert(const json_t *series, const char *prio, json_int_t count)
{
	json_t *w = json_object_get(json_object_get(series, "wait"), prio);
	json_t *p50 = json_object_get(w, "p50"), *p95 = json_object_get(w,
	    "p95");

	if (w == NULL)
		fail_msg("no wait of priority %s", prio);
	assert_int_equal(json_integer_value(json_object_get(w, "count")),
	    count);
	if (count == 0) {
		assert_true(json_is_null(p50) && json_is_null(p95));
		return;
	}
	assert_true(json_is_number(p50) && json_is_number(p95));
	assert_true(json_number_value(p50) >= 0);
	assert_true(json_number_value(p95) >= json_number_value(p50));
}
