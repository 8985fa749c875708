/* test-beginq.c - the heap of begin times against a sorted reference: random
 * adds and removes of any member, the head always the earliest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "beginq.h"
#include "job.h"

#define NJOBS 2000

/* The earliest job in the heap by a plain scan of every job. */
static struct job *
scan_first(struct job *jobs, size_t n)
{
	struct job *best = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		if (jobs[i].admit.begin_slot == 0)
			continue;
		if (best == NULL ||
		    jobs[i].extra->begin_at < best->extra->begin_at ||
		    (jobs[i].extra->begin_at == best->extra->begin_at &&
		    jobs[i].id < best->id))
			best = &jobs[i];
	}
	return best;
}

static void
test_head_is_always_the_earliest(void **state)
{
	struct job *jobs = calloc(NJOBS, sizeof *jobs);
	/* Not from job_new: each its own extra, for its begin time. */
	struct job_extra *extras = calloc(NJOBS, sizeof *extras);
	struct beginq q = { 0 };
	unsigned seed = 7;
	size_t i, in = 0, step;
	struct job *j;

	(void)state;
	assert_non_null(jobs);
	assert_non_null(extras);
	for (i = 0; i < NJOBS; i++) {
		jobs[i].id = i + 1;
		jobs[i].extra = &extras[i];
		/* Few distinct times: ties are the rule, broken by id. */
		extras[i].begin_at = rand_r(&seed) % 50;
	}
	for (step = 0; step < 20 * NJOBS; step++) {
		j = &jobs[rand_r(&seed) % NJOBS];
		if (j->admit.begin_slot == 0) {
			assert_int_equal(beginq_add(&q, j), 0);
			in++;
		} else if (rand_r(&seed) % 3 == 0) {
			/* The head leaves, as when its time comes. */
			j = beginq_first(&q);
			beginq_remove(&q, j);
			assert_int_equal(j->admit.begin_slot, 0);
			in--;
		} else {
			beginq_remove(&q, j);
			in--;
		}
		assert_int_equal(q.n, in);
		assert_ptr_equal(beginq_first(&q), scan_first(jobs, NJOBS));
	}
	/* Removing what is not in is nothing. */
	for (i = 0; i < NJOBS && jobs[i].admit.begin_slot != 0; i++)
		;
	if (i < NJOBS) {
		beginq_remove(&q, &jobs[i]);
		assert_int_equal(q.n, in);
	}
	beginq_clear(&q);
	for (i = 0; i < NJOBS; i++)
		assert_int_equal(jobs[i].admit.begin_slot, 0);
	assert_null(beginq_first(&q));
	free(jobs);
	free(extras);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head_is_always_the_earliest),
	};

	return cmocka_run_group_tests_name("beginq", tests, NULL, NULL);
}
