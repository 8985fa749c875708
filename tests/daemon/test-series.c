/* test-series.c - the dashboard's window as a real daemon serves it in
 * /api/state: its shape, and the starts, waits and slots of known jobs. */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "harness.h"
#include "serieswait.h"
#include "thttp.h"

/* /api/state's series (a new reference). */
static json_t *
state_series(const char *addr)
{
	struct thttp_resp r;
	json_t *state, *series;

	thttp(addr, "GET", "/api/state", NULL, NULL, &r);
	if (r.status != 200)
		fail_msg("GET /api/state: %ld %s", r.status, r.body);
	if ((state = json_loadb(r.body, r.len, 0, NULL)) == NULL)
		fail_msg("GET /api/state: not JSON: %s", r.body);
	thttp_free(&r);
	assert_non_null(series = json_object_get(state, "series"));
	json_incref(series);
	json_decref(state);
	return series;
}

static void
series_of_known_jobs(void **state)
{
	char extra[256], addr[64];
	json_t *s, *busy, *disp;
	struct tdaemon *d;
	struct triage_client *c;
	double sum_busy = 0, end;
	json_int_t sum_disp = 0;
	int64_t gated, deadline;
	size_t i;
	int k;

	(void)state;
	snprintf(addr, sizeof addr, "127.0.0.1:%d", tfree_port());
	snprintf(extra, sizeof extra, "slots = 3\n[http]\nlisten = %s\n"
	    "auth = none\n", addr);
	d = tdaemon_start(extra);
	c = tconnect(d);
	for (k = 0; k < 3; k++)
		json_decref(twait(c, tsubmit(c, "{s[s] ss}", "argv", "true",
		    "priority", "high")));
	gated = tsubmit_gated(c, d, "gate", false);
	(void)trunning_pid(c, gated);

	/* get tells the daemon's own view, a commit ahead of the events the
	 * series hears (a cluster's store commits over the network): the
	 * fourth start shows once its event is out. */
	for (deadline = tdeadline(HARNESS_TIMEOUT_MS);;) {
		s = state_series(addr);
		disp = json_object_get(s, "dispatched");
		for (i = 0, sum_disp = 0; i < json_array_size(disp); i++)
			sum_disp += json_integer_value(json_array_get(disp, i));
		if (sum_disp >= 4 || tleft_ms(deadline) == 0)
			break;
		json_decref(s);
		poll(NULL, 0, 10);
	}
	sum_disp = 0;
	assert_int_equal(json_integer_value(json_object_get(s, "step")), 5);
	assert_int_equal(json_integer_value(json_object_get(s, "slots")), 3);
	end = json_number_value(json_object_get(s, "end"));
	assert_true(end > (double)time(NULL) - 1 &&
	    end <= (double)time(NULL) + 6);
	busy = json_object_get(s, "slots_busy");
	disp = json_object_get(s, "dispatched");
	assert_int_equal(json_array_size(busy), 60);
	assert_int_equal(json_array_size(disp), 60);
	for (i = 0; i < 60; i++) {
		sum_busy += json_number_value(json_array_get(busy, i));
		sum_disp += json_integer_value(json_array_get(disp, i));
	}
	/* The three and the one still running, whose slot shows. */
	assert_int_equal(sum_disp, 4);
	assert_true(sum_busy > 0);
	assert_int_equal(json_object_size(json_object_get(s, "wait")), 3);
	serieswait_assert(s, "high", 3);
	serieswait_assert(s, "normal", 1);
	serieswait_assert(s, "low", 0);
	json_decref(s);
	topen_gate(d, "gate");
	tassert_ends(c, gated, "succeeded");
	tdaemon_end(d, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(series_of_known_jobs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
